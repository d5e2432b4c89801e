"""Installing our hooks into Claude Code's ``settings.json`` and taking them out again.

Install merges: every other setting and hook stays exactly as it was, an owner-only backup is
written first, and installing twice changes nothing. Uninstall removes exactly the handlers we
added; if nothing else changed in between, the file comes back byte for byte (or disappears if we
created it). The backup goes too, unless it holds settings the file no longer has.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.errors import SettingsError
from ..base.fsutil import FILE_MODE, atomic_write_bytes, atomic_write_text, read_json_object
from ..base.resources import hook_script, templates_dir
from . import hook_http
from .command import AgentCommand, make_runnable, remove_link

# How an event reaches memory-tool (docs/hook-server.md):
# - COMMAND: always a command hook (a thin client of the server, in-process without one).
#   SessionStart: Claude Code sends no HTTP hook for it, and it starts the server the others talk
#   to. SessionEnd: an HTTP SessionEnd that finds no server prints "SessionEnd hook failed:
#   ECONNREFUSED" on the terminal; it runs once a session, so a command costs nothing that counts.
# - HTTP: an HTTP hook to the server on 127.0.0.1 (a few ms); a command hook when the server is
#   switched off at install (MEMORY_TOOL_SERVER=0 or server.enabled: false).
# - TOOL: an HTTP hook on every tool call; with the server off it is not installed at all: two
#   processes per tool call (~50 ms each) would add ~20 s to a session of 200 tool calls.
COMMAND, HTTP, TOOL = "command", "http", "tool"
# The one table of the hook events memory-tool answers: `install` writes settings.json from it and
# scripts/gen_plugin.py writes the plugin's hooks/hooks.json from it (a test keeps that file in
# step), so a new event is one line here (and its handler in dispatch.HANDLER_MODULES).
# event -> (script name, matcher, timeout seconds, transport). The script name is the event's
# script in the checkout's hooks/ folder, which installs before the package start-up ran
# (commands like "<python> -S <checkout>/hooks/stop.py" are recognised and replaced by it). The
# timeouts are ceilings for a stuck disk, not expected run times (SessionStart is tens of
# milliseconds, an HTTP hook a few). The tool events' matchers name the tools whose calls can
# bring memory (a file read or changed, a search naming files, a failed command, a subagent).
HOOK_EVENTS: dict[str, tuple[str, str | None, int, str]] = {
    "SessionStart": ("session_start.py", "startup|resume|clear|compact|fork", 15, COMMAND),
    "UserPromptSubmit": ("user_prompt_submit.py", None, 10, HTTP),
    "PreToolUse": ("", "Edit|Write|MultiEdit|NotebookEdit|Agent", 5, TOOL),
    "PostToolUse": ("", "Read|Edit|Write|MultiEdit|NotebookEdit|Grep|Glob", 5, TOOL),
    "PostToolUseFailure": ("", "Bash", 5, TOOL),
    "Stop": ("stop.py", None, 15, HTTP),
    "SessionEnd": ("session_end.py", None, 5, COMMAND),
    "SubagentStart": ("subagent_start.py", None, 10, HTTP),
    "PreCompact": ("pre_compact.py", None, 10, HTTP),
    "PostCompact": ("post_compact.py", None, 10, HTTP),
}
# Files from templates/ that install puts under the Claude config folder (skills, …).
INSTALLED_TEMPLATE_FILES = ("skills/memory-recall/SKILL.md",)


@dataclass
class InstallPlan:
    settings_path: Path
    before: str | None
    after: str
    commands: dict[str, str]
    files: list[tuple[Path, str]] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    agent: AgentCommand | None = None  # the `memory-tool` the brief names (not on a dry run)

    @property
    def changes(self) -> bool:
        return self.before != self.after


def record_file() -> Path:
    return paths.install_record()


def backup_file(settings_path: Path) -> Path:
    return settings_path.with_name(settings_path.name + ".memory-tool.bak")


def _private_mode(path: Path) -> int:
    """``path``'s permission bits cut to owner-only: settings.json can hold API keys (its
    ``env`` block), so a copy of it is never readable by anyone else, whatever the original's."""
    return stat.S_IMODE(path.stat().st_mode) & FILE_MODE


