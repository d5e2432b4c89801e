"""The session digest: what the hooks fold into a session's state, reading only what the
transcript gained since the last update (an offset is stored), plus the prompt and final message
their payload carries.

The state holds what the hot file shows (current task, decisions, last actions, open blockers;
see ``hot``) and the material the Scribe (``scribe.py``) turns into a cold summary: files
changed, commands that mattered, one line per turn, tagged lines, corrections. Updated by the
UserPromptSubmit (``on_prompt``) and Stop (``update_session``) hooks.

Hook path: stdlib plus our light modules.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import time
from typing import Any

from ..base import paths
from ..base.event import HookEvent, is_task_notification
from ..base.privacy import LazyPattern, sanitize, strip_injected
from ..store.transcript import EDIT_TOOLS, Event, read_from
from .hot import (
    HOT_ACTIONS,
    HOT_BLOCKERS,
    HOT_ITEM_MAX_CHARS,
    STATE_VERSION,
    load_state,
    one_line,
    save_state,
    session_lock,
    state_path,
    write_hot_file,
)
from .said import Signal
from .signals import SCAN_MAX_CHARS, TAG_HINTS, tag_signals, user_signals
from .situations import is_ack, situation_of

# The digest is bounded so the state file stays small.
# The first prompts say what the session was for, the last ones what it is doing now.
KEEP_FIRST_PROMPTS = 3
KEEP_LAST_PROMPTS = 12
PROMPT_MAX_CHARS = 600
# Secrets are redacted in this much text past the cut, so one that straddles it is still
# recognised whole (an RSA-4096 PEM key is about 3.3 KB); redacting a pasted 6 MB log whole
# cost the prompt hook 3.7 s.
REDACT_MARGIN_CHARS = 8_192
MAX_NOTES = 60
# What the person and Claude said waits here, sanitised, until the Scribe (detached) reads the
# signals in it: the regular expressions that find and clean them cost a fresh hook process
# 15-30 ms to compile, which the prompt path must not pay. A prompt whose prose is longer than
# signals.PROSE_MAX_CHARS holds none, so this much of each is enough; the queue is bounded for a
# Scribe that has not run for a long while.
UNSCANNED_MAX_CHARS = 8_000
MAX_UNSCANNED = 200
MAX_FILES = 300
MAX_COMMANDS = 60
COMMAND_MAX_CHARS = 300
ERROR_MAX_CHARS = 200
FINAL_MAX_CHARS = 4000
# The summary Claude Code writes at compaction (PostCompact): kept for the hot file and the cold
# summary, where it stands for the part of the conversation that compaction replaced.
COMPACT_SUMMARY_MAX_CHARS = 2000
# One line per turn (what was asked, how Claude's last message of the turn began) lets the cold
# summary grow toward a tenth of a long session and answer "what have we tried before?".
# The first turns set the scene, the last ones hold the state: keep both ends.
KEEP_FIRST_TURNS = 5
KEEP_LAST_TURNS = 35
TURN_ASK_MAX_CHARS = 200
TURN_ANSWER_MAX_CHARS = 300
# Tool calls whose result has not been read yet (a result can land in the next read).
MAX_PENDING = 64


def new_state(session_id: str, cwd: str, transcript_path: str) -> dict[str, Any]:
    now = time.time()
    return {
        "version": STATE_VERSION,
        "session_id": session_id,
        "project": paths.project_key(cwd),
        "cwd": str(paths.project_root(cwd)),
        "launch_cwd": cwd,
        "transcript_path": transcript_path,
        "created_at": now,
        "started": now,
        "first_ts": "",
        "last_ts": "",
        "updated": now,
        "offset": 0,
        "generation": 0,
        "task": "",
        "first_task": "",
        "prompts": [],
        "turns": [],
        "prompt_count": 0,
        "notes": [],
        "actions": [],
        "blockers": {},
        "files": [],
        "commands": [],
        "tool_calls": 0,
        "pending": {},
        "final": "",
        "text_chars": 0,
        "scribed_generation": -1,
        "cold_path": "",
    }


def epoch(ts: str) -> float | None:
    if not ts:
        return None
    try:
        return dt.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _clean(text: str, limit: int) -> str:
    """What may be stored: our injected text removed, private spans and secrets gone."""
    return sanitize(strip_injected(text)[: limit + REDACT_MARGIN_CHARS]).strip()[:limit]


# A signal's note kind: the person's rules and corrections (and the hints that look like them)
# are the session's corrections, in the hot file and the cold summary alike; ``signal`` keeps
# which they are, for capture.
_NOTE_KIND = {
    "rule": "correction",
    "heuristic": "correction",
    "change": "correction",
    "statement": "correction",
}


def _add_note(state: dict[str, Any], sig: Signal, role: str) -> bool:
    """Keep one signal (already sanitised) in the state's notes, once per text."""
    kind = _NOTE_KIND.get(sig.kind, sig.kind)
    notes: list[dict[str, str]] = state["notes"]
    if any(n["text"] == sig.text and n["kind"] == kind for n in notes):
        return False
    notes.append(
        {"kind": kind, "text": sig.text, "role": role, "signal": sig.kind, "line": sig.line}
    )
    del notes[:-MAX_NOTES]
    return True


