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
