#!/usr/bin/env python3
"""Claude Code PreCompact hook for memory-tool: fails open; the logic is in
memory_tool.runtime."""

import _bootstrap

_bootstrap.run("PreCompact")
