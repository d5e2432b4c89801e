"""Near-duplicates: `add` names the memory a new one nearly repeats and saves only with --force;
the brief never shows two near-duplicates, and keeps the richer one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_memory

from memory_tool.base import paths
from memory_tool.base.errors import NearDuplicateError
from memory_tool.cli.main import main
from memory_tool.recall.explain import explain_brief
from memory_tool.recall.wake import build_brief
from memory_tool.store.index import open_index
from memory_tool.store.palace import add_memory

RULE = "Run the test suite with -x before pushing; CI takes 20 minutes."
RICH = (
    f"{RULE}\n**Why:** a red CI run blocks the merge queue for everyone.\n"
    "**How to apply:** `pytest -x` locally, then push."
)


def rich_memory(project: Path) -> Path:
    return write_memory(paths.project_memory_dir(project), "feedback_testing.md", RICH,
                        type_="feedback", description="Tests with -x before pushing")  # fmt: skip


def test_add_names_the_memory_it_nearly_repeats_and_saves_nothing(project: Path) -> None:
    rich = rich_memory(project)
    with open_index() as idx:
        idx.refresh(project)
        (existing,) = idx.entries(path=str(rich))
    before = sorted(p.name for p in rich.parent.iterdir())
    result = CliRunner().invoke(
        main, ["add", "--type", "feedback", "--cwd", str(project), RULE], catch_exceptions=False
    )
    assert result.exit_code == 1
    assert existing.id in result.output and "feedback_testing.md" in result.output
    assert "--force" in result.output
    assert sorted(p.name for p in rich.parent.iterdir()) == before  # nothing written

    forced = CliRunner().invoke(
        main, ["add", "--type", "feedback", "--force", "--json", "--cwd", str(project), RULE]
    )
    assert forced.exit_code == 0, forced.output
    row = json.loads(forced.output)
    assert row["new"] and Path(row["path"]).read_text().endswith(f"\n{RULE}\n")
    assert Path(row["path"]) != rich


def test_a_hand_written_memory_not_indexed_yet_counts(project: Path) -> None:
    # Claude wrote it mid-session; no refresh ran since.
    CliRunner().invoke(main, ["index"])
    rich_memory(project)
    result = CliRunner().invoke(main, ["add", "--type", "feedback", "--cwd", str(project), RULE])
    assert result.exit_code == 1 and "feedback_testing.md" in result.output


def test_the_library_refuses_the_same_way_and_says_which(project: Path) -> None:
    rich = rich_memory(project)
    with open_index() as idx:
        idx.refresh(project)
        with pytest.raises(NearDuplicateError) as caught:
            add_memory(idx, RULE.upper(), type_="feedback", cwd=project)  # case and punctuation
        assert caught.value.entry.path == str(rich)
        # The longer text that holds an existing memory's words repeats it just as much.
        short = add_memory(idx, "Deploys go through ArgoCD from the main branch.",
                           type_="project", cwd=project)  # fmt: skip
        longer = "Deploys go through ArgoCD from the main branch. Staging is kube-stg-2."
        with pytest.raises(NearDuplicateError) as caught:
            add_memory(idx, longer, type_="project", cwd=project)
        assert caught.value.entry.id == short.id


def test_related_but_different_memories_are_saved(project: Path) -> None:
    with open_index() as idx:
        for text in (
            "Rule number 1 is important.",
            "Rule number 10 is important.",  # "rule number 1" is not inside "rule number 10"
            "Tests run with pytest.",
            "Tests run with pytest -q in CI.",  # 4 words or fewer: only the same text repeats
        ):
            add_memory(idx, text, type_="feedback", cwd=project)
        assert len(list(paths.project_memory_dir(project).glob("feedback_*.md"))) == 4


def test_the_brief_shows_one_of_two_near_duplicates_the_richer(project: Path) -> None:
    rich_memory(project)
    d = paths.project_memory_dir(project)
    # The short copy is newer and more important: it would rank first.
    write_memory(d, "feedback_run_tests.md", RULE, type_="feedback", importance=5)
    write_memory(d, "feedback_other.md", "Never rebase the release branch after tagging.",
                 type_="feedback")  # fmt: skip
    with open_index() as idx:
        idx.refresh(project)
        brief = build_brief(idx, project)
    assert brief.text.count("Run the test suite with -x before pushing") == 1
    assert "a red CI run blocks the merge queue" in brief.text  # the richer one
    names = {Path(e.path).name for e in brief.layers["L2"].picked}
    assert names == {"feedback_testing.md", "feedback_other.md"}


PUSH = "Never push to main directly; a push there deploys to production at once."
PUSH_BECAUSE = "Never push to main directly, because a push there deploys to production at once."


def test_a_rewording_that_only_puts_words_in_is_a_near_duplicate(project: Path) -> None:
    # Found in a walkthrough: both loaded as critical rules, one word apart.
    with open_index() as idx:
        first = add_memory(idx, PUSH, type_="feedback", cwd=project)
        with pytest.raises(NearDuplicateError) as caught:
            add_memory(idx, PUSH_BECAUSE, type_="feedback", cwd=project)
        assert caught.value.entry.id == first.id
        # The other way round too: the shorter text repeats the longer one.
        add_memory(idx, PUSH_BECAUSE, type_="feedback", cwd=project, force=True)
        with pytest.raises(NearDuplicateError):
            add_memory(idx, "Never push to main directly: a push there deploys to production.",
                       type_="feedback", cwd=project)  # fmt: skip
        idx.refresh(project)
        brief = build_brief(idx, project)
    picked = [e.body.strip() for e in brief.layers["L2"].picked]
    assert picked == [PUSH_BECAUSE]  # one of them, the richer


def test_a_rewording_that_changes_what_it_says_is_a_different_memory(project: Path) -> None:
    with open_index() as idx:
        for text in (
            "Use the shared cache for the test fixtures in CI.",
            "Do not use the shared cache for the test fixtures in CI.",  # a negation
            "Use the shared cache only for the test fixtures in CI.",  # a restriction
            "Never use the shared cache for the test fixtures in CI.",  # right before it
            "Use the shared cache for the test fixtures in CI except on main.",  # right after
            "Retry the flaky upload job 3 times before paging anyone.",
            "Retry the flaky upload job 3 or 5 times before paging anyone.",  # a number
            "Deploy the billing service on Tuesday mornings.",
            "Deploy the billing service and the invoices worker on Tuesday mornings.",  # 4 of 7
        ):
            add_memory(idx, text, type_="feedback", cwd=project)
        assert len(list(paths.project_memory_dir(project).glob("feedback_*.md"))) == 9
        idx.refresh(project)
        brief = build_brief(idx, project)
    assert "Do not use the shared cache" in brief.text and "Use the shared cache for" in brief.text


def test_wake_why_names_the_memory_that_holds_a_left_out_near_duplicate(project: Path) -> None:
    with open_index() as idx:
        first = add_memory(idx, PUSH, type_="feedback", cwd=project)
        richer = add_memory(idx, PUSH_BECAUSE, type_="feedback", cwd=project, force=True)
        idx.refresh(project)
        why = explain_brief(idx, project)
    (row,) = [r for r in why.dropped if r.entry.id == first.id]
    assert row.detail == f"a near-duplicate of [{richer.id}], which says at least as much"
