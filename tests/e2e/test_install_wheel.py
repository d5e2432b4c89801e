"""The pip route: a wheel installed into a fresh virtual environment, no checkout on any path.

The wheel is built from a copy of the source, installed into a new venv in a temp folder, and
`memory-tool install` (that venv's console script) writes the hooks into a sandbox HOME; then the
real `claude -p` runs there. Upgrading (a newer wheel, install again) keeps one set of hooks.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from claude_sandbox import MEMORY_TOOL_ENV, REPO_ROOT, Sandbox, injected_by

from memory_tool.runtime.settings import HOOK_EVENTS

pytestmark = pytest.mark.e2e

# What a source distribution of the package holds: the package (templates inside) and its
# build metadata. Nothing else of the checkout goes into the wheel.
SOURCE_FILES = ("memory_tool", "pyproject.toml", "README.md")
# pip's own output is long; a failure shows its tail.
PIP_TAIL_CHARS = 3000


def build_wheel(dest: Path, version: str | None = None) -> Path:
    """A wheel built from a copy of the source (the checkout gets no build/ folder), with
    ``version`` written into the copy's pyproject.toml and __init__.py when given."""
    src = dest / "src"
    for name in SOURCE_FILES:
        path = REPO_ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            src.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / name)
    if version is not None:
        for rel in ("pyproject.toml", "memory_tool/__init__.py"):
            path = src / rel
            text = re.sub(r'(?m)^(version|__version__) = "[^"]*"', rf'\1 = "{version}"',
                          path.read_text())  # fmt: skip
            path.write_text(text)
    out = dest / "dist"
    pip([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(src)])
    (wheel,) = out.glob("memory_tool-*.whl")
    return wheel


def pip(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-PIP_TAIL_CHARS:]


