"""The sync a hook starts and does not wait for (``python -m memory_tool.sync.detached``).

``end [--session ID] [--cwd DIR]``: the Scribe's final pass over the session first (its cold
summary is memory that should travel), then a full sync and a sync of every team palace.
``start [--cwd DIR]``: fetch; merge and bring memory here only when the remote has something new.

Fails open like a hook: errors go to the hook log and to the sync record (``sync status`` and
``doctor`` show them); the next run retries.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..base.errors import SyncError
from ..base.log import log_error
from . import personal, team


def run(kind: str, cwd: str = "", session: str = "") -> int:
    pull_only = kind == "start"
    if kind == "end" and session:
        try:
            from ..tiers.scribe import run as scribe

            scribe(session, final=True)
        except Exception as exc:  # noqa: BLE001 - a failed summary must not stop the sync
            log_error("scribe", exc)
    where = cwd if cwd and os.path.isdir(cwd) else None
    if personal.is_set_up():
        try:
            personal.sync(where, interactive=False, pull_only=pull_only)
        except Exception as exc:  # noqa: BLE001 - recorded for `sync status`; retried next time
            log_error("sync", str(exc) if isinstance(exc, SyncError) else exc)
    for name in team.names():
        try:
            team.sync_team(name, interactive=False, pull_only=pull_only)
        except Exception as exc:  # noqa: BLE001
            log_error(f"sync team {name}", str(exc))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memory_tool.sync.detached")
    parser.add_argument("kind", choices=("start", "end"))
    parser.add_argument("--cwd", default="")
    parser.add_argument("--session", default="")
    args = parser.parse_args(argv)
    try:
        return run(args.kind, args.cwd, args.session)
    except BaseException as exc:  # noqa: BLE001 - a detached run never reports but to the log
        log_error("sync", exc)
        return 0


if __name__ == "__main__":
    sys.exit(main())
