"""Which project a memory folder belongs to, the same on every machine.

Claude Code keys a project's memory folder by the absolute path of its repository
(``-home-a-src-x`` on one machine, ``-Users-a-x`` on another). Sync keys a project by its
repository's origin URL, normalised (``git@github.com:Acme/x.git`` and
``https://github.com/acme/x`` are both ``github.com/acme/x``), or by an id the user sets with
``memory-tool sync link ID``, and maps that id back to each machine's own folder.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import quote, unquote

from ..base import paths
from ..base.errors import SyncError
from ..base.fsutil import atomic_write_text, file_lock
from ..base.record import field, record
from ..hygiene.roots import discover_roots, remember_root
from ..store import project_ids
from ..store.index import open_index
from .repo import run_checked

# Where user-set ids live (per machine: a folder's path is this machine's business).
LINKS_FILE = "links.json"
# An id the user sets is a short name: it becomes a folder name in the sync repository.
MAX_ID_CHARS = 200
# The id of a project known only by its path (export archives only: a sync never guesses).
PATH_ID_PREFIX = "path:"
_SCP_RE = re.compile(r"^(?:[^@/:]+@)?(?P<host>[^/:]+):(?!//)(?P<path>.+)$")


@record
class Projects:
    """This machine's projects as sync sees them."""

    ids: dict[str, str] = field(default_factory=dict)  # local key -> id (the keys that travel)
    keys: dict[str, str] = field(default_factory=dict)  # id -> the local key it maps to
    unsynced: list[str] = field(default_factory=list)  # keys with no origin URL and no link
    shadowed: dict[str, str] = field(default_factory=dict)  # key -> id another key holds
    reseeded: bool = False  # a key got its id only now: its memories' ids change (once)


def normalise_url(url: str, base: Path | None = None) -> str:
    """``host/owner/repo`` in lower case: scheme, user, password, port and ``.git`` dropped, so
    every way of cloning one repository gives one id. A path remote is ``local/<path>``
    (relative paths resolved against ``base``, the repository that names it)."""
    u = url.strip()
    host = ""
    if "://" in u:
        scheme, _, rest = u.partition("://")
        if scheme.lower() == "file":
            path = rest
        else:
            authority, _, path = rest.partition("/")
            host = authority.rsplit("@", 1)[-1]
            # Port dropped (an IPv6 literal keeps its brackets).
            host = host.split("]", 1)[0] + "]" if host.startswith("[") else host.split(":")[0]
    elif (m := _SCP_RE.match(u)) and not u.startswith(("/", ".")):
        host, path = m.group("host"), m.group("path")
    else:
        path = u
        if base is not None and not os.path.isabs(path):
            path = os.path.join(str(base), path)
        path = os.path.normpath(path)
    path = path.strip("/")
    path = re.sub(r"\.git$", "", path).rstrip("/")
    path = re.sub(r"/+", "/", path)
    return f"{host.lower()}/{path.lower()}" if host else f"local/{path.lower()}"


def origin_url(root: Path) -> str:
    """The repository's ``origin`` URL (or its only remote's), "" without one."""
    if not root.is_dir():
        return ""
    url = run_checked(["config", "--get", "remote.origin.url"], root)
    if url:
        return url
    remotes = run_checked(["remote"], root).split()
    if len(remotes) == 1:
        return run_checked(["config", "--get", f"remote.{remotes[0]}.url"], root)
    return ""


def folder_name(project_id: str) -> str:
    """The id as one folder name of the sync repository (``github.com%2Facme%2Fx``)."""
    return quote(project_id, safe="@+~")


def id_of_folder(name: str) -> str:
    return unquote(name)


# --- ids the user sets -------------------------------------------------------------------------
def links_path() -> Path:
    return paths.state_root() / "sync" / LINKS_FILE


