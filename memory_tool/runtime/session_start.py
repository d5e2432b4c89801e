"""SessionStart: the wake-up brief (L1 identity + L2 critical facts), with the session's hot
state on resume, fork or after compaction, the working tree's handoff when this session is the
first to start after it was written (or resumes), and one line when memory needs attention.

The brief is cached per project, day and index generation, so the common start-up needs no
ranking, no entry objects and no tokenizer. Also starts, without waiting for either, the
background refresh (at most every ``FULL_REFRESH_INTERVAL_S``) and the resident hook server.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..base import paths
from ..base.event import HookEvent
from ..sync.spawn import spawn_sync
from .background import spawn_background_refresh
from .client import SERVER_READY_WAIT_S, ensure_server
from .dispatch import context

# Sources after which the session continues a conversation whose hot state should come back
# (a fork continues its parent's conversation under a new id).
RESUMING_SOURCES = ("resume", "compact", "fork")


def on_session_start(event: HookEvent) -> dict[str, Any] | None:
    from ..store.index import FULL_REFRESH_INTERVAL_S, open_index

    cwd = event.cwd
    source = event.source or "startup"
    resuming = source in RESUMING_SOURCES
    from ..recall.seen import forget_old_sessions, ids_in, pending_ids, remember_ids, seen_ids

    # What the conversation already holds is not given again (docs/tiers.md, "What the client
    # keeps"): on resume, everything the session was given; after compaction, only what
    # SessionStart gave since the last prompt (the client keeps that, and drops the rest).
    if source in ("resume", "fork"):
        seen = seen_ids(event.session_id)
    elif source == "compact":
        seen = pending_ids(event.session_id)
    else:
        seen = set()
    idx = open_index()
    try:
        idx.refresh_for_wake(cwd)
        handoff = _handoff_units(idx, cwd, first_only=not resuming, seen=seen)
        # What auto-capture saved since the last brief: said once, by the next new session.
        learned, announced = ([], []) if resuming else _learned_units(idx, cwd)
        # The brief is a function of the index, the config and the day: cache it so the
        # common start-up needs no ranking, no entry objects and no tokenizer.
        loaded = index_loaded(event)
        key = None if resuming or handoff or announced else _brief_key(idx, cwd, loaded)
        text = idx.derived_get(key) if key else None
        if text is None:
            from ..hygiene.wake_line import wake_units
            from ..recall.wake import build_brief

            extra: list[Any] = []
            if resuming:
                # The latest cold summary does not repeat a fact the brief carries: the brief's
                # own facts first (the same brief, without the sections it is about to get).
                from ..recall.seen import fact_keys

                carried = fact_keys(build_brief(idx, cwd, index_loaded=loaded).text)
                extra += _resume_units(idx, event, source, seen | carried)
            extra += handoff
            extra += learned
            extra += wake_units(idx, cwd)  # one line when memory needs attention
            extra += _http_units(idx)  # one line when the HTTP hooks cannot reach the server
            brief = build_brief(idx, cwd, extra=extra, index_loaded=loaded)
            text = brief.text
            given = _deliver(brief.extra_units, event.session_id)
            if announced and all(u in brief.extra_units for u in learned):
                from ..tiers.capture import take_learned

                take_learned(paths.project_key(cwd), announced)
            if key:
                idx.derived_put(key, text)
        else:
            given = []
        last = int(idx.meta("last_full_refresh", "0") or 0)
    finally:
        idx.close()

    if event.session_id:  # L3 will not repeat what the brief holds, nor a cold block a fact
        from ..recall.seen import fact_keys

        held = ids_in(text) + given + sorted(fact_keys(text))
        if source == "compact":
            from ..recall.seen import reset_ids

            reset_ids(event.session_id, held)
        else:
            remember_ids(event.session_id, held, pending=True)
    if time.time() - last > FULL_REFRESH_INTERVAL_S:
        forget_old_sessions()
        spawn_background_refresh()
    if os.environ.get("CLAUDE_PLUGIN_ROOT"):
        _plugin_secret()
    ensure_server(event.session_id, SERVER_READY_WAIT_S)  # for the session's HTTP hooks
    spawn_sync("start", cwd=cwd)  # detached: a teammate's or another machine's new memory
    return context("SessionStart", text)


def _plugin_secret() -> None:
    """The plugin's HTTP hooks send the secret settings.json holds: give it one if it has none
    (its HTTP hooks get 403 until the next session, which reads it at start)."""
    from .hook_http import read_secret

    if read_secret(paths.settings_file()) is None:
        from .settings import add_secret

        add_secret()


def index_loaded(event: HookEvent) -> bool:
    """Whether the agent loads the project's MEMORY.md itself: Claude Code does, unless its
    auto-memory is off (``CLAUDE_CODE_DISABLE_AUTO_MEMORY``, or ``autoMemoryEnabled: false`` in
    the user's or the project's settings); Codex and Gemini never do."""
    if event.agent != "claude" or os.environ.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "") not in (
        "",
        "0",
        "false",
    ):
        return False
    import json

    project = os.path.join(event.cwd, ".claude")
    for path in (
        paths.settings_file(),
        os.path.join(project, "settings.json"),
        os.path.join(project, "settings.local.json"),
    ):
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("autoMemoryEnabled") is False:
            return False
    return True


def _http_units(idx: Any) -> list[Any]:
    from .http_status import brief_units

    try:
        units: list[Any] = brief_units(idx)
    except Exception as exc:  # noqa: BLE001 - a status file must not cost the brief
        from ..base.log import log_error

        log_error("SessionStart", exc)
        return []
    return units


def _brief_key(idx: Any, cwd: str, index_loaded: bool = True) -> str:
    from pathlib import Path

    from ..base.config import config_path, today
    from ..store.rooms import instincts_files, rooms_yaml
    from ..store.tree import MEMORY_INDEX_NAME, claude_folder_of
    from .http_status import status_path as http_status_path

    project = paths.project_key(cwd)
    # config.yaml, and what the hygiene line checks beside the index: the project's MEMORY.md,
    # rooms.yaml and the instincts file (a broken one is named there).
    memory_md = claude_folder_of(cwd).path / MEMORY_INDEX_NAME
    stamps = []
    inbox = paths.palace_dir("inbox")  # the hygiene line counts what waits there
    # install.json too: it names the command the brief tells Claude to run.
    # run/http.json: what the server found of its HTTP door (the brief's line about it).
    status = Path(http_status_path())
    stamped = (config_path(), memory_md, rooms_yaml(), *instincts_files(), inbox, status)
    for path in (*stamped, paths.install_record()):
        try:
            st = os.stat(path)
            stamps.append(f"{st.st_mtime_ns}:{st.st_size}")
        except OSError:
            stamps.append("-")
    loaded = "i" if index_loaded else "-"
    return f"brief|{project}|{loaded}|{today().isoformat()}|{idx.generation}|{'|'.join(stamps)}"


def _learned_units(idx: Any, cwd: str) -> tuple[list[Any], list[str]]:
    path = paths.palace_dir("capture") / "learned" / f"{paths.project_key(cwd)}.jsonl"
    try:
        if os.stat(path).st_size == 0:
            return [], []
    except OSError:
        return [], []  # nothing captured: the capture module is not even imported
    from ..tiers.capture import learned_units

    units, ids = learned_units(idx, paths.project_key(cwd))
    return list(units), ids


def _handoff_units(idx: Any, cwd: str, *, first_only: bool, seen: set[str]) -> list[Any]:
    from ..tiers.handoff import find_handoff

    if find_handoff(cwd) is None:  # one stat: the tier modules load only when there is one
        return []
    from ..tiers.inject import handoff_units

    units: list[Any] = handoff_units(idx, cwd, first_only=first_only, exclude=seen)
    return units


def _deliver(units: list[Any], session_id: str) -> list[str]:
    """Record the handoff as given (if the brief kept it) and return the markers of what the
    tier units handed over (the handoff, the hot state)."""
    if not any(u.given for u in units):
        return []
    from ..tiers.inject import deliver

    given: list[str] = deliver(units, session_id)
    return given


def _resume_units(idx: Any, event: HookEvent, source: str, seen: set[str]) -> list[Any]:
    """On resume or after compaction the session's hot state comes back (tiers), unless the
    conversation holds it (``seen``)."""
    from ..tiers.inject import resume_units

    units: list[Any] = resume_units(idx, event, source, exclude=seen)
    return units
