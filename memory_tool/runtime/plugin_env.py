"""The plugin's private Python environment, under ``${CLAUDE_PLUGIN_DATA}``.

Claude Code copies a plugin to a folder of its version (``${CLAUDE_PLUGIN_ROOT}``, replaced by
every update) and gives it a data folder that survives updates (``${CLAUDE_PLUGIN_DATA}``). The
plugin's launchers (``plugin/scripts/hook``, ``plugin/scripts/mcp``) run the package from a
virtual environment in that data folder; the stamp ``env.sh`` names it, for one plugin version.
When the stamp is missing or names another version, a launcher runs this script with the system's
``python3``:

- ``hook EVENT VERSION``: SessionStart starts a build (detached, one at a time: a lock) and, when
  no environment exists yet, tells the session in one line that memory starts with the next
  session. While a newer version builds, the previous environment keeps answering; without one,
  the other events do nothing.
- ``run VERSION ARGS...``: the MCP server: start a build if none runs, wait for it (up to
  ``WAIT_FOR_TOOL_S``), then run ``python ARGS`` from the environment.
- ``build DATA ROOT VERSION``: the detached builder (a new venv, ``pip install`` of a copy of the
  plugin's ``src/``, ``memory-tool init``, the stamp, older environments deleted).

It runs before the package is installed, with whatever ``python3`` is on PATH: standard library
only, nothing of memory_tool, and syntax an old interpreter can still parse far enough to say
which Python it needs. Every path through it exits 0 for a hook: it must never break a session.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

MIN_PYTHON = (3, 10)
STAMP = "env.sh"
LOCK = "build.lock"
LOG = "build.log"
FAILED = "build-failed.json"
ENV_PREFIX = "env-"
# The MCP server waits this long for a first build before giving up (a build measured 17-36 s on
# a loaded 2-core machine, most of it pip downloading the dependencies).
WAIT_FOR_TOOL_S = 180.0
POLL_S = 0.25
# pip downloads and builds; past this something is stuck (a dead proxy): fail, retry next session.
BUILD_TIMEOUT_S = 900
# Optional dependencies the plugin needs: the MCP SDK for the server its .mcp.json starts.
EXTRAS = "mcp"
# Stamp keys, as the shell launchers read them.
KEYS = ("VERSION", "PYTHON", "FLAGS", "HOOK", "BIN", "BUILD_S")
# After the first build, the sessions Claude Code kept from before the plugin (about 30 days,
# its cleanupPeriodDays) are read once (`memory-tool backfill`): a plugin cannot ask, so it
# says so in its first session's line. MEMORY_TOOL_BACKFILL_DAYS=0 turns it off.
BACKFILL_DAYS = 30


def line_for_session(text: str) -> str:
    """SessionStart output that shows ``text`` to the person and tells the model."""
    out = {
        "systemMessage": text,
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text},
    }
    return json.dumps(out)


# --- the stamp -------------------------------------------------------------------------------


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def write_stamp(data: str, values: dict[str, str]) -> None:
    lines = [f"MEMORY_TOOL_ENV_{k}={_quote(values.get(k, ''))}" for k in KEYS]
    tmp = os.path.join(data, f".{STAMP}.{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write("# written by memory-tool's plugin set-up; the launchers source it\n")
        fh.write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(data, STAMP))


def read_stamp(data: str) -> dict[str, str] | None:
    """The stamp's values, or None when there is none or its interpreter or start-up script is
    gone (running a missing script, Python exits 2: for a hook, "block")."""
    values: dict[str, str] = {}
    try:
        with open(os.path.join(data, STAMP), encoding="utf-8") as fh:
            for line in fh:
                key, sep, value = line.strip().partition("=")
                if sep and key.startswith("MEMORY_TOOL_ENV_"):
                    v = value[1:-1] if value.startswith("'") else value
                    values[key[len("MEMORY_TOOL_ENV_") :]] = v.replace("'\\''", "'")
    except OSError:
        return None
    python = values.get("PYTHON", "")
    if not python or not os.access(python, os.X_OK):
        return None
    if not os.path.isfile(values.get("HOOK", "")):
        return None
    return values


# --- building --------------------------------------------------------------------------------


def _lock(data: str, block: bool) -> int | None:
    """The build lock's descriptor when this process got it, else None."""
    import fcntl

    os.makedirs(data, exist_ok=True)
    fd = os.open(os.path.join(data, LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
    except OSError:
        os.close(fd)
        return None
    return fd


def building(data: str) -> bool:
    """Whether a builder holds the lock now."""
    fd = _lock(data, block=False)
    if fd is None:
        return True
    os.close(fd)
    return False


def start_build(data: str, root: str, version: str) -> bool:
    """Start the detached builder unless one runs; True when this call started it."""
    import subprocess

    fd = _lock(data, block=False)
    if fd is None:
        return False  # a build is running
    try:
        stamp = read_stamp(data)
        if stamp is not None and stamp.get("VERSION") == version:
            return False  # finished while we looked
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        with open(os.devnull, "rb") as null_in, open(os.devnull, "wb") as null_out:
            # The child inherits the locked descriptor: the lock stays held until it is done.
            subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "build", data, root, version, str(fd)],
                stdin=null_in,
                stdout=null_out,
                stderr=null_out,
                env=env,
                cwd=data,
                pass_fds=(fd,),
                start_new_session=True,
            )
    finally:
        os.close(fd)
    return True


