"""File checks: broken or missing frontmatter, unreadable or oversized files (``entry.error``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..store import tree
from ..store.entry import IMPORTANCE_MAX, IMPORTANCE_MIN, NOT_TEXT, TOO_LARGE, Entry, is_text
from .age import inferred_from
from .report import NOTE, PROBLEM, Finding

_DATE_HOW = "is not a valid date: write it as YYYY-MM-DD"


def _opens_with_fence(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return True  # unreadable: nothing to say about its frontmatter
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"---")


def _lacks_frontmatter(e: Entry) -> bool:
    # A file with any frontmatter has a description or a name other than its stem; only the rest
    # are worth opening (so this is cheap on a healthy tree).
    if e.description or e.name != Path(e.path).stem:
        return False
    return not _opens_with_fence(e.path)


def _listing(words: Sequence[str]) -> str:
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def missing_fields_message(e: Entry, missing: Sequence[str]) -> str:
    """What a Claude Code memory file still lacks of name, description and type. A file
    without any frontmatter says so; one with a block (e.g. only the created date --fix adds)
    names the fields still missing, so adding a date never hides them."""
    if len(missing) == 3 and not _opens_with_fence(e.path):
        return "no frontmatter: add name, description and type (Claude Code reads them)"
    them = "them" if len(missing) > 1 else "it"
    why = "Claude Code reads name, description and type"
    return f"frontmatter lacks {_listing(missing)}: add {them} ({why})"


def invalid_value_message(e: Entry, key: str, value: str) -> str:
    """What is wrong with a frontmatter value, the form it needs, and what is used meanwhile."""
    if key == "created":
        meanwhile = f"it is taken from {inferred_from(e)}, {e.created}" if e.created else ""
        meanwhile = meanwhile or "it has no date"
        return f"created: {value} {_DATE_HOW} (until then {meanwhile})"
    if key == "expires":
        return f"expires: {value} {_DATE_HOW} (until then the memory never expires)"
    span = f"from {IMPORTANCE_MIN} to {IMPORTANCE_MAX} (read as {e.importance})"
    if value.lstrip("+-").isdigit():
        return f"importance: {value} is out of range: write a whole number {span}"
    return f"importance: {value} is not a whole number: write one {span}"


def _check_of(error: str) -> str:
    if error.startswith(NOT_TEXT):
        return "not_text"
    if error.startswith(TOO_LARGE):
        return "too_large"
    return "frontmatter" if error.startswith("broken frontmatter") else "file"


def folder_findings(folders: Sequence[tree.Folder]) -> list[Finding]:
    """Folders of the memory tree that cannot be listed: their memories are silently missing
    from every layer and search otherwise."""
    return [
        Finding(
            "folder",
            PROBLEM,
            f"unreadable folder: {why}: the memories in it are never injected or searched; make "
            "it readable (chmod u+rx)",
            path=path,
        )
        for path, why in tree.unreadable_folders(folders)
    ]


def file_findings(entries: Sequence[Entry]) -> list[Finding]:
    out = []
    for e in entries:
        if e.source == "context" and is_text(e):
            continue  # the project's own document, not a memory file: only garbage is news
        if e.error:
            out.append(Finding(_check_of(e.error), PROBLEM, e.error, e.id, e.path))
        elif e.source == "claude" and isinstance(e.extra.get("missing"), list):
            missing = [str(m) for m in e.extra["missing"]]
            msg = missing_fields_message(e, missing)
            data = {"missing": missing}
            out.append(Finding("frontmatter", PROBLEM, msg, e.id, e.path, data))
        elif _lacks_frontmatter(e):
            # Claude Code's own memory needs name/description/type; a palace note may be plain.
            level = PROBLEM if e.source == "claude" else NOTE
            msg = "no frontmatter: add name, description and type (Claude Code reads them)"
            out.append(Finding("frontmatter", level, msg, e.id, e.path))
        invalid = e.extra.get("invalid")
        for key, value in invalid.items() if isinstance(invalid, dict) else ():
            msg = invalid_value_message(e, str(key), str(value))
            data = {"field": key, "value": value}
            out.append(Finding("frontmatter", PROBLEM, msg, e.id, e.path, data))
    return out
