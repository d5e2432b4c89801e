"""Hooks over HTTP through the real Claude Code client: they fire and inject, and a server that is
down, or that refuses the request (403), costs the session that hook's context and nothing else:
the session completes, nothing is shown, the brief (a command hook) still arrives."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime
from pathlib import Path

import pytest
from claude_sandbox import (
    Sandbox,
    injected_by,
    memory_tool,
    run_claude_with_memory,
    state_dir,
)

pytestmark = [pytest.mark.e2e]

PROMPT = "How does the login token refresh work?"


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, f"claude exited {res.returncode}\n{res.stdout}\n{res.stderr}"


def _seed(box: Sandbox) -> str:
    memory_tool(box, "install")
    res = memory_tool(
        box, "add", "--room", "authentication", "Refresh tokens rotate every 15 minutes ZAUTHQ."
    )
    return res.stdout


def http_timings(debug_log: Path) -> list[tuple[str, float, str]]:
    """(url, milliseconds, outcome) of each HTTP hook as Claude Code's debug log reports it: from
    its "HTTP hook POST to <url>" line to the response (or failure) line after it."""
    stamp = re.compile(r"^(\S+Z) \[[A-Z]+\] (.*)$")
    pending: dict[str, datetime] = {}
    out = []
    last_url = ""
    for line in debug_log.read_text(encoding="utf-8", errors="replace").splitlines():
        m = stamp.match(line)
        if not m:
            continue
        when = datetime.fromisoformat(m.group(1).replace("Z", "+00:00"))
        text = m.group(2)
        if text.startswith("Hooks: HTTP hook POST to "):
            last_url = text.removeprefix("Hooks: HTTP hook POST to ").strip()
            pending[last_url] = when
        elif text.startswith("Hooks: HTTP hook") and last_url in pending:
            ms = (when - pending.pop(last_url)).total_seconds() * 1000
            out.append((last_url, ms, text))
    return out


def test_http_hooks_fire_and_inject_through_the_server(sandbox: Sandbox) -> None:
    _seed(sandbox)
    settings = json.loads(sandbox.settings_path.read_text())
    (group,) = settings["hooks"]["UserPromptSubmit"]
    assert group["hooks"][0]["type"] == "http"
    target = sandbox.project / "notes.txt"
    target.write_text("hello\n")
    sandbox.api.add_tool_use("Read", {"file_path": str(target)})
    sandbox.api.add_text("done")
    log = sandbox.root / "debug.log"
    res = run_claude_with_memory(sandbox, PROMPT, extra_args=["--debug-file", str(log)])
    _ok(res)
    assert res.stderr == ""
    first = sandbox.api.main_requests()[0]
    assert len(injected_by(first, "SessionStart")) == 1
    (recall,) = injected_by(first, "UserPromptSubmit")
    assert "ZAUTHQ" in recall
    timings = http_timings(log)
    events = [url.rsplit("/", 1)[1] for url, _, _ in timings]
    assert "UserPromptSubmit" in events and "PostToolUse" in events and "Stop" in events
    assert all("status 200" in outcome for _, _, outcome in timings), timings
    assert "HTTP hook must return JSON" not in log.read_text()


def test_a_dead_server_costs_the_prompt_its_recall_and_nothing_else(sandbox: Sandbox) -> None:
    _seed(sandbox)
    sandbox.api.add_text("fine")
    log = sandbox.root / "debug.log"
    # No server may start (the tests' default): every HTTP hook finds the port closed.
    res = run_claude_with_memory(
        sandbox, PROMPT, extra_args=["--debug-file", str(log)], env={"MEMORY_TOOL_SERVER": None}
    )
    _ok(res)
    assert res.stdout.strip() == "fine" and res.stderr == ""
    first = sandbox.api.main_requests()[0]
    assert len(injected_by(first, "SessionStart")) == 1  # the command hook ran in-process
    assert injected_by(first, "UserPromptSubmit") == []
    timings = http_timings(log)
    assert timings and all("status 200" not in outcome for _, _, outcome in timings)
    prompt_ms = [ms for url, ms, _ in timings if url.endswith("/UserPromptSubmit")]
    assert prompt_ms and max(prompt_ms) < 1000  # refused at once, no timeout waited out


def test_a_server_that_answers_403_costs_the_prompt_its_recall_and_nothing_else(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """A server that does not hold this install's secret (another install's, or a process of
    another user on the port) refuses: the session goes on without that context."""
    _seed(sandbox)
    other = tmp_path / "other-config"
    other.mkdir()
    (other / "settings.json").write_text(
        json.dumps({"env": {"MEMORY_TOOL_HOOK_SECRET": "not-the-one-" + "z" * 30}})
    )
    env = {"CLAUDE_CONFIG_DIR": str(other), "MEMORY_TOOL_HOME": str(state_dir(sandbox))}
    memory_tool(sandbox, "server", "start", env=env)
    try:
        sandbox.api.add_text("fine")
        log = sandbox.root / "debug.log"
        res = run_claude_with_memory(sandbox, PROMPT, extra_args=["--debug-file", str(log)])
        _ok(res)
        assert res.stdout.strip() == "fine" and res.stderr == ""
        first = sandbox.api.main_requests()[0]
        assert len(injected_by(first, "SessionStart")) == 1
        assert injected_by(first, "UserPromptSubmit") == []
        timings = http_timings(log)
        assert timings and all("403" in outcome for _, _, outcome in timings), timings
    finally:
        memory_tool(sandbox, "server", "stop", env=env, check=False)


def test_with_the_server_off_at_install_every_hook_is_a_command(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install", env={"MEMORY_TOOL_SERVER": "0"})
    memory_tool(
        sandbox, "add", "--room", "authentication", "Refresh tokens rotate every 15 minutes ZAUTHQ."
    )
    settings = json.loads(sandbox.settings_path.read_text())
    kinds = {h["type"] for gs in settings["hooks"].values() for g in gs for h in g["hooks"]}
    assert kinds == {"command"}
    res = run_claude_with_memory(sandbox, PROMPT, env={"MEMORY_TOOL_SERVER": "0"})
    _ok(res)
    (recall,) = injected_by(sandbox.api.main_requests()[0], "UserPromptSubmit")
    assert "ZAUTHQ" in recall