def _queue(state: dict[str, Any], role: str, text: str) -> None:
    """Keep what was said for ``scan_signals``: the person's text as given (sanitised already),
    Claude's only when it holds a tag (a substring test, nothing compiled)."""
    if role == "assistant":
        if not any(h in text.lower() for h in TAG_HINTS):
            return
        text = _clean(text, UNSCANNED_MAX_CHARS)
    kept = text.strip()
    if not kept:
        return
    queue: list[dict[str, str]] = state.setdefault("unscanned", [])
    if any(q["text"] == kept and q["role"] == role for q in queue[-4:]):
        return  # the same text from the hook payload and the transcript
    queue.append({"role": role, "text": kept})
    del queue[:-MAX_UNSCANNED]


def scan_signals(state: dict[str, Any]) -> bool:
    """Read the signals of what was said since the last scan into the session's notes (the
    Scribe does it, off the hook path); True when the state changed."""
    queue = state.get("unscanned") or []
    if not queue:
        return False
    from ..base.config import load_config

    model = load_config().get("capture", {}).get("statements", True) is not False
    for item in queue:
        if item.get("role") == "user":
            found = user_signals(item["text"], statements=model) + tag_signals(item["text"])
        else:
            found = tag_signals(item["text"])
        for sig in found:
            _add_note(state, sig, item.get("role", "user"))
    state["unscanned"] = []
    return True


def _is_task(prompt: str) -> bool:
    """A prompt that sets the session's task: not "yes", not "continue", and not a closing
    ("thanks, works now", "ship it", "going with bigserial") that ends the task before it."""
    from ..recall.followup import is_closing

    words = prompt.split()
    if len(words) < 2 or is_ack(prompt) or situation_of(prompt) == "resume":
        return False
    return not is_closing(prompt)


def _record_prompt(state: dict[str, Any], prompt: str) -> None:
    if is_task_notification(prompt):  # a subagent's result, not what the user asked
        return
    # One redaction pass for both copies: the prompt as kept, and the longer one for the Scribe
    # (the same text up to the cut, unless the prompt is longer than the redaction margin).
    full = _clean(prompt, UNSCANNED_MAX_CHARS)
    if len(prompt) <= PROMPT_MAX_CHARS + REDACT_MARGIN_CHARS:
        text = full[:PROMPT_MAX_CHARS]
    else:
        text = _clean(prompt, PROMPT_MAX_CHARS)
    if not text:
        return
    prompts: list[str] = state["prompts"]
    if text in prompts[-2:]:  # the same prompt, seen from the hook payload and the transcript
        return
    state["prompt_count"] += 1
    prompts.append(text)
    if len(prompts) > KEEP_FIRST_PROMPTS + KEEP_LAST_PROMPTS:
        del prompts[KEEP_FIRST_PROMPTS]
    turns: list[dict[str, str]] = state.setdefault("turns", [])
    turns.append({"ask": one_line(text, TURN_ASK_MAX_CHARS), "answer": ""})
    if len(turns) > KEEP_FIRST_TURNS + KEEP_LAST_TURNS:
        del turns[KEEP_FIRST_TURNS]
    if _is_task(text):
        state["task"] = text
        if not state["first_task"]:
            state["first_task"] = text
    # The prompt as typed (the cut copy above could end mid-rule), for the Scribe.
    if len(prompt) <= SCAN_MAX_CHARS:  # longer is a paste: no rule in it is taken
        _queue(state, "user", full)


def short_path(path: str, *roots: str) -> str:
    """A path relative to the project (or the folder the session ran in) when it is inside."""
    for root in roots:
        if root and path.startswith(root.rstrip("/") + "/"):
            return path[len(root.rstrip("/")) + 1 :]
    return path


def _push_action(state: dict[str, Any], text: str) -> None:
    actions: list[str] = state["actions"]
    actions.append(one_line(sanitize(text), HOT_ITEM_MAX_CHARS))
    del actions[:-HOT_ACTIONS]


# The line of a failure's output that names it (pytest's "E   ImportError: ...", "error: ...").
_ERROR_LINE = LazyPattern(
    r"\b(\w*Error|\w*Exception|FAILED|FAIL|fatal|error|panic|denied|not found)\b", re.IGNORECASE
)
_DECORATION = LazyPattern(r"^[\s=_*#.-]*(FAILURES|ERRORS)?[\s=_*#.-]*$|^[FE.sx]+$")


