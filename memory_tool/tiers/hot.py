"""The hot tier on disk: a session's state file and the hot file rendered from it.

Hot tier: ``<state>/hot/<session_id>.md``, a small file (2-4 KB) holding the current task, the
decisions made this session, the last few actions, open blockers and a handoff section. Its
source of truth is ``<state>/hot/<session_id>.json``, which also holds a running digest of the
session that the Scribe (``scribe.py``) turns into a cold summary (``digest`` keeps it up to
date from the transcript).

Hook path: stdlib plus our light modules.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.fsutil import atomic_write_text, file_lock
from ..base.privacy import sanitize

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

HANDOFF_PLACEHOLDER = "<!-- A handoff can go here, or in thoughts/HANDOFF.md -->"

_SAFE_SID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_WS = re.compile(r"\s+")


def session_key(session_id: str) -> str:
    """A file-name-safe form of the session id (Claude Code's are UUIDs)."""
    if _SAFE_SID.match(session_id):
        return session_id
    import hashlib  # lazily: 3 ms of import a hook rarely needs

    return "x" + hashlib.sha1(session_id.encode("utf-8", "replace")).hexdigest()[:32]


def hot_dir() -> Path:
    return paths.palace_dir("hot")


def state_path(session_id: str) -> Path:
    return hot_dir() / f"{session_key(session_id)}.json"


def hot_path(session_id: str) -> Path:
    return hot_dir() / f"{session_key(session_id)}.md"


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


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters (cut with an ellipsis)."""
    line = _WS.sub(" ", text).strip()
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


# --- the hot file -------------------------------------------------------------------------------


def decisions(state: dict[str, Any]) -> list[str]:
    return [n["text"] for n in state["notes"] if n["kind"] in ("decision", "correction")]


def hot_sections(state: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(heading, lines) of the hot file, most important first; every line already capped."""
    task = one_line(state["task"], TASK_MAX_CHARS) if state["task"] else "(no task yet)"
    task_lines = [task]
    if state["first_task"] and state["first_task"] != state["task"]:
        task_lines.append(f"Started with: {one_line(state['first_task'], FIRST_TASK_MAX_CHARS)}")
    dec = [one_line(d, HOT_ITEM_MAX_CHARS) for d in decisions(state)[-HOT_DECISIONS:]]
    blockers = [
        one_line(f"`{cmd}` fails: {err}", HOT_ITEM_MAX_CHARS)
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
    if state.get("compact_summary"):
        out.append(f"\n## Compaction summary\n{sanitize(state['compact_summary'])}\n")
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


# "A prompt or two" with no tool call and nothing decided is a question answered, not work a
# later session picks up: no cold summary. A third prompt makes it a conversation worth one.
IDLE_SESSION_MAX_PROMPTS = 2


def has_substance(state: dict[str, Any]) -> bool:
    """The session did something (a tool call, an edited file), decided or noted something (a
    tagged lesson, a correction, an open blocker; not a mere hint: "morning! no task, just
    wanted to say …" made a hello the latest session of substance), was compacted, or went on
    for more than IDLE_SESSION_MAX_PROMPTS prompts."""
    return bool(
        state["tool_calls"]
        or state["files"]
        or any(n.get("signal") != "heuristic" for n in state["notes"])
        or state["blockers"]
        or state.get("compact_summary")
        or int(state["prompt_count"]) > IDLE_SESSION_MAX_PROMPTS
    )
