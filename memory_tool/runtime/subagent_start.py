"""SubagentStart: a subagent (the Agent tool) loads no auto-memory of its own, so it gets the
project's critical rules, and only those, under a small budget (``recall.wake``). The context
reaches every request of that subagent and none of the main session's [seen: claude 2.1.332]."""

from __future__ import annotations

from typing import Any

from ..base.event import HookEvent
from .dispatch import context


def on_subagent_start(event: HookEvent) -> dict[str, Any] | None:
    from ..recall.wake import build_subagent_brief
    from ..store.index import open_index

    with open_index() as idx:
        text = build_subagent_brief(idx, event.cwd)
    return context("SubagentStart", text)
