"""A project's own memories that no layer loads by themselves (a captured reference, a fact with no
room) reach the prompt that is about them, and only that prompt (issue 22: a week through the
real client found `[REUSE]` references no later prompt got).

Real hook processes in a sandboxed HOME, memories written the way capture writes them
(store.palace.add_memory into the project's memory folder, a MEMORY.md line pointing at it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run_hook, start_payload

from memory_tool.base import tokens
from memory_tool.recall import room
from memory_tool.store.index import open_index
from memory_tool.store.palace import add_memory
from memory_tool.store.search import project_matches

MONEY = "Use app/util/money.py to_cents() for every currency conversion."
DATES = "Use lib/dates.py parse_iso() for every timestamp parsing."
COHORT = "notebooks/templates/cohort.ipynb is the cohort template to copy."
UTC_RULE = "Always use UTC timestamps in the database."


def _add(project: Path, text: str, type_: str = "reference") -> str:
    with open_index() as idx:
        entry = add_memory(
            idx, text, type_=type_, cwd=project, name=text,
            index_hook=f"{type_} captured 2026-11-20 (memory-tool)",
        )  # fmt: skip
    return entry.id


def _hook(event: str, payload: dict[str, object]) -> str:
    out = run_hook(event, payload)
    assert out.returncode == 0, out.stderr
    if not out.stdout.strip():
        return ""
    data = json.loads(out.stdout)
    assert data["hookSpecificOutput"]["hookEventName"] == event
    return str(data["hookSpecificOutput"]["additionalContext"])


def _start(project: Path, session: str) -> str:
    return _hook("SessionStart", {**start_payload(project), "session_id": session})


def _prompt(project: Path, prompt: str, session: str) -> str:
    return _hook(
        "UserPromptSubmit",
        {
            "session_id": session,
            "transcript_path": "/nonexistent.jsonl",
            "cwd": str(project),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        },
    )


@pytest.fixture(autouse=True)
def _brief_without_background(state: Path) -> None:
    """These tests are about a prompt's recall of what the brief did not give: as in a project
    whose L2 its own facts fill, the brief gives no references (``recall.l2_background``)."""
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text("recall:\n  l2_background: false\n", encoding="utf-8")


@pytest.fixture
def payments(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "payments"
    (root / ".git").mkdir(parents=True)
    _add(root, UTC_RULE, "feedback")
    _add(root, MONEY)
    _add(root, DATES)
    return root


@pytest.fixture
def analytics(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "analytics"
    (root / ".git").mkdir(parents=True)
    _add(root, COHORT)
    return root


@pytest.mark.parametrize(
    ("prompt", "fact"),
    [
        ("convert the payout amount from dollars for the monthly report", "to_cents()"),
        ("parse the timestamps in the webhook payload", "parse_iso()"),
    ],
)
def test_a_reference_reaches_the_prompt_about_it_once(
    payments: Path, prompt: str, fact: str
) -> None:
    brief = _start(payments, "s1")
    assert UTC_RULE in brief and fact not in brief  # L2 holds the rule, not the reference
    got = _prompt(payments, prompt, "s1")
    assert room.PROJECT_MATCH_HEADING.strip() in got
    assert got.count(fact) == 1
    assert UTC_RULE not in got  # the brief gave it: never twice in a session
    assert fact not in _prompt(payments, prompt, "s1")  # once per session
    assert fact in _prompt(payments, prompt, "s2")  # another session gets it again


def test_a_reference_comes_with_a_room_prompt_too(analytics: Path) -> None:
    """The classifier reads "signups" as authentication: the room has nothing, the project's
    cohort template still comes."""
    _start(analytics, "s1")
    got = _prompt(analytics, "make a retention cohort analysis for the October signups", "s1")
    assert "cohort.ipynb" in got


@pytest.mark.parametrize(
    "prompt",
    [
        "update the README install section",
        "add a created_at column to the disputes table",
        "rename the helper in app/fraud.py",
        "why does the app crash on start?",
        "the currency conversion works now, thanks",  # a closing brings nothing
        "ok",
    ],
)
def test_a_prompt_about_something_else_gets_no_reference(payments: Path, prompt: str) -> None:
    _start(payments, "s1")
    got = _prompt(payments, prompt, "s1")
    assert "to_cents" not in got and "parse_iso" not in got


@pytest.mark.parametrize(
    "prompt",
    [
        "commit the exploratory notebook for the churn analysis",
        # Two forms of one word are one word: still only a path's.
        "never commit notebooks with outputs. Clean up the funnel notebook.",
    ],
)
def test_a_word_only_in_a_path_is_not_enough(analytics: Path, prompt: str) -> None:
    _start(analytics, "s1")
    assert "cohort.ipynb" not in _prompt(analytics, prompt, "s1")


def test_another_projects_reference_stays_with_it(payments: Path, analytics: Path) -> None:
    _start(analytics, "s1")
    got = _prompt(analytics, "convert the payout amount from dollars for the report", "s1")
    assert "to_cents" not in got


def test_project_matches_fit_their_share_exactly(payments: Path) -> None:
    """Exact cl100k counts, within the share given, and nothing when no line fits."""
    prompt = "convert the dollars and parse the iso dates"
    with open_index() as idx:
        idx.refresh(payments)
        both = room.project_units(idx, prompt, str(payments), budget=500, max_chars=6000,
                                  exclude=set())  # fmt: skip
        assert {e.description for e in both.picked} == {MONEY, DATES}
        assert both.tokens == tokens.count(both.text)
        one_line = both.units[0].tokens + both.units[1].tokens
        tight = room.project_units(idx, prompt, str(payments), budget=one_line,
                                   max_chars=6000, exclude=set())  # fmt: skip
        assert len(tight.picked) == 1 and tight.tokens == tokens.count(tight.text) <= one_line
        none = room.project_units(idx, prompt, str(payments), budget=5, max_chars=6000,
                                  exclude=set())  # fmt: skip
        assert none.units == [] and none.tokens == 0
        # The one ranking finds "conversion" for "convert" (first letters), not for "cover".
        assert project_matches(idx, "cover the report", project=_key(payments)) == []


def _key(project: Path) -> str:
    from memory_tool.base import paths

    return paths.project_key(project)


def test_only_the_subject_of_a_memory_counts(payments: Path) -> None:
    """A Why: or How to apply: is about many things: its words do not make the memory the
    prompt's."""
    _add(
        payments, "Use lib/pdf.py render() for invoices.\nWhy: the previous approach did not scale."
    )
    _start(payments, "s1")
    assert "render()" not in _prompt(payments, "compare these two approaches and pick one", "s1")
    assert "render()" in _prompt(payments, "render the invoices as PDF", "s2")


