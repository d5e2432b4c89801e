"""The hot tier (this session's working state) and when to load which tier.

Hot tier: ``<state>/hot/<session_id>.md``, a small file (2-4 KB) holding the current task, the
decisions made this session, the last few actions, open blockers and a handoff section. Its
source of truth is ``<state>/hot/<session_id>.json``, which also holds a running digest of the
session that the Scribe (``scribe.py``) turns into a cold summary: files changed, commands that
mattered, tagged lines, corrections. Both are updated by the UserPromptSubmit and Stop hooks,
reading only the part of the transcript written since the last update (an offset is stored).

When to load (the design's table, as behaviour; ``prompt_context``):
    situation   hot                      cold                         wiki
    new         (in the conversation)    -                            -
    resume      this session's hot file  latest summary, this project -
    debug       (in the conversation)    search this project's        -
    spec        (in the conversation)    -                            matching records
    onboard     (in the conversation)    -                            matching records
    incident    (in the conversation)    search this project's        matching records
During a live session the hot state *is* the conversation, so it is re-sent only when the
conversation lost it: after compaction and on resume (``resume_units``, SessionStart) and when the
person asks to pick up where things were ("continue", "where were we").

Hook path: stdlib plus our light modules; the tokenizer is never loaded here for a steady prompt
(unit counts come from the index's token cache, which the Scribe warms).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import paths
from .fsutil import atomic_write_text, file_lock
from .inbox import corrections, tagged_lines
from .privacy import escape_fence, sanitize, strip_injected
from .transcript import EDIT_TOOLS, Event, read_from

if TYPE_CHECKING:
    from .entry import Entry
    from .index import Index
    from .layers import Unit

STATE_VERSION = 1

# --- sizes (the design's hot tier is "~2-4 KB typical") -----------------------------------------
HOT_MAX_CHARS = 4096
# Per-section caps that keep the hot file under HOT_MAX_CHARS (they sum to ~3.9 KB).
TASK_MAX_CHARS = 400
FIRST_TASK_MAX_CHARS = 200
HOT_DECISIONS = 5
HOT_ITEM_MAX_CHARS = 160
# The design's "last 3-5 actions taken".
HOT_ACTIONS = 5
HOT_BLOCKERS = 3
HANDOFF_SECTION_MAX_CHARS = 1000

# --- the running digest in the state file (bounded so the file stays small) ----------------------
# The first prompts say what the session was for, the last ones what it is doing now.
KEEP_FIRST_PROMPTS = 3
KEEP_LAST_PROMPTS = 12
PROMPT_MAX_CHARS = 600
MAX_NOTES = 60
MAX_FILES = 300
MAX_COMMANDS = 60
COMMAND_MAX_CHARS = 300
ERROR_MAX_CHARS = 200
FINAL_MAX_CHARS = 4000
# One line per turn (what was asked, how Claude's last message of the turn began) lets the cold
# summary grow toward a tenth of a long session and answer "what have we tried before?".
# The first turns set the scene, the last ones hold the state: keep both ends.
KEEP_FIRST_TURNS = 5
KEEP_LAST_TURNS = 35
TURN_ASK_MAX_CHARS = 200
TURN_ANSWER_MAX_CHARS = 300
# Tool calls whose result has not been read yet (a result can land in the next read).
MAX_PENDING = 64

# --- injection budgets (exact cl100k tokens) ----------------------------------------------------
# What SessionStart adds on resume/compact. The hot file at the low end of its 2-4 KB target is
# ~500 tokens; the latest cold summary gets the rest. Together with L1 (200) and L2 (500) the
# brief stays near 2K tokens.
RESUME_BUDGET_TOKENS = 1000
HOT_INJECT_MAX_TOKENS = 500
# The brief drops extra sections that would push the hook output past Claude Code's cap
# (wake.build_brief); the L1+L2 layers may take up to 7 KB, so keep ours well below the rest.
RESUME_MAX_CHARS = 4000
PROMPT_CONTEXT_MAX_CHARS = 4000
# Search hits per tier for a prompt: a few good pointers beat a page of weak ones.
MAX_COLD_HITS = 3
MAX_WIKI_HITS = 4
# Matching lines shown under each cold hit (the part of the summary the prompt is about).
COLD_HIT_LINES = 2
# Words of a prompt used in an FTS query; longer prompts add noise, not recall.
MAX_QUERY_TERMS = 12

HOT_HEADING = "## This session so far (hot memory)\n"
COLD_LATEST_HEADING = "## Latest earlier session of this project (cold memory)\n"
COLD_SEARCH_HEADING = "## Earlier sessions that match (cold memory)\n"
WIKI_HEADING = "## Matching decisions and conventions (wiki)\n"
HANDOFF_PLACEHOLDER = "<!-- A handoff can go here, or in thoughts/HANDOFF.md -->"

SITUATIONS = ("new", "resume", "debug", "spec", "onboard", "incident")
# situation -> (hot, cold, wiki); cold "latest" | "search" | ""
LOAD_TABLE: dict[str, tuple[bool, str, bool]] = {
    "new": (False, "", False),
    "resume": (True, "latest", False),
    "debug": (False, "search", False),
    "spec": (False, "", True),
    "onboard": (False, "", True),
    "incident": (False, "search", True),
}

_SAFE_SID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_WS = re.compile(r"\s+")
_WORD = re.compile(r"[A-Za-z0-9_]+")

# --- situation detection ------------------------------------------------------------------------
# Word sets and phrases, not regular expressions: this runs on every prompt, and compiling a
# dozen large patterns in each hook process costs more than the matching.
_RESUME_PHRASES = (
    "where were we", "where was i", "where are we at", "where did we leave off",
    "where did i leave off", "where we left off", "where i left off", "pick up where",
    "pick it up where", "pick this up where", "pick things up where", "what were we doing",
    "what were we working on", "remind me what we were doing", "remind me what we did",
    "resume the", "resume our", "resume where", "continue where",
)  # fmt: skip
# Alone or nearly ("continue", "ok, carry on"): a long prompt that says "continue" is a task.
_RESUME_WEAK_PHRASES = ("continue", "carry on", "keep going", "go on", "resume", "proceed")
RESUME_WEAK_MAX_WORDS = 6
_INCIDENT_WORDS = frozenset(
    "postmortem incident incidents outage outages rca retro retrospective downtime sev0 sev1 "
    "sev2 sev3".split()
)
_INCIDENT_PHRASES = ("post mortem", "post incident", "root cause", "what went wrong", "sev 1")
_RECUR_WORDS = frozenset(
    "again still keeps kept recurring recurs flaky intermittent intermittently regression "
    "regressed regresses".split()
)
_RECUR_PHRASES = (
    "came back", "comes back", "keep failing", "keep crashing", "seen this before",
    "seen that before", "seen it before", "had this before", "hit this before", "same error",
    "same bug", "same issue", "same failure", "same problem", "tried before",
    "what have we tried", "last time",
)  # fmt: skip
_FAILURE_WORDS = frozenset(
    "error errors bug bugs broken exception exceptions issue issues problem problems traceback "
    "timeout timeouts crash crashes crashed crashing wrong flaky".split()
)
_FAILURE_PREFIXES = ("fail", "break", "regress")
_SPEC_WORDS = frozenset("spec specs specification adr adrs rfc requirement requirements".split())
_SPEC_PHRASES = (
    "decision record", "design doc", "as decided", "we decided", "according to the spec",
    "according to the design", "according to the decision", "according to the contract",
    "per the spec", "per the design", "per the adr", "per the contract", "api contract",
)  # fmt: skip
_ONBOARD_WORDS = frozenset("onboard onboarding unfamiliar".split())
_ONBOARD_PHRASES = (
    "walk me through", "overview of", "new to this", "new to the", "get familiar",
    "architecture of", "explain how", "explain the", "explain what",
)  # fmt: skip
# A reply that carries no task of its own; it never replaces the current task.
_ACK_WORDS = frozenset(
    "y yes yep yeah ok okay sure thanks thank you thx go ahead on continue proceed do it lgtm "
    "sounds good great perfect nice carry keep going please".split()
)


_STOPWORDS = frozenset((
    "the", "and", "for", "with", "that", "this", "from", "what", "where", "when", "which", "who",
    "how", "why", "are", "was", "were", "have", "has", "had", "you", "your", "our", "can",
    "could", "would", "should", "will", "did", "does", "not", "but", "all", "any", "into",
    "about", "again", "still", "some", "then", "than", "them", "they", "there", "their", "its",
    "just", "also", "use", "using", "used", "please", "let", "lets", "need", "want", "make",
    "sure", "more", "most", "very", "much", "like", "been", "being", "one", "two", "get", "got",
    "here", "now", "yes", "okay",
))  # fmt: skip


def _normal(text: str) -> tuple[str, list[str]]:
    """Lower-case words, and the text as ' w1 w2 … ' for whole-phrase matching."""
    words = _WORD.findall(text.lower().replace("_", " "))
    return " " + " ".join(words) + " ", words


def _has(padded: str, phrases: Iterable[str]) -> bool:
    return any(f" {p} " in padded for p in phrases)


def _is_onboarding(padded: str, words: set[str]) -> bool:
    if words & _ONBOARD_WORDS or _has(padded, _ONBOARD_PHRASES):
        return True
    if (" how does " in padded or " how do " in padded) and words & {"work", "works"}:
        return True
    if " what is the " in padded and words & {"module", "subsystem", "component", "service"}:
        return True
    return " where is " in padded and bool(words & {"defined", "implemented", "handled"})


def situation_of(prompt: str) -> str:
    """The row of the when-to-load table a prompt belongs to."""
    text = strip_injected(prompt or "").strip()
    if not text:
        return "new"
    padded, word_list = _normal(text.replace("-", " "))
    words = set(word_list)
    if words & _INCIDENT_WORDS or _has(padded, _INCIDENT_PHRASES):
        return "incident"
    if _has(padded, _RESUME_PHRASES) or (
        len(word_list) <= RESUME_WEAK_MAX_WORDS and _has(padded, _RESUME_WEAK_PHRASES)
    ):
        return "resume"
    recurs = words & _RECUR_WORDS or _has(padded, _RECUR_PHRASES)
    fails = words & _FAILURE_WORDS or any(w.startswith(_FAILURE_PREFIXES) for w in words)
    if recurs and fails:
        return "debug"
    if words & _SPEC_WORDS or _has(padded, _SPEC_PHRASES):
        return "spec"
    if _is_onboarding(padded, words):
        return "onboard"
    return "new"


def is_ack(prompt: str) -> bool:
    words = _normal(prompt)[1]
    return bool(words) and all(w in _ACK_WORDS for w in words)


# --- session state ------------------------------------------------------------------------------


def session_key(session_id: str) -> str:
    """A file-name-safe form of the session id (Claude Code's are UUIDs)."""
    if _SAFE_SID.match(session_id):
        return session_id
    return "x" + hashlib.sha1(session_id.encode("utf-8", "replace")).hexdigest()[:32]


def hot_dir() -> Path:
    return paths.palace_dir("hot")


def state_path(session_id: str) -> Path:
    return hot_dir() / f"{session_key(session_id)}.json"


def hot_path(session_id: str) -> Path:
    return hot_dir() / f"{session_key(session_id)}.md"


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


def load_state(session_id: str) -> dict[str, Any] | None:
    try:
        with open(state_path(session_id), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return None
    return data


def save_state(state: dict[str, Any]) -> None:
    state["updated"] = time.time()
    atomic_write_text(state_path(state["session_id"]), json.dumps(state, ensure_ascii=False))


@contextlib.contextmanager
def session_lock(session_id: str) -> Any:
    """Serialises read-modify-write of one session's state across hook processes."""
    with file_lock(hot_dir() / f".{session_key(session_id)}.lock") as got:
        yield got


def _payload_str(payload: dict[str, Any], key: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) else ""


def _cwd_of(payload: dict[str, Any]) -> str:
    cwd = _payload_str(payload, "cwd")
    if cwd and os.path.isdir(cwd):
        return cwd
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    return env if env and os.path.isdir(env) else os.getcwd()


def _epoch(ts: str) -> float | None:
    if not ts:
        return None
    try:
        return dt.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _one_line(text: str, limit: int) -> str:
    line = _WS.sub(" ", text).strip()
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _clean(text: str, limit: int) -> str:
    """What may be stored: our injected text removed, private spans and secrets gone."""
    return sanitize(strip_injected(text)).strip()[:limit]


def _add_note(state: dict[str, Any], kind: str, text: str, role: str) -> bool:
    text = sanitize(text).strip()
    notes: list[dict[str, str]] = state["notes"]
    if any(n["text"] == text and n["kind"] == kind for n in notes):
        return False
    notes.append({"kind": kind, "text": text, "role": role})
    del notes[:-MAX_NOTES]
    return True


def _is_task(prompt: str) -> bool:
    words = prompt.split()
    return len(words) >= 2 and not is_ack(prompt) and situation_of(prompt) != "resume"


def _record_prompt(state: dict[str, Any], prompt: str) -> None:
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
    turns.append({"ask": _one_line(text, TURN_ASK_MAX_CHARS), "answer": ""})
    if len(turns) > KEEP_FIRST_TURNS + KEEP_LAST_TURNS:
        del turns[KEEP_FIRST_TURNS]
    if _is_task(text):
        state["task"] = text
        if not state["first_task"]:
            state["first_task"] = text
    for sentence in corrections(text):
        _add_note(state, "correction", sentence, "user")
    for kind, line in tagged_lines(text):
        _add_note(state, kind, line, "user")


def _short_path(path: str, *roots: str) -> str:
    """A path relative to the project (or the folder the session ran in) when it is inside."""
    for root in roots:
        if root and path.startswith(root.rstrip("/") + "/"):
            return path[len(root.rstrip("/")) + 1 :]
    return path


def _push_action(state: dict[str, Any], text: str) -> None:
    actions: list[str] = state["actions"]
    actions.append(_one_line(sanitize(text), HOT_ITEM_MAX_CHARS))
    del actions[:-HOT_ACTIONS]


# The line of a failure's output that names it (pytest's "E   ImportError: ...", "error: ...").
_ERROR_LINE = re.compile(
    r"\b(\w*Error|\w*Exception|FAILED|FAIL|fatal|error|panic|denied|not found)\b", re.IGNORECASE
)
_DECORATION = re.compile(r"^[\s=_*#.-]*(FAILURES|ERRORS)?[\s=_*#.-]*$|^[FE.sx]+$")


def _first_error_line(text: str) -> str:
    """The most telling line of a failed command's output."""
    text = re.sub(r"</?tool_use_error>", "", text)
    lines = [x.strip() for x in text.splitlines() if x.strip() and not _DECORATION.match(x)]
    named = [x for x in lines if _ERROR_LINE.search(x)]
    best = (named or lines or ["failed"])[0]
    return _one_line(sanitize(re.sub(r"^E\s+", "", best)), ERROR_MAX_CHARS)


# `env -u X`, `FOO=1`: prefixes that change how a command runs, not which command it is.
_ENV_PREFIX = re.compile(r"^(?:env(?:\s+-[iu](?:\s+[A-Za-z_]\w*)?)*\s+|[A-Za-z_]\w*=\S*\s+)+")


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
            first = _epoch(e.timestamp)
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
            turns[-1]["answer"] = _one_line(state["final"], TURN_ANSWER_MAX_CHARS)
        for kind, line in tagged_lines(text):
            _add_note(state, kind, line, "assistant")
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
            _push_action(state, f"{verb} {_short_path(arg, *roots)}")
        elif name == "Bash" and arg:
            error = _first_error_line(e.text) if e.is_error else ""
            _record_command(state, arg, not e.is_error, error)
            outcome = f"failed: {error}" if e.is_error else "ok"
            _push_action(state, f"ran `{_one_line(arg, 100)}` ({outcome})")
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


def _open_state(payload: dict[str, Any]) -> dict[str, Any] | None:
    sid = _payload_str(payload, "session_id")
    if not sid:
        return None
    state = load_state(sid)
    transcript_path = _payload_str(payload, "transcript_path")
    if state is None:
        state = new_state(sid, _cwd_of(payload), transcript_path)
    elif transcript_path and transcript_path != state.get("transcript_path"):
        state["transcript_path"] = transcript_path
        state["offset"] = 0
    return state


def update_session(
    payload: dict[str, Any], *, prompt: str | None = None, final: str | None = None
) -> dict[str, Any] | None:
    """Bring a session's state and hot file up to date (cheap: only new transcript lines).
    Returns the state, or None when the payload names no session."""
    sid = _payload_str(payload, "session_id")
    if not sid:
        return None
    with session_lock(sid):
        state = _open_state(payload)
        if state is None:
            return None
        changed = update_from_transcript(state)
        if prompt:
            _record_prompt(state, prompt)
            changed = True
        if final:
            cleaned = _clean(final, FINAL_MAX_CHARS)
            if cleaned and cleaned != state["final"]:
                state["final"] = cleaned
                for kind, line in tagged_lines(final):
                    _add_note(state, kind, line, "assistant")
                changed = True
        if changed or not state_path(sid).exists():
            state["generation"] += 1
            write_hot_file(state)
            save_state(state)
        return state


def on_prompt(payload: dict[str, Any]) -> None:
    """UserPromptSubmit: the prompt becomes the current task (unless it is just "yes" or
    "continue"), and the transcript is read from where the last hook left off."""
    prompt = _payload_str(payload, "prompt")
    update_session(payload, prompt=prompt or None)


# --- the hot file -------------------------------------------------------------------------------


def decisions(state: dict[str, Any]) -> list[str]:
    return [n["text"] for n in state["notes"] if n["kind"] in ("decision", "correction")]


def hot_sections(state: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(heading, lines) of the hot file, most important first; every line already capped."""
    task = _one_line(state["task"], TASK_MAX_CHARS) if state["task"] else "(no task yet)"
    task_lines = [task]
    if state["first_task"] and state["first_task"] != state["task"]:
        task_lines.append(f"Started with: {_one_line(state['first_task'], FIRST_TASK_MAX_CHARS)}")
    dec = [_one_line(d, HOT_ITEM_MAX_CHARS) for d in decisions(state)[-HOT_DECISIONS:]]
    blockers = [
        _one_line(f"`{cmd}` fails: {err}", HOT_ITEM_MAX_CHARS)
        for cmd, err in list(state["blockers"].items())[-HOT_BLOCKERS:]
    ]
    return [
        ("Current task", task_lines),
        ("Open blockers", blockers),
        ("Decisions this session", dec),
        ("Last actions", list(state["actions"][-HOT_ACTIONS:])),
    ]


def read_handoff_section(session_id: str) -> str:
    """What someone wrote under the hot file's '## Handoff' heading (placeholder excluded)."""
    try:
        text = hot_path(session_id).read_text(encoding="utf-8")
    except OSError:
        return ""
    _, sep, rest = text.partition("\n## Handoff\n")
    if not sep:
        return ""
    return rest.replace(HANDOFF_PLACEHOLDER, "").strip()[:HANDOFF_SECTION_MAX_CHARS]


def render_hot(state: dict[str, Any], handoff: str = "") -> str:
    stamp = dt.datetime.fromtimestamp(state["updated"]).strftime("%Y-%m-%d %H:%M")
    out = [
        f"# Hot memory: session {state['session_id'][:8]}\n",
        f"Project: {state['cwd']} · updated {stamp} · {len(state['files'])} files edited, "
        f"{state['tool_calls']} tool calls\n",
    ]
    for heading, lines in hot_sections(state):
        out.append(f"\n## {heading}\n")
        if heading == "Current task":
            out += [f"{line}\n" for line in lines]
        else:
            out += [f"- {line}\n" for line in lines] or ["- none\n"]
    out.append("\n## Handoff\n")
    out.append(f"{sanitize(handoff)}\n" if handoff else f"{HANDOFF_PLACEHOLDER}\n")
    text = "".join(out)
    return text if len(text) <= HOT_MAX_CHARS else text[: HOT_MAX_CHARS - 2].rstrip() + "…\n"


def write_hot_file(state: dict[str, Any]) -> Path:
    path = hot_path(state["session_id"])
    atomic_write_text(path, render_hot(state, read_handoff_section(state["session_id"])))
    return path


def latest_state(cwd: str) -> dict[str, Any] | None:
    """The most recently updated session state of this project (for the CLI)."""
    project = paths.project_key(cwd)
    best: tuple[float, dict[str, Any]] | None = None
    try:
        names = [n for n in os.listdir(hot_dir()) if n.endswith(".json")]
    except OSError:
        return None
    for name in names:
        state = load_state(name[: -len(".json")])
        if state and state.get("project") == project:
            stamp = float(state.get("updated") or 0)
            if best is None or stamp > best[0]:
                best = (stamp, state)
    return best[1] if best else None


# --- units: what gets injected ------------------------------------------------------------------

Counter = Callable[[str], int]


def unit_text(line: str) -> str:
    """A line as injected: one line, escaped, starting with a non-space character and ending
    with a newline (so token counts of consecutive units add up exactly)."""
    text = escape_fence(_WS.sub(" ", line).strip())
    return f"{text}\n" if text else ""


HOT_LINE_LABELS = {
    "Open blockers": "Blocker",
    "Decisions this session": "Decision",
    "Last actions": "Recent action",
}


def hot_lines(state: dict[str, Any], handoff: str = "") -> list[str]:
    """The hot file as injected lines, most important first."""
    out = []
    for heading, lines in hot_sections(state):
        if not lines:
            continue
        if heading == "Current task":
            out.append(unit_text(f"Current task: {lines[0]}"))
            out += [unit_text(x) for x in lines[1:]]
        else:
            out += [unit_text(f"{HOT_LINE_LABELS.get(heading, heading)}: {x}") for x in lines]
    if handoff:
        out.append(unit_text(f"Handoff written this session: {handoff}"))
    return [x for x in out if x]


def _pack(
    heading: str, lines: Iterable[str], count: Counter, budget: int, max_chars: int
) -> list[Unit]:
    """Heading plus lines in order while they fit; nothing at all if no line fits."""
    from .layers import Unit

    head = Unit(heading, count(heading))
    units = [head]
    used, chars = head.tokens, len(heading)
    for text in lines:
        if not text:
            continue
        n = count(text)
        if used + n > budget or chars + len(text) > max_chars:
            break
        units.append(Unit(text, n))
        used += n
        chars += len(text)
    return units if len(units) > 1 else []


# Sections of a cold summary that are bookkeeping, not memory: never injected.
COLD_SKIPPED_SECTIONS = ("Stats",)


def cold_body_lines(body: str) -> list[str]:
    """A cold summary's body as injectable lines (the Scribe warms their token counts); a
    section heading becomes a line ending in ':'."""
    out = []
    skipping = False
    for raw in body.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("## "):
            title = line[3:].strip().rstrip(":")
            skipping = title.split(" (")[0] in COLD_SKIPPED_SECTIONS
            line = title + ":"
        if not skipping:
            out.append(unit_text(line))
    return [x for x in out if x]


def _drop_dangling_titles(units: list[Unit]) -> list[Unit]:
    """A section title cut off from all of its lines by the budget says nothing: drop it."""
    while len(units) > 1 and units[-1].text.endswith(":\n") and not units[-1].text.startswith("- "):
        units.pop()
    return units if len(units) > 1 else []


def latest_cold(idx: Index, project: str, exclude_session: str = "") -> Entry | None:
    """The newest cold summary of a project, other than the given session's own."""
    key = session_key(exclude_session)[:8] if exclude_session else ""
    rows = idx.query("source = 'cold' AND project = ?", (project,))
    rows = [e for e in rows if not (key and e.name.endswith(key))]
    if not rows:
        return None
    return max(rows, key=lambda e: (e.updated or e.created, e.created, e.path))


def fts_query(text: str) -> str:
    """An FTS5 OR-query of a prompt's distinctive words (quoted, so no operator injection)."""
    words: list[str] = []
    for w in _WORD.findall(strip_injected(text).lower()):
        if len(w) < 3 or w in _STOPWORDS or w.isdigit() or w in words:
            continue
        words.append(w)
        if len(words) >= MAX_QUERY_TERMS:
            break
    return " OR ".join(f'"{w}"' for w in words)


def search(idx: Index, prompt: str, where: str, params: tuple[Any, ...], limit: int) -> list[Entry]:
    """Entries matching the prompt's words, best first (BM25), restricted by ``where``."""
    from .index import row_to_entry

    query = fts_query(prompt)
    if not query:
        return []
    sql = (
        "SELECT e.* FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid "
        f"WHERE entries_fts MATCH ? AND {where} ORDER BY bm25(entries_fts), e.id LIMIT ?"
    )
    try:
        rows = idx.conn.execute(sql, (query, *params, limit)).fetchall()
    except Exception:  # noqa: BLE001 - a malformed query must not break recall
        return []
    return [row_to_entry(r) for r in rows]


def _matching_lines(entry: Entry, prompt: str, n: int) -> list[str]:
    words = {w for w in _WORD.findall(prompt.lower()) if len(w) >= 4 and w not in _STOPWORDS}
    if not words:
        return []
    scored = []
    for i, line in enumerate(cold_body_lines(entry.body)):
        low = line.lower()
        hits = sum(1 for w in words if w in low)
        if hits and not line.startswith(("Task:", "Result:")):
            scored.append((-hits, i, line))
    return [line for _, _, line in sorted(scored)[:n]]


def cold_units(
    idx: Index, entries: list[Entry], prompt: str, budget: int, max_chars: int, heading: str
) -> list[Unit]:
    """Each hit's brief line (stored count) and the lines of it the prompt is about."""
    from .layers import Unit

    count = idx.count_cached
    head = Unit(heading, count(heading))
    units = [head]
    used, chars = head.tokens, len(heading)
    for e in entries:
        group = [Unit(e.line, e.line_tokens)]
        group += [Unit(x, count(x)) for x in _matching_lines(e, prompt, COLD_HIT_LINES)]
        need = sum(u.tokens for u in group)
        size = sum(len(u.text) for u in group)
        if used + need > budget or chars + size > max_chars:
            continue
        units += group
        used += need
        chars += size
    return units if len(units) > 1 else []


def wiki_units(idx: Index, entries: list[Entry], budget: int, max_chars: int) -> list[Unit]:
    from .layers import Unit

    head = Unit(WIKI_HEADING, idx.count_cached(WIKI_HEADING))
    units = [head]
    used, chars = head.tokens, len(WIKI_HEADING)
    for e in entries:
        if used + e.line_tokens > budget or chars + len(e.line) > max_chars:
            continue
        units.append(Unit(e.line, e.line_tokens))
        used += e.line_tokens
        chars += len(e.line)
    return units if len(units) > 1 else []


def latest_cold_units(
    idx: Index, project: str, exclude_session: str, budget: int, max_chars: int
) -> list[Unit]:
    entry = latest_cold(idx, project, exclude_session)
    if entry is None:
        return []
    lines = cold_body_lines(entry.body)
    return _drop_dangling_titles(
        _pack(COLD_LATEST_HEADING, lines, idx.count_cached, budget, max_chars)
    )


def hot_units(
    idx: Index,
    state: dict[str, Any] | None,
    budget: int,
    max_chars: int,
    *,
    snapshot: bool = False,
) -> list[Unit]:
    """The hot state as units. ``snapshot``: as of the last Stop, with the counts the Scribe
    stored then (a prompt hook must not load the tokenizer for a line it has not seen);
    otherwise as of now, counted through the token cache."""
    if not state or not (state["task"] or state["actions"]):
        return []
    stored = state.get("hot_snapshot")
    if snapshot and isinstance(stored, list) and stored:
        counts = {str(t): int(n) for t, n in stored}
        return _pack(
            HOT_HEADING,
            list(counts),
            lambda text: counts[text] if text in counts else idx.count_cached(text),
            budget,
            max_chars,
        )
    lines = list(dict.fromkeys(hot_lines(state, read_handoff_section(state["session_id"]))))
    return _pack(HOT_HEADING, lines, idx.count_cached, budget, max_chars)


def units_for(
    idx: Index,
    situation: str,
    *,
    prompt: str,
    cwd: str,
    state: dict[str, Any] | None,
    budget: int,
    max_chars: int,
    snapshot: bool = False,
) -> list[Unit]:
    """What the when-to-load table loads for ``situation``, within ``budget`` exact tokens
    (``snapshot``: the hot state as of the last Stop, see ``hot_units``)."""
    want_hot, cold, want_wiki = LOAD_TABLE.get(situation, LOAD_TABLE["new"])
    project = paths.project_key(cwd)
    sid = state["session_id"] if state else ""
    units: list[Unit] = []

    def left() -> tuple[int, int]:
        return budget - sum(u.tokens for u in units), max_chars - sum(len(u.text) for u in units)

    if want_hot:
        tokens_left, chars_left = left()
        units += hot_units(
            idx, state, min(HOT_INJECT_MAX_TOKENS, tokens_left), chars_left, snapshot=snapshot
        )
    if cold == "latest":
        units += latest_cold_units(idx, project, sid, *left())
    elif cold == "search":
        hits = search(idx, prompt, "e.source = 'cold' AND e.project = ?", (project,), MAX_COLD_HITS)
        if want_wiki:  # incident: leave the wiki half the room
            tokens_left, chars_left = left()
            units += cold_units(
                idx, hits, prompt, tokens_left // 2, chars_left // 2, COLD_SEARCH_HEADING
            )
        else:
            units += cold_units(idx, hits, prompt, *left(), COLD_SEARCH_HEADING)
    if want_wiki:
        hits = search(idx, prompt, "e.source = 'wiki'", (), MAX_WIKI_HITS)
        units += wiki_units(idx, hits, *left())
    return units


def _hot_digest(units: list[Unit]) -> str:
    return hashlib.sha1("".join(u.text for u in units).encode("utf-8")).hexdigest()[:16]


def _mark_hot_injected(session_id: str, hot: list[Unit]) -> None:
    """Remember which hot state the conversation already holds (not sent twice in a row)."""
    if not hot:
        return
    with session_lock(session_id):
        state = load_state(session_id)
        if state is not None:
            state["hot_injected"] = _hot_digest(hot)
            save_state(state)


def _hot_len(units: list[Unit]) -> int:
    """How many leading units are the hot section (heading and its lines)."""
    if not units or units[0].text != HOT_HEADING:
        return 0
    n = 1
    while n < len(units) and not units[n].text.startswith("## "):
        n += 1
    return n


def prompt_context(idx: Index, payload: dict[str, Any], cwd: str, budget_tokens: int) -> list[Unit]:
    """UserPromptSubmit: the tiers this prompt's situation calls for, within ``budget_tokens``
    (exact cl100k, units not fenced: the caller fences and escapes nothing further). The hot
    state is left out when the conversation already got exactly this hot state (SessionStart on
    resume, or an earlier "where were we")."""
    prompt = _payload_str(payload, "prompt")
    situation = situation_of(prompt)
    if situation == "new" or budget_tokens <= 0:
        return []
    sid = _payload_str(payload, "session_id")
    state = load_state(sid) if sid else None
    units = units_for(
        idx,
        situation,
        prompt=prompt,
        cwd=cwd,
        state=state,
        budget=budget_tokens,
        max_chars=PROMPT_CONTEXT_MAX_CHARS,
        snapshot=True,
    )
    n_hot = _hot_len(units)
    if n_hot and state is not None:
        if _hot_digest(units[:n_hot]) == state.get("hot_injected"):
            units = units[n_hot:]
        else:
            _mark_hot_injected(state["session_id"], units[:n_hot])
    return units


def resume_units(idx: Index, payload: dict[str, Any], cwd: str, source: str) -> list[Unit]:
    """SessionStart on resume or compact: this session's hot state comes back (and on resume
    the latest summary of another session of this project), within RESUME_BUDGET_TOKENS."""
    state = update_session(payload)
    budget, max_chars = RESUME_BUDGET_TOKENS, RESUME_MAX_CHARS
    units = hot_units(idx, state, HOT_INJECT_MAX_TOKENS, max_chars)
    if state is not None:
        _mark_hot_injected(state["session_id"], units)
    if source == "resume":
        used = sum(u.tokens for u in units)
        chars = sum(len(u.text) for u in units)
        sid = state["session_id"] if state else ""
        units += latest_cold_units(
            idx, paths.project_key(cwd), sid, budget - used, max_chars - chars
        )
    return units
