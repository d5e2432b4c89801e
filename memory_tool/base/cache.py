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


# A long-lived process (the hook server) asks for the same values on every prompt: it keeps the
# last one per name and re-reads the JSON only when the sources' fingerprint changed. Callers
# must treat a returned value as read-only.
_MEMO: dict[str, tuple[list[list[Any]], Any]] = {}


def cached_json(name: str, sources: Iterable[Path], build: Callable[[], Any]) -> Any:
    fingerprint = _fingerprint(sources)
    memo = _MEMO.get(name)
    if memo is not None and memo[0] == fingerprint:
        return memo[1]
    target = cache_path(name)
    try:
        with open(target, encoding="utf-8") as fh:
            stored = json.load(fh)
        if stored.get("fingerprint") == fingerprint:
            _MEMO[name] = (fingerprint, stored["value"])
            return stored["value"]
    except (OSError, ValueError, AttributeError, KeyError):
        pass
    value = build()
    # A read-only state root still works, just without the shortcut.
    with contextlib.suppress(OSError):
        atomic_write_text(target, json.dumps({"fingerprint": fingerprint, "value": value}))
    _MEMO[name] = (fingerprint, value)
    return value


def forget(name: str) -> None:
    """Drop a cached value, on disk and in this process: the next call rebuilds it."""
    _MEMO.pop(name, None)
    cache_path(name).unlink(missing_ok=True)
