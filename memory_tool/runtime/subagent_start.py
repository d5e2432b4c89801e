"""SubagentStart: the spawn brief (``tiers.spawn``): the project's critical rules, the parent
session's task, decisions and blockers, room recall on the subagent's own task text (kept by
PreToolUse on ``Agent``, ``tool_use``), and cold/wiki memory when that task is about history or
a decision. The context reaches every request of that subagent and none of the main session's
[seen: claude 2.1.332]; what it gave is recorded for the subagent alone (``recall.seen``), so
the subagent's own tool-level recall does not repeat it and the main session may still get it.
"""

from __future__ import annotations

from typing import Any

from ..base.event import HookEvent
from ..base.log import log_error
from .dispatch import context


def on_subagent_start(event: HookEvent) -> dict[str, Any] | None:
    from ..recall.seen import ids_in, remember_ids, seen_ids, seen_key
    from ..store.index import open_index
    from ..tiers.spawn import spawn_brief
    from .tool_use import take_agent_task

    task = take_agent_task(event.session_id, event.agent_type)
    parent = _parent_state(event)
    key = seen_key(event.session_id, event.agent_id)
    with open_index() as idx:
        text = spawn_brief(idx, event, task, parent, exclude=seen_ids(key or None))
    if key:
        remember_ids(key, ids_in(text))
    return context("SubagentStart", text)


def _parent_state(event: HookEvent) -> dict[str, Any] | None:
    """The parent session's hot state, caught up with its transcript (SubagentStart carries the
    parent's session id and transcript)."""
    from ..tiers.digest import update_session

    try:
        return update_session(event)
    except Exception as exc:  # noqa: BLE001 - the hot state is a convenience, the rules are not
        log_error("SubagentStart", exc)
        return None
