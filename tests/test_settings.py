"""install/uninstall keep every other setting exactly, and leave no trace."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import memory_tool
from memory_tool.base import paths
from memory_tool.base.errors import SettingsError
from memory_tool.base.resources import hook_script
from memory_tool.cli.main import main
from memory_tool.runtime import settings

USER_SETTINGS = """{
  "model": "opus",
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "SessionStart": [
      {"matcher": "startup", "hooks": [{"type": "command", "command": "echo mine", "timeout": 3}]}
    ],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]
  }
}
"""


def write_settings(text: str) -> Path:
    path = paths.settings_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_install_merges_and_uninstall_restores_bytes() -> None:
    path = write_settings(USER_SETTINGS)
    settings.install()
    data = json.loads(path.read_text())
    assert data["model"] == "opus" and data["permissions"] == {"allow": ["Bash(ls:*)"]}
    commands = [h["command"] for g in data["hooks"]["SessionStart"] for h in g["hooks"]]
    assert "echo mine" in commands
    assert settings.hook_command("SessionStart") in commands
    assert data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "guard.sh"
    assert path.with_name("settings.json.memory-tool.bak").read_text() == USER_SETTINGS
    settings.uninstall()
    assert path.read_text() == USER_SETTINGS
    files = sorted(p.name for p in path.parent.iterdir() if p.is_file())
    assert files == ["settings.json"]  # the backup went with our edit


def test_install_is_idempotent() -> None:
    path = write_settings(USER_SETTINGS)
    settings.install()
    once = path.read_bytes()
    plan = settings.install()
    assert not plan.changes
    assert path.read_bytes() == once
    handlers = [h["command"] for g in json.loads(once)["hooks"]["SessionStart"] for h in g["hooks"]]
    assert handlers.count(settings.hook_command("SessionStart")) == 1


def test_install_then_uninstall_without_prior_settings_leaves_nothing() -> None:
    path = paths.settings_file()
    settings.install()
    assert path.exists()
    settings.uninstall()
    assert not path.exists()


def test_user_changes_made_after_install_survive_uninstall() -> None:
    path = write_settings(USER_SETTINGS)
    settings.install()
    data = json.loads(path.read_text())
    data["theme"] = "dark"
    path.write_text(json.dumps(data, indent=2))
    settings.uninstall()
    after = json.loads(path.read_text())
    assert after["theme"] == "dark"
    assert after["hooks"]["SessionStart"] == json.loads(USER_SETTINGS)["hooks"]["SessionStart"]
    assert "session_start.py" not in path.read_text()


def test_invalid_settings_are_never_touched() -> None:
    path = write_settings("{ not json")
    with pytest.raises(SettingsError):
        settings.install()
    assert path.read_text() == "{ not json"
    result = CliRunner().invoke(main, ["install"])
    assert result.exit_code == 1 and "not valid JSON" in result.output


def test_dry_run_changes_nothing() -> None:
    path = write_settings(USER_SETTINGS)
    result = CliRunner().invoke(main, ["install", "--dry-run"])
    assert result.exit_code == 0
    assert json.dumps(settings.hook_command("SessionStart"))[1:-1] in result.output
    assert path.read_text() == USER_SETTINGS


def test_install_places_the_skill_and_uninstall_removes_it() -> None:
    skill = paths.config_dir() / "skills" / "memory-recall" / "SKILL.md"
    settings.install()
    assert "memory-tool search" in skill.read_text()
    settings.uninstall()
    assert not skill.exists()
    assert not (paths.config_dir() / "skills").exists()


def test_a_users_own_skill_file_is_never_overwritten() -> None:
    skill = paths.config_dir() / "skills" / "memory-recall" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("my own notes")
    plan = settings.install()
    assert skill in plan.skipped
    settings.uninstall()
    assert skill.read_text() == "my own notes"


def test_hook_commands_run_the_packages_start_up_without_site() -> None:
    """Every event's command is this environment's interpreter on the start-up script inside the
    package (nothing of a checkout's hooks/ folder), with -S where the start-up finds every
    dependency without site, as it does in the test environment."""
    plan = settings.install()
    assert set(plan.commands) == set(settings.HOOK_EVENTS)
    for event, command in plan.commands.items():
        assert command == f'"{sys.executable}" -S "{hook_script()}" {event}'
        assert "/hooks/" not in command
    assert hook_script().is_relative_to(Path(memory_tool.__file__).parent)


def test_the_fast_start_is_used_only_when_the_start_up_finds_everything(tmp_path: Path) -> None:
    """The -S decision is the real start-up's: a layout where `python -S hook.py` cannot find
    the package gets a command with site, and the probe names what it missed."""
    fake = tmp_path / "pkg" / "memory_tool" / "runtime" / "hook.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(hook_script().read_text())
    probe = subprocess.run(
        [sys.executable, "-S", str(fake), "--probe"], capture_output=True, text=True, check=False
    )
    assert probe.returncode == 1
    assert "memory_tool.runtime.dispatch" in probe.stderr
    assert settings.fast_start_works(sys.executable)


def test_without_the_fast_start_the_command_keeps_site(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings, "fast_start_works", lambda python: False)
    command = settings.hook_command("Stop")
    assert command == f'"{sys.executable}" "{hook_script()}" Stop'
    proc = subprocess.run(command, shell=True, input=b"{}", capture_output=True, check=False)
    assert proc.returncode == 0 and proc.stdout == b""


# Hook commands earlier versions wrote: a checkout's hooks/ scripts (with and without -S), the
# dispatcher as a module, and the pre-runtime module.
OLD_COMMANDS = {
    "SessionStart": '"/opt/memory-tool/.venv/bin/python" -S "/opt/memory-tool/hooks/'
    'session_start.py"',
    "UserPromptSubmit": '"/usr/bin/python3" "/home/u/memory-tool/hooks/user_prompt_submit.py"',
    "Stop": '"/opt/py/bin/python" -m memory_tool.runtime.dispatch Stop',
    "SessionEnd": "/usr/bin/python3 -m memory_tool.hooks SessionEnd",
}


def test_an_install_by_an_earlier_version_is_upgraded_in_place() -> None:
    """One set of hooks after install: every command an earlier version wrote is replaced by
    the package's own, the person's own hooks stay, and uninstall takes ours out."""
    data = json.loads(USER_SETTINGS)
    for event, command in OLD_COMMANDS.items():
        group = {"hooks": [{"type": "command", "command": command, "timeout": 9}]}
        data["hooks"].setdefault(event, []).append(group)
    path = write_settings(json.dumps(data, indent=2))
    settings.install()
    after = json.loads(path.read_text())
    for event in settings.HOOK_EVENTS:
        handlers = [h for g in after["hooks"][event] for h in g["hooks"]]
        theirs = [h for g in json.loads(USER_SETTINGS)["hooks"].get(event, []) for h in g["hooks"]]
        mine = [h for h in handlers if h not in theirs]
        if settings.HOOK_EVENTS[event][3] == settings.COMMAND:
            assert [h["command"] for h in mine] == [settings.hook_command(event)], event
        else:
            assert [h["type"] for h in mine] == ["http"], event
    # The person's own PreToolUse hook stays, first; ours comes after it.
    assert after["hooks"]["PreToolUse"][0] == data["hooks"]["PreToolUse"][0]
    settings.uninstall()
    left = json.loads(path.read_text())
    assert left["hooks"] == json.loads(USER_SETTINGS)["hooks"]


def test_an_old_checkout_command_still_answers_until_install_replaces_it(project: Path) -> None:
    """Installs made before the start-up moved into the package run hooks/<event>.py of their
    checkout; those scripts hand over to the package, so a `git pull` alone breaks nothing."""
    from helpers import REPO, start_payload, write_memory

    write_memory(paths.project_memory_dir(project), "feedback_old.md", "Keep ZOLDQ.",
                 type_="feedback")  # fmt: skip
    old = f'"{sys.executable}" -S "{REPO / "hooks" / "session_start.py"}"'
    proc = subprocess.run(
        old, shell=True, input=json.dumps(start_payload(project)).encode(),
        capture_output=True, check=False, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0
    assert "ZOLDQ" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


# Valid JSON that Claude Code's settings schema does not allow, and the key a person must fix.
MALFORMED_HOOKS = [
    ('{"hooks": null}', '"hooks"'),
    ('{"hooks": []}', '"hooks"'),
    ('{"hooks": "Stop"}', '"hooks"'),
    ('{"hooks": {"Stop": {"a": 1}}}', '"hooks.Stop"'),
    ('{"hooks": {"SessionStart": null}}', '"hooks.SessionStart"'),
    ('{"hooks": {"PreToolUse": [1]}}', '"hooks.PreToolUse[0]"'),
    ('{"hooks": {"Stop": [{"hooks": 3}]}}', '"hooks.Stop[0].hooks"'),
    ('{"hooks": {"Stop": [{"matcher": "x"}]}}', '"hooks.Stop[0].hooks"'),
    ('{"hooks": {"Stop": [{"hooks": ["x"]}]}}', '"hooks.Stop[0].hooks[0]"'),
]


@pytest.mark.parametrize(("text", "key"), MALFORMED_HOOKS)
def test_install_names_the_wrong_key_of_a_strange_settings_file_and_writes_nothing(
    text: str, key: str
) -> None:
    path = write_settings(text)
    result = CliRunner().invoke(main, ["install"])
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert result.output.startswith("Error: ") and key in result.output
    assert "nothing was changed" in result.output
    assert path.read_text() == text
    assert sorted(p.name for p in paths.config_dir().rglob("*")) == ["settings.json"]
    assert not settings.record_file().exists()


@pytest.mark.parametrize(("text", "key"), MALFORMED_HOOKS)
def test_uninstall_leaves_a_strange_settings_file_as_it_is(text: str, key: str) -> None:
    path = write_settings(text)
    result = CliRunner().invoke(main, ["uninstall"])
    assert result.exit_code == 0, result.output
    assert path.read_text() == text


def test_uninstall_removes_our_hooks_beside_a_strange_event() -> None:
    path = write_settings(USER_SETTINGS)
    settings.install()
    data = json.loads(path.read_text())
    data["hooks"]["Notification"] = [{"hooks": ["not an object"]}, 7]
    data["hooks"]["PostToolUse"] = {"matcher": "Bash"}
    path.write_text(json.dumps(data, indent=2))
    result = CliRunner().invoke(main, ["uninstall"])
    assert result.exit_code == 0, result.output
    after = json.loads(path.read_text())
    assert "session_start.py" not in path.read_text()
    assert after["hooks"]["Notification"] == [{"hooks": ["not an object"]}, 7]
    assert after["hooks"]["PostToolUse"] == {"matcher": "Bash"}
    assert after["hooks"]["SessionStart"] == json.loads(USER_SETTINGS)["hooks"]["SessionStart"]


def backup_of(path: Path) -> Path:
    return path.with_name("settings.json.memory-tool.bak")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("settings_mode", "backup_mode"), [(0o644, 0o600), (0o400, 0o400)])
def test_the_settings_backup_is_readable_by_its_owner_only(
    settings_mode: int, backup_mode: int
) -> None:
    # settings.json can hold API keys in its "env" block.
    path = write_settings(USER_SETTINGS.replace('"model"', '"env": {"API_KEY": "k"}, "model"'))
    os.chmod(path, settings_mode)
    settings.install()
    assert mode(backup_of(path)) == backup_mode
    assert backup_of(path).read_bytes().startswith(b'{\n  "env": {"API_KEY": "k"}')


@pytest.mark.parametrize("settings_mode", [0o644, 0o640, 0o600])
def test_uninstall_gives_your_settings_file_its_mode_back(settings_mode: int) -> None:
    path = write_settings(USER_SETTINGS)
    os.chmod(path, settings_mode)
    assert settings.install().changes
    # It holds the hook secret now: owner-only while installed, its own mode back after.
    assert mode(path) == 0o600
    assert mode(backup_of(path)) == 0o600
    result = CliRunner().invoke(main, ["uninstall"])
    assert result.exit_code == 0, result.output
    assert path.read_text() == USER_SETTINGS and mode(path) == settings_mode


def test_install_tightens_a_world_readable_backup_left_by_an_older_version() -> None:
    path = write_settings(USER_SETTINGS)
    settings.install()
    os.chmod(backup_of(path), 0o644)
    assert not settings.install().changes
    assert mode(backup_of(path)) == 0o600


def test_uninstall_removes_a_backup_that_only_holds_our_older_hooks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Installed once from another checkout's Python, then again from this one: the backup of the
    # second install holds the first one's hooks.
    path = write_settings(USER_SETTINGS)
    with monkeypatch.context() as m:
        m.setattr(sys, "executable", "/elsewhere/.venv/bin/python")
        settings.install()
    settings.install()
    assert "/elsewhere/" in backup_of(path).read_text()
    result = CliRunner().invoke(main, ["uninstall"])
    assert result.exit_code == 0, result.output
    assert path.read_text() == USER_SETTINGS
    assert not backup_of(path).exists()
    assert "bak" not in result.output


def test_uninstall_keeps_a_backup_holding_settings_you_no_longer_have_and_says_where() -> None:
    path = write_settings(USER_SETTINGS)
    settings.install()
    data = json.loads(path.read_text())
    del data["permissions"]  # changed by hand after install: the backup still has them
    path.write_text(json.dumps(data, indent=2))
    os.chmod(backup_of(path), 0o644)  # as an older version left it
    result = CliRunner().invoke(main, ["uninstall"])
    assert result.exit_code == 0, result.output
    assert backup_of(path).read_text() == USER_SETTINGS
    assert mode(backup_of(path)) == 0o600
    assert f"kept {backup_of(path)}" in result.output


def test_uninstall_keeps_the_backup_when_settings_json_is_gone() -> None:
    path = write_settings(USER_SETTINGS)
    settings.install()
    path.unlink()
    result = CliRunner().invoke(main, ["uninstall"])
    assert result.exit_code == 0, result.output
    assert backup_of(path).read_text() == USER_SETTINGS
    assert f"kept {backup_of(path)}" in result.output


def test_install_alone_creates_the_palace_the_hooks_need() -> None:
    # install.sh runs `init` too; someone who runs `memory-tool install` by hand must not get
    # hooks without config.yaml and rooms.yaml.
    out = CliRunner().invoke(main, ["install"])
    assert out.exit_code == 0, out.output
    for name in ("config.yaml", "rooms.yaml", "rooms", "identity", "wiki"):
        assert (paths.state_root() / name).exists(), name
    assert "created the palace" in out.output
    again = CliRunner().invoke(main, ["install"])
    assert "created the palace" not in again.output
