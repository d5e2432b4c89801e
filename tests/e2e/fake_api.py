"""A stand-in for the Anthropic Messages API, so the real `claude` binary runs a session offline.

Binds 127.0.0.1 only, on a free port, serving from a daemon thread (stdlib http.server). Every
request is recorded (method, path, headers, parsed JSON body). POST /v1/messages answers with a
server-sent-event stream when the body says `"stream": true`, else with one JSON message.

Scripting: tests queue responses (`add_text`, `add_tool_use`, `add_response`). Only requests of the
main conversation (see `is_main_conversation`) take from the queue; Claude Code's side requests
(session title, quota probe, ...) get a harmless canned answer and never eat a scripted response.
When the queue is empty the main conversation is answered with the text "ok".
"""

from __future__ import annotations

import gzip
import itertools
import json
import threading
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_REPLY = "ok"
# Token counts are fake; they only need to be plausible numbers (the client sums them for cost).
FAKE_INPUT_TOKENS = 100
FAKE_OUTPUT_TOKENS = 10
# serve_forever checks for shutdown this often; the stdlib default (0.5 s) slows every teardown.
SHUTDOWN_POLL_SECONDS = 0.05

Block = dict[str, Any]


@dataclass
class Scripted:
    """One queued assistant turn: its content blocks and the input-token usage it reports."""

    blocks: list[Block]
    # What the turn claims the prompt cost. Claude Code tracks context size from this, so a big
    # number (with `--autocompact 100000`) makes it auto-compact before its next request.
    input_tokens: int = FAKE_INPUT_TOKENS


@dataclass
class RecordedRequest:
    """One HTTP request the client made to the stand-in."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text if it was not JSON, or None when empty
    main: bool = False  # True for requests of the main conversation (took from the queue)

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.path.split("?")[0] == "/v1/messages"

    def text(self) -> str:
        """The whole body as text: handy for `"MARKER" in req.text()`."""
        return json.dumps(self.body, ensure_ascii=False)

    @property
    def session_id(self) -> str | None:
        """The Claude Code session that sent this request (header, else metadata.user_id)."""
        for k, v in self.headers.items():
            if k.lower() == "x-claude-code-session-id":
                return v
        meta = self.body.get("metadata") if isinstance(self.body, dict) else None
        try:
            sid = json.loads(meta["user_id"]).get("session_id")  # type: ignore[index]
        except (TypeError, KeyError, ValueError, AttributeError):
            return None
        return sid if isinstance(sid, str) else None

    @property
    def is_compaction(self) -> bool:
        """A /compact (or auto-compact) summary request: its last user turn asks for a summary."""
        if not isinstance(self.body, dict) or not self.body.get("messages"):
            return False
        last = _flatten_text(self.body["messages"][-1])
        return "create a detailed summary of the conversation" in last

    def system_text(self) -> str:
        return _flatten_text(self.body.get("system") if isinstance(self.body, dict) else None)

    def messages_text(self) -> str:
        return _flatten_text(self.body.get("messages") if isinstance(self.body, dict) else None)


@dataclass
class FakeAnthropicAPI:
    """The stand-in server. Use as a context manager, or call start()/stop()."""

    host: str = "127.0.0.1"
    requests: list[RecordedRequest] = field(default_factory=list)
    _queue: deque[Scripted] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _ids: Iterator[int] = field(default_factory=itertools.count)

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeAnthropicAPI:
        if self.host != "127.0.0.1":
            raise ValueError("the stand-in API binds 127.0.0.1 only")
        api = self

        class Handler(_Handler):
            owner = api

        self._server = ThreadingHTTPServer((self.host, 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": SHUTDOWN_POLL_SECONDS},
            name="fake-anthropic-api",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAnthropicAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # ---- scripting -------------------------------------------------------------------------
    def add_response(
        self, blocks: Iterable[Block], *, input_tokens: int = FAKE_INPUT_TOKENS
    ) -> None:
        """Queue one assistant turn made of content blocks (text and/or tool_use)."""
        with self._lock:
            self._queue.append(Scripted([dict(b) for b in blocks], input_tokens))

    def add_text(self, text: str, *, input_tokens: int = FAKE_INPUT_TOKENS) -> None:
        self.add_response([text_block(text)], input_tokens=input_tokens)

    def add_tool_use(
        self,
        name: str,
        tool_input: dict[str, Any],
        text: str | None = None,
        *,
        input_tokens: int = FAKE_INPUT_TOKENS,
    ) -> str:
        """Queue one turn calling a tool; returns the tool_use id (to find its tool_result)."""
        block = tool_use_block(name, tool_input)
        blocks = ([text_block(text)] if text else []) + [block]
        self.add_response(blocks, input_tokens=input_tokens)
        return str(block["id"])

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    def drop_pending(self) -> int:
        """Forget the scripted turns nobody asked for (the recorded requests stay); how many."""
        with self._lock:
            n = len(self._queue)
            self._queue.clear()
            return n

    # ---- inspection ------------------------------------------------------------------------
    def messages_requests(self) -> list[RecordedRequest]:
        """Every POST /v1/messages, side requests included, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.is_messages]

    def main_requests(self) -> list[RecordedRequest]:
        """POST /v1/messages requests of the main conversation, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.is_messages and r.main]

    def other_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if not (r.is_messages and r.main)]

    # ---- internals -------------------------------------------------------------------------
    def _record(self, req: RecordedRequest) -> Scripted:
        """Record a request and pick the turn to answer it with."""
        with self._lock:
            self.requests.append(req)
            if not req.is_messages:
                return Scripted([text_block(DEFAULT_REPLY)])
            req.main = is_main_conversation(req.body)
            if req.main and self._queue:
                return self._queue.popleft()
            return Scripted([text_block(side_reply(req.body) if not req.main else DEFAULT_REPLY)])

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):04d}{uuid.uuid4().hex[:20]}"


def text_block(text: str) -> Block:
    return {"type": "text", "text": text}


def tool_use_block(name: str, tool_input: dict[str, Any], tool_id: str | None = None) -> Block:
    return {
        "type": "tool_use",
        "id": tool_id or f"toolu_{uuid.uuid4().hex[:24]}",
        "name": name,
        "input": tool_input,
    }


def is_main_conversation(body: Any) -> bool:
    """Whether a /v1/messages body belongs to the main agent loop (as opposed to a side request).

    Observed with claude-code 2.1.332 in -p mode (with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
    it sends nothing but main-loop requests): every main-loop request offers the built-in tools
    (Bash, Write, ...), and so does a /compact summary request (see RecordedRequest.is_compaction).
    A request without those tools (a nested `claude -p --tools ""`, a title or quota probe in other
    versions) is a side request: it is answered "ok" and leaves the queue alone. To tell sessions
    apart use RecordedRequest.session_id.
    """
    if not isinstance(body, dict):
        return False
    tools = body.get("tools") or []
    names = {t.get("name") for t in tools if isinstance(t, dict)}
    return bool(names & {"Bash", "Write", "Read", "Edit"})


def side_reply(body: Any) -> str:
    """A harmless answer for a side request (a title request wants JSON with a title)."""
    system = _flatten_text(body.get("system")) if isinstance(body, dict) else ""
    if "title" in system.lower() and "json" in system.lower():
        return json.dumps({"title": "Test session"})
    return DEFAULT_REPLY


def _flatten_text(value: Any) -> str:
    """All strings in a system/messages value joined (content may be a str or a list of blocks)."""
    out: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                if k in ("text", "content", "input") or isinstance(x, (list, dict)):
                    walk(x)

    walk(value)
    return "\n".join(out)


def _message(api: FakeAnthropicAPI, model: str, turn: Scripted) -> dict[str, Any]:
    blocks = turn.blocks
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {
        "id": api._next_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": turn.input_tokens, "output_tokens": FAKE_OUTPUT_TOKENS},
    }


def _sse_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The event sequence the real API streams for one message."""
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = {"input_tokens": message["usage"]["input_tokens"], "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": start}
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
        elif block["type"] == "tool_use":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {
                        "type": "tool_use",
                        "id": block["id"],
                        "name": block["name"],
                        "input": {},
                    },
                },
            )
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            raise ValueError(f"unsupported block type {block['type']!r}")
        yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": FAKE_OUTPUT_TOKENS},
        },
    )
    yield "message_stop", {"type": "message_stop"}


