"""Conflict copies: the second version of a memory two machines (or two teammates) changed at
once, kept beside it as ``name.conflict-<machine>-<date>.md`` until a person keeps one.

Both versions are memories meanwhile (indexed, recalled, reported by ``doctor`` and ``sync
status``); ``memory-tool sync resolve FILE --keep mine|theirs`` keeps one, and the next sync
carries that choice to every machine.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath
from typing import TypeVar

from ..base import paths
from ..base.errors import SyncError
from ..base.fsutil import atomic_write_bytes
from ..store import tree
from .merge import onto_local

KEEP = ("mine", "theirs")
_P = TypeVar("_P", bound=PurePath)


def original_of(copy: _P) -> _P:
    """``pool.conflict-laptop-2026-11-29.md`` -> ``pool.md`` (``-2`` suffixes included)."""
    stem, _, rest = copy.name.partition(tree.CONFLICT_MARK)
    ext = rest.rpartition(".")[2] if "." in rest else ""
    return copy.with_name(f"{stem}.{ext}" if ext else stem)


def find() -> list[Path]:
    """Every conflict copy in memory that syncs: the palace, Claude Code's memory folders,
    team palaces."""
    roots = [paths.palace_dir(n) for n in ("identity", "rooms", "wiki", "inbox", "cold")]
    roots += [tree.teams_root(), paths.projects_dir()]
    found: list[Path] = []
    for root in roots:
        for here, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            found += [Path(here) / f for f in files if tree.is_conflict_copy(f)]
    return sorted(found)


def resolve(file: str | Path, keep: str) -> tuple[Path, Path]:
    """Keep one version: ``mine`` (the file in place) or ``theirs`` (the conflict copy, which
    then takes the file's place). ``file`` may name either. Returns (file, copy removed)."""
    if keep not in KEEP:
        raise SyncError(f"--keep takes {' or '.join(KEEP)}.")
    path = Path(file).expanduser().absolute()
    if tree.is_conflict_copy(path.name):
        copies = [path]
        original = original_of(path)
    else:
        original = path
        copies = [c for c in find() if original_of(c) == original]
    if not copies or not copies[0].exists():
        raise SyncError(
            f"no conflict copy for {path}: `memory-tool sync status` lists the conflicts there are."
        )
    if len(copies) > 1:
        listed = ", ".join(str(c) for c in copies)
        raise SyncError(
            f"{original} has {len(copies)} conflict copies ({listed}): resolve them one by one, "
            "naming each copy."
        )
    copy = copies[0]
    if keep == "theirs":
        theirs = copy.read_bytes()
        try:
            mine: bytes | None = original.read_bytes()
        except FileNotFoundError:
            mine = None
        # The copy came through sync, redacted: what only this file holds (secrets, <private>
        # text) is put back into it, never replaced by its [REDACTED] marker.
        kept = theirs if mine is None else onto_local(mine, theirs)
        if kept is None:
            raise SyncError(
                f"{copy.name} changes the lines of {original.name} that hold secrets or "
                "<private> text here (they never travel, so the copy has them redacted): "
                f"keeping it would lose them. Edit {original} by hand, taking what you want "
                f"from the copy, then delete {copy}."
            )
        atomic_write_bytes(original, kept)
    copy.unlink()
    return original, copy
