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
        quarantine(paths.index_file())


def quarantine(db_path: Path) -> Path:
    """Move a database that cannot be read (and its -wal and -shm files) aside; returns where."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = db_path.with_name(f"{db_path.name}.corrupt-{stamp}-{os.getpid()}")
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(db_path) + suffix)
        if src.exists():
            os.replace(src, Path(str(target) + suffix))
    # Nothing is lost (the files are the truth), but a person wondering why recall was slow
    # or where the old database went finds it in the hook log.
    log_error("index", f"{db_path} could not be read: moved to {target}, rebuilt from the files")
    return target
