"""``[[links]]`` between memories (Claude Code's convention): what a memory links to, which
memory each link names, and which memories link to a given one (its backlinks).

A link names a memory by its name or file name, spelled loosely (``[[Deploy Runbook]]``,
``[[deploy_runbook]]`` and ``[[project_deploy-runbook.md]]`` are one memory), or by its id."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .entry import Entry
    from .index import Index

# ``[[target]]``, ``[[target|label]]``, ``[[target#heading]]``.
LINK_RE = re.compile(r"\[\[([^\[\]|#\n]+)(?:[|#][^\[\]\n]*)?\]\]")
_TYPE_PREFIX = re.compile(r"^(user|feedback|project|reference)[_-]")


def norm_name(text: str) -> str:
    """A memory's name as links and file names spell it alike (``Deploy Runbook.md`` and
    ``deploy_runbook`` are one name)."""
    name = text.strip().lower().removesuffix(".md")
    return re.sub(r"[\s_]+", "-", name.rsplit("/", 1)[-1])


def names_of(e: Entry) -> set[str]:
    """Every spelling a link may use for ``e``: its name, its file name with and without the
    Claude Code type prefix, its id."""
    stem = Path(e.path).stem
    return {norm_name(e.name), norm_name(stem), norm_name(_TYPE_PREFIX.sub("", stem)), e.id}


def links_of(body: str) -> list[str]:
    """The link targets of a text, in order, each once."""
    if "[[" not in body:
        return []
    found = (m.group(1).strip() for m in LINK_RE.finditer(body))
    return [t for t in dict.fromkeys(found) if t]


def name_table(entries: Iterable[Entry]) -> dict[str, Entry]:
    """Spelling -> memory; where two memories share a spelling, the first (by id) keeps it."""
    table: dict[str, Entry] = {}
    for e in sorted(entries, key=lambda e: e.id):
        for name in names_of(e):
            table.setdefault(name, e)
    return table


def resolve(targets: Sequence[str], table: dict[str, Entry]) -> list[tuple[str, Entry | None]]:
    """Each target with the memory it names (None: not written yet)."""
    return [(t, table.get(t) or table.get(norm_name(t))) for t in targets]


def outgoing(idx: Index, e: Entry) -> list[tuple[str, Entry | None]]:
    """What ``e`` links to, each link with the memory it names."""
    targets = links_of(e.body)
    return resolve(targets, name_table(idx.memories())) if targets else []


def backlinks(idx: Index, e: Entry) -> list[Entry]:
    """The memories whose text links to ``e``."""
    mine = names_of(e)
    out = []
    for other in idx.query("instr(body, '[[') > 0 AND source != 'session'"):
        if other.id == e.id:
            continue
        if any(t in mine or norm_name(t) in mine for t in links_of(other.body)):
            out.append(other)
    return out
