"""Hooks as whole processes: valid output when things are fine, silence when they are not."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import log_text, run_hook, start_payload, write_memory

from memory_tool.base import paths


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_session_start_injects_the_brief(project: Path, source: str) -> None:
    write_memory(
        paths.project_memory_dir(project),
        "feedback_x.md",
        "Never skip the tests.",
        type_="feedback",
    )
    proc = run_hook("SessionStart", start_payload(project, source))
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert "Never skip the tests." in ctx
    assert ctx.startswith("<memory-context>")
    assert len(proc.stdout) < 10_000


def test_fresh_machine_without_palace_still_answers(project: Path) -> None:
    proc = run_hook("SessionStart", start_payload(project))
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


@pytest.mark.parametrize(
    "stdin", [b"", b"not json", b"[1, 2]", b"\xff\xfe\x00garbage", b'{"cwd": 5', b"null"]
)
def test_garbage_stdin_exits_0_silently_and_logs(stdin: bytes) -> None:
    proc = run_hook("SessionStart", stdin)
    assert proc.returncode == 0
    assert proc.stdout == b""
    assert "SessionStart" in log_text()


def test_broken_yaml_and_odd_files_do_not_break_the_hook(project: Path) -> None:
    d = paths.project_memory_dir(project)
    d.mkdir(parents=True)
    (d / "feedback_broken.md").write_text("---\n: : [\n---\nA rule with broken YAML.\n")
    (d / "project_binary.md").write_bytes(b"\x00\x01\x02\xff" * 100)
    (d / "dir_named.md").mkdir()
    os.symlink(d / "missing-target.md", d / "project_dangling.md")
    os.symlink(d, d / "loop")
    write_memory(d, "project_ok.md", "A healthy fact.", type_="project")
    proc = run_hook("SessionStart", start_payload(project))
    assert proc.returncode == 0
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "A healthy fact." in ctx
    assert "A rule with broken YAML." in ctx


def test_corrupt_index_is_recovered_by_the_hook(project: Path) -> None:
    write_memory(
        paths.project_memory_dir(project), "project_a.md", "Recovered fact.", type_="project"
    )
    assert run_hook("SessionStart", start_payload(project)).returncode == 0
    db = paths.index_file()
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    with open(db, "r+b") as fh:
        fh.seek(0)
        fh.write(b"\x00" * 4096)
    proc = run_hook("SessionStart", start_payload(project))
    assert proc.returncode == 0
    assert "Recovered fact." in proc.stdout.decode()


def test_unwritable_state_root_fails_open(project: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the state root should be")
    proc = run_hook("SessionStart", start_payload(project), env={"MEMORY_TOOL_HOME": str(blocker)})
    assert proc.returncode == 0
    assert proc.stdout == b""


HEAVY = ("tiktoken", "yaml", "click", "rapidfuzz", "frontmatter")


def imported_modules(event: str, payload: dict[str, str]) -> str:
    import subprocess
    import sys

    from helpers import HOOK_SCRIPT

    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-S", str(HOOK_SCRIPT), event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout
    return proc.stderr.decode()


def test_steady_state_hooks_load_no_heavy_module(project: Path) -> None:
    write_memory(
        paths.project_memory_dir(project),
        "feedback_x.md",
        "Never skip the tests.",
        type_="feedback",
    )
    write_memory(paths.state_root() / "rooms" / "authentication", "jwt.md", "Login uses JWTs.")
    from memory_tool.store.index import open_index

    with open_index() as idx:
        idx.refresh(project)
    start = start_payload(project)
    prompt = {"session_id": "s1", "cwd": str(project), "prompt": "the login token is broken"}
    run_hook("SessionStart", start)  # first run may fill caches
    run_hook("UserPromptSubmit", {**prompt, "session_id": "warm"})
    for event, payload in (("SessionStart", start), ("UserPromptSubmit", prompt)):
        modules = imported_modules(event, payload)
        loaded = {m for m in HEAVY if f" {m}\n" in modules or f" {m}." in modules}
        assert not loaded, f"{event} imported {loaded}"


def test_without_an_encoding_wake_says_it_estimated(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from memory_tool.base import tokens
    from memory_tool.cli.main import main

    monkeypatch.setattr(tokens, "ENCODING_NAMES", ("no-such-encoding",))
    monkeypatch.setattr(tokens, "_loaded", False)
    monkeypatch.setattr(tokens, "_encoding", None)
    write_memory(
        paths.project_memory_dir(project),
        "feedback_x.md",
        "Never skip the tests.",
        type_="feedback",
    )
    out = CliRunner().invoke(main, ["wake", "--cwd", str(project)]).output
    assert "estimate" in out and "Never skip the tests." in out
    assert tokens.count("abcdef") == 2  # 6 UTF-8 bytes / 3: documented over-estimate


@pytest.mark.parametrize("event", ["Stop", "SubagentStop"])
def test_a_stop_answer_never_carries_context(event: str, project: Path) -> None:
    """Context in a Stop answer makes Claude go on (2.1.332): whatever a handler returns, what
    reaches stdout is Stop's own format or nothing."""
    import io

    from memory_tool.runtime import dispatch

    said = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": "go on"}}
    answers = [said, {**said, "systemMessage": "a handoff is missing"}]
    stdin = json.dumps({"session_id": "s1", "cwd": str(project), "hook_event_name": event})
    printed = []
    saved = dispatch.HANDLERS.get(event)
    try:
        for answer in answers:
            dispatch.register(event, lambda _event, answer=answer: answer)
            out = io.StringIO()
            assert dispatch.run(event, io.BytesIO(stdin.encode()), out) == 0
            printed.append(out.getvalue())
    finally:
        dispatch.HANDLERS.pop(event, None)
        if saved is not None:
            dispatch.HANDLERS[event] = saved
    assert printed == ["", json.dumps({"systemMessage": "a handoff is missing"}) + "\n"]
    assert "carried context" in log_text()
