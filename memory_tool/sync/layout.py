"""What travels, and where each file lives in the sync repository and on this machine.

The repository holds the palace's durable folders under their own names and each project's
memory under its machine-independent id:

    identity/ rooms/<room>/ wiki/ inbox/         <state>/<same path>
    projects/<id>/memory/<file>.md              <config>/projects/<this machine's key>/memory/
    projects/<id>/cold/<...>.md                 <state>/cold/<this machine's key>/

Never: the index, logs, hot session state, transcripts, run files, backups, caches,
config.yaml and rooms.yaml (per-machine settings), team palaces (they have their own remotes).
Every file leaves through ``outgoing``: ``<private>`` spans removed, secrets redacted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from ..base import paths
from ..base.privacy import sanitize
from ..base.record import record
from ..store import tree
from .projects import Projects, folder_name, id_of_folder, key_for
from .repo import Repo

# Palace folders that travel, each whole (sub-folders included).
PALACE_FOLDERS = ("identity", "rooms", "wiki", "inbox")
PROJECTS = "projects"
MEMORY = "memory"
COLD = "cold"
# Dot-files that travel: the inbox's list of candidates already accepted or rejected.
DOTFILES = (".decided",)
# A memory is a fact, not a dump: a file this large is held back (and named) rather than
# pushed into every machine's history for good.
MAX_SYNC_BYTES = 4 * 1024 * 1024
_REDACTED_RE = re.compile(r"\[REDACTED:([A-Za-z0-9_-]+)\]")


def travels(name: str) -> bool:
    """Whether a file of this name is synced: Markdown memories, MEMORY.md, ``.decided``.
    Temp files of atomic writes (``.x.tmp``) and lock files start with a dot."""
    if name in DOTFILES:
        return True
    return name.endswith(".md") and not name.startswith(".")


@record
class Outgoing:
    data: bytes | None  # what goes into the repository (None: held back)
    why: str = ""  # what was redacted, or why it was held back


def outgoing(data: bytes) -> Outgoing:
    """A file as it may leave this machine: ``<private>`` spans removed and secrets redacted
    (``base.privacy.sanitize``, the patterns every memory write uses). A file that is not UTF-8
    text, or is too large, is held back."""
    if len(data) > MAX_SYNC_BYTES:
        return Outgoing(None, f"larger than {MAX_SYNC_BYTES // (1024 * 1024)} MB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Outgoing(None, "not UTF-8 text")
    clean = sanitize(text)
    if clean == text:
        return Outgoing(data)
    kinds = sorted(set(_REDACTED_RE.findall(clean)) - set(_REDACTED_RE.findall(text)))
    why = "redacted " + ", ".join(kinds) if kinds else "<private> text removed"
    return Outgoing(clean.encode("utf-8"), why)


def _walk(folder: Path, rel: str) -> Iterator[tuple[str, str]]:
    """(repo path, local path) of every travelling file under ``folder``, walked as the index
    walks (``tree.walk``); links to files do not travel."""
    for item, sub in tree.walk(str(folder)):
        try:
            if travels(item.name) and item.is_file(follow_symlinks=False):
                yield (f"{rel}/{sub}/{item.name}" if sub else f"{rel}/{item.name}"), item.path
        except OSError:
            continue


def local_files(projects: Projects) -> dict[str, str]:
    """Every file of this machine that travels (its local path), by its path in the
    repository."""
    out: dict[str, str] = {}
    root = paths.state_root()
    for name in PALACE_FOLDERS:
        out.update(_walk(root / name, name))
    for key, project_id in projects.ids.items():
        base = f"{PROJECTS}/{folder_name(project_id)}"
        memory = paths.projects_dir() / key / MEMORY
        try:
            with os.scandir(memory) as it:
                for item in it:
                    if travels(item.name) and item.is_file(follow_symlinks=False):
                        out[f"{base}/{MEMORY}/{item.name}"] = item.path
        except OSError:
            pass
        out.update(_walk(paths.palace_dir("cold") / key, f"{base}/{COLD}"))
    return out


def local_path(rel: str, projects: Projects) -> Path | None:
    """Where a repository path lives on this machine; None for a project this machine does
    not have (its files wait in the repository) or a path that is not ours."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") or p.startswith(".git") for p in parts[:-1]) or not parts[-1]:
        return None
    if parts[-1] in (".", "..") or not travels(parts[-1]):
        return None
    if parts[0] in PALACE_FOLDERS and len(parts) >= 2:
        return paths.state_root().joinpath(*parts)
    if parts[0] != PROJECTS or len(parts) < 4:
        return None
    key = key_for(projects, id_of_folder(parts[1]))
    if key is None:
        return None
    if parts[2] == MEMORY and len(parts) == 4:
        return paths.projects_dir() / key / MEMORY / parts[3]
    if parts[2] == COLD:
        return paths.palace_dir("cold").joinpath(key, *parts[3:])
    return None


def project_of(rel: str) -> str | None:
    """The project id a repository path belongs to (None for the palace's folders)."""
    parts = rel.split("/")
    return id_of_folder(parts[1]) if parts[0] == PROJECTS and len(parts) > 2 else None


def guard_staged(r: Repo, *, stage_redacted: bool) -> tuple[list[tuple[str, str]], list[str]]:
    """The last look before a commit: every staged file passes ``outgoing`` again. One that
    would change has its redacted version staged while the file keeps its text
    (``stage_redacted``: a team palace, whose files are the tree and the person's own) or is left
    out of the commit; a file that cannot be sent is always left out. Returns (redacted or left
    out, with why; left out)."""
    found: list[tuple[str, str]] = []
    left_out: list[str] = []
    for rel in r.staged_paths():
        path = r.path / rel
        try:
            data = path.read_bytes()
        except OSError:
            continue
        out = outgoing(data)
        if out.data == data:
            continue
        if out.data is not None and stage_redacted:
            r.stage_data(rel, out.data)
            found.append((rel, out.why))
        else:
            r.unstage(rel)
            left_out.append(rel)
            found.append((rel, f"held back: {out.why}"))
    return found, left_out
