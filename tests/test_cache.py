"""Derived JSON beside the state root, and the in-process memo the hook server relies on."""

from __future__ import annotations

import os
from pathlib import Path

from memory_tool.base import cache, paths
from memory_tool.base.resources import template_path
from memory_tool.store.rooms import compiled_rooms, rooms_yaml


def test_a_value_is_built_once_while_its_sources_stay_the_same(tmp_path: Path) -> None:
    source = tmp_path / "src.yaml"
    source.write_text("a: 1\n")
    builds: list[int] = []

    def build() -> dict[str, int]:
        builds.append(1)
        return {"n": len(builds)}

    assert cache.cached_json("t", [source], build) == {"n": 1}
    # The copy on disk is gone: a long-lived process answers from memory all the same.
    cache.cache_path("t").write_text("not json")
    assert cache.cached_json("t", [source], build) == {"n": 1}
    assert len(builds) == 1
    source.write_text("a: 22\n")  # a change of the source is always seen
    assert cache.cached_json("t", [source], build) == {"n": 2}
    cache.forget("t")
    assert not cache.cache_path("t").exists()
    assert cache.cached_json("t", [source], build) == {"n": 3}


def test_rooms_are_decoded_once_until_rooms_yaml_changes() -> None:
    paths.state_root().mkdir(parents=True, exist_ok=True)
    rooms_yaml().write_text("rooms:\n  billing:\n    keywords: [invoice]\n")
    first = compiled_rooms()
    assert compiled_rooms() is first
    rooms_yaml().write_text("rooms:\n  billing:\n    keywords: [invoice, refund]\n")
    again = compiled_rooms()
    assert again is not first and "refund" in again.terms


def test_without_a_rooms_yaml_a_changed_template_is_compiled_again() -> None:
    # No rooms.yaml of the user's: the shipped template is compiled, and an upgrade that
    # changes it (here: its mtime) must reach the next prompt rather than a stale compile.
    assert not rooms_yaml().exists()
    first = compiled_rooms()
    assert compiled_rooms() is first and "docker" in first.terms
    template = template_path("rooms.yaml")
    st = os.stat(template)
    try:
        os.utime(template, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert compiled_rooms() is not first
    finally:
        os.utime(template, ns=(st.st_atime_ns, st.st_mtime_ns))
