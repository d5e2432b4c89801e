"""Work a hook starts and does not wait for: the full index refresh (and embedding what it
found, when the semantic extra is in use), run as a detached process.

``python -m memory_tool.runtime.background`` runs one refresh; a lock file makes a second one
that starts meanwhile exit at once.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ..base import paths
from ..base.log import log_error

# Entries the detached refresh embeds per run when the semantic extra is in use (~40 ms each on
# a laptop core): memories Claude Code wrote during a session get their vectors by the next one,
# and a large backlog is spread over several runs instead of one long burst.
BACKGROUND_EMBED_MAX = 500


def spawn_background_refresh() -> bool:
    """Start a detached full index refresh, so L3/L4 catch up without the user waiting;
    whether one was started."""
    if os.environ.get("MEMORY_TOOL_NO_BACKGROUND"):
        return False
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "memory_tool.runtime.background"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        log_error("background-refresh", exc)
        return False
    return True


def background_refresh() -> int:
    from ..base.fsutil import file_lock
    from ..store.index import open_index

    try:
        with file_lock(paths.state_root() / ".refresh.lock", blocking=False) as got:
            if got:
                idx = open_index()
                try:
                    idx.refresh()
                    _embed_some(idx)
                finally:
                    idx.close()
    except Exception as exc:  # noqa: BLE001
        log_error("background-refresh", exc)
    return 0


def _embed_some(idx: Any) -> None:
    from ..store import semantic

    if semantic.usable(idx):  # installed, switched on, and `memory-tool index` stored vectors
        semantic.update(idx, limit=BACKGROUND_EMBED_MAX)


if __name__ == "__main__":
    sys.exit(background_refresh())