class _Handler(BaseHTTPRequestHandler):
    owner: FakeAnthropicAPI
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # keep test output clean; everything is in owner.requests

    def _read_body(self) -> Any:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            raw = self._read_chunked()
        else:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
        if (self.headers.get("Content-Encoding") or "").lower() == "gzip":
            raw = gzip.decompress(raw)
        if not raw:
            return None
        text = raw.decode("utf-8", "replace")
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()  # the blank line after the last chunk
                return b"".join(parts)
            parts.append(self.rfile.read(size))
            self.rfile.readline()

    def _send_json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", self.owner._next_id("req"))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self) -> None:
        body = self._read_body() if self.command in ("POST", "PUT", "PATCH") else None
        req = RecordedRequest(self.command, self.path, dict(self.headers.items()), body)
        turn = self.owner._record(req)
        path = self.path.split("?")[0]
        if req.is_messages:
            model = body.get("model", "claude-test") if isinstance(body, dict) else "claude-test"
            message = _message(self.owner, model, turn)
            if isinstance(body, dict) and body.get("stream"):
                self._send_sse(message)
            else:
                self._send_json(200, message)
        elif path.endswith("/count_tokens"):
            self._send_json(200, {"input_tokens": FAKE_INPUT_TOKENS})
        elif self.command == "HEAD":
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            # Any other endpoint (model list, account/quota probes, ...): an empty success.
            self._send_json(200, {})

    def _send_sse(self, message: dict[str, Any]) -> None:
        chunks = []
        for event, data in _sse_events(message):
            chunks.append(f"event: {event}\ndata: {json.dumps(data)}\n\n")
        payload = "".join(chunks).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("request-id", self.owner._next_id("req"))
        self.end_headers()
        self.wfile.write(payload)

    do_POST = _handle
    do_GET = _handle
    do_PUT = _handle
    do_HEAD = _handle
    do_DELETE = _handle
    do_PATCH = _handle


if __name__ == "__main__":  # manual use: python fake_api.py, then point ANTHROPIC_BASE_URL at it
    import time

    with FakeAnthropicAPI() as srv:
        print(srv.base_url, flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
