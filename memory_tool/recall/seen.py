"""What a session has already been given: ids injected by SessionStart (L1/L2) and by earlier
prompts (L3/L4), so no entry is injected twice in one session, and the room its last prompt was
about, so a follow-up that names no topic can recall it again (memory_tool/followup.py). Besides
entry ids the record holds markers for the tiers' pieces (``handoff:…``, ``hot:…``): whatever it
holds, the conversation holds, until a compaction (what Claude Code keeps then:
docs/tiers.md#what-the-client-keeps). Small JSON files under ``<state>/sessions/``, removed
after a few days."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from typing import Any

from ..base import paths


class Unchanged:
    """Marker type: leave the session's last room as it is."""


UNCHANGED = Unchanged()

# Per-session state is deleted after this many days: sessions are rarely resumed later than that,
# and a resumed one merely sees an entry again.
SESSION_STATE_TTL_DAYS = 3


def _session_file(session_id: str) -> str | None:
    safe = re.sub(r"[^A-Za-z0-9_-]", "", session_id)[:80]
    return str(paths.palace_dir("sessions") / f"{safe}.json") if safe else None


def session_state(session_id: str | None) -> dict[str, Any]:
    """The session's state file as a dict ({} when there is none or it is unreadable)."""
    path = _session_file(session_id) if session_id else None
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def seen_ids(session_id: str | None, state: dict[str, Any] | None = None) -> set[str]:
    data = session_state(session_id) if state is None else state
    injected = data.get("injected", [])
    return {str(i) for i in injected} if isinstance(injected, list) else set()


def last_room(state: dict[str, Any]) -> tuple[str, float] | None:
    """(room, time) of the session's last prompt that had a room, if recorded."""
    room, at = state.get("room"), state.get("room_at")
    if isinstance(room, str) and room and isinstance(at, (int, float)):
        return room, float(at)
    return None


def seen_key(session_id: str, agent_id: str = "") -> str:
    """Whose context a hook adds to: the session's, or one subagent's (a subagent's hooks carry
    the parent's session id and their own agent id; what either was given is not in the
    other's context)."""
    return f"{session_id}-agent-{agent_id}" if session_id and agent_id else session_id


# Keys of a session's state that only ``remember_ids``/``reset_ids`` write (the rest, such as
# the tool-recall spend, are kept as they are).
_RECALL_KEYS = ("injected", "pending", "room", "room_at", "updated")


def pending_ids(session_id: str | None, state: dict[str, Any] | None = None) -> set[str]:
    """What SessionStart gave since the session's last prompt. Claude Code (2.1.332) sends a
    SessionStart context with the next prompt; a compaction that comes first (``claude -p
    /compact --resume``) keeps it, while it drops everything already sent."""
    data = session_state(session_id) if state is None else state
    pending = data.get("pending", [])
    return {str(i) for i in pending} if isinstance(pending, list) else set()


def remember_ids(
    session_id: str | None,
    ids: list[str],
    room: str | None | Unchanged = UNCHANGED,
    now: float | None = None,
    *,
    pending: bool = False,
) -> None:
    """Add ``ids`` to what the session has seen; ``room`` (when given) replaces its last room,
    ``None`` clears it. ``pending``: SessionStart gave them (see ``pending_ids``); any other
    call is a prompt, which sends what was pending."""
    path = _session_file(session_id) if session_id else None
    if not path:
        return
    state = session_state(session_id)
    if not ids and room is UNCHANGED and (pending or not pending_ids(session_id, state)):
        return

    def change(state: dict[str, Any]) -> bool:
        held = pending_ids(session_id, state)
        previous = last_room(state)
        if not ids and room is None and previous is None and not held:
            return False  # a no-room prompt in a session with no room: nothing to write
        when = int(now if now is not None else time.time())
        injected = sorted(seen_ids(session_id, state) | set(ids))
        for key in _RECALL_KEYS:
            state.pop(key, None)
        state["injected"] = injected
        if pending:
            state["pending"] = sorted(held | set(ids))
        if room is UNCHANGED:
            if previous:
                state["room"], state["room_at"] = previous
        elif room:
            state["room"], state["room_at"] = room, when
        state["updated"] = when
        return True

    update_state(session_id, change)


# The rooms tool-level recall gave (recall.touch.ROOMS_KEY): after compaction they may come again.
_TOOL_ROOMS_KEY = "tool_rooms"


