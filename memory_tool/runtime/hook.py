"""The script every hook command runs: ``"<python>" -S "<package>/runtime/hook.py" EVENT``.

Claude Code starts a new process for every hook. Without ``site`` (``-S``) the interpreter starts
about 10 ms sooner, so this script puts the package's parent folder and the environment's
site-packages (needed only on slow paths: YAML, the tokenizer) on ``sys.path`` by hand. Then it
claims the event (two installs, the plugin and settings.json, answer it once: ``claim``), hands a
routed event (SessionStart, SessionEnd, UserPromptSubmit) to the resident hook server
(``client``), and otherwise runs the event in-process (``dispatch``); SessionStart then starts a
server for the session's HTTP hooks. Whatever goes wrong, the
session must not break: a missing or broken package exits 0 silently.

It is run by path, not imported (``-S`` leaves the package off ``sys.path``), so its imports of
the package are absolute and come after ``sys.path`` is set; before that only ``os`` and ``sys``,
which the interpreter has already loaded.
"""

import os
import sys

# Imported by `python -S hook.py --probe` (see settings.hook_command): the dependencies a hook's
# slow paths may import. When the -S start-up cannot find one of them, install writes the hook
# command without -S.
PROBE_MODULES = (
    "memory_tool.runtime.dispatch",
    "yaml",
    "frontmatter",
    "tiktoken",
    "tiktoken_ext.openai_public",
    "rapidfuzz",
)


def site_dirs(executable: str, prefix: str, version: str) -> list[str]:
    """The site-packages folders ``-S`` leaves out that an install's dependencies live in."""
    out = []
    # In a virtualenv, -S also skips reading pyvenv.cfg, so sys.prefix is the base interpreter's:
    # the venv (where YAML and the tokenizer live) is beside the executable.
    venv = os.path.dirname(os.path.dirname(os.path.abspath(executable)))
    if os.path.exists(os.path.join(venv, "pyvenv.cfg")):
        out.append(os.path.join(venv, "lib", version, "site-packages"))
    out.append(os.path.join(prefix, "lib", version, "site-packages"))
    return out


def set_path(script: str) -> str:
    """Put the folder that holds the package first on ``sys.path`` (instead of this script's
    own folder, which Python put there) and, without ``site``, the environment's site-packages
    last. Returns that folder."""
    here = os.path.dirname(os.path.abspath(script))
    root = os.path.dirname(os.path.dirname(here))
    if sys.path and sys.path[0] == here:
        sys.path[0] = root  # the common case: no symlink on the way
    else:
        mine = (here, os.path.realpath(here))
        sys.path[:] = [root] + [p for p in sys.path if p not in mine and p != root]
    if sys.flags.no_site:
        version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        for folder in site_dirs(sys.executable, sys.prefix, version):
            if folder not in sys.path:
                sys.path.append(folder)
    return root


def probe() -> int:
    """0 when this start-up finds every module in PROBE_MODULES, else 1 (names them on stderr)."""
    import importlib.util

    missing = []
    for name in PROBE_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except Exception:  # noqa: BLE001 - a parent package that is missing or broken
            found = False
        if not found:
            missing.append(name)
    if missing:
        print("not found: " + ", ".join(missing), file=sys.stderr)
    return 1 if missing else 0


def run(event: str) -> int:
    """Answer one hook event; the exit status (always 0 but for a --probe)."""
    status = None
    stdin = None
    try:
        from memory_tool.runtime import claim, client

        stdin = sys.stdin.buffer.read(client.MAX_STDIN_BYTES + 1)
        if not claim.claim(event, stdin, client.state_root()):
            return 0  # the other install of memory-tool answers this event
        if event in client.ROUTED_EVENTS:
            status = client.forward(event, stdin)
            if status == client.OK:
                return 0
    except Exception:  # noqa: BLE001 - no server help: run in-process below
        pass
    try:
        import io

        from memory_tool.runtime import dispatch
    except Exception:  # noqa: BLE001 - never break the session
        return 0
    code = dispatch.run(event, stdin=None if stdin is None else io.BytesIO(stdin))
    # status is set only once client loaded. SessionStart starts one itself (for its session),
    # and a SessionEnd must not start a server its session no longer needs.
    if status is not None and status == client.ABSENT and event == "UserPromptSubmit":
        client.ensure_server()
    return code


def run_agent(agent: str, event: str) -> int:
    """Answer one hook event of another coding agent (``--agent codex EVENT``), in-process:
    one install per agent, so no claim, and the resident server speaks Claude Code's events."""
    try:
        from memory_tool.runtime import dispatch
    except Exception:  # noqa: BLE001 - never break the session
        return 0
    return dispatch.run(event, agent=agent)


def main(argv: list[str]) -> int:
    set_path(__file__)
    event = argv[1] if len(argv) > 1 else ""
    if event == "--probe":
        return probe()
    if event == "--agent":
        return run_agent(argv[2] if len(argv) > 2 else "", argv[3] if len(argv) > 3 else "")
    return run(event)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
