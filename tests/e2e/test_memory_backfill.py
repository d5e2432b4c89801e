"""Backfill through the real Claude Code client: a session had before memory-tool was installed
(so no hook saw it) leaves only Claude Code's own transcript; `memory-tool install --backfill 30`
reads it, and the first session after install is given what it decided, as the stand-in API
recorded the request. Forgetting the captured rule takes it out of the next session's brief."""

from __future__ import annotations

import json
import subprocess
import uuid

import pytest
from claude_sandbox import Sandbox, injected_by, memory_tool, run_claude_with_memory

pytestmark = [pytest.mark.e2e]

CORRECTION = "no, use httpx instead of requests for HTTP calls in the fraud-check service"
DECISION = "[DECISION] Fraud events are stored as Parquet files partitioned by day."


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, f"claude exited {res.returncode}\n{res.stdout}\n{res.stderr}"


def test_a_session_before_install_reaches_the_first_session_after_it(sandbox: Sandbox) -> None:
    # Before install: the client writes its transcript, no memory-tool hook runs.
    sandbox.api.add_tool_use("Bash", {"command": "ls", "description": "list files"})
    sandbox.api.add_text(f"Switched the client. {DECISION}")
    _ok(sandbox.run_claude(CORRECTION, extra_args=["--session-id", str(uuid.uuid4())]))
    assert sandbox.transcripts(), "the client wrote no transcript"
    assert not (sandbox.config_dir / "memory-tool" / "cold").exists()

    installed = memory_tool(sandbox, "install", "--backfill", "30")
    assert "1 sessions of the last 30 days: 1 read" in installed.stdout, installed.stdout
    report = json.loads(memory_tool(sandbox, "backfill", "--json").stdout)
    assert (report["done"], report["already"]) == (0, 1)  # nothing read or written twice

    sandbox.api.add_text("ok")
    _ok(run_claude_with_memory(sandbox, "Add a call to the fraud-check API"))
    first = sandbox.api.main_requests()[-1]
    brief = "".join(injected_by(first, "SessionStart"))
    assert "httpx" in brief and "Parquet" in brief

    captured = json.loads(memory_tool(sandbox, "search", "--json", "httpx requests").stdout)
    rule = next(h["id"] for h in captured if h["type"] == "feedback")
    memory_tool(sandbox, "forget", rule)
    sandbox.api.add_text("ok")
    _ok(run_claude_with_memory(sandbox, "Add another call to the fraud-check API"))
    brief = "".join(injected_by(sandbox.api.main_requests()[-1], "SessionStart"))
    assert "httpx" not in brief and "Parquet" in brief
