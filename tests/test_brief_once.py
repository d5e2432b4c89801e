"""One fact once per request: the brief leaves out of L2 a memory Claude Code wrote whose
MEMORY.md line already says it (Claude Code loads that line into every session itself), and its
closing recap names critical rules instead of saying them again. Codex and Gemini load no
MEMORY.md: they get the memory in L2 as before, and so does Claude Code with auto-memory off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import write_memory
from test_faults import check_output, run_in_process

from memory_tool.base import paths
from memory_tool.recall.wake import build_brief
from memory_tool.store.index import open_index

RULE = "Run the tests with make test-fast; the full suite needs docker."


HOOK = "run make test-fast; the full suite needs docker"


def claude_rule(project: Path, hook: str = HOOK) -> Path:
    """A rule as Claude Code saves it: its own file and its own MEMORY.md line."""
    folder = paths.project_memory_dir(project)
    path = write_memory(
        folder,
        "feedback_fast_tests.md",
        RULE + "\n**Why:** the full suite takes 20 minutes.",
        type_="feedback",
        description="run make test-fast, not the full docker suite",
    )
    with open(folder / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write(f"- [Fast tests](feedback_fast_tests.md) - {hook}\n")
    return path


def brief_text(project: Path, index_loaded: bool = True) -> str:
    with open_index() as idx:
        idx.refresh_for_wake(project)
        return build_brief(idx, project, index_loaded=index_loaded).text


def session_start(project: Path) -> str:
    payload = {"session_id": "once-1", "transcript_path": "/x", "cwd": str(project),
               "source": "startup"}  # fmt: skip
    doc = check_output(run_in_process("SessionStart", json.dumps(payload).encode()), "SessionStart")
    assert doc is not None
    return str(doc["hookSpecificOutput"]["additionalContext"])


def test_a_rule_claude_code_indexed_itself_is_not_given_again(project: Path) -> None:
    claude_rule(project)
    write_memory(paths.project_memory_dir(project), "project_db.md", "Postgres 16 here.",
                 type_="project")  # fmt: skip
    text = brief_text(project)
    assert "test-fast" not in text  # MEMORY.md gives it, in the same request
    assert "Postgres 16" in text  # not in MEMORY.md: L2 gives it
    # An agent that loads no MEMORY.md gets it from the brief.
    assert RULE in brief_text(project, index_loaded=False)


def test_an_index_line_that_only_names_the_file_does_not_count(project: Path) -> None:
    claude_rule(project, hook="")
    assert RULE in brief_text(project)


def test_an_index_line_that_only_labels_the_fact_does_not_count(project: Path) -> None:
    """The line gives the description, and a description may only label the fact."""
    folder = paths.project_memory_dir(project)
    write_memory(folder, "project_fact_01.md", "Widget 1 runs with setting ZFACT01Q.",
                 type_="project", description="project fact 01")  # fmt: skip
    (folder / "MEMORY.md").write_text("- [project_fact_01](project_fact_01.md) — project fact 01\n")
    assert "ZFACT01Q" in brief_text(project)


def test_an_index_line_that_is_the_fact_in_brief_counts(project: Path) -> None:
    # blind2: Claude's line "yarn test:unit; yarn test starts Detox" holds under 60% of the
    # rule's words, and L2 gave the rule again in 19 requests.
    claude_rule(project, hook="test-fast; suite needs docker")  # 6 of its 11 words, title too
    assert "test-fast" not in brief_text(project)


def test_other_forms_of_the_facts_words_are_the_fact_in_brief(project: Path) -> None:
    # blind9: "pnpm typecheck to check it compiles; next build takes ~4 min" for "To check that
    # changes compile, run pnpm typecheck …; it takes about 4 minutes".
    claude_rule(project, hook="make test-fast runs tests; full suites need docker")
    assert "test-fast" not in brief_text(project)


def test_three_words_of_the_fact_and_how_words_are_the_fact_in_brief(project: Path) -> None:
    # blind7: "use --exclude cluster, no epmd here" for "Run the tests with mix test --exclude
    # cluster; … need epmd …": three words of the fact, "use" and "here" say only how.
    claude_rule(project, hook="use test-fast here, no docker")
    assert "test-fast" not in brief_text(project)


def test_five_words_of_the_fact_beside_words_of_its_own_are_the_fact_in_brief(
    project: Path,
) -> None:
    # blind13: "vitest run - one-shot unit tests, pnpm test waits forever" for "Run the unit
    # tests with pnpm vitest run; plain pnpm test starts vitest in watch mode …": six of its
    # nine words are the fact's, and L2 gave the rule again in 21 requests.
    claude_rule(project, hook="make test-fast since docker, waits forever")
    assert "test-fast" not in brief_text(project)


def test_an_index_line_with_words_of_its_own_is_a_label(project: Path) -> None:
    claude_rule(project, hook="how to run the fast tests locally")
    assert RULE in brief_text(project)


def test_a_critical_rule_still_opens_the_brief(project: Path) -> None:
    folder = paths.project_memory_dir(project)
    write_memory(folder, "feedback_prod.md",
                 "Never run database migrations against production by hand.", type_="feedback",
                 description="never run migrations against production by hand")  # fmt: skip
    (folder / "MEMORY.md").write_text(
        "- [Prod](feedback_prod.md) — never run migrations against production by hand\n"
    )
    text = brief_text(project)
    assert text.count("Never run database migrations against production by hand.") == 1
    recap = next(ln for ln in text.splitlines() if ln.startswith("Recap"))
    assert "production" not in recap and "[f-" in recap  # named by id, not said again


def test_memory_tools_own_file_keeps_its_l2_line(project: Path) -> None:
    """A captured memory's MEMORY.md line only points at it: L2 is where its text is."""
    folder = paths.project_memory_dir(project)
    write_memory(folder, "feedback_httpx.md", "Use httpx instead of requests.", type_="feedback",
                 description="Use httpx instead of requests.", created="2026-11-20")  # fmt: skip
    (folder / "MEMORY.md").write_text(
        "- [use-httpx](feedback_httpx.md) — Use httpx instead of requests.\n"
    )
    assert "Use httpx instead of requests." in brief_text(project)


@pytest.mark.parametrize("off", ["env", "user settings", "project settings"])
def test_with_auto_memory_off_the_brief_gives_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, off: str
) -> None:
    claude_rule(project)
    assert "test-fast" not in session_start(project)
    if off == "env":
        monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    else:
        where = (
            paths.settings_file()
            if off == "user settings"
            else (project / ".claude" / "settings.json")
        )
        where.parent.mkdir(parents=True, exist_ok=True)
        data: dict[str, Any] = json.loads(where.read_text()) if where.exists() else {}
        where.write_text(json.dumps({**data, "autoMemoryEnabled": False}))
    assert RULE in session_start(project)
