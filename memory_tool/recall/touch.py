"""Tool-level recall: the memories of the files Claude reads, edits or finds (PostToolUse), when
the prompt never named their topic.

Two kinds, each entry at most once per session (``recall.seen``):

- **tied memories**: those whose frontmatter ``paths:`` globs name the file (store/globs.py),
  this project's and every project's, rules first;
- **the file's room**: the room its path words belong to (``db/migrations/0042.py`` is
  database), once per room per session, a few lines, and not when a prompt of the session
  already recalled that room.

A path outside the working tree gets only memories whose absolute globs name it; a path no
glob names and no room claims gets nothing. Headings are fixed strings (their token counts
are cached), entries carry their stored counts: the tokenizer never loads here.

Hook path: stdlib plus our light modules.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..base import paths
from ..base.privacy import escape_fence
from ..store.entry import full_text, is_critical, is_rule
from ..store.globs import compile_glob, literal_tail
from .layers import Fill, Layer, Unit

if TYPE_CHECKING:
    from ..store.entry import Entry
    from ..store.index import Index

TIED_HEADING = "## Memories tied to a file just touched (tool recall)\n"
ROOM_HEADING_FORMAT = "## Memories about {room} (the room of a file just touched)\n"
# A file's room brings this many lines: enough for its rules and one fact, few enough that a
# session reading files of five rooms does not get five prompts' worth of L3.
ROOM_LINES_PER_FILE = 3
# A file's path can name two topics (web/src/components/LoginForm.tsx: frontend and
# authentication), as a prompt can (L3's MAX_ROOMS); more would be a path of generic words.
FILE_ROOMS_MAX = 2
# Of the memories tied to one file, the best this many come as full text when they fit: they
# are about exactly this file, and a tied rule ("generated: never edit by hand") needs its why.
TIED_FULL_TEXT_TOP = 1
# Session state keys (recall.seen): rooms recalled for files, and what tool recall spent.
ROOMS_KEY = "tool_rooms"
SPENT_KEY = "tool_tokens"

# Path words that say where a file sits, not what it is about.
_PATH_NOISE = frozenset(
    "src lib libs app apps pkg pkgs internal cmd main index init mod test tests spec specs "
    "util utils common core shared module modules package packages file files dist build "
    "py ts tsx js jsx go rs rb java kt cs cpp c h hpp md txt json yaml yml toml cfg ini".split()
)
_PATH_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def locate(file_path: str, cwd: str) -> tuple[str, str | None]:
    """(absolute path, path relative to the session's working tree or None when outside)."""
    given = os.path.expanduser(file_path)
    absolute = os.path.normpath(given if os.path.isabs(given) else os.path.join(cwd, given))
    try:
        absolute = os.path.realpath(absolute)
        root = str(paths.work_root(cwd))
    except (OSError, ValueError):
        return absolute, None
    if absolute.startswith(root.rstrip("/") + "/"):
        return absolute, absolute[len(root.rstrip("/")) + 1 :]
    return absolute, None


def path_words(relative: str) -> str:
    """The words of a relative path that can name a topic (folders and file stem)."""
    stem, _ = os.path.splitext(relative)
    # LoginForm -> Login Form: the search matches words, and a memory says "login form".
    spaced = _CAMEL.sub(" ", stem.replace("_", " ").replace("-", " "))
    return " ".join(w for w in _PATH_WORD.findall(spaced) if w.lower() not in _PATH_NOISE)


def tied_entries(
    idx: Index, located: Sequence[tuple[str, str | None]], project: str
) -> list[Entry]:
    """The memories whose ``paths:`` globs name any of the ``located`` files, as the files are
    now, critical rules first, then other rules, then by importance."""
    table = _tied_table(idx, project)
    if not table:
        return []
    wanted: set[str] = set()
    for absolute, rel in located:
        for memory, tail, pattern, is_absolute in table:
            target = absolute if is_absolute else rel
            if target is None or memory in wanted or not target.endswith(tail):
                continue
            if pattern.match(target) is not None:
                wanted.add(memory)
    entries = idx.current(idx.by_paths(sorted(wanted)))
    return sorted(entries, key=_tied_rank)


# (memory path, literal tail, pattern, absolute) of each tied glob, per project, as of an index
# generation: the resident server matches a file against a thousand globs without reading or
# compiling them again on every tool call (a few milliseconds saved each time).
_TIED: dict[str, tuple[int, list[tuple[str, str, re.Pattern[str], bool]]]] = {}
# Projects whose table is kept: one server serves a handful at a time.
TIED_CACHE_PROJECTS = 16


def _tied_table(idx: Index, project: str) -> list[tuple[str, str, re.Pattern[str], bool]]:
    generation = idx.generation
    kept = _TIED.get(project)
    if kept is not None and kept[0] == generation:
        return kept[1]
    table = []
    for memory, glob in idx.tied_globs(project):
        try:
            pattern, is_absolute = compile_glob(glob)
        except re.error:
            continue  # a glob that is no pattern names no file
        table.append((memory, literal_tail(glob), pattern, is_absolute))
    if len(_TIED) >= TIED_CACHE_PROJECTS:
        _TIED.clear()
    _TIED[project] = (generation, table)
    return table


def _tied_rank(e: Entry) -> tuple[int, int, str]:
    kind = 0 if is_critical(e) else 1 if is_rule(e) else 2
    return kind, -e.importance, e.id


def file_rooms(relative: str, compiled: Any) -> list[str]:
    """The rooms a file's path words belong to, best first, FILE_ROOMS_MAX at most; [] when no
    room clears the threshold."""
    from ..store.classify import classify

    words = path_words(relative)
    if not words:
        return []
    return [room for room, _ in classify(words, compiled)[:FILE_ROOMS_MAX]]


def touch_recall(
    idx: Index,
    file_paths: Sequence[str],
    cwd: str,
    *,
    budget: int,
    max_chars: int,
    exclude: set[str],
    rooms_given: set[str],
    cfg: dict[str, Any] | None = None,
) -> tuple[Layer, list[str]]:
    """What the ``file_paths`` a tool touched bring, within ``budget`` exact tokens and
    ``max_chars``, leaving out ``exclude`` (ids the session has) and rooms in ``rooms_given``.
    Returns the layer and the rooms it recalled."""
    layer = Layer("tool", budget)
    if not file_paths or budget <= 0:
        return layer, []
    project = paths.project_key(cwd)
    located = [locate(p, cwd) for p in file_paths]
    count = idx.count_cached
    fill = Fill(budget, max_chars)
    add, units = fill.add, fill.units

    tied = [e for e in tied_entries(idx, located, project) if e.id not in exclude]
    if tied:
        head = Unit(TIED_HEADING, count(TIED_HEADING))
        first = True
        for i, e in enumerate(tied):
            options = [Unit(full_text(e), e.full_tokens)] if i < TIED_FULL_TEXT_TOP else []
            options.append(Unit(e.line, e.line_tokens))
            for unit in options:
                if add([head, unit] if first else [unit]):
                    first = False
                    layer.picked.append(e)
                    break
            else:
                layer.omitted.append(e)
    taken = {e.id for e in layer.picked} | set(exclude)
    rooms: list[str] = []
    inside = [rel for _, rel in located if rel]
    if inside:
        from ..store.rooms import compiled_rooms

        compiled = compiled_rooms()
        wanted = [(rel, room) for rel in inside for room in file_rooms(rel, compiled)]
        for rel, room in wanted:
            if room in rooms_given or room in rooms:
                continue
            picked = _room_entries(idx, room, path_words(rel), project, taken, cfg)
            if not picked:
                continue
            heading = ROOM_HEADING_FORMAT.format(room=escape_fence(room))
            head = Unit(heading, count(heading))
            first = True
            for e in picked:
                line = Unit(e.line, e.line_tokens)
                if add([head, line] if first else [line]):
                    first = False
                    layer.picked.append(e)
                    taken.add(e.id)
            if not first:
                rooms.append(room)
    layer.units = units
    return layer, rooms


def _room_entries(
    idx: Index,
    room: str,
    words: str,
    project: str,
    exclude: set[str],
    cfg: dict[str, Any] | None,
) -> list[Entry]:
    """The room's memories for a file: those its path words match, then the room's most
    important, ROOM_LINES_PER_FILE at most, as the files are now."""
    from ..base.config import load_config, today
    from ..store.search import room_members, search
    from .layers import rank

    hits = search(
        idx, words, limit=ROOM_LINES_PER_FILE, rooms=[room], sessions=False, cold=False,
        exclude=exclude, fuzzy=False, home_project=project,
    )  # fmt: skip
    out = [h.entry for h in hits if h.entry.type != "user"]
    have = {e.id for e in out}
    members = room_members(idx, [room], home_project=project, limit=ROOM_LINES_PER_FILE * 4)
    rest = [e for e in members if e.id not in exclude and e.id not in have]
    out += rank(rest, today(), cfg if cfg is not None else load_config())
    return [e for e in idx.current(out) if e.room == room][:ROOM_LINES_PER_FILE]
