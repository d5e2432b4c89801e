"""The when-to-load table as behaviour: each situation loads the tiers the design says, within
the budget it is given, counted exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import as_event, write_memory
from test_tiers_support import LONG_SID, install_transcript, payload

from memory_tool.base import tokens
from memory_tool.cli.main import main
from memory_tool.store.index import open_index
from memory_tool.tiers import digest, scribe, situations
from memory_tool.tiers import inject as tiers

HOT = tiers.HOT_HEADING
COLD_LATEST = tiers.COLD_LATEST_HEADING[:-1]  # followed by the summary's id
COLD_SEARCH = tiers.COLD_SEARCH_HEADING
WIKI = tiers.WIKI_HEADING

PROMPTS = {
    "new": "Add a CSV export to the reports page",
    "resume": "where were we?",
    "debug": "The idempotency test is failing again with a Redis connection error",
    "spec": "Implement POST /refunds according to the idempotency ADR",
    "onboard": "Walk me through how idempotency keys work in the billing API",
    "incident": "Post-mortem: duplicate charges slipped through despite idempotency keys",
}
# situation -> (hot, cold heading or None, wiki)
EXPECTED: dict[str, tuple[bool, str | None, bool]] = {
    "new": (False, None, False),
    "resume": (True, COLD_LATEST, False),
    "debug": (False, COLD_SEARCH, False),
    "spec": (False, None, True),
    "onboard": (False, None, True),
    "incident": (False, COLD_SEARCH, True),
}


@pytest.mark.parametrize("situation", list(PROMPTS))
def test_prompts_are_recognised(situation: str) -> None:
    assert situations.situation_of(PROMPTS[situation]) == situation


@pytest.mark.parametrize(
    ("prompt", "situation"),
    [
        ("continue", "resume"),
        ("ok, carry on", "resume"),
        ("Where did we leave off with the parser?", "resume"),
        ("what was left over from yesterday?", "resume"),  # blind3
        ("remind me what's next here", "resume"),
        ("morning. where did we leave this app?", "resume"),  # blind19: no "off", no topic
        ("what was I in the middle of before I left yesterday?", "resume"),  # blind4
        ("where did I leave things here?", "resume"),
        ("continue the refactor of the payments module and add tests for every new path", "new"),
        ("The export is broken", "new"),  # a failure, but nothing says it recurs
        ("Why does the flaky upload test keep failing?", "debug"),
        (
            "What is the auth service responsible for? Explain how the token refresh works",
            "onboard",
        ),
        ("Root cause of last night's outage", "incident"),
        ("", "new"),
    ],
)
def test_situation_edge_cases(prompt: str, situation: str) -> None:
    assert situations.situation_of(prompt) == situation


@pytest.fixture
def tiers_world(project: Path, state: Path) -> dict[str, object]:
    """An earlier session summarised in the cold tier, two wiki records, and a live session."""
    long = install_transcript("tiers_long", project)
    digest.update_session(as_event(payload("Stop", "tiers_long", project, long)))
    scribe.run(LONG_SID)
    write_memory(
        state / "wiki",
        "idempotency-adr.md",
        "**Decision:** Idempotency keys live in Redis for 24 h under idem:{account}:{key}. "
        "**Context:** retries double-charged customers. **Consequences:** Redis is required.",
        type_="wiki",
        layout="top",
        description="ADR: idempotency keys for POST endpoints",
    )
    write_memory(
        state / "wiki",
        "theming.md",
        "The frontend uses CSS variables for themes; dark mode toggles a class on <html>.",
        type_="wiki",
        layout="top",
    )
    small = install_transcript("tiers_small", project)
    digest.update_session(as_event(payload("Stop", "tiers_small", project, small)))
    with open_index() as idx:
        idx.refresh(project)
    return {"small": small}


@pytest.mark.parametrize("situation", list(PROMPTS))
def test_each_situation_loads_what_the_table_says(
    situation: str, project: Path, tiers_world: dict[str, object]
) -> None:
    small = tiers_world["small"]
    assert isinstance(small, Path)
    hook_payload = payload("UserPromptSubmit", "tiers_small", project, small)
    hook_payload["prompt"] = PROMPTS[situation]
    budget = 3000
    with open_index() as idx:
        units = tiers.prompt_context(idx, as_event(hook_payload), budget)
    text = "".join(u.text for u in units)
    want_hot, want_cold, want_wiki = EXPECTED[situation]
    assert (HOT in text) == want_hot
    assert (COLD_LATEST in text) == (want_cold == COLD_LATEST)
    assert (COLD_SEARCH in text) == (want_cold == COLD_SEARCH)
    assert (WIKI in text) == want_wiki
    if want_cold:
        assert "Task: Add idempotency keys" in text  # the earlier session's summary
    if want_wiki:
        assert "Idempotency keys live in Redis" in text
        assert "CSS variables" not in text  # only matching records
    if situation == "resume":
        assert "Current task: Fix the typo in the README heading." in text  # this session's
    if situation == "debug":
        # The part of the summary the prompt is about comes along with its id line.
        assert "Redis" in text.split(COLD_SEARCH)[1]
    assert sum(u.tokens for u in units) == tokens.count(text) <= budget
    assert len(text) <= tiers.PROMPT_CONTEXT_MAX_CHARS


def test_budget_is_a_hard_ceiling(project: Path, tiers_world: dict[str, object]) -> None:
    small = tiers_world["small"]
    assert isinstance(small, Path)
    with open_index() as idx:
        for budget in (0, 20, 60, 150, 400):
            for prompt in PROMPTS.values():
                p = payload("UserPromptSubmit", "tiers_small", project, small, prompt=prompt)
                units = tiers.prompt_context(idx, as_event(p), budget)
                text = "".join(u.text for u in units)
                assert sum(u.tokens for u in units) == tokens.count(text) <= budget
                # A heading never comes alone: a section is either there with content or not.
                for heading in (HOT, COLD_LATEST, COLD_SEARCH, WIKI):
                    if heading in text:
                        rest = text.split(heading)[1]
                        assert rest and not rest.startswith("##")


def test_cli_context_prints_what_would_load(project: Path, tiers_world: dict[str, object]) -> None:
    runner = CliRunner()
    for situation in ("resume", "debug", "spec", "onboard", "incident"):
        result = runner.invoke(
            main,
            ["context", "--situation", situation, "--prompt", PROMPTS[situation],
             "--cwd", str(project)],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert result.output.startswith(f"situation: {situation}")
        want_hot, want_cold, want_wiki = EXPECTED[situation]
        assert (HOT.strip() in result.output) == want_hot
        assert (WIKI.strip() in result.output) == want_wiki
        assert "tokens" in result.output.splitlines()[-1]
    detected = runner.invoke(main, ["context", "--prompt", "where were we", "--cwd", str(project)])
    assert detected.output.startswith("situation: resume")


def test_a_review_that_shares_no_word_with_the_summary_still_looks_back(
    project: Path, tiers_world: dict[str, object]
) -> None:
    # "postmortem of the outage" names nothing the session that fixed it wrote down: the latest
    # summary of this project is what a review looks back on.
    small = tiers_world["small"]
    assert isinstance(small, Path)
    ask = payload("UserPromptSubmit", "tiers_small", project, small)
    ask["prompt"] = "postmortem of the outage, please"
    assert situations.situation_of(ask["prompt"]) == "incident"
    with open_index() as idx:
        text = "".join(u.text for u in tiers.prompt_context(idx, as_event(ask), 3000))
        latest = tiers.latest_cold(idx, paths_key(project), "")
    assert latest is not None and COLD_SEARCH in text and latest.id in text


def test_the_latest_summary_is_the_one_written_last_the_same_day(project: Path) -> None:
    import os

    from memory_tool.base import paths

    cold = paths.state_root() / "cold" / paths_key(project)
    for i, sid in enumerate(["ffff0000", "00001111", "88880000"]):
        path = write_memory(cold, f"2026-11-30-{sid}.md", f"Task: task {i}", type_="cold",
                            title=f"session-2026-11-30-{sid}", created="2026-11-30")  # fmt: skip
        os.utime(path, ns=(10**18 + i, 10**18 + i))
    with open_index() as idx:
        idx.refresh(project)
        latest = tiers.latest_cold(idx, paths_key(project), "")
    assert latest is not None and latest.name == "session-2026-11-30-88880000"


def test_the_tiers_never_repeat_what_the_session_already_has(
    project: Path, tiers_world: dict[str, object]
) -> None:
    from memory_tool.runtime.prompt_submit import prompt_context as hook_context

    small = tiers_world["small"]
    assert isinstance(small, Path)
    seen: list[str] = []
    for prompt in ("Walk me through how idempotency keys work in the billing API",
                   "explain how the idempotency keys in redis expire"):  # fmt: skip
        ask = payload("UserPromptSubmit", "tiers_small", project, small)
        ask["prompt"] = prompt
        text, ids = hook_context(as_event(ask))
        assert len(ids) == len(set(ids)), text  # not twice in one prompt (L3 and the wiki)
        assert not set(ids) & set(seen), text  # nor again later in the session
        seen += ids
    assert seen


def paths_key(project: Path) -> str:
    from memory_tool.base import paths

    return paths.project_key(project)


@pytest.mark.parametrize("situation", ["debug", "resume"])
def test_a_past_session_that_states_a_superseded_fact_is_not_told_as_true(
    situation: str, project: Path, tiers_world: dict[str, object]
) -> None:
    """A week of use gave "Task: The carrier API base URL is api.carrier-a.example. …" beside
    the memory of the move: a summary's line (or a search hit whose task) states what a
    superseded memory said is left out; the rest of the summary still comes."""
    from memory_tool.base import paths

    with open_index() as idx:
        (cold,) = idx.entries(source="cold", project=paths.project_key(project))
        first = tiers.cold_body_lines(cold.body)[0]
    said = first.removeprefix("Task:").strip().split(". ")[0].rstrip(".\n") + "."
    small = tiers_world["small"]
    assert isinstance(small, Path)
    hook_payload = payload("UserPromptSubmit", "tiers_small", project, small)
    hook_payload["prompt"] = PROMPTS[situation]

    def told() -> str:
        with open_index() as idx:
            idx.refresh(project)
            units = tiers.prompt_context(idx, as_event(hook_payload), 3000)
        return "".join(u.text for u in units)

    assert said in told()
    write_memory(
        paths.project_memory_dir(project), "old_fact.md", said, type_="project",
        superseded_by="p-0a1b2c",
    )  # fmt: skip
    text = told()
    assert said not in text
    if situation == "resume":
        assert COLD_LATEST in text  # the rest of that session still comes
