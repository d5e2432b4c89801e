"""A memory's life: which memories still load, one fact replacing another, retiring one.

Files are the truth. Versioning lives in each memory's frontmatter:

- ``valid_from`` / ``valid_to``: the days a fact holds, both inclusive (YYYY-MM-DD);
- ``superseded_by: <id>`` on the older memory and ``supersedes: <id>`` on the newer one;
- ``forgotten: <day>``: retired by a person (``memory-tool forget``), undone by removing it.

A memory that is superseded, forgotten, past its ``valid_to`` or before its ``valid_from`` is
not *live*: it loads in no layer (L1, L2, L3, the tiers' wiki) and does not count toward the
always-load cap, but search and deep recall (L4) still find it, labelled as history with its
dates (``entry.history_label``). The index mirrors the keys in columns (``Index.LIVE_SQL``); the
file is written first and indexed after, so deleting the index loses nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

from ..base import paths
from ..base.errors import MemoryToolError
from ..base.fsutil import append_line_locked, atomic_write_text, file_lock
from ..base.record import field, record
from . import tree
from .entry import Entry, is_live, one_line, status
from .index import Index

# Every change of versioning keys takes this lock: two processes superseding the same memory at
# once must not leave it pointing at two successors.
LOCK_NAME = "lifecycle.lock"
# The MEMORY.md lines of retired memories, kept to put back on undo: {file path: [lines]}.
INDEX_LINES_NAME = "retired-index-lines.json"
# ``origin:`` of a memory auto-capture wrote.
CAPTURE_PREFIX = "capture:"
# A chain is followed at most this many steps: a hand-edited loop must not hang a command.
MAX_CHAIN = 100


def _lock() -> Path:
    return paths.state_root() / LOCK_NAME


def _resolve(idx: Index, new: str | Path) -> Entry:
    """The memory ``new`` names: an id, or the path of a memory file (indexed now if new)."""
    from .edit import folder_of, memory_folders, within_roots

    if isinstance(new, Path) or "/" in str(new) or str(new).endswith(".md"):
        path = Path(new)
        folders = memory_folders(idx)
        folder = folder_of(path, folders)
        if folder is None or not path.is_file() or not within_roots(path, folders):
            raise MemoryToolError(f"{path} is not a memory file inside the memory folders.")
        return idx.index_file(path, folder)
    return idx.get_current(str(new))


def _older_ids(idx: Index, entry: Entry) -> list[str]:
    """The ids ``entry`` supersedes, directly and through them (newest first)."""
    out: list[str] = []
    here = entry
    while here.supersedes and len(out) < MAX_CHAIN and here.supersedes not in out:
        out.append(here.supersedes)
        try:
            here = idx.get(here.supersedes)
        except MemoryToolError:
            break
    return out


__all__ = ["is_live", "status", "supersede", "forget", "unforget", "chain", "broken_chains"]


def _today(day: dt.date | None) -> dt.date:
    if day is not None:
        return day
    from ..base.config import today

    return today()


def supersede(
    idx: Index, old_id: str, new: str | Path, *, day: dt.date | None = None
) -> tuple[Entry, Entry]:
    """Retire memory ``old_id`` in favour of ``new`` (an id, or a memory file's path): the new
    one gets ``valid_from`` (unless it has one) and ``supersedes: <old>``, then the old one
    ``valid_to: <day>`` and ``superseded_by: <new>``; each file written atomically, under one
    lock, and indexed. The old memory's ``MEMORY.md`` line goes (Claude Code loads that file
    itself). Returns (old, new) as indexed now. Running it again changes nothing."""
    when = _today(day).isoformat()
    with file_lock(_lock()):
        old = idx.get_current(old_id)
        newer = _resolve(idx, new)
        if newer.id == old.id:
            raise MemoryToolError(f"{old.id} cannot supersede itself.")
        if old.superseded_by == newer.id and newer.supersedes == old.id:
            return old, newer
        if old.superseded_by and old.superseded_by != newer.id:
            raise MemoryToolError(
                f"{old.id} is already superseded by {old.superseded_by}: supersede that one "
                "instead (a memory has one successor)."
            )
        if newer.superseded_by or newer.forgotten:
            what = f"superseded by {newer.superseded_by}" if newer.superseded_by else "forgotten"
            raise MemoryToolError(f"{newer.id} is {what}: it cannot replace {old.id}.")
        if newer.supersedes and newer.supersedes != old.id:
            raise MemoryToolError(
                f"{newer.id} already supersedes {newer.supersedes}: a memory replaces one "
                "older memory (supersede the older ones one after another)."
            )
        if newer.id in _older_ids(idx, old):
            raise MemoryToolError(
                f"{newer.id} is older than {old.id} in its chain: superseding would make a loop."
            )
        from .edit import set_fields

        fields: dict[str, str | None] = {"supersedes": old.id}
        if not newer.valid_from:
            fields["valid_from"] = when
        newer = set_fields(idx, newer.id, fields)
        old = set_fields(idx, old.id, {"valid_to": when, "superseded_by": newer.id})
    _drop_index_line(old)
    return old, newer


def forget(idx: Index, entry_id: str, *, day: dt.date | None = None) -> Entry:
    """Retire a memory: ``forgotten: <day>`` in its frontmatter (the file stays, searchable as
    history), its ``MEMORY.md`` line removed. A memory forgotten already is left as it is."""
    from .edit import set_fields

    when = _today(day).isoformat()
    with file_lock(_lock()):
        entry = idx.get_current(entry_id)
        if not entry.forgotten:
            entry = set_fields(idx, entry.id, {"forgotten": when})
    _drop_index_line(entry)
    return entry


def unforget(idx: Index, entry_id: str) -> Entry:
    """Undo ``forget``: the ``forgotten`` key goes, the ``MEMORY.md`` line comes back (when the
    folder keeps one and the memory is live again)."""
    from .edit import set_fields

    with file_lock(_lock()):
        entry = idx.get_current(entry_id)
        if not entry.forgotten:
            raise MemoryToolError(f"{entry.id} is not forgotten: there is nothing to undo.")
        entry = set_fields(idx, entry.id, {"forgotten": None})
    if is_live(entry):
        _restore_index_line(entry)
    return entry


def _index_lines_path() -> Path:
    return paths.state_root() / INDEX_LINES_NAME


def _stashed() -> dict[str, list[str]]:
    try:
        data = json.loads(_index_lines_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _link_re(file_name: str) -> re.Pattern[str]:
    return re.compile(rf"\]\(\s*<?{re.escape(file_name)}>?\s*\)")


def _drop_index_line(entry: Entry) -> None:
    """Take a retired memory's lines out of its folder's ``MEMORY.md`` (Claude Code loads that
    file itself), keeping them aside so that ``unforget`` puts back the very same lines."""
    from .edit import drop_index_line

    path = Path(entry.path)
    index_file = path.parent / tree.MEMORY_INDEX_NAME
    try:
        text = index_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    link = _link_re(path.name)
    lines = [line for line in text.splitlines() if link.search(line)]
    if not lines:
        return
    with file_lock(_lock()):
        stash = _stashed()
        stash[str(path)] = lines
        atomic_write_text(_index_lines_path(), json.dumps(stash, indent=0))
    drop_index_line(path.parent, path.name)


def _restore_index_line(entry: Entry) -> None:
    """Put a memory's ``MEMORY.md`` lines back: those taken out when it was retired, or one
    made now (a captured memory's says what it is without repeating the fact)."""
    from .palace import first_sentence, memory_index_line

    path = Path(entry.path)
    index_file = path.parent / tree.MEMORY_INDEX_NAME
    if not index_file.exists():
        return
    with file_lock(_lock()):
        stash = _stashed()
        lines = stash.pop(str(path), None)
        atomic_write_text(_index_lines_path(), json.dumps(stash, indent=0))
    text = index_file.read_text(encoding="utf-8", errors="replace")
    if _link_re(path.name).search(text):
        return
    if not lines:
        origin = str(entry.extra.get("origin") or "")
        if origin.startswith(CAPTURE_PREFIX):
            hook = f"{origin[len(CAPTURE_PREFIX) :]} captured {entry.created} (memory-tool)"
        else:
            hook = one_line(entry.description or first_sentence(entry.body))
        lines = [memory_index_line(entry.name or path.stem, path.name, hook)]
    for line in lines:
        append_line_locked(index_file, line)


@record
class Chain:
    """A memory's versions: ``older`` (newest first) and ``newer`` (oldest first), and the ids
    the chain names that no memory has."""

    older: list[Entry] = field(default_factory=list)
    newer: list[Entry] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    loop: bool = False


def chain(idx: Index, entry: Entry) -> Chain:
    """The versions before and after ``entry``, following its supersedes / superseded_by keys."""
    out = Chain()
    seen = {entry.id}
    for key, bucket in (("supersedes", out.older), ("superseded_by", out.newer)):
        here = entry
        for _ in range(MAX_CHAIN):
            next_id = str(getattr(here, key))
            if not next_id:
                break
            if next_id in seen:
                out.loop = True
                break
            seen.add(next_id)
            try:
                here = idx.get(next_id)
            except MemoryToolError:
                out.missing.append(next_id)
                break
            bucket.append(here)
    return out


@record
class Broken:
    """One broken link of a chain, for the doctor: ``kind`` is ``missing`` (superseded_by names
    no memory: the fact is retired in favour of nothing), ``one_sided`` (the other memory does
    not name this one back), ``loop`` or ``missing_older`` (supersedes names no memory)."""

    entry: Entry
    kind: str
    target: str
    message: str


def broken_chains(idx: Index) -> list[Broken]:
    """Every broken link among the memories that name another in their versioning keys."""
    linked = idx.query("superseded_by != '' OR supersedes != ''")
    by_id = {e.id: e for e in linked}

    def find(entry_id: str) -> Entry | None:
        if entry_id in by_id:
            return by_id[entry_id]
        try:
            return idx.get(entry_id)
        except MemoryToolError:
            return None

    out: list[Broken] = []
    looped: set[str] = set()
    for e in linked:
        if e.superseded_by:
            target = find(e.superseded_by)
            if target is None:
                out.append(
                    Broken(
                        e, "missing", e.superseded_by,
                        f"superseded by {e.superseded_by}, which no memory is: it no longer "
                        "loads and nothing replaces it (remove superseded_by to bring it back)",
                    )
                )  # fmt: skip
            elif target.supersedes != e.id:
                out.append(
                    Broken(
                        e, "one_sided", target.id,
                        f"superseded by {target.id}, which does not name it back "
                        f"(add `supersedes: {e.id}` to {target.path})",
                    )
                )  # fmt: skip
        if e.supersedes and find(e.supersedes) is None:
            out.append(
                Broken(
                    e, "missing_older", e.supersedes,
                    f"supersedes {e.supersedes}, which no memory is (deleted or archived?)",
                )
            )  # fmt: skip
        versions = chain(idx, e) if e.id not in looped else None
        if versions is not None and versions.loop:
            looped.update([e.id] + [v.id for v in versions.older + versions.newer])
            out.append(
                Broken(
                    e, "loop", e.superseded_by or e.supersedes,
                    "its supersedes / superseded_by keys go round in a loop: every memory in it "
                    "is retired; remove superseded_by from the one that should load",
                )
            )  # fmt: skip
    return out


def chain_line(entry: Entry, today: dt.date | None = None) -> str:
    """``p-1a2b3c (live, from 2026-11-30): use polars ...`` for ``show`` and the UI."""
    bits = [status(entry, today)]
    if entry.valid_from:
        bits.append(f"from {entry.valid_from}")
    if entry.valid_to:
        bits.append(f"to {entry.valid_to}")
    if entry.forgotten:
        bits.append(f"forgotten {entry.forgotten}")
    text = one_line(entry.description or entry.body or entry.name)
    if len(text) > 80:
        text = text[:80] + "…"
    return f"{entry.id} ({', '.join(bits)}): {text}"
