"""Where memory files live, and listing them cheaply.

Sources (all read, none rewritten unless a person asks):
- Claude Code's auto memory: ``<config>/projects/<project>/memory/*.md``
  (``MEMORY.md`` is an index, not a memory), or the folder ``autoMemoryDirectory`` moves it to
  (registered when a session starts in that project).
- Subagents' memory: ``<config>/agent-memory/<agent>/`` and a project's
  ``.claude/agent-memory/<agent>/`` (the latter registered when a session starts there).
- The palace under the state root: ``identity/``, ``rooms/<room>/``, ``wiki/``, ``cold/<project>/``.
- Team palaces (``memory-tool team add``): ``teams/<team>/rooms/<room>/`` and
  ``teams/<team>/wiki/``, recalled like the palace's own rooms and wiki, labelled with the team.
- A working tree's ``thoughts/CONTEXT.md`` (registered when a session starts in it).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..base import paths
from ..base.record import record

MEMORY_INDEX_NAME = "MEMORY.md"
# Claude Code loads the first 200 lines / 25 KB of MEMORY.md at session start; the rest is unseen.
MEMORY_INDEX_LOADED_LINES = 200
MEMORY_INDEX_LOADED_BYTES = 25 * 1024
# Bounds a walk through a symlinked or pathological palace: rooms are shallow by design.
MAX_WALK_DEPTH = 6
# Team palaces live here, one git clone per team (the sync layer clones and pulls them).
TEAMS_DIR = "teams"
# A second version of a memory that two machines changed at once is kept beside it under this
# mark (``name.conflict-<machine>-<date>.md``) until a person keeps one of them.
CONFLICT_MARK = ".conflict-"


@record(frozen=True)
class Folder:
    path: Path
    source: str  # claude | agent | identity | room | wiki | cold
    project: str = ""
    room: str = ""
    recursive: bool = False
    default_type: str = "reference"
    team: str = ""  # a team palace's folder: its memories are labelled with the team

    def stable_key(self, file: Path, project_id: str = "") -> str:
        """Where a file lives, independent of the machine's roots: the seed of its id.
        ``project_id``: the project's machine-independent id (``project_ids``), which seeds a
        project's memory and cold summaries instead of this machine's key for it, as the sync
        repository's ``projects/<id>/`` does."""
        if project_id and self.source == "claude":
            return f"project:{project_id}/memory/{file.name}"
        if project_id and self.source == "cold":
            with contextlib.suppress(ValueError):
                return f"project:{project_id}/cold/{file.relative_to(self.path).as_posix()}"
        if self.source == "claude":
            return f"claude:{self.project}/{file.name}"
        if self.source == "agent":
            return f"agent:{self.project}/{self.path.name}/{file.name}"
        try:
            rel = file.relative_to(paths.state_root())
        except ValueError:
            rel = file
        return f"palace:{rel.as_posix()}"

    def labelled(self, team: str) -> Folder:
        """This folder as part of a team palace."""
        return Folder(
            self.path, self.source, self.project, self.room, self.recursive, self.default_type, team
        )


