"""``python -m memory_tool.mcp``: the MCP server on stdio (what a plugin's ``.mcp.json`` runs)."""

from __future__ import annotations

from .server import main

if __name__ == "__main__":
    main()
