"""``@record``: the part of ``@dataclass`` the hook path uses, without its import cost.

Importing :mod:`dataclasses` pulls in :mod:`inspect` (and with it ``ast``, ``dis``,
``tokenize``…): 10-20 ms, as much as starting the interpreter, paid by every hook process for
every prompt. ``record`` generates the same ``__init__``/``__repr__``/``__eq__`` (and
``__hash__`` when frozen) from the class annotations, in a few lines. Type checkers see it as a
dataclass through ``dataclass_transform`` (PEP 681). Slow paths (CLI, Scribe) may keep using
:mod:`dataclasses`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

T = TypeVar("T")
C = TypeVar("C", bound=type)

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_kwargs: Any) -> Callable[[T], T]:
        return lambda fn: fn


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], T]) -> T:
    """A mutable default, made fresh for each instance (like ``dataclasses.field``)."""
    return _Factory(default_factory)  # type: ignore[return-value]


class FrozenInstanceError(AttributeError):
    pass


@overload
def record(cls: C, /) -> C: ...
@overload
def record(*, frozen: bool = False) -> Callable[[C], C]: ...


@dataclass_transform(field_specifiers=(field,))
def record(cls: C | None = None, /, *, frozen: bool = False) -> C | Callable[[C], C]:
    def wrap(c: C) -> C:
        return _build(c, frozen)

    return wrap if cls is None else wrap(cls)


def _build(cls: C, frozen: bool) -> C:
    names = list(cls.__dict__.get("__annotations__", {}))
    globs: dict[str, Any] = {"MISSING": MISSING, "_set": object.__setattr__}
    params, lines = [], []
    for name in names:
        default = cls.__dict__.get(name, MISSING)
        if isinstance(default, _Factory):
            globs[f"_f_{name}"] = default.make
            params.append(f"{name}=MISSING")
            value = f"_f_{name}() if {name} is MISSING else {name}"
            delattr(cls, name)
        elif default is MISSING:
            params.append(name)
            value = name
        else:
            globs[f"_d_{name}"] = default
            params.append(f"{name}=_d_{name}")
            value = name
        lines.append(
            f"    _set(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}"
        )
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(lines) or "    pass")
    local: dict[str, Any] = {}
    exec(source, globs, local)  # noqa: S102 - generated from the class's own field names
    fields = tuple(names)

    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in fields)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in fields)

    cls.__init__ = local["__init__"]  # type: ignore[misc]
    cls.__repr__ = __repr__  # type: ignore[assignment]
    cls.__eq__ = __eq__  # type: ignore[assignment]
    cls.__record_fields__ = fields  # type: ignore[attr-defined]
    if frozen:

        def __hash__(self: Any) -> int:
            return hash(tuple(getattr(self, n) for n in fields))

        def __setattr__(self: Any, name: str, value: Any) -> None:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")

        cls.__hash__ = __hash__  # type: ignore[assignment]
        cls.__setattr__ = __setattr__  # type: ignore[assignment]
    else:
        cls.__hash__ = None  # type: ignore[assignment]
    return cls
