"""The resident hook server: one process per state root that answers hook calls warm.

Claude Code starts a new process for every command hook; most of that process's time is
interpreter start-up and imports, not work (see ``client.py``). The server imports everything
once and answers on two doors:

- HTTP on 127.0.0.1 (``hook_http.py``): Claude Code's own ``type: "http"`` hooks, every event
  but SessionStart. Each request must carry this install's secret; there is no fallback in the
  request's path (Claude Code makes it), so a server that is down costs those hooks their
  context, nothing more, until the next SessionStart starts one. Hence its life follows the
  sessions it serves (``sessions.py``), and a server that must retire (an upgrade, ``MAX_CALLS``,
  a stuck call) starts its successor before it goes.
- A unix socket in ``<state>/run/`` for the command hooks (SessionStart, and UserPromptSubmit
  of an install that predates HTTP hooks); the hook script is a small client.

Beyond that:
- The command hook's client falls back to running the hook in-process on any failure (no
  server, a refused or slow connection, a bad answer): there a dead server costs speed only.
- A call runs through the very same ``dispatch.run`` as in-process, with the caller's environment
  and working directory, so both paths give byte-identical output (tested).
- It exits once no session it serves is live and ``sessions.GRACE_S`` has passed (with no
  session ever seen: after ``IDLE_EXIT_S`` without calls); after ``MAX_CALLS`` calls and as soon
  as its own code changes on disk (an upgrade) it hands over to a successor; a hook of another
  install gets RETRY and starts its own. One server per state root: a lock file decides.
- It stays small: a call that had to load the tokenizer (a line no token count was cached for)
  lets it go again once answered, and the freed memory is handed back to the system; the
  tokenizer holds ~50 MB that the steady prompt path never needs (counts are cached in the
  index), so a server that kept it would hold 60-80 MB for a whole working day.
- It keeps one index connection open between calls (``store.index.keep_open``): no open and
  close per hook, a warm page cache, and the room's row sets a prompt's search reads stay
  cached until the index changes. A file set aside, deleted or replaced is opened afresh.
- It runs calls one at a time, from both doors. They take milliseconds; a command hook that
  waits longer than the client's timeout runs in-process instead.

Started detached by SessionStart (and by a prompt that found no server), unless
``MEMORY_TOOL_SERVER=0``, ``MEMORY_TOOL_NO_BACKGROUND`` or ``server.enabled: false`` in
config.yaml; ``memory-tool server start|stop|status`` manage it by hand.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import signal
import socket
import stat
import sys
import time
from typing import Any

from . import client, hook_http, http_status
from .sessions import GRACE_S, SESSION_ENV_KEYS, Sessions

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
# Claude Code runs a turn's hooks in parallel (parallel tool calls, several handlers): room for
# a burst well past the 50 concurrent hooks the tests send.
HTTP_BACKLOG = 128
# Between calls the server wakes this often to see whether its sessions still run.
TICK_S = 60.0
# The HTTP door checks the package on disk for an upgrade at most this often.
CODE_CHECK_S = 1.0
# Two installs (plugin and settings.json) whose handlers differ send a hook twice at once.
TWIN_WINDOW_S = 10.0
MAX_RECENT = 512
# A successor binds the port its predecessor is releasing.
BIND_WAIT_S = 3.0
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


class _Probe(Exception):
    """A connection closed before its first byte: a SessionStart checking that this server
    listens (client._listening). Nothing to answer, nothing to log."""


def _read_request(conn: socket.socket) -> tuple[str, bytes, bytes, dict[str, str], bytes] | None:
    """(event, client package folder, cwd, environment, stdin) of one request, or None when it
    is malformed; raises _Probe for a connection that sent nothing."""
    buf = b""
    while b"\n" not in buf:
        chunk = conn.recv(4096)
        if not chunk:
            if not buf:
                raise _Probe
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


def set_environ(env: dict[str, str]) -> None:
    """Make ``os.environ`` equal ``env``, touching only what differs: a call's environment is
    mostly the server's own, and clearing and refilling ~40 variables (each a putenv) cost more
    than an unhandled hook's whole work."""
    current = os.environ
    for key in [k for k in current if k not in env]:
        del current[key]
    for key, value in env.items():
        if current.get(key) != value:
            current[key] = value


def handle(event: str, cwd: bytes, env: dict[str, str], body: bytes) -> bytes:
    """Run one hook call as the caller would have: its environment, its working directory."""
    from . import dispatch

    set_environ(env)
    if env.get("TZ") != _applied_tz[0]:
        time.tzset()  # "today" is the caller's local day
        _applied_tz[0] = env.get("TZ")
    try:
        os.chdir(cwd or b"/")
    except OSError:
        os.chdir("/")
    out = io.StringIO()
    try:
        dispatch.run(event, stdin=io.BytesIO(body), stdout=out)
    finally:
        from ..store.index import release_kept

        release_kept()
    return out.getvalue().encode("utf-8")


