"""Tool-level recall (issue 24, item 2): the memories of the files Claude touches (PostToolUse),
of a failed command's error (PostToolUseFailure), an edit a tied rule holds back once
(PreToolUse). Hooks run through the real front end (``dispatch.run``, what the hook script and
the server both call) against real memory files and a real index in a sandboxed HOME; a few run
as separate processes, as Claude Code runs them."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import run_hook, start_payload, write_memory

from memory_tool.base import paths, tokens
from memory_tool.base.config import TOOL_EVENT_BUDGET_TOKENS, TOOL_SESSION_BUDGET_TOKENS
from memory_tool.recall.seen import seen_ids, session_state
from memory_tool.runtime import dispatch
from memory_tool.runtime.tool_use import FENCE_OPEN
from memory_tool.store.globs import literal_tail, matches, read_globs
from memory_tool.store.index import open_index
from memory_tool.tiers.failure import error_terms

GENERATED = "Generated from schema.graphql by codegen: never edit by hand, run make codegen."
DEADLOCK_FIX = (
    "Gotcha: psycopg DeadlockDetected in the migrations comes from two workers running "
    "0042 at once; run migrations with --lock."
)


def room(name: str) -> Path:
    return paths.state_root() / "rooms" / name


def call(event: str, data: dict[str, Any]) -> dict[str, Any] | None:
    out = io.StringIO()
    assert dispatch.run(event, stdin=io.BytesIO(json.dumps(data).encode()), stdout=out) == 0
    text = out.getvalue().strip()
    return json.loads(text) if text else None


def context_of(answer: dict[str, Any] | None) -> str:
    return str(answer["hookSpecificOutput"]["additionalContext"]) if answer else ""


def tool(
    project: Path,
    event: str,
    name: str,
    tool_input: dict[str, Any],
    *,
    session: str = "s1",
    **extra: Any,
) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": "/nonexistent.jsonl",
        "cwd": str(project),
        "hook_event_name": event,
        "tool_name": name,
        "tool_input": tool_input,
        "tool_use_id": f"toolu_{time.monotonic_ns()}",
        **extra,
    }


def read(project: Path, rel: str, session: str = "s1", **extra: Any) -> str:
    data = tool(project, "PostToolUse", "Read", {"file_path": str(project / rel)}, session=session)
    data.update(extra)
    return context_of(call("PostToolUse", data))


def index(project: Path) -> None:
    with open_index() as idx:
        idx.refresh(project)


def memory_dir(project: Path) -> Path:
    return paths.project_memory_dir(project)


# --- globs ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("glob", "rel", "hit"),
    [
        ("db/migrations/*.py", "db/migrations/0042.py", True),
        ("db/migrations/*.py", "db/migrations/old/0001.py", False),
        ("db/**/*.py", "db/migrations/old/0001.py", True),
        ("db/**/*.py", "db/x.py", True),
        ("db/migrations/", "db/migrations/old/0001.py", True),
        ("schema.prisma", "api/prisma/schema.prisma", True),
        ("*.generated.ts", "web/src/api.generated.ts", True),
        ("*.generated.ts", "web/src/api.ts", False),
        ("src/api/[ab].py", "src/api/a.py", True),
        ("src/api/[!ab].py", "src/api/a.py", False),
        ("db/migrations/*.py", None, False),  # outside the working tree: relative globs miss
    ],
)
def test_globs_match_like_gitignore(glob: str, rel: str | None, hit: bool) -> None:
    assert matches(glob, rel, "/elsewhere/" + (rel or "x.py")) is hit
    if hit:  # the cheap test that runs first never rules out a match
        assert rel is not None and rel.endswith(literal_tail(glob))


def test_absolute_globs_match_absolute_paths_and_bad_values_are_dropped() -> None:
    assert matches("/srv/infra/*.tf", None, "/srv/infra/main.tf")
    assert literal_tail("/srv/infra/*.tf") == ".tf" and literal_tail("db/migrations/") == ""
    assert literal_tail("schema.prisma") == "schema.prisma" and literal_tail("db/**") == ""
    assert not matches("/srv/infra/*.tf", "srv/infra/main.tf", "/home/x/srv/infra/main.tf")
    assert read_globs(["./a/*.py", 3, "", None, "a/*.py", "b\\c.py"]) == ["a/*.py", "b/c.py"]
    assert read_globs("one.py") == ["one.py"]
    assert read_globs({"a": 1}) == []
    assert len(read_globs([f"f{i}.py" for i in range(100)])) == 20


# --- PostToolUse: tied memories --------------------------------------------------------------
def test_reading_a_tied_file_brings_its_memory_once_and_nothing_for_other_files(
    project: Path,
) -> None:
    write_memory(
        memory_dir(project), "feedback_codegen.md", GENERATED, type_="feedback",
        paths=["src/api/*.generated.ts"],
    )  # fmt: skip
    write_memory(memory_dir(project), "project_misc.md", "The CLI is built with click.",
                 type_="project")  # fmt: skip
    index(project)
    text = read(project, "src/api/client.generated.ts")
    assert text.startswith(FENCE_OPEN) and "never edit by hand" in text
    assert "click" not in text
    assert read(project, "src/api/client.generated.ts") == ""  # once per session
    assert read(project, "src/api/other.generated.ts") == ""  # the same memory: once
    assert "never edit by hand" in read(project, "src/api/client.generated.ts", session="s2")
    assert read(project, "README.md", session="s3") == ""  # nothing tied, no room


def test_a_memory_the_brief_gave_is_not_repeated(project: Path) -> None:
    write_memory(
        memory_dir(project), "feedback_codegen.md", GENERATED, type_="feedback",
        paths=["src/api/*.generated.ts"],
    )  # fmt: skip
    brief = call("SessionStart", start_payload(project))  # indexes and gives the rule (L2)
    assert "never edit by hand" in context_of(brief)
    assert read(project, "src/api/client.generated.ts") == ""


def test_a_grep_or_glob_result_names_files_and_an_edit_counts_too(project: Path) -> None:
    write_memory(
        room("database"), "deadlock.md", DEADLOCK_FIX, paths=["db/migrations/*.py"],
    )  # fmt: skip
    index(project)
    found = tool(project, "PostToolUse", "Grep", {"pattern": "lock"}, session="g1")
    found["tool_response"] = {"mode": "files_with_matches", "filenames": [
        str(project / "README.md"), str(project / "db/migrations/0042.py")]}  # fmt: skip
    assert "DeadlockDetected" in context_of(call("PostToolUse", found))
    edit = tool(
        project, "PostToolUse", "Edit",
        {"file_path": str(project / "db/migrations/0042.py"), "old_string": "a",
         "new_string": "b"}, session="g2",
    )  # fmt: skip
    assert "DeadlockDetected" in context_of(call("PostToolUse", edit))


def test_a_global_room_memory_tied_to_a_path_and_another_projects_stays_home(
    project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "work" / "other"
    (other / ".git").mkdir(parents=True)
    write_memory(
        memory_dir(other), "feedback_gen.md", "Never edit gen/ by hand: it is generated.",
        type_="feedback", paths=["gen/*.py"],
    )  # fmt: skip
    index(other)
    index(project)
    assert read(project, "gen/x.py") == ""  # another project's own memory stays with it
    assert "Never edit gen/" in read(other, "gen/x.py")


# --- PostToolUse: the file's room ------------------------------------------------------------
def test_a_file_brings_its_rooms_memories_once_per_room_and_not_after_a_prompt_gave_it(
    project: Path,
) -> None:
    write_memory(room("database"), "pool.md", "Postgres pool size is 20 per worker.")
    write_memory(room("database"), "alembic.md", "Migrations use alembic; never edit applied ones.")
    index(project)
    text = read(project, "db/migrations/0042_add_index.py")
    assert "Memories about database" in text
    assert "alembic" in text
    assert read(project, "db/models/orders.py") == ""  # the room was given
    prompt = {
        "session_id": "p1", "transcript_path": "/nonexistent.jsonl", "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "the postgres migration fails with a lock timeout on the orders table",
    }  # fmt: skip
    assert "alembic" in context_of(call("UserPromptSubmit", prompt))
    assert read(project, "db/migrations/0042_add_index.py", session="p1") == ""


def test_a_path_outside_every_project_brings_nothing(project: Path, tmp_path: Path) -> None:
    write_memory(room("database"), "pool.md", "Postgres pool size is 20 per worker.")
    index(project)
    outside = tmp_path / "elsewhere" / "db" / "migrations" / "0042.py"
    data = tool(project, "PostToolUse", "Read", {"file_path": str(outside)})
    assert call("PostToolUse", data) is None
    data = tool(project, "PostToolUse", "Read", {"file_path": "/etc/../etc/passwd"})
    assert call("PostToolUse", data) is None


# --- budgets ---------------------------------------------------------------------------------
def test_one_event_and_one_session_stay_within_their_budgets(project: Path) -> None:
    for i in range(40):
        write_memory(
            memory_dir(project), f"project_mod{i}.md",
            f"Module {i} notes: " + " ".join(f"word{i}x{j}" for j in range(40)) + ".",
            type_="project", paths=[f"src/mod{i}/*.py"],
        )  # fmt: skip
    index(project)
    total = 0
    given = 0
    for i in range(40):
        text = read(project, f"src/mod{i}/a.py", session="b1")
        if text:
            n = tokens.count(text)
            assert n <= TOOL_EVENT_BUDGET_TOKENS
            total += n
            given += 1
    assert given >= 5
    assert total <= TOOL_SESSION_BUDGET_TOKENS
    assert session_state("b1")["tool_tokens"] == total  # the recorded spend is exact
    assert read(project, "src/mod39/a.py", session="b1") == ""


# --- PostToolUseFailure ----------------------------------------------------------------------
def fail(project: Path, command: str, error: str, session: str = "f1") -> str:
    data = tool(project, "PostToolUseFailure", "Bash", {"command": command}, session=session)
    data["error"] = error
    return context_of(call("PostToolUseFailure", data))


DEADLOCK_ERROR = (
    "Exit code 1\n============ FAILURES ============\n"
    "E   psycopg.errors.DeadlockDetected: deadlock detected\n"
    "DETAIL:  Process 4121 waits for ShareLock on transaction 9321\n1 failed in 2.31s\n"
)


def test_error_terms_keep_what_names_the_failure() -> None:
    terms = error_terms(DEADLOCK_ERROR)
    assert "deadlockdetected" in terms and "psycopg.errors.deadlockdetected" in terms
    assert "error" not in terms and "failed" not in terms and "exit" not in terms
    assert error_terms("Exit code 1\nerror: failed\nTraceback (most recent call last):") == []
    assert "enoent" in error_terms("Exit code 2\nError: ENOENT: no such file, open 'x'")


def test_a_failed_command_brings_the_gotcha_and_the_past_fix_that_name_its_error(
    project: Path,
) -> None:
    write_memory(memory_dir(project), "feedback_deadlock.md", DEADLOCK_FIX, type_="feedback")
    cold = paths.palace_dir("cold") / paths.project_key(project)
    cold.mkdir(parents=True)
    (cold / "2026-11-20-abcd1234.md").write_text(
        "---\nname: session-2026-11-20-abcd1234\ncreated: 2026-11-20\n---\n"
        "Task: make the migrations pass\n\n## Commands that mattered\n"
        "- `pytest tests/db`: failed 2x (psycopg.errors.DeadlockDetected: deadlock detected), "
        "passed later as `pytest tests/db -p no:randomly`\n- `make lint`: ok\n",
        encoding="utf-8",
    )
    index(project)
    text = fail(project, "pytest tests/db", DEADLOCK_ERROR)
    assert "--lock" in text  # the gotcha
    assert "passed later as" in text and "make lint" not in text  # the matching cold line
    assert tokens.count(text) <= TOOL_EVENT_BUDGET_TOKENS
    assert fail(project, "pytest tests/db", DEADLOCK_ERROR) == ""  # once per session


def test_a_failure_nothing_names_brings_nothing(project: Path) -> None:
    write_memory(
        memory_dir(project), "feedback_errors.md",
        "Errors are logged; a failed test run is retried once.", type_="feedback",
    )  # fmt: skip
    index(project)
    assert fail(project, "make", "Exit code 2\nmake: *** [all] Error 1\n") == ""
    assert fail(project, "pytest", "Exit code 1\nFAILED tests/test_x.py::test_y\n") == ""


def test_a_huge_output_is_read_by_its_head_and_tail(project: Path) -> None:
    write_memory(memory_dir(project), "feedback_deadlock.md", DEADLOCK_FIX, type_="feedback")
    index(project)
    noise = "".join(f"line {i}: RandomNoiseToken{i} happened\n" for i in range(300_000))
    start = time.monotonic()
    text = fail(project, "pytest", "Exit code 1\n" + noise + DEADLOCK_ERROR, session="huge")
    assert time.monotonic() - start < 5
    assert "--lock" in text  # the error at the tail still counts


# --- PreToolUse: a tied rule the edit would break ---------------------------------------------
def pre_edit(project: Path, rel: str, session: str = "e1") -> dict[str, Any] | None:
    data = tool(
        project, "PreToolUse", "Edit",
        {"file_path": str(project / rel), "old_string": "a", "new_string": "b"}, session=session,
    )  # fmt: skip
    return call("PreToolUse", data)


def test_an_edit_of_a_generated_file_is_held_back_once_with_the_rule(project: Path) -> None:
    write_memory(
        memory_dir(project), "feedback_codegen.md", GENERATED, type_="feedback",
        paths=["src/api/*.generated.ts"],
    )  # fmt: skip
    write_memory(
        memory_dir(project), "feedback_mig_tests.md",
        "Always run the migration tests after changing a migration.", type_="feedback",
        paths=["db/migrations/*.py"],
    )  # fmt: skip
    index(project)
    held = pre_edit(project, "src/api/client.generated.ts")
    assert held is not None
    out = held["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "deny"
    assert "never edit by hand" in out["permissionDecisionReason"]
    assert "src/api/client.generated.ts" in out["permissionDecisionReason"]
    assert pre_edit(project, "src/api/client.generated.ts") is None  # once: the retry goes
    assert pre_edit(project, "db/migrations/0042.py") is None  # a rule the edit does not break
    assert pre_edit(project, "src/app.ts") is None


# --- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "body",
    [
        {"tool_name": "Read", "tool_input": "not an object"},
        {"tool_name": "Read", "tool_input": {"file_path": 42}},
        {"tool_name": "Read", "tool_input": {"file_path": "x" * 10_000}},
        {"tool_name": "Glob", "tool_input": {}, "tool_response": "a string"},
        {"tool_name": "Glob", "tool_input": {}, "tool_response": {"filenames": [1, None, {}]}},
        {"tool_name": ["Read"], "tool_input": {"file_path": "/x"}},
        {"tool_name": "Bash", "error": {"not": "text"}},
        {"tool_name": "Read", "tool_input": {"file_path": "\x00/etc"}},
    ],
)
def test_malformed_tool_bodies_answer_nothing_and_log_nothing(
    project: Path, body: dict[str, Any]
) -> None:
    write_memory(room("database"), "pool.md", "Postgres pool size is 20 per worker.")
    index(project)
    data = {"session_id": "m1", "cwd": str(project), **body}
    for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        assert call(event, {**data, "hook_event_name": event}) is None
    log = paths.log_file()
    assert not log.exists() or log.read_text() == ""


def test_the_hook_script_answers_a_tool_event_as_a_process(project: Path) -> None:
    write_memory(
        memory_dir(project), "feedback_codegen.md", GENERATED, type_="feedback",
        paths=["src/api/*.generated.ts"],
    )  # fmt: skip
    index(project)
    data = tool(project, "PostToolUse", "Read",
                {"file_path": str(project / "src/api/x.generated.ts")})  # fmt: skip
    proc = run_hook("PostToolUse", data, env={"MEMORY_TOOL_SERVER": "0"})
    assert proc.returncode == 0 and proc.stderr == b""
    answer = json.loads(proc.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "never edit by hand" in answer["hookSpecificOutput"]["additionalContext"]
    assert seen_ids("s1")


def test_a_capture_can_be_tied_to_the_files_its_session_edited(project: Path) -> None:
    from memory_tool.tiers.digest import edited_globs, new_state
    from memory_tool.tiers.hot import save_state

    state = new_state("cap1", str(project), "/nonexistent.jsonl")
    state["files"] = [str(project / "db" / "m.py"), "/elsewhere/x.py", str(project / "a.py")]
    save_state(state)
    assert edited_globs("cap1", str(project)) == ["db/m.py", "a.py"]
    assert edited_globs("nobody", str(project)) == []


def test_a_files_path_words_and_up_to_two_rooms(project: Path) -> None:
    from memory_tool.recall.touch import file_rooms, path_words
    from memory_tool.store.rooms import compiled_rooms

    assert path_words("web/src/components/LoginForm.tsx") == "web components Login Form"
    assert path_words("src/utils/__init__.py") == ""
    rooms = compiled_rooms()
    assert file_rooms("web/src/components/LoginForm.tsx", rooms) == ["frontend", "authentication"]
    assert file_rooms("db/migrations/0042_orders.py", rooms) == ["database"]
    assert file_rooms("src/utils/strings.py", rooms) == []


def test_parallel_tool_hooks_of_one_turn_give_a_memory_once(project: Path) -> None:
    """Claude reads several files at once and their hooks run in parallel: the session's lock
    makes exactly one of them give the tied memory."""
    import os
    import subprocess
    import sys

    from helpers import HOOK_SCRIPT

    write_memory(
        memory_dir(project), "project_api.md", "The API client lives in src/api (KPARALLEL).",
        type_="reference", paths=["src/api/"],
    )  # fmt: skip
    index(project)
    procs = []
    for i in range(8):
        target = {"file_path": str(project / f"src/api/f{i}.ts")}
        data = tool(project, "PostToolUse", "Read", target, session="par")
        proc = subprocess.Popen(
            [sys.executable, str(HOOK_SCRIPT), "PostToolUse"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "MEMORY_TOOL_SERVER": "0"},
        )  # fmt: skip
        procs.append((proc, json.dumps(data).encode()))
    outputs = [p.communicate(body, timeout=60)[0].decode() for p, body in procs]
    assert sum(out.count("KPARALLEL") for out in outputs) == 1


def test_a_dotted_name_of_plain_words_finds_the_memory_that_names_it(project: Path) -> None:
    """``numpy.dtype``: neither part is distinctive alone, the dotted name is (found by the
    blind set of bench/tool_recall_bench.py: the search got no words from it)."""
    write_memory(
        memory_dir(project), "feedback_abi.md",
        "A ValueError numpy.dtype size changed means a wheel built for numpy 1.x; pin numpy<2.",
        type_="feedback",
    )  # fmt: skip
    index(project)
    error = "Exit code 1\nValueError: numpy.dtype size changed, may indicate binary incompatibility"
    assert "pin numpy<2" in fail(project, "python -c 'import pandas'", error)
    assert fail(project, "python x.py", "Exit code 1\nValueError: numpy failed", "f2") == ""


def test_add_path_ties_a_memory_to_files(project: Path) -> None:
    from click.testing import CliRunner

    from memory_tool.cli.main import main

    runner = CliRunner()
    args = ["add", "--cwd", str(project), "--type", "feedback", "--path", "src/api/*.generated.ts",
            "--path", "schema.graphql", GENERATED]  # fmt: skip
    res = runner.invoke(main, args)
    assert res.exit_code == 0, res.output
    saved = next(memory_dir(project).glob("feedback_*.md")).read_text()
    assert "src/api/*.generated.ts" in saved and "schema.graphql" in saved
    assert "never edit by hand" in read(project, "api/schema.graphql")
    bad = runner.invoke(main, ["add", "--cwd", str(project), "--path", " ", "x y z"])
    assert bad.exit_code != 0 and "--path" in bad.output


def test_a_subagent_has_its_own_record_of_what_tool_recall_gave(project: Path) -> None:
    """A subagent's hooks carry the parent's session id and their own agent id: the memory the
    main session got is not in the subagent's context, so it gets it too, once."""
    write_memory(
        memory_dir(project), "feedback_codegen.md", GENERATED, type_="feedback",
        paths=["src/api/*.generated.ts"],
    )  # fmt: skip
    index(project)
    assert "never edit by hand" in read(project, "src/api/a.generated.ts")
    assert "never edit by hand" in read(project, "src/api/a.generated.ts", agent_id="sub1")
    assert read(project, "src/api/a.generated.ts", agent_id="sub1") == ""
    assert read(project, "src/api/a.generated.ts") == ""