def claude_folders() -> list[Folder]:
    root = paths.projects_dir()
    out: list[Folder] = []
    try:
        with os.scandir(root) as it:
            names = sorted(e.name for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return out
    for name in names:
        mem = root / name / "memory"
        if mem.is_dir():
            out.append(Folder(mem, "claude", project=name))
    return out


def claude_folder_for(project: str) -> Folder:
    return Folder(paths.projects_dir() / project / "memory", "claude", project=project)


def claude_folder_of(cwd: str | Path) -> Folder:
    """The auto-memory folder a session in ``cwd`` uses (``autoMemoryDirectory`` honoured)."""
    return Folder(paths.project_memory_dir(cwd), "claude", project=paths.project_key(cwd))


def agent_folders(root: Path, project: str = "") -> list[Folder]:
    """Subagents' memory (``memory: user|project`` in an agent's definition): one folder per
    agent under ``root``, searchable and in L4, never always-loaded."""
    return [
        Folder(root / name, "agent", project=project, recursive=True, default_type="reference")
        for name in _subdirs(root)
    ]


def user_agent_root() -> Path:
    return paths.config_dir() / "agent-memory"


def project_agent_root(cwd: str | Path) -> Path:
    return paths.work_root(cwd) / ".claude" / "agent-memory"


def palace_folders() -> list[Folder]:
    out: list[Folder] = []
    identity = paths.palace_dir("identity")
    if identity.is_dir():
        out.append(Folder(identity, "identity", recursive=True, default_type="user"))
    rooms = paths.palace_dir("rooms")
    for name in _subdirs(rooms):
        out.append(Folder(rooms / name, "room", room=name, recursive=True, default_type="note"))
    wiki = paths.palace_dir("wiki")
    if wiki.is_dir():
        out.append(Folder(wiki, "wiki", recursive=True, default_type="wiki"))
    cold = paths.palace_dir("cold")
    for name in _subdirs(cold):
        out.append(Folder(cold / name, "cold", project=name, recursive=True, default_type="cold"))
    return out + team_folders()


def teams_root() -> Path:
    return paths.state_root() / TEAMS_DIR


def team_names() -> list[str]:
    return _subdirs(teams_root())


def team_folders() -> list[Folder]:
    """The rooms and wiki of every team palace, as sources like the palace's own."""
    out: list[Folder] = []
    for team in team_names():
        root = teams_root() / team
        for name in _subdirs(root / "rooms"):
            folder = Folder(
                root / "rooms" / name, "room", room=name, recursive=True, default_type="note"
            )
            out.append(folder.labelled(team))
        wiki = root / "wiki"
        if wiki.is_dir():
            out.append(Folder(wiki, "wiki", recursive=True, default_type="wiki").labelled(team))
    return out


def team_room_dirs() -> list[Path]:
    """Each team's ``rooms/`` folder: a room added there changes the room table."""
    return [teams_root() / team / "rooms" for team in team_names()]


def is_conflict_copy(name: str) -> bool:
    return CONFLICT_MARK in name


def all_folders() -> list[Folder]:
    return claude_folders() + palace_folders() + agent_folders(user_agent_root())


def room_folder_names() -> list[str]:
    """Rooms that exist as folders: the palace's and the team palaces'."""
    names = set(_subdirs(paths.palace_dir("rooms")))
    for rooms in team_room_dirs():
        names.update(_subdirs(rooms))
    return sorted(names)


def _subdirs(root: Path) -> list[str]:
    try:
        with os.scandir(root) as it:
            return sorted(
                e.name for e in it if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
            )
    except OSError:
        return []


def is_memory_file(name: str) -> bool:
    return name.endswith(".md") and not name.startswith(".") and name != MEMORY_INDEX_NAME


def walk(
    root: str, *, recursive: bool = True, unreadable: list[tuple[str, str]] | None = None
) -> Iterator[tuple[os.DirEntry[str], str]]:
    """Every entry under ``root`` that is not a folder, with the path of its folder below
    ``root`` ("" at the top, "a/b" deeper): the one walk the index and sync share. Folders that
    are links or start with "." are not entered, nor any deeper than MAX_WALK_DEPTH; unreadable
    ones are skipped (and added to ``unreadable`` as (path, why), for the doctor). Strings, not
    Paths: a palace has 10,000s of files."""
    stack: list[tuple[str, str, int]] = [(root, "", 0)]
    while stack:
        here, rel, depth = stack.pop()
        try:
            with os.scandir(here) as it:
                items = list(it)
        except OSError as exc:
            if unreadable is not None and not isinstance(exc, FileNotFoundError):
                unreadable.append((here, (exc.strerror or str(exc)).lower()))
            continue
        for item in items:
            try:
                is_dir = item.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_dir:
                yield item, rel
            elif recursive and depth < MAX_WALK_DEPTH and not item.name.startswith("."):
                stack.append((item.path, f"{rel}/{item.name}" if rel else item.name, depth + 1))


def unreadable_folders(folders: Iterable[Folder]) -> list[tuple[str, str]]:
    """(path, why) of each folder under ``folders`` that cannot be listed: the memories in it
    are in no layer and no search, so the doctor names it."""
    found: list[tuple[str, str]] = []
    for folder in folders:
        for _ in walk(str(folder.path), recursive=folder.recursive, unreadable=found):
            pass
    return sorted(set(found))


def scan(folder: Folder) -> Iterator[tuple[Path, int, int]]:
    """(path, mtime_ns, size) of each memory file; unreadable folders and link loops are skipped.
    A link to a file is read (a memory kept elsewhere); a link to a folder is not entered."""
    for item, _ in walk(str(folder.path), recursive=folder.recursive):
        if not is_memory_file(item.name):
            continue
        try:
            if not item.is_file():
                continue
            st = item.stat()
        except OSError:
            continue
        yield Path(item.path), st.st_mtime_ns, st.st_size


def dir_mtime(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


# ``- [Title](file.md) — hook`` (Claude Code's index line; any dash or colon before the hook).
_INDEX_LINK_RE = re.compile(
    r"^\s*[-*]\s*\[(?P<title>[^\]]*)\]\(\s*<?(?P<file>[^)>\s]+)>?\s*\)"
    r"\s*(?:[\u2014\u2013:-]+\s*)?(?P<hook>.*)$"
)


def memory_index_hooks(cwd: str | Path) -> dict[str, str]:
    """What the project's ``MEMORY.md`` says of each file it links, by file name: the line's
    title and hook, which Claude Code loads into every session itself. Only the part it loads
    (MEMORY_INDEX_LOADED_BYTES) counts; {} when there is no such file or it cannot be read."""
    path = claude_folder_of(cwd).path / MEMORY_INDEX_NAME
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MEMORY_INDEX_LOADED_BYTES)
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in raw.decode("utf-8", "replace").splitlines()[:MEMORY_INDEX_LOADED_LINES]:
        m = _INDEX_LINK_RE.match(line)
        if m:
            name = os.path.basename(m.group("file"))
            out.setdefault(name, f"{m.group('title')} {m.group('hook')}".strip())
    return out
