"""Backfill: the Scribe (and with it auto-capture) over the sessions Claude Code already kept.

Claude Code keeps about 30 days of transcripts (``cleanupPeriodDays``) under
``<config>/projects/<project>/<session>.jsonl``. Run over those of the last N days, the first
session after install already has the recent sessions' cold summaries, and whatever the Scribe
captures from them (inbox candidates; live memories where auto-capture is on). No model call.

Idempotent: a ledger (``<state>/backfill.json``) records each transcript done with its size and
mtime, so a second run reads nothing it read before and writes nothing new; a transcript that
grew since (a session resumed) is read again, and the Scribe rewrites its own summary in place.
A session the hooks already keep (its hot state exists) is left to them. The hot state a backfill
builds for an old session is removed after: an old session must never pass for the latest one a
``resume`` or "where were we" brings back.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.errors import MemoryToolError
from ..base.fsutil import atomic_write_text, file_lock
from ..base.log import log_error
from ..base.record import field, record
from .hot import hot_dir, hot_path, load_state, session_key, state_path

# Claude Code deletes transcripts older than ``cleanupPeriodDays`` (30 by default): what is
# there to backfill is about this much.
DEFAULT_DAYS = 30
LEDGER_NAME = "backfill.json"
LOCK_NAME = "backfill.lock"

Progress = Callable[[int, int], None]


@record
class BackfillReport:
    found: int = 0  # transcripts of the last N days
    done: int = 0  # read and given to the Scribe now
    already: int = 0  # done by an earlier backfill, unchanged since
    kept_by_hooks: int = 0  # a session the hooks keep: left to them
    empty: int = 0  # nothing to summarise (a prompt or two), or not a transcript
    failed: list[str] = field(default_factory=list)  # "path: error"
    summaries: int = 0  # cold summaries written
    candidates: int = 0  # new inbox candidates
    captured: int = 0  # new memories auto-capture wrote
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "found": self.found,
            "done": self.done,
            "already": self.already,
            "kept_by_hooks": self.kept_by_hooks,
            "empty": self.empty,
            "failed": self.failed,
            "summaries": self.summaries,
            "candidates": self.candidates,
            "captured": self.captured,
            "seconds": round(self.seconds, 2),
        }


def transcripts(days: int, now: float | None = None) -> list[Path]:
    """Claude Code's session transcripts changed in the last ``days`` days, oldest first (so the
    newest session is summarised last, as it happened). Subagent transcripts (in a session's
    own folder) are part of their session, not sessions."""
    if days < 1:
        raise MemoryToolError("--days must be 1 or more.")
    since = (time.time() if now is None else now) - days * 86400
    found: list[tuple[float, Path]] = []
    root = paths.projects_dir()
    try:
        projects = list(os.scandir(root))
    except OSError:
        return []
    for project in projects:
        if not project.is_dir(follow_symlinks=False):
            continue
        try:
            entries = list(os.scandir(project.path))
        except OSError:
            continue
        for entry in entries:
            if not entry.name.endswith(".jsonl"):
                continue
            try:
                st = entry.stat()
            except OSError:
                continue
            if entry.is_file() and st.st_mtime >= since:
                found.append((st.st_mtime, Path(entry.path)))
    return [p for _, p in sorted(found)]


def ledger_path() -> Path:
    return paths.state_root() / LEDGER_NAME


def _load_ledger() -> dict[str, list[int]]:
    try:
        data = json.loads(ledger_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, list)} if isinstance(data, dict) else {}


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def _counts() -> tuple[int, int, int]:
    """(cold summaries, inbox candidates, captured memories) on disk and in the index now."""
    from ..store.index import open_index
    from .inbox import list_candidates

    with open_index() as idx:
        idx.refresh(sessions=False)
        cold = len(idx.entries(source="cold"))
        captured = len(idx.captured(limit=1_000_000))
    return cold, len(list_candidates()), captured


def _drop_hot(session_id: str) -> None:
    """Remove the hot state, hot file and locks a backfill made for an old session."""
    key = session_key(session_id)
    for path in (
        state_path(session_id),
        hot_path(session_id),
        hot_dir() / f".{key}.lock",
        hot_dir() / f".{key}.scribe.lock",
    ):
        try:
            path.unlink()
        except OSError:
            continue


def _session_id(path: Path) -> str:
    from ..store.transcript import read_from

    head = read_from(path, 0).events
    return next((e.session_id for e in head if e.session_id), "") or path.stem


def backfill_one(path: Path) -> str:
    """Give one transcript to the Scribe. Returns what happened: ``done``, ``kept_by_hooks``
    or ``empty``."""
    from . import scribe

    sid = _session_id(path)
    if load_state(sid) is not None:
        return "kept_by_hooks"
    try:
        scribe.state_from_transcript(path)
    except MemoryToolError:  # not a transcript, or nothing in it to summarise
        return "empty"
    try:
        entry = scribe.run(sid, final=True, model=False)
    finally:
        _drop_hot(sid)
    return "done" if entry is not None else "empty"


def backfill(days: int = DEFAULT_DAYS, progress: Progress | None = None) -> BackfillReport:
    """Run the Scribe over the transcripts of the last ``days`` days (see the module's notes).
    ``progress(done, total)`` is called after each transcript."""
    started = time.monotonic()
    report = BackfillReport()
    with file_lock(paths.state_root() / LOCK_NAME):
        todo = transcripts(days)
        report.found = len(todo)
        ledger = _load_ledger()
        before = _counts()
        for n, path in enumerate(todo, 1):
            try:
                stamp = _stamp(path)
                if ledger.get(str(path)) == stamp:
                    report.already += 1
                else:
                    outcome = backfill_one(path)
                    setattr(report, outcome, getattr(report, outcome) + 1)
                    ledger[str(path)] = stamp
                    # Saved after each: an interrupted backfill resumes where it stopped.
                    atomic_write_text(ledger_path(), json.dumps(ledger, indent=0))
            except Exception as exc:  # noqa: BLE001 - one bad transcript must not stop the rest
                log_error("backfill", exc)
                report.failed.append(f"{path}: {exc}")
            if progress is not None:
                progress(n, len(todo))
        after = _counts()
    report.summaries = max(0, after[0] - before[0])
    report.candidates = max(0, after[1] - before[1])
    report.captured = max(0, after[2] - before[2])
    report.seconds = time.monotonic() - started
    return report
