"""What a session has already been given: ids injected by SessionStart (L1/L2) and by earlier
prompts (L3/L4), so no entry is injected twice in one session. Small JSON files under
``<state>/sessions/``, removed after a few days."""

from __future__ import annotations

import json
import os
import re
import time

from . import paths

# Per-session state is deleted after this many days: sessions are rarely resumed later than that,
# and a resumed one merely sees an entry again.
SESSION_STATE_TTL_DAYS = 3


def _session_file(session_id: str) -> str | None:
    safe = re.sub(r"[^A-Za-z0-9_-]", "", session_id)[:80]
    return str(paths.palace_dir("sessions") / f"{safe}.json") if safe else None


def seen_ids(session_id: str | None) -> set[str]:
    path = _session_file(session_id) if session_id else None
    if not path:
        return set()
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return {str(i) for i in data.get("injected", [])}
    except (OSError, ValueError, AttributeError):
        return set()


def remember_ids(session_id: str | None, ids: list[str]) -> None:
    path = _session_file(session_id) if session_id else None
    if not path or not ids:
        return
    from .fsutil import atomic_write_text

    merged = sorted(seen_ids(session_id) | set(ids))
    atomic_write_text(
        paths.palace_dir("sessions") / os.path.basename(path),
        json.dumps({"injected": merged, "updated": int(time.time())}),
    )


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
