"""Hooks over HTTP: Claude Code POSTs the hook's JSON to the resident server on 127.0.0.1.

A command hook starts a process per call (tens of milliseconds before any work); an HTTP hook is
one loopback request to a process that already holds everything (a few milliseconds), which is
what makes hooks on every tool call affordable. SessionStart cannot be an HTTP hook (Claude Code
skips them for it), so it stays a command hook and starts the server.

Security: the server listens on 127.0.0.1 only, and every request must carry this install's
secret in the ``X-Memory-Tool-Secret`` header. The secret lives in one place, the user's
``settings.json`` (``env.MEMORY_TOOL_HOOK_SECRET``, owner-only), and the hooks name it as
``${MEMORY_TOOL_HOOK_SECRET}`` with ``allowedEnvVars``, so settings.json and the plugin's
hooks.json carry the very same handler (Claude Code runs identical handlers once). Another local
user can reach the port but not read the file: a request without the secret gets 403 and an
empty JSON body, before its body is even read.

Answers are always JSON (Claude Code reports a plain-text body as a hook error): the handler's
output, or ``{}``. Stop and SubagentStop answer ``{}`` unless they carry the handoff's block (or
its reminder line): context from a Stop hook makes Claude continue the turn.

This module is the server's HTTP front: it parses one request from a socket and writes one
answer. Nothing here runs on a command hook's path.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The settings.json `env` entry that holds the secret, and the header the hooks send it in.
SECRET_ENV = "MEMORY_TOOL_HOOK_SECRET"
SECRET_HEADER = "x-memory-tool-secret"
# Tests and benchmarks run many servers side by side: each takes its own port from here.
PORT_ENV = "MEMORY_TOOL_SERVER_PORT"
LOOPBACK = "127.0.0.1"
# Claude Code sends the whole request at once; a connection that trickles (or a local user
# holding one open) must not hold the one-at-a-time server for long.
READ_TIMEOUT_S = 2.0
# Request line plus Claude Code's eight or so headers is well under 2 KB.
MAX_HEADER_BYTES = 16 * 1024
# A hook body is the same JSON a command hook reads on stdin: the client's stdin cap.
MAX_BODY_BYTES = 32 * 1024 * 1024
# Events whose answer must be `{}` or the handoff's decision: anything else they return (extra
# context) makes Claude continue the turn, eight more model calls (see the reference notes).
STOP_EVENTS = frozenset({"Stop", "SubagentStop"})
STOP_KEYS = frozenset({"decision", "reason", "systemMessage"})
PATH_PREFIX = "/hook/"
EMPTY = b"{}"


def port() -> int:
    """The port of this state root's server: ``MEMORY_TOOL_SERVER_PORT``, else ``server.port``
    in config.yaml (default ``HOOK_SERVER_PORT``)."""
    env = os.environ.get(PORT_ENV, "")
    if env.isdigit() and 0 < int(env) < 65536:
        return int(env)
    from ..base.config import HOOK_SERVER_PORT, load_config

    try:
        value = load_config().get("server", {}).get("port", HOOK_SERVER_PORT)
    except Exception:  # noqa: BLE001 - a broken config must not stop the server
        value = HOOK_SERVER_PORT
    return value if isinstance(value, int) else HOOK_SERVER_PORT


def hook_url(event: str, port: int) -> str:
    return f"http://{LOOPBACK}:{port}{PATH_PREFIX}{event}"


def read_secret(settings_path: Path) -> str | None:
    """The secret from ``settings.json``'s env block, or None (then every request gets 403)."""
    try:
        data: Any = json.loads(settings_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    env = data.get("env") if isinstance(data, dict) else None
    secret = env.get(SECRET_ENV) if isinstance(env, dict) else None
    return secret if isinstance(secret, str) and len(secret) >= 16 else None


class SecretSource:
    """The secret as settings.json holds it now: re-read when the file changes (an install
    rotates it), one stat per request otherwise."""

    def __init__(self, settings_path: Path) -> None:
        self.path = settings_path
        self._stamp: tuple[int, int, int] | None = None
        self._secret: str | None = None

    def get(self) -> str | None:
        try:
            st = os.stat(self.path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            self._stamp, self._secret = None, None
            return None
        if stamp != self._stamp:
            self._secret = read_secret(self.path)
            self._stamp = stamp
        return self._secret


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def event(self) -> str:
        return self.path[len(PATH_PREFIX) :] if self.path.startswith(PATH_PREFIX) else ""


class BadRequest(Exception):
    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


def read_head(conn: socket.socket, first: bytes = b"") -> tuple[str, str, dict[str, str], bytes]:
    """Request line and headers (names lower-cased), plus whatever of the body came with them."""
    buf = first
    while b"\r\n\r\n" not in buf:
        if len(buf) > MAX_HEADER_BYTES:
            raise BadRequest(431, "headers too large")
        chunk = conn.recv(8192)
        if not chunk:
            raise BadRequest(400, "connection closed in the headers")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise BadRequest(400, "bad request line")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return parts[0], parts[1], headers, rest


def read_body(conn: socket.socket, headers: dict[str, str], rest: bytes) -> bytes:
    if "transfer-encoding" in headers:
        raise BadRequest(411, "chunked bodies are not accepted")  # Claude Code sends a length
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise BadRequest(400, "bad content-length") from None
    if length < 0 or length > MAX_BODY_BYTES:
        raise BadRequest(413, "body too large")
    chunks, have = [rest], len(rest)
    while have < length:
        chunk = conn.recv(min(1 << 20, length - have))
        if not chunk:
            raise BadRequest(400, "connection closed in the body")
        chunks.append(chunk)
        have += len(chunk)
    return b"".join(chunks)[:length]


def authorised(headers: dict[str, str], secret: str | None) -> bool:
    given = headers.get(SECRET_HEADER, "")
    # compare_digest: the time taken says nothing about how much of a guess was right.
    return bool(secret) and hmac.compare_digest(given.encode(), (secret or "").encode())


def shape_answer(event: str, out: bytes) -> bytes:
    """The handler's output as the HTTP body: always a JSON object; Stop only its decision."""
    text = out.strip()
    if not text:
        return EMPTY
    try:
        data = json.loads(text)
    except ValueError:
        return EMPTY
    if not isinstance(data, dict):
        return EMPTY
    if event in STOP_EVENTS:
        data = {k: v for k, v in data.items() if k in STOP_KEYS}
        if not data:
            return EMPTY
        return json.dumps(data, ensure_ascii=False).encode("utf-8")
    return text


REASONS = {
    200: "OK",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Payload Too Large",
    431: "Request Header Fields Too Large",
    503: "Service Unavailable",
}


def send(conn: socket.socket, status: int, body: bytes = EMPTY) -> None:
    head = (
        f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        conn.sendall(head.encode("ascii") + body)


def payload_of(body: bytes) -> dict[str, Any] | None:
    """The hook payload as a dict, or None when the body is not a JSON object."""
    try:
        data = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
