"""The ``memory-tool`` click group and what its command modules share: domain errors as clean
one-line errors, the notes an empty answer or a missing index deserves.

Each command group has its module (``core``, ``recall``, ``tiers``, ``hygiene``, ``install``,
``server``); ``cli.main`` imports them all, which registers their commands on ``main``."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..base.errors import MemoryToolError

F = TypeVar("F", bound=Callable[..., Any])


def domain_errors(fn: F) -> F:
    """Turn a library error into a clean one-line CLI error (exit 1)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemoryToolError as exc:
            raise click.ClickException(str(exc)) from exc
        except sqlite3.DatabaseError as exc:
            if type(exc) is not sqlite3.DatabaseError:  # locked, integrity...: not damage
                raise
            # Damage opening the index did not show: set it aside (as the hooks do), no traceback.
            from ..base import paths
            from ..base.log import log_error

            log_error("cli", exc)
            raise click.ClickException(
                f"the index {paths.index_file()} was damaged ({exc}): it was moved aside. "
                "Run `memory-tool index` to rebuild it from the memory files (nothing is lost)."
            ) from exc

    return wrapper  # type: ignore[return-value]


def unknown_filters(idx: Any, **filters: str | None) -> None:
    """After an empty answer: say on stderr which filter names something the index has none of
    (``--room nosuch``, a mistyped type), with what there is, instead of a bare "no matches"."""
    from ..recall.depth import unknown_filters as notes

    for note in notes(idx, **filters):
        click.echo(f"({note})", err=True)


def ensure_built(idx: Any) -> None:
    """Build an index that never was (deleted, or a new state root) before answering from it,
    and say so on stderr: the index is derived, so deleting it must not look like data loss."""
    if idx.ensure_built():
        click.echo("(the index was missing or new: built it from the memory files)", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="memory-tool")
def main() -> None:
    """Tiered, progressive memory for Claude Code.

    Memory is plain Markdown; this tool loads it in layers under exact token budgets.
    """
