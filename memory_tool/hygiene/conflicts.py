"""Sync conflicts: a memory two machines (or two teammates) changed at once is kept twice, the
second version beside the first as ``name.conflict-<machine>-<date>.md``, until a person keeps
one. Until then both are recalled; this check names them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..store import tree
from ..store.entry import Entry
from .report import PROBLEM, Finding


def conflict_findings(entries: Sequence[Entry]) -> list[Finding]:
    out = []
    for e in entries:
        name = Path(e.path).name
        if not tree.is_conflict_copy(name):
            continue
        original = name.partition(tree.CONFLICT_MARK)[0]
        out.append(
            Finding(
                "conflict",
                PROBLEM,
                f"a second version of {original}, kept by a sync that found both changed: keep "
                f"one with `memory-tool sync resolve {e.path} --keep mine|theirs`",
                e.id,
                e.path,
            )
        )
    return out
