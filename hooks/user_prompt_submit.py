#!/usr/bin/env python3
"""Claude Code UserPromptSubmit hook for memory-tool: a shim over memory_tool.runtime.dispatch (fails open)."""

import _bootstrap

_bootstrap.run("UserPromptSubmit")
