"""Incremental, defensive reading of Claude Code session transcripts (JSONL).

The transcript format is internal to Claude Code and changes between versions, so every line
may be garbage, truncated, non-UTF-8 or of an unknown shape: such lines are skipped (or become
``kind="other"`` events), never raised on. Reading is incremental: callers keep the byte
offset :func:`read_new` returns and pass it back next time, so a Stop hook reads only what the
session appended since the previous call.

Event text is raw session text: callers run :func:`memory_tool.base.privacy.sanitize` before
writing any of it to disk.

Stdlib only (runs on hook paths).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable
from typing import Any, BinaryIO, Literal

from ..base.privacy import LazyPattern, strip_injected
from ..base.record import record

__all__ = [
    "DEFAULT_MAX_READ_BYTES",
    "EDIT_TOOLS",
    "Event",
    "EventKind",
    "ReadResult",
    "assistant_text",
    "commands_run",
    "files_edited",
    "parse_line",
    "person_text",
    "read_from",
    "read_new",
    "tool_call_count",
]

EventKind = Literal["user", "assistant", "tool_use", "tool_result", "summary", "compact", "other"]

# At most this many bytes are read per call. Bounds the Stop hook's time and memory on a huge
# backlog (a first read of a long session); the rest is read on the next call. 16 MiB is tens
# of thousands of ordinary lines, far more than one turn appends.
DEFAULT_MAX_READ_BYTES = 16 * 1024 * 1024

# Tool output can be megabytes (a cat of a log); memory capture only ever needs a glimpse of
# it (an error message), so tool_result text is cut to this many characters.
MAX_TOOL_RESULT_CHARS = 4000

# A tool_use input we have no specific summary for is shown as compact JSON cut to this length:
# enough to recognise the call, small enough to keep events light.
MAX_INPUT_SUMMARY_CHARS = 200

# Tools that change files, and the input field holding the path.
EDIT_TOOLS: dict[str, str] = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}

# The input field that best summarises a call of other well-known tools.
_SUMMARY_FIELD: dict[str, str] = {
    **EDIT_TOOLS,
    "Bash": "command",
    "Read": "file_path",
    "Glob": "pattern",
    "Grep": "pattern",
    "WebFetch": "url",
    "WebSearch": "query",
    "Task": "description",
    "Agent": "description",
    "Skill": "skill",
    "SlashCommand": "command",
}


@record(frozen=True)
class Event:
    """One meaningful item of a transcript.

    A transcript line can yield several events (an assistant line with text and tool calls).
    ``text`` is: what the person typed (user; wrappers like ``<command-name>`` and
    ``<system-reminder>`` removed), what Claude wrote (assistant; thinking skipped), the tool
    output (tool_result, cut to MAX_TOOL_RESULT_CHARS), the summary (summary: a ``summary``
    line or the compaction summary Claude Code writes as a user line), or empty.
    """

    kind: EventKind
    text: str = ""
    tool_name: str = ""  # tool_use only
    tool_input: str = ""  # tool_use: file path (edit tools), command (Bash), or short JSON
    tool_use_id: str = ""  # tool_use / tool_result: links a result to its call
    is_error: bool = False  # tool_result only: the tool reported failure
    timestamp: str = ""  # ISO 8601 as written by Claude Code
    session_id: str = ""
    cwd: str = ""
    uuid: str = ""
    is_sidechain: bool = False  # written inside a subagent, not the main conversation
    is_meta: bool = False  # injected by Claude Code (skill bodies, caveats), not typed


@record(frozen=True)
class ReadResult:
    """What :func:`read_from` found.

    ``offset`` is where the next read starts (the start of a trailing partial line, if any).
    ``restarted`` is True when the saved offset no longer fit the file (it shrank, or was
    replaced by another file) and reading started over from byte 0, so ``events`` may repeat
    ones seen before.
    """

    events: list[Event]
    offset: int
    restarted: bool = False


def read_new(path: str | os.PathLike[str], offset: int) -> tuple[list[Event], int]:
    """Events in complete lines from byte ``offset`` on, and the offset to pass next time.

    Seeks to ``offset``; never reads the file from the start unless it has to restart. A
    trailing line without its newline (Claude Code is mid-write) is left for next time. If the
    file shrank below ``offset`` or was replaced (the byte before ``offset`` is not a newline),
    it is read again from 0: use :func:`read_from` to be told. A missing or unreadable file
    yields ``([], offset)``. Never raises on file content.
    """
    result = read_from(path, offset)
    return result.events, result.offset


def read_from(
    path: str | os.PathLike[str], offset: int, *, max_bytes: int = DEFAULT_MAX_READ_BYTES
) -> ReadResult:
    """Like :func:`read_new`, reporting whether it restarted; reads at most ``max_bytes``."""
    offset = max(0, offset)
    max_bytes = max(1, max_bytes)
    try:
        # Regular files only: opening a FIFO blocks, and a device (/dev/zero) never ends.
        if not stat.S_ISREG(os.stat(path).st_mode):
            return ReadResult([], offset, False)
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            restarted = False
            if offset > size:
                restarted = True
            elif offset > 0:
                # Our offsets always sit just after a newline. If that byte is something else
                # the file was replaced by a different one that happens to be long enough.
                f.seek(offset - 1)
                restarted = f.read(1) != b"\n"
            if restarted:
                offset = 0
            f.seek(offset)
            chunk = f.read(max_bytes)
            end = chunk.rfind(b"\n")
            if end < 0:
                if len(chunk) < max_bytes:
                    # Only a partial line (or nothing) after offset: wait for the writer.
                    return ReadResult([], offset, restarted)
                # One line longer than max_bytes: nothing in it is worth that much; skip it.
                return ReadResult([], _skip_line(f, offset + len(chunk)), restarted)
            events = parse_lines(chunk[: end + 1])
            return ReadResult(events, offset + end + 1, restarted)
    except OSError:
        return ReadResult([], offset, False)


def _skip_line(f: BinaryIO, pos: int) -> int:
    """Offset just past the next newline at or after ``pos`` (or ``pos`` if there is none yet)."""
    f.seek(pos)
    while True:
        block = f.read(1024 * 1024)
        if not block:
            return pos  # the long line is still being written: resume from here
        nl = block.find(b"\n")
        if nl >= 0:
            return pos + nl + 1
        pos += len(block)


def parse_lines(data: bytes) -> list[Event]:
    """Events from a block of complete JSONL lines; bad lines are skipped."""
    events: list[Event] = []
    for raw in data.split(b"\n"):
        events.extend(parse_line(raw))
    return events


def parse_line(raw: bytes | str) -> list[Event]:
    """Events from one transcript line; ``[]`` for blank, non-JSON or non-object lines."""
    try:
        if isinstance(raw, bytes):
            # Claude Code writes UTF-8; a stray bad byte costs one character, not the line.
            raw = raw.decode("utf-8", errors="replace")
        raw = raw.strip().lstrip("\ufeff")
        if not raw.startswith("{"):
            return []
        obj = json.loads(raw)
        if not isinstance(obj, dict):
            return []
        return _events_of(obj)
    except Exception:  # malformed data of any shape, incl. RecursionError on deep nesting
        return []


# ---------------------------------------------------------------------------------------------
# Line shapes
# ---------------------------------------------------------------------------------------------


def _str(value: object) -> str:
    """A string field, or "" for anything else; lone surrogates (from JSON escapes) replaced
    so the text can always be encoded to UTF-8 later."""
    if not isinstance(value, str):
        return ""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return value


def _events_of(obj: dict[str, Any]) -> list[Event]:
    common: dict[str, Any] = {
        "timestamp": _str(obj.get("timestamp")),
        "session_id": _str(obj.get("sessionId")),
        "cwd": _str(obj.get("cwd")),
        "uuid": _str(obj.get("uuid")),
        "is_sidechain": obj.get("isSidechain") is True,
        "is_meta": obj.get("isMeta") is True,
    }
    kind = obj.get("type")
    if kind == "response_item" or kind == "session_meta":
        return _codex_events(obj, common)
    if kind in ("user", "gemini") and "message" not in obj and "content" in obj:
        return _gemini_events(obj, common)
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None

    if kind == "user":
        if obj.get("isCompactSummary") is True:
            # After compaction Claude Code writes its summary as a user line: not the person.
            return [Event("summary", _block_text(content), **common)]
        return _user_events(content, common)
    if kind == "assistant":
        return _assistant_events(content, common)
    if kind == "summary":
        return [Event("summary", _str(obj.get("summary")), **common)]
    if kind == "system" and obj.get("subtype") == "compact_boundary":
        return [Event("compact", _str(obj.get("content")), **common)]
    return [Event("other", **common)]


def _user_events(content: object, common: dict[str, Any]) -> list[Event]:
    if isinstance(content, str):
        return _person_event(_str(content), common)
    if not isinstance(content, list):
        return []
    events: list[Event] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            events.extend(_person_event(_str(block.get("text")), common))
        elif btype == "tool_result":
            text = _block_text(block.get("content"))[:MAX_TOOL_RESULT_CHARS]
            events.append(
                Event(
                    "tool_result",
                    text,
                    tool_use_id=_str(block.get("tool_use_id")),
                    is_error=block.get("is_error") is True,
                    **common,
                )
            )
    return events


def _person_event(text: str, common: dict[str, Any]) -> list[Event]:
    # Meta lines keep their raw text (they are Claude Code's, flagged is_meta); the person's
    # own text loses wrappers and, if nothing is left, yields no event at all.
    cleaned = text if common["is_meta"] else _clean_person_text(text)
    return [Event("user", cleaned, **common)] if cleaned else []


def _assistant_events(content: object, common: dict[str, Any]) -> list[Event]:
    if isinstance(content, str):
        text = _str(content)
        return [Event("assistant", text, **common)] if text.strip() else []
    if not isinstance(content, list):
        return []
    events: list[Event] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            text = _str(block.get("text"))
            if text.strip():
                events.append(Event("assistant", text, **common))
        elif btype == "tool_use":
            name = _str(block.get("name"))
            events.append(
                Event(
                    "tool_use",
                    tool_name=name,
                    tool_input=_summarise_input(name, block.get("input")),
                    tool_use_id=_str(block.get("id")),
                    **common,
                )
            )
        # thinking / redacted_thinking / anything else: not part of what Claude said.
    return events


def _codex_events(obj: dict[str, Any], common: dict[str, Any]) -> list[Event]:
    """A line of a Codex CLI rollout file (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``):
    ``session_meta`` (the session's id and folder), then ``response_item`` lines holding what
    the model saw and said: messages (user / assistant / developer), function calls and their
    output. Developer messages (Codex's instructions, our own context) are not the person."""
    payload = obj.get("payload")
    if not isinstance(payload, dict):
        return []
    if obj.get("type") == "session_meta":
        common = {**common, "session_id": _str(payload.get("id")), "cwd": _str(payload.get("cwd"))}
        return [Event("other", **common)]
    ptype = payload.get("type")
    if ptype == "message":
        role = payload.get("role")
        texts = [
            _str(b.get("text"))
            for b in payload.get("content") or []
            if isinstance(b, dict) and b.get("type") in ("input_text", "output_text")
        ]
        if role == "user":
            return [e for t in texts for e in _person_event(t, common)]
        if role == "assistant":
            return [Event("assistant", t, **common) for t in texts if t.strip()]
        return []
    if ptype in ("function_call", "custom_tool_call", "local_shell_call"):
        name = _str(payload.get("name")) or ptype
        raw = payload.get("arguments", payload.get("input", payload.get("action")))
        if name == "apply_patch" and isinstance(raw, str):
            # Codex edits files with a patch: one Edit per file it names.
            return [
                Event(
                    "tool_use",
                    tool_name="Edit",
                    tool_input=_str(m.group(1)).strip(),
                    tool_use_id=_str(payload.get("call_id")),
                    **common,
                )
                for m in _PATCH_FILE.finditer(raw)
            ]
        tool_input: object = raw
        if isinstance(raw, str):
            try:
                tool_input = json.loads(raw)
            except ValueError:
                tool_input = raw
        if name in ("shell", "exec_command", "local_shell_call") and isinstance(tool_input, dict):
            command = tool_input.get("command") or tool_input.get("cmd")
            if isinstance(command, list):
                command = " ".join(str(c) for c in command)
            tool_input = {"command": command}
            name = "Bash"
        return [
            Event(
                "tool_use",
                tool_name=name,
                tool_input=_summarise_input(name, tool_input),
                tool_use_id=_str(payload.get("call_id")),
                **common,
            )
        ]
    if ptype in ("function_call_output", "custom_tool_call_output"):
        output = payload.get("output")
        if isinstance(output, dict):
            output = output.get("content") or output.get("output")
        return [
            Event(
                "tool_result",
                _block_text(output)[:MAX_TOOL_RESULT_CHARS],
                tool_use_id=_str(payload.get("call_id")),
                **common,
            )
        ]
    return [Event("other", **common)]


_PATCH_FILE = LazyPattern(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


def _gemini_events(obj: dict[str, Any], common: dict[str, Any]) -> list[Event]:
    """A line of a Gemini CLI chat log (``~/.gemini/tmp/<project>/chats/session-*.jsonl``):
    ``{"type": "user" | "gemini", "content": <text or parts>, "toolCalls": [...]}``. Metadata
    lines (``{"$set": ...}``, the session header) have no such type and yield nothing."""
    content = obj.get("content")
    text = _block_text(content) if isinstance(content, (str, list)) else ""
    if obj.get("type") == "user":
        return _person_event(text, common)
    events: list[Event] = []
    if text.strip():
        events.append(Event("assistant", text, **common))
    for call in obj.get("toolCalls") or []:
        if not isinstance(call, dict):
            continue
        name = _str(call.get("name"))
        args = call.get("args")
        if name == "run_shell_command":
            name, args = "Bash", {"command": (args or {}).get("command")}
        elif name in ("write_file", "replace") and isinstance(args, dict):
            name, args = ("Write" if name == "write_file" else "Edit"), args
        events.append(
            Event(
                "tool_use",
                tool_name=name,
                tool_input=_summarise_input(name, args),
                tool_use_id=_str(call.get("id")),
                **common,
            )
        )
        result = call.get("result")
        if result is not None:
            events.append(
                Event(
                    "tool_result",
                    _block_text(result)[:MAX_TOOL_RESULT_CHARS],
                    tool_use_id=_str(call.get("id")),
                    is_error=call.get("status") == "error",
                    **common,
                )
            )
    return events


def _block_text(content: object) -> str:
    """Text of a string or of a list of content blocks (images and the like skipped)."""
    if isinstance(content, str):
        return _str(content)
    if not isinstance(content, list):
        return ""
    # Gemini's parts are {"text": ...} with no type.
    parts = [
        _str(b.get("text"))
        for b in content
        if isinstance(b, dict) and b.get("type", "text") == "text"
    ]
    return "\n".join(p for p in parts if p)


def _summarise_input(name: str, tool_input: object) -> str:
    if not isinstance(tool_input, dict):
        return ""
    field = _SUMMARY_FIELD.get(name)
    if field is not None:
        return _str(tool_input.get(field))
    try:
        summary = json.dumps(tool_input, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return ""
    return _str(summary[:MAX_INPUT_SUMMARY_CHARS])


# Whole blocks Claude Code wraps around things the person did not type: slash-command echoes,
# local command output, reminders, hook/task notifications, our own injected memory.
_WRAPPER_TAGS = (
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "system-reminder",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "task-notification",
    "user-prompt-submit-hook",
    # Codex CLI and Gemini CLI put these into the first user turns themselves.
    "environment_context",
    "user_instructions",
    "skills_instructions",
    "session_context",
    "hook_context",
)
_WRAPPER_BLOCK = LazyPattern(
    r"<(" + "|".join(_WRAPPER_TAGS) + r")(?![\w-])[^>]*>.*?(?:</\1\s*>|\Z)", re.DOTALL
)
# Lines Claude Code writes on the person's behalf.
_NOT_TYPED = LazyPattern(
    r"^(?:\[Request interrupted by user[^\]]*\]"
    r"|Caveat: The messages below were generated by the user while running local commands.*)$",
    re.MULTILINE,
)


def _clean_person_text(text: str) -> str:
    if "<" in text:
        text = strip_injected(_WRAPPER_BLOCK.sub("", text))
    if "[Request interrupted" in text or "Caveat:" in text:
        text = _NOT_TYPED.sub("", text)
    return text.strip()


# ---------------------------------------------------------------------------------------------
# Helpers over events
# ---------------------------------------------------------------------------------------------


def person_text(events: Iterable[Event], *, include_sidechain: bool = False) -> list[str]:
    """What the person typed, in order: user events minus meta lines and (by default)
    subagent prompts, which Claude wrote, not the person."""
    return [
        e.text
        for e in events
        if e.kind == "user" and not e.is_meta and (include_sidechain or not e.is_sidechain)
    ]


def assistant_text(events: Iterable[Event], *, include_sidechain: bool = False) -> list[str]:
    """What Claude wrote in the main conversation (thinking excluded), in order."""
    return [
        e.text
        for e in events
        if e.kind == "assistant" and (include_sidechain or not e.is_sidechain)
    ]


def files_edited(events: Iterable[Event]) -> list[str]:
    """Paths changed by Write/Edit/MultiEdit/NotebookEdit, first-edit order, each once.

    Subagent edits count (the files changed all the same); a call whose result reported an
    error (e.g. Edit's old_string not found) changed nothing and is left out.
    """
    events = list(events)
    failed = {e.tool_use_id for e in events if e.kind == "tool_result" and e.is_error}
    seen: dict[str, None] = {}
    for e in events:
        if (
            e.kind == "tool_use"
            and e.tool_name in EDIT_TOOLS
            and e.tool_input
            and not (e.tool_use_id and e.tool_use_id in failed)
        ):
            seen.setdefault(e.tool_input, None)
    return list(seen)


def commands_run(events: Iterable[Event]) -> list[str]:
    """Bash commands in the order they were issued (repeats kept)."""
    return [e.tool_input for e in events if e.kind == "tool_use" and e.tool_name == "Bash"]


def tool_call_count(events: Iterable[Event]) -> int:
    """Number of tool calls, subagents' included."""
    return sum(1 for e in events if e.kind == "tool_use")
