"""Derived JSON kept beside the state root so hooks never parse YAML when nothing changed.

A value is rebuilt when any of its source files changes (mtime or size) or appears/disappears.
The files stay the truth: deleting ``.cache/`` only costs one rebuild.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from . import paths
from .fsutil import atomic_write_text


def _fingerprint(sources: Iterable[Path]) -> list[list[Any]]:
    out: list[list[Any]] = []
    for src in sources:
        try:
            st = os.stat(src)
            out.append([str(src), st.st_mtime_ns, st.st_size])
        except OSError:
            out.append([str(src), None, None])
    return out


def cache_path(name: str) -> Path:
    return paths.state_root() / ".cache" / f"{name}.json"


def cached_json(name: str, sources: Iterable[Path], build: Callable[[], Any]) -> Any:
    fingerprint = _fingerprint(sources)
    target = cache_path(name)
    try:
        with open(target, encoding="utf-8") as fh:
            stored = json.load(fh)
        if stored.get("fingerprint") == fingerprint:
            return stored["value"]
    except (OSError, ValueError, AttributeError, KeyError):
        pass
    value = build()
    # A read-only state root still works, just without the shortcut.
    with contextlib.suppress(OSError):
        atomic_write_text(target, json.dumps({"fingerprint": fingerprint, "value": value}))
    return value
