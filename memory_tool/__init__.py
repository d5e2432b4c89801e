"""memory-tool: tiered, progressive memory for Claude Code.

The library is split into layers (base, store, recall, tiers, hygiene), with thin front ends over
it: ``runtime`` (the hooks; ``runtime/hook.py`` is the script every hook command runs) and ``cli``
(the ``memory-tool`` command). docs/architecture.md has the map.
"""

__version__ = "0.1.0"
