"""Secrets and <private> text through the real Claude Code client: what one session said never
comes back to the model in the next one, and never lands in memory-tool's files."""

from __future__ import annotations

import subprocess
import uuid

import pytest
from claude_sandbox import (
    Sandbox,
    injected_by,
    memory_tool,
    run_claude_with_memory,
    state_dir,
)

pytestmark = pytest.mark.e2e

SECRETS = {
    "anthropic": "sk-ant-api03-" + "Z9" * 30,
    "github": "ghp_" + "c3D4" * 9,
    "password": "correct-horse-Battery-9",
    "private": "the acquisition closes on March 3",
}
SECRET_TEXT = (
    f"Deploy staging with key {SECRETS['anthropic']} and token {SECRETS['github']}, db "
    f"password={SECRETS['password']} <private>{SECRETS['private']}</private>; staging is ZSTGQ."
)


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, f"claude exited {res.returncode}\n{res.stdout}\n{res.stderr}"


def assert_no_secret(text: str, where: str) -> None:
    for kind, secret in SECRETS.items():
        assert secret not in text, f"{kind} secret in {where}"


def test_secrets_said_in_one_session_never_reach_the_next(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    memory_tool(sandbox, "add", "--type", "project", SECRET_TEXT)
    for i in range(5):  # substantial work: the Stop hook and the Scribe have something to keep
        path = sandbox.project / "deploy" / f"step{i}.sh"
        sandbox.api.add_tool_use("Write", {"file_path": str(path), "content": "echo deploy\n"})
    sandbox.api.add_text(f"[DECISION] Staging deploys use the key. {SECRET_TEXT}")
    first = str(uuid.uuid4())

    _ok(run_claude_with_memory(sandbox, SECRET_TEXT, extra_args=["--session-id", first]))

    # The first session's own requests carry the prompt (the person typed it), but what
    # memory-tool injected does not.
    for req in sandbox.api.main_requests():
        for block in injected_by(req, "SessionStart") + injected_by(req, "UserPromptSubmit"):
            assert_no_secret(block, "the first session's injected context")
    sandbox.api.reset()
    _ok(run_claude_with_memory(sandbox, "Have we deployed staging before?"))

    req = sandbox.api.main_requests()[0]
    recalled = "".join(injected_by(req, "UserPromptSubmit"))
    assert "staging" in recalled.lower()  # the session is remembered...
    assert_no_secret(req.text(), "the next session's request")  # ...its secrets are not
    for path in state_dir(sandbox).rglob("*"):
        if path.is_file() and not path.name.startswith("index.db"):
            assert_no_secret(path.read_text(errors="replace"), str(path))
    for path in (sandbox.project_dir() / "memory").glob("*.md"):
        assert_no_secret(path.read_text(errors="replace"), str(path))
