"""What a session has already been given: ids injected by SessionStart (L1/L2) and by earlier
prompts (L3/L4), so no entry is injected twice in one session, and the room its last prompt was
about, so a follow-up that names no topic can recall it again (memory_tool/followup.py). Besides
entry ids the record holds markers for the tiers' pieces (``handoff:…``, ``hot:…``): whatever it
holds, the conversation holds, until a compaction (what Claude Code keeps then:
docs/tiers.md#what-the-client-keeps). Small JSON files under ``<state>/sessions/``, removed
after a few days."""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
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
    held = pending_ids(session_id, state)
    if not ids and room is UNCHANGED and (pending or not held):
        return
    from ..base.fsutil import atomic_write_text

    previous = last_room(state)
    if not ids and room is None and previous is None and not held:
        return  # a no-room prompt in a session with no room: nothing to write
    when = int(now if now is not None else time.time())
    data: dict[str, Any] = {"injected": sorted(seen_ids(session_id, state) | set(ids))}
    if pending:
        data["pending"] = sorted(held | set(ids))
    if room is UNCHANGED:
        if previous:
            data["room"], data["room_at"] = previous
    elif room:
        data["room"], data["room_at"] = room, when
    data["updated"] = when
    # A read-only state folder costs the no-repeat memory, never the injection itself.
    with contextlib.suppress(OSError):
        atomic_write_text(paths.palace_dir("sessions") / os.path.basename(path), json.dumps(data))


def reset_ids(session_id: str | None, ids: list[str]) -> None:
    """The session's context was replaced (compaction): only what SessionStart gave since the
    last prompt (``pending_ids``, which compaction keeps) and ``ids`` are in it now. The room of
    its last prompt is kept (a follow-up still continues it)."""
    path = _session_file(session_id) if session_id else None
    if not path:
        return
    from ..base.fsutil import atomic_write_text

    state = session_state(session_id)
    data: dict[str, Any] = {k: v for k, v in state.items() if k in ("room", "room_at")}
    kept = sorted(pending_ids(session_id, state) | set(ids))
    data["injected"] = kept
    data["pending"] = kept  # the compact SessionStart's context waits for the next prompt too
    data["updated"] = int(time.time())
    with contextlib.suppress(OSError):
        atomic_write_text(paths.palace_dir("sessions") / os.path.basename(path), json.dumps(data))


def forget_old_sessions(now: float | None = None) -> int:
    """Delete per-session state older than SESSION_STATE_TTL_DAYS; returns how many."""
    folder = paths.palace_dir("sessions")
    limit = (now or time.time()) - SESSION_STATE_TTL_DAYS * 86_400
    removed = 0
    try:
        with os.scandir(folder) as it:
            for item in it:
                if item.name.endswith(".json") and item.stat().st_mtime < limit:
                    os.unlink(item.path)
                    removed += 1
    except OSError:
        pass
    return removed


IDS_IN_TEXT = re.compile(r"\[([a-z]-[0-9a-f]{6,12}|[A-Za-z0-9][A-Za-z0-9_.-]{0,63})\]")


def ids_in(text: str) -> list[str]:
    """Entry ids an injected text carries (our lines show them as ``[p-3fa9c1]``)."""
    return [m for m in IDS_IN_TEXT.findall(text) if re.match(r"^[a-z]-[0-9a-f]{6,12}$", m)]
