"""Creating the palace from templates, and writing memory files the way Claude Code does.

Writes never overwrite: a new memory gets a fresh file name (created atomically and
exclusively), and its line is appended to its folder's ``MEMORY.md`` under a lock, so concurrent
writers lose nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..base import paths
from ..base.config import today
from ..base.errors import MemoryToolError, NearDuplicateError
from ..base.fsutil import append_line_locked, atomic_write_text, create_exclusive, ensure_dir
from ..base.privacy import sanitize
from ..base.resources import templates_dir
from . import tree
from .entry import CLAUDE_TYPES, Entry, is_live
from .index import Index

PALACE_DIRS = ("identity", "rooms", "wiki", "cold", "hot", "inbox", "logs")
# Files copied from templates/ into the state root by `init` (never over a user's file).
PALACE_FILES = ("config.yaml", "rooms.yaml")
# The hash of each copy as `init` wrote it. A copy still matching its record was never edited, so
# a later `init` (install.sh runs it on every upgrade) replaces it with the newer template: new
# room vocabulary reaches users who never touched the file, and an edited file is never touched.
SHIPPED_RECORD = ".shipped-templates.json"
# A memory's name is a short slug: enough words to recognise it in a list.
SLUG_MAX_WORDS = 6
SLUG_MAX_CHARS = 48
# Claude Code shows a one-line description per memory; keep it one line.
DESCRIPTION_MAX_CHARS = 140
ROOM_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,40}$")
WRITABLE_TYPES = (*CLAUDE_TYPES, "wiki", "note")


@dataclass
class InitReport:
    created: list[Path]
    kept: list[Path]
    updated: list[Path] = field(default_factory=list)  # unedited copies of an older template
    edited: list[Path] = field(default_factory=list)  # kept, yours, though the template changed


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def init_palace() -> InitReport:
    """Create the palace folders and copy the starter files that do not exist yet; bring copies
    nobody edited up to the current template."""
    root = ensure_dir(paths.state_root())
    report = InitReport([], [])
    for name in PALACE_DIRS:
        path = root / name
        if path.exists():
            report.kept.append(path)
        else:
            ensure_dir(path)
            report.created.append(path)
    src = templates_dir()
    record_path = root / SHIPPED_RECORD
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        record = record if isinstance(record, dict) else {}
    except (OSError, ValueError):
        record = {}
    for name in PALACE_FILES:
        target = root / name
        shipped = (src / name).read_bytes()
        if target.exists():
            current = _sha256(target.read_bytes())
            if current == _sha256(shipped):
                report.kept.append(target)
            elif current == record.get(name):
                atomic_write_text(target, shipped.decode("utf-8"))
                report.updated.append(target)
            else:
                report.kept.append(target)
                if record.get(name) != _sha256(shipped):
                    report.edited.append(target)  # and the template has moved on since
                continue  # yours: the record keeps pointing at what we last wrote
        else:
            atomic_write_text(target, shipped.decode("utf-8"))
            report.created.append(target)
        record[name] = _sha256(shipped)
    atomic_write_text(record_path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    return report


def slugify(text: str) -> str:
    """A file name from the text: accents folded ("über" -> "uber"), other scripts kept."""
    import unicodedata

    folded = "".join(
        c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c)
    )
    words = re.findall(r"[^\W_]+", folded)[:SLUG_MAX_WORDS]
    slug = "-".join(words)[:SLUG_MAX_CHARS].strip("-")
    return slug or "memory"


def first_sentence(text: str) -> str:
    line = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", line)
    sentence = match.group(1) if match else line
    if len(sentence) > DESCRIPTION_MAX_CHARS:
        sentence = sentence[: DESCRIPTION_MAX_CHARS - 1].rstrip() + "…"
    return sentence


def render_memory(
    name: str, description: str, type_: str, body: str, extra: dict[str, object]
) -> str:
    """Claude Code's current layout (``metadata.type``) plus the fields we add."""
    meta: dict[str, object] = {"name": name, "description": description}
    if type_ in CLAUDE_TYPES:
        meta["metadata"] = {"type": type_}
    else:
        meta["type"] = type_
    meta["created"] = today().isoformat()
    meta.update({k: v for k, v in extra.items() if v not in (None, "", [])})
    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{head}---\n\n{body.strip()}\n"


