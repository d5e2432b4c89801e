"""`memory-tool install --mcp` registers the MCP server in Claude Code's user configuration
(~/.claude.json, or $CLAUDE_CONFIG_DIR/.claude.json) by merging; `uninstall` takes out only
that. The real claude binary reading the result is in tests/e2e/test_mcp_session.py."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memory_tool.cli.main import main
from memory_tool.mcp import register

# What Claude Code itself keeps in the file (abridged from a real one): none of it is ours.
CLAUDE_STATE = {
    "numStartups": 12,
    "machineID": "3ff59aaa",
    "projects": {"/work/proj": {"allowedTools": [], "hasTrustDialogAccepted": True}},
    "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": [], "env": {}}},
}


@pytest.fixture(autouse=True)
def sdk_present(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registering needs only to know the SDK is there; these tests are about the file."""
    monkeypatch.setattr(register, "sdk_installed", lambda: True)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def user_config(sandbox: Path) -> Path:
    return sandbox / ".claude.json"


def write(path: Path, data: Any, mode: int = 0o600) -> None:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.chmod(path, mode)


def test_install_mcp_merges_our_server_into_claudes_user_config(sandbox: Path) -> None:
    path = user_config(sandbox)
    write(path, CLAUDE_STATE, mode=0o640)
    res = run("install", "--mcp")
    assert res.exit_code == 0, res.output
    data = json.loads(path.read_text())
    assert data["mcpServers"]["memory-tool"] == {
        "type": "stdio",
        "command": sys.executable,
        "args": ["-m", "memory_tool.mcp"],
        "env": {},
    }
    # Everything else as it was, the file's mode kept.
    assert {k: v for k, v in data.items() if k != "mcpServers"} == {
        k: v for k, v in CLAUDE_STATE.items() if k != "mcpServers"
    }
    assert data["mcpServers"]["github"] == CLAUDE_STATE["mcpServers"]["github"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    backup = register.backup_file(path)
    assert json.loads(backup.read_text()) == CLAUDE_STATE
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600  # owner-only, whatever the original
    assert f"claude mcp add --scope user memory-tool -- {sys.executable} -m memory_tool.mcp" in (
        res.output
    )
    # The hooks went in as ever.
    assert (sandbox / ".claude" / "settings.json").exists()


def test_install_mcp_twice_changes_nothing(sandbox: Path) -> None:
    path = user_config(sandbox)
    write(path, CLAUDE_STATE)
    assert run("install", "--mcp").exit_code == 0
    first = path.read_bytes()
    res = run("install", "--mcp")
    assert res.exit_code == 0 and "already registered" in res.output
    assert path.read_bytes() == first


def test_install_mcp_creates_the_file_owner_only_when_there_is_none(sandbox: Path) -> None:
    path = user_config(sandbox)
    assert run("install", "--mcp").exit_code == 0
    assert set(json.loads(path.read_text())["mcpServers"]) == {"memory-tool"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not register.backup_file(path).exists()


def test_install_mcp_follows_claude_config_dir(
    sandbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "cfg"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    assert run("install", "--mcp").exit_code == 0
    assert "memory-tool" in json.loads((config / ".claude.json").read_text())["mcpServers"]
    assert not user_config(sandbox).exists()


def test_uninstall_takes_out_only_our_server(sandbox: Path) -> None:
    path = user_config(sandbox)
    write(path, CLAUDE_STATE)
    assert run("install", "--mcp").exit_code == 0
    data = json.loads(path.read_text())
    data["numStartups"] = 13  # Claude Code rewrote the file meanwhile
    write(path, data)
    res = run("uninstall")
    assert res.exit_code == 0 and "MCP server memory-tool removed" in res.output
    assert json.loads(path.read_text()) == dict(CLAUDE_STATE, numStartups=13)
    assert not register.backup_file(path).exists()


def test_a_server_of_that_name_that_is_not_ours_is_refused(sandbox: Path) -> None:
    path = user_config(sandbox)
    theirs = {"type": "stdio", "command": "node", "args": ["their-memory.js"], "env": {}}
    write(path, {"mcpServers": {"memory-tool": theirs}})
    before = path.read_bytes()
    res = run("install", "--mcp")
    assert res.exit_code == 1
    assert "already has an MCP server named" in res.output and "claude mcp remove" in res.output
    assert path.read_bytes() == before
    assert run("uninstall").exit_code == 0
    assert json.loads(path.read_text())["mcpServers"]["memory-tool"] == theirs


def test_broken_user_config_is_left_alone_with_the_line_to_run(sandbox: Path) -> None:
    path = user_config(sandbox)
    path.write_text('{"numStartups": 3,', encoding="utf-8")
    res = run("install", "--mcp")
    assert res.exit_code == 1
    assert "is not valid JSON" in res.output and "claude mcp add --scope user" in res.output
    assert path.read_text() == '{"numStartups": 3,'
    assert run("uninstall").exit_code == 0  # never refuses to take the hooks out
    assert path.read_text() == '{"numStartups": 3,'


def test_install_mcp_without_the_sdk_says_how_to_get_it(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(register, "sdk_installed", lambda: False)
    res = run("install", "--mcp")
    assert res.exit_code == 1 and "memory-tool[mcp]" in res.output
    assert not user_config(sandbox).exists()
    assert not (sandbox / ".claude" / "settings.json").exists()  # nothing half-installed


def test_dry_run_writes_nothing(sandbox: Path) -> None:
    res = run("install", "--mcp", "--dry-run")
    assert res.exit_code == 0 and "would register the MCP server" in res.output
    assert not user_config(sandbox).exists()


def test_plain_install_leaves_the_user_config_alone(sandbox: Path) -> None:
    path = user_config(sandbox)
    write(path, CLAUDE_STATE)
    before = path.read_bytes()
    assert run("install").exit_code == 0
    assert run("uninstall").exit_code == 0
    assert path.read_bytes() == before
