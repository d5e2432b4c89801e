"""Whether this install's HTTP hooks reach its server, as the server last found it.

An HTTP hook has no fallback (Claude Code makes the request): when another program holds the
port settings.json names, when the server listens on another port than settings.json names, or
when the session sends another secret than the server holds, every UserPromptSubmit, tool hook
and Stop of the session silently brings nothing. The server finds this out where it costs
nothing on the steady path: when it binds its port, and when a SessionStart (a command hook,
through the unix socket, with the session's environment) reaches it. What it finds is kept in
``<state>/run/http.json``: ``memory-tool doctor`` reports it, the next brief says it in one line,
and the hook log has it.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from . import client

STATUS_NAME = "http.json"
# The brief's line when the HTTP hooks cannot reach the server (what the session loses).
BRIEF_PREFIX = "Memory hook server: "
BRIEF_SUFFIX = "; prompts and tool calls get no memory until it is fixed: memory-tool doctor"


def status_path(root: str | None = None) -> str:
    return os.path.join(client.state_root() if root is None else root, "run", STATUS_NAME)


def read(root: str | None = None) -> dict[str, Any]:
    try:
        with open(status_path(root), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def problem(root: str | None = None) -> str | None:
    """What keeps the HTTP hooks from the server, as last recorded, or None."""
    why = read(root).get("problem")
    return why if isinstance(why, str) and why else None


def record(problem_text: str | None, port: int | None, root: str | None = None) -> None:
    """Keep what the server found (written only when it changed; a problem also goes to the
    hook log)."""
    last = read(root)
    if last and last.get("problem") == problem_text and last.get("port") == port:
        return
    path = status_path(root)
    tmp = f"{path}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError):
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"port": port, "problem": problem_text}, fh)
        os.replace(tmp, path)
    if problem_text:
        from ..base.log import log_error

        log_error("server", f"HTTP hooks: {problem_text}")


def who_holds(port: int) -> str:
    """What answers on 127.0.0.1:``port`` when this server could not bind it: a memory-tool
    server of another install (it answers a request without a secret with its empty JSON 403)
    or another program. The request carries no secret: whoever listens there must not get
    this install's."""
    import socket

    answer = b""
    try:
        conn = socket.create_connection(("127.0.0.1", port), timeout=0.5)
    except OSError as exc:  # nobody listens, yet the port could not be bound
        return f"127.0.0.1:{port} cannot be listened on ({exc.strerror or exc})"
    with conn, contextlib.suppress(OSError):  # silence or a reset: not one of ours
        conn.settimeout(0.5)
        head = (
            f"POST /hook/SessionStart HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Length: 2\r\nConnection: close\r\n\r\n{}"
        )
        conn.sendall(head.encode("ascii"))
        answer = conn.recv(4096)
    if answer.startswith(b"HTTP/1.1 403 Forbidden") and answer.endswith(b"\r\n\r\n{}"):
        return (
            f"127.0.0.1:{port} is held by the hook server of another memory-tool install "
            "(another state folder or Claude config folder): give one of them another "
            "`server.port` in config.yaml, then `memory-tool install`"
        )
    return (
        f"127.0.0.1:{port} is held by another program: free it, or set another `server.port` "
        "in config.yaml and run `memory-tool install`"
    )


def settings_ports(settings: dict[str, Any]) -> set[int]:
    """The ports settings.json sends memory-tool's HTTP hooks to."""
    from .hook_http import LOOPBACK, PATH_PREFIX

    out: set[int] = set()
    hooks = settings.get("hooks")
    for groups in hooks.values() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            for h in group.get("hooks", []) if isinstance(group, dict) else ():
                url = h.get("url") if isinstance(h, dict) else None
                prefix = f"http://{LOOPBACK}:"
                if isinstance(url, str) and url.startswith(prefix) and PATH_PREFIX in url:
                    port = url[len(prefix) :].split("/", 1)[0]
                    if port.isdigit():
                        out.add(int(port))
    return out


def session_problem(
    port: int | None, listening: bool, sent: str | None, held: str | None, ports: set[int]
) -> str | None:
    """What keeps a session's HTTP hooks from this server (None: nothing): ``sent`` is the
    secret the session's hooks carry (its environment), ``held`` the one the server checks,
    ``ports`` where settings.json sends them."""
    if port is None:
        return None
    if ports and port not in ports:
        named = ", ".join(str(p) for p in sorted(ports))
        return (
            f"settings.json sends HTTP hooks to port {named} but the server listens on {port} "
            "(`server.port` changed since the install): run `memory-tool install`"
        )
    if listening and sent and held and sent != held:
        return (
            "this session's HTTP hooks carry another secret than settings.json holds (it was "
            "rewritten after the session started): start a new session"
        )
    return None


def findings() -> list[Any]:
    """The doctor's finding when the HTTP hooks cannot reach the server."""
    from ..hygiene.report import PROBLEM, Finding

    why = problem()
    if why is None:
        return []
    return [Finding("hook_server", PROBLEM, f"HTTP hooks: {why}", path=status_path())]


def brief_units(idx: Any) -> list[Any]:
    """The brief's one line when the HTTP hooks cannot reach the server (else nothing)."""
    why = problem()
    if why is None:
        return []
    from ..recall.layers import Unit

    text = f"{BRIEF_PREFIX}{why}{BRIEF_SUFFIX}\n"
    return [Unit(text, idx.count_cached(text))]
