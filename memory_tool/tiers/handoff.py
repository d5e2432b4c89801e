"""Handoff enforcement at Stop: a session that did substantial work writes a handoff first.

The rule lives in two places on purpose (the priority-enforcement design's "rule + hook"): the
wake-up brief tells Claude to write ``thoughts/HANDOFF.md`` before a long session ends
(``wake.HANDOFF_RULE``), and this Stop hook makes it happen when the rule was forgotten.

``handoff.mode`` in config.yaml: ``off`` | ``remind`` (a ``systemMessage`` shown to the person,
the stop goes ahead) | ``block`` (``{"decision": "block", "reason": ...}``: Claude continues with
the reason as its next instruction). Whatever the mode, the hook speaks at most once per session
(a marker file under the state root), never while Claude is already continuing because of a Stop
hook (``stop_hook_active``), and never inside a subagent (``agent_id``).

A handoff nobody reads defeats the point, so this module also says which handoff the next
session gets (``tiers.inject.handoff_units`` renders it): the working tree's
``thoughts/HANDOFF.md`` goes to the first session that starts after it was written, to resumed
sessions and to "where were we" prompts; a record under the state root remembers which version of
the file was delivered. A handoff older than the project's latest session summary by more than
``handoff.stale_after_hours`` is stale: reported, not injected.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.config import today
from ..base.event import HookEvent
from ..base.fsutil import atomic_write_text, create_exclusive, file_lock
from ..base.record import record

MODES = ("off", "remind", "block")
# How a handoff given to a session is named in its record (``HandoffFile.marker``).
MARKER_PREFIX = "handoff:"
DEFAULT_MODE = "block"
# Defaults of handoff.min_file_edits / min_tool_calls (config.py DEFAULTS holds the same numbers):
# five edited files or twenty tool calls is more than a quick fix, and enough to lose.
DEFAULT_MIN_FILE_EDITS = 5
DEFAULT_MIN_TOOL_CALLS = 20
# A file system's mtime can lag the clock a little: a handoff written this close before the
# session's first event still counts as written in it.
MTIME_SLACK_S = 2.0

# The default of handoff.stale_after_hours: a day of later sessions makes a handoff history.
DEFAULT_STALE_AFTER_HOURS = 24
# A handoff is a page, not a log: past this size only a pointer to the file is given.
MAX_HANDOFF_BYTES = 64 * 1024
# Deliveries remembered (one per handoff file): enough for every working tree a person uses.
MAX_DELIVERY_RECORDS = 500

# Used when templates/HANDOFF.md is missing (a broken install must not break the Stop hook).
FALLBACK_TEMPLATE = """# Handoff: {date}

Session {session} in {project}.

## Goal
## Done
## Decisions
## Open items and next steps
## Gotchas
## How to check the current state
"""


def template_text() -> str:
    try:
        from ..base.resources import templates_dir

        return (templates_dir() / "HANDOFF.md").read_text(encoding="utf-8")
    except Exception:  # noqa: BLE001 - templates missing or unreadable: the built-in one
        return FALLBACK_TEMPLATE


def render_template(cwd: str | Path, session_id: str = "") -> str:
    text = template_text()
    return (
        text.replace("{date}", today().isoformat())
        .replace("{session}", session_id[:8] if session_id else "(this session)")
        .replace("{project}", str(paths.project_root(cwd)))
    )


def target(cwd: str | Path) -> Path:
    return paths.handoff_file(cwd)


def marker_path(session_id: str) -> Path:
    from .hot import hot_dir, session_key

    return hot_dir() / f"{session_key(session_id)}.handoff"


def written_since(state: dict[str, Any], cwd: str | Path) -> bool:
    """A handoff was written during this session: thoughts/HANDOFF.md changed after the session
    started, or the hot file's Handoff section holds something."""
    from .hot import read_handoff_section

    try:
        mtime = os.stat(target(cwd)).st_mtime
    except OSError:
        mtime = None
    if mtime is not None and mtime >= float(state["started"]) - MTIME_SLACK_S:
        return True
    return bool(read_handoff_section(state["session_id"]))


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and value >= 0 else default


def work_done(state: dict[str, Any]) -> tuple[int, int]:
    """(files edited, tool calls) so far, counted incrementally from the transcript."""
    return len(state["files"]), int(state["tool_calls"])


