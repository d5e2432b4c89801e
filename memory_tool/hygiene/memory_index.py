"""MEMORY.md checks: lines pointing at missing files, memory files it does not list (Claude Code
cannot see them), and an index longer than Claude Code loads."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from ..store import tree
from ..store.entry import Entry, is_text
from .report import NOTE, PROBLEM, Finding

MEMORY_INDEX_LOADED_LINES = tree.MEMORY_INDEX_LOADED_LINES
MEMORY_INDEX_LOADED_BYTES = tree.MEMORY_INDEX_LOADED_BYTES

_MD_LINK_RE = re.compile(r"\]\(\s*(<[^>\n]+>|[^)\s]+)")


@dataclass
class IndexFolder:
    path: Path
    # Claude Code memory folders must have a MEMORY.md (Claude Code reads it); palace folders
    # may, and what is wrong with theirs is a note: nothing but people reads it.
    required: bool


def _memory_files(folder: Path) -> list[str]:
    """The memory files directly in ``folder`` (as ``tree.scan`` counts them), as strings;
    not a sync's conflict copy (the conflict check names it, and it goes when resolved)."""
    try:
        with os.scandir(folder) as it:
            return sorted(
                e.path
                for e in it
                if tree.is_memory_file(e.name) and not tree.is_conflict_copy(e.name) and e.is_file()
            )
    except OSError:
        return []


def memory_index_findings(
    folders: Sequence[IndexFolder], by_path: dict[str, Entry] | None = None
) -> list[Finding]:
    out: list[Finding] = []
    by_path = by_path or {}
    for folder in folders:
        index_path = folder.path / tree.MEMORY_INDEX_NAME
        try:
            raw = index_path.read_bytes()
        except OSError:
            raw = None
        if raw is None and not folder.required:
            continue
        files = _memory_files(folder.path)
        if raw is None and not files:
            continue
        level = PROBLEM if folder.required else NOTE
        present = set(files)
        text = (raw or b"").decode("utf-8", errors="replace")
        listed: set[str] = set()
        lines = text.splitlines()
        for n, line in enumerate(lines, 1):
            for m in _MD_LINK_RE.finditer(line):
                target = m.group(1).strip("<>").split("#", 1)[0].strip()
                if not target or "://" in target or target.startswith("mailto:"):
                    continue
                resolved = os.path.normpath(os.path.join(folder.path, unquote(target)))
                if resolved in present or os.path.exists(resolved):
                    listed.add(resolved)
                    continue
                out.append(
                    Finding(
                        "index_missing_file",
                        level,
                        f"MEMORY.md line {n} points to {target}, which does not exist",
                        path=str(index_path),
                        data={"line": n, "target": target},
                    )
                )
        for p in files:
            if p in listed:
                continue
            e = by_path.get(p)
            if e is not None and not is_text(e):
                continue  # no MEMORY.md line for a binary file: the file check names it
            if e is not None and (e.superseded_by or e.forgotten):
                continue  # retired: its line was taken out so Claude Code no longer loads it
            name = os.path.basename(p)
            msg = f"{name} is not listed in MEMORY.md"
            if raw is None:
                msg = f"{name} is not listed: there is no MEMORY.md"
            data = {"index": str(index_path), "fixable": True}
            out.append(Finding("index_unlisted", level, msg, e.id if e else "", p, data))
        too_long = len(lines) > MEMORY_INDEX_LOADED_LINES
        too_long = too_long or len(raw or b"") > MEMORY_INDEX_LOADED_BYTES
        if folder.required and too_long:  # only Claude Code's own MEMORY.md is cut when loaded
            msg = (
                f"{index_path} has {len(lines)} lines / {len(raw or b'')} bytes: Claude Code "
                f"loads only the first {MEMORY_INDEX_LOADED_LINES} lines / "
                f"{MEMORY_INDEX_LOADED_BYTES // 1024} KB"
            )
            out.append(Finding("index_truncated", PROBLEM, msg, path=str(index_path)))
    return out
