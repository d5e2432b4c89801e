"""Machines for the sync tests: each a sandboxed HOME (its own Claude config folder and state
root) whose commands run as separate processes, as on two computers. Git runs for real, with
no global or system git configuration, so the tests depend on nothing the host has set."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from helpers import REPO

CLI = "import sys; from memory_tool.cli.main import main; sys.exit(main())"


def git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Plain git for a test's own set-up and checks (a bare remote, `git log -p`)."""
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**clean_git_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return proc.stdout


def clean_git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"})
    return env


def bare_repo(path: Path) -> Path:
    git("init", "-q", "--bare", str(path))
    return path


class Machine:
    """One computer: a HOME with ``~/.claude`` and the palace under it."""

    def __init__(self, root: Path, name: str) -> None:
        self.name = name
        self.home = root / name / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        env = clean_git_env()
        for var in ("CLAUDE_CONFIG_DIR", "MEMORY_TOOL_HOME", "CLAUDE_PROJECT_DIR"):
            env.pop(var, None)
        env.update(
            {
                "HOME": str(self.home),
                "MEMORY_TOOL_MACHINE": name,
                "MEMORY_TOOL_NO_BACKGROUND": "1",
                "MEMORY_TOOL_TODAY": "2026-11-29",
                "MEMORY_TOOL_SEMANTIC": "0",
                "PYTHONPATH": str(REPO),
            }
        )
        self.env = env

    @property
    def claude(self) -> Path:
        return self.home / ".claude"

    @property
    def state(self) -> Path:
        return self.claude / "memory-tool"

    def popen(
        self, *args: str, cwd: Path | None = None, new_session: bool = False, **env: str
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", CLI, *args],
            cwd=cwd or self.home,
            env={**self.env, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=new_session,
        )

    def run(
        self, *args: str, cwd: Path | None = None, ok: bool = True, **env: str
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [sys.executable, "-c", CLI, *args],
            cwd=cwd or self.home,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if ok and proc.returncode != 0:
            raise AssertionError(
                f"{self.name}: memory-tool {' '.join(args)} exited {proc.returncode}\n"
                f"stdout: {proc.stdout}\nstderr: {proc.stderr}"
            )
        return proc

    def json(self, *args: str, cwd: Path | None = None) -> Any:
        return json.loads(self.run(*args, "--json", cwd=cwd).stdout)

    def hook(
        self, event: str, payload: dict[str, Any], **env: str
    ) -> subprocess.CompletedProcess[bytes]:
        script = (
            REPO
            / "hooks"
            / {
                "SessionStart": "session_start.py",
                "UserPromptSubmit": "user_prompt_submit.py",
                "Stop": "stop.py",
                "SessionEnd": "session_end.py",
            }[event]
        )
        hook_env = {**self.env, **env}
        hook_env.pop("PYTHONPATH", None)  # the hook script finds the package itself
        return subprocess.run(
            [sys.executable, str(script)],
            input=json.dumps(payload).encode(),
            capture_output=True,
            timeout=60,
            env=hook_env,
            cwd=self.home,
            check=False,
        )

    def write(self, rel: str, text: str) -> Path:
        """A memory file written by hand (or by Claude Code), under the state root."""
        path = self.state / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def texts(self, folder: str) -> dict[str, str]:
        """Every Markdown file under a palace folder, by its path relative to it."""
        root = self.state / folder
        return {
            str(p.relative_to(root)): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*.md"))
        }


def memory_file(name: str, body: str, **fields: Any) -> str:
    head = "".join(f"{k}: {json.dumps(v)}\n" for k, v in {"name": name, **fields}.items())
    return f"---\n{head}---\n\n{body}\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """``git daemon`` on 127.0.0.1 serving the bare repositories under ``base`` (push
    allowed); yields its ``git://`` URL prefix and stops it afterwards."""
    port = free_port()
    proc = subprocess.Popen(
        [
            "git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
            f"--base-path={base}", "--listen=127.0.0.1", f"--port={port}", str(base),
        ],
        env=clean_git_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("git daemon did not start") from None
                time.sleep(0.05)
        yield f"git://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_for(predicate: Any, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