def substantial(state: dict[str, Any], cfg: dict[str, Any]) -> bool:
    conf = cfg.get("handoff", {})
    files, calls = work_done(state)
    return files >= _int(conf.get("min_file_edits"), DEFAULT_MIN_FILE_EDITS) or calls >= _int(
        conf.get("min_tool_calls"), DEFAULT_MIN_TOOL_CALLS
    )


def mode_of(cfg: dict[str, Any]) -> str:
    mode = str(cfg.get("handoff", {}).get("mode", DEFAULT_MODE)).strip().lower()
    # YAML reads a bare `off` as False.
    if mode in ("false", "no", "none", "0"):
        return "off"
    return mode if mode in MODES else DEFAULT_MODE


def block_reason(state: dict[str, Any], cwd: str | Path) -> str:
    files, calls = work_done(state)
    path = target(cwd)
    return (
        f"memory-tool: this session did substantial work ({files} files edited, {calls} tool "
        f"calls) and no handoff has been written since it started. Before stopping, write a "
        f"handoff for the next session to {path} (create the folder if needed; replace any "
        f"older handoff in that file), filled in from this session and following this "
        f"template:\n\n{render_template(cwd, state['session_id'])}\n"
        "Then stop. (memory-tool asks this once per session.)"
    )


def remind_message(state: dict[str, Any], cwd: str | Path) -> str:
    files, calls = work_done(state)
    return (
        f"memory-tool: this session edited {files} files ({calls} tool calls) and no handoff was "
        f"written. To keep its state for the next session, ask Claude to write one to "
        f"{target(cwd)} (`memory-tool handoff` shows the template)."
    )


def decide(event: HookEvent, state: dict[str, Any], cfg: dict[str, Any]) -> dict[str, Any] | None:
    """The Stop hook's answer: a block, a reminder, or None (let the stop go ahead)."""
    mode = mode_of(cfg)
    if mode == "off":
        return None
    if event.stop_hook_active or event.agent_id:
        return None
    cwd = event.cwd
    if not substantial(state, cfg) or written_since(state, cwd):
        return None
    # The marker is created exclusively: of two racing Stop hooks only one speaks, and a
    # session is asked once, ever.
    if not create_exclusive(marker_path(state["session_id"]), f"{mode} {today().isoformat()}\n"):
        return None
    if mode == "remind":
        return {"systemMessage": remind_message(state, cwd)}
    return {"decision": "block", "reason": block_reason(state, cwd)}


# --- delivery: the next session reads what this one wrote ---------------------------------------
@record(frozen=True)
class HandoffFile:
    path: Path
    mtime: float
    size: int

    @property
    def version(self) -> str:
        """This version of the file: a rewritten handoff is delivered again."""
        return f"{self.mtime:.6f}:{self.size}"

    @property
    def marker(self) -> str:
        """What a session that was given this version remembers (no repeat in one session)."""
        return f"{MARKER_PREFIX}{self.path}:{self.version}"


def holds_handoff(markers: Iterable[object]) -> bool:
    """Whether a session's record of what it was given (``markers``) holds a handoff."""
    return any(str(m).startswith(MARKER_PREFIX) for m in markers)


def find_handoff(cwd: str | Path) -> HandoffFile | None:
    """The working tree's handoff file, if there is one: thoughts/HANDOFF.md, else a HANDOFF.md
    at the tree's root, where Claude also writes one when asked to "write it down" (blind25;
    one stat, two when the first is missing)."""
    first = target(cwd)
    for path in (first, first.parent.parent / "HANDOFF.md"):
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size > 0:
            return HandoffFile(path, st.st_mtime, st.st_size)
    return None


def read_handoff(handoff: HandoffFile) -> str | None:
    """Its text, redacted and stripped of ``<private>`` parts; None when it is too large to be a
    handoff or unreadable."""
    if handoff.size > MAX_HANDOFF_BYTES:
        return None
    try:
        raw = handoff.path.read_bytes()[:MAX_HANDOFF_BYTES]
    except OSError:
        return None
    from ..base.privacy import sanitize

    return sanitize(raw.decode("utf-8", errors="replace")).strip()


