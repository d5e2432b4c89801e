"""The Claude Code plugin in plugin/: its manifests come from the package's tables, its launchers
run the private environment's hook start-up, and its set-up script (runtime/plugin_env.py)
answers every event before that environment exists. The end-to-end route (marketplace add,
install, the environment built, sessions) is tests/e2e/test_plugin_install.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, start_payload, write_memory

import memory_tool
from memory_tool.base import paths
from memory_tool.base.config import HOOK_SERVER_PORT
from memory_tool.base.resources import hook_script
from memory_tool.runtime import plugin, plugin_env, settings

PLUGIN = REPO / plugin.PLUGIN_DIR
HOOK_LAUNCHER = PLUGIN / "scripts" / "hook"
SET_UP = REPO / "memory_tool" / "runtime" / "plugin_env.py"
VERSION = memory_tool.__version__


def test_the_manifests_are_what_the_generator_makes_now() -> None:
    for rel, text in plugin.generated_files().items():
        assert (REPO / rel).read_text(encoding="utf-8") == text, (
            f"{rel} is out of date: run .venv/bin/python scripts/gen_plugin.py"
        )


def test_one_version_everywhere() -> None:
    project = re.search(r'(?m)^version = "([^"]+)"', (REPO / "pyproject.toml").read_text())
    assert project is not None
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert project[1] == VERSION == manifest["version"]
    assert market["plugins"][0]["version"] == VERSION


def test_the_plugin_hooks_the_events_install_writes_with_their_matchers_and_timeouts() -> None:
    """hooks/hooks.json and settings.json come from one table: same events, same groups."""
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    installed = json.loads(settings.plan_install().after)["hooks"]
    assert list(hooks) == list(settings.HOOK_EVENTS) == list(installed)
    for event in settings.HOOK_EVENTS:
        (group,) = hooks[event]
        (ours,) = installed[event]
        assert group.get("matcher") == ours.get("matcher")
        (handler,) = group["hooks"]
        (mine,) = ours["hooks"]
        assert handler["timeout"] == mine["timeout"]
        if settings.HOOK_EVENTS[event][3] == settings.COMMAND:
            assert handler["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/scripts/hook" {event} {VERSION}'
        else:  # the same HTTP hook (Claude Code runs it once), on the default port
            port = int(mine["url"].split(":")[2].split("/")[0])
            assert mine == settings.http_handler(event, port, mine["timeout"])
            assert handler == settings.http_handler(event, HOOK_SERVER_PORT, mine["timeout"])


def test_the_plugin_carries_the_package_source_and_its_launchers() -> None:
    src = PLUGIN / "src"
    assert (src / "pyproject.toml").resolve() == (REPO / "pyproject.toml").resolve()
    assert (src / "memory_tool").resolve() == Path(memory_tool.__file__).parent.resolve()
    assert (src / "memory_tool" / "runtime" / "plugin_env.py").is_file()
    for rel in ("scripts/hook", "scripts/mcp", "bin/memory-tool"):
        path = PLUGIN / rel
        assert os.access(path, os.X_OK), rel
        subprocess.run(["sh", "-n", str(path)], check=True)
    skill = PLUGIN / "skills" / "memory-recall" / "SKILL.md"
    assert not skill.is_symlink()  # an installed plugin does not follow a link out of itself


# --- the launcher and the set-up script, without building anything ---------------------------


def plugin_env_vars(data: Path, root: Path = PLUGIN) -> dict[str, str]:
    return {**os.environ, "CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_PLUGIN_ROOT": str(root)}


def launch(event: str, version: str, env: dict[str, str], payload: object) -> dict[str, object]:
    proc = subprocess.run(
        [str(HOOK_LAUNCHER), event, version],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


def fake_ready_env(data: Path, version: str = VERSION) -> None:
    """A stamp naming this test environment's interpreter and start-up, as a finished build
    names its own."""
    data.mkdir(parents=True, exist_ok=True)
    plugin_env.write_stamp(
        str(data),
        {"VERSION": version, "PYTHON": sys.executable, "FLAGS": "-S",
         "HOOK": str(hook_script()), "BIN": str(Path(sys.executable).parent)},
    )  # fmt: skip


def context_of(answer: dict[str, object]) -> str:
    out = answer.get("hookSpecificOutput")
    return str(out.get("additionalContext", "")) if isinstance(out, dict) else ""


def test_a_ready_environment_answers_through_the_launcher(project: Path, tmp_path: Path) -> None:
    write_memory(paths.project_memory_dir(project), "feedback_p.md", "Plugin rule ZPLUGQ.",
                 type_="feedback")  # fmt: skip
    data = tmp_path / "data"
    fake_ready_env(data)
    answer = launch("SessionStart", VERSION, plugin_env_vars(data), start_payload(project))
    assert "ZPLUGQ" in context_of(answer)


def test_stamp_values_survive_quotes_and_spaces(tmp_path: Path) -> None:
    data = tmp_path / "it's a dir"
    data.mkdir()
    python = data / "bin" / "py'thon"
    python.parent.mkdir()
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    hook = data / "hook.py"
    hook.write_text("")
    values = {"VERSION": "1.2", "PYTHON": str(python), "FLAGS": "", "HOOK": str(hook)}
    plugin_env.write_stamp(str(data), values)
    stamp = plugin_env.read_stamp(str(data))
    assert stamp is not None and stamp["PYTHON"] == str(python) and stamp["VERSION"] == "1.2"
    # The shell reads it the same way.
    shown = subprocess.run(
        ["sh", "-c", '. "$1/env.sh"; printf %s "$MEMORY_TOOL_ENV_PYTHON"', "sh", str(data)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert shown == str(python)
    hook.unlink()
    assert plugin_env.read_stamp(str(data)) is None  # its start-up script is gone
    hook.write_text("")
    python.unlink()
    assert plugin_env.read_stamp(str(data)) is None  # its interpreter is gone


def broken_root(tmp_path: Path) -> Path:
    """A plugin folder with its set-up script but no package to build: a build fails at once,
    without pip."""
    root = tmp_path / "broken-plugin"
    script = root / "src" / "memory_tool" / "runtime" / "plugin_env.py"
    script.parent.mkdir(parents=True)
    script.write_text(SET_UP.read_text())
    return root


def wait_for(predicate: object, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


def test_before_the_environment_exists_the_session_gets_one_line_and_nothing_breaks(
    project: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    env = plugin_env_vars(data, broken_root(tmp_path))
    prompt = {"session_id": "s1", "cwd": str(project), "prompt": "the login is broken"}
    for event in ("UserPromptSubmit", "Stop", "SessionEnd"):
        assert launch(event, VERSION, env, prompt) == {}  # silent, and no build started
    assert not (data / plugin_env.LOG).exists()

    answer = launch("SessionStart", VERSION, env, start_payload(project))
    line = context_of(answer)
    assert line == answer["systemMessage"]
    assert "setting up its Python environment" in line and "next session" in line
    assert len(line.splitlines()) == 1
    # The build it started fails (no source here); the next session says so and retries.
    failed = data / plugin_env.FAILED
    assert wait_for(failed.exists), (data / plugin_env.LOG).read_text()
    assert "no package source" in (data / plugin_env.LOG).read_text()
    assert wait_for(lambda: not plugin_env.building(str(data)))
    again = context_of(launch("SessionStart", VERSION, env, start_payload(project)))
    assert "The last attempt failed (no package source" in again and "retrying" in again


def test_while_a_new_version_builds_the_previous_environment_keeps_answering(
    project: Path, tmp_path: Path
) -> None:
    write_memory(paths.project_memory_dir(project), "feedback_u.md", "Upgrade rule ZUPGQ.",
                 type_="feedback")  # fmt: skip
    data = tmp_path / "data"
    fake_ready_env(data, version="0.0.9")
    env = plugin_env_vars(data, broken_root(tmp_path))
    answer = launch("SessionStart", VERSION, env, start_payload(project))
    assert "ZUPGQ" in context_of(answer)  # the 0.0.9 environment answered
    assert wait_for((data / plugin_env.FAILED).exists)  # and a build of VERSION was tried
    assert plugin_env.last_failure(str(data), VERSION) is not None


def test_a_plugin_folder_without_its_set_up_script_still_exits_0(tmp_path: Path) -> None:
    """Python exits 2 on a missing script, and 2 from UserPromptSubmit would erase the prompt."""
    env = plugin_env_vars(tmp_path / "data", tmp_path / "empty")
    for event in ("SessionStart", "UserPromptSubmit"):
        assert launch(event, VERSION, env, {"prompt": "x"}) == {}


def test_outside_a_plugin_the_set_up_script_does_nothing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_PLUGIN_")}
    proc = subprocess.run(
        [sys.executable, str(SET_UP), "hook", "SessionStart", VERSION],
        input=b"{}", capture_output=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout == b""


@pytest.mark.parametrize("stamp_version", [None, "0.0.1"])
def test_the_cli_launcher_finds_the_environment_by_its_stamp(
    tmp_path: Path, stamp_version: str | None
) -> None:
    """The Bash tool has no CLAUDE_PLUGIN_DATA: bin/memory-tool finds the data folder under the
    config folder; without a stamp it says where the environment comes from."""
    config = paths.config_dir()
    data = config / "plugins" / "data" / "memory-tool-somemarket"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_PLUGIN_")}
    if stamp_version:
        fake_ready_env(data, stamp_version)
    proc = subprocess.run(
        [str(PLUGIN / "bin" / "memory-tool"), "--help"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    if stamp_version:
        assert proc.returncode == 0 and "Usage: memory-tool" in proc.stdout
    else:
        assert proc.returncode == 1 and "not set up yet" in proc.stderr