def build(data: str, root: str, version: str) -> bool:
    """Build the environment for ``version`` from ``root``'s source; True when it is ready.
    Called with the build lock held. Everything it runs goes to ``build.log``."""
    import shutil
    import subprocess

    started = time.monotonic()
    log_path = os.path.join(data, LOG)
    target = os.path.join(data, f"{ENV_PREFIX}{version}-{int(time.time())}-{os.getpid()}")
    src_copy = target + ".src"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.pop("VIRTUAL_ENV", None)
    with open(log_path, "w", encoding="utf-8") as log:

        def step(what: str, cmd: list[str]) -> str:
            log.write(f"$ {' '.join(cmd)}\n")
            log.flush()
            proc = subprocess.run(
                cmd,
                cwd=data,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT_S,
                check=False,
            )
            log.write(proc.stdout + proc.stderr)
            if proc.returncode != 0:
                raise RuntimeError(f"{what} failed (exit {proc.returncode})")
            return proc.stdout

        try:
            log.write(f"memory-tool {version}: building {target} with {sys.executable}\n")
            source = os.path.join(root, "src")
            if not os.path.isfile(os.path.join(source, "pyproject.toml")):
                raise RuntimeError(f"no package source at {source}")
            # A copy (symlinks followed): pip builds inside the source folder, which may be a
            # person's checkout or a read-only plugin cache.
            shutil.copytree(
                source,
                src_copy,
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist"),
            )
            step("creating the virtual environment", [sys.executable, "-m", "venv", target])
            python = os.path.join(target, "bin", "python")
            pip = [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
            # The mcp extra: the plugin's .mcp.json starts the MCP server from this environment.
            step("pip install", [*pip, f"{src_copy}[{EXTRAS}]"])
            hook = step(
                "finding the hook start-up",
                [python, "-c", "import memory_tool.runtime.hook as h; print(h.__file__)"],
            ).strip()
            try:
                step("probing the fast start", [python, "-S", hook, "--probe"])
                flags = "-S"
            except RuntimeError:
                flags = ""
            bin_dir = os.path.join(target, "bin")
            step("creating the palace", [os.path.join(bin_dir, "memory-tool"), "init"])
            # The plugin's HTTP hooks send the secret settings.json holds (hook-server.md):
            # written now, the next session, which reads settings.json at start, sends it.
            step(
                "the hook secret",
                [python, "-c", "from memory_tool.runtime import settings; settings.add_secret()"],
            )
            previous = read_stamp(data)
            seconds = time.monotonic() - started
            write_stamp(
                data,
                {
                    "VERSION": version,
                    "PYTHON": python,
                    "FLAGS": flags,
                    "HOOK": hook,
                    "BIN": bin_dir,
                    "BUILD_S": f"{seconds:.1f}",
                },
            )
            if previous is not None:  # an upgrade: the old server must not answer for new code
                step(
                    "stopping the old hook server",
                    [os.path.join(bin_dir, "memory-tool"), "server", "stop"],
                )
            log.write(f"ready in {seconds:.1f} s\n")
            days = os.environ.get("MEMORY_TOOL_BACKFILL_DAYS", str(BACKFILL_DAYS)).strip()
            if previous is None and days.isdigit() and int(days) > 0:
                # The environment is ready already (sessions use it while this runs), and a
                # failure here is logged, never the build's: memory works without it.
                tool = os.path.join(bin_dir, "memory-tool")
                try:
                    step("backfilling the earlier sessions", [tool, "backfill", "--days", days])
                except Exception as exc:  # noqa: BLE001 - `memory-tool backfill` can retry
                    log.write(f"backfill failed: {exc}\n")
            _forget_failure(data)
            ok = True
        except Exception as exc:  # noqa: BLE001 - recorded for the next session's line
            log.write(f"FAILED: {exc}\n")
            _record_failure(data, version, str(exc))
            shutil.rmtree(target, ignore_errors=True)
            ok = False
        finally:
            shutil.rmtree(src_copy, ignore_errors=True)
    if ok:
        _remove_other_envs(data, target)
    return ok


def _remove_other_envs(data: str, keep: str) -> None:
    import shutil

    for name in os.listdir(data):
        path = os.path.join(data, name)
        if name.startswith(ENV_PREFIX) and path != keep and os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)


