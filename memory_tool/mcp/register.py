"""Registering the MCP server with Claude Code for settings-based installs
(``memory-tool install --mcp``), and taking it out again (``uninstall``).

Claude Code keeps user-scope MCP servers under ``mcpServers`` in its own state file
(``paths.claude_user_config``), the entry ``claude mcp add --scope user`` writes. That file holds
much else (and Claude Code rewrites it), so this merges: every other key stays as it was, an
owner-only backup is written first, the file keeps its mode, the write is atomic. An entry of the
same name that is not ours is refused, never replaced. A plugin install needs none of this: the
plugin's ``.mcp.json`` starts the server.

Imports no MCP SDK: the CLI's install runs without the extra to say it is missing.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shlex
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.errors import SettingsError
from ..base.fsutil import FILE_MODE, atomic_write_bytes, read_json_object

SERVER_NAME = "memory-tool"
MODULE = "memory_tool.mcp"
EXTRA_HINT = (
    "the MCP server needs the official MCP SDK: install memory-tool's mcp extra into its "
    "environment (pip install 'memory-tool[mcp]'; from a checkout, MEMORY_TOOL_MCP=1 ./install.sh)."
)


def sdk_installed() -> bool:
    """The SDK can be imported (looked up without importing it)."""
    return importlib.util.find_spec("mcp") is not None


def server_entry() -> dict[str, Any]:
    """The ``mcpServers`` entry: this interpreter running the server module."""
    return {"type": "stdio", "command": sys.executable, "args": ["-m", MODULE], "env": {}}


def add_command() -> str:
    """The ``claude mcp add`` line that registers the same server by hand."""
    return shlex.join(
        ["claude", "mcp", "add", "--scope", "user", SERVER_NAME, "--", sys.executable, "-m", MODULE]
    )


def backup_file(path: Path) -> Path:
    return path.with_name(path.name + ".memory-tool.bak")


def is_ours(entry: Any) -> bool:
    """An entry that runs our server module (from whichever interpreter)."""
    return (
        isinstance(entry, dict)
        and entry.get("type", "stdio") == "stdio"
        and isinstance(entry.get("args"), list)
        and entry["args"][:2] == ["-m", MODULE]
    )


def _read(path: Path) -> tuple[str | None, dict[str, Any]]:
    text, data = read_json_object(
        path,
        f"nothing was changed. Fix it by hand, or register the server with: {add_command()}",
    )
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise SettingsError(f'{path}: "mcpServers" must be an object; nothing was changed.')
    return text, data


def _write(path: Path, before: str | None, data: dict[str, Any]) -> None:
    mode = FILE_MODE
    if before is not None:
        mode = stat.S_IMODE(path.stat().st_mode)
        # Owner-only whatever the original's mode: the file can hold OAuth account details.
        atomic_write_bytes(backup_file(path), before.encode(), mode & FILE_MODE)
    atomic_write_bytes(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())
    if mode != FILE_MODE:
        os.chmod(path, mode)  # the file keeps the mode it had (written owner-only meanwhile)


@dataclass
class Registration:
    path: Path
    changed: bool
    entry: dict[str, Any]
    command: str


def register(dry_run: bool = False) -> Registration:
    """Put our server under ``mcpServers``; a second run changes nothing."""
    path = paths.claude_user_config()
    before, data = _read(path)
    servers = data.setdefault("mcpServers", {})
    entry = server_entry()
    current = servers.get(SERVER_NAME)
    if current is not None and not is_ours(current):
        raise SettingsError(
            f'{path} already has an MCP server named "{SERVER_NAME}" that is not memory-tool\'s '
            f"({json.dumps(current)[:200]}); nothing was changed. Remove or rename it "
            f"(claude mcp remove --scope user {SERVER_NAME}) and install again."
        )
    changed = current != entry
    if changed and not dry_run:
        servers[SERVER_NAME] = entry
        _write(path, before, data)
    return Registration(path, changed, entry, add_command())


def unregister() -> Path | None:
    """Take our server out (only ours, whichever interpreter it names); returns the file changed,
    or None when there was nothing of ours. The backup install wrote goes too."""
    path = paths.claude_user_config()
    try:
        before, data = _read(path)
    except SettingsError:
        return None  # not ours to repair; uninstall goes on with the rest
    servers = data.get("mcpServers")
    removed = None
    if isinstance(servers, dict) and is_ours(servers.get(SERVER_NAME)):
        del servers[SERVER_NAME]
        _write(path, before, data)
        removed = path
    with contextlib.suppress(OSError):
        backup_file(path).unlink()
    return removed
