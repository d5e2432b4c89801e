"""Fixtures for end-to-end tests that run the real Claude Code binary offline.

- `claude_bin`: the binary installed by .ci/install_claude.sh (skips the test if missing).
- `fake_api`: a fresh stand-in Anthropic API on 127.0.0.1 (see fake_api.py).
- `sandbox`: a fresh HOME under tmp_path (config in HOME/.claude, CLAUDE_CONFIG_DIR unset),
  a project folder, helpers to add hooks, and `sandbox.run_claude(prompt, ...)`.
- `run_claude`: shorthand for `sandbox.run_claude`.
Mark e2e tests with `@pytest.mark.e2e` (or `pytestmark = pytest.mark.e2e` in the module).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from claude_sandbox import INSTALL_SCRIPT, Sandbox, find_claude_bin
from fake_api import FakeAnthropicAPI


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    path = find_claude_bin()
    if path is None:
        pytest.skip(
            f"the real claude binary is not installed: run {INSTALL_SCRIPT} "
            "(needs node + npm) to enable the e2e tests"
        )
    return path


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropicAPI]:
    with FakeAnthropicAPI() as api:
        yield api


@pytest.fixture
def sandbox(tmp_path: Path, claude_bin: Path, fake_api: FakeAnthropicAPI) -> Iterator[Sandbox]:
    box = Sandbox(root=tmp_path / "sandbox", api=fake_api, claude_bin=claude_bin)
    try:
        yield box
    finally:
        box.close()


@pytest.fixture
def run_claude(sandbox: Sandbox) -> Callable[..., subprocess.CompletedProcess[str]]:
    return sandbox.run_claude