def _write_backup(path: Path) -> None:
    """The settings as they were, less our hook secret (it belongs in settings.json only)."""
    raw = path.read_bytes()
    if hook_http.SECRET_ENV.encode() in raw:
        with contextlib.suppress(SettingsError):
            _, data = _read_settings(path)
            raw = _dump(_without_secret(data)).encode("utf-8")
    atomic_write_bytes(backup_file(path), raw, _private_mode(path))


def _write_settings(path: Path, text: str) -> None:
    """settings.json is the user's file: it keeps its mode (a new one is owner-only, since it
    can hold API keys in its "env" block)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mode = FILE_MODE
    atomic_write_text(path, text, mode)


def _tighten(path: Path) -> None:
    """A backup written by an older version was world-readable (0644): owner-only from now on."""
    with contextlib.suppress(OSError):
        os.chmod(path, _private_mode(path))


def hook_command(event: str) -> str:
    """The command Claude Code runs for ``event``: this environment's interpreter on the
    package's start-up script, so the hooks work wherever the package is installed (a checkout,
    a venv, pipx, ``uv tool``). ``-S`` (about 10 ms less per hook) only when the start-up finds
    every dependency without ``site``."""
    flag = "-S " if fast_start_works(sys.executable) else ""
    return f'"{sys.executable}" {flag}"{hook_script()}" {event}'


def http_hooks_on() -> bool:
    """Whether install writes HTTP hooks: the server is not switched off (``MEMORY_TOOL_SERVER=0``
    or ``server.enabled: false``)."""
    from ..base.config import load_config
    from .client import disabled

    if disabled():
        return False
    return bool(load_config().get("server", {}).get("enabled", True))


def http_handler(event: str, port: int, timeout: int) -> dict[str, Any]:
    """The HTTP hook for ``event``: the same object in settings.json and the plugin's hooks.json,
    so Claude Code, finding it in both, runs it once. The secret is named, not written: Claude
    Code fills it from settings.json's env block (``allowedEnvVars``)."""
    return {
        "type": "http",
        "url": hook_http.hook_url(event, port),
        "headers": {"X-Memory-Tool-Secret": f"${{{hook_http.SECRET_ENV}}}"},
        "allowedEnvVars": [hook_http.SECRET_ENV],
        "timeout": timeout,
    }


def handlers_for(
    command_of: Callable[[str], str], port: int, http: bool
) -> dict[str, dict[str, Any]]:
    """event -> the hook group to install (matcher and handler), from HOOK_EVENTS."""
    out: dict[str, dict[str, Any]] = {}
    for event, (_, matcher, timeout, transport) in HOOK_EVENTS.items():
        if transport == TOOL and not http:
            continue
        handler: dict[str, Any]
        if transport == COMMAND or not http:
            handler = {"type": "command", "command": command_of(event), "timeout": timeout}
        else:
            handler = http_handler(event, port, timeout)
        group: dict[str, Any] = {}
        if matcher:
            group["matcher"] = matcher
        group["hooks"] = [handler]
        out[event] = group
    return out


def _is_our_http(handler: dict[str, Any]) -> bool:
    """An HTTP hook of ours: to the loopback server's /hook/ path with our secret header."""
    url = handler.get("url")
    headers = handler.get("headers")
    return (
        handler.get("type") == "http"
        and isinstance(url, str)
        and url.startswith(f"http://{hook_http.LOOPBACK}:")
        and hook_http.PATH_PREFIX in url
        and isinstance(headers, dict)
        and "X-Memory-Tool-Secret" in headers
    )


