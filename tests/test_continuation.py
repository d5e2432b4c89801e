"""A continuation that names its topic ("let's continue with the chargeback work", "pick up the
attribution work from yesterday") gets the open handoff, or the latest session, when it is about
that topic, once per session, as "where were we?" does; one about something else gets nothing
stale (issue 22: a week through the real client found these prompts got nothing).

Real hook processes in a sandboxed HOME (tests/helpers.py)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from helpers import as_event, run_hook, write_memory

from memory_tool.base import paths, tokens
from memory_tool.store.index import open_index
from memory_tool.tiers import inject, situations

HANDOFF = (
    "# Handoff\n## Done\n- app/chargebacks.py receives chargeback events.\n"
    "## Next steps\n- Wire the chargeback webhook to the dispute queue (app/disputes.py).\n"
)
HANDOFF_HEADING = inject.HANDOFF_HEADING.strip()
COLD_LATEST = inject.COLD_LATEST_HEADING[:-1]


def _prompt(project: Path, prompt: str, session: str) -> str:
    out = run_hook(
        "UserPromptSubmit",
        {
            "session_id": session,
            "transcript_path": "/nonexistent.jsonl",
            "cwd": str(project),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        },
    )
    assert out.returncode == 0, out.stderr
    if not out.stdout.strip():
        return ""
    return str(json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"])


def _handoff(project: Path, text: str = HANDOFF) -> None:
    path = project / "thoughts" / "HANDOFF.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    when = time.time() - 60
    os.utime(path, (when, when))


def _cold(project: Path, task: str, body: str) -> None:
    """A cold summary as the Scribe writes it, of a session that did something."""
    folder = paths.palace_dir("cold") / paths.project_key(project)
    text = f"Task: {task}\n{body}\n\n## Stats\n3 prompts, 4 tool calls, 2 files edited\n"
    write_memory(folder, "2026-11-28-abcdef12.md", text, type_="cold", created="2026-11-28")
    with open_index() as idx:  # the Scribe indexes each summary it writes
        idx.refresh(project)


@pytest.mark.parametrize(
    ("prompt", "topic"),
    [
        ("let's continue with the chargeback work", ["chargeback"]),
        ("pick up the attribution work from yesterday", ["attribution"]),
        ("keep going on the invoice export", ["invoice", "export"]),
        ("where did we leave the parser rewrite?", ["parser", "rewrite"]),
        ("resume the migration work", ["migration"]),
        ("where were we?", []),
        ("where did we leave off with the plan?", []),  # no topic: "where were we?"
        # blind19/20: the project itself named, no topic in it.
        ("morning. where did we leave this app?", []),
        ("where did we leave off in the warehouse?", []),
        ("continue", []),
        ("continue the refactor of the payments module and add tests for every new path", []),
        ("add a created_at column to the disputes table", []),
        # blind2: a return said without "continue".
        ("ok, back to the notification tap stuff from yesterday", ["notification", "tap"]),
        ("let's finish moving the DNS zones into terraform",
         ["moving", "dns", "zones", "terraform"]),
        ("roll back to the old config", []),  # puts a thing back: a task
        ("go back to the previous parser", []),
        # blind3: "finished" goes on with something; "what was left over" and "what's next
        # here" ask where things were, with no topic.
        ("ok, let's get the whole-cart reservation call finished",
         ["whole", "cart", "reservation", "call"]),
        ("what was left over from yesterday?", []),
        ("remind me what's next here", []),
        # blind4
        ("right, back to making bad firmware updates survivable",
         ["firmware", "updates", "survivable"]),
        ("send it back to the client", []),
        # blind5: a question about what the last session left, with no "continue".
        ("was anything left half-built last time?", []),
        ("remind me what's still open in here from last time?", []),
        ("what did we leave unfinished yesterday?", []),
        ("the left sidebar broke yesterday, why?", []),  # a report, not a return
        ("what's still open on the PR?", []),
    ],
)  # fmt: skip
def test_the_topic_of_a_continuation(prompt: str, topic: list[str]) -> None:
    assert situations.continuation_topic(prompt) == topic


@pytest.mark.parametrize(
    "prompt",
    [
        "let's continue with the chargeback work",
        "pick up the chargeback work from yesterday",
        "keep going on the dispute queue",
        "where did we leave the chargebacks?",
    ],
)
def test_a_continuation_about_the_handoff_gets_it_once(project: Path, prompt: str) -> None:
    _handoff(project)
    got = _prompt(project, prompt, "s1")
    assert HANDOFF_HEADING in got and "dispute queue" in got
    assert got.count("dispute queue") == 1
    assert "dispute queue" not in _prompt(project, prompt, "s1")  # once per session
    assert "dispute queue" not in _prompt(project, "where were we?", "s1")
    assert "dispute queue" in _prompt(project, prompt, "s2")  # another session gets it


@pytest.mark.parametrize(
    "prompt",
    [
        "continue with the docs",
        "let's pick up the onboarding guide",
        "where did we leave the flaky login test?",
    ],
)
def test_a_continuation_about_something_else_gets_nothing_stale(project: Path, prompt: str) -> None:
    _handoff(project)
    _cold(project, "Start on the chargeback webhook.", "Result: Added app/chargebacks.py.")
    got = _prompt(project, prompt, "s1")
    assert "dispute queue" not in got and HANDOFF_HEADING not in got
    assert "chargeback" not in got and COLD_LATEST not in got
    # The handoff was not given: "where were we?" in the same session still gets it.
    assert "dispute queue" in _prompt(project, "where were we?", "s1")


def test_without_a_handoff_the_latest_session_on_the_topic_comes(project: Path) -> None:
    _cold(
        project,
        "Start the attribution table.",
        "Result: Added etl/attribution.py.\n\n## Open items\n- Backfill the attribution table.",
    )
    got = _prompt(project, "pick up the attribution work from yesterday", "s1")
    assert COLD_LATEST in got and "Backfill the attribution table" in got
    assert COLD_LATEST not in _prompt(project, "pick up the attribution work", "s1")
    assert COLD_LATEST not in _prompt(project, "let's continue with the dashboards", "s2")


def test_a_continuation_keeps_the_budget(project: Path) -> None:
    _handoff(project)
    _cold(project, "Start on the chargeback webhook.", "Result: Added app/chargebacks.py.")
    payload = {
        "session_id": "s1",
        "transcript_path": "/nonexistent.jsonl",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "let's continue with the chargeback work",
    }
    with open_index() as idx:
        idx.refresh(project)
        for budget in (0, 20, 60, 150, 400, 3000):
            units = inject.prompt_context(idx, as_event(payload), budget)
            text = "".join(u.text for u in units)
            assert sum(u.tokens for u in units) == tokens.count(text) <= budget
            if budget >= 400:
                assert "dispute queue" in text


def test_the_context_command_reads_a_continuation_as_the_hook_does(project: Path) -> None:
    from click.testing import CliRunner

    from memory_tool.cli.main import main

    _handoff(project)

    def shown(prompt: str) -> str:
        out = CliRunner().invoke(main, ["context", "--prompt", prompt, "--cwd", str(project)])
        assert out.exit_code == 0, out.output
        return out.output

    about = shown("let's continue with the chargeback work")
    assert about.startswith("situation: resume") and "dispute queue" in about
    assert "dispute queue" not in shown("continue with the docs")


@pytest.mark.parametrize(
    ("prompt", "situation"),
    [
        ("was anything left half-built last time?", "resume"),
        ("remind me what's still open in here from last time?", "resume"),
        ("what did we leave unfinished yesterday?", "resume"),
        ("any loose ends from the last session?", "resume"),
        ("the left sidebar broke yesterday, why?", "new"),  # a report, not a return
        ("what's still open on the PR?", "new"),  # no "last time": today's question
        ("last time the deploy failed, check the logs", "debug"),
    ],
)
def test_a_question_about_what_the_last_session_left_is_a_resume(
    prompt: str, situation: str
) -> None:
    assert situations.situation_and_topic(prompt)[0] == situation
