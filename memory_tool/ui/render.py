"""What every page of the web UI shares: the templates (autoescaped: memory text is always shown
as text), the run's settings, the project list, and how a memory is summed up in a row."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from ..base import paths
from ..base.config import load_config, today
from ..base.record import record
from ..recall.layers import age_days, is_expired, is_stale
from ..store.entry import Entry
from ..store.index import Index, open_index
from .security import CSRF_FIELD, Secrets

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

# The pages, in the order the navigation shows them: (path, title).
NAV = (
    ("/brief", "Next session"),
    ("/rooms", "Rooms"),
    ("/inbox", "Inbox"),
    ("/learned", "Learned"),
    ("/sessions", "Sessions"),
    ("/health", "Health"),
)


@record(frozen=True)
class Settings:
    keys: Secrets
    cwd: str  # where `memory-tool ui` started: its project is the one shown first


@record(frozen=True)
class Project:
    key: str
    root: str | None  # the folder it stands for, when known
    here: bool  # the project `memory-tool ui` was started in
    # Other keys that are this project: Claude Code files a session in a linked worktree (or a
    # subfolder) under that folder's own key, while the memory is the repository's.
    aliases: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.root or self.key

    @property
    def name(self) -> str:
        """What a person calls it: its folder's name (the key only when no folder is known)."""
        return Path(self.root).name if self.root else self.key

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)


def settings_of(request: Any) -> Settings:
    value: Settings = request.app.state.settings
    return value


@contextmanager
def index() -> Iterator[Index]:
    with open_index() as idx:
        yield idx


def fresh(idx: Index, cwd: str) -> None:
    """Bring the index up to the files the way the hooks do, not with a stat of every file (a
    second at 10,000 files, on every page): build it if it never was, else scan again the
    folders whose listing changed (a file added, deleted, or saved by an editor's rename). A
    page checks the memories it shows against their files (``Index.current``), so an edit in
    place shows too; the UI's own changes index their file as they write it."""
    if not idx.ensure_built(cwd):
        idx.refresh_changed_folders(cwd)


def projects(idx: Index, cwd: str) -> list[Project]:
    """Every project memory knows of (a Claude Code memory folder, memories or cold summaries of
    its own), the one ``cwd`` is in first, each with its folder where that is known."""
    from ..hygiene.roots import discover_roots, folder_of_key, owner_of
    from ..store import tree

    here = paths.project_key(cwd)
    keys = {f.project for f in tree.claude_folders()} | set(idx.distinct_values("project"))
    keys.add(here)
    roots = discover_roots(idx, sorted(keys))
    for key in keys:  # a folder named with '-' or '.': its key is undone by looking
        folder = None if roots.get(key) else folder_of_key(key)
        if folder is not None and paths.project_key(folder) == key:
            roots[key] = folder
    owner = {key: _owner(key, roots.get(key), owner_of) for key in keys}
    for key, main in owner.items():  # a repository known only through its worktrees' sessions
        root = roots.get(key)
        if main != key and not roots.get(main) and root:
            roots[main] = str(paths.project_root(root))
    found = [
        Project(main, roots.get(main), main == here,
                tuple(sorted(k for k, o in owner.items() if o == main and k != main)))
        for main in set(owner.values())
    ]  # fmt: skip
    return sorted(found, key=lambda p: (not p.here, p.name.lower(), p.label))


def _owner(key: str, root: str | None, from_transcripts: Callable[[str], str]) -> str:
    """The project ``key`` belongs to: the key of its folder's repository (a linked worktree or a
    subfolder of a repository belongs to the repository, as Claude Code keys memory), else
    itself. Without a known folder, where its sessions ran says (``from_transcripts``)."""
    if paths.project_dir_name_override():
        return key
    if root is None or not os.path.isdir(root):
        return from_transcripts(key)
    return paths.project_key(root)


def by_key(found: list[Project]) -> dict[str, Project]:
    """Every key (aliases too) to its project: what a page shows for a memory's ``project``."""
    return {k: p for p in found for k in p.keys}


def chosen_project(found: list[Project], key: str | None) -> Project | None:
    if not key:
        return found[0] if found else None
    return next((p for p in found if key in p.keys), None)


def open_project(idx: Index, cwd: str, key: str | None) -> tuple[list[Project], Project | None]:
    """What a per-project page starts with: the index brought up to the files, every project,
    and the one ``key`` names (the one ``cwd`` is in without a key; None: no such project)."""
    fresh(idx, cwd)
    found = projects(idx, cwd)
    return found, chosen_project(found, key)


def facts(
    e: Entry, day: dt.date | None = None, cfg: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A memory's age and the badges a row shows."""
    day = day or today()
    cfg = cfg if cfg is not None else load_config()
    return {
        "entry": e,
        "age": age_days(e, day),
        "stale": is_stale(e, day, cfg) and not is_expired(e, day),
        "expired": is_expired(e, day),
        "inferred": e.created_inferred,
        "pinned": e.always,
    }


def short_path(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home) :] if path.startswith(home + "/") else path


def url(path: str, **params: str | None) -> str:
    query = urlencode({k: v for k, v in params.items() if v})
    return f"{path}?{query}" if query else path


def _environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=True,  # every template, whatever its name: memory text is never markup
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(nav=NAV, short_path=short_path, url=url, csrf_field=CSRF_FIELD)
    return env


_ENV: list[Any] = []


def render(request: Any, template: str, status: int = 200, **context: Any) -> Any:
    """The page ``template`` with ``context``, the navigation, the CSRF value for its forms and
    the note or error a redirect passed along."""
    from starlette.responses import HTMLResponse

    from ..tiers.inbox import list_candidates

    if not _ENV:
        _ENV.append(_environment())
    keys = settings_of(request).keys
    base = {
        "path": request.url.path,
        "csrf": keys.csrf,
        "note": request.query_params.get("note", ""),
        "error": request.query_params.get("error", ""),
        "inbox_count": len(list_candidates()),
    }
    html = _ENV[0].get_template(template).render(**(base | context))
    return HTMLResponse(html, status_code=status)
