"""The resident hook server: one process per state root that answers hook calls warm.

Claude Code starts a new process for every hook call; on the UserPromptSubmit path most of that
process's time is interpreter start-up and imports, not work (see ``client.py``). The server
imports everything once and answers each call over a unix socket in ``<state>/run/``; the hook
script becomes a small client. It is an accelerator, never a dependency:

- The client falls back to running the hook in-process on any failure (no server, a refused or
  slow connection, a bad answer), so a dead or missing server costs speed, not memory.
- A call runs through the very same ``dispatch.run`` as in-process, with the caller's environment
  and working directory, so both paths give byte-identical output (tested).
- It exits by itself after ``IDLE_EXIT_S`` without calls, after ``MAX_CALLS`` calls, and as soon
  as its own code changes on disk (an upgrade) or a hook of another install calls, answering
  that call with RETRY; the hook falls back and starts a fresh one. One server per state root:
  a lock file decides.
- It stays small: a call that had to load the tokenizer (a line no token count was cached for)
  lets it go again once answered, and the freed memory is handed back to the system; the
  tokenizer holds ~50 MB that the steady prompt path never needs (counts are cached in the
  index), so a server that kept it would hold 60-80 MB for a whole working day.
- It runs calls one at a time. They take milliseconds; a caller that waits longer than the
  client's timeout runs in-process instead.

Started detached by SessionStart (and by a prompt that found no server), unless
``MEMORY_TOOL_SERVER=0``, ``MEMORY_TOOL_NO_BACKGROUND`` or ``server.enabled: false`` in
config.yaml; ``memory-tool server start|stop|status`` manage it by hand.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import stat
import sys
import time

from . import client

# Long enough to span the pauses of a working session (reading a diff, a meeting), short enough
# that a machine not using Claude Code carries no resident process for long.
IDLE_EXIT_S = 30 * 60
# A fresh process now and then bounds whatever a long life could accumulate.
MAX_CALLS = 20_000
# A caller must send its request within this long once connected.
READ_TIMEOUT_S = 5.0
# Requests carry a prompt; the same cap as a hook's stdin, plus the environment.
MAX_REQUEST_BYTES = 32 * 1024 * 1024 + 1024 * 1024
LISTEN_BACKLOG = 32
# How long `memory-tool server start` waits for a new server to answer.
START_WAIT_S = 5.0
# A call still running after this long is stuck (a hung disk, a FIFO where a file should be):
# SIGALRM ends the whole server, so later prompts fall back and start a fresh one instead of each
# waiting out the client's timeout behind it.
CALL_LIMIT_S = 20


def _code_stamp() -> tuple[tuple[str, int, int], ...]:
    """Every module file of the package with its mtime and size: a change means an upgrade or an
    edit, and a server must never answer with old code."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = []
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                with contextlib.suppress(OSError):
                    st = os.stat(path)
                    out.append((path, st.st_mtime_ns, st.st_size))
    return tuple(sorted(out))