class Server:
    def __init__(
        self,
        root: str,
        path: str,
        port: int | None = None,
        secret: hook_http.SecretSource | None = None,
    ) -> None:
        self.root = root
        self.path = path
        self.port = port
        self.secret = secret
        self.calls = 0
        self.started = time.time()
        self.last_call = self.started
        self.stamp = _code_stamp()
        self.stamp_checked = time.monotonic()
        self.sock: socket.socket | None = None
        self.tcp: socket.socket | None = None
        self.inode: int | None = None
        self.sessions = Sessions(os.path.join(root, "run", "sessions.json"))
        self.had_sessions = bool(self.sessions.items)
        # Hand over to a successor when leaving (an upgrade, MAX_CALLS) while sessions are live.
        self.successor = False
        self.recent: dict[tuple[str, int], float] = {}
        self.home_env: dict[str, str] = dict(os.environ)
        self.base_env: dict[str, str] = {}
        self._ports: set[int] = set()
        self._ports_stamp: tuple[int, int, int] | None = None

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
        if self.port:
            self.tcp = _bind_tcp(self.port)
            self._http_found(None if self.tcp is not None else http_status.who_holds(self.port))

    def _http_found(self, problem: str | None) -> None:
        with contextlib.suppress(OSError):
            http_status.record(problem, self.port, self.root)

    def _check_session(self, env: dict[str, str]) -> None:
        """At a SessionStart (the one hook with the session's environment): whether its HTTP
        hooks will reach this server. A port another program held at start is tried again."""
        if not self.port:
            return
        if self.tcp is None:
            self.tcp = _bind_tcp(self.port, wait_s=0.0)
            if self.tcp is None:
                self._http_found(http_status.who_holds(self.port))
                return
        held = self.secret.get() if self.secret is not None else None
        self._http_found(
            http_status.session_problem(
                self.port, True, env.get(hook_http.SECRET_ENV), held, self._settings_ports()
            )
        )

    def _settings_ports(self) -> set[int]:
        """Where settings.json sends the HTTP hooks (read again when the file changes)."""
        path = self.secret.path if self.secret is not None else None
        if path is None:
            return set()
        try:
            st = os.stat(path)
        except OSError:
            return set()
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp != self._ports_stamp:
            import json

            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = {}
            self._ports = http_status.settings_ports(data) if isinstance(data, dict) else set()
            self._ports_stamp = stamp
        return self._ports

    def still_ours(self) -> bool:
        """False once our socket file is gone or replaced (state root removed, a new server)."""
        try:
            return os.stat(self.path).st_ino == self.inode
        except OSError:
            return False

    def status(self) -> str:
        http = f"127.0.0.1:{self.port}" if self.tcp is not None else "off"
        return (
            f"pid={os.getpid()} calls={self.calls} up_s={time.time() - self.started:.0f} "
            f"http={http} sessions={len(self.sessions.items)} rss_mb={_rss_mb():.1f}"
        )

    def serve(self, idle_exit_s: float = IDLE_EXIT_S) -> None:
        assert self.sock is not None
        home_env = self.home_env = dict(os.environ)
        self.base_env = {k: v for k, v in home_env.items() if k not in SESSION_ENV_KEYS}
        try:
            while True:
                # The HTTP door may open later (a port another program held, tried again).
                listeners = [s for s in (self.sock, self.tcp) if s is not None]
                if self.calls >= MAX_CALLS:
                    self.successor = True
                    return
                wait = self._wait_or_exit(idle_exit_s)
                if wait is None:
                    return  # idle: make way
                ready, _, _ = select.select(listeners, [], [], wait)
                for listening in ready:
                    try:
                        conn, _ = listening.accept()
                    except OSError:
                        continue
                    with conn:
                        if listening is self.sock:
                            goes_on = self._answer(conn, home_env)
                        else:
                            goes_on = self._answer_http(conn, home_env)
                    if tokenizer_loaded():  # after the answer went out
                        release_tokenizer()
                    if not goes_on:
                        return
                if self._upgraded(listeners):
                    self.successor = True
                    return
        finally:
            self.close()

    def _wait_or_exit(self, idle_exit_s: float) -> float | None:
        """How long to wait for the next call, or None when the server should exit: no session
        it serves is live, and none was (nor a call came) for the grace period."""
        now = time.time()
        if self.sessions.live(now):
            self.had_sessions = True
            return TICK_S
        limit = min(GRACE_S, idle_exit_s) if self.had_sessions else idle_exit_s
        left = limit - (now - max(self.last_call, self.sessions.last_live))
        return None if left <= 0 else min(left, TICK_S)

    def _run(
        self, event: str, cwd: bytes, env: dict[str, str], body: bytes, home_env: dict[str, str]
    ) -> bytes:
        self.calls += 1
        self.last_call = time.time()
        signal.alarm(CALL_LIMIT_S)  # see _stuck: a successor, then the process ends
        try:
            return handle(event, cwd, env, body)
        finally:
            signal.alarm(0)
            set_environ(home_env)

    def _upgraded(self, listeners: list[socket.socket]) -> bool:
        """Whether the package changed on disk, looked at between calls: at most every
        ``CODE_CHECK_S`` and never while a hook waits (walking the package costs 1-3 ms, which
        a burst of tool calls must not queue behind), so an upgrade is seen within a second or
        so, and the successor answers from then on."""
        if time.monotonic() - self.stamp_checked < CODE_CHECK_S:
            return False
        if select.select(listeners, [], [], 0)[0]:
            return False  # a hook is waiting: answer it first
        return self._code_changed()

    def _code_changed(self) -> bool:
        """Whether the package on disk is no longer the code this process runs (the command
        door, which has a fallback, looks before every call; see ``_upgraded``)."""
        self.stamp_checked = time.monotonic()
        return _code_stamp() != self.stamp

    def _answer(self, conn: socket.socket, home_env: dict[str, str]) -> bool:
        """Answer one command hook's connection; False when the server must stop."""
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
            if not self.still_ours():
                conn.sendall(b"RETRY\n")
                return False
            if pkg != client.PACKAGE_DIR:
                conn.sendall(b"RETRY\n")  # another install: its hook starts a server of its own
                return False
            if self._code_changed():
                conn.sendall(b"RETRY\n")
                self.successor = True
                return False
            session = _session_of(body)
            self.sessions.touch(session, env)
            if event == "SessionStart":
                self._check_session(env)  # before the brief: it says what is wrong
            out = self._run(event, cwd, env, body, home_env)
            if event == "SessionEnd":
                self.sessions.end(session)
            conn.sendall(b"OK\n" + out)
        except _Probe:
            pass
        except OSError as exc:  # the caller went away or timed out: its hook runs in-process
            log_error("server", f"call dropped: {exc}")
        return True

    def _answer_http(self, conn: socket.socket, home_env: dict[str, str]) -> bool:
        """Answer one HTTP hook; False when the server must stop. Every answer is JSON."""
        from ..base.log import log_error

        conn.settimeout(hook_http.READ_TIMEOUT_S)
        event = "http"
        try:
            method, path, headers, rest = hook_http.read_head(conn)
            secret = self.secret.get() if self.secret is not None else None
            if not hook_http.authorised(headers, secret):
                hook_http.send(conn, 403)  # before reading the body: nothing else for them
                return True
            prefix = hook_http.PATH_PREFIX
            event = path[len(prefix) :] if path.startswith(prefix) else ""
            if not event.isalnum():
                hook_http.send(conn, 404)
                return True
            if method != "POST":
                hook_http.send(conn, 405)
                return True
            body = hook_http.read_body(conn, headers, rest)
            payload = hook_http.payload_of(body)
            if payload is None:
                log_error(event, "HTTP hook body is not a JSON object: ignored")
                hook_http.send(conn, 200)
                return True
            if self._twin(event, body):
                hook_http.send(conn, 200)  # the same hook from a second install: answered once
                return True
            if not self.still_ours():
                hook_http.send(conn, 200)  # a new server took over the state root
                return False
            session = payload.get("session_id")
            session = session if isinstance(session, str) else ""
            self.sessions.touch(session)
            env = {**self.base_env, **self.sessions.env_of(session)}
            cwd = payload.get("cwd")
            cwd_bytes = os.fsencode(cwd) if isinstance(cwd, str) else b""
            out = self._run(event, cwd_bytes, env, body, home_env)
            hook_http.send(conn, 200, hook_http.shape_answer(event, out))
            if event == "SessionEnd":
                self.sessions.end(session)
        except hook_http.BadRequest as exc:
            log_error(event, f"HTTP hook refused: {exc}")
            hook_http.send(conn, exc.status)
        except OSError as exc:  # the caller went away or timed out
            log_error("server", f"HTTP call dropped: {exc}")
        return True

    def _twin(self, event: str, body: bytes) -> bool:
        """True for the second of two identical requests within ``TWIN_WINDOW_S``: memory-tool
        installed both as the plugin and in settings.json with handlers that differ (another
        port, an older install) sends each hook twice."""
        import zlib

        now = time.monotonic()
        key = (event, zlib.crc32(body) ^ (len(body) << 32))
        seen = self.recent.get(key)
        self.recent[key] = now
        if len(self.recent) > MAX_RECENT:
            self.recent = {k: t for k, t in self.recent.items() if now - t < TWIN_WINDOW_S}
        return seen is not None and now - seen < TWIN_WINDOW_S

    def close(self) -> None:
        if self.tcp is not None:
            self.tcp.close()
            self.tcp = None
        if self.sock is not None:
            if self.still_ours():
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
            self.sock.close()
            self.sock = None


