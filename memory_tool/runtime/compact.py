"""PreCompact and PostCompact: compaction replaces the conversation with a summary.

Before it (PreCompact), the session's hot state is brought up to date from the transcript, so
nothing of the work before compaction is lost; after it (PostCompact), the summary Claude Code
wrote goes into the session's hot file and cold summary. Neither adds context (PreCompact
cannot); SessionStart with source ``compact`` re-injects the hot state.
"""

from __future__ import annotations

from typing import Any

from ..base.event import HookEvent
from ..tiers import digest
from .stop import spawn_scribe_for


def on_pre_compact(event: HookEvent) -> dict[str, Any] | None:
    digest.update_session(event, scan=True)  # the decisions too, before compaction
    return None


def on_post_compact(event: HookEvent) -> dict[str, Any] | None:
    state = digest.update_session(event, compact_summary=event.compact_summary or None, scan=True)
    if state is not None:
        spawn_scribe_for(state)  # the cold summary carries the compaction summary too
    return None