def test_a_word_many_of_the_projects_memories_hold_picks_none(payments: Path) -> None:
    for i, what in enumerate(("ledger", "payouts", "refunds", "disputes")):
        _add(payments, f"Split the {what} job into batches of {100 * (i + 1)} rows.")
    _start(payments, "s1")
    got = _prompt(payments, "split this into smaller pieces", "s1")
    assert "batches of" not in got
    assert "refunds job" in _prompt(payments, "split the refunds job", "s2")  # "refunds": rare


def test_room_recall_leaves_out_what_memory_md_says_already(tmp_path: Path) -> None:
    """A rule Claude Code saved itself, with a MEMORY.md line that states it: Claude Code loads
    that line into every request, so room recall does not give the rule again (one fact once
    per request); with auto-memory off nothing loads the line, and room recall gives it."""
    from helpers import write_memory

    from memory_tool.base import paths

    root = tmp_path / "work" / "svc"
    (root / ".git").mkdir(parents=True)
    folder = paths.project_memory_dir(root)
    write_memory(
        folder, "feedback_fast_tests.md",
        "Run the tests with make test-fast; the full suite needs docker.\n"
        "**Why:** the full suite takes 20 minutes.",
        type_="feedback", description="run make test-fast, not the full docker suite",
    )  # fmt: skip
    (folder / "MEMORY.md").write_text(
        "- [Fast tests](feedback_fast_tests.md) - run make test-fast; the full suite needs docker\n"
    )
    from click.testing import CliRunner

    from memory_tool.cli.main import main

    # Indexed as the Scribe indexes it: the classifier files it under testing.
    assert CliRunner().invoke(main, ["index", "--cwd", str(root)]).exit_code == 0
    prompt = "run the pytest tests for the refund module"
    assert "test-fast" not in _prompt(root, prompt, "s1")
    off = run_hook(
        "UserPromptSubmit",
        {"session_id": "s2", "transcript_path": "/x", "cwd": str(root),
         "hook_event_name": "UserPromptSubmit", "prompt": prompt},
        env={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"},
    )  # fmt: skip
    assert "make test-fast" in off.stdout.decode()


def test_a_past_question_gets_the_projects_memory_as_a_summary_not_its_line(
    payments: Path,
) -> None:
    """Search depth: "have we done X before?" lists ids and summaries (L4); the text waits for
    `get`. A prompt about the thing itself gets the line."""
    with open_index() as idx:
        add_memory(idx, "We tried the flamingo zeppelin warmup in March and it failed: ZBODYONEQ.",
                   type_="reference", cwd=payments,
                   description="Flamingo zeppelin warmup, first attempt")  # fmt: skip
    past = _prompt(payments, "Have we done the flamingo zeppelin warmup before?", "p1")
    assert "Flamingo zeppelin warmup, first attempt" in past and "ZBODYONEQ" not in past
    now = _prompt(payments, "start the flamingo zeppelin warmup", "p2")
    assert "ZBODYONEQ" in now