def stale_after_s(cfg: dict[str, Any]) -> float:
    hours = _int(cfg.get("handoff", {}).get("stale_after_hours"), DEFAULT_STALE_AFTER_HOURS)
    return hours * 3600.0


def is_stale(handoff: HandoffFile, latest_summary_at: float | None, cfg: dict[str, Any]) -> bool:
    """Older than the project's latest session summary by more than the configured time: later
    sessions have moved on, and the handoff would mislead more than help."""
    return latest_summary_at is not None and latest_summary_at - handoff.mtime > stale_after_s(cfg)


def _deliveries_path() -> Path:
    from .hot import hot_dir

    return hot_dir() / "handoffs.json"


def _deliveries() -> dict[str, Any]:
    import json

    try:
        data = json.loads(_deliveries_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def was_delivered(handoff: HandoffFile) -> bool:
    """Whether a session was already given this version of the file and took it up: it did
    something (``hot.has_substance``). A session that was handed it and did nothing with it
    ("morning", "right, I'm off", or only "what was I in the middle of?") leaves it for the
    next one: weeks of use saw such sessions take the handoff the next working session was
    meant to get ("let's get the extend-my-loan button working", a session after the one that
    asked). A session whose record is gone counts as taking it."""
    record_ = _deliveries().get(str(handoff.path))
    if not (
        isinstance(record_, dict)
        and record_.get("version") == handoff.version
        and bool(record_.get("session"))
    ):
        return False
    return _took_it_up(str(record_["session"]))


def _took_it_up(session_id: str) -> bool:
    from .hot import has_substance, load_state

    state = load_state(session_id)
    if state is None:
        return True
    try:
        return has_substance(state)
    except (KeyError, TypeError, ValueError):
        return True


def mark_delivered(handoff: HandoffFile, session_id: str) -> None:
    """Remember that ``session_id`` was given this version (later sessions are not, unless
    they ask). Best effort: a read-only state folder means the next session gets it again."""
    import time

    _update_record(handoff, {"session": session_id, "at": int(time.time())})


def _update_record(handoff: HandoffFile, fields: dict[str, Any]) -> None:
    """Add ``fields`` to the record of this version of the file (a new version starts a new
    record). Best effort, like every write here."""
    import json
    import time

    path = _deliveries_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(path.with_suffix(".lock")):
            data = _deliveries()
            old = data.get(str(handoff.path))
            same = isinstance(old, dict) and old.get("version") == handoff.version
            record_ = dict(old) if same and isinstance(old, dict) else {}
            record_.update(fields, version=handoff.version)
            record_.setdefault("at", int(time.time()))
            data[str(handoff.path)] = record_
            if len(data) > MAX_DELIVERY_RECORDS:
                newest = sorted(data.items(), key=lambda kv: -int(kv[1].get("at", 0)))
                data = dict(newest[:MAX_DELIVERY_RECORDS])
            atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True))
    except OSError:
        pass


def moved_past(handoff: HandoffFile) -> bool:
    """A session that started after this version was written did substantial work in the same
    working tree (``note_later_work``): the handoff's instructions are behind it."""
    record_ = _deliveries().get(str(handoff.path))
    return (
        isinstance(record_, dict)
        and record_.get("version") == handoff.version
        and bool(record_.get("moved_past_by"))
    )


def note_later_work(state: dict[str, Any], cwd: str | Path, cfg: dict[str, Any]) -> None:
    """At Stop: a substantial session that started after the working tree's handoff was written
    and worked on what it left (``open_work.related``) has moved past it; later sessions are
    told it is stale instead of being given it. Costs nothing for a session that is not
    substantial, one stat and one small read otherwise."""
    import time

    if not substantial(state, cfg):
        return
    found = find_handoff(cwd)
    if found is None or found.mtime >= float(state["started"]) - MTIME_SLACK_S:
        return  # none, or written during this session (its own handoff)
    if moved_past(found):
        return
    from .open_work import plan_part, related, session_text

    text = read_handoff(found)
    if text is not None and not related(plan_part(text), session_text(state)):
        return  # other work: the handoff's is still open (open_work)
    _update_record(found, {"moved_past_by": state["session_id"], "moved_past_at": int(time.time())})
