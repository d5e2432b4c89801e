"""Auto-capture through the real Claude Code client (issue 22): what one session says reaches
the next with no step by anyone. Every assertion is on what the stand-in API recorded, i.e. on
what the model would really have seen."""

from __future__ import annotations

import subprocess

import pytest
from claude_sandbox import Sandbox, hooks_log, memory_tool, run_claude_with_memory

pytestmark = pytest.mark.e2e

CORRECTION = "Use httpx instead of requests."
DECISION = "The fraud-check client retries 3 times with exponential backoff."


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, f"claude exited {res.returncode}\n{res.stdout}\n{res.stderr}"


def test_a_correction_and_a_decision_reach_the_next_session_once_each(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    sandbox.api.add_text(f"Switched the client to httpx. [DECISION] {DECISION} Done.")
    _ok(run_claude_with_memory(sandbox, "no, use httpx instead of requests"))

    sandbox.api.add_text("ok")
    _ok(run_claude_with_memory(sandbox, "Add an HTTP client call to the fraud-check service."))

    request = sandbox.api.main_requests()[-1]
    seen = request.system_text() + "\n" + request.messages_text()
    # Once each: the brief's line, and not again in the MEMORY.md that Claude Code loads itself
    # (its line points at the file). The brief's closing recap restates the top rules' labels
    # on purpose (critical rules open and close the brief), so it is not counted as a repeat.
    lines = [x for x in seen.splitlines() if not x.startswith("Recap of the rules")]
    assert sum(x.count(CORRECTION) for x in lines) == 1, seen
    assert sum(x.count(DECISION) for x in lines) == 1, seen
    assert f"] {CORRECTION}\n" in seen and f"] {DECISION}\n" in seen
    assert "Learned in the last session: 1 rule, 1 decision" in seen
    # The first session's own request had neither: they were learned, not planted.
    first = sandbox.api.main_requests()[0]
    assert DECISION not in first.system_text() + first.messages_text()
    assert hooks_log(sandbox) == ""
