"""Write the Claude Code plugin's manifest files: the marketplace (.claude-plugin/marketplace.json),
the plugin's plugin.json, hooks/hooks.json (from the hook table memory-tool install uses) and
.mcp.json, each carrying the package's version.

Run from the repo root after the version or the hook table changes:
    .venv/bin/python scripts/gen_plugin.py

tests/test_plugin.py checks that every file equals what this script generates.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memory_tool.runtime.plugin import generated_files  # noqa: E402


def main() -> None:
    for rel, text in generated_files().items():
        path = REPO / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {rel}")


if __name__ == "__main__":
    main()
