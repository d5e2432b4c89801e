"""Tool-level recall through the resident server's HTTP door (how an install with the server
sends tool hooks): the same answers as in-process, a huge failure output, malformed tool
bodies, and a turn's parallel hooks giving a tied memory once."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from helpers import write_memory
from test_hook_http import http_server, post  # noqa: F401 - http_server is a fixture

from memory_tool.base import paths

GOTCHA = (
    "Gotcha: psycopg DeadlockDetected in the test suite means two workers migrate at once; "
    "run it with --lock."
)


def seed_tool_memories(project: Path) -> None:
    folder = paths.project_memory_dir(project)
    write_memory(folder, "reference_api.md", "The API client lives in src/api (KHTTPTIED).",
                 type_="reference", paths=["src/api/"])  # fmt: skip
    write_memory(paths.state_root() / "rooms" / "codebase-notes", "deadlock.md", GOTCHA)
    from memory_tool.store.index import open_index

    with open_index() as idx:
        idx.refresh(project)


def body(project: Path, session: str, **fields: Any) -> dict[str, Any]:
    return {"session_id": session, "transcript_path": "/nonexistent.jsonl",
            "cwd": str(project), **fields}  # fmt: skip


def context(raw: bytes) -> str:
    data = json.loads(raw)
    return str(data.get("hookSpecificOutput", {}).get("additionalContext", ""))


def test_tool_hooks_over_http_recall_once_and_read_a_huge_output(
    project: Path,
    http_server: int,  # noqa: F811 - the fixture
) -> None:
    seed_tool_memories(project)
    read = body(project, "t1", hook_event_name="PostToolUse", tool_name="Read",
                tool_input={"file_path": str(project / "src/api/client.ts")})  # fmt: skip
    status, raw = post(http_server, "PostToolUse", read)
    assert status == 200 and "KHTTPTIED" in context(raw)
    assert post(http_server, "PostToolUse", read) == (200, b"{}")  # once per session
    noise = "".join(f"line {i}: NoiseToken{i} happened\n" for i in range(400_000))  # ~12 MB
    error = "Exit code 1\n" + noise + "psycopg.errors.DeadlockDetected: deadlock detected\n"
    failed = body(project, "t1", hook_event_name="PostToolUseFailure", tool_name="Bash",
                  tool_input={"command": "pytest"}, error=error)  # fmt: skip
    start = time.monotonic()
    status, raw = post(http_server, "PostToolUseFailure", failed)
    assert status == 200 and "--lock" in context(raw)
    assert time.monotonic() - start < 10


def test_malformed_tool_bodies_over_http_get_empty_json(
    project: Path,
    http_server: int,  # noqa: F811 - the fixture
) -> None:
    seed_tool_memories(project)
    for event, raw in (
        ("PostToolUse", b'{"tool_name": "Read", "tool_input": "x"'),
        ("PostToolUse", json.dumps({"tool_name": "Read", "tool_input": {"file_path": 7}}).encode()),
        ("PostToolUseFailure", json.dumps({"tool_name": "Bash", "error": ["x"]}).encode()),
        ("PreToolUse", json.dumps({"tool_name": "Agent", "tool_input": None}).encode()),
        ("PostToolUse", b"\xff\xfe garbage"),
    ):
        assert post(http_server, event, raw) == (200, b"{}"), raw


def test_a_turns_parallel_reads_over_http_give_the_tied_memory_once(
    project: Path,
    http_server: int,  # noqa: F811 - the fixture
) -> None:
    seed_tool_memories(project)

    def one(i: int) -> bytes:
        data = body(project, "par", hook_event_name="PostToolUse", tool_name="Read",
                    tool_input={"file_path": str(project / f"src/api/f{i}.ts")})  # fmt: skip
        return post(http_server, "PostToolUse", data)[1]

    with ThreadPoolExecutor(max_workers=10) as pool:
        answers = list(pool.map(one, range(10)))
    assert sum(a.count(b"KHTTPTIED") for a in answers) == 1
