"""The right context in everyday situations: a handoff that reaches the next session, worktrees,
a moved memory folder, subagents' memories, resuming, forking and compaction (issue 15).

Each test runs the real hook scripts as processes in a sandboxed HOME (tests/helpers.py)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import add_worktree, run_hook, start_payload, write_memory
from test_tiers_support import LONG_SID, SMALL_SID, hook_json, install_transcript, payload

from memory_tool.base import paths, tokens
from memory_tool.cli.main import main
from memory_tool.store.index import open_index
from memory_tool.tiers import inject

HANDOFF_HEADING = inject.HANDOFF_HEADING.strip()
COLD_LATEST = inject.COLD_LATEST_HEADING.strip()


def brief(project: Path, source: str = "startup", session: str = "s1") -> str:
    out = hook_json(
        run_hook("SessionStart", {**start_payload(project, source), "session_id": session}).stdout
    )
    return out["hookSpecificOutput"]["additionalContext"] if out else ""


def prompt_context(project: Path, prompt: str, session: str) -> str:
    data = {
        "session_id": session,
        "transcript_path": "/nonexistent.jsonl",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    out = hook_json(run_hook("UserPromptSubmit", data).stdout)
    return out["hookSpecificOutput"]["additionalContext"] if out else ""


def write_handoff(root: Path, text: str, age_s: float = 0.0) -> Path:
    path = root / "thoughts" / "HANDOFF.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    when = time.time() - age_s
    os.utime(path, (when, when))
    return path


# --- 1. the handoff reaches the next session ---------------------------------------------------
def test_a_handoff_reaches_the_next_session_resumes_and_where_were_we_but_no_later_session(
    project: Path,
) -> None:
    write_handoff(project, "# Handoff\n## Next steps\n- Finish the invoices export (MARKER-7Q).\n")
    first = brief(project, session="s-next")
    assert HANDOFF_HEADING in first and "MARKER-7Q" in first
    assert str(project / "thoughts" / "HANDOFF.md") in first
    assert "MARKER-7Q" not in brief(project, session="s-later")  # delivered once
    assert "MARKER-7Q" in brief(project, "resume", session="s-later")  # a resume gets it
    assert "MARKER-7Q" not in brief(project, "resume", session="s-later")  # once per session
    assert "MARKER-7Q" in prompt_context(project, "where were we?", "s-third")
    assert "MARKER-7Q" not in prompt_context(project, "where were we?", "s-third")
    shown = CliRunner().invoke(main, ["context", "--situation", "resume", "--cwd", str(project)])
    assert shown.exit_code == 0 and "MARKER-7Q" in shown.output
    # A rewritten handoff is a new one: the next session gets it.
    write_handoff(project, "# Handoff\n- Ship the export behind a flag (MARKER-8R).\n", age_s=-5)
    assert "MARKER-8R" in brief(project, session="s-fourth")


def test_a_long_handoff_is_a_pointer_and_the_handoff_keeps_its_budget(project: Path) -> None:
    lines = [
        f"- step {i}: migrate invoice batch {i} and check the totals twice" for i in range(300)
    ]
    path = write_handoff(project, "# Handoff\n" + "\n".join(lines) + "\n")
    with open_index() as idx:
        idx.refresh(project)
        units = inject.handoff_units(idx, str(project), first_only=True)
    text = "".join(u.text for u in units)
    assert str(path) in text and "read it" in text and "step 299" not in text
    assert sum(u.tokens for u in units) == tokens.count(text) <= inject.HANDOFF_BUDGET_TOKENS
    assert len(text) <= inject.HANDOFF_MAX_CHARS
    short = write_handoff(project, "# Handoff\n- Done: the parser.\n- Next: the exporter.\n")
    with open_index() as idx:
        units = inject.handoff_units(idx, str(project), first_only=True)
    text = "".join(u.text for u in units)
    assert "> - Next: the exporter." in text and str(short) in text
    assert sum(u.tokens for u in units) == tokens.count(text) <= inject.HANDOFF_BUDGET_TOKENS


def test_a_handoff_older_than_the_latest_session_summary_is_reported_stale(project: Path) -> None:
    write_handoff(
        project, "# Handoff\n- Rename the billing tables to invoices_* (MARKER-OLD).\n", 3 * 86_400
    )
    cold = paths.palace_dir("cold") / paths.project_key(project)
    write_memory(cold, "2026-11-29-abcdef12.md", "Task: tune the exporter.", type_="cold")
    with open_index() as idx:  # the Scribe indexes each summary it writes
        idx.refresh(project)
    # A later session of other work leaves the handoff's work open (tiers/open_work.py).
    assert "MARKER-OLD" in brief(project, session="s-open")
    write_memory(
        cold, "2026-11-30-bcdef123.md",
        "Task: rename the billing tables to invoices_ and fix the views.", type_="cold",
    )  # fmt: skip
    with open_index() as idx:
        idx.refresh(project)
    text = brief(project, "resume", session="s-stale")
    assert "MARKER-OLD" not in text
    assert "is older than the latest session summary" in text and "not loaded" in text
    (paths.state_root() / "config.yaml").write_text("handoff:\n  stale_after_hours: 200\n")
    # Within the configured time it is a handoff like any other (a resume gets it).
    assert "MARKER-OLD" in brief(project, "resume", session="s-fresh")


def test_a_handoff_is_stale_once_a_later_session_here_did_substantial_work(
    project: Path,
) -> None:
    """Not only after a day: a session that started after the handoff was written and did
    substantial work in the same working tree has moved past it."""
    # Written before the session's first event (2026-11-29); the day-old rule kept out of it.
    paths.state_root().mkdir(parents=True, exist_ok=True)
    (paths.state_root() / "config.yaml").write_text("handoff:\n  stale_after_hours: 10000\n")
    write_handoff(
        project,
        "# Handoff\n- Next: idempotency keys for POST /charges (MARKER-MOVED).\n",
        12 * 86_400,
    )
    assert "MARKER-MOVED" in brief(project, session=LONG_SID)  # the next session gets it
    transcript = install_transcript("tiers_long", project)  # and edits 5+ files
    stop = run_hook("Stop", payload("Stop", "tiers_long", project, transcript))
    assert stop.returncode == 0
    later = prompt_context(project, "where were we?", "s-after")
    assert "MARKER-MOVED" not in later
    assert "older than later work in this working tree" in later and "not loaded" in later
    assert "MARKER-MOVED" not in brief(project, "resume", session="s-other")
    # A new handoff is a new one.
    write_handoff(project, "# Handoff\n- Next: the exporter (MARKER-NEW).\n", age_s=-5)
    assert "MARKER-NEW" in prompt_context(project, "where were we?", "s-after-2")


def test_a_later_session_of_other_work_leaves_the_handoff_open(project: Path) -> None:
    """Two held-out weeks: "stop here, next time X", a session of other work, then "where did
    we leave off?" expected X back. Only a session that works on the handoff's work (its files
    or its words) moves past it."""
    paths.state_root().mkdir(parents=True, exist_ok=True)
    (paths.state_root() / "config.yaml").write_text("handoff:\n  stale_after_hours: 10000\n")
    write_handoff(
        project, "# Handoff\n## Next\n- Rename the ledger tables (MARKER-OPEN).\n", 12 * 86_400
    )
    transcript = install_transcript("tiers_long", project)  # idempotency keys: other work
    assert run_hook("Stop", payload("Stop", "tiers_long", project, transcript)).returncode == 0
    later = prompt_context(project, "where were we?", "s-after")
    assert "MARKER-OPEN" in later and "older than later work" not in later


def test_a_plan_said_at_a_sessions_end_comes_back_after_a_session_of_other_work(
    project: Path,
) -> None:
    """ "lets stop here, next time the repack part" with no handoff file: the summary of that
    session holds the plan, and "where did we leave off?" gets it after a later session of
    other work, not after a session that worked on it."""
    cold = paths.palace_dir("cold") / paths.project_key(project)
    write_memory(cold, "2026-11-27-aaaa0001.md", "Task: the backup command.\n\n## Files changed "
                 "(1)\n- cmd/backup.go\n## Stats\n3 prompts, 9 tool calls, 1 files edited",
                 type_="cold")  # fmt: skip
    write_memory(cold, "2026-11-28-aaaa0002.md", "Task: prune unreferenced data.\nResult: Stopping "
                 "here. Next time: repack packs that are less than half live (PLAN-7).\n\n## Files "
                 "changed (1)\n- internal/repo/prune.go\n## Stats\n4 prompts, 12 tool calls, 1 "
                 "files edited", type_="cold")  # fmt: skip
    write_memory(cold, "2026-11-29-aaaa0003.md", "Task: keelback check reads every pack back.\n\n"
                 "## Files changed (1)\n- internal/repo/check.go\n## Stats\n3 prompts, 8 tool "
                 "calls, 1 files edited", type_="cold")  # fmt: skip
    with open_index() as idx:
        idx.refresh(project)
    text = prompt_context(project, "morning. where did we leave off in this repo?", "s-plan")
    assert "PLAN-7" in text and inject.OPEN_PLAN_HEADING.strip() in text
    assert "keelback check" in text  # the latest session as before
    # A session that works on it takes it up: no longer open.
    write_memory(cold, "2026-11-30-aaaa0004.md", "Task: repack the half-live packs after prune.\n"
                 "\n## Files changed (1)\n- internal/repo/repack.go\n## Stats\n3 prompts, 8 "
                 "tool calls, 1 files edited", type_="cold")  # fmt: skip
    with open_index() as idx:
        idx.refresh(project)
    assert "PLAN-7" not in prompt_context(project, "where did we leave off?", "s-plan-2")


def test_a_short_later_session_leaves_the_handoff_as_it_is(project: Path) -> None:
    paths.state_root().mkdir(parents=True, exist_ok=True)
    (paths.state_root() / "config.yaml").write_text("handoff:\n  stale_after_hours: 10000\n")
    write_handoff(
        project, "# Handoff\n- Next: rename the billing tables (MARKER-KEPT).\n", 12 * 86_400
    )
    transcript = install_transcript("tiers_small", project)
    assert run_hook("Stop", payload("Stop", "tiers_small", project, transcript)).returncode == 0
    assert "MARKER-KEPT" in prompt_context(project, "where were we?", "s-after")


# --- 2. worktrees ---------------------------------------------------------------------------------
@pytest.fixture
def worktree(tmp_path: Path) -> tuple[Path, Path]:
    main_tree = tmp_path / "work" / "repoA"
    main_tree.mkdir(parents=True)
    branch = tmp_path / "work" / "repoA-wt"
    add_worktree(main_tree, branch)
    return main_tree, branch


def test_a_worktree_shares_the_memory_folder_but_keeps_its_own_thoughts(
    worktree: tuple[Path, Path],
) -> None:
    main_tree, branch = worktree
    assert paths.project_key(branch) == paths.project_key(main_tree)
    assert paths.handoff_file(branch) == branch.resolve() / "thoughts" / "HANDOFF.md"
    assert paths.context_file(main_tree) == main_tree.resolve() / "thoughts" / "CONTEXT.md"
    write_memory(
        paths.project_memory_dir(main_tree), "feedback_push.md", "Never force-push to main.",
        type_="feedback",
    )  # fmt: skip
    for tree, word in ((main_tree, "MAIN-ONLY"), (branch, "WORKTREE-ONLY")):
        (tree / "thoughts").mkdir()
        (tree / "thoughts" / "CONTEXT.md").write_text(f"# Context\n{word}: what this tree is.\n")
    in_main = brief(main_tree, session="m1")
    in_branch = brief(branch, session="w1")
    assert "Never force-push" in in_main and "Never force-push" in in_branch
    assert "MAIN-ONLY" in in_main and "WORKTREE-ONLY" not in in_main
    assert "WORKTREE-ONLY" in in_branch and "MAIN-ONLY" not in in_branch
    # The handoff a long session there is asked for goes to the worktree, not to main.
    transcript = install_transcript("tiers_long", branch)
    block = hook_json(run_hook("Stop", payload("Stop", "tiers_long", branch, transcript)).stdout)
    assert block is not None and block["decision"] == "block"
    assert str(branch.resolve() / "thoughts" / "HANDOFF.md") in block["reason"]
    assert str(main_tree.resolve() / "thoughts") not in block["reason"]


# --- where Claude Code keeps memory ---------------------------------------------------------------
def _settings(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_auto_memory_directory_moves_the_memory_folder_and_add_writes_there(
    project: Path, claude_dir: Path, tmp_path: Path
) -> None:
    moved = tmp_path / "elsewhere" / "memory"
    _settings(claude_dir / "settings.json", {"autoMemoryDirectory": str(moved)})
    write_memory(moved, "feedback_deploy.md", "Never deploy on Fridays.", type_="feedback")
    assert paths.project_memory_dir(project) == moved
    assert "Never deploy on Fridays." in brief(project)
    added = CliRunner().invoke(
        main, ["add", "--type", "project", "--cwd", str(project), "The exporter runs nightly."]
    )
    assert added.exit_code == 0, added.output
    assert any("exporter runs nightly" in p.read_text() for p in moved.glob("project_*.md"))


def test_auto_memory_directory_is_read_as_claude_code_reads_it(
    project: Path, claude_dir: Path, sandbox: Path
) -> None:
    user, shared, local = (project / n for n in ("u", "p", "l"))
    _settings(claude_dir / "settings.json", {"autoMemoryDirectory": str(user)})
    assert paths.auto_memory_directory(project) == user
    _settings(project / ".claude" / "settings.json", {"autoMemoryDirectory": str(shared)})
    assert paths.auto_memory_directory(project) == shared
    _settings(project / ".claude" / "settings.local.json", {"autoMemoryDirectory": str(local)})
    assert paths.auto_memory_directory(project) == local
    _settings(project / ".claude" / "settings.local.json", {"autoMemoryDirectory": "~/mine"})
    assert paths.auto_memory_directory(project) == sandbox / "mine"
    for ignored in ("relative/dir", "", 7):  # Claude Code ignores these
        _settings(project / ".claude" / "settings.local.json", {"autoMemoryDirectory": ignored})
        assert paths.auto_memory_directory(project) == shared


def test_claude_code_project_dir_name_names_the_project_only_with_a_config_dir(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    default = paths.project_key(project)
    monkeypatch.setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "billing-svc")
    assert paths.project_key(project) == default  # ignored without CLAUDE_CONFIG_DIR
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert paths.project_key(project) == "billing-svc"
    assert (
        paths.project_memory_dir(project)
        == tmp_path / "cfg" / "projects" / "billing-svc" / "memory"
    )
    for bad in ("has/slash", "con", "x" * 65):
        monkeypatch.setenv("CLAUDE_CODE_PROJECT_DIR_NAME", bad)
        assert paths.project_key(project) == default


def test_subagent_memories_are_indexed_for_search_and_stay_out_of_the_brief(
    project: Path, claude_dir: Path
) -> None:
    write_memory(
        claude_dir / "agent-memory" / "reviewer", "retries.md",
        "The reviewer flags HTTP clients without tenacity retries.", type_="feedback",
    )  # fmt: skip
    write_memory(
        project / ".claude" / "agent-memory" / "planner", "phases.md",
        "The zebra migration runs in three phases, smallest tables first.", type_="project",
    )  # fmt: skip
    text = brief(project)  # registers the project's subagent memory
    assert "tenacity" not in text and "zebra" not in text
    runner = CliRunner()
    assert runner.invoke(main, ["index", "--cwd", str(project)]).exit_code == 0
    listed = json.loads(runner.invoke(main, ["list", "--json"]).output)
    agents = {row["id"] for row in listed if "agent-memory" in row["path"]}
    assert len(agents) == 2
    for query in ("tenacity retries", "zebra migration phases"):
        found = runner.invoke(main, ["search", "--json", query])
        assert found.exit_code == 0, found.output
        assert {hit["id"] for hit in json.loads(found.output)} & agents, query


# --- 4. one request never carries the same cold summary twice ----------------------------------
def test_resume_then_where_were_we_carries_the_latest_summary_once(project: Path) -> None:
    long, small = (install_transcript(n, project) for n in ("tiers_long", "tiers_small"))
    run_hook("Stop", payload("Stop", "tiers_long", project, long))
    run_hook("SessionEnd", payload("SessionEnd", "tiers_long", project, long))
    run_hook("Stop", payload("Stop", "tiers_small", project, small))
    resumed = brief(project, "resume", session=SMALL_SID)
    assert COLD_LATEST in resumed
    asked = prompt_context(project, "where were we?", SMALL_SID)
    assert COLD_LATEST not in asked
    assert COLD_LATEST in prompt_context(project, "where were we?", "another-session")
    assert LONG_SID  # the summary given is the other session's (the fixture's long one)


DBT_RULE = "Always run dbt with --target dev before a prod run."


def test_one_fact_reaches_a_request_once_whatever_carries_it(project: Path) -> None:
    """A week of sessions each noted the same dbt rule the brief holds: resuming, then asking
    about the failing models, the rule reaches the request once (the brief's), not once per
    summary (it was 7 times in one request)."""
    write_memory(paths.project_memory_dir(project), "feedback_dbt.md", DBT_RULE, type_="feedback")
    cold = paths.palace_dir("cold") / paths.project_key(project)
    for day in range(23, 29):
        body = (
            f"Task: fix the nightly dbt models, part {day}.\n\n## Decisions\n"
            f"- User: always run dbt with --target dev before a prod run\n"
            f"- The orders model {day} joins on order_id now.\n\n## Stats\n"
            "3 prompts, 6 tool calls, 2 files edited; a short session, kept whole.\n"
        )
        path = write_memory(cold, f"2026-11-{day}-0000{day}aa.md", body, type_="cold")
        os.utime(path, (1795000000 + day * 3600,) * 2)
    with open_index() as idx:
        idx.refresh(project)
    resumed = brief(project, "resume", session="s-dbt")
    asked = prompt_context(project, "the dbt target models are still failing", "s-dbt")
    assert "## Earlier sessions that match (cold memory)" in asked  # the debug situation
    assert "## Latest earlier session of this project (cold memory)" in resumed
    rule = "run dbt with --target dev"
    # The brief's rule line carries it (its closing recap names it by id); no cold block does.
    carrying = [x for x in (resumed + asked).lower().splitlines() if rule in x]
    assert len(carrying) == 1 and carrying[0].startswith("- [f-"), carrying
    rule_id = carrying[0][3:11]
    assert any(x.startswith("recap of the rules") and f"[{rule_id}]" in x
               for x in resumed.lower().splitlines())  # fmt: skip
    assert "orders model 28 joins" in resumed  # what the summaries add still comes
    # A new session's "where were we?" on its own: the summary's line comes, once.
    fresh = prompt_context(project, "where were we?", "s-new")
    assert fresh.lower().count("run dbt with --target dev") == 1


# --- subagents, forks, compaction -----------------------------------------------------------------
CRITICAL = (
    "Never run database migrations against production by hand. Why: a manual migration dropped "
    "the orders table in March."
)


def test_a_subagent_gets_the_critical_rules_and_only_those(project: Path) -> None:
    folder = paths.project_memory_dir(project)
    write_memory(folder, "feedback_migrations.md", CRITICAL, type_="feedback")
    write_memory(
        folder, "project_fastapi.md", "The checkout service moves to FastAPI.", type_="project"
    )
    brief(project)  # the session's start indexes the folder
    start = {
        "session_id": "s1",
        "transcript_path": "/nonexistent.jsonl",
        "cwd": str(project),
        "hook_event_name": "SubagentStart",
        "agent_id": "a1",
        "agent_type": "general-purpose",
    }
    out = hook_json(run_hook("SubagentStart", start).stdout)
    assert out is not None and out["hookSpecificOutput"]["hookEventName"] == "SubagentStart"
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "Never run database migrations" in text and "FastAPI" not in text
    assert text.startswith("<memory-context>") and text.endswith("</memory-context>\n")
    from memory_tool.recall.wake import SUBAGENT_BUDGET_TOKENS

    assert tokens.count(text) <= SUBAGENT_BUDGET_TOKENS
    (folder / "feedback_migrations.md").unlink()
    assert run_hook("SubagentStart", start).stdout == b""  # no critical rule: nothing


def test_a_fork_brings_back_the_hot_state_as_a_resume_does(project: Path) -> None:
    small = install_transcript("tiers_small", project)
    run_hook("Stop", payload("Stop", "tiers_small", project, small))
    forked = {**payload("SessionStart", "tiers_small", project, small), "source": "fork"}
    out = hook_json(run_hook("SessionStart", forked).stdout)
    assert out is not None
    assert inject.HOT_HEADING.strip() in out["hookSpecificOutput"]["additionalContext"]


def test_compaction_keeps_claude_codes_summary_in_the_hot_and_cold_tiers(
    project: Path, state: Path
) -> None:
    small = install_transcript("tiers_small", project)
    assert (
        run_hook("PreCompact", payload("PreCompact", "tiers_small", project, small)).stdout == b""
    )
    hot = state / "hot" / f"{SMALL_SID}.md"
    assert hot.is_file()  # the hot state was brought up to date before compaction
    summary = "<summary>We moved the invoices export to a background job (MARKER-C9).</summary>"
    post = payload("PostCompact", "tiers_small", project, small, compact_summary=summary)
    assert run_hook("PostCompact", post).stdout == b""
    assert "MARKER-C9" in hot.read_text() and "<summary>" not in hot.read_text()
    (cold,) = (state / "cold").rglob("*.md")
    text = cold.read_text()
    assert "## Compaction summary" in text and "MARKER-C9" in text


def test_after_compaction_room_memories_may_come_again(project: Path) -> None:
    room = paths.palace_dir("rooms") / "authentication"
    write_memory(room, "jwt.md", "Session tokens are JWTs signed with RS256.", type_="note")
    with open_index() as idx:
        idx.refresh(project)
    ask = "users get logged out after an hour, fix the refresh token flow"
    assert "RS256" in prompt_context(project, ask, "s-c")
    assert "RS256" not in prompt_context(project, ask, "s-c")  # no repeat within the session
    brief(project, "compact", session="s-c")  # the conversation is a summary now
    assert "RS256" in prompt_context(project, ask, "s-c")


def test_install_registers_the_new_events(claude_dir: Path) -> None:
    result = CliRunner().invoke(main, ["install"])
    assert result.exit_code == 0, result.output
    hooks = json.loads((claude_dir / "settings.json").read_text())["hooks"]
    for event in ("SubagentStart", "PreCompact", "PostCompact"):
        assert event in hooks
    (start,) = hooks["SessionStart"]
    assert "fork" in start["matcher"].split("|")


def test_a_session_that_did_nothing_with_the_handoff_leaves_it_for_the_next(
    project: Path,
) -> None:
    """Handed the handoff, a session that only says "morning", or only asks where things
    stand, did not take it up: the next session gets it. One that did something took it."""
    write_handoff(project, "# Handoff\n- Next: the exporter footer (MARKER-IDLE).\n")
    assert "MARKER-IDLE" in brief(project, session="s-idle")
    prompt_context(project, "morning", "s-idle")
    assert "MARKER-IDLE" in brief(project, session="s-asks")  # again: s-idle did nothing
    prompt_context(project, "where were we?", "s-asks")
    assert "MARKER-IDLE" in brief(project, session="s-after")  # s-asks only asked
    write_handoff(project, "# Handoff\n- Next: the importer (MARKER-WORK).\n", age_s=-5)
    assert "MARKER-WORK" in brief(project, session="s-works")
    prompt_context(project, "add a csv importer", "s-works")
    for ask in ("and the header row", "quote the commas", "skip blank lines"):
        prompt_context(project, ask, "s-works")  # more than two prompts: it has substance
    assert "MARKER-WORK" not in brief(project, session="s-later")


def test_a_question_about_last_time_gets_the_handoff_not_a_search_of_all_memory(
    project: Path,
) -> None:
    """ "Was anything left half-built last time?" is answered by this project's handoff; a
    search of all memory for its words brought other projects' lines under it (blind5)."""
    other = project.parent / "other-repo"
    other.mkdir()
    said = "Nothing half built ships; a flag gates it."
    added = CliRunner().invoke(main, ["add", said, "--room", "releases", "--cwd", str(other)])
    assert added.exit_code == 0, added.output
    question = "was anything left half-built last time?"
    got = prompt_context(project, question, "s-nohandoff")
    assert "half built ships" in got  # with nothing of its own, the search still answers
    write_handoff(project, "# Handoff\n- Next: the exporter footer (MARKER-LAST).\n")
    got = prompt_context(project, question, "s-handoff")
    assert "MARKER-LAST" in got and "half built ships" not in got
    # Given at the session's start, the handoff answers the question just the same.
    write_handoff(project, "# Handoff\n- Next: the exporter header (MARKER-START).\n", -5)
    assert "MARKER-START" in brief(project, session="s-start")
    assert "half built ships" not in prompt_context(project, question, "s-start")


def test_the_summary_of_the_session_that_wrote_the_handoff_does_not_come_with_it(
    project: Path,
) -> None:
    """Given the handoff, a "where were we" does not get the summary of the session that wrote
    it too (the same work twice in one request); a summary of another session still comes."""
    write_handoff(project, "# Handoff\n- Next: the gift emails (MARKER-GIFT).\n", 60)
    cold = paths.palace_dir("cold") / paths.project_key(project)
    body = "Task: gift subscriptions (SUMMARY-GIFT).\n\n## Files changed\n- thoughts/HANDOFF.md\n"
    write_memory(cold, "2026-11-29-abcdef12.md", body, type_="cold")
    with open_index() as idx:
        idx.refresh(project)
    got = prompt_context(project, "where were we?", "s-one")
    assert "MARKER-GIFT" in got and "SUMMARY-GIFT" not in got
    # Given at the start of the session, the same: the question does not bring the summary.
    write_handoff(project, "# Handoff\n- Next: the gift emails, v2 (MARKER-GIFT).\n", 30)
    assert "MARKER-GIFT" in brief(project, session="s-brief")  # the first session after it
    assert "SUMMARY-GIFT" not in prompt_context(project, "where were we?", "s-brief")
    body = "Task: the export footer (SUMMARY-OTHER).\n\n## Files changed\n- app/export.py\n"
    (cold / "2026-11-29-abcdef12.md").unlink()
    write_memory(cold, "2026-11-30-bcdef123.md", body, type_="cold")
    with open_index() as idx:
        idx.refresh(project)
    got = prompt_context(project, "where were we?", "s-two")
    assert "MARKER-GIFT" in got and "SUMMARY-OTHER" in got


def test_what_counts_as_working_on_a_plan() -> None:
    from memory_tool.tiers.open_work import plan_line, plan_part, related

    plan = "Next time: repack packs that are less than half live, then upload the new index."
    others = [
        "Task: packer. Blobs go into packs, one index per upload.",
        "Task: check reads every pack back and verifies the index.",
        "Task: prune drops unused packs and rewrites the index.",
    ]
    # "packs" and "index" are in every session of the tool: no sign of this work.
    assert not related(plan, others[1], others)
    assert related(plan, "Task: repack the half-live packs.", others)
    # A file named in both is the same work; without the others two shared words are needed.
    assert related("Finish lib/checkin/door_client.dart", "edited lib/checkin/door_client.dart")
    assert not related("Finish the QR check-in at the door", "Push goes through FCM; the door")
    assert plan_part("# Handoff\n## Done\n- a\n## Next\n- b (X)\n") == "- b (X)"
    assert plan_line("Task: x\nResult: Stopping here. Next time: the repack part.") != ""
    assert plan_line("Task: x\nResult: done, the tests pass.") == ""


def test_a_named_continuation_finds_the_recent_session_about_it_and_a_place_word_is_no_topic(
    project: Path,
) -> None:
    """blind25: "let's sort out the belgian fixtures problem from yesterday" after a session of
    other work gets the session about it, not nothing; blind23/26: "what was I doing on the
    shop yesterday?" names the project, so with nothing about "shop" it is "where were we?"."""
    cold = paths.palace_dir("cold") / paths.project_key(project)
    write_memory(cold, "2026-11-28-bbbb0001.md", "Task: the belgian fixtures come in with the "
                 "wrong kickoff times (FIXT-9).\n\n## Stats\n3 prompts, 9 tool calls, 1 files "
                 "edited", type_="cold")  # fmt: skip
    write_memory(cold, "2026-11-29-bbbb0002.md", "Task: scouting report layout (LAYOUT-2).\n\n"
                 "## Stats\n3 prompts, 8 tool calls, 1 files edited", type_="cold")  # fmt: skip
    with open_index() as idx:
        idx.refresh(project)
    text = prompt_context(
        project, "let's sort out the belgian fixtures problem from yesterday", "s-named"
    )
    assert "FIXT-9" in text and inject.COLD_ABOUT_HEADING.strip() in text
    assert "LAYOUT-2" not in text
    text = prompt_context(project, "morning, what was i doing on the shop yesterday?", "s-shop")
    assert "LAYOUT-2" in text  # the latest session, as for "where were we?"


def test_a_handoff_at_the_root_of_the_tree_counts_when_thoughts_has_none(project: Path) -> None:
    # blind25: asked to "write it down so i can pick it up tomorrow", Claude wrote HANDOFF.md
    # at the repository's root; nobody read it.
    (project / "HANDOFF.md").write_text("# Handoff\n- Next: dedupe rescheduled matches (ROOT-4).\n")
    assert "ROOT-4" in prompt_context(project, "where were we?", "s-root")
    write_handoff(project, "# Handoff\n- Next: the exporter (THOUGHTS-5).\n")
    text = prompt_context(project, "where were we?", "s-root-2")
    assert "THOUGHTS-5" in text and "ROOT-4" not in text  # thoughts/ comes first
