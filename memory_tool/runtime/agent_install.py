"""Installing memory-tool's hooks (and MCP server) into Codex CLI's and Gemini CLI's own config,
and taking them out again, the way ``settings.py`` does it for Claude Code.

- Codex: hooks in ``$CODEX_HOME/hooks.json`` (default ``~/.codex``), the MCP server as an
  ``[mcp_servers.memory-tool]`` table in ``config.toml``. Codex skips a hook the user has not
  trusted, silently; the trust it records is ``[hooks.state."<file>:<event>:<i>:<j>"]
  trusted_hash = ...`` in config.toml, the hash being Codex's own (asked of ``codex app-server``,
  ``hooks/list``, never computed here). Our tables go into config.toml as one block between
  marker comments, so uninstall takes out exactly that block.
- Gemini: ``hooks`` and ``mcpServers`` in ``$GEMINI_CLI_HOME/.gemini/settings.json`` (default
  ``~/.gemini``); Gemini runs every hook in it.

Every file is read and checked before anything is written (JSON or TOML that does not parse is
refused with a message and left alone), backed up beside itself once, written atomically with
its mode kept. ``<state>/agents.json`` records each file as it was before and as we left it: if
it is still as we left it, uninstall puts the original back byte for byte; otherwise it removes
only our entries.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.errors import SettingsError
from ..base.fsutil import FILE_MODE, atomic_write_text
from .agents import CODEX, GEMINI

# The events installed for each agent (its own names), and the ceiling on each in the unit the
# agent wants (Codex: seconds; it clamps SessionEnd to 3. Gemini: milliseconds). Ceilings for a
# stuck disk, not expected times: a hook takes tens of milliseconds.
AGENT_HOOKS: dict[str, dict[str, int]] = {
    CODEX: {
        "SessionStart": 15,
        "UserPromptSubmit": 10,
        "Stop": 15,
        "SessionEnd": 3,
        "PreCompact": 10,
        "PostCompact": 10,
    },
    GEMINI: {
        "SessionStart": 15000,
        "BeforeAgent": 10000,
        "AfterAgent": 15000,
        "SessionEnd": 5000,
        "PreCompress": 10000,
    },
}
MCP_NAME = "memory-tool"
TOML_BEGIN = "# >>> memory-tool (added by `memory-tool install --agent codex`; uninstall drops it)"
TOML_END = "# <<< memory-tool"
# `codex app-server` answers hooks/list in a few seconds (its first start in a new CODEX_HOME
# sets that folder up, slower on a busy machine); past this it is stuck.
CODEX_APP_SERVER_TIMEOUT_S = 60.0


def codex_home() -> Path:
    env = os.environ.get("CODEX_HOME")
    return Path(env).expanduser() if env else Path.home() / ".codex"


def gemini_settings() -> Path:
    env = os.environ.get("GEMINI_CLI_HOME")
    return (Path(env).expanduser() if env else Path.home()) / ".gemini" / "settings.json"


def record_file() -> Path:
    return paths.state_root() / "agents.json"


def agent_command(agent: str, event: str) -> str:
    """The hook command: the same start-up Claude Code's hooks run, told which agent calls."""
    from .settings import hook_command

    return hook_command(f"--agent {agent} {event}")


def _mcp_args() -> tuple[str, list[str]]:
    return sys.executable, ["-m", "memory_tool.mcp"]


def find_binary(agent: str) -> str | None:
    """The agent's command: ``MEMORY_TOOL_<AGENT>_BIN``, else on PATH."""
    env = os.environ.get(f"MEMORY_TOOL_{agent.upper()}_BIN")
    if env and os.access(env, os.X_OK):
        return env
    return shutil.which(agent)


def detect() -> list[str]:
    """The other agents this machine has (their command, or their config folder)."""
    found = []
    if find_binary(CODEX) or codex_home().is_dir():
        found.append(CODEX)
    if find_binary(GEMINI) or gemini_settings().parent.is_dir():
        found.append(GEMINI)
    return found


@dataclass
class AgentReport:
    agent: str
    files: list[Path] = field(default_factory=list)
    changed: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Files: read checked, write with backup and mode, record before/after
# ---------------------------------------------------------------------------------------------


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read it ({exc}); nothing was changed") from exc


def _parse_json(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsError(
            f"{path} is not valid JSON ({exc}); nothing was changed: fix it and run again"
        ) from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path} does not hold a JSON object; nothing was changed")
    return data


def _check_toml(path: Path, text: str | None) -> None:
    import tomllib

    if not text:
        return
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(
            f"{path} is not valid TOML ({exc}); nothing was changed: fix it and run again"
        ) from exc


