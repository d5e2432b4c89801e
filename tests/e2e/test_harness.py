"""Proof that the harness drives the real Claude Code binary, and the client facts we rely on.

Each test runs `claude -p` (about 1 s per run) in a fresh HOME against the stand-in API, with
hooks written by the test itself into HOME/.claude/settings.json.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from claude_sandbox import SAMPLES_DIR, Sandbox, project_key, read_jsonl

pytestmark = pytest.mark.e2e


def _sample_keys(name: str) -> set[str]:
    return set(json.loads((SAMPLES_DIR / f"{name}.json").read_text(encoding="utf-8")))


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, (
        f"claude exited {res.returncode}\nstdout: {res.stdout}\n{res.stderr}"
    )


def test_session_start_and_prompt_context_reach_the_model(sandbox: Sandbox) -> None:
    sandbox.add_recording_hook(
        "SessionStart",
        {
            "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": "MARKER-123",
            }
        },
    )
    sandbox.add_recording_hook(
        "UserPromptSubmit",
        {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": "MARKER-456",
            }
        },
    )
    sandbox.add_recording_hook("SessionEnd")

    res = sandbox.run_claude("hello there")

    _ok(res)
    assert res.stdout.strip() == "ok"
    first = sandbox.api.main_requests()[0]
    assert "MARKER-123" in first.messages_text()
    assert "MARKER-456" in first.messages_text()
    assert "hello there" in first.messages_text()
    # The hook inputs still have every field the recorded samples have (catches client drift).
    (start,) = sandbox.hook_inputs("SessionStart")
    (prompt,) = sandbox.hook_inputs("UserPromptSubmit")
    (end,) = sandbox.hook_inputs("SessionEnd")
    assert start["source"] == "startup"
    assert prompt["prompt"] == "hello there"
    assert _sample_keys("session_start_startup") <= set(start)
    assert _sample_keys("user_prompt_submit") <= set(prompt)
    assert _sample_keys("session_end") <= set(end)
    assert start["cwd"] == str(sandbox.project.resolve())
    assert Path(start["transcript_path"]).parent == sandbox.project_dir()


def test_stop_hook_block_makes_claude_continue_once(sandbox: Sandbox) -> None:
    sandbox.add_recording_hook("Stop", {"decision": "block", "reason": "REASON-XYZ"}, once=True)
    sandbox.api.add_text("first answer")
    sandbox.api.add_text("second answer")

    res = sandbox.run_claude("do the thing")

    _ok(res)
    assert res.stdout.strip() == "second answer"
    main = sandbox.api.main_requests()
    assert len(main) == 2
    assert "REASON-XYZ" not in main[0].text()
    assert "REASON-XYZ" in main[1].messages_text()
    stops = sandbox.hook_inputs("Stop")
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    assert [s["last_assistant_message"] for s in stops] == ["first answer", "second answer"]
    assert _sample_keys("stop") <= set(stops[0])


def test_tool_calls_do_real_work_and_leave_a_transcript(sandbox: Sandbox) -> None:
    target = sandbox.project / "notes" / "hello.txt"
    sandbox.api.add_tool_use("Write", {"file_path": str(target), "content": "hi from Write\n"})
    bash_id = sandbox.api.add_tool_use(
        "Bash", {"command": "cat notes/hello.txt > copy.txt && echo BASH-RAN", "description": "t"}
    )
    sandbox.api.add_text("all done")
    session_id = str(uuid.uuid4())

    res = sandbox.run_claude("write a file", extra_args=["--session-id", session_id])

    _ok(res)
    assert res.stdout.strip() == "all done"
    assert target.read_text() == "hi from Write\n"
    assert (sandbox.project / "copy.txt").read_text() == "hi from Write\n"
    results = [
        block
        for block in sandbox.api.main_requests()[-1].body["messages"][-1]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert [r["tool_use_id"] for r in results] == [bash_id]
    assert "BASH-RAN" in json.dumps(results[0]["content"])
    assert not results[0].get("is_error")

    transcript = sandbox.project_dir() / f"{session_id}.jsonl"
    assert transcript.is_file()
    lines = read_jsonl(transcript)
    tools_used = [
        block["name"]
        for line in lines
        if line.get("type") == "assistant"
        for block in line["message"]["content"]
        if block.get("type") == "tool_use"
    ]
    assert tools_used == ["Write", "Bash"]
    assert {line.get("sessionId") for line in lines if "sessionId" in line} == {session_id}


def test_resume_and_fork_fire_session_start_with_their_source(sandbox: Sandbox) -> None:
    sandbox.add_recording_hook("SessionStart")
    _ok(sandbox.run_claude("first"))
    session_id = sandbox.hook_inputs("SessionStart")[0]["session_id"]

    _ok(sandbox.run_claude("second", extra_args=["--resume", session_id]))
    _ok(sandbox.run_claude("third", extra_args=["--resume", session_id, "--fork-session"]))

    starts = sandbox.hook_inputs("SessionStart")
    assert [s["source"] for s in starts] == ["startup", "resume", "fork"]
    assert starts[1]["session_id"] == session_id
    assert starts[2]["session_id"] != session_id
    # The resumed request carries the earlier turns.
    assert "first" in sandbox.api.main_requests()[1].messages_text()


def test_compact_prompt_compacts_and_fires_session_start_compact(sandbox: Sandbox) -> None:
    sandbox.add_recording_hook(
        "SessionStart",
        {
            "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": "RE-INJECTED-AFTER-COMPACT",
            }
        },
        matcher="compact",
    )
    sandbox.add_recording_hook("SessionStart", matcher="startup|resume")
    sandbox.add_recording_hook("PreCompact")
    _ok(sandbox.run_claude("first"))
    session_id = sandbox.hook_inputs("SessionStart")[0]["session_id"]
    sandbox.api.add_text("<summary>SUMMARY-TEXT-42</summary>")

    _ok(sandbox.run_claude("/compact", extra_args=["--resume", session_id]))
    _ok(sandbox.run_claude("after", extra_args=["--resume", session_id]))

    assert [r.is_compaction for r in sandbox.api.main_requests()] == [False, True, False]
    assert [s["source"] for s in sandbox.hook_inputs("SessionStart")] == [
        "startup",
        "resume",
        "compact",
        "resume",
    ]
    assert sandbox.hook_inputs("PreCompact")[0]["trigger"] == "manual"
    after = sandbox.api.main_requests()[-1].messages_text()
    assert "SUMMARY-TEXT-42" in after
    assert "RE-INJECTED-AFTER-COMPACT" in after


def test_auto_compaction_mid_turn_fires_session_start_compact(sandbox: Sandbox) -> None:
    sandbox.add_recording_hook("SessionStart")
    sandbox.add_recording_hook("PreCompact")
    sandbox.api.add_tool_use("Bash", {"command": "echo one", "description": "t"})
    # The second turn claims a prompt far over the --autocompact window. (Claiming it on the
    # first turn makes Claude Code think its fixed prefix is too big and skip compaction.)
    sandbox.api.add_tool_use(
        "Bash", {"command": "echo two", "description": "t"}, input_tokens=150_000
    )
    sandbox.api.add_text("<summary>AUTO-SUMMARY-7</summary>")
    sandbox.api.add_text("finished")

    res = sandbox.run_claude("go", extra_args=["--autocompact", "100000"])

    _ok(res)
    assert res.stdout.strip() == "finished"
    assert [r.is_compaction for r in sandbox.api.main_requests()] == [False, False, True, False]
    assert [p["trigger"] for p in sandbox.hook_inputs("PreCompact")] == ["auto"]
    assert [s["source"] for s in sandbox.hook_inputs("SessionStart")] == ["startup", "compact"]
    assert "AUTO-SUMMARY-7" in sandbox.api.main_requests()[-1].messages_text()


def test_project_key_matches_claude_for_long_and_unicode_paths(sandbox: Sandbox) -> None:
    cwd = sandbox.root / ("deep " * 30) / "Ünï 😀 dir.v2"
    cwd.mkdir(parents=True)
    sandbox.add_recording_hook("SessionStart")

    _ok(sandbox.run_claude("hi", cwd=cwd))

    (start,) = sandbox.hook_inputs("SessionStart")
    key = Path(start["transcript_path"]).parent.name
    assert len(key) > 200
    assert key == project_key(str(cwd.resolve()))


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_auto_memory_folder_is_keyed_to_the_main_repository_root(sandbox: Sandbox) -> None:
    repo = sandbox.root / "My Repo.v2"
    sub = repo / "sub dir"
    sub.mkdir(parents=True)
    worktree = sandbox.root / "wt"
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    (repo / "f").write_text("x")
    subprocess.run([*git, "add", "f"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=repo, check=True)
    subprocess.run([*git, "worktree", "add", "-q", str(worktree), "-b", "w"], cwd=repo, check=True)
    memory = sandbox.config_dir / "projects" / project_key(str(repo.resolve())) / "memory"

    for cwd in (sub, worktree):
        sandbox.api.reset()
        _ok(sandbox.run_claude("hi", cwd=cwd))
        # The auto-memory folder is named in the system prompt; transcripts stay per launch dir.
        assert f"{memory}/" in sandbox.api.main_requests()[0].text()
        assert sandbox.transcripts(cwd), f"no transcript under {sandbox.project_dir(cwd)}"


def test_nested_bare_claude_from_a_hook_runs_no_hooks_and_saves_no_session(
    sandbox: Sandbox,
) -> None:
    sandbox.add_recording_hook("SessionStart")
    nested = [
        str(sandbox.claude_bin),
        "-p",
        "NESTED-SUMMARY-PROMPT",
        "--bare",
        "--no-session-persistence",
        "--tools",
        "",
    ]
    out = sandbox.root / "nested-out.txt"
    sandbox.add_hook(
        "SessionEnd", f"{shlex.join(nested)} < /dev/null > {shlex.quote(str(out))} 2>&1", timeout=30
    )

    _ok(sandbox.run_claude("hello"))

    assert out.read_text().strip() == "ok"
    nested_reqs = [r for r in sandbox.api.requests if "NESTED-SUMMARY-PROMPT" in r.text()]
    assert len(nested_reqs) == 1
    assert not nested_reqs[0].main  # offered no tools, so it never takes a scripted answer
    parent_session = sandbox.api.main_requests()[0].session_id
    assert nested_reqs[0].session_id not in (None, parent_session)
    # Only the parent ran the SessionStart hook, and only the parent left a transcript.
    assert len(sandbox.hook_inputs("SessionStart")) == 1
    assert [p.stem for p in sandbox.transcripts()] == [parent_session]
