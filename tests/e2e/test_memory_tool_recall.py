"""Recall that follows the work, through the real Claude Code client (issue 24, items 2-3): a
scripted session reads a file a memory is tied to, writes another, runs a command that fails,
and starts a subagent. The request log shows each memory where it belongs and nowhere else; the
subagent gets its spawn brief and the main session none of it. Also what PreToolUse can do in
2.1.332: its additionalContext arrives only after the call; a deny stops the edit once."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from claude_sandbox import (
    Sandbox,
    hooks_log,
    injected_by,
    memory_tool,
    project_key,
    run_claude_with_memory,
    state_dir,
)
from helpers import write_memory

pytestmark = [pytest.mark.e2e]

CRITICAL = (
    "Never run database migrations against production by hand. Why: a manual migration dropped "
    "the orders table in March."
)
TASK = "Get the build green."
SUB_TASK = "Check that the postgres migration adds the orders index the right way."


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, f"claude exited {res.returncode}\n{res.stdout}\n{res.stderr}"


def _memory_folder(box: Sandbox) -> Path:
    return box.config_dir / "projects" / project_key(str(box.project)) / "memory"


def _tool_results(req: Any) -> str:
    """The text of the tool results a request carries."""
    out = []
    for message in req.body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                out.append(inner if isinstance(inner, str) else str(inner))
    return "\n".join(out)


def _seed(box: Sandbox) -> None:
    memory_tool(box, "install")
    write_memory(_memory_folder(box), "feedback_prod_migrations.md", CRITICAL, type_="feedback")
    notes = state_dir(box) / "rooms" / "codebase-notes"
    write_memory(
        notes, "orders_migration.md",
        "Migration 0042 adds the orders index in two steps (MARK-READ-7Q).",
        paths=["db/migrations/*.py"],
    )  # fmt: skip
    write_memory(
        notes, "report_module.md",
        "The report module is imported by the nightly job: keep its signature (MARK-EDIT-3K).",
        paths=["src/report.py"],
    )  # fmt: skip
    write_memory(
        notes, "deadlock_gotcha.md",
        "Gotcha: psycopg DeadlockDetected in the test suite means two workers migrate at once; "
        "run it with --lock (MARK-FAIL-9Z).",
    )  # fmt: skip
    write_memory(
        state_dir(box) / "rooms" / "database", "concurrently.md",
        "Postgres indexes on big tables are built CONCURRENTLY, outside a transaction "
        "(MARK-ROOM-5D).",
    )  # fmt: skip
    migration = box.project / "db" / "migrations" / "0042_orders.py"
    migration.parent.mkdir(parents=True)
    migration.write_text("# add the orders index\n")
    memory_tool(box, "index")


def test_a_session_gets_each_memory_where_it_touches_it_and_the_subagent_its_brief(
    sandbox: Sandbox,
) -> None:
    _seed(sandbox)
    root = sandbox.project
    api = sandbox.api
    api.add_tool_use("Read", {"file_path": str(root / "db" / "migrations" / "0042_orders.py")})
    api.add_tool_use("Write", {"file_path": str(root / "src" / "report.py"), "content": "X = 1\n"})
    failing = (
        "python3 -c \"import sys; sys.stderr.write('psycopg.errors.DeadlockDetected: deadlock "
        "detected\\n'); sys.exit(1)\""
    )
    api.add_tool_use("Bash", {"command": failing, "description": "run the tests"})
    api.add_tool_use(
        "Agent",
        {"description": "check migration", "prompt": SUB_TASK, "subagent_type": "general-purpose"},
    )
    api.add_text("The migration looks right.")  # the subagent's answer (or the main's)
    api.add_text("Done.")
    api.add_text("Done.")

    _ok(run_claude_with_memory(sandbox, TASK))

    requests = api.main_requests()
    # A subagent's conversation starts with its own task (the spawn brief names the parent's
    # task too, so only the first message tells them apart).
    sub = [r for r in requests if SUB_TASK in str(r.body["messages"][0])]
    main = [r for r in requests if r not in sub]
    assert sub and len(main) >= 5

    def first_with(marker: str) -> int:
        return next(i for i, r in enumerate(main) if marker in r.text())

    # Each memory arrives in the request after the tool call that touched it, from the hook of
    # that event (2.1.332 labels tool hooks' context "<Event>:<Tool> hook additional context"),
    # once, and stays in the conversation once from then on.
    for marker, event, result in (
        ("MARK-READ-7Q", "PostToolUse:Read", "add the orders index"),
        ("MARK-ROOM-5D", "PostToolUse:Read", "add the orders index"),  # the file's room
        ("MARK-EDIT-3K", "PostToolUse:Write", "report.py"),
        ("MARK-FAIL-9Z", "PostToolUseFailure:Bash", "DeadlockDetected"),
    ):
        at = first_with(marker)
        assert result in _tool_results(main[at]), marker
        assert result not in _tool_results(main[at - 1]) or marker == "MARK-ROOM-5D", marker
        for req in main[at:]:
            assert sum(b.count(marker) for b in injected_by(req, event)) == 1, marker
            assert req.text().count(marker) == 1, marker
        for other in ("SessionStart", "UserPromptSubmit", "SubagentStart"):
            assert not any(marker in b for r in main for b in injected_by(r, other)), marker

    # The subagent: its spawn brief (critical rule, the parent's task, its own task's room), in
    # every request of its own and in none of the main session's.
    for req in sub:
        given = "".join(injected_by(req, "SubagentStart"))
        assert "Never run database migrations" in given
        assert TASK in given  # the parent's task
        assert "MARK-ROOM-5D" in given  # room recall on the subagent's own task
        assert "MARK-READ-7Q" not in req.text() and "MARK-FAIL-9Z" not in req.text()
    assert not any(injected_by(req, "SubagentStart") for req in main)
    # The background subagent's result came back as a <task-notification> prompt: it brought no
    # recall and is not the session's task.
    at = next(i for i, r in enumerate(main) if "<task-notification>" in r.messages_text())
    before, after = (len(injected_by(main[i], "UserPromptSubmit")) for i in (at - 1, at))
    assert after == before  # the notification's UserPromptSubmit added nothing
    sid = main[0].session_id
    assert sid
    hot = json.loads((state_dir(sandbox) / "hot" / f"{sid}.json").read_text())
    assert hot["task"] == TASK
    assert not any("task-notification" in p for p in hot["prompts"])
    assert hooks_log(sandbox) == ""


def test_pre_tool_use_context_arrives_after_the_call_and_a_deny_stops_the_edit_once(
    sandbox: Sandbox,
) -> None:
    memory_tool(sandbox, "install")
    write_memory(
        _memory_folder(sandbox), "feedback_codegen.md",
        "Generated from schema.graphql by codegen: never edit by hand, run make codegen.",
        type_="feedback", paths=["src/api/*.generated.ts"],
    )  # fmt: skip
    target = sandbox.project / "src" / "api" / "client.generated.ts"
    memory_tool(sandbox, "index")
    sandbox.add_recording_hook(
        "PreToolUse",
        {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                "additionalContext": "PRE-CONTEXT-MARK"}},
        matcher="Bash",
    )  # fmt: skip
    api = sandbox.api
    api.add_tool_use("Bash", {"command": "echo RAN-THE-COMMAND", "description": "t"})
    api.add_tool_use("Write", {"file_path": str(target), "content": "export const x = 1;\n"})
    api.add_tool_use("Write", {"file_path": str(target), "content": "export const x = 2;\n"})
    api.add_text("done")

    _ok(run_claude_with_memory(sandbox, "Change the client constant."))

    main = api.main_requests()
    # PreToolUse context: first seen in the request that already holds the command's result.
    at = next(i for i, r in enumerate(main) if "PRE-CONTEXT-MARK" in r.text())
    assert "RAN-THE-COMMAND" in _tool_results(main[at])
    # The first Write was held back with the rule as the reason; the second went through.
    held = next(i for i, r in enumerate(main) if "held this edit back" in _tool_results(r))
    assert "never edit by hand" in _tool_results(main[held])
    assert target.read_text() == "export const x = 2;\n"
    assert hooks_log(sandbox) == ""