def _load_record() -> dict[str, Any]:
    try:
        data = json.loads(record_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_record(data: dict[str, Any]) -> None:
    atomic_write_text(record_file(), json.dumps(data, indent=2, sort_keys=True) + "\n")


def _write(path: Path, before: str | None, after: str, record: dict[str, Any]) -> bool:
    """Write ``after`` (when it differs) keeping the file's mode, with a one-time backup, and
    remember the original text for uninstall. True when the file changed."""
    if before == after:
        return False
    files = record.setdefault("files", {})
    entry = files.setdefault(str(path), {"before": before})
    if before is not None:
        backup = path.with_name(path.name + ".memory-tool.bak")
        if not backup.exists():
            atomic_write_text(backup, before)
        mode = stat.S_IMODE(path.stat().st_mode)
    else:
        mode = FILE_MODE
    atomic_write_text(path, after, mode=mode)
    if before is not None:
        os.chmod(path, mode)  # atomic_write_text never widens; keep the user's exact mode
    entry["after"] = after
    return True


def _dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _is_ours(handler: Any) -> bool:
    command = handler.get("command") if isinstance(handler, dict) else None
    return isinstance(command, str) and "--agent " in command and "memory_tool" in command


def _merge_hooks(data: dict[str, Any], agent: str) -> dict[str, Any]:
    """``data`` with our hook groups replacing any earlier ones of ours, others untouched."""
    data = _without_our_hooks(data)
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        hooks = {}
    for event, timeout in AGENT_HOOKS[agent].items():
        groups = hooks.get(event)
        groups = list(groups) if isinstance(groups, list) else []
        handler = {"type": "command", "command": agent_command(agent, event), "timeout": timeout}
        groups.append({"hooks": [handler]})
        hooks[event] = groups
    return {**data, "hooks": hooks}


def _without_our_hooks(data: dict[str, Any]) -> dict[str, Any]:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    cleaned: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            cleaned[event] = groups
            continue
        kept = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(_is_ours(h) for h in inner):
                rest = [h for h in inner if not _is_ours(h)]
                if rest:
                    kept.append({**group, "hooks": rest})
                continue
            kept.append(group)
        if kept:
            cleaned[event] = kept
    out = dict(data)
    if cleaned:
        out["hooks"] = cleaned
    else:
        out.pop("hooks", None)
    return out


# ---------------------------------------------------------------------------------------------
# Codex
# ---------------------------------------------------------------------------------------------


def _toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def _without_block(text: str) -> str:
    start = text.find(TOML_BEGIN)
    if start < 0:
        return text
    end = text.find(TOML_END, start)
    end = len(text) if end < 0 else end + len(TOML_END)
    if text[end : end + 1] == "\n":
        end += 1
    head = text[:start]
    if head.endswith("\n\n"):
        head = head[:-1]  # the blank line we put before the block
    return head + text[end:]


def _codex_block(trust: dict[str, str], mcp: bool) -> str:
    lines = [TOML_BEGIN]
    if mcp:
        command, args = _mcp_args()
        lines += [
            f"[mcp_servers.{MCP_NAME}]",
            f"command = {_toml_str(command)}",
            "args = [" + ", ".join(_toml_str(a) for a in args) + "]",
        ]
    for key, digest in sorted(trust.items()):
        lines += [f"[hooks.state.{_toml_str(key)}]", f"trusted_hash = {_toml_str(digest)}"]
    lines.append(TOML_END)
    return "\n".join(lines) + "\n"


def codex_hook_hashes(binary: str, cwd: str) -> dict[str, str]:
    """Codex's own trust key -> hash of each of our hooks, from ``codex app-server``
    (``hooks/list``). Empty when it cannot be asked."""
    import select

    env = {**os.environ, "CODEX_HOME": str(codex_home())}
    try:
        proc = subprocess.Popen(
            [binary, "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            text=True,
        )
    except OSError:
        return {}
    assert proc.stdin is not None and proc.stdout is not None
    out: dict[str, str] = {}
    deadline = time.monotonic() + CODEX_APP_SERVER_TIMEOUT_S

    def send(msg: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()

    def answer(want: int) -> dict[str, Any] | None:
        """The response to request ``want`` (notifications and other answers skipped)."""
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if not ready:
                continue
            line = proc.stdout.readline()
            if not line:
                return None
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("id") == want:
                return msg
        return None

    try:
        # One request at a time: a request sent before `initialize` is answered is refused.
        params = {"clientInfo": {"name": "memory-tool", "version": "1"}}
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        if answer(1) is None:
            return out
        send({"jsonrpc": "2.0", "method": "initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [cwd]}})
        msg = answer(2) or {}
        for entry in (msg.get("result") or {}).get("data") or []:
            for hook in entry.get("hooks") or []:
                if _is_ours(hook) and hook.get("key") and hook.get("currentHash"):
                    out[hook["key"]] = hook["currentHash"]
    finally:
        try:
            proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
    return out


def _install_codex(record: dict[str, Any], mcp: bool, report: AgentReport) -> None:
    hooks_path = codex_home() / "hooks.json"
    config_path = codex_home() / "config.toml"
    hooks_before = _read_text(hooks_path)
    config_before = _read_text(config_path)
    hooks_data = _parse_json(hooks_path, hooks_before)
    _check_toml(config_path, config_before)
    report.files += [hooks_path, config_path]
    if _write(hooks_path, hooks_before, _dump_json(_merge_hooks(hooks_data, CODEX)), record):
        report.changed.append(hooks_path)
    binary = find_binary(CODEX)
    trust: dict[str, str] = {}
    if binary:
        trust = codex_hook_hashes(binary, str(Path.home()))
    if trust:
        report.notes.append(
            f"trusted memory-tool's {len(trust)} hooks in Codex (hooks.state in {config_path}), "
            "so `codex` and `codex exec` run them"
        )
    else:
        report.notes.append(
            "Codex skips hooks it has not trusted: "
            + ("codex was not found on PATH" if not binary else "codex app-server did not answer")
            + "; run `codex`, open /hooks and trust memory-tool's hooks, or install again with "
            "codex on PATH (MEMORY_TOOL_CODEX_BIN names it)"
        )
    base = _without_block(config_before or "")
    if base and not base.endswith("\n"):
        base += "\n"
    after = base + ("\n" if base else "") + _codex_block(trust, mcp)
    _check_toml(config_path, after)
    if _write(config_path, config_before, after, record):
        report.changed.append(config_path)
    if mcp:
        report.notes.append(f"MCP server {MCP_NAME} registered in {config_path}")


# ---------------------------------------------------------------------------------------------
# Gemini
# ---------------------------------------------------------------------------------------------


def _install_gemini(record: dict[str, Any], mcp: bool, report: AgentReport) -> None:
    path = gemini_settings()
    before = _read_text(path)
    data = _merge_hooks(_parse_json(path, before), GEMINI)
    if mcp:
        servers = data.get("mcpServers")
        servers = dict(servers) if isinstance(servers, dict) else {}
        existing = servers.get(MCP_NAME)
        if existing is not None and "memory_tool.mcp" not in json.dumps(existing):
            raise SettingsError(
                f"{path}: an MCP server named {MCP_NAME} that is not ours is there; "
                "nothing was changed"
            )
        command, args = _mcp_args()
        servers[MCP_NAME] = {"command": command, "args": args}
        data["mcpServers"] = servers
        report.notes.append(f"MCP server {MCP_NAME} registered in {path}")
    report.files.append(path)
    if _write(path, before, _dump_json(data), record):
        report.changed.append(path)


def install(agent: str, *, mcp: bool = True) -> AgentReport:
    """Add memory-tool to ``agent``'s config (idempotent). Raises SettingsError, changing
    nothing, when a config file cannot be used."""
    if agent not in AGENT_HOOKS:
        raise SettingsError(f"unknown agent {agent!r}: use codex, gemini or all")
    records = _load_record()
    record = records.setdefault(agent, {})
    report = AgentReport(agent)
    if agent == CODEX:
        _install_codex(record, mcp, report)
    else:
        _install_gemini(record, mcp, report)
    _save_record(records)
    return report


def uninstall(agent: str) -> AgentReport:
    """Take out exactly what ``install`` added: a file still as we left it gets its original
    text back byte for byte (or is removed if we created it); otherwise only our entries go."""
    records = _load_record()
    record = records.pop(agent, {})
    report = AgentReport(agent)
    for name, entry in (record.get("files") or {}).items():
        path = Path(name)
        now = _read_text(path)
        if now is None:
            continue
        report.files.append(path)
        before = entry.get("before")
        if now == entry.get("after"):
            after = before
        elif path.suffix == ".toml":
            after = _without_block(now)
        else:
            data = _without_our_hooks(_parse_json(path, now))
            servers = data.get("mcpServers")
            if isinstance(servers, dict) and MCP_NAME in servers:
                servers = {k: v for k, v in servers.items() if k != MCP_NAME}
                data = (
                    {**data, "mcpServers": servers}
                    if servers
                    else {k: v for k, v in data.items() if k != "mcpServers"}
                )
            after = _dump_json(data)
        if after is None:
            path.unlink()
        elif after != now:
            mode = stat.S_IMODE(path.stat().st_mode)
            atomic_write_text(path, after, mode=mode)
            os.chmod(path, mode)
        else:
            continue
        report.changed.append(path)
        backup = path.with_name(path.name + ".memory-tool.bak")
        if backup.exists() and (after is None or backup.read_text(encoding="utf-8") == after):
            backup.unlink()
    _save_record(records)
    return report
