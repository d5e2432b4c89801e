#!/usr/bin/env python3
"""Claude Code SessionStart hook for memory-tool. A shim: the logic lives in
memory_tool.hooks, which fails open (exit 0, nothing printed, error logged) whatever happens."""

import sys

try:
    from memory_tool.hooks import run
except Exception:  # noqa: BLE001 - memory-tool missing or broken: never break the session
    sys.exit(0)

sys.exit(run("SessionStart"))
