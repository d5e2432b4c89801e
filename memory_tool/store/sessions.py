"""Past Claude Code sessions as searchable entries (L4).

Transcripts live at ``<config>/projects/<project>/<session>.jsonl`` and only grow. Each is read
from the byte offset where the last read stopped, so a 1 GB history is read once, and after that
only what was appended. What the person typed and what Claude answered become entries of type
``session`` (tool output and thinking are left out: they are bulky and rarely what one searches
for); secrets are redacted and our own injected context is dropped before anything is stored.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..base import paths

if TYPE_CHECKING:
    from .entry import Entry
    from .transcript import Event

# Messages shorter than this ("ok", "thanks") carry nothing worth finding again.
MIN_CHUNK_CHARS = 20
# A message is stored up to this many characters: enough for the question or answer itself; a
# pasted log beyond it is noise for search and cost for the index.
MAX_CHUNK_CHARS = 4_000
# Files read per refresh call are bounded only by what changed; this bounds one write batch.
BATCH = 500


def transcript_files() -> Iterator[tuple[Path, str]]:
    """(path, project folder name) of every session transcript."""
    root = paths.projects_dir()
    try:
        with os.scandir(root) as it:
            projects = sorted(e.name for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return
    for project in projects:
        try:
            with os.scandir(root / project) as it:
                names = sorted(e.name for e in it if e.name.endswith(".jsonl") and e.is_file())
        except OSError:
            continue
        for name in names:
            yield root / project / name, project


def session_chunk(event: Event, path: Path, project: str) -> Entry | None:
    """One message of a transcript as an entry of type ``session`` (None: nothing to keep)."""
    from ..base.privacy import sanitize, strip_injected
    from .entry import Entry, make_id

    if event.kind not in ("user", "assistant") or event.is_sidechain or event.is_meta:
        return None
    text = sanitize(strip_injected(event.text)).strip()
    if len(text) < MIN_CHUNK_CHARS:
        return None
    text = text[:MAX_CHUNK_CHARS]
    anchor = event.uuid or hashlib.sha1(f"{event.timestamp}{text}".encode()).hexdigest()[:16]
    stable_key = f"session:{path.stem}/{anchor}"
    role = "person" if event.kind == "user" else "claude"
    day = event.timestamp[:10] if len(event.timestamp) >= 10 else ""
    first = " ".join(text.split())[:60]
    return Entry(
        id=make_id("session", stable_key),
        path=f"{path}#{anchor}",
        source="session",
        project=project,
        type="session",
        name=first,
        description=f"{role} in session {path.stem[:8]}" + (f" on {day}" if day else ""),
        body=text,
        created=day,
        importance=2,
        extra={"stable_key": stable_key, "session_id": event.session_id or path.stem, "role": role},
    )