def _refuse_background_room(room: str) -> None:
    """A background room (rooms.yaml ``inject: false``) is never recalled: a memory filed there
    would be lost to every prompt."""
    from .classify import injects
    from .rooms import compiled_rooms

    try:
        rooms = compiled_rooms()
    except MemoryToolError:
        return  # a broken rooms.yaml is reported where it is used; filing still works
    if room in rooms.rooms and not injects(room, rooms):
        raise MemoryToolError(
            f"room {room!r} is a background room (inject: false in rooms.yaml): its memories "
            "would never be recalled. File it in a topic room, or leave --room out."
        )
    if room not in rooms.rooms:
        # A new room is made on purpose (its folder, or rooms.yaml); a typo of an existing one
        # would file the memory where no prompt finds it.
        import difflib

        close = difflib.get_close_matches(room, list(rooms.rooms), n=1, cutoff=0.8)
        if close:
            folder = paths.palace_dir("rooms") / room
            raise MemoryToolError(
                f"no room {room!r}: did you mean {close[0]!r}? To start a new room of that "
                f"name, create its folder {folder} (or add it to rooms.yaml) first."
            )


def room_folder(room: str) -> tree.Folder:
    """The palace folder of ``room``, once the name is checked: a room name, not a background
    room, not a typo of an existing room."""
    if not ROOM_NAME_RE.match(room):
        raise MemoryToolError(
            f"room {room!r} is not a room name: use lower-case letters, digits, '-' and '_'."
        )
    _refuse_background_room(room)
    return tree.Folder(
        paths.palace_dir("rooms") / room, "room", room=room, recursive=True, default_type="note"
    )


def _target_folder(
    type_: str, room: str | None, cwd: str | Path, tier: str | None, team: str | None = None
) -> tree.Folder:
    if team:
        return team_folder(team, room, wiki=tier == "wiki" or type_ == "wiki")
    if tier == "wiki" or type_ == "wiki":
        return tree.Folder(paths.palace_dir("wiki"), "wiki", recursive=True, default_type="wiki")
    if room:
        return room_folder(room)
    project = paths.project_key(cwd)
    return tree.Folder(paths.project_memory_dir(cwd), "claude", project=project)


def team_folder(team: str, room: str | None, *, wiki: bool) -> tree.Folder:
    """Where a memory for a team palace goes: one of its rooms, or its wiki."""
    root = tree.teams_root() / team
    if not (root / ".git").exists():
        raise MemoryToolError(
            f"no team {team!r} here: `memory-tool team add {team} REMOTE` joins it "
            "(`memory-tool team list` shows the teams you have)."
        )
    if wiki:
        return tree.Folder(root / "wiki", "wiki", recursive=True, default_type="wiki", team=team)
    if not room or not ROOM_NAME_RE.match(room):
        raise MemoryToolError(
            "a team memory goes to one of the team's rooms or its wiki: add --room ROOM "
            "(lower-case letters, digits, '-' and '_') or --tier wiki."
        )
    return tree.Folder(
        root / "rooms" / room, "room", room=room, recursive=True, default_type="note", team=team
    )


def resolve_type(
    type_: str | None, *, room: str | None, tier: str | None, global_: bool = False
) -> str:
    """The type of a memory about to be added, from what was asked: options that contradict
    each other are refused, not silently resolved one way (the CLI's ``add`` and the MCP
    ``add`` tool refuse the same things). Unset: wiki with tier wiki, note with a room, else
    project. ``global_`` (a room memory for every project) needs a room."""
    if room is not None and not room.strip():
        raise MemoryToolError("a room needs a name (e.g. room authentication).")
    if global_ and not room:
        raise MemoryToolError(
            "global makes a room memory recalled in every project (--global); without a room "
            "the memory goes to this project's own folder. Give a room, or drop global."
        )
    if tier not in (None, "wiki"):
        raise MemoryToolError(f"tier must be wiki (or left out); got {tier!r}.")
    if tier == "wiki" and type_ not in (None, "wiki"):
        raise MemoryToolError(
            f"tier wiki writes a wiki page, so type {type_} does not apply: drop one of them."
        )
    if tier == "wiki" and room:
        raise MemoryToolError("tier wiki and a room file a memory in two places: pick one.")
    if type_ == "user" and room:
        raise MemoryToolError(
            "a user memory is about you, not a topic: it goes to the project's memory folder "
            "(L1, always loaded). Drop the room, or use type note for a room memory."
        )
    if type_ is not None and type_ not in WRITABLE_TYPES:
        raise MemoryToolError(f"type must be one of {', '.join(WRITABLE_TYPES)}; got {type_!r}.")
    if type_ is None:
        return "wiki" if tier == "wiki" else ("note" if room else "project")
    return type_


