"""Project roots: which folder a project key stands for (keys are lossy), so that relative paths
named in a memory can be checked. Stored in the index's meta when a command runs inside the
project; otherwise read from Claude Code's transcripts (they record the cwd) or, where
unambiguous, from the key itself."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..base import paths
from ..store.index import Index

# Roots of projects found in Claude Code transcripts: read at most this many lines per file and
# this many files per project (the cwd is on the first lines).
TRANSCRIPT_HEAD_LINES = 20
TRANSCRIPT_FILES_PER_PROJECT = 3

ROOT_META_PREFIX = "project_root:"


def remember_root(idx: Index, cwd: str | Path) -> None:
    """Record which folder a project key stands for (keys are lossy), for relative-path checks."""
    key, root = paths.project_key(cwd), str(paths.project_root(cwd))
    if idx.meta(ROOT_META_PREFIX + key) != root:
        with contextlib.suppress(sqlite3.OperationalError):  # locked or read-only: next time
            idx.set_meta(ROOT_META_PREFIX + key, root)


def known_roots(idx: Index) -> dict[str, str]:
    return idx.meta_with_prefix(ROOT_META_PREFIX)


def _transcript_cwds(dirs: list[Path]) -> Iterator[str]:
    """The existing folders the latest transcripts in ``dirs`` (shortest name first) ran in."""
    for d in sorted(dirs, key=lambda d: len(d.name)):
        try:
            files = sorted(d.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            continue
        for f in files[:TRANSCRIPT_FILES_PER_PROJECT]:
            try:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    for n, line in enumerate(fh):
                        if n >= TRANSCRIPT_HEAD_LINES:
                            break
                        cwd = _json_cwd(line)
                        if cwd and os.path.isdir(cwd):
                            yield cwd
            except OSError:
                continue


def _root_from_transcripts(key: str) -> str | None:
    """Claude Code's transcripts record the session's cwd; sessions started in a subfolder are
    filed under a longer key that starts with this one."""
    base = paths.projects_dir()
    try:
        dirs = [d for d in base.iterdir() if d.name == key or d.name.startswith(key + "-")]
    except OSError:
        return None
    for cwd in _transcript_cwds(dirs):
        if paths.project_key(cwd) == key:
            return str(paths.project_root(cwd))
    return None


def owner_of(key: str) -> str:
    """The project a transcript folder's sessions belong to: Claude Code files a session in a
    linked worktree (or a subfolder) under that folder's own key, while its memory is the
    repository's (``paths.project_key``). ``key`` itself when its transcripts do not say."""
    for cwd in _transcript_cwds([paths.projects_dir() / key]):
        return paths.project_key(cwd)
    folder = folder_of_key(key)  # no transcript left: the folder the key names, if it exists
    return paths.project_key(folder) if folder is not None else key


def _json_cwd(line: str) -> str | None:
    if '"cwd"' not in line:
        return None
    try:
        value = json.loads(line).get("cwd")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


# Undoing a key by walking the folders (`_root_from_key`) lists at most this many entries in all:
# the folders on one path, not a disk (a key of a path that no longer exists ends it early).
KEY_WALK_MAX_ENTRIES = 20_000


def _root_from_key(key: str) -> str | None:
    """Undo the sanitising where it is unambiguous: '-' back to '/' gives a folder whose key is
    this key (true for paths of letters, digits and '/')."""
    guess = key.replace("-", "/")
    if guess.startswith("/") and os.path.isdir(guess) and paths.project_key(guess) == key:
        return str(paths.project_root(guess))
    return None


def folder_of_key(key: str) -> str | None:
    """The folder a key was made from, found by walking down from '/' through the folders
    whose sanitised name continues the key ('-' stands for '/' and for every character that is
    not a letter or digit, so `-home-dana-my-app` is /home/dana/my-app or /home/dana/my/app);
    None when no folder, or more than one, fits. For showing a project by its folder (the web
    UI): doctor checks paths only against roots known for sure (``discover_roots``)."""
    if not key.startswith("-"):
        return None
    budget = [KEY_WALK_MAX_ENTRIES]
    found: list[str] = []

    def walk(folder: str, rest: str) -> None:
        if not rest:
            found.append(folder)
            return
        try:
            with os.scandir(folder) as it:
                names = []
                for item in it:
                    budget[0] -= 1
                    if budget[0] < 0:
                        return
                    if item.is_dir():
                        names.append(item.name)
        except OSError:
            return
        for name in names:
            part = "-" + paths.sanitize_path(name)
            if len(found) < 2 and (rest == part or rest.startswith(part + "-")):
                walk(os.path.join(folder, name), rest[len(part) :])

    walk("/", key)
    return found[0] if len(found) == 1 and budget[0] >= 0 else None


def discover_roots(idx: Index, keys: Iterable[str]) -> dict[str, str | None]:
    stored = known_roots(idx)
    out: dict[str, str | None] = {}
    for key in keys:
        root: str | None = stored.get(key)
        if root is None or not os.path.isdir(root):
            root = _root_from_transcripts(key) or _root_from_key(key)
            if root is not None:
                with contextlib.suppress(sqlite3.OperationalError):
                    idx.set_meta(ROOT_META_PREFIX + key, root)
        out[key] = root
    return out
