"""The Claude Code plugin's manifest files, made from the package's own tables.

The repository is a plugin marketplace (``.claude-plugin/marketplace.json``) holding one plugin,
``plugin/``. Its ``hooks/hooks.json`` comes from ``settings.HOOK_EVENTS``, the table
``memory-tool install`` writes settings.json from, so both installs always hook the same events
with the same matchers and timeouts. ``scripts/gen_plugin.py`` writes these files;
``tests/test_plugin.py`` fails when a committed one differs from what is made here.

Every command carries the plugin's version: the launchers (``plugin/scripts/``) run the private
environment built for exactly that version, and build a new one when it changes.
"""

from __future__ import annotations

import json
from typing import Any

from .. import __version__
from ..base.config import HOOK_SERVER_PORT
from ..base.resources import templates_dir
from .settings import INSTALLED_TEMPLATE_FILES, handlers_for

PLUGIN_NAME = "memory-tool"
MARKETPLACE_NAME = "memory-tool"
# The plugin's folder in the repository, relative to the marketplace root.
PLUGIN_DIR = "plugin"
# The MCP server's name in .mcp.json: its tools are mcp__plugin_<plugin>_<server>__<tool>.
MCP_SERVER_NAME = "memory-tool"
AUTHOR = {"name": "memory-tool contributors"}
DESCRIPTION = (
    "Tiered, progressive memory for Claude Code: plain Markdown memory files injected lazily, in "
    "layers, under exact token budgets (a brief at session start, the memories of each prompt's "
    "topic, deep search on demand), with hot/cold/wiki tiers and an enforced handoff."
)
HOOKS_DESCRIPTION = (
    "memory-tool: the wake-up brief at SessionStart (which starts the hook server), then over "
    "HTTP to it: room and deep recall at UserPromptSubmit, the memory of the files and errors "
    "tool calls touch, the subagent brief, hot state and the handoff at Stop; the cold summary "
    "at SessionEnd"
)


def hook_command(event: str, version: str = __version__) -> str:
    return f'"${{CLAUDE_PLUGIN_ROOT}}/scripts/hook" {event} {version}'


def hooks_json(version: str = __version__) -> dict[str, Any]:
    # The HTTP hooks name the default port (one static file for every user): a machine that
    # moved server.port needs the settings.json install (docs/hook-server.md).
    groups = handlers_for(lambda event: hook_command(event, version), HOOK_SERVER_PORT, http=True)
    hooks = {event: [group] for event, group in groups.items()}
    return {"description": HOOKS_DESCRIPTION, "hooks": hooks}


def mcp_json(version: str = __version__) -> dict[str, Any]:
    server = {"command": "${CLAUDE_PLUGIN_ROOT}/scripts/mcp", "args": [version]}
    return {"mcpServers": {MCP_SERVER_NAME: server}}


def plugin_json(version: str = __version__) -> dict[str, Any]:
    return {
        "name": PLUGIN_NAME,
        "version": version,
        "description": DESCRIPTION,
        "author": AUTHOR,
        "license": "MIT",
        "keywords": ["memory", "context", "hooks", "mcp"],
    }


def marketplace_json(version: str = __version__) -> dict[str, Any]:
    return {
        "name": MARKETPLACE_NAME,
        "owner": AUTHOR,
        "description": "memory-tool for Claude Code, from its own repository",
        "plugins": [
            {
                "name": PLUGIN_NAME,
                "source": f"./{PLUGIN_DIR}",
                "description": DESCRIPTION,
                "version": version,
            }
        ],
    }


def dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"


def generated_files(version: str = __version__) -> dict[str, str]:
    """Path relative to the repository root -> the text it must hold. The skill is a copy of the
    one `memory-tool install` places (a symlink would not be read by an installed plugin)."""
    files = {
        ".claude-plugin/marketplace.json": dump(marketplace_json(version)),
        f"{PLUGIN_DIR}/.claude-plugin/plugin.json": dump(plugin_json(version)),
        f"{PLUGIN_DIR}/hooks/hooks.json": dump(hooks_json(version)),
        f"{PLUGIN_DIR}/.mcp.json": dump(mcp_json(version)),
    }
    for rel in INSTALLED_TEMPLATE_FILES:
        files[f"{PLUGIN_DIR}/{rel}"] = (templates_dir() / rel).read_text(encoding="utf-8")
    return files
