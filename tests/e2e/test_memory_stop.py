"""Stop and SessionEnd through the real Claude Code client: the handoff block-once rule, the hot
file and the cold summary a session leaves behind, and what the next session gets from them."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
from claude_sandbox import (
    Sandbox,
    hooks_log,
    injected_by,
    memory_tool,
    run_claude_with_memory,
    state_dir,
)

pytestmark = [pytest.mark.e2e]

BLOCK_REASON_START = "memory-tool: this session did substantial work"
# handoff.min_file_edits: a session that edits this many files is substantial.
MIN_FILE_EDITS = 5


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, f"claude exited {res.returncode}\n{res.stdout}\n{res.stderr}"


def script_substantial_work(box: Sandbox, topic: str = "widget") -> list[Path]:
    """Queue a session that edits MIN_FILE_EDITS files with Write and runs Bash."""
    files = [box.project / "src" / f"{topic}_{i}.py" for i in range(MIN_FILE_EDITS)]
    for i, path in enumerate(files):
        box.api.add_tool_use(
            "Write", {"file_path": str(path), "content": f"{topic.upper()} = {i}\n"}
        )
    box.api.add_tool_use("Bash", {"command": "ls src | wc -l", "description": "count modules"})
    return files


def cold_summaries(box: Sandbox) -> list[Path]:
    return sorted((state_dir(box) / "cold").rglob("*.md"))


def test_substantial_session_is_asked_for_a_handoff_once_then_ends(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    sandbox.add_recording_hook("Stop")
    sandbox.add_recording_hook("SessionEnd")
    files = script_substantial_work(sandbox)
    sandbox.api.add_text("first answer")
    sandbox.api.add_text("second answer")
    session_id = str(uuid.uuid4())

    res = run_claude_with_memory(
        sandbox, "Build the widget modules.", extra_args=["--session-id", session_id]
    )

    _ok(res)
    assert res.stdout.strip() == "second answer"
    assert all(p.is_file() for p in files)
    main = sandbox.api.main_requests()
    assert len(main) == MIN_FILE_EDITS + 3  # prompt, 6 tool results, then the block's reason
    assert not any(BLOCK_REASON_START in r.text() for r in main[:-1])
    last = main[-1].messages_text()
    assert BLOCK_REASON_START in last
    assert f"({MIN_FILE_EDITS} files edited, {MIN_FILE_EDITS + 1} tool calls)" in last
    assert "thoughts/HANDOFF.md" in last
    stops = sandbox.hook_inputs("Stop")
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    assert len(sandbox.hook_inputs("SessionEnd")) == 1
    # What the session leaves behind: its hot file and its cold summary.
    hot = state_dir(sandbox) / "hot" / f"{session_id}.md"
    assert hot.is_file()
    assert "Build the widget modules." in hot.read_text(encoding="utf-8")
    (cold,) = cold_summaries(sandbox)
    assert session_id[:8] in cold.name
    assert "widget" in cold.read_text(encoding="utf-8").lower()
    assert hooks_log(sandbox) == ""


def test_a_session_that_writes_its_handoff_is_not_blocked(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    sandbox.add_recording_hook("Stop")
    script_substantial_work(sandbox)
    handoff = sandbox.project / "thoughts" / "HANDOFF.md"
    sandbox.api.add_tool_use("Write", {"file_path": str(handoff), "content": "# Handoff\nDone.\n"})
    sandbox.api.add_text("all done")

    res = run_claude_with_memory(sandbox, "Build the widget modules.")

    _ok(res)
    assert res.stdout.strip() == "all done"
    assert not any(BLOCK_REASON_START in r.text() for r in sandbox.api.main_requests())
    assert [s["stop_hook_active"] for s in sandbox.hook_inputs("Stop")] == [False]


def test_a_short_session_is_not_blocked(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    sandbox.api.add_tool_use("Bash", {"command": "echo hi", "description": "t"})
    sandbox.api.add_text("quick answer")

    res = run_claude_with_memory(sandbox, "Say hi.")

    _ok(res)
    assert res.stdout.strip() == "quick answer"
    assert len(sandbox.api.main_requests()) == 2
    assert not any(BLOCK_REASON_START in r.text() for r in sandbox.api.main_requests())


def test_resume_brings_back_the_sessions_hot_state(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    script_substantial_work(sandbox, topic="gizmo")
    sandbox.api.add_text("first answer")
    session_id = str(uuid.uuid4())
    _ok(
        run_claude_with_memory(
            sandbox, "Build the gizmo modules.", extra_args=["--session-id", session_id]
        )
    )
    sandbox.api.reset()

    _ok(run_claude_with_memory(sandbox, "Where were we?", extra_args=["--resume", session_id]))

    resumed = sandbox.api.main_requests()[0]
    latest = injected_by(resumed, "SessionStart")[-1]
    assert "## This session so far (hot memory)" in latest
    assert "gizmo" in latest.lower()


def test_a_later_session_finds_the_earlier_one_by_asking(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    script_substantial_work(sandbox, topic="zeppelin")
    sandbox.api.add_text("Built the zeppelin modules with the flamingo loader.")
    first_id = str(uuid.uuid4())
    _ok(
        run_claude_with_memory(
            sandbox,
            "Build the zeppelin modules with the flamingo loader.",
            extra_args=["--session-id", first_id],
        )
    )
    (cold,) = cold_summaries(sandbox)
    sandbox.api.reset()

    _ok(run_claude_with_memory(sandbox, "Have we built the zeppelin flamingo loader before?"))

    req = sandbox.api.main_requests()[0]
    recalled = "".join(injected_by(req, "UserPromptSubmit"))
    assert "zeppelin" in recalled.lower()
    rows = json.loads(memory_tool(sandbox, "list", "--json", "--type", "cold").stdout)
    (cold_id,) = [row["id"] for row in rows if row["path"] == str(cold)]
    assert cold_id in recalled


def _tee_stop_answers(box: Sandbox) -> Path:
    """Wrap our installed Stop hook so each answer it prints is also kept in a file of its own
    (an empty file for an empty answer), and run the same hook for SubagentStop too."""
    out = box.root / "stop-answers"
    out.mkdir()
    from memory_tool.runtime.settings import hook_command

    settings = box.read_settings()
    (group,) = settings["hooks"]["Stop"]
    (handler,) = group["hooks"]
    # An HTTP Stop hook (the default since issue 24) cannot be teed: its command twin runs the
    # same front end (dispatch) the server runs; the HTTP answer's shape is tested in
    # tests/test_hook_http.py.
    ours = handler.get("command") or hook_command("Stop")
    for event in ("Stop", "SubagentStop"):
        command = ours.removesuffix(" Stop") + f" {event}"
        tee = f'{command} | tee "{out}/{event}-$(date +%s%N).json"'
        tee_handler = {"type": "command", "command": tee, "timeout": handler["timeout"]}
        settings["hooks"][event] = [{"hooks": [tee_handler]}]
    box.write_settings(settings)
    return out


def _answers(folder: Path, event: str) -> list[str]:
    return [p.read_text(encoding="utf-8").strip() for p in sorted(folder.glob(f"{event}-*.json"))]


@pytest.mark.parametrize("mode", ["block", "remind"])
def test_stop_answers_are_empty_but_for_the_one_handoff_answer(sandbox: Sandbox, mode: str) -> None:
    # Command hooks (MEMORY_TOOL_SERVER=0), so each answer can be kept as it is printed: over
    # HTTP the server answers through the same dispatch (tests/test_hook_http.py holds that).
    off = {"MEMORY_TOOL_SERVER": "0"}
    memory_tool(sandbox, "install", env=off)
    if mode != "block":
        (state_dir(sandbox) / "config.yaml").write_text(f"handoff:\n  mode: {mode}\n")
    folder = _tee_stop_answers(sandbox)
    sandbox.add_recording_hook("Stop")
    sandbox.add_recording_hook("SubagentStop")
    script_substantial_work(sandbox)
    sandbox.api.add_text("first answer")
    if mode == "block":
        sandbox.api.add_text("second answer")  # after the block's reason
    session_id = str(uuid.uuid4())
    _ok(
        run_claude_with_memory(
            sandbox, "Build them.", extra_args=["--session-id", session_id], env=off
        )
    )
    # Each model call was one the test scripted: no answer made Claude go on by itself.
    calls = MIN_FILE_EDITS + 2 + (1 if mode == "block" else 0)
    assert (len(sandbox.api.main_requests()), sandbox.api.pending()) == (calls, 0)
    _ok(
        run_claude_with_memory(
            sandbox, "One more thing.", extra_args=["--resume", session_id], env=off
        )
    )
    assert len(sandbox.api.main_requests()) == calls + 1  # its "ok", nothing after it
    task = {"description": "review", "prompt": "Review the widget modules."}
    sandbox.api.add_tool_use("Agent", {**task, "subagent_type": "general-purpose"})
    sandbox.api.add_text("They look right.")  # the subagent's answer
    _ok(
        run_claude_with_memory(
            sandbox, "Review them.", extra_args=["--resume", session_id], env=off
        )
    )

    stops = _answers(folder, "Stop")
    assert len(stops) == len(sandbox.hook_inputs("Stop")) >= (5 if mode == "block" else 4)
    said = [json.loads(a) for a in stops if a]
    if mode == "block":
        assert [list(a) for a in said] == [["decision", "reason"]]
    else:  # shown to the person only; Claude is not made to go on
        assert [list(a) for a in said] == [["systemMessage"]]
    subagent_stops = _answers(folder, "SubagentStop")
    assert len(subagent_stops) == len(sandbox.hook_inputs("SubagentStop")) >= 1
    assert set(subagent_stops) == {""}
    assert hooks_log(sandbox) == ""
