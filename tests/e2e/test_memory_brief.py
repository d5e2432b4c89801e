"""memory-tool's SessionStart brief through the real Claude Code client.

`memory-tool install` writes our hooks into the sandbox's settings.json; every assertion is on
what the stand-in API recorded, i.e. on what the model would really have seen.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from claude_sandbox import (
    FENCE_OPEN_TAG,
    Sandbox,
    injected_by,
    memory_tool,
    run_claude_with_memory,
    state_dir,
)
from helpers import write_memory

from memory_tool.base import tokens
from memory_tool.store.palace import memory_index_line

pytestmark = pytest.mark.e2e

# More project facts than the L2 budget (500 tokens) and the always-load cap (15) can hold.
N_PROJECT_FACTS = 40


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, f"claude exited {res.returncode}\n{res.stdout}\n{res.stderr}"


def memory_dir(box: Sandbox) -> Path:
    return box.project_dir() / "memory"


def add_fact(box: Sandbox, name: str, body: str, description: str, **fields: Any) -> Path:
    """A memory file written as Claude Code writes one, plus its MEMORY.md line."""
    folder = memory_dir(box)
    path = write_memory(folder, name, body, description=description, **fields)
    with open(folder / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write(memory_index_line(name.removesuffix(".md"), name, description) + "\n")
    return path


def wake_json(box: Sandbox) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(memory_tool(box, "wake", "--json").stdout)
    return data


def list_json(box: Sandbox) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(memory_tool(box, "list", "--json").stdout)
    return data


def the_brief(req: Any) -> str:
    (block,) = injected_by(req, "SessionStart")
    return block


def test_l1_and_l2_reach_the_first_request_and_nothing_beyond_the_budgets(
    sandbox: Sandbox,
) -> None:
    memory_tool(sandbox, "install")
    for i in range(3):
        add_fact(
            sandbox,
            f"user_fact_{i}.md",
            f"The user ZUSER{i}Q likes option {i}.",
            description=f"user fact {i}",
            type_="user",
        )
    for i in range(N_PROJECT_FACTS):
        add_fact(
            sandbox,
            f"project_fact_{i:02d}.md",
            f"Widget {i} runs with setting ZFACT{i:02d}Q and a fairly long explanation of why "
            f"that setting was chosen over the other {i} options we tried.",
            description=f"project fact {i:02d}",
            type_="project",
            importance=1 + i % 5,
        )

    _ok(run_claude_with_memory(sandbox, "hello"))

    first = sandbox.api.main_requests()[0]
    brief = the_brief(first)
    wake = wake_json(sandbox)
    # What reached the model is exactly what `memory-tool wake` says is injected, and the
    # token figure it reports is the exact cl100k count of that text.
    assert brief == wake["text"]
    assert tokens.count(brief) == wake["tokens"] == wake["verified_tokens"]
    assert len(brief) < 10_000
    layers = wake["layers"]
    for name in ("L1", "L2"):
        assert layers[name]["tokens"] <= layers[name]["budget"]
    assert len(layers["L1"]["entries"]) == 3
    assert layers["L2"]["omitted"], "40 facts cannot all fit the L2 budget"
    assert len(layers["L1"]["entries"]) + len(layers["L2"]["entries"]) <= 15

    by_id = {row["id"]: row for row in list_json(sandbox)}
    everything = first.text()
    for i in range(3):
        assert f"ZUSER{i}Q" in brief
    for entry_id in layers["L2"]["entries"]:
        n = by_id[entry_id]["description"].split()[-1]
        assert f"[{entry_id}]" in brief and f"ZFACT{n}Q" in brief
    for entry_id in layers["L2"]["omitted"]:
        n = by_id[entry_id]["description"].split()[-1]
        # Not in the brief, and nowhere else in the request either (Claude Code's own
        # MEMORY.md loading carries descriptions only).
        assert f"ZFACT{n}Q" not in everything
        assert f"[{entry_id}]" not in everything
    assert f"{len(layers['L2']['omitted'])} more project facts" in brief
    assert everything.count("ZFACT") == len(layers["L2"]["entries"])


def test_the_brief_is_fenced_once_and_sent_only_at_session_start(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    memory_tool(sandbox, "add", "--type", "feedback", "Never push to main without a review.")
    sandbox.api.add_tool_use("Bash", {"command": "echo step", "description": "t"})
    sandbox.api.add_text("done")

    _ok(run_claude_with_memory(sandbox, "do it"))

    main = sandbox.api.main_requests()
    assert len(main) == 2
    for req in main:
        # One brief per session: the follow-up request repeats the conversation, not a second copy.
        assert req.messages_text().count(FENCE_OPEN_TAG) == 1
        brief = the_brief(req)
        assert "Never push to main without a review." in brief
        assert brief.startswith("<memory-context>\n") and brief.endswith("</memory-context>\n")


def test_uninstall_removes_every_effect(sandbox: Sandbox) -> None:
    # The person's own settings, in their own formatting, with their own SessionStart hook.
    sandbox.add_recording_hook(
        "SessionStart",
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "MINE-77"}},
    )
    settings = sandbox.read_settings() | {"model": "sonnet", "cleanupPeriodDays": 99}
    sandbox.settings_path.write_text(json.dumps(settings, indent=4), encoding="utf-8")
    before = sandbox.settings_path.read_bytes()
    memory_tool(sandbox, "add", "--type", "project", "Releases are cut on Tuesdays ZREL1Q.")

    memory_tool(sandbox, "install")
    _ok(run_claude_with_memory(sandbox, "one"))
    req = sandbox.api.main_requests()[0]
    assert "ZREL1Q" in the_brief(req)
    assert "MINE-77" in req.messages_text()

    out = memory_tool(sandbox, "uninstall").stdout
    assert "restored byte for byte" in out
    assert sandbox.settings_path.read_bytes() == before
    assert not (state_dir(sandbox) / "install.json").exists()
    sandbox.api.reset()
    _ok(run_claude_with_memory(sandbox, "two"))
    req = sandbox.api.main_requests()[0]
    assert FENCE_OPEN_TAG not in req.text()
    assert "memory-tool" not in req.text()
    assert "MINE-77" in req.messages_text()  # their hook still runs
    assert len(sandbox.hook_inputs("SessionStart")) == 2


def test_uninstall_without_prior_settings_deletes_the_file_it_created(sandbox: Sandbox) -> None:
    assert not sandbox.settings_path.exists()
    memory_tool(sandbox, "add", "--type", "project", "The API listens on port 8765.")
    memory_tool(sandbox, "install")
    assert sandbox.settings_path.exists()
    _ok(run_claude_with_memory(sandbox, "one"))
    assert "port 8765" in the_brief(sandbox.api.main_requests()[0])

    memory_tool(sandbox, "uninstall")

    assert not sandbox.settings_path.exists()
    sandbox.api.reset()
    _ok(run_claude_with_memory(sandbox, "two"))
    assert FENCE_OPEN_TAG not in sandbox.api.main_requests()[0].text()


def test_resume_re_injects_the_brief_with_what_changed_since(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    sandbox.add_recording_hook("SessionStart")
    memory_tool(sandbox, "add", "--type", "project", "The staging host is ZSTAGEAQ.")
    _ok(run_claude_with_memory(sandbox, "first"))
    session_id = sandbox.hook_inputs("SessionStart")[0]["session_id"]
    memory_tool(sandbox, "add", "--type", "project", "The staging host moved to ZSTAGEBQ.")

    _ok(run_claude_with_memory(sandbox, "second", extra_args=["--resume", session_id]))

    assert [s["source"] for s in sandbox.hook_inputs("SessionStart")] == ["startup", "resume"]
    resumed = sandbox.api.main_requests()[1]
    assert resumed.session_id == session_id
    assert "first" in resumed.messages_text()  # it is the same conversation
    latest = injected_by(resumed, "SessionStart")[-1]
    assert "ZSTAGEBQ" in latest and "ZSTAGEAQ" in latest


def test_auto_compaction_re_injects_the_brief(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    sandbox.add_recording_hook("SessionStart")
    memory_tool(sandbox, "add", "--type", "project", "The build uses ZBUILDQ.")
    cli = memory_tool_shell_command(sandbox)
    # Mid-session, the agent saves a new fact; the compacted conversation must bring it back.
    sandbox.api.add_tool_use(
        "Bash",
        {"command": f"{cli} add --type project 'The cache key is ZCOMPACTQ.'", "description": "t"},
    )
    # This turn claims a prompt far over the --autocompact window (see test_harness.py).
    sandbox.api.add_tool_use(
        "Bash", {"command": "echo two", "description": "t"}, input_tokens=150_000
    )
    sandbox.api.add_text("<summary>AUTO-SUMMARY-9</summary>")
    sandbox.api.add_text("finished")

    res = run_claude_with_memory(sandbox, "go", extra_args=["--autocompact", "100000"])

    _ok(res)
    assert res.stdout.strip() == "finished"
    main = sandbox.api.main_requests()
    assert [r.is_compaction for r in main] == [False, False, True, False]
    assert [s["source"] for s in sandbox.hook_inputs("SessionStart")] == ["startup", "compact"]
    assert "ZCOMPACTQ" not in " ".join(injected_by(main[0], "SessionStart"))
    after = main[-1]
    assert "AUTO-SUMMARY-9" in after.messages_text()
    latest = injected_by(after, "SessionStart")[-1]
    assert "ZCOMPACTQ" in latest and "ZBUILDQ" in latest


def memory_tool_shell_command(box: Sandbox) -> str:
    """A shell command line that runs memory-tool (for Bash tool calls inside the session)."""
    import shlex
    import sys

    return shlex.join([sys.executable, "-c", "from memory_tool.cli.main import main; main()"])