def _record_failure(data: str, version: str, reason: str) -> None:
    with contextlib.suppress(OSError), open(os.path.join(data, FAILED), "w") as fh:
        json.dump({"version": version, "reason": reason, "at": time.time()}, fh)


def _forget_failure(data: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(data, FAILED))


def last_failure(data: str, version: str) -> str | None:
    try:
        with open(os.path.join(data, FAILED), encoding="utf-8") as fh:
            found = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("version") != version:
        return None
    return str(found.get("reason", "unknown"))


def wait_ready(data: str, version: str, timeout: float) -> dict[str, str] | None:
    deadline = time.monotonic() + timeout
    while True:
        stamp = read_stamp(data)
        if stamp is not None and stamp.get("VERSION") == version:
            return stamp
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL_S)


# --- the commands the launchers run --------------------------------------------------------


def _exec_hook(stamp: dict[str, str], event: str) -> None:
    python = stamp["PYTHON"]
    args = [python, *stamp.get("FLAGS", "").split(), stamp["HOOK"], event]
    os.execv(python, args)


def hook(event: str, version: str) -> int:
    data = os.environ.get("CLAUDE_PLUGIN_DATA", "")
    root = os.environ.get("CLAUDE_PLUGIN_ROOT", "")
    if not data or not root:
        return 0
    stamp = read_stamp(data)
    if stamp is not None and stamp.get("VERSION") == version:
        _exec_hook(stamp, event)  # built while the launcher looked
    if event == "SessionStart":
        started = start_build(data, root, version)
        if stamp is None:
            print(line_for_session(_setting_up_line(data, version, started)))
    if stamp is not None:
        _exec_hook(stamp, event)  # the previous version answers while the new one builds
    return 0


def _setting_up_line(data: str, version: str, started: bool) -> str:
    failed = last_failure(data, version)
    text = (
        f"memory-tool {version} is setting up its Python environment (first session after "
        "installing the plugin, about a minute); memory starts with the next session. It then "
        f"reads your Claude Code sessions of the last {BACKFILL_DAYS} days once, for their "
        "decisions and corrections (`memory-tool backfill`; undo one with `memory-tool forget "
        "ID`)."
    )
    if failed is not None and started:
        text += f" The last attempt failed ({failed}; log: {os.path.join(data, LOG)}): retrying."
    return text


def run(version: str, args: list[str]) -> int:
    data = os.environ.get("CLAUDE_PLUGIN_DATA", "")
    root = os.environ.get("CLAUDE_PLUGIN_ROOT", "")
    if not data or not root:
        print("memory-tool: CLAUDE_PLUGIN_DATA and CLAUDE_PLUGIN_ROOT are not set", file=sys.stderr)
        return 1
    stamp = read_stamp(data)
    if stamp is None or stamp.get("VERSION") != version:
        start_build(data, root, version)
        print(f"memory-tool: setting up its Python environment in {data} ...", file=sys.stderr)
        stamp = wait_ready(data, version, WAIT_FOR_TOOL_S)
    if stamp is None:
        print(f"memory-tool: not ready; see {os.path.join(data, LOG)}", file=sys.stderr)
        return 1
    os.execv(stamp["PYTHON"], [stamp["PYTHON"], *args])
    return 1  # not reached


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else ""
    if sys.version_info < MIN_PYTHON:
        if command == "hook" and argv[2:3] == ["SessionStart"]:
            need = ".".join(str(n) for n in MIN_PYTHON)
            found = ".".join(str(n) for n in sys.version_info[:3])
            print(
                line_for_session(
                    f"memory-tool needs Python {need} or newer to set up its environment; found "
                    f"{found} at {sys.executable}. Install one and put it on PATH as python3 (or "
                    "set MEMORY_TOOL_PYTHON to it); memory starts with the next session."
                )
            )
        return 0 if command == "hook" else 1
    try:
        if command == "hook" and len(argv) == 4:
            return hook(argv[2], argv[3])
        if command == "run" and len(argv) >= 4:
            return run(argv[2], argv[3:])
        if command == "build" and len(argv) == 6:
            return 0 if build(argv[2], argv[3], argv[4]) else 1
    except Exception:  # noqa: BLE001 - a hook must never break the session
        if command == "hook":
            return 0
        raise
    print(
        "usage: plugin_env.py hook EVENT VERSION | run VERSION ARGS... | "
        "build DATA ROOT VERSION LOCKFD",
        file=sys.stderr,
    )
    return 0 if command == "hook" else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
