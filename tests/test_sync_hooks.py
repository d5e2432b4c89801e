"""Sync never runs on a hook's critical path: SessionEnd and SessionStart only start a detached
process, the hook modules never import sync's git code, and with sync off nothing is started.
The detached run after SessionEnd writes the session's cold summary first, so it travels too."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import run_hook
from machines import CLI, bare_repo, clean_git_env, git, wait_for
from test_tiers_support import ANTHROPIC_KEY, DB_PASSWORD, install_transcript, payload

from memory_tool.sync.projects import folder_name, normalise_url

SYNC_GIT_MODULES = (
    "memory_tool.sync.repo",
    "memory_tool.sync.personal",
    "memory_tool.sync.team",
    "memory_tool.sync.projects",
    "memory_tool.sync.layout",
    "memory_tool.sync.detached",
)


def cli(*args: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", CLI, *args],
        cwd=cwd,
        env=clean_git_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )  # fmt: skip
    return proc.stdout


def real_repo(project: Path, origin: str) -> Path:
    shutil.rmtree(project / ".git")
    git("init", "-q", str(project))
    git("remote", "add", "origin", origin, cwd=project)
    return project


def test_the_hooks_start_sync_detached_and_never_import_its_git_code(
    project: Path, tmp_path: Path, state: Path
) -> None:
    remote = bare_repo(tmp_path / "remote.git")
    real_repo(project, "git@github.com:acme/shop.git")
    cli("sync", "init", str(remote), cwd=project)
    probe = (
        "import io, json, sys\n"
        "from memory_tool.runtime import dispatch\n"
        "start = {'session_id': 'p1', 'transcript_path': '/none.jsonl', 'cwd': sys.argv[1],\n"
        "         'hook_event_name': 'SessionStart', 'source': 'startup'}\n"
        "end = dict(start, hook_event_name='SessionEnd', reason='exit')\n"
        "out = io.StringIO()\n"
        "dispatch.run('SessionStart', io.BytesIO(json.dumps(start).encode()), out)\n"
        "dispatch.run('SessionEnd', io.BytesIO(json.dumps(end).encode()), io.StringIO())\n"
        "print(json.dumps({'brief': 'SessionStart' in out.getvalue(),\n"
        "    'loaded': sorted(m for m in sys.modules if m.startswith('memory_tool.sync'))}))\n"
    )
    env = {**clean_git_env(), "MEMORY_TOOL_NO_BACKGROUND": "", "MEMORY_TOOL_SERVER": "0"}
    result = subprocess.run(
        [sys.executable, "-c", probe, str(project)], capture_output=True, env=env, check=True
    )
    report = json.loads(result.stdout)
    assert report["brief"]
    assert report["loaded"] == ["memory_tool.sync", "memory_tool.sync.spawn"]
    assert not set(SYNC_GIT_MODULES) & set(report["loaded"])
    # Both detached runs happened (the start pull, the end sync), in processes of their own.
    assert (state / "sync" / ".last-start").exists()
    record = state / "sync" / "personal.json"
    initial = _last_pid(record)
    wait_for(lambda: _last_pid(record) != initial, what="a detached sync to record its run")
    _wait_idle(state)


def test_with_sync_switched_off_the_hooks_start_nothing(
    project: Path, tmp_path: Path, state: Path
) -> None:
    remote = bare_repo(tmp_path / "remote.git")
    real_repo(project, "git@github.com:acme/shop.git")
    cli("sync", "init", str(remote), cwd=project)
    before = json.loads((state / "sync" / "personal.json").read_text())["last"]
    (state / "config.yaml").write_text("sync:\n  auto: false\n", encoding="utf-8")
    start = {"session_id": "p2", "transcript_path": "/none.jsonl", "cwd": str(project),
             "hook_event_name": "SessionStart", "source": "startup"}  # fmt: skip
    env = {"MEMORY_TOOL_NO_BACKGROUND": "", "MEMORY_TOOL_SERVER": "0"}
    assert run_hook("SessionStart", start, env).returncode == 0
    assert run_hook("SessionEnd", dict(start, hook_event_name="SessionEnd"), env).returncode == 0
    assert not (state / "sync" / ".last-start").exists()
    assert json.loads((state / "sync" / "personal.json").read_text())["last"] == before


def test_session_end_writes_the_cold_summary_then_syncs_it(
    project: Path, tmp_path: Path, state: Path
) -> None:
    remote = bare_repo(tmp_path / "remote.git")
    real_repo(project, "https://github.com/acme/shop.git")
    cli("init")
    cli("sync", "init", str(remote), cwd=project)
    transcript = install_transcript("tiers_long", project)
    event = payload("SessionEnd", "tiers_long", project, transcript, reason="exit")
    proc = run_hook(
        "SessionEnd", event, {"MEMORY_TOOL_NO_BACKGROUND": "", "MEMORY_TOOL_SERVER": "0"}
    )
    assert proc.returncode == 0 and proc.stdout == b""
    folder = f"projects/{folder_name(normalise_url('https://github.com/acme/shop.git'))}/cold/"

    def pushed() -> bool:
        try:
            tree = git("ls-tree", "-r", "--name-only", "HEAD", cwd=remote)
        except subprocess.CalledProcessError:  # no branch yet: nothing was pushed so far
            return False
        return any(line.startswith(folder) for line in tree.splitlines())

    wait_for(pushed, timeout=120, what="the cold summary in the remote")
    history = git("log", "-p", "--all", cwd=remote)
    assert DB_PASSWORD not in history and ANTHROPIC_KEY not in history
    _wait_idle(state)


def _last_pid(record: Path) -> int | None:
    try:
        return int(json.loads(record.read_text())["last"]["pid"])
    except (OSError, ValueError, KeyError):
        return None


def _wait_idle(state: Path) -> None:
    """No detached sync of this state root is still running: the test leaves none behind."""
    home = os.environ["HOME"].encode()

    def running() -> bool:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                env = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue
            if b"memory_tool.sync.detached" in cmd and b"HOME=" + home + b"\0" in env:
                return True
        return False

    wait_for(lambda: not running(), timeout=120, what="the detached syncs to finish")
