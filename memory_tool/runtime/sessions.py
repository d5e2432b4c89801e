"""The sessions a hook server serves, and whether any of them may still send a hook.

With HTTP hooks a server that exits mid-session cannot be replaced by the hook itself (Claude
Code, not our process, makes the request): every later hook of that session loses its context
until the next SessionStart. So the server's life follows the sessions it serves, not a timer:
each session is registered with its Claude Code process id (``CLAUDE_PID``, in every command
hook's environment) when its SessionStart reaches the server, forgotten at its SessionEnd, and
counted as live while that process runs. The server exits only once no session is live and
``GRACE_S`` has passed (a ``--resume`` right after a session ended finds it still warm).

A session known only from an HTTP hook (its SessionStart ran before this server started) has no
process id: it counts as live until ``UNKNOWN_PID_LIVE_S`` without a hook from it.

The record is kept in ``<state>/run/sessions.json`` (owner-only), so a successor server (after an
upgrade, or ``MAX_CALLS``) knows the same sessions. Each entry keeps the few environment values
that differ between sessions and that the hooks read (``SESSION_ENV_KEYS``): an HTTP request
carries none, so a session's hooks run with the values its SessionStart had.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any

# After the last live session ended: long enough for `claude --resume` or the next session of
# a working day to find the server warm, short enough not to linger on a machine left alone.
GRACE_S = 10 * 60
# A session seen only over HTTP (no process id to check) that has sent nothing for this long is
# taken as gone: the server's idle limit before sessions were tracked.
UNKNOWN_PID_LIVE_S = 30 * 60
# Environment values a hook reads that belong to the session, not to the machine.
SESSION_ENV_KEYS = (
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_PLUGIN_ROOT",
    "CLAUDE_PLUGIN_DATA",
    "CLAUDE_PID",
    "CLAUDE_CODE_PROJECT_DIR_NAME",
    "TZ",
    "MEMORY_TOOL_TODAY",
    "MEMORY_TOOL_NESTED",
    "MEMORY_TOOL_SEMANTIC",
    "MEMORY_TOOL_NO_BACKGROUND",
)
# More sessions than anyone runs at once; a bound so the record cannot grow without end when
# sessions die without a SessionEnd.
MAX_SESSIONS = 256


def proc_start(pid: int) -> str | None:
    """The process's start time in clock ticks (Linux /proc), or None: with the pid it tells a
    running Claude Code from a new process that reused its pid."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return None
    # Field 22; the command name (field 2) may hold spaces, so count from its closing paren.
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def pid_alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process: the pid was reused
    except OSError:
        return False
    return start is None or proc_start(pid) in (None, start)


class Sessions:
    def __init__(self, path: str) -> None:
        self.path = path
        self.items: dict[str, dict[str, Any]] = {}
        self.last_live = time.time()
        self._load()

    def _load(self) -> None:
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return
        if isinstance(data, dict):
            now = time.time()
            for sid, item in data.items():
                if isinstance(sid, str) and isinstance(item, dict):
                    item["seen"] = now  # a successor: every session gets a fresh chance
                    self.items[sid] = item

    def _save(self) -> None:
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.items, fh)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def touch(self, session_id: str, env: dict[str, str] | None = None) -> None:
        """A hook of ``session_id`` arrived; ``env`` is its environment when it came from a
        command hook (SessionStart, or any hook in command mode)."""
        if not session_id:
            return
        now = time.time()
        item = self.items.get(session_id)
        changed = item is None
        if item is None:
            item = self.items[session_id] = {"pid": None, "start": None, "env": {}}
        item["seen"] = now
        if env is not None:
            kept = {k: env[k] for k in SESSION_ENV_KEYS if k in env}
            pid_text = env.get("CLAUDE_PID", "")
            pid = int(pid_text) if pid_text.isdigit() else None
            if kept != item.get("env") or pid != item.get("pid"):
                item["env"] = kept
                item["pid"] = pid
                item["start"] = proc_start(pid) if pid else None
                changed = True
        if changed:
            self._trim()
            self._save()

    def end(self, session_id: str) -> None:
        if self.items.pop(session_id, None) is not None:
            self._save()

    def env_of(self, session_id: str) -> dict[str, str]:
        item = self.items.get(session_id)
        env = item.get("env") if item else None
        return dict(env) if isinstance(env, dict) else {}

    def live(self, now: float | None = None) -> bool:
        """Whether a session may still send a hook; forgets those that cannot."""
        now = time.time() if now is None else now
        gone = []
        for sid, item in self.items.items():
            pid = item.get("pid")
            if isinstance(pid, int) and pid > 0:
                alive = pid_alive(pid, item.get("start"))
            else:
                alive = now - float(item.get("seen", 0)) < UNKNOWN_PID_LIVE_S
            if not alive:
                gone.append(sid)
        for sid in gone:
            del self.items[sid]
        if gone:
            self._save()
        if self.items:
            self.last_live = now
        return bool(self.items)

    def may_exit(self, last_call: float, now: float | None = None) -> bool:
        """No session is live, and none was (nor was there a call) for ``GRACE_S``."""
        now = time.time() if now is None else now
        if self.live(now):
            return False
        return now - max(self.last_live, last_call) >= GRACE_S

    def _trim(self) -> None:
        while len(self.items) > MAX_SESSIONS:
            oldest = min(self.items, key=lambda s: float(self.items[s].get("seen", 0)))
            del self.items[oldest]
