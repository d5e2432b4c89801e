"""The MCP server in a real `claude -p` session: registered by `memory-tool install --mcp`,
started by Claude Code, called by a scripted tool_use; its answer comes back as the tool_result."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from claude_sandbox import Sandbox, memory_tool, run_claude_with_memory

pytest.importorskip("mcp", reason="the mcp extra is not installed (test.sh installs it)")

from memory_tool.base import tokens  # noqa: E402

pytestmark = [pytest.mark.e2e]

# Claude Code names an MCP tool mcp__<server>__<tool>.
SEARCH_TOOL = "mcp__memory-tool__search"


def add(box: Sandbox, *args: str) -> str:
    return str(json.loads(memory_tool(box, "add", "--json", *args).stdout)["id"])


def tool_results(req: Any, tool_use_id: str) -> list[str]:
    """The text of the tool_result blocks answering ``tool_use_id`` in one recorded request."""
    out = []
    for message in req.body.get("messages") or []:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
                inner = block.get("content")
                parts = inner if isinstance(inner, list) else [{"type": "text", "text": inner}]
                out += [p["text"] for p in parts if p.get("type") == "text"]
    return out


def test_a_session_calls_the_search_tool_and_gets_the_ids(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install", "--mcp")
    rotation = add(sandbox, "--room", "authentication", "Refresh tokens rotate on every use.")
    reuse = add(sandbox, "--room", "authentication", "A reused refresh token revokes its family.")
    add(sandbox, "--room", "deployment", "Deploys switch blue and green slots.")
    expected = [h["id"] for h in json.loads(memory_tool(sandbox, "search", "--json",
                                                        "refresh token").stdout)]  # fmt: skip
    assert set(expected) == {rotation, reuse}

    call = sandbox.api.add_tool_use(SEARCH_TOOL, {"query": "refresh token"})
    sandbox.api.add_text("Two memories match.")
    res = run_claude_with_memory(
        sandbox, "What do we know about refresh tokens?", ["--allowedTools", SEARCH_TOOL]
    )
    assert res.returncode == 0, f"{res.stdout}\n{res.stderr}"
    assert "Two memories match." in res.stdout

    answers = [t for req in sandbox.api.main_requests() for t in tool_results(req, call)]
    assert answers, "no tool_result for the search call reached the model"
    text = answers[0]
    found = re.findall(r"^([a-z]-[0-9a-f]{6}) \S+$", text, flags=re.M)
    # The ids, in the CLI's order, one line each; then this very session's transcript, which
    # now holds the prompt's words too (past sessions are searched, "s-" ids).
    assert found[: len(expected)] == expected
    assert all(i.startswith("s-") for i in found[len(expected) :])
    m = re.search(r"\[(\d+) tokens\]\n?\Z", text)
    assert m and abs(int(m.group(1)) - tokens.count(text)) <= 1  # a trailing newline may go
