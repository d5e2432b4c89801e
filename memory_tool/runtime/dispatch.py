"""The hook front end: stdin to a ``HookEvent``, the event's handler, one JSON answer on stdout.

Every hook fails open: on any error it exits 0, prints nothing and appends the error to
``<state>/logs/hooks.log`` (``base.log``). Output is one JSON document under Claude Code's
10,000-character cap: ``hookSpecificOutput`` with ``hookEventName`` for the events that add
context, Claude Code's own ``{"decision": "block", "reason": ...}`` (or ``systemMessage``) for
Stop. The imports here are the hook path: stdlib, sqlite3 and our light modules only (no click,
YAML or tokenizer unless a memory file changed); each event imports only its own handler's module.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import IO, Any

from ..base.config import MAX_HOOK_OUTPUT_CHARS
from ..base.event import HookEvent
from ..base.log import log_error
from .client import MAX_STDIN_BYTES

Handler = Callable[[HookEvent], "dict[str, Any] | None"]

# Where each event's handler lives (module in this package, function): a hook process imports
# only its own event's module.
HANDLER_MODULES = {
    "SessionStart": ("session_start", "on_session_start"),
    "UserPromptSubmit": ("prompt_submit", "on_prompt"),
    "Stop": ("stop", "on_stop"),
    "SessionEnd": ("stop", "on_session_end"),
    "SubagentStart": ("subagent_start", "on_subagent_start"),
    "PreCompact": ("compact", "on_pre_compact"),
    "PostCompact": ("compact", "on_post_compact"),
    "PreToolUse": ("tool_use", "on_pre_tool_use"),
    "PostToolUse": ("tool_use", "on_post_tool_use"),
    "PostToolUseFailure": ("tool_use", "on_post_tool_use_failure"),
}
HANDLERS: dict[str, Handler] = {}
# Claude Code (2.1.332) makes Claude go on when a Stop or SubagentStop answer carries context:
# eight more model calls a turn. Their answers are Stop's own format (a block, a message to the
# person) or nothing, whichever handler answers.
STOP_EVENTS = ("Stop", "SubagentStop")


def register(event: str, handler: Handler) -> None:
    """Answer ``event`` with ``handler`` (tests and the server use it for events of their own)."""
    HANDLERS[event] = handler


def load_handler(event: str) -> Handler | None:
    handler = HANDLERS.get(event)
    if handler is None and event in HANDLER_MODULES:
        module, name = HANDLER_MODULES[event]
        # __import__ rather than importlib: the hook path pays for no extra module.
        loaded = __import__(f"{__package__}.{module}", fromlist=[name])
        handler = HANDLERS[event] = getattr(loaded, name)
    return handler


def context(event: str, text: str) -> dict[str, Any] | None:
    """The answer that adds ``text`` to the model's context (None when there is nothing)."""
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def run(
    event: str,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    agent: str = "claude",
) -> int:
    """Entry point of every hook. Always returns 0. ``event`` is the agent's own name for it;
    for an agent other than Claude Code, ``runtime.agents`` translates payload and answer."""
    out = stdout or sys.stdout
    if os.environ.get("MEMORY_TOOL_NESTED"):  # a `claude -p` we started ourselves: stay out
        return 0
    from ..base import config

    # A hook says nothing on stderr: problems go to the log (restored after, for a process
    # that runs a hook in-process and is a CLI too).
    said, config.STDERR_NOTES = config.STDERR_NOTES, False
    try:
        raw = (stdin or sys.stdin.buffer).read(MAX_STDIN_BYTES + 1)
        if len(raw) > MAX_STDIN_BYTES:
            log_error(event, f"stdin over {MAX_STDIN_BYTES} bytes: ignored")
            return 0
        try:
            payload = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError as exc:
            log_error(event, f"stdin is not JSON ({exc}): ignored")
            return 0
        if not isinstance(payload, dict):
            log_error(event, "stdin JSON is not an object: ignored")
            return 0
        native = event
        if agent != "claude":
            from . import agents

            event = agents.our_event(agent, native)
            payload = agents.payload_for(agent, payload)
        handler = load_handler(event)
        if handler is None:
            return 0
        from ..base import paths

        with paths.one_call():
            result = handler(HookEvent.from_payload(event, payload, agent=agent))
        if result is not None and agent != "claude":
            result = agents.answer_for(agent, native, result)
        if result is not None and event in STOP_EVENTS and "hookSpecificOutput" in result:
            log_error(event, "a Stop answer carried context (it makes Claude go on): dropped")
            result = {k: v for k, v in result.items() if k != "hookSpecificOutput"} or None
        if result is None:
            return 0
        text = json.dumps(result, ensure_ascii=False)
        if len(text) > MAX_HOOK_OUTPUT_CHARS:
            log_error(event, f"output of {len(text)} characters over the cap: dropped")
            return 0
        out.write(text + "\n")
        out.flush()
    except BaseException as exc:  # noqa: BLE001 - fail open, whatever happened
        log_error(event, exc)
    finally:
        config.STDERR_NOTES = said
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m memory_tool.runtime.dispatch [--agent AGENT] EVENT`` (payload on stdin)."""
    args = sys.argv[1:] if argv is None else argv
    agent = "claude"
    if len(args) >= 2 and args[0] == "--agent":
        agent, args = args[1], args[2:]
    return run(args[0], agent=agent) if args else 0


if __name__ == "__main__":
    sys.exit(main())
