"""The one line SessionStart adds when what this session loads needs attention
(``Memory hygiene: 2 stale, 1 broken path: memory-tool doctor``).

Only the checks that need no rapidfuzz, over what this session loads, cached in the index's meta
by index state so an unchanged tree costs one meta read. Hook path: stdlib and light modules
only (no ``duplicates``, no ``fix``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.config import config_path, load_config, today
from ..recall.layers import Unit, l1_candidates, l2_candidates
from ..store import tree
from ..store.entry import Entry, is_live, is_text
from ..store.index import Index
from ..store.rooms import instincts_files, rooms_yaml
from .age import age_findings
from .always_load import as_loaded, overflow_finding
from .config_files import config_findings, rooms_findings
from .conflicts import conflict_findings
from .drift import path_findings
from .files import file_findings
from .memory_index import IndexFolder, memory_index_findings
from .report import Finding, Report, sorted_findings
from .roots import known_roots, remember_root

WAKE_META_PREFIX = "hygiene:"
WAKE_PREFIX = "Memory hygiene: "
WAKE_SUFFIX = ": memory-tool doctor"
# Candidates waiting for a person (auto-capture's weak hints): one short item of the same line.
INBOX_SUFFIX = ": memory-tool inbox"


def inbox_count() -> int:
    """Candidates in the inbox (a listing, no file read)."""
    try:
        return sum(1 for n in os.listdir(paths.palace_dir("inbox")) if n.endswith(".md"))
    except OSError:
        return 0


def base_findings(
    entries: Sequence[Entry],
    roots: dict[str, str | None],
    folders: Sequence[IndexFolder],
    day: dt.date,
    cfg: dict[str, Any],
) -> list[Finding]:
    """The checks both the SessionStart line and ``doctor`` run: config.yaml, rooms.yaml, age,
    files, paths, MEMORY.md."""
    by_path = {e.path: e for e in entries}
    # A file that is not text is named once, as such: its age or paths mean nothing. Nor do a
    # retired memory's (superseded, forgotten, ended): it is history, kept as it was.
    text = [e for e in entries if is_text(e) and is_live(e, day)]
    findings = config_findings() + rooms_findings() + conflict_findings(entries)
    findings += age_findings(text, day, cfg)
    findings += file_findings(entries)
    findings += path_findings(text, roots)
    findings += memory_index_findings(folders, by_path)
    return findings


def wake_scope(
    idx: Index, project: str, context_path: str | None = None
) -> tuple[list[Entry], list[Entry], list[Entry]]:
    """What a session in ``project`` loads, as (L1 candidates, L2 candidates, the rest of its
    Claude memory folder): each row is read once, and the layers' own queries decide L1/L2.
    ``context_path``: the working tree's CONTEXT.md (another worktree's is not loaded here)."""
    l1 = l1_candidates(idx, project)
    l2 = l2_candidates(idx, project, context_path)
    have = {e.id for e in l1} | {e.id for e in l2}
    missing = [i for i in idx.project_memory_ids(project) if i not in have]
    rest = idx.get_many(missing)
    if context_path is not None:
        rest = [e for e in rest if e.source != "context" or e.path == context_path]
    return l1, l2, rest


def wake_report(
    idx: Index, cwd: str | Path, cfg: dict[str, Any] | None = None, day: dt.date | None = None
) -> Report:
    """The checks that need no rapidfuzz, over what this session loads."""
    cfg = cfg or load_config()
    day = day or today()
    project = paths.project_key(cwd)
    l1, l2, rest = wake_scope(idx, project, str(paths.context_file(cwd)))
    entries = list({e.id: e for e in [*l1, *l2, *rest]}.values())
    roots: dict[str, str | None] = dict(known_roots(idx))
    roots[project] = str(paths.project_root(cwd))
    folder = tree.claude_folder_of(cwd).path
    findings = base_findings(entries, roots, [IndexFolder(folder, True)], day, cfg)
    overflow = overflow_finding(
        as_loaded(l1, day, cfg), as_loaded(l2, day, cfg), project, day, cfg, False
    )
    findings += [overflow] if overflow else []
    return Report(sorted_findings(findings), len(entries), project, {project: roots[project]})


def _stat_sig(path: Path) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_mtime_ns}:{st.st_size}"


def wake_warning(idx: Index, cwd: str | Path) -> str | None:
    """``2 stale, 1 broken path: memory-tool doctor`` when what this session loads needs
    attention, else None. Cached in the index's meta by (generation, day, project, the state of
    MEMORY.md, config.yaml and the rooms files): an unchanged tree costs one meta read. Paths
    that vanish without any memory changing show up the next day (or at the next change)."""
    cfg = load_config()
    if not cfg.get("hygiene", {}).get("enabled", True):
        return None
    project = paths.project_key(cwd)
    remember_root(idx, cwd)
    memory_md = tree.claude_folder_of(cwd).path / tree.MEMORY_INDEX_NAME
    # config.yaml and the rooms files too: the line names what in them is not valid.
    # The inbox folder too: a candidate added or settled changes its listing (and the line).
    files = (memory_md, config_path(), rooms_yaml(), *instincts_files(), paths.palace_dir("inbox"))
    key = [idx.generation, today().isoformat(), project, *(_stat_sig(f) for f in files)]
    meta_key = WAKE_META_PREFIX + project
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        stored = json.loads(idx.meta(meta_key) or "null")
        if stored and stored.get("key") == key:
            line = stored.get("line")
            return line if isinstance(line, str) else None
    report = wake_report(idx, cwd, cfg)
    parts = [] if report.ok else [f"{report.summary()}{WAKE_SUFFIX}"]
    waiting = inbox_count()
    if waiting:
        parts.append(f"{waiting} in the inbox{INBOX_SUFFIX}")
    line = "; ".join(parts) or None
    with contextlib.suppress(sqlite3.OperationalError):
        idx.set_meta(meta_key, json.dumps({"key": key, "line": line}))
    return line


_DIGIT_RUN = re.compile(r"[0-9]+")


def line_tokens(idx: Index, text: str) -> int:
    """Exact cl100k tokens of a line whose numbers change (counts in the hygiene line) without
    loading the tokenizer for every new number: cl100k's pre-tokenizer cuts digit runs into
    groups of 1-3 digits, each one token, and never joins a digit to its neighbours; so the
    count is that of the line with every run replaced by "0" (cached once per wording) plus one
    per extra group. ``tests/test_doctor.py`` checks this against the tokenizer."""
    if idx.meta("token_method", "cl100k_base") != "cl100k_base":
        return idx.count_cached(text)  # the estimate has no tokenizer to spare
    runs = _DIGIT_RUN.findall(text)
    extra = sum((len(r) + 2) // 3 - 1 for r in runs)
    return idx.count_cached(_DIGIT_RUN.sub("0", text)) + extra


def wake_units(idx: Index, cwd: str | Path) -> list[Unit]:
    """The SessionStart line as a brief unit: exactly one line, only when something is wrong.
    Never raises: a hygiene bug must not cost the session its brief."""
    try:
        line = wake_warning(idx, cwd)
        if not line:
            return []
        text = f"{WAKE_PREFIX}{' '.join(line.split())}\n"
        return [Unit(text, line_tokens(idx, text))]
    except Exception as exc:  # noqa: BLE001 - fail open, and say so in the hook log
        from ..base.log import log_error

        log_error("SessionStart", exc)
        return []
