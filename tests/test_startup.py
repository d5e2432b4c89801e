"""The hook start-up inside the package (runtime/hook.py) and the claim that makes two installs of
memory-tool (the plugin and settings.json) answer each event once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers import HOOK_SCRIPT, start_payload, write_memory

from memory_tool.base import paths
from memory_tool.runtime import claim, server

BRIEF_MARK = "ZCLAIMQ"


def run_start_up(
    event: str, payload: dict[str, str], env: dict[str, str] | None = None, *flags: str
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-S", *flags, str(HOOK_SCRIPT), event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        check=False,
    )


@pytest.fixture
def seeded(project: Path) -> Path:
    write_memory(paths.project_memory_dir(project), "feedback_c.md", f"Rule {BRIEF_MARK}.",
                 type_="feedback")  # fmt: skip
    return project


def answered(proc: subprocess.CompletedProcess[bytes]) -> bool:
    assert proc.returncode == 0, proc.stderr
    return BRIEF_MARK.encode() in proc.stdout


def twins(payload: dict[str, str], envs: list[dict[str, str]]) -> list[bool]:
    """The same event run by several hook processes at once, as Claude Code runs the hooks of
    two installs."""
    with ThreadPoolExecutor(len(envs)) as pool:
        procs = list(pool.map(lambda env: run_start_up("SessionStart", payload, env), envs))
    return [answered(p) for p in procs]


def test_two_installs_hearing_one_event_answer_it_once(seeded: Path) -> None:
    payload = start_payload(seeded)
    assert sorted(twins(payload, [{"CLAUDE_PID": "4242"}] * 3)) == [False, False, True]


def test_another_claude_process_or_none_at_all_is_always_answered(seeded: Path) -> None:
    payload = start_payload(seeded)
    assert twins(payload, [{"CLAUDE_PID": "1"}, {"CLAUDE_PID": "2"}]) == [True, True]
    # Outside Claude Code (a script, a test) nothing is claimed: run it as often as you like.
    assert [answered(run_start_up("SessionStart", payload)) for _ in range(2)] == [True, True]


def test_the_same_payload_later_is_a_new_event(seeded: Path) -> None:
    """A second /compact of a session sends the same bytes minutes later: answered again."""
    payload = start_payload(seeded, source="compact")
    env = {"CLAUDE_PID": "77"}
    assert answered(run_start_up("SessionStart", payload, env))
    assert not answered(run_start_up("SessionStart", payload, env))  # a twin, within the window
    (path,) = Path(claim.claims_dir(str(paths.state_root()))).glob("77-SessionStart-*")
    old = time.time() - claim.CLAIM_WINDOW_S - 1
    os.utime(path, (old, old))
    assert answered(run_start_up("SessionStart", payload, env))


def test_a_claim_that_cannot_be_made_never_silences_memory(seeded: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "state"
    blocked.mkdir()
    (blocked / "run").write_text("a file where the run folder should be")
    env = {"CLAUDE_PID": "5", "MEMORY_TOOL_HOME": str(blocked)}
    assert claim.claim("SessionStart", b"{}", str(blocked)) is True
    proc = run_start_up("SessionStart", start_payload(seeded), env)
    assert proc.returncode == 0


def test_twins_get_one_checksum_and_other_payloads_another() -> None:
    small = json.dumps({"session_id": "s", "agent_id": "a1", "prompt": "x"}).encode()
    other = small.replace(b"a1", b"a2")  # parallel subagents: same length, one id apart
    large = small + b" " * claim.SMALL_PAYLOAD_BYTES
    assert claim.checksum(small) == claim.checksum(bytes(small))
    assert claim.checksum(small) != claim.checksum(other)
    assert claim.checksum(large) != claim.checksum(large.replace(b"a1", b"a2"))
    paths_ = {claim.claim_path("SubagentStart", p, "/s", "1") for p in (small, other)}
    assert len(paths_) == 2


def test_session_end_sweeps_claims_older_than_a_day() -> None:
    root = str(paths.state_root())
    os.environ["CLAUDE_PID"] = "9"
    try:
        assert claim.claim("Stop", b"old", root)
        (old,) = Path(claim.claims_dir(root)).iterdir()
        past = time.time() - claim.PRUNE_AFTER_S - 60
        os.utime(old, (past, past))
        assert claim.claim("UserPromptSubmit", b"recent", root)
        assert claim.claim("SessionEnd", b"end", root)
    finally:
        del os.environ["CLAUDE_PID"]
    left = sorted(p.name.split("-")[1] for p in Path(claim.claims_dir(root)).iterdir())
    assert left == ["SessionEnd", "UserPromptSubmit"]


def import_names(importtime: bytes) -> set[str]:
    return {
        line.rsplit("|", 1)[1].strip()
        for line in importtime.decode().splitlines()
        if line.startswith("import time:") and "|" in line and "cumulative" not in line
    }


@pytest.fixture
def warm_server(monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.delenv("MEMORY_TOOL_NO_BACKGROUND", raising=False)
    monkeypatch.delenv("MEMORY_TOOL_SERVER", raising=False)
    yield
    server.stop()


def test_a_prompt_answered_by_the_server_imports_only_the_start_up(
    seeded: Path, warm_server: object
) -> None:
    """With the server warm, a UserPromptSubmit process loads the start-up, the claim, the
    client and _socket: nothing that would make every prompt slower."""
    prompt = {"session_id": "s1", "cwd": str(seeded), "prompt": "hello there"}
    run_start_up("SessionStart", start_payload(seeded))  # starts the server
    deadline = time.monotonic() + 20
    while server.ping() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert server.ping() is not None, "no server started"
    before = int(server.ping().split()[1].removeprefix("calls="))  # type: ignore[union-attr]
    proc = run_start_up("UserPromptSubmit", prompt, {"CLAUDE_PID": "31"}, "-X", "importtime")
    assert proc.returncode == 0
    after = int(server.ping().split()[1].removeprefix("calls="))  # type: ignore[union-attr]
    assert after == before + 1, "the prompt was not answered by the server"
    baseline = [sys.executable, "-S", "-X", "importtime", "-c", "import os"]
    base = subprocess.run(baseline, capture_output=True, check=True)
    imported = import_names(proc.stderr) - import_names(base.stderr)
    ours = {"memory_tool", "memory_tool.runtime", "memory_tool.runtime.claim"}
    ours |= {"memory_tool.runtime.client", "_socket"}
    assert imported <= ours, imported - ours
    # SessionStart, the command hook that stays a command with HTTP hooks, likewise: the brief
    # comes from the server (issue 24: a thin client, no package imports beyond the client's).
    proc = run_start_up(
        "SessionStart", start_payload(seeded), {"CLAUDE_PID": "32"}, "-X", "importtime"
    )
    assert b"<memory-context>" in proc.stdout
    assert int(server.ping().split()[1].removeprefix("calls=")) == after + 1  # type: ignore[union-attr]
    imported = import_names(proc.stderr) - import_names(base.stderr)
    assert imported <= ours, imported - ours
