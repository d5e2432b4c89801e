"""Changing one memory file as a person asks: its text, its frontmatter, its pin, its room;
archiving it. The web UI does its writes through here, and any front end can.

The file stays the truth. Each change is written to the file atomically, what a person typed
is redacted first (secrets, ``<private>`` spans) as ``add`` does, and then that one file is
indexed again. Text nobody touched is left byte for byte. Only files inside the memory folders
are changed: an id is looked up in the index, and the file it names must resolve (links
followed) inside a folder memory-tool indexes as memory: a project's auto-memory folder
(wherever ``autoMemoryDirectory`` puts it), a subagent's memory folder, or the palace's
``identity/``, ``rooms/``, ``wiki/`` and ``cold/``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.errors import MemoryToolError
from ..base.fsutil import append_line_locked, atomic_write_text, ensure_dir, rewrite_locked
from ..base.privacy import sanitize
from ..base.record import record
from . import tree
from .entry import Entry, _fences, invalid_values
from .index import Index
from .palace import claim_file, find_duplicate, first_sentence, memory_index_line, room_folder

# What a person can change here: memory files. Past sessions are transcripts Claude Code owns;
# a project's thoughts/CONTEXT.md lives in the project, outside the memory folders.
EDITABLE_SOURCES = ("claude", "agent", "identity", "room", "wiki", "cold")
# Archived memories go here, under the state root: never indexed, never loaded; moving a file
# back to where it was restores it.
ARCHIVE_DIR = "archive"

_YAML_HOW = (
    "write `key: value` lines, quoting a value that holds ': ' or starts with "
    "[ { & * ! | > ' \" % @ or `"
)


@record
class MemoryFile:
    """One memory as its file holds it now."""

    entry: Entry
    folder: tree.Folder
    frontmatter: str  # the YAML between the --- lines, "" when there is none
    body: str
    version: str  # a hash of the file's bytes: a save refuses to overwrite a newer file


# --- where a memory may be changed --------------------------------------------------------------


def memory_folders(idx: Index | None = None) -> list[tree.Folder]:
    """The folders whose files this module may change: every memory folder the index reads
    (those sessions registered included, when ``idx`` is given), not hot/, inbox/ or CONTEXT.md."""
    folders = tree.all_folders() + (idx.registered_folders() if idx is not None else [])
    return [f for f in folders if f.source in EDITABLE_SOURCES]


def _containing(real: str, folders: list[tree.Folder]) -> tree.Folder | None:
    best: tree.Folder | None = None
    best_len = -1
    for f in folders:
        base = os.path.realpath(f.path)
        if real.startswith(base + os.sep) and len(base) > best_len:
            best, best_len = f, len(base)
    return best


def within_roots(path: str | Path, folders: list[tree.Folder] | None = None) -> bool:
    """Whether ``path``, links resolved, is a file inside one of the memory folders."""
    return _containing(os.path.realpath(path), folders or memory_folders()) is not None


def folder_of(path: str | Path, folders: list[tree.Folder] | None = None) -> tree.Folder | None:
    """The memory folder a file belongs to, by where it is listed (the nearest folder up its
    path, links not followed: what the index files it under)."""
    by_path = {str(f.path): f for f in (folders or memory_folders())}
    here = os.path.dirname(os.fspath(path))
    while True:
        if here in by_path:
            return by_path[here]
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


def _refuse(entry: Entry, why: str) -> MemoryToolError:
    return MemoryToolError(f"{entry.id} ({entry.path}) {why}")


def open_memory(idx: Index, entry_id: str) -> MemoryFile:
    """The memory ``entry_id`` as its file is now, checked to be one this module may change."""
    entry = idx.get_current(entry_id)
    if entry.source not in EDITABLE_SOURCES:
        what = "a past session's transcript" if entry.source == "session" else "not a memory file"
        raise _refuse(entry, f"is {what}: it can be read here, not changed.")
    folders = memory_folders(idx)
    folder = folder_of(entry.path, folders)
    if folder is None or not within_roots(entry.path, folders):
        raise _refuse(entry, "is not inside the memory folders: it is left alone.")
    try:
        raw = Path(entry.path).read_bytes()
        text = raw.decode("utf-8")
    except OSError as exc:
        raise _refuse(entry, f"cannot be read ({exc.strerror or exc}).") from exc
    except UnicodeDecodeError as exc:
        raise _refuse(entry, "is not UTF-8 text: change it in an editor.") from exc
    head, body = split_frontmatter(text.lstrip("\ufeff"), entry)
    version = hashlib.sha256(raw).hexdigest()[:16]
    return MemoryFile(entry=entry, folder=folder, frontmatter=head, body=body, version=version)


# --- the file's two parts -----------------------------------------------------------------------


def split_frontmatter(text: str, entry: Entry | None = None) -> tuple[str, str]:
    """(the YAML between the --- lines, the text after them). A block that never closes is
    refused: where its text starts is a guess, and a save must not rewrite a guess."""
    lines = text.split("\n")
    fences = _fences(lines)
    if fences is None:
        return "", text.strip("\n")
    start, close = fences
    if close is None:
        where = f"{entry.id} ({entry.path}): " if entry is not None else ""
        raise MemoryToolError(
            f"{where}its frontmatter opens with --- but never closes: add a line holding only "
            "--- after the last frontmatter line (`memory-tool doctor` shows where)."
        )
    head = "\n".join(line.rstrip("\r") for line in lines[start + 1 : close])
    return head, "\n".join(lines[close + 1 :]).strip("\n")


def compose(frontmatter: str, body: str) -> str:
    if frontmatter.strip():
        return f"---\n{frontmatter.strip(chr(10))}\n---\n\n{body.strip(chr(10))}\n"
    return f"{body.strip(chr(10))}\n"


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter as a mapping, or a MemoryToolError saying what to fix."""
    import yaml

    from ..base.config import yaml_error_text

    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        raise MemoryToolError(
            f"the frontmatter is not valid YAML ({yaml_error_text(exc)}): {_YAML_HOW}."
        ) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise MemoryToolError(f"the frontmatter must be a mapping: {_YAML_HOW}.")
    bad = invalid_values(data)
    if bad:
        listed = "; ".join(f"{key}: {value!r}" for key, value in sorted(bad.items()))
        raise MemoryToolError(
            f"the frontmatter has values that cannot be used ({listed}): dates are YYYY-MM-DD, "
            "importance a whole number from 1 to 5."
        )
    return data


