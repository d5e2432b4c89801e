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

# Tools whose input names the one file they read or change, and the input key that names it.
FILE_TOOLS = {
    "Read": "file_path",
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
# Tools whose result lists files (Grep in files mode, Glob): the first ones are read. A search
# that matched 400 files names none of them in particular.
LISTING_TOOLS = ("Grep", "Glob")
MAX_LISTED_PATHS = 20
# A failed command's output is read by its head and tail only: the command and the first error
# are at the top, the summary line ("1 failed", the exception) at the bottom, and a 30 MB log
# read whole would cost the hook seconds.
ERROR_HEAD_CHARS = 4_000
ERROR_TAIL_CHARS = 4_000
# An Agent call's task text, as far as recall reads it (the classifier reads less).
AGENT_PROMPT_MAX_CHARS = 8_000
# A path longer than this is no file name (Linux allows 4,096 bytes).
MAX_PATH_CHARS = 4_096


def clip_middle(text: str, head: int, tail: int) -> str:
    """``text`` with its middle cut out when it is longer than ``head + tail`` characters."""
    if len(text) <= head + tail:
        return text
    return text[:head] + "\n[...]\n" + text[-tail:]


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
    # PreToolUse / PostToolUse / PostToolUseFailure: the tool, and what recall reads of it.
    tool_name: str = ""
    tool_use_id: str = ""
    # The files the call names (a Read's file, a Glob's first results), as given.
    tool_paths: tuple[str, ...] = ()
    # Bash: the command; PostToolUseFailure: the error (head and tail of a long one).
    tool_command: str = ""
    tool_error: str = ""
    # Agent (Task): the subagent's task text and type.
    tool_prompt: str = ""
    tool_subagent_type: str = ""
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
            **_tool_fields(payload),
            agent=agent,
        )

    def with_prompt(self, prompt: str) -> HookEvent:
        """The same call with another prompt (a huge prompt is clipped before it is read)."""
        fields = {n: getattr(self, n) for n in self.__record_fields__}  # type: ignore[attr-defined]
        fields["prompt"] = prompt
        return HookEvent(**fields)


def _tool_fields(payload: dict[str, Any]) -> dict[str, Any]:
    name = payload.get("tool_name")
    if not isinstance(name, str) or not name:
        return {}
    raw_input = payload.get("tool_input")
    tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}

    def field_text(key: str) -> str:
        value = tool_input.get(key)
        return value if isinstance(value, str) else ""

    found: list[str] = []
    key = FILE_TOOLS.get(name)
    if key and 0 < len(field_text(key)) <= MAX_PATH_CHARS:
        found.append(field_text(key))
    if name in LISTING_TOOLS:
        response = payload.get("tool_response")
        names = response.get("filenames") if isinstance(response, dict) else None
        for item in names if isinstance(names, list) else ():
            if len(found) >= MAX_LISTED_PATHS:
                break
            if isinstance(item, str) and 0 < len(item) <= MAX_PATH_CHARS and item not in found:
                found.append(item)
    error = payload.get("error")
    use_id = payload.get("tool_use_id")
    prompt = field_text("prompt") if name in ("Agent", "Task") else ""
    return {
        "tool_name": name,
        "tool_use_id": use_id if isinstance(use_id, str) else "",
        "tool_paths": tuple(found),
        "tool_command": field_text("command")[:MAX_PATH_CHARS] if name == "Bash" else "",
        "tool_error": clip_middle(error, ERROR_HEAD_CHARS, ERROR_TAIL_CHARS)
        if isinstance(error, str)
        else "",
        "tool_prompt": prompt[:AGENT_PROMPT_MAX_CHARS],
        "tool_subagent_type": field_text("subagent_type") if prompt else "",
    }


TASK_NOTIFICATION_TAG = "<task-notification>"


def is_task_notification(prompt: str) -> bool:
    """Whether a UserPromptSubmit prompt is Claude Code's ``<task-notification>`` (a background
    subagent's result coming back), not the user's words: it sets no task, is not captured and
    is not classified."""
    return prompt.lstrip().startswith(TASK_NOTIFICATION_TAG)


def resolve_cwd(cwd: str) -> str:
    """The session's working directory: the payload's cwd, else $CLAUDE_PROJECT_DIR, else ours."""
    if cwd and os.path.isdir(cwd):
        return cwd
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    return env if env and os.path.isdir(env) else os.getcwd()
