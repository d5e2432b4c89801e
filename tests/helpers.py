"""Helpers shared by tests: writing memory files as Claude Code does, running hook scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from memory_tool.base.event import HookEvent
from memory_tool.base.resources import hook_script

REPO = Path(__file__).resolve().parent.parent
HOOK_SCRIPT = hook_script()


def write_memory(
    folder: Path,
    name: str,
    body: str,
    *,
    type_: str | None = None,
    layout: str = "metadata",
    **fields: object,
) -> Path:
    """A memory file as Claude Code writes it (``layout='metadata'``: 2.1.139+ nested type;
    ``'top'``: older top-level type; ``'none'``: no frontmatter type)."""
    folder.mkdir(parents=True, exist_ok=True)
    meta: dict[str, object] = {"name": fields.pop("title", name.removesuffix(".md"))}
    meta["description"] = fields.pop("description", body.split(".")[0][:100])
    if type_ and layout == "metadata":
        meta["metadata"] = {"type": type_}
    elif type_ and layout == "top":
        meta["type"] = type_
    meta.update(fields)
    path = folder / name
    path.write_text(
        f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n\n{body}\n", encoding="utf-8"
    )
    return path


def run_hook(
    event: str, payload: object | bytes, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run a hook as Claude Code does: a separate process on the package's start-up script, JSON
    on stdin."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(
        [sys.executable, str(HOOK_SCRIPT), event],
        input=data,
        capture_output=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def add_worktree(repo: Path, tree: Path) -> None:
    """Make ``repo`` a git repository with one commit and ``tree`` a linked working tree of it
    (branch ``feat``), as `git worktree add` does; git's identity comes from the environment."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / "README.md").write_text(f"{repo.name}\n")
    git("add", "README.md")
    git("commit", "-q", "-m", "init")
    git("worktree", "add", "-q", str(tree), "-b", "feat")


def start_payload(project: Path, source: str = "startup") -> dict[str, str]:
    """A SessionStart payload as Claude Code sends it."""
    return {
        "session_id": "s1",
        "transcript_path": "/nonexistent.jsonl",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": source,
    }


def log_text() -> str:
    """The hook log so far ("" when nothing was logged)."""
    from memory_tool.base import paths

    log = paths.log_file()
    return log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""


def as_event(payload: dict[str, Any], name: str = "") -> HookEvent:
    """A payload as the hook front end hands it to the library (parsed once, at the boundary)."""
    return HookEvent.from_payload(name or str(payload.get("hook_event_name", "")), payload)
