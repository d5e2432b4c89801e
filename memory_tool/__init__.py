"""memory-tool: tiered, progressive memory for Claude Code.

The library lives in one module per concept (paths, entry, tree, index, layers, wake, rooms,
classify, recall, tiers, doctor, hooks); ``cli`` is a thin click front end and ``hooks`` the
other one, used by the scripts in the top-level ``hooks/`` folder.
"""

__version__ = "0.1.0"