def reset_ids(session_id: str | None, ids: list[str]) -> None:
    """The session's context was replaced (compaction): only what SessionStart gave since the
    last prompt (``pending_ids``, which compaction keeps) and ``ids`` are in it now. The room of
    its last prompt is kept (a follow-up still continues it), and so is what the session spent
    on tool-level recall (its budget is for the whole session)."""

    def change(state: dict[str, Any]) -> bool:
        kept = sorted(pending_ids(session_id, state) | set(ids))
        state["injected"] = kept
        state["pending"] = kept  # the compact SessionStart's context waits for the next prompt
        state.pop(_TOOL_ROOMS_KEY, None)
        state["updated"] = int(time.time())
        return True

    update_state(session_id, change)


def update_state(
    session_id: str | None, change: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """Read the session's state, let ``change`` edit it, write it back when it says so, all
    under the session's lock: tool hooks of one turn run in parallel (Claude reads several files
    at once) and must not each give the same memory. Returns the state."""
    path = _session_file(session_id) if session_id else None
    if not path:
        state: dict[str, Any] = {}
        change(state)
        return state
    from pathlib import Path

    from ..base.fsutil import atomic_write_text, file_lock

    folder = paths.palace_dir("sessions")
    name = os.path.basename(path)
    # A read-only state folder costs the no-repeat memory, never the injection itself.
    try:
        with file_lock(Path(folder) / f"{name[:-5]}.lock"):
            state = session_state(session_id)
            if change(state):
                atomic_write_text(folder / name, json.dumps(state))
    except OSError:
        state = session_state(session_id)
        change(state)
    return state


def forget_old_sessions(now: float | None = None) -> int:
    """Delete per-session state older than SESSION_STATE_TTL_DAYS; returns how many."""
    folder = paths.palace_dir("sessions")
    limit = (now or time.time()) - SESSION_STATE_TTL_DAYS * 86_400
    removed = 0
    try:
        with os.scandir(folder) as it:
            for item in it:
                old = item.name.endswith((".json", ".lock")) and item.stat().st_mtime < limit
                if old:
                    os.unlink(item.path)
                    removed += item.name.endswith(".json")
    except OSError:
        pass
    return removed


IDS_IN_TEXT = re.compile(r"\[([a-z]-[0-9a-f]{6,12}|[A-Za-z0-9][A-Za-z0-9_.-]{0,63})\]")


def ids_in(text: str) -> list[str]:
    """Entry ids an injected text carries (our lines show them as ``[p-3fa9c1]``)."""
    return [m for m in IDS_IN_TEXT.findall(text) if re.match(r"^[a-z]-[0-9a-f]{6,12}$", m)]


# --- facts, whatever carries them ------------------------------------------------------------
# One fact reaches a request once: the same rule in the brief, in the latest cold summary and in
# three matching summaries is one fact, not five. A line's facts are its sentences, normalised
# (ids, bullets, labels, case and punctuation aside); the session's record holds a short key per
# sentence given (``fact:`` + crc32), so a later block knows what the request carries already.
# "Done." or "Files changed:" is no fact: two lines that share one still say different things.
FACT_MIN_WORDS = 3
_FACT_IDS = re.compile(r"\[[a-z]-[0-9a-f]{6,12}\]")
_FACT_LEAD = re.compile(
    r"^(?:[-*>#\s]+|(?:user|decision|blocker|recent action|current task|task|result)\s*:\s*)+",
    re.I,
)
_FACT_SPLIT = re.compile(r"(?<=[.!?;])\s+")
_FACT_WORD = re.compile(r"[a-z0-9]+")


def fact_keys(text: str) -> set[str]:
    """The keys of the facts (sentences) ``text`` carries, line by line."""
    # A prompt asks for the keys of its room recall's lines, then of its whole answer, which
    # holds them again: within a hook call each line is read once (0.9 ms a prompt before).
    memo = paths.call_memo("fact_keys")
    keys: set[str] = set()
    for line in text.splitlines():
        found = memo.get(line) if memo is not None else None
        if found is None:
            found = _line_fact_keys(line)
            if memo is not None:
                memo[line] = found
        keys.update(found)
    return keys


def _line_fact_keys(line: str) -> tuple[str, ...]:
    import zlib  # a C module: a fraction of a millisecond, and only when there is text

    if "[" in line:
        line = _FACT_IDS.sub(" ", line)
    body = line.strip()
    lead = _FACT_LEAD.match(body)  # anchored: what ``sub`` would take off the start
    if lead:
        body = body[lead.end() :]
    keys = []
    for sentence in _FACT_SPLIT.split(body):
        words = _FACT_WORD.findall(sentence.lower())
        if len(words) >= FACT_MIN_WORDS:
            keys.append(f"fact:{zlib.crc32(' '.join(words).encode()):08x}")
    return tuple(keys)


def carried(line: str, held: set[str]) -> bool:
    """Every fact of ``line`` is among ``held`` (a line with no fact is never carried)."""
    keys = fact_keys(line)
    return bool(keys) and keys <= held
