"""Options shared by several commands."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def cwd_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--cwd",
        type=click.Path(file_okay=False, exists=True),
        default=lambda: os.getcwd(),
        show_default="current directory",
        help="Project directory (its git root decides the project).",
    )(fn)


team_option = click.option(
    "--team",
    help="Write to this team palace (`memory-tool team list`) and push it to your teammates.",
)


def publish_team(team: str) -> bool:
    """Push a memory just written to a team palace; a remote that is down costs a warning, not
    the memory (it is committed here and goes out with the next sync)."""
    from ..base.errors import SyncError
    from ..sync.team import publish

    try:
        publish(team)
    except SyncError as exc:
        click.echo(f"memory-tool: saved, but not pushed to team {team} yet: {exc}", err=True)
        return False
    return True