def _with_field(frontmatter: str, key: str, value: str | None) -> str:
    """``frontmatter`` with the top-level ``key`` set to ``value`` (None: removed), every other
    line as it was; refused when that cannot be done without touching the rest."""
    lines = frontmatter.split("\n") if frontmatter.strip() else []
    at = next((n for n, line in enumerate(lines) if re.match(rf"{key}[ \t]*:", line)), None)
    new = [f"{key}: {value}"] if value is not None else []
    if at is None:
        lines += new
    else:
        end = at + 1  # the value's own continuation lines go with it
        while end < len(lines) and lines[end][:1] in (" ", "\t") and lines[end].strip():
            end += 1
        lines[at:end] = new
    changed = "\n".join(lines)
    before, after = parse_frontmatter(frontmatter), parse_frontmatter(changed)
    before.pop(key, None)
    now = after.pop(key, None)
    if before != after or (value is not None and str(now).lower() != value.lower()):
        raise MemoryToolError(
            f"could not set {key} without changing the rest of the frontmatter: "
            "edit the frontmatter by hand."
        )
    return changed


# --- changes ------------------------------------------------------------------------------------


def _write(idx: Index, mf: MemoryFile, frontmatter: str, body: str) -> Entry:
    path = Path(mf.entry.path)
    atomic_write_text(path, compose(frontmatter, body))
    return idx.index_file(path, mf.folder)


def save_memory(
    idx: Index,
    entry_id: str,
    *,
    body: str | None = None,
    frontmatter: str | None = None,
    version: str | None = None,
) -> Entry:
    """Write a memory's new text and/or frontmatter. What is given is redacted as ``add``
    redacts; a part given unchanged (or not given) stays byte for byte. ``version``: the
    ``MemoryFile.version`` the person edited; a file changed since is not overwritten."""
    mf = open_memory(idx, entry_id)
    if version is not None and version != mf.version:
        raise _refuse(
            mf.entry, "changed on disk since it was opened: reload it and make the change again."
        )
    head = mf.frontmatter
    if frontmatter is not None and frontmatter.strip() != mf.frontmatter.strip():
        head = sanitize(frontmatter).strip("\n")
        parse_frontmatter(head)
    text = mf.body
    if body is not None and body.strip() != mf.body.strip():
        text = sanitize(body).strip()
        if not text:
            raise MemoryToolError(
                "nothing left to save: the text is empty once private parts are removed "
                "(archive the memory to remove it)."
            )
        same = find_duplicate(idx, mf.folder.path, text)
        if same is not None and same.path != mf.entry.path:
            raise MemoryToolError(
                f"the same text is already saved as {same.id} ({same.path}): archive one of "
                "the two instead of keeping both."
            )
    if not head.strip() and text.lstrip().startswith("---"):
        raise MemoryToolError("without frontmatter, the text may not start with a --- line.")
    if (head, text) == (mf.frontmatter, mf.body):
        return mf.entry
    return _write(idx, mf, head, text)


