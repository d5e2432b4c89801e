"""The three depths an agent reads memory at: search (ids, one line each), peek (summaries),
get (full text). The CLI and the MCP server answer from these functions, so both rank, check ids
and render alike; each front end adds its own framing (a footer, a budget).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable

from ..base import paths, tokens
from ..base.errors import InvalidIdError, UnknownIdError
from ..base.record import record
from ..store.entry import ID_RE, USER_ID_RE, Entry, full_text, history_label
from ..store.index import Index
from ..store.search import Hit, search

# A search embeds at most this many entries added since the last `memory-tool index` (a few
# `add`s: well under a second); a bigger backlog waits for `memory-tool index`.
SEARCH_EMBED_MAX = 32


def check_ids(ids: Iterable[str]) -> list[str]:
    """The ids, each checked to look like one: an id is looked up in the index, never joined
    into a path, and a malformed one is refused before anything is opened."""
    out = list(ids)
    for entry_id in out:
        if not (ID_RE.match(entry_id) or USER_ID_RE.match(entry_id)) or entry_id in (".", ".."):
            raise InvalidIdError(entry_id)
    return out


def project_filter(project: str | None) -> str | None:
    """A project filter as people give it: a folder (a path, or ``.``) becomes its key under
    ``<config>/projects``; anything else is taken as a key already."""
    if project and (os.sep in project or project == ".") and os.path.isdir(project):
        return paths.project_key(project)
    return project


def semantic_ready(idx: Index) -> bool:
    """Vectors are stored and the extra is installed; new entries get theirs on the way. The
    model loads once per process: a long-lived front end (the MCP server) pays for it once."""
    from ..store import semantic

    if not semantic.usable(idx):
        return False
    semantic.update(idx, limit=SEARCH_EMBED_MAX)
    return True


def find(
    idx: Index,
    query: str,
    *,
    limit: int = 10,
    room: str | None = None,
    type_: str | None = None,
    project: str | None = None,
    sessions: bool = True,
    lexical: bool = False,
    now: dt.date | None = None,
) -> list[Hit]:
    """Depth 1: the best matches for ``query``, by the one ranking (``store.search``); by
    meaning too where vectors are stored, unless ``lexical``. Time words in the query
    ("last week", "the first time") count from ``now`` (default today)."""
    return search(
        idx,
        query,
        limit=limit,
        room=room,
        type_=type_,
        project=project_filter(project),
        sessions=sessions,
        semantic=not lexical and semantic_ready(idx),
        now=now,
    )


def unknown_filters(idx: Index, **filters: str | None) -> list[str]:
    """After an empty answer: a note for each filter that names something the index has none
    of (a room nobody filed into, a mistyped type), with what there is."""
    notes = []
    for column, value in filters.items():
        if column not in ("room", "type", "project"):  # a column name, never user text
            raise ValueError(column)
        if not value:
            continue
        known = idx.distinct_values(column)
        if value not in known:
            listed = ", ".join(known[:30]) + (", …" if len(known) > 30 else "")
            notes.append(f"no memory has {column} {value!r}; {column}s in use: {listed}")
    return notes


def hit_line(hit: Hit) -> str:
    """One search result: the id and where it lives (about 10 tokens); a retired memory says so,
    with its dates (``history: superseded 2026-11-30 by p-7d41b0``)."""
    history = history_label(hit.entry)
    where = f"{hit.entry.id} {hit.entry.room or hit.entry.type}"
    return f"{where} ({history})\n" if history else f"{where}\n"


def fetch(idx: Index, ids: Iterable[str]) -> tuple[list[Entry], list[str]]:
    """The entries of ``ids`` as their files are now, and the messages of those that are not
    there: one stale id from an old search must not cost the agent the rest of its fetch."""
    wanted = check_ids(ids)
    entries: list[Entry] = []
    missing: list[str] = []
    for entry_id in wanted:
        try:
            entries.append(idx.get_current(entry_id))
        except UnknownIdError as exc:
            missing.append(str(exc))
    return entries, missing


def peek_text(entry: Entry) -> str:
    """Depth 2: id, room, type, date and the first 80 characters (about 50 tokens)."""
    return entry.summary


def get_text(entry: Entry) -> str:
    """Depth 3: the whole memory."""
    return full_text(entry)


@record
class Packed:
    """What fitted a budget: the text, the ids shown whole, the id cut short (if any) and the
    ids left out."""

    text: str
    shown: list[str]
    cut: str
    left_out: list[str]


def pack(parts: list[tuple[str, str]], max_tokens: int, max_chars: int) -> Packed:
    """``(id, text)`` parts in order, whole while they fit ``max_tokens`` and ``max_chars``.
    A first part too big on its own is cut on a token boundary (so an answer is never empty);
    every later part that does not fit is left out and named."""
    out: list[str] = []
    shown: list[str] = []
    left: list[str] = []
    cut = ""
    used_tokens = used_chars = 0
    for entry_id, text in parts:
        if left:
            left.append(entry_id)
            continue
        n = tokens.count(text)
        if used_tokens + n <= max_tokens and used_chars + len(text) <= max_chars:
            out.append(text)
            shown.append(entry_id)
            used_tokens += n
            used_chars += len(text)
        elif not out:
            out.append(_cut(text, max_tokens, max_chars))
            cut = entry_id
            used_tokens, used_chars = max_tokens, max_chars  # nothing else goes after a cut
        else:
            left.append(entry_id)
    return Packed("".join(out), shown, cut, left)


def _cut(text: str, max_tokens: int, max_chars: int) -> str:
    """``text`` cut on a token boundary to fit both caps, ending in a newline."""
    short = tokens.truncate(text, max(1, max_tokens - 1))
    if len(short) >= max_chars:  # a token can be long: cut by characters too
        short = short[: max(0, max_chars - 2)].rstrip() + "…"
    while short and (len(short) + 1 > max_chars or tokens.count(short + "\n") > max_tokens):
        short = short[:-2].rstrip() + "…"
    return short + "\n"
