"""Start-up shared by the hook scripts.

Claude Code runs each hook as ``<venv python> -S <script>``: skipping the ``site`` import saves
about 10 ms on every prompt, so the package folder and the environment's site-packages (needed
only on slow paths: YAML, tokenizer) are put on ``sys.path`` here by hand. A routed event
(UserPromptSubmit) is first handed to the resident hook server (memory_tool/client.py); without
one, the hook runs in-process and starts one for the next prompt. Whatever goes wrong, the
session must not break: a missing or broken package exits 0 silently.
"""

import os
import sys


def run(event: str) -> None:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if root not in sys.path:
        sys.path.insert(0, root)
    if sys.flags.no_site:
        version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        # In a virtualenv, -S also skips reading pyvenv.cfg, so sys.prefix is the base
        # interpreter's: the venv (where YAML and the tokenizer live) is beside sys.executable.
        venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
        if os.path.exists(os.path.join(venv, "pyvenv.cfg")):
            sys.path.append(os.path.join(venv, "lib", version, "site-packages"))
        sys.path.append(os.path.join(sys.prefix, "lib", version, "site-packages"))
    status = None
    stdin = None
    try:
        from memory_tool.runtime import client

        if event in client.ROUTED_EVENTS:
            stdin = sys.stdin.buffer.read(client.MAX_STDIN_BYTES + 1)
            status = client.forward(event, stdin)
            if status == client.OK:
                sys.exit(0)
    except Exception:  # noqa: BLE001 - no server help: run in-process below
        pass
    try:
        import io

        from memory_tool.runtime import dispatch
    except Exception:  # noqa: BLE001 - never break the session
        sys.exit(0)
    code = dispatch.run(event, stdin=None if stdin is None else io.BytesIO(stdin))
    if status is not None and status == client.ABSENT:  # status is set only once client loaded
        client.ensure_server()
    sys.exit(code)
