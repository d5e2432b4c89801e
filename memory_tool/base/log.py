"""The hook log, and setting a damaged index aside.

Every fail-open path (a hook, the hook server, the detached refresh, the Scribe) reports here:
errors go to ``<state>/logs/hooks.log`` and nowhere else, since a hook must print nothing broken.
This is also where a damaged index is moved aside for a rebuild: the files are the truth, so
nothing is lost, and the next run re-reads them instead of failing the same way on every prompt.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from . import paths

# The hook log is for diagnosis, not history: rotate it at this size.
MAX_LOG_BYTES = 1024 * 1024
# Set-aside copies of a damaged index kept for a post-mortem (the newest ones); older copies are
# deleted. Each is as big as the index (about 1 MB for a year of memory), and nothing in them is
# needed: the files are the truth.
SET_ASIDE_KEEP = 3
SET_ASIDE_MARK = ".corrupt-"


def log_error(event: str, exc: BaseException | str) -> None:
    """Append to the hook log; never raises. A plain ``sqlite3.DatabaseError`` also sets the
    index aside (``_set_aside_damaged_index``)."""
    try:
        from .fsutil import ensure_dir

        path = paths.log_file()
        ensure_dir(path.parent)
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, path.with_suffix(".log.1"))
        if isinstance(exc, BaseException):
            import traceback

            detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        else:
            detail = exc + "\n"
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} {event} pid={os.getpid()} {detail}")
    except Exception:  # noqa: BLE001 - logging must never be the thing that breaks a hook
        pass
    if isinstance(exc, BaseException):
        _set_aside_damaged_index(exc)


def _set_aside_damaged_index(exc: BaseException) -> None:
    """A plain sqlite3.DatabaseError ("database disk image is malformed") means index.db is
    damaged where opening it did not look (a truncated file): move it aside so the next run
    rebuilds it from the files, instead of failing the same way on every prompt and every
    session end."""
    import sqlite3

    if type(exc) is not sqlite3.DatabaseError:
        return
    with contextlib.suppress(Exception):  # best effort: the error is already logged
        quarantine(paths.index_file(), exc)


def quarantine(db_path: Path, reason: BaseException | str = "") -> Path:
    """Move a database that cannot be read (and its -wal and -shm files) aside; returns where.
    ``reason``: SQLite's error, for the log line."""
    now = time.time()
    # Microseconds too: the names sort in the order the copies were made (SET_ASIDE_KEEP).
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + f".{int(now * 1e6) % 10**6:06d}"
    target = db_path.with_name(f"{db_path.name}.corrupt-{stamp}-{os.getpid()}")
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(db_path) + suffix)
        if src.exists():
            os.replace(src, Path(str(target) + suffix))
    dropped = _prune_set_aside(db_path)
    # Nothing is lost (the files are the truth), but a person wondering why recall was slow
    # or where the old database went finds it in the hook log: one line.
    note = f" ({dropped} older copies deleted)" if dropped else ""
    why = f" ({reason})" if str(reason) else ""
    log_error(
        "index",
        f"{db_path} could not be read{why}: moved to {target}, rebuilt from the files{note}",
    )
    return target


def set_aside_copies(db_path: Path) -> list[Path]:
    """The set-aside copies of a damaged ``db_path``, oldest first (their names carry the time
    they were set aside)."""
    prefix = db_path.name + SET_ASIDE_MARK
    try:
        names = os.listdir(db_path.parent)
    except OSError:
        return []
    return [
        db_path.parent / n
        for n in sorted(names)
        if n.startswith(prefix) and not n.endswith(("-wal", "-shm"))
    ]


def _prune_set_aside(db_path: Path) -> int:
    """Delete all but the newest SET_ASIDE_KEEP copies (and their -wal and -shm files)."""
    old = set_aside_copies(db_path)[:-SET_ASIDE_KEEP]
    for copy in old:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(str(copy) + suffix)
    return len(old)
