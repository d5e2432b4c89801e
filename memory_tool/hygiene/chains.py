"""Broken version chains: ``superseded_by`` naming no memory (the fact is retired in favour of
nothing), a link the other memory does not return, a loop, ``supersedes`` naming no memory."""

from __future__ import annotations

from ..store.index import Index
from ..store.lifecycle import broken_chains
from .report import NOTE, PROBLEM, Finding

# A retired memory with nothing in its place, or a loop (every memory in it retired), loses a
# fact from every layer: a problem. A one-sided link or an older version that is gone still
# loads the right memory: a note.
_LEVELS = {"missing": PROBLEM, "loop": PROBLEM, "one_sided": NOTE, "missing_older": NOTE}


def chain_findings(idx: Index, only: str | None = None) -> list[Finding]:
    """A finding per broken link; ``only``: those of that memory's id."""
    out = []
    for b in broken_chains(idx):
        if only is not None and b.entry.id != only:
            continue
        data = {"kind": b.kind, "target": b.target}
        out.append(Finding("chain", _LEVELS[b.kind], b.message, b.entry.id, b.entry.path, data))
    return out
