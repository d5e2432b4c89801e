"""UserPromptSubmit recall (L3 room memories, L4 deep search) through the real Claude Code."""

from __future__ import annotations

import json
import subprocess
import time
import uuid

import pytest
from claude_sandbox import (
    FENCE_OPEN_TAG,
    Sandbox,
    injected_by,
    memory_tool,
    run_claude_with_memory,
    state_dir,
)

from memory_tool.recall.seen import ids_in

pytestmark = [pytest.mark.e2e]


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, f"claude exited {res.returncode}\n{res.stdout}\n{res.stderr}"


def add(box: Sandbox, *args: str) -> str:
    """`memory-tool add --json ARGS`; returns the new memory's id."""
    row = json.loads(memory_tool(box, "add", "--json", *args).stdout)
    return str(row["id"])


def test_a_prompt_about_a_room_brings_that_rooms_memory_and_an_unrelated_one_none(
    sandbox: Sandbox,
) -> None:
    memory_tool(sandbox, "install")
    auth = add(
        sandbox, "--room", "authentication", "Refresh tokens rotate every 15 minutes ZAUTHQ."
    )
    deploy = add(sandbox, "--room", "deployment", "Deploys switch blue and green slots ZDEPLOYQ.")

    _ok(run_claude_with_memory(sandbox, "How does the login token refresh work?"))

    req = sandbox.api.main_requests()[0]
    (block,) = injected_by(req, "UserPromptSubmit")
    assert "## Memories about authentication (L3)" in block
    assert "ZAUTHQ" in block and f"[{auth}]" in block
    assert "ZDEPLOYQ" not in req.text() and deploy not in req.text()
    # Room memories are not always-loaded: the brief did not already carry it.
    assert "ZAUTHQ" not in "".join(injected_by(req, "SessionStart"))
    assert len(block) < 10_000

    sandbox.api.reset()
    _ok(run_claude_with_memory(sandbox, "Write a haiku about autumn leaves."))

    req = sandbox.api.main_requests()[0]
    assert injected_by(req, "UserPromptSubmit") == []
    assert "ZAUTHQ" not in req.text() and "ZDEPLOYQ" not in req.text()
    assert req.messages_text().count(FENCE_OPEN_TAG) == 1  # the brief, nothing else


def test_have_we_done_this_before_brings_ids_and_summaries_not_full_texts(
    sandbox: Sandbox,
) -> None:
    memory_tool(sandbox, "install")
    # L4's depth, alone: a project's reference would otherwise open the brief as L2's
    # background (its line, not only its id), before any prompt.
    (state_dir(sandbox) / "config.yaml").write_text("recall:\n  l2_background: false\n")
    ids = [
        add(
            sandbox,
            "--type",
            "reference",
            "--description",
            "Flamingo zeppelin warmup, first attempt",
            "We tried the flamingo zeppelin warmup in March and it failed: the full story is "
            "ZBODYONEQ, which only `memory-tool get` should show.",
        ),
        add(
            sandbox,
            "--tier",
            "wiki",
            "--description",
            "Flamingo zeppelin warmup decision",
            "Decision: warm the flamingo zeppelin at boot. Details ZBODYTWOQ stay on disk.",
        ),
    ]
    add(sandbox, "--type", "reference", "The espresso machine descales weekly ZCOFFEEQ.")

    _ok(run_claude_with_memory(sandbox, "Have we done the flamingo zeppelin warmup before?"))

    req = sandbox.api.main_requests()[0]
    (block,) = injected_by(req, "UserPromptSubmit")
    assert "(L4" in block
    for entry_id in ids:
        assert entry_id in block
    assert "Flamingo zeppelin warmup, first attempt" in block  # the summary line
    text = req.text()
    assert "ZBODYONEQ" not in text and "ZBODYTWOQ" not in text  # no full texts
    assert "ZCOFFEEQ" not in block  # nor unrelated memories


