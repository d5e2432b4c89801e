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