def links() -> dict[str, str]:
    try:
        data = json.loads(links_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def check_id(project_id: str) -> str:
    value = project_id.strip()
    if not value or len(value) > MAX_ID_CHARS or any(ord(c) < 32 for c in value):
        raise SyncError(
            f"{project_id!r} is not a usable project id: give a short name (at most "
            f"{MAX_ID_CHARS} characters), the same on every machine, e.g. `acme-website`."
        )
    if value.startswith(PATH_ID_PREFIX):
        raise SyncError(f"a project id may not start with {PATH_ID_PREFIX!r}: pick another name.")
    return value


def link(cwd: str | Path, project_id: str | None) -> tuple[str, str | None]:
    """Set (or with None, clear) the id of the project at ``cwd`` on this machine; returns
    (its key, the id it had before)."""
    key = paths.project_key(cwd)
    with file_lock(links_path().with_suffix(".lock")):
        current = links()
        before = current.get(key)
        if project_id is None:
            current.pop(key, None)
        else:
            current[key] = check_id(project_id)
        atomic_write_text(links_path(), json.dumps(current, indent=1, sort_keys=True) + "\n")
    with open_index() as idx:  # the folder a key stands for, for the next sync on this machine
        remember_root(idx, cwd)
    return key, before


# --- resolving ---------------------------------------------------------------------------------
def local_keys() -> list[str]:
    """Every project key this machine knows: each folder Claude Code keeps (with memory or
    only sessions so far: memory may arrive for it) and each with cold summaries."""
    keys = set(_subdirs(paths.projects_dir()))
    keys.update(_subdirs(paths.palace_dir("cold")))
    return sorted(keys)


def _subdirs(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return [e.name for e in it if e.is_dir(follow_symlinks=False) and e.name[0] != "."]
    except OSError:
        return []


def resolve(cwd: str | Path | None = None, *, by_path: bool = False) -> Projects:
    """Each local project's id: a link the user set, else its repository's normalised origin
    URL. ``cwd``: a project folder to learn the root of (a sync started there). ``by_path``:
    projects with neither get ``path:<key>`` (export archives: the same path on the machine
    that imports maps back; a sync never guesses)."""
    own = links()
    keys = set(local_keys()) | set(own)
    with open_index() as idx:
        if cwd is not None:
            remember_root(idx, cwd)
            keys.add(paths.project_key(cwd))
        roots = discover_roots(idx, sorted(keys - set(own)))
    out = Projects()
    candidates: dict[str, list[str]] = {}
    for key in sorted(keys):
        project_id = own.get(key)
        if project_id is None:
            root = roots.get(key)
            url = origin_url(Path(root)) if root else ""
            if url:
                project_id = normalise_url(url, Path(root) if root else None)
            elif by_path:
                project_id = PATH_ID_PREFIX + key
        if project_id is None:
            out.unsynced.append(key)
            continue
        candidates.setdefault(project_id, []).append(key)
    for project_id, found in candidates.items():
        # Two folders of one repository on this machine (two clones): one of them travels, the
        # one the user linked, else the one with memory in it, else the first by name.
        found.sort(key=lambda k: (k not in own, not _has_memory(k), k))
        chosen = found[0]
        out.ids[chosen] = project_id
        out.keys[project_id] = chosen
        for other in found[1:]:
            out.shadowed[other] = project_id
    # The index seeds memory ids with these, so that they are the same on every machine; a
    # ``path:`` id is no project id (the path key itself seeds the same ids where it maps).
    shared = {k: v for k, v in out.ids.items() if not v.startswith(PATH_ID_PREFIX)}
    out.reseeded = project_ids.record(shared)
    return out


def _has_memory(key: str) -> bool:
    return (paths.projects_dir() / key / "memory").is_dir()


def key_for(projects: Projects, project_id: str) -> str | None:
    """The local key a project id maps to (a ``path:`` id maps to its own key)."""
    key = projects.keys.get(project_id)
    if key is None and project_id.startswith(PATH_ID_PREFIX):
        key = project_id[len(PATH_ID_PREFIX) :]
        if not key or "/" in key or key in (".", ".."):
            return None
    return key
