"""``paths:`` globs that match no file: a memory tied to files its project does not have.

A memory's ``paths:`` globs (store/globs.py) bring it in when Claude touches a matching file. A
glob that matches nothing in the working tree (a file renamed, a folder moved, a typo) never
does: the memory is silently never recalled that way. The doctor lists the working tree once per
project (git's own list of tracked and untracked files, ignored files aside; a bounded walk where
there is no git) and names each such glob with its memory.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Sequence

from ..store.entry import Entry
from ..store.globs import literal_tail, matches
from .report import NOTE, PROBLEM, Finding, is_generated, label

# A working tree is listed up to this many files: past that (a home folder opened as a project,
# a tree of generated files) its globs are not checked, and a note says so.
MAX_TREE_FILES = 200_000
# git answers in well under a second for large repositories; past this, skip rather than hang.
GIT_TIMEOUT_S = 20.0
# Folders a walk without git never enters: what no memory is about, and what makes walks slow.
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".cache"})
_WILDCARDS = "*?["


def tree_files(root: str) -> list[str] | None:
    """The files of the working tree at ``root`` as paths relative to it (forward slashes), or
    None when it cannot be listed within MAX_TREE_FILES."""
    if os.path.isdir(os.path.join(root, ".git")):
        try:
            res = subprocess.run(
                ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                capture_output=True,
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            res = None
        if res is not None and res.returncode == 0:
            names = [os.fsdecode(n) for n in res.stdout.split(b"\0") if n]
            return names if len(names) <= MAX_TREE_FILES else None
    out: list[str] = []
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        rel = os.path.relpath(here, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        out += [prefix + f for f in files]
        if len(out) > MAX_TREE_FILES:
            return None
    return out


def _has_match(glob: str, root: str, files: Sequence[str], names: set[str]) -> bool:
    if glob.startswith(("/", "~")):
        return _absolute_match(glob)
    if not any(c in glob for c in _WILDCARDS) and not glob.endswith("/"):
        # Named outright: the file itself counts even where git ignores it (``.env``).
        if os.path.exists(os.path.join(root, glob)):
            return True
        return "/" not in glob and glob in names  # a bare name: at any depth
    tail = literal_tail(glob)  # a cheap test first: most files end otherwise
    return any(r.endswith(tail) and matches(glob, r, os.path.join(root, r)) for r in files)


def _absolute_match(glob: str) -> bool:
    """An absolute glob against the disk: the folder before its first wildcard, walked."""
    path = os.path.expanduser(glob)
    cut = min((path.find(c) for c in _WILDCARDS if c in path), default=-1)
    if cut < 0 and not path.endswith("/"):
        return os.path.exists(path)
    base = os.path.dirname(path[:cut]) if cut >= 0 else path.rstrip("/")
    if not os.path.isdir(base):
        return False
    seen = 0
    for here, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for f in files:
            full = os.path.join(here, f)
            if matches(glob, None, full):
                return True
            seen += 1
            if seen > MAX_TREE_FILES:
                return True  # too much to tell: no finding
    return False


def glob_findings(
    entries: Iterable[Entry], roots: dict[str, str | None], here: str | None
) -> list[Finding]:
    """A finding for each ``paths:`` glob of a memory that matches no file of its project's
    working tree (``roots``; a memory of no project: the tree doctor runs in, ``here``)."""
    by_root: dict[str, list[tuple[Entry, str]]] = {}
    unchecked: list[str] = []
    for e in entries:
        globs = e.extra.get("paths") if isinstance(e.extra, dict) else None
        if not globs or is_generated(e):
            continue
        root = roots.get(e.project) if e.project else here
        if root is None or not os.path.isdir(root):
            unchecked.append(e.id)
            continue
        by_root.setdefault(root, []).extend((e, g) for g in globs if isinstance(g, str))
    out: list[Finding] = []
    for root, tied in sorted(by_root.items()):
        files = tree_files(root)
        if files is None:
            unchecked += [e.id for e, _ in tied]
            continue
        names = {f.rsplit("/", 1)[-1] for f in files}
        known: dict[str, bool] = {}
        for e, glob in tied:
            if glob not in known:
                known[glob] = _has_match(glob, root, files, names)
            if not known[glob]:
                out.append(
                    Finding(
                        "dead_glob",
                        PROBLEM,
                        f"`paths: {glob}` matches no file of the working tree {root}; {label(e)}",
                        e.id,
                        e.path,
                        {"glob": glob, "root": root},
                    )
                )
    if unchecked:
        ids = sorted(set(unchecked))
        out.append(
            Finding(
                "globs_unchecked",
                NOTE,
                f"`paths:` globs of {len(ids)} memories not checked: their project's working "
                "tree is unknown or too large to list (run `memory-tool doctor` inside it)",
                data={"ids": ids},
            )
        )
    return out
