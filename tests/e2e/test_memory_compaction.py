"""Compaction, then resume, through the real Claude Code client: each tier's piece (the hot
state, the handoff, the latest cold summary) reaches a request at most once.

What 2.1.332 keeps (docs/tiers.md#what-the-client-keeps): every hook context stays in every
later request of the session, across --resume; a compaction drops what was already sent, and
keeps what SessionStart gave in the run that compacts before any prompt (the resume of
`claude -p /compact --resume`).
"""

from __future__ import annotations

import subprocess
import uuid

import pytest
from claude_sandbox import Sandbox, hooks_log, memory_tool, run_claude_with_memory
from test_memory_stop import script_substantial_work

pytestmark = pytest.mark.e2e

HOT = "## This session so far (hot memory)"
HANDOFF = "## Handoff from an earlier session"
COLD = "## Latest earlier session of this project (cold memory)"


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, f"claude exited {res.returncode}\n{res.stdout}\n{res.stderr}"


def test_compaction_then_resume_gives_each_piece_once(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    memory_tool(sandbox, "add", "--type", "feedback", "Never push to main without a review.")
    # An earlier session: substantial work (its cold summary) and a handoff.
    script_substantial_work(sandbox, topic="gizmo")
    handoff = sandbox.project / "thoughts" / "HANDOFF.md"
    sandbox.api.add_tool_use(
        "Write", {"file_path": str(handoff), "content": "# Handoff\nNext: wire the loader.\n"}
    )
    sandbox.api.add_text("built")
    _ok(run_claude_with_memory(sandbox, "Build the gizmo modules."))
    sandbox.api.reset()
    # This session writes a file, is compacted, then continued.
    sid = str(uuid.uuid4())
    widget = sandbox.project / "src" / "widget.py"
    sandbox.api.add_tool_use("Write", {"file_path": str(widget), "content": "W = 1\n"})
    sandbox.api.add_text("wrote it")
    _ok(run_claude_with_memory(sandbox, "Write the widget module.", ["--session-id", sid]))
    sandbox.api.add_text("<summary>We wrote widget.py.</summary>")
    _ok(run_claude_with_memory(sandbox, "/compact", ["--resume", sid]))
    _ok(run_claude_with_memory(sandbox, "ok, continue", ["--resume", sid]))

    main = sandbox.api.main_requests()
    assert [r.is_compaction for r in main] == [False, False, True, False]
    last = main[-1].text()
    assert "We wrote widget.py." in last  # the compacted conversation
    assert {piece: last.count(piece) for piece in (HOT, HANDOFF, COLD)} == {
        HOT: 1,
        HANDOFF: 1,
        COLD: 1,
    }
    assert last.count("Next: wire the loader.") == 1
    # Another resume adds none of them again: the conversation still holds each.
    _ok(run_claude_with_memory(sandbox, "and then?", ["--resume", sid]))
    last = sandbox.api.main_requests()[-1].text()
    assert [last.count(piece) for piece in (HOT, HANDOFF, COLD)] == [1, 1, 1]
    assert hooks_log(sandbox) == ""
