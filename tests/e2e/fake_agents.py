"""Stand-ins for the OpenAI Responses API (Codex CLI) and the Gemini API (Gemini CLI), so the real
`codex` and `gemini` binaries run a session offline, as ``fake_api`` does for `claude`.

Each binds 127.0.0.1 on a free port and serves from a daemon thread (stdlib http.server). Every
request is recorded (method, path, headers, parsed JSON body); ``texts()`` gives each model
request's whole body as text, so a test asks what reached the model with ``"MARKER" in text``.
Tests queue the assistant's replies with ``add_text``; when the queue is empty it answers "ok".

Wire formats (what Codex 0.171.0 and Gemini CLI 0.61.0 accept, found by running them):
- Codex: POST /v1/responses with ``stream: true``; server-sent events ``response.created``,
  ``response.output_item.done`` (one assistant message), ``response.completed`` (with usage).
- Gemini: POST /v1beta/models/<model>:generateContent (JSON, the CLI's model router) and
  :streamGenerateContent?alt=sse (``data: <GenerateContentResponse>`` lines).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_REPLY = "ok"
SHUTDOWN_POLL_SECONDS = 0.05


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any

    def text(self) -> str:
        return json.dumps(self.body, ensure_ascii=False)


class _Base:
    """A recording HTTP stand-in; subclasses answer the model's requests."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.replies: deque[str] = deque()
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _body(self) -> Any:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    return raw.decode("utf-8", "replace")

            def do_GET(self) -> None:  # noqa: N802
                stand_in._record(self, None)
                self._send(200, "application/json", json.dumps({"data": [], "models": []}))

            def do_POST(self) -> None:  # noqa: N802
                body = self._body()
                stand_in._record(self, body)
                stand_in.answer(self, body)

            def _send(self, status: int, ctype: str, text: str) -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.Handler = Handler
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, args=(SHUTDOWN_POLL_SECONDS,), daemon=True
        )

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        with self._lock:
            self.requests.append(
                Recorded(handler.command, handler.path, dict(handler.headers.items()), body)
            )

    def next_reply(self) -> str:
        with self._lock:
            return self.replies.popleft() if self.replies else DEFAULT_REPLY

    def add_text(self, text: str) -> None:
        self.replies.append(text)

    def answer(self, handler: Any, body: Any) -> None:
        raise NotImplementedError

    def model_requests(self) -> list[Recorded]:
        raise NotImplementedError

    def texts(self) -> list[str]:
        return [r.text() for r in self.model_requests()]

    def __enter__(self) -> _Base:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _sse(handler: Any, events: list[tuple[str | None, dict[str, Any]]]) -> None:
    lines = []
    for name, data in events:
        if name:
            lines.append(f"event: {name}")
        lines.append("data: " + json.dumps(data))
        lines.append("")
    payload = ("\n".join(lines) + "\n").encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


class FakeOpenAI(_Base):
    """POST /v1/responses (Codex's ``wire_api = "responses"``)."""

    def model_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.method == "POST" and "/responses" in r.path]

    def answer(self, handler: Any, body: Any) -> None:
        if "/responses" not in handler.path:
            handler._send(404, "application/json", "{}")
            return
        rid = "resp_" + uuid.uuid4().hex[:12]
        text = self.next_reply()
        item = {
            "type": "message",
            "role": "assistant",
            "id": "msg_" + uuid.uuid4().hex[:12],
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110,
        }
        _sse(
            handler,
            [
                ("response.created", {"type": "response.created", "response": {"id": rid}}),
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": 0, "item": item},
                ),
                (
                    "response.completed",
                    {"type": "response.completed", "response": {"id": rid, "usage": usage}},
                ),
            ],
        )


class FakeGemini(_Base):
    """Gemini's generateContent / streamGenerateContent."""

    def model_requests(self) -> list[Recorded]:
        return [
            r for r in self.requests if r.method == "POST" and ":streamGenerateContent" in r.path
        ]

    def answer(self, handler: Any, body: Any) -> None:
        path = handler.path
        if ":countTokens" in path:
            handler._send(200, "application/json", json.dumps({"totalTokens": 100}))
            return
        if ":streamGenerateContent" in path:
            text = self.next_reply()
            _sse(handler, [(None, _gemini_response(text))])
            return
        if ":generateContent" in path:
            # The CLI's model router asks for a JSON choice; anything else is a plain reply.
            choice = json.dumps(
                {
                    "reasoning": "simple",
                    "model_choice": "flash",
                    "complexity_reasoning": "simple",
                    "complexity_score": 1,
                }
            )
            handler._send(200, "application/json", json.dumps(_gemini_response(choice)))
            return
        handler._send(404, "application/json", "{}")


def _gemini_response(text: str) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 100,
            "candidatesTokenCount": 10,
            "totalTokenCount": 110,
        },
        "modelVersion": "gemini-2.5-flash",
    }
