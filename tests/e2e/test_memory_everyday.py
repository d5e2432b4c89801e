"""Everyday situations through the real Claude Code client (issue 15): a handoff that reaches the
next session, a worktree that keeps its own thoughts/, a resumed "where were we?" that carries
the latest session summary once, and a subagent that gets the project's critical rules."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest
from claude_sandbox import (
    Sandbox,
    hooks_log,
    injected_by,
    memory_tool,
    run_claude_with_memory,
)
from helpers import add_worktree

pytestmark = [pytest.mark.e2e]

BLOCK_REASON_START = "memory-tool: this session did substantial work"
COLD_LATEST = "## Latest earlier session of this project (cold memory)"
HANDOFF_MARKER = "HANDOFF-MARKER-INVOICES-42"
CRITICAL = (
    "Never run database migrations against production by hand. Why: a manual migration dropped "
    "the orders table in March."
)


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, f"claude exited {res.returncode}\n{res.stdout}\n{res.stderr}"


def _substantial_work(box: Sandbox, root: Path, topic: str) -> None:
    """Queue a session that edits five files and runs 16 Bash calls (21 tool calls)."""
    for i in range(5):
        path = root / "src" / f"{topic}_{i}.py"
        box.api.add_tool_use("Write", {"file_path": str(path), "content": f"X = {i}\n"})
    for i in range(16):
        box.api.add_tool_use("Bash", {"command": f"echo {topic} {i}", "description": "check"})


def _first_context(box: Sandbox) -> str:
    """Everything our hooks injected into the first request of the last run."""
    first = box.api.main_requests()[0]
    return "".join(injected_by(first, "SessionStart") + injected_by(first, "UserPromptSubmit"))


def test_the_handoff_reaches_the_next_session_a_resume_and_where_were_we(
    sandbox: Sandbox,
) -> None:
    memory_tool(sandbox, "install")
    handoff = sandbox.project / "thoughts" / "HANDOFF.md"
    _substantial_work(sandbox, sandbox.project, "invoices")
    sandbox.api.add_text("The export works.")
    # Stop blocks once and asks for a handoff; Claude writes it, then stops.
    text = f"# Handoff\n## Next steps\n- Add the CSV footer to the export ({HANDOFF_MARKER}).\n"
    sandbox.api.add_tool_use("Write", {"file_path": str(handoff), "content": text})
    sandbox.api.add_text("Handoff written.")
    first_id = str(uuid.uuid4())
    res = run_claude_with_memory(
        sandbox, "Build the invoices export.", extra_args=["--session-id", first_id]
    )
    _ok(res)
    assert handoff.is_file()
    assert any(BLOCK_REASON_START in r.text() for r in sandbox.api.main_requests())

    sandbox.api.reset()
    _ok(run_claude_with_memory(sandbox, "let's pick up the invoices export work"))
    assert HANDOFF_MARKER in _first_context(sandbox)

    sandbox.api.reset()
    _ok(run_claude_with_memory(sandbox, "continue", extra_args=["--resume", first_id]))
    assert HANDOFF_MARKER in "".join(injected_by(sandbox.api.main_requests()[0], "SessionStart"))

    sandbox.api.reset()
    _ok(run_claude_with_memory(sandbox, "what is 2 + 2?"))
    assert HANDOFF_MARKER not in _first_context(sandbox)  # later sessions only when they ask

    sandbox.api.reset()
    _ok(run_claude_with_memory(sandbox, "where were we?"))
    assert HANDOFF_MARKER in "".join(
        injected_by(sandbox.api.main_requests()[0], "UserPromptSubmit")
    )
    assert hooks_log(sandbox) == ""


def test_a_worktree_session_reads_and_writes_its_own_thoughts(sandbox: Sandbox) -> None:
    repo = sandbox.project
    branch = sandbox.root / "repoA-wt"
    add_worktree(repo, branch)
    for tree, word in ((repo, "MAIN-CHECKOUT-CONTEXT"), (branch, "WORKTREE-CONTEXT")):
        (tree / "thoughts").mkdir()
        (tree / "thoughts" / "CONTEXT.md").write_text(f"# Context\n{word}: this tree's notes.\n")
    memory_tool(sandbox, "install")
    _ok(run_claude_with_memory(sandbox, "hello from main"))  # main's CONTEXT.md gets indexed
    assert "MAIN-CHECKOUT-CONTEXT" in _first_context(sandbox)

    sandbox.api.reset()
    _substantial_work(sandbox, branch, "feature")
    sandbox.api.add_text("first answer")
    sandbox.api.add_text("second answer")
    _ok(run_claude_with_memory(sandbox, "Build the feature modules.", cwd=branch))
    brief = _first_context(sandbox)
    assert "WORKTREE-CONTEXT" in brief and "MAIN-CHECKOUT-CONTEXT" not in brief
    reason = sandbox.api.main_requests()[-1].messages_text()
    assert BLOCK_REASON_START in reason
    assert str(branch / "thoughts" / "HANDOFF.md") in reason
    assert str(repo / "thoughts" / "HANDOFF.md") not in reason


def test_where_were_we_on_resume_carries_the_latest_summary_once(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    _substantial_work(sandbox, sandbox.project, "alpha")
    sandbox.api.add_text("alpha done")
    sandbox.api.add_text("alpha stopped")
    _ok(run_claude_with_memory(sandbox, "Build the alpha modules."))
    sandbox.api.reset()
    _substantial_work(sandbox, sandbox.project, "beta")
    sandbox.api.add_text("beta done")
    sandbox.api.add_text("beta stopped")
    second_id = str(uuid.uuid4())
    _ok(
        run_claude_with_memory(
            sandbox, "Build the beta modules.", extra_args=["--session-id", second_id]
        )
    )
    sandbox.api.reset()

    _ok(run_claude_with_memory(sandbox, "where were we?", extra_args=["--resume", second_id]))

    first = sandbox.api.main_requests()[0]
    injected = injected_by(first, "SessionStart") + injected_by(first, "UserPromptSubmit")
    assert sum(block.count(COLD_LATEST) for block in injected) == 1
    assert "alpha" in "".join(injected).lower()  # the other session's summary, once


def test_a_subagent_gets_the_projects_critical_rules(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    memory_tool(sandbox, "add", "--type", "feedback", CRITICAL)
    memory_tool(sandbox, "add", "--type", "project", "The checkout service moves to FastAPI.")
    task = "Review the deploy scripts for risky steps."
    sandbox.api.add_tool_use(
        "Agent",
        {"description": "review deploy", "prompt": task, "subagent_type": "general-purpose"},
    )
    sandbox.api.add_text("No risky steps found.")  # the subagent's answer
    sandbox.api.add_text("The review found nothing risky.")  # the main session's

    _ok(run_claude_with_memory(sandbox, "Have a subagent review the deploy scripts."))

    requests = sandbox.api.main_requests()
    # A subagent's conversation starts with its task (its spawn brief names the parent's task
    # too, so only the first message tells the two apart).
    sub = [r for r in requests if task in str(r.body["messages"][0])]
    main = [r for r in requests if r not in sub]
    assert sub and main
    for req in sub:
        given = "".join(injected_by(req, "SubagentStart"))
        assert "Never run database migrations" in given and "FastAPI" not in given
    assert not any(injected_by(req, "SubagentStart") for req in main)
    assert hooks_log(sandbox) == ""
