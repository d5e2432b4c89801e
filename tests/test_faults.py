"""Faults and bad input: every hook exits 0, says nothing or one valid JSON document under
10,000 characters, and never loses or changes a memory file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import write_memory

from memory_tool import paths
from memory_tool.settings import HOOK_EVENTS, hook_command

HOOK_EVENTS_TIMEOUT = HOOK_EVENTS["SessionStart"][2]
# Claude Code replaces hook output longer than this with a preview and a file path.
MAX_OUTPUT_CHARS = 10_000


def start_payload(project: Path, source: str = "startup") -> dict[str, str]:
    return {
        "session_id": "s1",
        "transcript_path": "/nonexistent.jsonl",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": source,
    }


def log_text() -> str:
    log = paths.log_file()
    return log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""


def run_installed(
    event: str, payload: object, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """The hook exactly as `memory-tool install` writes it into settings.json (`python -S`),
    killed (its whole process group) if it outlives `timeout`, as Claude Code would."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    with subprocess.Popen(
        hook_command(event),
        shell=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise AssertionError(f"{event} hook still running after {timeout} s") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_installed_hook_command_parses_new_memory_files(project: Path) -> None:
    # A file written by Claude Code (not by us) must be parsed on the hook path, which needs the
    # virtualenv's packages (YAML) even though the hook runs with -S.
    write_memory(
        paths.project_memory_dir(project), "project_fresh.md", "Fresh fact ZNEWQ.", type_="project"
    )
    proc = run_installed("SessionStart", start_payload(project))
    assert proc.returncode == 0
    assert b"ZNEWQ" in proc.stdout, log_text()


def test_wake_prints_exactly_what_the_hook_injects_when_memory_needs_attention(
    project: Path,
) -> None:
    from click.testing import CliRunner

    from memory_tool.cli import main

    # More always-loaded facts than the cap: the hook adds a hygiene line to the brief.
    for i in range(20):
        write_memory(
            paths.project_memory_dir(project),
            f"project_fact_{i}.md",
            f"Widget {i} uses setting {i}.",
            type_="project",
        )
    proc = run_installed("SessionStart", start_payload(project))
    injected = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    res = CliRunner().invoke(main, ["wake", "--json", "--cwd", str(project)])
    assert res.exit_code == 0, res.output
    assert "Memory hygiene" in injected
    assert json.loads(res.output)["text"] == injected


def test_utf16_memory_with_bom_is_read_as_text(project: Path) -> None:
    d = paths.project_memory_dir(project)
    d.mkdir(parents=True)
    text = "---\nname: utf16\ndescription: d\nmetadata:\n  type: project\n---\nCafé fact ZUTF16Q.\n"
    for name, encoding in (("project_le.md", "utf-16"), ("project_be.md", "utf-16-be")):
        data = text.encode(encoding)
        if encoding == "utf-16-be":
            data = b"\xfe\xff" + data
        (d / name).write_bytes(data)
    proc = run_installed("SessionStart", start_payload(project))
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert ctx.count("] Café fact ZUTF16Q.\n") == 1  # same fact twice: shown once
    assert "name: utf16" not in ctx and "\ufffd" not in ctx
    assert "unreadable" not in ctx and "frontmatter" not in ctx  # nothing wrong with them


def test_corrupt_index_is_rebuilt_and_logged(project: Path) -> None:
    write_memory(
        paths.project_memory_dir(project), "project_a.md", "Recovered fact ZRECQ.", type_="project"
    )
    assert b"ZRECQ" in run_installed("SessionStart", start_payload(project)).stdout
    db = paths.index_file()
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    with open(db, "r+b") as fh:
        fh.write(b"\x00" * 4096)
    proc = run_installed("SessionStart", start_payload(project))
    assert proc.returncode == 0
    assert b"ZRECQ" in proc.stdout
    assert "could not be read" in log_text() and "index.db" in log_text()
    assert list(db.parent.glob("index.db.corrupt-*"))


# A "billion laughs" frontmatter: 9 levels of YAML aliases, 9 items each (about 400 bytes).
YAML_ALIAS_BOMB = (
    "---\n"
    + 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    + "".join(
        f"{cur}: &{cur} [{', '.join([f'*{prev}'] * 9)}]\n"
        for prev, cur in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "name: *i\ndescription: *i\ntags: *i\nroom: *i\nmetadata: {type: *i}\n---\n"
    + "A fact behind a YAML bomb ZBOMBQ.\n"
)


def test_yaml_alias_bomb_in_a_memory_file_does_not_hang_the_hook(project: Path) -> None:
    d = paths.project_memory_dir(project)
    write_memory(d, "project_ok.md", "A healthy fact ZOKQ.", type_="project")
    (d / "project_bomb.md").write_text(YAML_ALIAS_BOMB, encoding="utf-8")
    # The hook must answer within the timeout settings.json gives it, or Claude Code kills it.
    proc = run_installed("SessionStart", start_payload(project), timeout=HOOK_EVENTS_TIMEOUT)
    assert proc.returncode == 0
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "ZOKQ" in ctx and "ZBOMBQ" in ctx
    assert len(ctx) < 10_000


def check_output(stdout: bytes | str, event: str) -> dict[str, Any] | None:
    """What Claude Code can use: nothing, or exactly one JSON object under 10,000 characters,
    whose hookSpecificOutput (if any) names its event; only Stop may block."""
    text = stdout.decode("utf-8") if isinstance(stdout, bytes) else stdout
    if not text.strip():
        return None
    assert len(text) < MAX_OUTPUT_CHARS, f"{len(text)} characters"
    doc = json.loads(text)  # one document: trailing data after it would raise
    assert isinstance(doc, dict)
    specific = doc.get("hookSpecificOutput")
    if specific is not None:
        assert specific["hookEventName"] == event
        assert isinstance(specific.get("additionalContext", ""), str)
    if "decision" in doc:
        assert event == "Stop" and doc["decision"] == "block" and doc["reason"]
    assert doc.get("continue", True) is True  # never stops Claude
    return doc


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "SessionEnd"])
def test_a_transcript_path_that_is_not_a_file_does_not_hang_the_hook(
    event: str, project: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    for target in ("/dev/zero", str(fifo)):
        payload = {
            "session_id": f"s-{event}",
            "transcript_path": target,
            "cwd": str(project),
            "hook_event_name": event,
            "prompt": "hello",
            "stop_hook_active": False,
            "reason": "other",
        }
        proc = run_installed(event, payload, timeout=HOOK_EVENTS[event][2])
        assert proc.returncode == 0
        check_output(proc.stdout, event)
