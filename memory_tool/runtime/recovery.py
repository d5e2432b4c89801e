"""A damaged index on the prompt path: set it aside, and answer this prompt anyway.

SQLite reports damage on first use ("database disk image is malformed" when a query reaches a
garbled page), not when the file is opened, and a full integrity check costs a read of the
whole file on every prompt. So the prompt hook uses the index as usual and, on the first such
error, sets the file aside (one line in the hook log), starts the detached rebuild and waits for
it a little; if it is not done in time, this prompt is answered from an index built in memory
from the files. Later prompts of the session do the same until the rebuild has finished.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.log import quarantine
from .background import spawn_background_refresh

if TYPE_CHECKING:
    from ..store.index import Index

# How long a prompt waits for the detached rebuild before reading the files itself: a rebuild of
# a few hundred memories takes well under a second after the process starts (~0.3 s), and
# UserPromptSubmit's timeout (10 s) must leave room for the reading of the files after it.
CATCH_UP_S = 2.0
# Between looks at whether the rebuild has finished (one indexed read of the meta table each).
CATCH_UP_POLL_S = 0.05
# Reading the files into memory stops starting new folders after this: a partial answer beats a
# hook killed at its timeout.
FROM_FILES_S = 4.0


def after_damage(idx: Index, cwd: str | Path, exc: BaseException) -> Index:
    """``idx`` failed with damage (``exc``) mid-use: set it aside and give the index to answer
    from."""
    from ..store.index import open_index

    idx.close()
    quarantine(idx.path, exc)
    return caught_up(open_index(), cwd)


def caught_up(idx: Index, cwd: str | Path) -> Index:
    """The rebuilt ``idx`` once the detached rebuild has finished within CATCH_UP_S, or else an
    index read from the files into memory."""
    from ..store.index import Index

    if spawn_background_refresh():  # a second one, while one runs, exits at once
        deadline = time.monotonic() + CATCH_UP_S
        while time.monotonic() < deadline:
            if idx.meta("last_full_refresh"):
                return idx
            time.sleep(CATCH_UP_POLL_S)
    idx.close()
    return Index.from_files(cwd, time.monotonic() + FROM_FILES_S)
