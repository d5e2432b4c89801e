"""Every test runs against a sandboxed HOME, Claude config folder and state root under tmp_path."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from machines import free_port

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    # ~/.local/bin on PATH, as most distributions' login profiles put it: where `install` links
    # `memory-tool` for the agent (tests/e2e/test_install_wheel.py covers a PATH without it).
    monkeypatch.setenv("PATH", f"{home / '.local' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("MEMORY_TOOL_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    # Hooks may start a detached index refresh; tests must not leave processes behind.
    monkeypatch.setenv("MEMORY_TOOL_NO_BACKGROUND", "1")
    monkeypatch.setenv("MEMORY_TOOL_TODAY", "2026-11-29")
    # Words-only search unless a test is about the semantic extra (tests/test_semantic.py): with
    # the extra installed, every `index` would otherwise run the model.
    monkeypatch.setenv("MEMORY_TOOL_SEMANTIC", "0")
    # A server a test starts listens on a port of its own, never on the default one a real
    # install (or another test run on this machine) uses.
    monkeypatch.setenv("MEMORY_TOOL_SERVER_PORT", str(free_port()))
    yield home


@pytest.fixture
def claude_dir(sandbox: Path) -> Path:
    return sandbox / ".claude"


@pytest.fixture
def state(claude_dir: Path) -> Path:
    return claude_dir / "memory-tool"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository to start sessions in."""
    root = tmp_path / "work" / "proj"
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    return root
