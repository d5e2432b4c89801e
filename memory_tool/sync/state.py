"""What sync keeps beside its repositories: a lock per repository, and a small JSON record per
repository of the last run (when, whether it worked, what it redacted, held back or had to
keep twice) that ``sync status``, ``team list`` and ``doctor`` report.

Everything here lives under ``<state>/sync/`` and is this machine's own: it never travels.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.errors import SyncError
from ..base.fsutil import atomic_write_text, file_lock
from ..hygiene.report import PROBLEM, Finding

SYNC_DIR = "sync"
# A second sync waits this long for the one running (a first sync of a large palace takes
# tens of seconds); after that it says so and leaves the work to the next run.
LOCK_WAIT_S = 300
LOCK_POLL_S = 0.2


def sync_dir() -> Path:
    return paths.state_root() / SYNC_DIR


def record_path(name: str) -> Path:
    """``personal`` or ``team-<name>``: the record of that repository's runs."""
    return sync_dir() / f"{name}.json"


@contextlib.contextmanager
def locked(name: str, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """One run at a time per repository, across processes (a detached run and a command)."""
    deadline = time.monotonic() + wait_s
    path = sync_dir() / f".{name}.lock"
    while True:
        with file_lock(path, blocking=False) as got:
            if got:
                yield
                return
        if time.monotonic() >= deadline:
            raise SyncError(
                f"another sync of {name} has been running for over {int(wait_s)} s; nothing was "
                "changed by this one. Try again when it is done."
            )
        time.sleep(LOCK_POLL_S)


def load(name: str) -> dict[str, Any]:
    try:
        data = json.loads(record_path(name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(name: str, data: dict[str, Any]) -> None:
    atomic_write_text(record_path(name), json.dumps(data, indent=1, sort_keys=True) + "\n")


def update(name: str, **values: Any) -> dict[str, Any]:
    data = load(name)
    data.update(values)
    save(name, data)
    return data


def finish(name: str, ok: bool, message: str, **values: Any) -> None:
    """Record how a run ended (the message of a failure is what status and doctor show)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    last = {"at": stamp, "ok": ok, "message": message, "pid": os.getpid()}
    update(name, last=last, running=None, **({"last_ok": stamp} if ok else {}), **values)


def names() -> list[str]:
    """The records there are: ``personal`` and ``team-<name>``."""
    try:
        stems = (p.stem for p in sync_dir().glob("*.json"))
        return sorted(s for s in stems if s == "personal" or s.startswith("team-"))
    except OSError:
        return []


def sync_findings() -> list[Finding]:
    """A finding per repository whose last sync failed (doctor reports them)."""
    out = []
    for name in names():
        last = load(name).get("last")
        if isinstance(last, dict) and last.get("ok") is False:
            what = "personal sync" if name == "personal" else name.replace("team-", "team ", 1)
            out.append(
                Finding(
                    "sync",
                    PROBLEM,
                    f"the last {what} failed ({last.get('at')}): {last.get('message')}",
                    path=str(record_path(name)),
                )
            )
    return out
