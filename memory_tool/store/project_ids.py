"""The machine-independent id of each project key, so that a memory's id is the same on every
machine that holds the file.

Claude Code keys a project's folder by its absolute path (``-home-dana-src-shop`` here,
``-Users-dana-shop`` there), so an id seeded with that key differs between machines: an id in a
handoff, a cold summary or an MCP answer would name nothing on the other one. Sync knows each
project's id on every machine (its repository's normalised origin URL, or an id the user set:
``sync/projects.py``) and records it here; the index seeds the ids of that project's memory
files and cold summaries with it (``tree.Folder.stable_key``). Sync decides, the store reads:
the store never imports sync.

A key keeps its id once recorded (a project whose folder is gone for a while must not have its
memories' ids change back and forth); only a new id for the key replaces it, and one id belongs
to one key (the folder that syncs, when one repository has two folders here).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..base import paths
from ..base.fsutil import atomic_write_text

# Beside the palace's folders, never in one: this machine's own, like the index (it does not
# travel; each machine records its own keys).
FILE = "project-ids.json"


def path() -> Path:
    return paths.state_root() / FILE


def load() -> dict[str, str]:
    """Project key -> machine-independent project id ({} before sync ever ran)."""
    try:
        data = json.loads(path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str) and v}


def record(found: dict[str, str]) -> bool:
    """Add what sync found (key -> id) to what is recorded; True when something changed."""
    before = load()
    ids = dict(before)
    for key, project_id in found.items():
        for other in [k for k, v in ids.items() if v == project_id and k != key]:
            del ids[other]
        ids[key] = project_id
    if ids == before:
        return False
    atomic_write_text(path(), json.dumps(ids, indent=1, sort_keys=True) + "\n")
    return True
