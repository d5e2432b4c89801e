"""``memory-tool doctor``: every check over every memory, as one report."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.config import load_config, today
from ..store import tree
from ..store.entry import is_live, is_text
from ..store.index import Index
from .always_load import always_load_findings
from .chains import chain_findings
from .drift import link_findings
from .duplicates import duplicate_findings, duplicate_findings_for
from .files import folder_findings
from .fix import mark_fixable
from .globs import glob_findings
from .memory_index import IndexFolder
from .report import Finding, Report, sorted_findings
from .roots import discover_roots, remember_root
from .wake_line import base_findings


def diagnose(
    idx: Index,
    cwd: str | Path | None = None,
    *,
    duplicates: bool = True,
    cfg: dict[str, Any] | None = None,
    day: dt.date | None = None,
) -> Report:
    """Every check over every memory (the caller refreshes the index first)."""
    cfg = cfg or load_config()
    day = day or today()
    project = paths.project_key(cwd) if cwd is not None else ""
    if cwd is not None:
        remember_root(idx, cwd)
    entries = idx.memories()
    claude = tree.claude_folders()
    keys = {e.project for e in entries if e.project} | {f.project for f in claude}
    if project:
        keys.add(project)
    roots = discover_roots(idx, sorted(keys))
    folders = [IndexFolder(f.path, True) for f in claude]
    folders += [IndexFolder(f.path, False) for f in tree.palace_folders()]
    findings = base_findings(entries, roots, folders, day, cfg)
    findings += folder_findings(tree.all_folders())
    mark_fixable(findings)
    findings += link_findings(entries, entries)
    findings += chain_findings(idx)
    live = [e for e in entries if is_text(e) and is_live(e, day)]
    findings += glob_findings(live, roots, roots.get(project) if project else None)
    if duplicates:
        findings += duplicate_findings(entries)
    projects = sorted({f.project for f in claude} | ({project} if project else set()))
    findings += always_load_findings(idx, projects, day, cfg)
    return Report(sorted_findings(findings), len(entries), project, roots)


def diagnose_entry(
    idx: Index,
    entry_id: str,
    cwd: str | Path | None = None,
    *,
    cfg: dict[str, Any] | None = None,
    day: dt.date | None = None,
) -> list[Finding]:
    """The doctor's findings about one memory (``Report.about`` of a full ``diagnose``), found
    by running each check over that memory and the few others it is checked against: its
    folder's MEMORY.md, the memories its links name, its duplicate group, its project's
    always-load set. A full report costs seconds at 10,000 memories; this costs milliseconds."""
    cfg = cfg or load_config()
    day = day or today()
    entry = idx.get_current(entry_id)
    entries = idx.memories()
    keys = [entry.project] if entry.project else []
    if cwd is not None:
        keys.append(paths.project_key(cwd))
    roots = discover_roots(idx, sorted(set(keys)))
    folders = [IndexFolder(f.path, f.source == "claude") for f in tree.all_folders()]
    here = [f for f in folders if Path(entry.path).parent == f.path]
    findings = base_findings([entry], roots, here, day, cfg)
    mark_fixable(findings)
    findings += link_findings([entry], entries)
    findings += chain_findings(idx, only=entry.id)
    findings += duplicate_findings_for(entry, entries)
    project = entry.project or (paths.project_key(cwd) if cwd is not None else "")
    if project:
        findings += always_load_findings(idx, [project], day, cfg)
    report = Report(sorted_findings(findings), 1, project, roots)
    return report.about(entry.id, entry.path)