def _private_dir(path: str) -> None:
    """Create ``path`` owner-only and refuse one that is not ours (a shared /tmp fallback)."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise PermissionError(f"{path} is not a private folder of this user")
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(path, 0o700)


def _read_request(conn: socket.socket) -> tuple[str, bytes, bytes, dict[str, str], bytes] | None:
    """(event, client package folder, cwd, environment, stdin) of one request, or None when it
    is malformed."""
    buf = b""
    while b"\n" not in buf:
        chunk = conn.recv(4096)
        if not chunk:
            return None
        buf += chunk
        if len(buf) > 4096:
            return None
    head, _, rest = buf.partition(b"\n")
    parts = head.split(b" ")
    if len(parts) != 6 or parts[0] != client.PROTOCOL:
        return None
    try:
        sizes = [int(p) for p in parts[2:]]
    except ValueError:
        return None
    total = sum(sizes)
    if min(sizes) < 0 or total > MAX_REQUEST_BYTES:
        return None
    chunks = [rest]
    have = len(rest)
    while have < total:
        chunk = conn.recv(min(1 << 20, total - have))
        if not chunk:
            return None
        chunks.append(chunk)
        have += len(chunk)
    data = b"".join(chunks)[:total]
    fields = []
    at = 0
    for size in sizes:
        fields.append(data[at : at + size])
        at += size
    pkg, cwd, env_blob, body = fields
    env: dict[str, str] = {}
    for item in env_blob.split(b"\0") if env_blob else ():
        key, sep, value = item.partition(b"=")
        if sep and key:
            env[os.fsdecode(key)] = os.fsdecode(value)
    return parts[1].decode("ascii", "replace"), pkg, cwd, env, body


# The TZ the time module was last set to (tzset); the server's own at start.
_applied_tz: list[str | None] = [os.environ.get("TZ")]


def handle(event: str, cwd: bytes, env: dict[str, str], body: bytes) -> bytes:
    """Run one hook call as the caller would have: its environment, its working directory."""
    from . import dispatch

    os.environ.clear()
    os.environ.update(env)
    if env.get("TZ") != _applied_tz[0]:
        time.tzset()  # "today" is the caller's local day
        _applied_tz[0] = env.get("TZ")
    try:
        os.chdir(cwd or b"/")
    except OSError:
        os.chdir("/")
    out = io.StringIO()
    dispatch.run(event, stdin=io.BytesIO(body), stdout=out)
    return out.getvalue().encode("utf-8")


class Server:
    def __init__(self, root: str, path: str) -> None:
        self.root = root
        self.path = path
        self.calls = 0
        self.started = time.time()
        self.stamp = _code_stamp()
        self.sock: socket.socket | None = None
        self.inode: int | None = None

    def bind(self) -> None:
        _private_dir(os.path.dirname(self.path))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # a stale socket of a server that died: we hold the lock
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(self.path)
        finally:
            os.umask(old)
        sock.listen(LISTEN_BACKLOG)
        self.sock = sock
        self.inode = os.stat(self.path).st_ino

    def still_ours(self) -> bool:
        """False once our socket file is gone or replaced (state root removed, a new server)."""
        try:
            return os.stat(self.path).st_ino == self.inode
        except OSError:
            return False

    def status(self) -> str:
        return (
            f"pid={os.getpid()} calls={self.calls} up_s={time.time() - self.started:.0f} "
            f"rss_mb={_rss_mb():.1f}"
        )

    def serve(self, idle_exit_s: float = IDLE_EXIT_S) -> None:
        assert self.sock is not None
        self.sock.settimeout(idle_exit_s)
        home_env = dict(os.environ)
        try:
            while self.calls < MAX_CALLS:
                try:
                    conn, _ = self.sock.accept()
                except TimeoutError:
                    return  # idle: make way
                with conn:
                    if not self._answer(conn, home_env):
                        return
        finally:
            self.close()

    def _answer(self, conn: socket.socket, home_env: dict[str, str]) -> bool:
        """Answer one connection; False when the server must stop."""
        from ..base.log import log_error

        conn.settimeout(READ_TIMEOUT_S)
        try:
            req = _read_request(conn)
            if req is None:
                conn.sendall(b"ERROR bad request\n")
                return True
            event, pkg, cwd, env, body = req
            if event == client.PING:
                conn.sendall(b"OK\n" + self.status().encode())
                return True
            if event == client.STOP:
                conn.sendall(b"OK\nstopping\n")
                return False
            if pkg != client.PACKAGE_DIR or _code_stamp() != self.stamp or not self.still_ours():
                conn.sendall(b"RETRY\n")
                return False
            self.calls += 1
            signal.alarm(CALL_LIMIT_S)  # default action: the process ends
            try:
                out = handle(event, cwd, env, body)
            finally:
                signal.alarm(0)
                os.environ.clear()
                os.environ.update(home_env)
            conn.sendall(b"OK\n" + out)
            if tokenizer_loaded():
                release_tokenizer()
        except OSError as exc:  # the caller went away or timed out: its hook runs in-process
            log_error("server", f"call dropped: {exc}")
        return True

    def close(self) -> None:
        if self.sock is not None:
            if self.still_ours():
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
            self.sock.close()
            self.sock = None


def tokenizer_loaded() -> bool:
    """Whether a call loaded the tokenizer (``base.tokens``), without importing it."""
    tokens = sys.modules.get("memory_tool.base.tokens")
    return bool(tokens is not None and tokens.loaded())


def release_tokenizer() -> None:
    """Drop the tokenizer and return the freed heap to the system (glibc keeps freed memory
    in its arenas unless asked: without the trim the server stays near 50 MB)."""
    import gc

    from ..base import tokens

    tokens.unload()
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _rss_mb() -> float:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return float(peak) / (1024 * 1024 if sys.platform == "darwin" else 1024)


def _warm() -> None:
    """Import what calls need, so the first prompt is as fast as the hundredth."""
    from . import dispatch

    for event in client.ROUTED_EVENTS:
        dispatch.load_handler(event)
    from ..recall import room  # noqa: F401 - imported for their cost
    from ..store import classify  # noqa: F401 - imported for their cost
    from ..tiers import digest  # noqa: F401 - imported for their cost


def main(idle_exit_s: float | None = None) -> int:
    """Run a server for this state root in the foreground; returns when it exits. Exits at once
    (0) when another server of the same root holds the lock."""
    from pathlib import Path

    from ..base.fsutil import file_lock
    from ..base.log import log_error
    from ..base.paths import state_root

    root = str(state_root())
    run = os.path.join(root, "run")
    try:
        _private_dir(run)
        with file_lock(Path(run) / "server.lock", blocking=False) as got:
            if not got:
                return 0
            server = Server(root, client.socket_path(root))
            server.bind()
            _warm()
            server.serve(IDLE_EXIT_S if idle_exit_s is None else idle_exit_s)
    except Exception as exc:  # noqa: BLE001 - a server that cannot run leaves hooks in-process
        log_error("server", exc)
        return 1
    return 0


def ping(timeout: float = 1.0) -> str | None:
    """The running server's status line, or None."""
    status, out = client.request(client.PING, b"", timeout=timeout)
    return out.decode("utf-8", "replace") if status == client.OK else None


def stop(timeout: float = START_WAIT_S) -> bool:
    """Ask the running server to exit; True when one was running and has gone."""
    status, _ = client.request(client.STOP, b"", timeout=timeout)
    if status != client.OK:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and os.path.exists(client.socket_path()):
        time.sleep(0.02)
    return True


def start(timeout: float = START_WAIT_S) -> str | None:
    """Start a server (unless one runs) and wait until it answers; its status line, or None."""
    line = ping()
    if line is not None:
        return line
    if not client.spawn():
        return None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = ping()
        if line is not None:
            return line
        time.sleep(0.05)
    return None


if __name__ == "__main__":
    sys.exit(main())
