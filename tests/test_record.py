"""@record behaves like the @dataclass features we use."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memory_tool.base.record import FrozenInstanceError, field, record


@record
class Point:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)


@record(frozen=True)
class Key:
    a: str
    b: int = 1


def test_init_defaults_factories_repr_eq() -> None:
    p, q = Point(1), Point(1)
    assert (p.x, p.y, p.tags) == (1, 0, [])
    p.tags.append("t")
    assert q.tags == []  # a fresh list each
    assert Point(1, 2, ["a"]) == Point(x=1, y=2, tags=["a"])
    assert Point(1) != Point(2)
    assert repr(Point(1)) == "Point(x=1, y=0, tags=[])"
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        hash(p)


def test_frozen_is_hashable_and_immutable() -> None:
    k = Key("a")
    assert {k: 1}[Key("a", 1)] == 1
    with pytest.raises(FrozenInstanceError):
        k.a = "b"  # type: ignore[misc]


def test_the_hook_path_does_not_import_dataclasses() -> None:
    code = (
        "import sys; import memory_tool.runtime.dispatch, memory_tool.runtime.prompt_submit, "
        "memory_tool.recall.room, memory_tool.recall.deep, memory_tool.tiers.digest, "
        "memory_tool.tiers.inject, memory_tool.recall.wake, memory_tool.store.index; "
        "print('dataclasses' in sys.modules, 'inspect' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        cwd=str(__import__("pathlib").Path(__file__).resolve().parent.parent),
    )
    assert out.stdout.split() == ["False", "False"], out.stderr
