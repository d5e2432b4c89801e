"""install/uninstall keep every other setting exactly, and leave no trace."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memory_tool.base import paths
from memory_tool.base.errors import SettingsError
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
    assert any("session_start.py" in c for c in commands)
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
    assert sum("session_start.py" in c for c in handlers) == 1


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
    assert "session_start.py" in result.output
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


def test_hook_commands_run_the_shims_without_site() -> None:
    plan = settings.install()
    for event in ("SessionStart", "UserPromptSubmit"):
        assert " -S " in plan.commands[event]
        assert plan.commands[event].endswith('.py"')


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
def test_install_and_uninstall_keep_the_mode_of_your_settings_file(settings_mode: int) -> None:
    path = write_settings(USER_SETTINGS)
    os.chmod(path, settings_mode)
    assert settings.install().changes
    assert mode(path) == settings_mode
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
