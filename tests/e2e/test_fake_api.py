"""The stand-in API on its own (no claude binary needed): wire format, queue, recording."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from fake_api import DEFAULT_REPLY, FakeAnthropicAPI

pytestmark = pytest.mark.e2e

MAIN_TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


@pytest.fixture
def sandbox() -> None:
    """Overrides the autouse `sandbox` (tests/conftest.py -> tests/e2e/conftest.py): these tests
    need no claude binary, so they must not skip when it is missing."""


@pytest.fixture
def api() -> Iterator[FakeAnthropicAPI]:
    with FakeAnthropicAPI() as srv:
        yield srv


def _post(api: FakeAnthropicAPI, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    req = urllib.request.Request(
        api.base_url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.headers.get("Content-Type", ""), resp.read()


def _events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for chunk in raw.decode().strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_binds_loopback_only(api: FakeAnthropicAPI) -> None:
    assert api.base_url.startswith("http://127.0.0.1:")
    with pytest.raises(ValueError):
        FakeAnthropicAPI(host="0.0.0.0").start()


def test_streams_a_scripted_tool_call_as_server_sent_events(api: FakeAnthropicAPI) -> None:
    api.add_tool_use("Write", {"file_path": "/tmp/x", "content": "y"}, text="writing")
    ctype, raw = _post(
        api, "/v1/messages", {"model": "m", "stream": True, "tools": MAIN_TOOLS, "messages": []}
    )
    assert ctype.startswith("text/event-stream")
    events = _events(raw)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(data["type"] == name for name, data in events)
    tool_start = events[4][1]["content_block"]
    assert (tool_start["type"], tool_start["name"]) == ("tool_use", "Write")
    assert json.loads(events[5][1]["delta"]["partial_json"]) == {
        "file_path": "/tmp/x",
        "content": "y",
    }
    assert events[7][1]["delta"]["stop_reason"] == "tool_use"


def test_answers_json_without_stream_and_ok_when_the_queue_is_empty(api: FakeAnthropicAPI) -> None:
    api.add_text("scripted")
    bodies = [
        json.loads(
            _post(api, "/v1/messages", {"model": "m", "tools": MAIN_TOOLS, "messages": []})[1]
        )
        for _ in range(2)
    ]
    assert [b["content"][0]["text"] for b in bodies] == ["scripted", DEFAULT_REPLY]
    assert bodies[0]["stop_reason"] == "end_turn"
    assert len(api.main_requests()) == 2


def test_side_requests_do_not_take_scripted_answers(api: FakeAnthropicAPI) -> None:
    api.add_text("for the main loop")
    side = json.loads(_post(api, "/v1/messages", {"model": "haiku", "messages": []})[1])
    main = json.loads(
        _post(api, "/v1/messages", {"model": "m", "tools": MAIN_TOOLS, "messages": []})[1]
    )
    assert side["content"][0]["text"] == DEFAULT_REPLY
    assert main["content"][0]["text"] == "for the main loop"
    assert [r.main for r in api.messages_requests()] == [False, True]


def test_other_endpoints_answer_harmlessly_and_are_recorded(api: FakeAnthropicAPI) -> None:
    _, raw = _post(api, "/v1/messages/count_tokens", {"messages": []})
    assert json.loads(raw)["input_tokens"] > 0
    with urllib.request.urlopen(api.base_url + "/v1/models", timeout=10) as resp:
        assert resp.status == 200
    assert [r.path for r in api.other_requests()] == ["/v1/messages/count_tokens", "/v1/models"]