def run_tool(box: Sandbox, venv: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """The venv's own `memory-tool` console script, in the sandbox HOME, from the project."""
    proc = subprocess.run(
        [str(venv / "bin" / "memory-tool"), *args],
        cwd=box.project,
        env=box.env({**MEMORY_TOOL_ENV, **(env or {})}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def our_handlers(box: Sandbox) -> dict[str, list[str]]:
    hooks = box.read_settings().get("hooks", {})
    # A command hook's command line, an HTTP hook's URL (to the resident server).
    return {
        e: [h.get("command") or h["url"] for g in hooks.get(e, []) for h in g["hooks"]]
        for e in hooks
    }


def brief_of_a_session(box: Sandbox) -> str:
    box.api.reset()
    res = box.run_claude("hello", env=MEMORY_TOOL_ENV)
    assert res.returncode == 0, res.stdout + res.stderr
    (block,) = injected_by(box.api.main_requests()[0], "SessionStart")
    return block


def agent_runs(box: Sandbox, command: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    """A session whose agent runs ``command`` through its Bash tool, as the brief tells it to:
    (the brief, what the command printed), failing if the command did (exit 127: not found)."""
    box.api.reset()
    tool_id = box.api.add_tool_use("Bash", {"command": command, "description": "memory search"})
    box.api.add_text("done")
    res = box.run_claude("what do we know about the wheel?", env={**MEMORY_TOOL_ENV, **(env or {})})
    assert res.returncode == 0, res.stdout + res.stderr
    requests = box.api.main_requests()
    (brief,) = injected_by(requests[0], "SessionStart")
    (result,) = [
        block
        for block in requests[-1].body["messages"][-1]["content"]
        if isinstance(block, dict) and block.get("tool_use_id") == tool_id
    ]
    printed = json.dumps(result["content"])
    assert not result.get("is_error"), printed
    return brief, printed


def path_without(*folders: Path) -> str:
    """The host's PATH without ``folders`` and without any other `memory-tool` on it."""
    keep = [
        d for d in os.environ["PATH"].split(os.pathsep)
        if d and Path(d) not in folders and not (Path(d) / "memory-tool").exists()
    ]  # fmt: skip
    return os.pathsep.join(keep)


def test_a_wheel_in_a_fresh_venv_gives_working_hooks_and_upgrades_in_place(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip([str(venv / "bin" / "pip"), "install", str(build_wheel(tmp_path / "v1"))])
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import memory_tool; print(memory_tool.__file__)"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
    ).stdout.strip()  # fmt: skip
    assert Path(where).is_relative_to(venv), where  # a copy in the venv, not the checkout

    out = run_tool(sandbox, venv, "install")
    assert "created the palace" in out
    handlers = our_handlers(sandbox)
    assert set(handlers) == set(HOOK_EVENTS)
    for event, commands in handlers.items():
        (command,) = commands
        if command.startswith("http://"):  # over HTTP: the server of this install answers it
            assert command.startswith("http://127.0.0.1:") and f"/{event}" in command, command
            continue
        python, script = shlex.split(command)[0], shlex.split(command)[-2]
        assert Path(python).parent == venv / "bin" and " -S " in command, command
        assert script.endswith("/site-packages/memory_tool/runtime/hook.py"), command
        assert Path(script).is_relative_to(venv) and command.endswith(f" {event}")
        assert str(REPO_ROOT) not in command
    # The brief tells the agent to run `memory-tool search`: install linked it into ~/.local/bin
    # (on this HOME's PATH, as most login profiles have it), since the venv's bin/ is not.
    assert "Claude runs memory-tool as: memory-tool" in out
    assert (sandbox.home / ".local" / "bin" / "memory-tool").resolve() == (
        venv / "bin" / "memory-tool"
    ).resolve()
    run_tool(sandbox, venv, "add", "--type", "feedback", "Always pin the wheel ZWHEELQ.")
    (rule_id,) = re.findall(r"f-[0-9a-f]{6}", run_tool(sandbox, venv, "search", "wheel"))

    brief, printed = agent_runs(sandbox, "memory-tool search wheel")
    assert "ZWHEELQ" in brief and "not on PATH" not in brief
    assert rule_id in printed

    # Upgrade: a newer wheel into the same venv, install again.
    pip([str(venv / "bin" / "pip"), "install", str(build_wheel(tmp_path / "v2", "0.1.99"))])
    version = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import importlib.metadata as m; print(m.version('memory-tool'))"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout.strip()  # fmt: skip
    assert version == "0.1.99"
    out = run_tool(sandbox, venv, "install")
    assert our_handlers(sandbox) == handlers  # one set of hooks, the same commands
    assert "ZWHEELQ" in brief_of_a_session(sandbox)
    saved = json.loads((sandbox.config_dir / "memory-tool" / "install.json").read_text())
    assert sorted(saved["commands"]) == sorted(HOOK_EVENTS)


def test_off_path_the_brief_names_the_command_by_its_absolute_path(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """MEMORY_TOOL_BIN_DIR names a folder that is not on PATH: install links the command there,
    says so, records it, and the brief names it by its path; the agent runs it; uninstall takes
    the link away."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip([str(venv / "bin" / "pip"), "install", str(build_wheel(tmp_path / "v1"))])
    bin_dir = tmp_path / "bin"
    env = {
        "PATH": path_without(sandbox.home / ".local" / "bin"),
        "MEMORY_TOOL_BIN_DIR": str(bin_dir),
    }
    link = bin_dir / "memory-tool"

    out = run_tool(sandbox, venv, "install", env=env)
    assert f"Claude runs memory-tool as: {link}" in out
    assert f"{bin_dir} is not on PATH" in out
    assert link.is_symlink() and link.resolve() == (venv / "bin" / "memory-tool").resolve()
    saved = json.loads((sandbox.config_dir / "memory-tool" / "install.json").read_text())
    assert saved["agent_command"] == str(link)
    run_tool(sandbox, venv, "add", "--type", "feedback", "Always pin the wheel ZWHEELQ.", env=env)

    brief, printed = agent_runs(sandbox, f"{link} search wheel", env=env)
    assert f"run it as `{link}`" in brief
    assert re.search(r"f-[0-9a-f]{6}", printed)

    assert str(link) in run_tool(sandbox, venv, "uninstall", env=env)
    assert not os.path.lexists(link)