def _session_of(body: bytes) -> str:
    payload = hook_http.payload_of(body)
    session = payload.get("session_id") if payload else None
    return session if isinstance(session, str) else ""


def _bind_tcp(port: int, wait_s: float = BIND_WAIT_S) -> socket.socket | None:
    """Listen on 127.0.0.1:``port``; a predecessor handing over may hold it a moment longer.
    None when it stays taken (logged, and kept in run/http.json for doctor and the brief: the
    HTTP hooks then lose their context, the command hooks still come through the unix
    socket)."""
    from ..base.log import log_error

    deadline = time.monotonic() + wait_s
    while True:
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # Lets a successor bind while the old connections sit in TIME_WAIT; on Linux it never
        # lets two listeners share the port.
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            tcp.bind((hook_http.LOOPBACK, port))
            tcp.listen(HTTP_BACKLOG)
            return tcp
        except OSError as exc:
            tcp.close()
            if time.monotonic() >= deadline:
                log_error("server", f"cannot listen on 127.0.0.1:{port} ({exc}); see server.port")
                return None
            time.sleep(0.05)


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

    for event in dispatch.HANDLER_MODULES:
        dispatch.load_handler(event)
    from ..recall import room  # noqa: F401 - imported for their cost
    from ..store import classify  # noqa: F401 - imported for their cost
    from ..tiers import digest  # noqa: F401 - imported for their cost


