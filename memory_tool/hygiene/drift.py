"""Drift checks: what a memory names that is not there (any more).

- paths: absolute, ``~/`` and repo-relative paths named in a memory that no longer exist
  (relative ones resolved against the project's root, see ``roots``);
- ``[[links]]`` to memories not written yet: notes, not problems (Claude Code's convention).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..store.entry import Entry
from ..store.links import links_of, names_of, norm_name
from .report import NOTE, PROBLEM, Finding, label

# A memory naming more paths than this is a log, not a fact: check the first ones only, so one
# pasted listing cannot make the SessionStart check stat thousands of files.
MAX_PATHS_PER_ENTRY = 40

_TOKEN_SPLIT = re.compile(r"[\s`'\"()\[\]<>{}|,;=]+")
_LINE_SUFFIX = re.compile(r":\d+(?::\d+)?$")
_PATH_CHARS = re.compile(r"^[\w.@+~/%-]+$")
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
_DOMAIN = re.compile(r"^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n")
# A sentence saying the path is gone on purpose is history, not drift.
_HISTORY = re.compile(
    r"\b(deleted|removed|renamed|moved|dropped|no longer|used to|formerly|was at)\b", re.I
)
# Pseudo-filesystems and device paths are not facts about a project.
_SKIP_TOP = frozenset({"proc", "sys", "dev", "run"})


@dataclass(frozen=True)
class PathRef:
    # abs | home | rel (./x, or has an extension) | rel_weak (checked when its top folder exists)
    kind: str
    text: str


def path_refs(text: str) -> list[PathRef]:
    """Paths a memory names, in order, without repeats. URLs, globs, placeholders, routes
    (``/api/users``: no such top-level folder here), fractions and ``and/or`` are not paths."""
    out: list[PathRef] = []
    seen: set[str] = set()
    for sentence in _SENTENCE.split(text):
        if "/" not in sentence:
            continue
        found = []
        for raw in _TOKEN_SPLIT.split(sentence):
            if "/" not in raw or "://" in raw or "..." in raw:
                continue
            tok = _LINE_SUFFIX.sub("", raw.lstrip("*_").rstrip(".:!?*_"))
            if not tok or tok in seen or not _PATH_CHARS.match(tok) or tok.startswith("//"):
                continue
            ref = _classify(tok)
            if ref is not None:
                seen.add(tok)
                found.append(ref)
        if found and not _HISTORY.search(sentence):
            out += found
    return out


def _classify(tok: str) -> PathRef | None:
    if tok.startswith("~/"):
        return PathRef("home", tok) if len(tok) > 2 else None
    if tok.startswith("~"):
        return None
    parts = [p for p in tok.split("/") if p]
    if not parts:
        return None
    if tok.startswith("/"):
        if len(parts) < 2 or parts[0] in _SKIP_TOP or not os.path.isdir("/" + parts[0]):
            return None
        return PathRef("abs", tok)
    first = parts[0]
    if first not in (".", ".."):
        if _DOMAIN.match(first) or all(p.replace(".", "").isdigit() for p in parts):
            return None
        if len(parts) < 2:
            return None
    if first in (".", "..") or _EXT.search(parts[-1]):
        return PathRef("rel", tok)
    return PathRef("rel_weak", tok)


def _root_for(e: Entry, roots: dict[str, str | None]) -> str | None:
    return roots.get(e.project) if e.project else None


def path_findings(entries: Sequence[Entry], roots: dict[str, str | None]) -> list[Finding]:
    out: list[Finding] = []
    exists_cache: dict[str, bool] = {}
    unchecked: dict[str, set[str]] = defaultdict(set)
    home = str(Path.home())

    def exists(p: str) -> bool:
        if p not in exists_cache:
            exists_cache[p] = os.path.exists(p)
        return exists_cache[p]

    for e in entries:
        if e.source == "context" or "/" not in e.body:
            continue
        root = _root_for(e, roots)
        for ref in path_refs(e.body)[:MAX_PATHS_PER_ENTRY]:
            if ref.kind == "abs":
                target = ref.text
            elif ref.kind == "home":
                target = os.path.join(home, ref.text[2:])
            elif root is None:
                if ref.kind == "rel":
                    unchecked[e.project].add(e.id)
                continue
            else:
                target = os.path.normpath(os.path.join(root, ref.text))
                if ref.kind == "rel_weak":
                    top = ref.text.split("/", 1)[0]
                    if not exists(os.path.join(root, top)):
                        continue
            if not exists(target):
                where = f" under {root}" if ref.kind.startswith("rel") else ""
                out.append(
                    Finding(
                        "broken_path",
                        PROBLEM,
                        f"names {ref.text}, which does not exist{where}; {label(e)}",
                        e.id,
                        e.path,
                        {"named": ref.text, "resolved": target},
                    )
                )
    for project, ids in sorted(unchecked.items()):
        if project:
            msg = (
                f"relative paths in {len(ids)} memories of {project} not checked: its project "
                "root is unknown (run `memory-tool doctor` once from inside the project)"
            )
        else:
            msg = f"relative paths in {len(ids)} palace notes not checked: they have no project"
        out.append(
            Finding("root_unknown", NOTE, msg, data={"project": project, "ids": sorted(ids)})
        )
    return out


# --- [[links]] ---------------------------------------------------------------------------------


def link_findings(entries: Sequence[Entry], known: Sequence[Entry]) -> list[Finding]:
    names: set[str] = set()
    for e in known:
        names.update(names_of(e))
    out = []
    for e in entries:
        for target in links_of(e.body):
            if norm_name(target) not in names:
                msg = f"[[{target}]] names a memory that does not exist yet: to write"
                out.append(Finding("to_write", NOTE, msg, e.id, e.path, {"link": target}))
    return out
