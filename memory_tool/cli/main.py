"""The ``memory-tool`` command (the console script's entry point): the click group of
``cli.app`` with every command module's commands registered on it."""

from __future__ import annotations

from . import core, hygiene, install, mcp, recall, server, sync, tiers, ui  # noqa: F401 - registers
from .app import main

__all__ = ["main"]
