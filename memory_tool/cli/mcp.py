"""mcp: the MCP server on stdio (the SDK loads only here, never for another command)."""

from __future__ import annotations

from ..base.errors import MemoryToolError
from .app import domain_errors, main


@main.command("mcp")
@domain_errors
def mcp_cmd() -> None:
    """Serve memory as MCP tools on stdin/stdout: search, peek, get, add, forget, context.

    Claude Code starts it (registered by `memory-tool install --mcp` or a plugin's .mcp.json);
    it answers until the session closes its stdin. Needs the mcp extra."""
    from ..mcp.register import EXTRA_HINT, sdk_installed

    if not sdk_installed():
        raise MemoryToolError(EXTRA_HINT)
    from ..mcp.server import main as serve

    serve()
