"""Kept for installs made before the hook start-up moved into the package.

Their settings.json runs ``"<venv python>" -S "<checkout>/hooks/<event>.py"``; a missing script
would make Python exit 2, which Claude Code takes as "block" (for UserPromptSubmit: the prompt is
erased). So these scripts stay and hand over to the package's start-up
(``memory_tool/runtime/hook.py``). ``memory-tool install`` (``./install.sh``) replaces such commands
with the package's own.
"""

import os
import sys


def run(event: str) -> None:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        from memory_tool.runtime import hook
    except Exception:  # noqa: BLE001 - never break the session
        sys.exit(0)
    sys.exit(hook.main(["", event]))
