"""Room memories belong to the project they were added in, through the real Claude Code: what
reaches the model in another project, and in the project itself."""

from __future__ import annotations

import json
import subprocess

import pytest
from claude_sandbox import Sandbox, injected_by, memory_tool, run_claude_with_memory

from memory_tool.recall.room import GLOBAL_HEADING, PROJECT_HEADING

pytestmark = [pytest.mark.e2e]

PROMPT = "The deploy to staging failed again, what should I check?"


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, f"claude exited {res.returncode}\n{res.stdout}\n{res.stderr}"


def prompt_block(box: Sandbox, cwd: object) -> str:
    """What UserPromptSubmit added for PROMPT in a session started in ``cwd`` ("" for nothing)."""
    box.api.reset()
    _ok(run_claude_with_memory(box, PROMPT, cwd=cwd))
    blocks = injected_by(box.api.main_requests()[0], "UserPromptSubmit")
    return "".join(blocks)


def test_a_room_memory_reaches_the_model_only_in_its_project(sandbox: Sandbox) -> None:
    repo_a = sandbox.project
    repo_b = sandbox.root / "repoB"
    repo_b.mkdir()
    memory_tool(sandbox, "install")
    added = json.loads(memory_tool(sandbox, "add", "--json", "--room", "deployment",
                                   "Deploys go through ArgoCD; the staging cluster is ZARGOQ.",
                                   cwd=repo_a).stdout)  # fmt: skip
    everyone = "Staging deploys need a green CI run on main first ZEVERYQ."
    memory_tool(sandbox, "add", "--room", "deployment", "--global", everyone, cwd=repo_a)

    in_b = prompt_block(sandbox, repo_b)
    assert "ZEVERYQ" in in_b  # for every project
    assert "ZARGOQ" not in in_b and added["id"] not in in_b
    assert PROJECT_HEADING not in in_b and GLOBAL_HEADING not in in_b  # nothing to tell apart
    assert "ZARGOQ" not in sandbox.api.main_requests()[0].text()

    in_a = prompt_block(sandbox, repo_a)
    assert "ZARGOQ" in in_a and "ZEVERYQ" in in_a
    mine, everyone = in_a.split(PROJECT_HEADING)[1].split(GLOBAL_HEADING)
    assert "ZARGOQ" in mine and "ZEVERYQ" in everyone
