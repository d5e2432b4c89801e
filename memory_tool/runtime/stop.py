"""Stop and SessionEnd: keep the hot file current, compress the session into its cold summary,
and ask for a handoff once when a substantial session is about to stop without one.

The cheap part (reading the new transcript
lines, the hot file, the handoff decision) runs in the hook; the Scribe (cold summary, inbox,
rolling window) runs in a detached process, since SessionEnd hooks share a 1.5 s budget.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from ..base.event import HookEvent
from ..base.log import log_error
from ..sync.spawn import spawn_sync
from ..tiers import digest


def spawn_scribe(session_id: str, *, final: bool = False) -> None:
    """Run the Scribe without making the hook wait: a detached process (inline under
    MEMORY_TOOL_NO_BACKGROUND, as in tests). The hook itself never imports the Scribe's
    heavier modules (index, YAML, tokenizer)."""
    if os.environ.get("MEMORY_TOOL_NO_BACKGROUND"):
        from ..tiers.scribe import run

        run(session_id, final=final)
        return
    args = [sys.executable, "-m", "memory_tool.tiers.scribe", "--session", session_id]
    if final:
        args.append("--final")
    subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


def spawn_scribe_for(state: dict[str, Any]) -> None:
    """Update the session's cold summary in the background when its state changed."""
    _scribe(state, final=False)


def _scribe(state: dict[str, Any], *, final: bool) -> None:
    if final or state["generation"] != state.get("scribed_generation"):
        try:
            spawn_scribe(state["session_id"], final=final)
        except Exception as exc:  # noqa: BLE001 - a summary that fails must not cost the stop
            log_error("scribe", exc)


def on_stop(event: HookEvent) -> dict[str, Any] | None:
    if event.agent_id:  # a subagent's stop: the main session is not ending
        return None
    # The Stop hook's budget reads the turn's signals, so the hot file lists its decisions.
    state = digest.update_session(event, final=event.last_assistant_message or None, scan=True)
    if state is None:
        return None
    from ..base.config import load_config
    from ..tiers.handoff import decide, note_later_work

    cfg = load_config()
    note_later_work(state, event.cwd, cfg)  # an older handoff of this tree is behind it now
    result = decide(event, state, cfg)
    _scribe(state, final=False)
    return result


def on_session_end(event: HookEvent) -> dict[str, Any] | None:
    state = digest.update_session(event)
    session = state["session_id"] if state is not None else ""
    # With sync on, one detached process runs the Scribe and then the sync (so the session's
    # cold summary travels too); otherwise the Scribe alone.
    if spawn_sync("end", cwd=event.cwd, session=session):
        return None
    if state is not None:
        _scribe(state, final=True)
    return None