def _first_error_line(text: str) -> str:
    """The most telling line of a failed command's output."""
    text = re.sub(r"</?tool_use_error>", "", text)
    lines = [x.strip() for x in text.splitlines() if x.strip() and not _DECORATION.match(x)]
    named = [x for x in lines if _ERROR_LINE.search(x)]
    best = (named or lines or ["failed"])[0]
    return one_line(sanitize(re.sub(r"^E\s+", "", best)), ERROR_MAX_CHARS)


# `env -u X`, `FOO=1`: prefixes that change how a command runs, not which command it is.
_ENV_PREFIX = LazyPattern(r"^(?:env(?:\s+-[iu](?:\s+[A-Za-z_]\w*)?)*\s+|[A-Za-z_]\w*=\S*\s+)+")


def _command_key(cmd: str) -> str:
    return _ENV_PREFIX.sub("", cmd.strip())


def _clears(success: str, failed: str) -> bool:
    """A successful command settles an earlier failure: the same command (up to env
    prefixes), or one containing the other (`pytest x` then `env -u A pytest x -q`)."""
    a, b = _command_key(success), _command_key(failed)
    return bool(a and b) and (a == b or a in b or b in a)


def _record_command(state: dict[str, Any], cmd: str, ok: bool, error: str) -> None:
    commands: list[dict[str, Any]] = state["commands"]
    found = next((c for c in commands if c["cmd"] == cmd), None)
    if found is None:
        found = {"cmd": cmd, "runs": 0, "failed": 0, "ok": False, "error": ""}
    else:
        commands.remove(found)
    commands.append(found)
    del commands[:-MAX_COMMANDS]
    found["runs"] += 1
    found["ok"] = ok
    if not ok:
        found["failed"] += 1
        found["error"] = error
        state["blockers"][cmd] = error
        while len(state["blockers"]) > HOT_BLOCKERS:
            del state["blockers"][next(iter(state["blockers"]))]
    else:
        for failed in [b for b in state["blockers"] if _clears(cmd, b)]:
            del state["blockers"][failed]
            earlier = next((c for c in commands if c["cmd"] == failed), None)
            if earlier is not None and failed != cmd:
                earlier["fixed_by"] = cmd


def _apply(state: dict[str, Any], e: Event) -> bool:
    """Fold one transcript event into the state; True when something changed."""
    if e.cwd and not state.get("event_cwd"):
        state["event_cwd"] = e.cwd
    if e.timestamp:
        if not state["first_ts"]:
            state["first_ts"] = e.timestamp
            first = epoch(e.timestamp)
            if first is not None:
                state["started"] = min(state["started"], first)
        state["last_ts"] = e.timestamp
    roots = (state["cwd"], state.get("event_cwd") or "")
    if e.kind == "user" and not e.is_meta and not e.is_sidechain:
        state["text_chars"] += len(e.text)
        _record_prompt(state, e.text)
        return True
    if e.kind == "assistant" and not e.is_sidechain:
        text = strip_injected(e.text)
        state["text_chars"] += len(text)
        state["final"] = _clean(text, FINAL_MAX_CHARS)
        turns = state.setdefault("turns", [])
        if turns and state["final"]:
            turns[-1]["answer"] = one_line(state["final"], TURN_ANSWER_MAX_CHARS)
        _queue(state, "assistant", text)
        return True
    if e.kind == "tool_use":
        state["tool_calls"] += 1
        state["text_chars"] += len(e.tool_input)
        pending: dict[str, list[str]] = state["pending"]
        if e.tool_use_id:
            pending[e.tool_use_id] = [e.tool_name, _clean(e.tool_input, COMMAND_MAX_CHARS)]
            while len(pending) > MAX_PENDING:
                del pending[next(iter(pending))]
        if e.tool_name in ("Task", "Agent") and e.tool_input and not e.is_sidechain:
            _push_action(state, f"delegated to a subagent: {e.tool_input}")
        return True
    if e.kind == "tool_result":
        state["text_chars"] += len(e.text)
        call = state["pending"].pop(e.tool_use_id, None)
        if call is None:
            return True
        name, arg = call
        if name in EDIT_TOOLS and arg and not e.is_error:
            files: list[str] = state["files"]
            if arg not in files and len(files) < MAX_FILES:
                files.append(arg)
            verb = "wrote" if name == "Write" else "edited"
            _push_action(state, f"{verb} {short_path(arg, *roots)}")
        elif name == "Bash" and arg:
            error = _first_error_line(e.text) if e.is_error else ""
            _record_command(state, arg, not e.is_error, error)
            outcome = f"failed: {error}" if e.is_error else "ok"
            _push_action(state, f"ran `{one_line(arg, 100)}` ({outcome})")
        return True
    if e.kind == "summary" and e.text:
        state["text_chars"] += len(e.text)
    return e.kind in ("summary", "compact")


