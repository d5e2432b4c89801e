"""Subagents get a spawn brief (issue 24, item 3): the critical rules, the parent session's task,
decisions and blockers, room recall on the subagent's own task (PreToolUse on Agent keeps it),
cold/wiki when that task is about history; recorded for the subagent alone. A
<task-notification> prompt is not the user's words. Real hooks (``dispatch.run``), real files,
real index, sandboxed HOME."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from helpers import start_payload, write_memory

from memory_tool.base import paths, tokens
from memory_tool.base.config import SPAWN_BUDGET_TOKENS
from memory_tool.recall.seen import seen_ids, seen_key
from memory_tool.runtime import dispatch
from memory_tool.store.index import open_index
from memory_tool.tiers.hot import load_state

CRITICAL = (
    "Never run database migrations against production by hand. Why: a manual migration dropped "
    "the orders table in March."
)
TASK = "Add an index on orders.created_at in a new postgres migration"
NOTIFICATION = (
    "<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n"
    '<summary>Agent "review deploy" completed</summary>\n<result>No risky steps found in the '
    "deploy scripts.</result>\n</task-notification>"
)


def call(event: str, data: dict[str, Any]) -> str:
    out = io.StringIO()
    dispatch.run(event, stdin=io.BytesIO(json.dumps(data).encode()), stdout=out)
    text = out.getvalue().strip()
    return str(json.loads(text)["hookSpecificOutput"]["additionalContext"]) if text else ""


def base(project: Path, event: str, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": "parent",
        "transcript_path": "/nonexistent.jsonl",
        "cwd": str(project),
        "hook_event_name": event,
        **extra,
    }


def seed(project: Path) -> None:
    folder = paths.project_memory_dir(project)
    write_memory(folder, "feedback_migrations.md", CRITICAL, type_="feedback")
    write_memory(folder, "project_fastapi.md", "The checkout service moves to FastAPI.",
                 type_="project")  # fmt: skip
    rooms = paths.state_root() / "rooms"
    write_memory(
        rooms / "database",
        "concurrently.md",
        "Postgres indexes on big tables are built CONCURRENTLY, outside a transaction.",
    )
    write_memory(rooms / "frontend", "css.md", "The web app uses Tailwind CSS.")
    with open_index() as idx:
        idx.refresh(project)


def spawn(project: Path, task: str, agent: str = "a1") -> str:
    pre = base(project, "PreToolUse", tool_name="Agent", tool_use_id=f"toolu_{agent}",
               tool_input={"description": "d", "prompt": task,
                           "subagent_type": "general-purpose"})  # fmt: skip
    assert call("PreToolUse", pre) == ""  # PreToolUse on Agent says nothing
    start = base(project, "SubagentStart", agent_id=agent, agent_type="general-purpose")
    return call("SubagentStart", start)


def test_the_spawn_brief_holds_rules_parent_state_and_recall_on_the_subagents_task(
    project: Path,
) -> None:
    seed(project)
    brief = call("SessionStart", {**start_payload(project), "session_id": "parent"})
    assert "Never run database migrations" in brief
    parent_prompt = "Speed up the orders report page. [DECISION] We keep the report in SQL."
    call("UserPromptSubmit", base(project, "UserPromptSubmit", prompt=parent_prompt))
    before = seen_ids("parent")
    text = spawn(project, TASK)
    assert text.startswith("<memory-context>") and text.endswith("</memory-context>\n")
    assert "Never run database migrations" in text  # critical rules
    assert "Speed up the orders report page" in text  # the parent's task
    assert "keep the report in SQL" in text  # its decision
    assert "CONCURRENTLY" in text  # room recall on the subagent's task
    assert "Tailwind" not in text and "FastAPI" not in text  # not the brief, not other rooms
    assert tokens.count(text) <= SPAWN_BUDGET_TOKENS
    # Recorded for the subagent, not for the parent: the main session never got it.
    assert seen_ids(seen_key("parent", "a1")) and seen_ids("parent") == before


def test_a_task_about_history_brings_cold_memory_and_a_plain_one_does_not(project: Path) -> None:
    seed(project)
    cold = paths.palace_dir("cold") / paths.project_key(project)
    cold.mkdir(parents=True)
    (cold / "2026-11-20-abcd1234.md").write_text(
        "---\nname: session-2026-11-20-abcd1234\ncreated: 2026-11-20\n---\n"
        "Task: fix the flaky invoice export\n\n## Decisions\n"
        "- The invoice export retries the S3 upload three times (ZEBRA-RETRY).\n",
        encoding="utf-8",
    )
    with open_index() as idx:
        idx.refresh(project)
    past = spawn(project, "How did we fix the invoice export last time? Summarise it.", "h1")
    assert "ZEBRA-RETRY" in past
    plain = spawn(project, "Rename the invoice export helper to export_invoices.", "h2")
    assert "ZEBRA-RETRY" not in plain


def test_without_a_kept_task_the_subagent_still_gets_the_rules(project: Path) -> None:
    seed(project)
    start = base(project, "SubagentStart", agent_id="z9", agent_type="Explore")
    text = call("SubagentStart", start)
    assert "Never run database migrations" in text and "CONCURRENTLY" not in text


def test_parallel_agent_calls_each_get_their_own_task(project: Path) -> None:
    seed(project)
    for agent, task in (("p1", TASK), ("p2", "Restyle the login page with Tailwind CSS")):
        pre = base(project, "PreToolUse", tool_name="Agent", tool_use_id=agent,
                   tool_input={"prompt": task, "subagent_type": "general-purpose"})  # fmt: skip
        call("PreToolUse", pre)
    first = call("SubagentStart", base(project, "SubagentStart", agent_id="p1",
                                       agent_type="general-purpose"))  # fmt: skip
    second = call("SubagentStart", base(project, "SubagentStart", agent_id="p2",
                                        agent_type="general-purpose"))  # fmt: skip
    assert "CONCURRENTLY" in first and "Tailwind" not in first
    assert "Tailwind" in second and "CONCURRENTLY" not in second


def test_a_task_notification_is_not_the_users_words(project: Path) -> None:
    seed(project)
    call("UserPromptSubmit", base(project, "UserPromptSubmit", prompt="Speed up the orders page"))
    # The notification names a room's words ("deploy") and carries a tag: no recall, no task,
    # no capture.
    assert call("UserPromptSubmit", base(project, "UserPromptSubmit", prompt=NOTIFICATION)) == ""
    state = load_state("parent")
    assert state is not None
    assert state["task"] == "Speed up the orders page"
    assert not any("task-notification" in p for p in state["prompts"])
    assert not state["notes"]


def test_a_kept_task_holds_no_secret_or_private_span(project: Path) -> None:
    seed(project)
    secret = "sk-ant-api03-" + "A" * 90
    task = f"Deploy with key {secret} <private>the pager code 4471</private> to staging"
    pre = base(project, "PreToolUse", tool_name="Agent", tool_use_id="s1",
               tool_input={"prompt": task, "subagent_type": "general-purpose"})  # fmt: skip
    call("PreToolUse", pre)
    kept = (paths.palace_dir("sessions") / "parent.json").read_text()
    assert "staging" in kept and secret not in kept and "4471" not in kept
