"""The hook side of the resident hook server (``server.py``): hand one hook call to it.

A hook is a new Python process per prompt. Started with ``-S``, the interpreter alone costs about
9 ms; importing what the recall path needs (re, json, sqlite3, pathlib, typing, our modules) costs
about 30 ms more, and warming caches more again: several times the work itself. A resident
process that already holds all of that answers in a few milliseconds, so the hook script only has
to pass its stdin along and print the answer.

This module is imported by ``hooks/_bootstrap.py`` before anything else, so it uses nothing but
``os``, ``sys`` and the C ``_socket`` module (``import socket`` alone costs ~9 ms: it pulls in
enum and selectors), and not even ``__future__``; starting a server is here too, for the same
reason (posix_spawn, not subprocess). Every failure means "not handled": the hook then runs
in-process, exactly as without a server. Nothing here may raise.
"""

import os
import sys

PROTOCOL = b"MT2"
# This install's package folder: a server started from another install (a second checkout, a
# different venv) must not answer with its code.
PACKAGE_DIR = os.fsencode(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Events the command hooks hand to the server: SessionStart and SessionEnd (the command hooks of
# an install with HTTP hooks: the server learns the session's start and end, and SessionStart
# costs little more than an interpreter start), and UserPromptSubmit for an install without
# HTTP hooks (it runs on every prompt). The others run once or twice a session.
ROUTED_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "SessionEnd"})
# A hook payload is small JSON; a prompt can be large (pasted logs), so allow generous input but
# refuse to buffer without bound.
MAX_STDIN_BYTES = 32 * 1024 * 1024
# A warm server answers in milliseconds (~200 ms for a past question over 100,000 files). Past
# this, something is wrong (a stuck disk, a locked index): give up and run in-process, which
# costs one slow prompt instead of a hung one.
TIMEOUT_S = 3.0
# AF_UNIX paths are limited to 108 bytes on Linux and 104 on macOS; keep a margin.
MAX_SOCKET_PATH = 100
# Outcomes of request() and forward(): answered, or why not.
OK = "ok"
ABSENT = "absent"  # no server listening (or one that is retiring): the caller may start one
OFF = "off"  # disabled by MEMORY_TOOL_SERVER=0, or no unix sockets on this platform
FAILED = "failed"  # a server answered badly or too slowly: run in-process, start nothing
# True inside the server process: a handler there must not ask the server (itself) anything.
IN_SERVER = [False]
# Control requests (not hook events).
PING = "!ping"
# SessionStart waits for a server it started (only then) this long at most: `claude -p "…"`
# sends its one prompt right after SessionStart, over HTTP, and a server still importing
# refused it (a scripted week: ECONNREFUSED on the first prompt, whose memory never came). A
# server listens 0.1-0.3 s after it is started on a quiet machine; a busy one may take longer.
SERVER_READY_WAIT_S = 2.0
READY_POLL_S = 0.01
STOP = "!stop"


def state_root() -> str:
    """``paths.state_root()`` without pathlib (a test keeps the two in step)."""
    env = os.environ.get("MEMORY_TOOL_HOME")
    if env:
        return os.path.expanduser(env)
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    home = os.path.expanduser("~")
    base = os.path.expanduser(config) if config else os.path.join(home, ".claude")
    return os.path.join(base, "memory-tool")


def _fnv1a(data: bytes) -> int:
    """A stable 64-bit hash (``hash()`` is salted per process; hashlib costs an import)."""
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def socket_path(root: str | None = None) -> str:
    """Where the server of this state root listens: ``<state>/run/hooks.sock``, or, when that
    path is too long for a unix socket, a private per-user folder named by a hash of the root."""
    root = state_root() if root is None else root
    path = os.path.join(root, "run", "hooks.sock")
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    base = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    digest = _fnv1a(os.fsencode(os.path.abspath(root)))
    return os.path.join(base, f"memory-tool-{os.getuid()}", f"{digest:016x}.sock")


def disabled() -> bool:
    return os.environ.get("MEMORY_TOOL_SERVER", "").strip().lower() in ("0", "off", "false", "no")


