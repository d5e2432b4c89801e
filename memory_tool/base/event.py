"""A hook call as the library sees it: Claude Code's JSON payload, parsed once at the boundary.

The hook front end (``runtime.dispatch``) turns stdin into a ``HookEvent``; everything below it
takes the event or plain values, never the raw payload dict, so a field Claude Code renames or
sends with the wrong type is dealt with here, once. Field names follow the payload's keys (see
docs/reliability.md for the events and what each carries).
"""

from __future__ import annotations

import os
from typing import Any

from .record import record


@record(frozen=True)
class HookEvent:
    """One hook call. Text fields are "" when the payload lacks them or gives another type."""

    name: str
    session_id: str = ""
    transcript_path: str = ""
    # The session's working directory, resolved (``resolve_cwd``): always an existing folder.
    cwd: str = ""
    prompt: str = ""
    # SessionStart: startup | resume | clear | compact | fork.
    source: str = ""
    # Set inside subagents (SubagentStart, and a subagent's own Stop).
    agent_id: str = ""
    agent_type: str = ""
    # Stop: true while Claude continues because a Stop hook blocked.
    stop_hook_active: bool = False
    last_assistant_message: str = ""
    # SessionEnd: why the session ended.
    reason: str = ""
    # PreCompact / PostCompact: manual | auto; PostCompact also carries the summary it wrote.
    trigger: str = ""
    compact_summary: str = ""
    # Which coding agent sent it: claude | codex | gemini (``runtime.agents``).
    agent: str = "claude"

    @classmethod
    def from_payload(cls, name: str, payload: dict[str, Any], agent: str = "claude") -> HookEvent:
        def text(key: str) -> str:
            value = payload.get(key)
            return value if isinstance(value, str) else ""

        return cls(
            name=name or text("hook_event_name"),
            session_id=text("session_id"),
            transcript_path=text("transcript_path"),
            cwd=resolve_cwd(text("cwd")),
            prompt=text("prompt"),
            source=text("source"),
            agent_id=text("agent_id"),
            agent_type=text("agent_type"),
            stop_hook_active=payload.get("stop_hook_active") is True,
            last_assistant_message=text("last_assistant_message"),
            reason=text("reason"),
            trigger=text("trigger"),
            compact_summary=text("compact_summary"),
            agent=agent,
        )

    def with_prompt(self, prompt: str) -> HookEvent:
        """The same call with another prompt (a huge prompt is clipped before it is read)."""
        fields = {n: getattr(self, n) for n in self.__record_fields__}  # type: ignore[attr-defined]
        fields["prompt"] = prompt
        return HookEvent(**fields)


def resolve_cwd(cwd: str) -> str:
    """The session's working directory: the payload's cwd, else $CLAUDE_PROJECT_DIR, else ours."""
    if cwd and os.path.isdir(cwd):
        return cwd
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    return env if env and os.path.isdir(env) else os.getcwd()