def add_memory(
    index: Index,
    text: str,
    *,
    type_: str | None = None,
    cwd: str | Path,
    room: str | None = None,
    importance: int | None = None,
    name: str | None = None,
    description: str | None = None,
    tier: str | None = None,
    always: bool = False,
    extra: dict[str, object] | None = None,
    created: list[bool] | None = None,
    team: str | None = None,
    force: bool = False,
    global_: bool = False,
    index_hook: str | None = None,
) -> Entry:
    """Write one memory file, add its ``MEMORY.md`` line and index it. Returns the entry: the
    one saved before when the same text is already in that folder (a repeated `add`, an inbox
    line the Scribe promoted already), so nothing is saved twice. ``created``, when given,
    receives whether a new file was written. ``team``: write to that team palace (a room, or
    its wiki) instead of your own.

    A room memory of your own palace belongs to the project ``cwd`` is in (``project:`` in its
    frontmatter: it is recalled there only), or with ``global_`` to every project. A team's
    room memories are for every project (a teammate's checkout has another path, so another
    project key).

    ``index_hook``: the ``MEMORY.md`` line's hook, when it should not be the description (Claude
    Code loads ``MEMORY.md`` into every session of the project: a one-sentence memory whose line
    repeats it would reach the model twice with the brief).

    Raises NearDuplicateError when a memory of that folder already says all the text says, or
    the text says all it does and more (``similar``), unless ``force``."""
    type_ = resolve_type(type_, room=room, tier=tier, global_=global_)
    if importance is not None and not 1 <= importance <= 5:
        raise MemoryToolError("importance runs from 1 (trivia) to 5 (critical).")
    body = sanitize(text).strip()
    if not body:
        raise MemoryToolError(
            "nothing left to save: the text is empty once private parts are removed."
        )
    slug = slugify(name or body)
    desc = sanitize(description).strip() if description else first_sentence(body)
    folder = _target_folder(type_, room, cwd, tier, team)
    own_room = folder.source == "room" and not team and not global_
    project = paths.project_key(cwd) if own_room else None
    fields: dict[str, object] = {"room": room, "project": project, "importance": importance}
    if always:
        fields["always"] = True
    fields.update(extra or {})
    # Files are the truth: a memory written by hand (or by Claude) since the last refresh
    # counts as much as an indexed one (a folder whose listing changed is read again).
    index.refresh_changed_folders(cwd)
    same = find_duplicate(index, folder.path, body)
    if same is None and not force:
        near = find_near_duplicate(index, folder, body, paths.project_key(cwd))
        if near is not None:
            raise NearDuplicateError(near)
    if created is not None:
        created.append(same is None)
    if same is not None:
        return same
    content = render_memory(slug, desc, type_ if tier != "wiki" else "wiki", body, fields)
    stem = f"{type_}_{slug.replace('-', '_')}" if folder.source == "claude" else slug
    path = claim_file(folder.path, stem, content)
    append_line_locked(
        folder.path / tree.MEMORY_INDEX_NAME, memory_index_line(slug, path.name, index_hook or desc)
    )
    return index.index_file(path, folder)


def find_duplicate(index: Index, folder: Path, body: str) -> Entry | None:
    """The live memory of ``folder`` (its sub-folders included) whose text is ``body``, if any:
    a superseded or forgotten one is history, and saving its text again makes a new memory."""
    for path, text in index.bodies_under(str(folder) + os.sep, len(body), len(body) + 8):
        if text.strip() == body and os.path.exists(path):
            entry = index.get_by_path(path)
            if is_live(entry):
                return entry
    return None


# Near-duplicates are looked for among this many of the folder's best search matches for the
# new text: a memory that holds all its words (or all of whose words it holds) ranks near the top.
NEAR_CANDIDATES = 20


def find_near_duplicate(
    index: Index, folder: tree.Folder, body: str, home_project: str
) -> Entry | None:
    """A memory of ``folder`` that the text nearly repeats, or that nearly repeats the text
    (``similar.either_repeats``), among those a session in ``home_project`` can see."""
    from .search import search
    from .similar import either_repeats, gist, gist_of

    new = gist(body)
    prefix = str(folder.path) + os.sep
    hits = search(
        index,
        body,
        limit=NEAR_CANDIDATES,
        sessions=False,
        cold=False,
        fuzzy=False,
        intent=False,  # a memory's text, not a question
        home_project=home_project,
        sources=(folder.source,),
        room=folder.room or None,
        live_only=True,
    )
    for hit in hits:
        e = hit.entry
        if e.path.startswith(prefix) and either_repeats(new, gist_of(e)) and os.path.exists(e.path):
            return e
    return None


def memory_index_line(title: str, file_name: str, hook: str) -> str:
    """One ``MEMORY.md`` line, in Claude Code's format: ``- [Title](file.md) — hook``."""
    return f"- [{title}]({file_name}) — {hook}"


def claim_file(folder: Path, stem: str, content: str) -> Path:
    ensure_dir(folder)
    for n in range(1, 10_000):
        path = folder / (f"{stem}.md" if n == 1 else f"{stem}-{n}.md")
        if create_exclusive(path, content):
            return path
    raise MemoryToolError(f"could not find a free file name for {stem!r} in {folder}.")
