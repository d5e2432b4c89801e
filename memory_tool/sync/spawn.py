"""Starting a sync from a hook without waiting for it.

SessionEnd starts ``memory_tool.sync.detached end`` (the Scribe's cold summary first, then the
sync, so the summary travels too); SessionStart starts ``detached start`` (fetch, and pull when
the remote has something new) at most every ``START_INTERVAL_S``. Both only once a remote is set
up and ``sync.auto`` / ``sync.on_start`` are on in config.yaml.

Hook path: this module imports ``os`` and ``sys`` and our ``base`` only (no subprocess, no
git): git runs in the detached process, never in the hook. When sync is not set up the cost is
two ``stat`` calls.
"""

from __future__ import annotations

import os
import sys

from ..base import paths
from ..base.log import log_error

# SessionStart fires on startup, resume, clear and compaction: one pull in this many seconds
# is plenty (a teammate's memory arrives within minutes, not per prompt).
START_INTERVAL_S = 300
START_STAMP = ".last-start"


def _set_up() -> bool:
    root = paths.state_root()
    if os.path.isdir(root / "sync" / "repo" / ".git"):
        return True
    try:
        with os.scandir(root / "teams") as it:
            return any(not e.name.startswith(".") and e.is_dir() for e in it)
    except OSError:
        return False


def wanted(kind: str) -> bool:
    """Whether a detached sync of ``kind`` (``start`` or ``end``) should run now."""
    if os.environ.get("MEMORY_TOOL_NO_BACKGROUND") or not _set_up():
        return False
    from ..base.config import load_config

    cfg = load_config().get("sync", {})
    if not cfg.get("auto", True) or (kind == "start" and not cfg.get("on_start", True)):
        return False
    if kind == "start":
        import time

        stamp = paths.state_root() / "sync" / START_STAMP
        try:
            if time.time() - os.stat(stamp).st_mtime < START_INTERVAL_S:
                return False
        except OSError:
            pass
        try:
            os.makedirs(stamp.parent, mode=0o700, exist_ok=True)
            os.close(os.open(stamp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
            os.utime(stamp)
        except OSError:
            return False
    return True


def spawn_sync(kind: str, *, cwd: str = "", session: str = "") -> bool:
    """Start a detached sync of ``kind``; True when one was started (SessionEnd then leaves
    the Scribe to it). Never raises: a hook must not fail for a sync. ``posix_spawn`` in a new
    session, as the hook server is started: importing subprocess would cost the hook more."""
    try:
        if not wanted(kind):
            return False
        args = [sys.executable, "-m", "memory_tool.sync.detached", kind]
        if cwd:
            args += ["--cwd", cwd]
        if session:
            args += ["--session", session]
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            actions = [(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)]
            os.posix_spawn(sys.executable, args, env, file_actions=actions, setsid=True)
        finally:
            os.close(devnull)
    except Exception as exc:  # noqa: BLE001 - fail open, like the hook that asked
        log_error("sync", exc)
        return False
    return True
