"""File checks: broken or missing frontmatter, unreadable or oversized files (``entry.error``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..entry import Entry
from .report import NOTE, PROBLEM, Finding


def _lacks_frontmatter(e: Entry) -> bool:
    # A file with any frontmatter has a description or a name other than its stem; only the rest
    # are worth opening (so this is cheap on a healthy tree).
    if e.description or e.name != Path(e.path).stem:
        return False
    try:
        with open(e.path, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return False
    return not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"---")


def file_findings(entries: Sequence[Entry]) -> list[Finding]:
    out = []
    for e in entries:
        if e.source == "context":
            continue
        if e.error:
            check = "frontmatter" if e.error.startswith("broken frontmatter") else "file"
            out.append(Finding(check, PROBLEM, e.error, e.id, e.path))
        elif _lacks_frontmatter(e):
            # Claude Code's own memory needs name/description/type; a palace note may be plain.
            level = PROBLEM if e.source == "claude" else NOTE
            msg = "no frontmatter: add name, description and type (Claude Code reads them)"
            out.append(Finding("frontmatter", level, msg, e.id, e.path))
    return out