def set_fields(idx: Index, entry_id: str, fields: dict[str, str | None]) -> Entry:
    """Set (a value) or remove (None) top-level frontmatter keys of a memory, every other line
    of the file as it was; the file is written once, atomically, then indexed again."""
    mf = open_memory(idx, entry_id)
    head = mf.frontmatter
    for key, value in fields.items():
        head = _with_field(head, key, value)
    return mf.entry if head == mf.frontmatter else _write(idx, mf, head, mf.body)


def set_pinned(idx: Index, entry_id: str, pinned: bool) -> Entry:
    """Pin (``always: true``: loaded at every session start) or unpin a memory."""
    mf = open_memory(idx, entry_id)
    if mf.entry.type == "user":
        raise _refuse(mf.entry, "is a user fact: those are always loaded (L1) without a pin.")
    head = _with_field(mf.frontmatter, "always", "true" if pinned else None)
    return mf.entry if head == mf.frontmatter else _write(idx, mf, head, mf.body)


def move_to_room(idx: Index, entry_id: str, room: str) -> Entry:
    """File a memory in another room. A palace room memory moves to the room's folder; a
    project's own memory (and a wiki page or cold summary) stays where it is, in its project's
    scope, and its ``room:`` says the room."""
    mf = open_memory(idx, entry_id)
    e = mf.entry
    if e.type == "user":
        raise _refuse(e, "is about you, not a topic: user facts are in no room.")
    target = room_folder(room)
    if e.room == room and e.room_origin != "classified":
        return e
    if e.source != "room":
        head = _with_field(mf.frontmatter, "room", room)
        return _write(idx, mf, head, mf.body)
    same = find_duplicate(idx, target.path, e.body.strip())
    if same is not None:
        raise _refuse(e, f"has the same text as {same.id} in room {room}: archive one of them.")
    head = mf.frontmatter
    if "room" in parse_frontmatter(head):
        head = _with_field(head, "room", room)
    old = Path(e.path)
    # The new file first, then the old one goes: a crash in between leaves a copy, not a loss.
    new = claim_file(target.path, old.stem, compose(head, mf.body))
    title = e.name or old.stem
    hook = " ".join((e.description or first_sentence(e.body)).split())
    append_line_locked(
        target.path / tree.MEMORY_INDEX_NAME, memory_index_line(title, new.name, hook)
    )
    old.unlink()
    drop_index_line(old.parent, old.name)
    idx.remove_file(old)
    return idx.index_file(new, target)


def archive_dir() -> Path:
    return paths.state_root() / ARCHIVE_DIR


def archive_memory(idx: Index, entry_id: str) -> Path:
    """Move a memory out of every loaded folder into ``<state>/archive/`` (the same relative
    path); returns where it went. Moving it back restores it."""
    mf = open_memory(idx, entry_id)
    src = Path(mf.entry.path)
    real = Path(os.path.realpath(src))
    rel = None
    for root in (paths.state_root(), paths.config_dir()):  # rooms/..., projects/<p>/memory/...
        try:
            rel = real.relative_to(os.path.realpath(root))
            break
        except ValueError:
            continue
    if rel is None:  # an autoMemoryDirectory or a project's agent-memory elsewhere
        base = Path(os.path.realpath(mf.folder.path))
        rel = Path("elsewhere") / paths.sanitize_path(str(base)) / real.relative_to(base)
    dest = archive_dir() / rel
    n = 1
    while dest.exists():
        n += 1
        dest = archive_dir() / rel.with_name(f"{rel.stem}-{n}{rel.suffix}")
    ensure_dir(dest.parent)
    shutil.move(str(src), str(dest))
    drop_index_line(src.parent, src.name)
    idx.remove_file(src)
    return dest


def drop_index_line(folder: Path, file_name: str) -> bool:
    """Remove the ``MEMORY.md`` lines of ``folder`` that link to ``file_name``."""
    link = re.compile(rf"\]\(\s*<?{re.escape(file_name)}>?\s*\)")

    def without(text: str) -> str:
        return "".join(line for line in text.splitlines(keepends=True) if not link.search(line))

    return rewrite_locked(folder / tree.MEMORY_INDEX_NAME, without)