def request(event: str, body: bytes, timeout: float = TIMEOUT_S) -> tuple[str, bytes]:
    """Send one request; returns (OK, answer) or (ABSENT | OFF | FAILED, b"")."""
    if disabled():
        return OFF, b""
    try:
        import _socket
    except ImportError:
        return OFF, b""
    family = getattr(_socket, "AF_UNIX", None)
    if family is None:
        return OFF, b""
    sock = None
    try:
        sock = _socket.socket(family, _socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(socket_path())
        except OSError:
            return ABSENT, b""
        try:
            cwd = os.getcwdb()
        except OSError:
            cwd = b""
        env = b"\0".join(k + b"=" + v for k, v in os.environb.items())
        pkg = PACKAGE_DIR
        head = b"%s %s %d %d %d %d\n" % (
            PROTOCOL,
            event.encode(),
            len(pkg),
            len(cwd),
            len(env),
            len(body),
        )
        sock.sendall(head + pkg + cwd + env + body)
        sock.shutdown(_socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        answer = b"".join(chunks)
    except OSError:
        return FAILED, b""
    finally:
        if sock is not None:
            try:  # noqa: SIM105 - contextlib is an import this path does not otherwise pay for
                sock.close()
            except OSError:
                pass
    status, _, rest = answer.partition(b"\n")
    if status == b"OK":
        return OK, rest
    if status == b"RETRY":  # the server is retiring (its code changed): a new one may start
        return ABSENT, b""
    return FAILED, b""


def forward(event: str, stdin: bytes) -> str:
    """Run hook ``event`` in the server and print its output. Returns OK when done, else why
    not (ABSENT, OFF, FAILED): the caller then runs the hook in-process with the same stdin."""
    if event not in ROUTED_EVENTS:
        return OFF
    status, out = request(event, stdin)
    if status != OK:
        return status
    try:
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
    except OSError:
        pass  # Claude Code went away; nothing more to do
    return OK


def may_start() -> bool:
    """Whether hooks may start a server: not switched off by environment or config."""
    if disabled():
        return False
    # MEMORY_TOOL_NO_BACKGROUND (tests) starts no server, unless MEMORY_TOOL_SERVER=1 asks for
    # one: the end-to-end tests of the HTTP hooks, which have nothing to talk to without it.
    forced = os.environ.get("MEMORY_TOOL_SERVER", "").strip() == "1"
    if os.environ.get("MEMORY_TOOL_NO_BACKGROUND") and not forced:
        return False
    try:
        from ..base.config import load_config

        return bool(load_config().get("server", {}).get("enabled", True))
    except Exception:  # noqa: BLE001 - a broken config must not stop the hook
        return False


def spawn(env: "dict[str, str] | None" = None) -> bool:
    """Start a detached server (it exits at once if one is already running) with ``env`` (this
    process's environment by default). Uses posix_spawn: importing subprocess would cost the
    hook more than the spawn itself."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            actions = [(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)]
            os.posix_spawn(
                sys.executable,
                [sys.executable, "-m", "memory_tool.runtime.server"],
                env,
                file_actions=actions,
                setsid=True,
            )
        finally:
            os.close(devnull)
    except (OSError, AttributeError, NotImplementedError) as exc:
        from ..base.log import log_error

        log_error("server", f"could not start the hook server: {exc}")
        return False
    return True


def _listening(timeout_s: float) -> bool:
    """Wait until a server listens on this root's socket (it binds its HTTP port right after),
    at most ``timeout_s``; a connection it has not accepted yet waits in its backlog, so
    listening is enough for the next hook to be answered."""
    import _socket
    import time

    deadline = time.monotonic() + timeout_s
    path = socket_path()
    while True:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
        finally:
            sock.close()
        time.sleep(READY_POLL_S)


def ensure_server(session_id: str = "", wait_s: float = 0.0) -> None:
    """From a hook: start a server when none answers and starting one is allowed; it serves
    ``session_id`` (a SessionStart's) from the start, and, with ``wait_s``, is listening when
    this returns (at most that long). Never raises (failing to start one is logged: the HTTP
    hooks lose their context until the next SessionStart)."""
    if IN_SERVER[0]:
        return
    try:
        if may_start() and request(PING, b"", timeout=0.5)[0] == ABSENT:
            env = dict(os.environ)
            if session_id:
                env["MEMORY_TOOL_SERVER_SESSION"] = session_id
            if spawn(env) and wait_s > 0 and not _listening(wait_s):
                from ..base.log import log_error

                log_error("server", f"the hook server did not listen within {wait_s} s")
    except Exception as exc:  # noqa: BLE001
        from ..base.log import log_error

        log_error("server", exc)