def new_secret() -> str:
    import secrets

    return secrets.token_urlsafe(32)


def add_secret() -> bool:
    """Put a hook secret into settings.json's env block when it has none (the plugin's route:
    its hooks.json names the secret, and only settings.json can hold it). True when written;
    Claude Code reads it at the next session's start. `memory-tool uninstall` takes it out."""
    path = paths.settings_file()
    try:
        before, data = _read_settings(path)
    except SettingsError:
        return False  # the person's file does not parse: leave it alone
    env = data.get("env")
    if env is not None and not isinstance(env, dict):
        return False
    if hook_http.read_secret(path) is not None:
        return False
    data.setdefault("env", {})[hook_http.SECRET_ENV] = new_secret()
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_settings(path, _dump(data))
    os.chmod(path, stat.S_IMODE(path.stat().st_mode) & FILE_MODE)
    return True


@cache
def fast_start_works(python: str) -> bool:
    """Whether ``python -S hook.py`` finds the package and every dependency a hook may import.
    Asked of the real start-up (``--probe``), not guessed: a ``pip install --user`` or a distro's
    dist-packages keeps modules where the start-up does not look."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    try:
        proc = subprocess.run(
            [python, "-S", str(hook_script()), "--probe"],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def _read_settings(path: Path) -> tuple[str | None, dict[str, Any]]:
    return read_json_object(path, "fix it by hand, nothing was changed.")


def _check_hooks_shape(path: Path, data: dict[str, Any]) -> None:
    """Refuse (naming the key) a ``hooks`` value Claude Code's settings schema does not allow:
    merging our handlers into it would mean guessing what the person meant."""

    def wrong(key: str, expected: str, value: Any) -> SettingsError:
        found = "null" if value is None else type(value).__name__
        names = {"dict": "an object", "list": "a list", "str": "a string", "bool": "a boolean"}
        found = names.get(found, "a number" if found in ("int", "float") else found)
        return SettingsError(
            f'{path}: "{key}" must be {expected}, not {found}; fix it by hand (see '
            "https://docs.claude.com/en/docs/claude-code/hooks), nothing was changed."
        )

    if "hooks" not in data:
        return
    hooks = data["hooks"]
    if not isinstance(hooks, dict):
        raise wrong("hooks", "an object of event names to lists of hook groups", hooks)
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise wrong(f"hooks.{event}", 'a list of hook groups ({"hooks": [...]})', groups)
        for i, group in enumerate(groups):
            where = f"hooks.{event}[{i}]"
            if not isinstance(group, dict):
                raise wrong(where, 'a hook group object ({"hooks": [...]})', group)
            handlers = group.get("hooks")
            if not isinstance(handlers, list):
                raise wrong(f"{where}.hooks", "a list of hook objects", handlers)
            for j, handler in enumerate(handlers):
                if not isinstance(handler, dict):
                    raise wrong(
                        f"{where}.hooks[{j}]", 'an object ({"type": "command", ...})', handler
                    )


# How our hook commands look in every version so far: the start-up script inside the package
# (now), `-m memory_tool.runtime.dispatch` (a checkout without hooks/), `-m memory_tool.hooks`
# (before the runtime package), and the checkout's hooks/<event>.py (before the start-up moved
# into the package).
START_UP_SCRIPT = os.path.join("memory_tool", "runtime", "hook.py")


def _is_ours(command: Any, ours: set[str]) -> bool:
    if not isinstance(command, str):
        return False
    return (
        command in ours
        or START_UP_SCRIPT in command
        or "memory_tool.hooks" in command
        or "memory_tool.runtime" in command
        or (
            "memory-tool" in command
            and "/hooks/" in command
            and command.rstrip('"').endswith(tuple(s for s, _, _, _ in HOOK_EVENTS.values() if s))
        )
    )


def _is_our_handler(handler: dict[str, Any], ours: set[str]) -> bool:
    return _is_ours(handler.get("command"), ours) or _is_our_http(handler)


def _without_ours(data: dict[str, Any], ours: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(data))
    hooks: Any = out.get("hooks")
    for event in list(hooks) if isinstance(hooks, dict) else []:
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept_groups.append(group)
                continue
            handlers = [
                h
                for h in group["hooks"]
                # Not an object: not ours, kept as it is (uninstall never refuses to run).
                if not (isinstance(h, dict) and _is_our_handler(h, ours))
            ]
            if handlers:
                kept_groups.append({**group, "hooks": handlers})
            elif len(handlers) == len(group["hooks"]):
                kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if isinstance(hooks, dict) and not hooks:
        del out["hooks"]
    return _without_secret(out)


def _without_secret(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` less our hook secret (and the env block, when the secret was all it held)."""
    out: dict[str, Any] = json.loads(json.dumps(data))
    env = out.get("env")
    if isinstance(env, dict) and hook_http.SECRET_ENV in env:
        del env[hook_http.SECRET_ENV]
        if not env:
            del out["env"]
    return out


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _load_record() -> dict[str, Any]:
    try:
        data: Any = json.loads(record_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def plan_install() -> InstallPlan:
    path = paths.settings_file()
    before, data = _read_settings(path)
    _check_hooks_shape(path, data)
    record = _load_record()
    ours = set(record.get("commands", {}).values()) | set(record.get("all_commands", []))
    commands = {event: hook_command(event) for event in HOOK_EVENTS}
    merged = _without_ours(data, ours | set(commands.values()))
    http = http_hooks_on()
    hooks = merged.setdefault("hooks", {})
    for event, group in handlers_for(commands.__getitem__, hook_http.port(), http).items():
        hooks.setdefault(event, []).append(group)
    if http:
        # The secret stays what it was (installing twice changes nothing); a new one otherwise.
        old_env = data.get("env")
        secret = old_env.get(hook_http.SECRET_ENV) if isinstance(old_env, dict) else None
        if not (isinstance(secret, str) and len(secret) >= 16):
            secret = new_secret()
        env = merged.get("env")
        if not isinstance(env, dict):
            env = merged["env"] = {}
        env[hook_http.SECRET_ENV] = secret
    after = _dump(merged)
    if before is not None and json.loads(before or "{}") == merged:
        after = before  # already installed exactly like this: leave the bytes alone
    files = [
        (paths.config_dir() / rel, (templates_dir() / rel).read_text(encoding="utf-8"))
        for rel in INSTALLED_TEMPLATE_FILES
        if (templates_dir() / rel).exists()
    ]
    return InstallPlan(path, before, after, commands, files)


def install(dry_run: bool = False) -> InstallPlan:
    plan = plan_install()
    if dry_run:
        return plan
    record = _load_record()
    path = plan.settings_path
    if plan.changes:
        if plan.before is not None:
            _write_backup(path)
        _write_settings(path, plan.after)
    if hook_http.SECRET_ENV in plan.after and path.exists():
        # The hook secret is readable by its owner only; the mode it had comes back at uninstall.
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & ~FILE_MODE:
            record.setdefault("settings_mode", mode)
            os.chmod(path, mode & FILE_MODE)
    _tighten(backup_file(path))
    # Every command we ever put in, so that uninstall recognises an older install's handlers
    # (in settings.json or in the backup) as ours too.
    installed = set(record.get("all_commands", [])) | set(record.get("commands", {}).values())
    record["all_commands"] = sorted(installed | set(plan.commands.values()))
    if "original" not in record:
        original = plan.before
        record["original"] = (
            None if original is None else base64.b64encode(original.encode("utf-8")).decode()
        )
    record["commands"] = plan.commands
    record["installed_sha"] = hashlib.sha256(plan.after.encode("utf-8")).hexdigest()
    written = []
    ours = {path for path, _ in record.get("files", [])}
    for target, text in plan.files:
        # Never overwrite a file of the user's that happens to sit where ours would go.
        if (
            target.exists()
            and str(target) not in ours
            and target.read_text(errors="replace") != text
        ):
            plan.skipped.append(target)
            continue
        atomic_write_text(target, text)
        written.append([str(target), hashlib.sha256(text.encode("utf-8")).hexdigest()])
    record["files"] = written
    plan.agent = make_runnable()
    record["agent_command"] = plan.agent.command
    record["agent_script"] = plan.agent.script
    record["agent_link"] = plan.agent.link
    atomic_write_text(record_file(), json.dumps(record, indent=2) + "\n")
    return plan


@dataclass
class UninstallReport:
    settings_path: Path
    removed_handlers: int
    restored_exact: bool
    removed_files: list[str]
    kept_files: list[str]
    kept_backup: Path | None = None


def uninstall() -> UninstallReport:
    path = paths.settings_file()
    record = _load_record()
    ours = set(record.get("commands", {}).values()) | set(record.get("all_commands", []))
    before, data = _read_settings(path)
    cleaned = _without_ours(data, ours)
    removed = _count_handlers(data) - _count_handlers(cleaned)
    restored = False
    original_b64 = record.get("original", "absent")
    original: str | None
    if original_b64 == "absent":
        original = "\0"  # no record: we cannot know the original bytes
    elif original_b64 is None:
        original = None
    else:
        original = base64.b64decode(original_b64).decode("utf-8")
    if before is not None:
        if original is None and cleaned == {}:
            path.unlink()
            restored = True
        elif original not in (None, "\0") and _same(original, cleaned):
            if before != original:
                _write_settings(path, original)
            restored = True
        elif removed or cleaned != data:  # handlers, or only the secret (the plugin's)
            _write_settings(path, _dump(cleaned))
    mode = record.get("settings_mode")
    if isinstance(mode, int) and path.exists():
        with contextlib.suppress(OSError):
            os.chmod(path, mode)
    kept_backup = _settle_backup(path, ours)
    removed_files, kept_files = [], []
    link = remove_link(record)
    if link is not None:
        removed_files.append(link)
    for target, sha in record.get("files", []):
        p = Path(target)
        try:
            if hashlib.sha256(p.read_bytes()).hexdigest() == sha:
                p.unlink()
                removed_files.append(target)
                _prune_empty(p.parent, paths.config_dir())
            else:
                kept_files.append(target)
        except OSError:
            continue
    record_file().unlink(missing_ok=True)
    return UninstallReport(path, removed, restored, removed_files, kept_files, kept_backup)


def _settle_backup(path: Path, ours: set[str]) -> Path | None:
    """After uninstall: delete the backup when, our handlers taken out, it holds the settings
    the file now holds (it is a leftover of ours); otherwise it has something the person may
    want back: keep it, owner-only, and return its path so the CLI can say where it is."""
    backup = backup_file(path)
    if not backup.exists():
        return None
    try:
        _, now = _read_settings(path)
        _, saved = _read_settings(backup)
    except SettingsError:
        saved, now = {"unreadable": True}, {}
    if _without_ours(saved, ours) == _without_ours(now, ours):
        with contextlib.suppress(OSError):
            backup.unlink()
            return None
    _tighten(backup)
    return backup


def _same(original: str, cleaned: dict[str, Any]) -> bool:
    try:
        return bool(json.loads(original or "{}") == cleaned)
    except ValueError:
        return False


def _count_handlers(data: dict[str, Any]) -> int:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    return sum(
        len(g.get("hooks", []))
        for groups in hooks.values()
        if isinstance(groups, list)
        for g in groups
        if isinstance(g, dict) and isinstance(g.get("hooks"), list)
    )


def _prune_empty(folder: Path, stop: Path) -> None:
    while folder != stop and stop in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
