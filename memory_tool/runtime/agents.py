"""Coding agents other than Claude Code, at the boundary: each agent's hook event names, payload
fields and output format become the one ``HookEvent`` and answer the handlers already give, so
nothing below this layer knows which agent it serves.

What each agent sends and accepts was seen with the real binaries (docs/agents.md): Codex CLI
0.171.0 uses Claude Code's event names and payload keys; Gemini CLI 0.61.0 names the prompt and
stop events BeforeAgent and AfterAgent, sends the model's last answer as ``prompt_response``,
takes context only as JSON ``hookSpecificOutput.additionalContext``, and retries a turn on
``{"decision": "deny", "reason": ...}`` (its form of Claude Code's Stop block).

Stdlib only: this is the hook path.
"""

from __future__ import annotations

import re
from typing import Any

CLAUDE = "claude"
CODEX = "codex"
GEMINI = "gemini"
AGENTS = (CLAUDE, CODEX, GEMINI)
OTHER_AGENTS = (CODEX, GEMINI)

# Each agent's own event name -> the event memory-tool answers. An agent's event that is not
# here is not answered (nothing of ours runs for it).
EVENTS: dict[str, dict[str, str]] = {
    CODEX: {
        "SessionStart": "SessionStart",
        "UserPromptSubmit": "UserPromptSubmit",
        "Stop": "Stop",
        "SessionEnd": "SessionEnd",
        "PreCompact": "PreCompact",
        "PostCompact": "PostCompact",
    },
    GEMINI: {
        "SessionStart": "SessionStart",
        "BeforeAgent": "UserPromptSubmit",
        "AfterAgent": "Stop",
        "SessionEnd": "SessionEnd",
        "PreCompress": "PreCompact",
    },
}

# (A string: re compiles it the first time a Gemini prompt holds one, not at import.)
_HOOK_CONTEXT = r"<hook_context>.*?(?:</hook_context>|\Z)"
# Codex fails a hook whose JSON has a field it does not know (nothing is injected then): only
# these leave this module for it.
_CODEX_KEYS = frozenset(("hookSpecificOutput", "decision", "reason"))


def our_event(agent: str, native: str) -> str:
    """The event memory-tool answers for ``agent``'s ``native`` event ("" when none)."""
    if agent == CLAUDE:
        return native
    return EVENTS.get(agent, {}).get(native, "")


def payload_for(agent: str, payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with the agent's own field names turned into Claude Code's."""
    if agent != GEMINI:
        return payload
    out = dict(payload)
    response = payload.get("prompt_response")
    if isinstance(response, str) and "last_assistant_message" not in payload:
        out["last_assistant_message"] = response
    prompt = payload.get("prompt")
    if isinstance(prompt, str) and "<hook_context>" in prompt:
        # In `gemini -p` the SessionStart context is prepended to the prompt in <hook_context>:
        # that is ours, not the person's words (not a task, never captured).
        out["prompt"] = re.sub(_HOOK_CONTEXT, "", prompt, flags=re.DOTALL).strip()
    return out


def answer_for(agent: str, native: str, result: dict[str, Any]) -> dict[str, Any] | None:
    """A handler's answer (Claude Code's format) in ``agent``'s format, for its ``native`` event;
    None when the agent has no way to take it."""
    if agent == CLAUDE:
        return result
    out: dict[str, Any] = {}
    specific = result.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("additionalContext"):
        out["hookSpecificOutput"] = {
            "hookEventName": native,
            "additionalContext": specific["additionalContext"],
        }
    if result.get("decision") == "block":
        # Claude Code's Stop block: continue with the reason as the next instruction.
        out["decision"] = "deny" if agent == GEMINI else "block"
        out["reason"] = result.get("reason", "")
    if agent == GEMINI and isinstance(result.get("systemMessage"), str):
        out["systemMessage"] = result["systemMessage"]
    if agent == CODEX:
        out = {k: v for k, v in out.items() if k in _CODEX_KEYS}
    return out or None