def test_prompts_answered_by_the_hook_server_bring_the_room_recall(sandbox: Sandbox) -> None:
    """The shipped default: SessionStart starts the resident hook server and prompts reach it as
    HTTP hooks (the same answer as the in-process hook: tests/test_hook_http.py)."""
    memory_tool(sandbox, "install")
    auth = add(
        sandbox, "--room", "authentication", "Refresh tokens rotate every 15 minutes ZAUTHQ."
    )
    served = {"MEMORY_TOOL_NO_BACKGROUND": None}  # let the hooks start the server
    try:
        _ok(run_claude_with_memory(sandbox, "hello", env=served))  # starts the server
        status = memory_tool(sandbox, "server", "status", check=False)
        for _ in range(100):
            if status.returncode == 0:
                break
            time.sleep(0.1)
            status = memory_tool(sandbox, "server", "status", check=False)
        assert status.returncode == 0, status.stdout + status.stderr
        calls = int(status.stdout.split("calls=")[1].split()[0])

        sandbox.api.reset()
        _ok(run_claude_with_memory(sandbox, "How does the login token refresh work?", env=served))
        status = memory_tool(sandbox, "server", "status")
        # It answered the whole session: SessionStart (its command hook is a client of the
        # server), the prompt and Stop (HTTP hooks) and SessionEnd.
        assert int(status.stdout.split("calls=")[1].split()[0]) == calls + 4
        (block,) = injected_by(sandbox.api.main_requests()[0], "UserPromptSubmit")
    finally:
        memory_tool(sandbox, "server", "stop", check=False)
    assert "## Memories about authentication (L3)" in block
    assert "ZAUTHQ" in block and f"[{auth}]" in block and len(block) < 10_000
    assert memory_tool(sandbox, "server", "status", check=False).returncode == 1


def test_a_follow_up_in_a_resumed_session_brings_the_rest_of_the_room(sandbox: Sandbox) -> None:
    """ "now do the same for the refund cases" names no room: the session's previous room is
    recalled again, without repeating what the first prompt brought; a closing that names the
    room ("the refund tests pass now, thanks!") brings nothing."""
    memory_tool(sandbox, "install")
    rooms = state_dir(sandbox) / "rooms" / "testing"  # written as a person would, by hand
    rooms.mkdir(parents=True, exist_ok=True)
    for i in range(45):  # more than two prompts take (each considers at most 20)
        (rooms / f"note-{i}.md").write_text(
            f"---\nname: testing note {i}\ndescription: fixture scope, note {i}\n---\n\n"
            f"Testing note {i} ZTESTQ{i}: " + "fixtures are function scoped unless marked. " * 30,
            encoding="utf-8",
        )
    memory_tool(sandbox, "index")  # what the detached refresh does (switched off in tests)
    session_id = str(uuid.uuid4())
    prompt = "The checkout unit test is flaky, fix the fixture"
    _ok(run_claude_with_memory(sandbox, prompt, extra_args=["--session-id", session_id]))
    (first,) = injected_by(sandbox.api.main_requests()[0], "UserPromptSubmit")
    assert "## Memories about testing (L3)" in first

    sandbox.api.reset()
    follow = "now do the same for the refund cases"
    _ok(run_claude_with_memory(sandbox, follow, extra_args=["--resume", session_id]))
    before = injected_by(sandbox.api.main_requests()[0], "UserPromptSubmit")
    second = before[-1]  # earlier turns' blocks come first, as history
    assert "## Memories about testing (L3, the topic of the previous prompt)" in second
    assert not set(ids_in(first)) & set(ids_in(second))

    sandbox.api.reset()
    closing = "the refund tests pass now, thanks!"  # names the room, asks for nothing
    _ok(run_claude_with_memory(sandbox, closing, extra_args=["--resume", session_id]))
    after = injected_by(sandbox.api.main_requests()[0], "UserPromptSubmit")
    assert [b for b in after if b not in before] == []  # nothing new for a closing


def test_a_note_claude_writes_mid_session_is_recalled_on_the_next_prompt(
    sandbox: Sandbox,
) -> None:
    # Files are the truth between refreshes too: Claude saves a note into a palace room with
    # its Write tool, and the next prompt of the same session (resumed: its SessionStart looks
    # at this project's folder only) recalls it. No `memory-tool index`, no background refresh.
    memory_tool(sandbox, "install")
    memory_tool(sandbox, "index")  # as install.sh leaves it
    note = state_dir(sandbox) / "rooms" / "authentication" / "rotation.md"
    text = "Refresh tokens rotate every 15 minutes ZMIDQ."
    sandbox.api.add_tool_use(
        "Write",
        {
            "file_path": str(note),
            "content": f"---\nname: rotation\ndescription: {text}\n---\n{text}\n",
        },
    )
    sandbox.api.add_text("noted")
    session_id = str(uuid.uuid4())
    _ok(run_claude_with_memory(sandbox, "remember how token rotation works",
                               extra_args=["--session-id", session_id]))  # fmt: skip
    assert note.is_file()

    sandbox.api.reset()
    _ok(run_claude_with_memory(sandbox, "How does the login token refresh work?",
                               extra_args=["--resume", session_id]))  # fmt: skip
    req = sandbox.api.main_requests()[0]
    (block,) = injected_by(req, "UserPromptSubmit")
    assert "## Memories about authentication (L3)" in block and "ZMIDQ" in block