def update_from_transcript(state: dict[str, Any]) -> bool:
    """Read what the transcript gained since the stored offset; True when the state changed."""
    path = state.get("transcript_path") or ""
    if not path:
        return False
    result = read_from(path, int(state.get("offset") or 0))
    changed = False
    if result.restarted:  # the file was replaced: rebuild the digest from it
        fresh = new_state(state["session_id"], state["launch_cwd"], path)
        keep = ("created_at", "scribed_generation", "cold_path", "generation")
        fresh.update({k: state[k] for k in keep if k in state})
        state.clear()
        state.update(fresh)
        changed = True
    for e in result.events:
        changed = _apply(state, e) or changed
    if result.offset != state["offset"]:
        state["offset"] = result.offset
        changed = True
    return changed


def _open_state(event: HookEvent) -> dict[str, Any] | None:
    sid = event.session_id
    if not sid:
        return None
    state = load_state(sid)
    transcript_path = event.transcript_path
    if state is None:
        state = new_state(sid, event.cwd, transcript_path)
    elif transcript_path and transcript_path != state.get("transcript_path"):
        # The same file named another way (a relative path, a symlink) keeps its read offset:
        # reading it again from the start counted every tool call twice.
        if not _same_file(transcript_path, str(state.get("transcript_path") or "")):
            state["offset"] = 0
        state["transcript_path"] = transcript_path
    return state


def _same_file(a: str, b: str) -> bool:
    try:
        return bool(b) and os.path.samefile(a, b)
    except OSError:
        return False


def update_session(
    event: HookEvent,
    *,
    prompt: str | None = None,
    final: str | None = None,
    compact_summary: str | None = None,
    scan: bool = False,
) -> dict[str, Any] | None:
    """Bring a session's state and hot file up to date (cheap: only new transcript lines).
    ``scan``: also read the signals of what was said into the notes (the hot file's decisions),
    for Stop and compaction; the prompt and SessionStart hooks leave that to the Scribe.
    Returns the state, or None when the event names no session."""
    sid = event.session_id
    if not sid:
        return None
    with session_lock(sid):
        state = _open_state(event)
        if state is None:
            return None
        changed = update_from_transcript(state)
        if prompt:
            _record_prompt(state, prompt)
            changed = True
        if compact_summary:
            cleaned = _clean(_unwrap_summary(compact_summary), COMPACT_SUMMARY_MAX_CHARS)
            if cleaned and cleaned != state.get("compact_summary"):
                state["compact_summary"] = cleaned
                state["compactions"] = int(state.get("compactions") or 0) + 1
                changed = True
        if final:
            cleaned = _clean(final, FINAL_MAX_CHARS)
            if cleaned and cleaned != state["final"]:
                state["final"] = cleaned
                _queue(state, "assistant", final)
                changed = True
        if scan:
            changed = scan_signals(state) or changed
        if changed or not state_path(sid).exists():
            state["generation"] += 1
            write_hot_file(state)
            save_state(state)
        return state


def _unwrap_summary(text: str) -> str:
    """Claude Code's compaction summary, without the <summary> tags it comes in."""
    inner = re.search(r"<summary>(.*?)</summary>", text, re.DOTALL)
    return inner.group(1) if inner else text


def on_prompt(event: HookEvent) -> None:
    """UserPromptSubmit: the prompt becomes the current task (unless it is just "yes" or
    "continue"), and the transcript is read from where the last hook left off."""
    update_session(event, prompt=event.prompt or None)


# A capture ties itself to at most this many of the session's edited files: the last ones,
# where the work ended up (a session that touched 40 files is tied to none in particular).
EDITED_GLOBS_MAX = 10


def edited_globs(session_id: str, cwd: str) -> list[str]:
    """The files a session edited or wrote, as ``paths:`` globs relative to the working tree of
    ``cwd`` (files outside it are left out), the last EDITED_GLOBS_MAX of them. For a memory
    captured from the session: it is then recalled when Claude touches those files again."""
    from .hot import load_state

    state = load_state(session_id) if session_id else None
    if not state:
        return []
    root = str(paths.work_root(cwd)).rstrip("/") + "/"
    out: list[str] = []
    for path in reversed(state.get("files") or []):
        real = os.path.realpath(path) if isinstance(path, str) else ""
        if real.startswith(root) and real[len(root) :] not in out:
            out.append(real[len(root) :])
        if len(out) >= EDITED_GLOBS_MAX:
            break
    return out[::-1]