# Set in a successor's environment: wait for the predecessor's lock instead of leaving.
SUCCESSOR_ENV = "MEMORY_TOOL_SERVER_SUCCESSOR"
# Set by a SessionStart that ran in-process and started this server: that session is served.
SESSION_ENV = "MEMORY_TOOL_SERVER_SESSION"
_current: list[Server] = []


def _spawn_successor(env: dict[str, str]) -> None:
    client.spawn({**env, SUCCESSOR_ENV: "1"})


def _stuck(signum: int, frame: object) -> None:
    """SIGALRM: a call ran past ``CALL_LIMIT_S``. Hand over to a successor when a session is
    still served (its HTTP hooks have nowhere else to go), then end as the signal would."""
    if _current and _current[0].sessions.items:
        _spawn_successor(_current[0].home_env)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGALRM)


def _lock(path: object, wait_s: float) -> Any:
    """The server lock, waited for up to ``wait_s`` (a successor), else tried once."""
    from ..base.fsutil import file_lock

    deadline = time.monotonic() + wait_s
    while True:
        cm = file_lock(path, blocking=False)  # type: ignore[arg-type]
        got = cm.__enter__()
        if got or time.monotonic() >= deadline:
            return cm, got
        cm.__exit__(None, None, None)
        time.sleep(0.05)


def main(idle_exit_s: float | None = None) -> int:
    """Run a server for this state root in the foreground; returns when it exits. Exits at once
    (0) when another server of the same root holds the lock."""
    from pathlib import Path

    from ..base.log import log_error
    from ..base.paths import settings_file, state_root

    root = str(state_root())
    run = os.path.join(root, "run")
    successor = os.environ.pop(SUCCESSOR_ENV, "") == "1"
    spawner = os.environ.pop(SESSION_ENV, "")
    client.IN_SERVER[0] = True  # a handler's ensure_server() must not ping this very process
    server: Server | None = None
    try:
        _private_dir(run)
        cm, got = _lock(Path(run) / "server.lock", BIND_WAIT_S if successor else 0.0)
        try:
            if not got:
                return 0
            port = hook_http.port() if client.may_start() else None
            secret = hook_http.SecretSource(settings_file())
            server = Server(root, client.socket_path(root), port, secret)
            server.home_env = dict(os.environ)
            if spawner:
                server.sessions.touch(spawner, dict(os.environ))
            server.bind()
            _current[:] = [server]
            signal.signal(signal.SIGALRM, _stuck)
            _warm()
            from ..store.index import keep_open

            keep_open()  # one index connection for every call (store.index.keep_open)
            server.serve(IDLE_EXIT_S if idle_exit_s is None else idle_exit_s)
        finally:
            cm.__exit__(None, None, None)
    except Exception as exc:  # noqa: BLE001 - a server that cannot run leaves hooks in-process
        log_error("server", exc)
        return 1
    if server is not None and server.successor and server.sessions.live():
        _spawn_successor(server.home_env)  # the lock is released: it can take over
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
