"""transcript: incremental, defensive reading of Claude Code JSONL transcripts."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_tool.store.transcript import (
    MAX_INPUT_SUMMARY_CHARS,
    MAX_TOOL_RESULT_CHARS,
    Event,
    assistant_text,
    commands_run,
    files_edited,
    parse_line,
    person_text,
    read_from,
    read_new,
    tool_call_count,
)

FIXTURES = Path(__file__).parent / "data" / "transcripts"
SESSION = "8d0c5f3e-2b7a-4c1e-9f6d-1a2b3c4d5e6f"
ROOT = "/home/dev/upload-svc"


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def _user(text: str, **extra: Any) -> bytes:
    return _line({"type": "user", "message": {"role": "user", "content": text}, **extra})


def _assistant(*blocks: dict[str, Any], **extra: Any) -> bytes:
    return _line(
        {"type": "assistant", "message": {"role": "assistant", "content": list(blocks)}, **extra}
    )


def _tool_use(name: str, tool_id: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def _tool_result(tool_id: str, content: Any, is_error: bool = False) -> bytes:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error:
        block["is_error"] = True
    return _line({"type": "user", "message": {"role": "user", "content": [block]}})


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    dest = tmp_path / f"{SESSION}.jsonl"
    shutil.copyfile(FIXTURES / "session_basic.jsonl", dest)
    return dest


# ---------------------------------------------------------------------------------------------
# The real-format fixture
# ---------------------------------------------------------------------------------------------


def test_fixture_whole_session(session_file: Path) -> None:
    data = session_file.read_bytes()
    events, offset = read_new(session_file, 0)

    # The last line is cut mid-write: the offset stops at its start, so it is read next time.
    assert offset == data.rfind(b"\n") + 1
    assert not data.endswith(b"\n")

    assert person_text(events) == [
        "The upload client gives up on the first 503. Add a retry with exponential backoff "
        "(max 5 tries) in src/upload/client.py and a test for it.",
        "Import it from retry.py instead, and keep the backoff capped at 30 seconds.",
        "Thanks. Also log each retry at WARNING level.",
    ]
    assert assistant_text(events) == [
        "I'll start by reading the current client.",
        "Now the retry helper and a test.",
        "The retry is in place: `_post_with_retry` in src/upload/retry.py retries 503s up to "
        "5 times with backoff capped at 30 s, and tests/test_retry.py passes.",
    ]
    # The failed Edit of __init__.py changed nothing; the subagent's edits repeat known files.
    assert files_edited(events) == [
        f"{ROOT}/src/upload/client.py",
        f"{ROOT}/src/upload/retry.py",
        f"{ROOT}/tests/test_retry.py",
    ]
    assert commands_run(events) == ["python -m pytest tests/test_retry.py -q"] * 2
    # Read, Edit, Edit, Write, Write, Bash, Task, MultiEdit (sub), Edit (sub), Bash.
    assert tool_call_count(events) == 10


def test_fixture_event_kinds_and_metadata(session_file: Path) -> None:
    events, _ = read_new(session_file, 0)
    kinds = [e.kind for e in events]
    assert kinds.count("compact") == 1
    summaries = [e.text for e in events if e.kind == "summary"]
    assert summaries[0].startswith("This session is being continued")  # the compaction summary
    assert summaries[1] == "Upload client: retry 503s with capped exponential backoff"
    assert kinds.count("other") == 1  # the file-history-snapshot line

    first_prompt = next(e for e in events if e.kind == "user" and not e.is_meta)
    assert first_prompt.session_id == SESSION
    assert first_prompt.cwd == ROOT
    assert first_prompt.timestamp == "2026-03-02T09:14:03.118Z"
    assert first_prompt.uuid == "6a0d1e70-0004-4000-8000-000000000004"

    meta = [e for e in events if e.is_meta]
    assert len(meta) == 1 and meta[0].text.startswith("Caveat:")

    sidechain = [e for e in events if e.is_sidechain]
    assert {e.kind for e in sidechain} == {"user", "assistant", "tool_use", "tool_result"}
    assert person_text(events, include_sidechain=True)[2].startswith("In /home/dev/upload-svc")

    failed = [e for e in events if e.kind == "tool_result" and e.is_error]
    assert [e.tool_use_id for e in failed] == [
        "toolu_01Edit000000000000000002",
        "toolu_01Bash000000000000000001",
    ]
    assert "ImportError" in failed[1].text

    thinking = "I should read the client first"
    assert not any(thinking in e.text for e in events)

    task = next(e for e in events if e.tool_name == "Task")
    assert task.tool_input == "Fix retry import"


def test_fixture_truncated_line_is_read_once_complete(session_file: Path) -> None:
    _, offset = read_new(session_file, 0)
    with session_file.open("ab") as f:
        f.write(b' and a test."}],"stop_reason":"end_turn"},"type":"assistant","uuid":"z"}\n')
    events, new_offset = read_new(session_file, offset)
    assert assistant_text(events) == ["Adding a warning log to each retry and a test."]
    assert new_offset == session_file.stat().st_size


# ---------------------------------------------------------------------------------------------
# Incremental reading
# ---------------------------------------------------------------------------------------------


def test_reads_only_lines_appended_since_the_offset(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_user("first") + _user("second"))
    events, offset = read_new(path, 0)
    assert person_text(events) == ["first", "second"]
    assert offset == path.stat().st_size

    # Rewrite everything before the offset with a different, same-length valid line: a reader
    # that re-read from the start would report it.
    old = path.read_bytes()
    decoy = _user("REREAD")
    decoy = decoy[:-1] + b" " * (len(old) - len(decoy)) + b"\n"
    assert len(decoy) == len(old)
    path.write_bytes(decoy)
    with path.open("ab") as f:
        f.write(_user("third"))

    events, offset2 = read_new(path, offset)
    assert person_text(events) == ["third"]
    assert offset2 == path.stat().st_size


def test_nothing_new_returns_same_offset(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_user("hello"))
    _, offset = read_new(path, 0)
    assert read_new(path, offset) == ([], offset)


def test_partial_last_line_is_left_for_next_time(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    full = _user("one") + _user("two, still being written")
    cut = len(_user("one")) + 10
    path.write_bytes(full[:cut])

    events, offset = read_new(path, 0)
    assert person_text(events) == ["one"]
    assert offset == len(_user("one"))

    # Still incomplete: no events, offset unchanged.
    assert read_new(path, offset) == ([], offset)

    path.write_bytes(full)
    events, offset = read_new(path, offset)
    assert person_text(events) == ["two, still being written"]
    assert offset == len(full)


@given(cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=6))
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_reading_while_the_file_grows_sees_every_event_once(
    tmp_path: Path, cuts: list[int]
) -> None:
    data = (FIXTURES / "session_basic.jsonl").read_bytes() + b"\n"
    path = tmp_path / "growing.jsonl"
    path.write_bytes(b"")
    expected, _ = read_new(FIXTURES / "session_basic.jsonl", 0)

    seen: list[Event] = []
    offset = 0
    for cut in sorted(c % (len(data) + 1) for c in cuts) + [len(data)]:
        path.write_bytes(data[:cut])  # the writer has got this far
        events, offset = read_new(path, offset)
        seen.extend(events)
    assert offset == len(data)
    # The truncated fixture line, now terminated, is still invalid JSON: same events as a
    # single read of the original.
    assert seen == expected


def test_file_shrunk_below_offset_is_read_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_user("old 1") + _user("old 2") + _user("old 3"))
    _, offset = read_new(path, 0)

    path.write_bytes(_user("new"))  # e.g. /clear rewrote it, or a new session reused the path
    result = read_from(path, offset)
    assert result.restarted
    assert person_text(result.events) == ["new"]
    assert result.offset == path.stat().st_size

    # read_new behaves the same, without the flag.
    path.write_bytes(_user("newer"))
    events, _ = read_new(path, offset)
    assert person_text(events) == ["newer"]


def test_file_replaced_by_a_longer_one_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_user("a"))
    _, offset = read_new(path, 0)

    replacement = _user("a much longer replacement line") + _user("and another")
    assert replacement[offset - 1 : offset] != b"\n"
    path.write_bytes(replacement)
    result = read_from(path, offset)
    assert result.restarted
    assert person_text(result.events) == ["a much longer replacement line", "and another"]


def test_normal_append_is_not_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_user("a"))
    _, offset = read_new(path, 0)
    with path.open("ab") as f:
        f.write(_user("b"))
    result = read_from(path, offset)
    assert not result.restarted
    assert person_text(result.events) == ["b"]


def test_missing_file_keeps_the_offset(tmp_path: Path) -> None:
    assert read_new(tmp_path / "nope.jsonl", 123) == ([], 123)
    assert read_new(tmp_path, 0) == ([], 0)  # a directory: unreadable, not an error


def test_negative_offset_reads_from_start(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_user("x"))
    events, _ = read_new(path, -5)
    assert person_text(events) == ["x"]


def test_max_bytes_bounds_one_read_and_the_rest_comes_next(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [_user(f"line {i}") for i in range(10)]
    path.write_bytes(b"".join(lines))
    budget = len(lines[0]) * 3 + 5
    got: list[str] = []
    offset = 0
    for _ in range(10):
        result = read_from(path, offset, max_bytes=budget)
        assert result.offset - offset <= budget
        got += person_text(result.events)
        offset = result.offset
    assert got == [f"line {i}" for i in range(10)]


def test_a_line_longer_than_max_bytes_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    huge = _user("x" * 5000)
    path.write_bytes(_user("before") + huge + _user("after"))
    offset = 0
    got: list[str] = []
    for _ in range(5):
        result = read_from(path, offset, max_bytes=1000)
        got += person_text(result.events)
        offset = result.offset
    assert got == ["before", "after"]
    assert offset == path.stat().st_size


# ---------------------------------------------------------------------------------------------
# Bad data
# ---------------------------------------------------------------------------------------------


def test_garbage_and_invalid_utf8_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        _user("kept 1")
        + b"\xff\xfe\xfa not utf-8 at all\n"
        + b"{not json}\n"
        + b"\n"
        + b"   \r\n"
        + b"[1, 2, 3]\n"
        + b"null\n"
        + b'"just a string"\n'
        + b'{"type":"user","message":{"role":"user","content":"bad \xc3 byte"}}\n'
        + b"{" * 50_000
        + b"\n"
        + _user("kept 2")
    )
    events, offset = read_new(path, 0)
    assert person_text(events) == ["kept 1", "bad \ufffd byte", "kept 2"]
    assert offset == path.stat().st_size


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":"user"}',
        b'{"type":"user","message":"not a dict"}',
        b'{"type":"user","message":{"content":42}}',
        b'{"type":"user","message":{"content":[1,null,"x",{"type":"text"},{"type":"text","text":7}]}}',
        b'{"type":"user","message":{"content":[{"type":"tool_result"}]}}',
        b'{"type":"assistant","message":{"content":[{"type":"tool_use"}]}}',
        b'{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":"ls"}]}}',
        b'{"type":"assistant","message":{"content":{"type":"text","text":"dict, not list"}}}',
        b'{"type":"summary","summary":["not","a","string"]}',
        b'{"type":"system","subtype":"compact_boundary","content":null}',
        b'{"type":5,"isSidechain":"yes","timestamp":1700000000}',
        b'{"type":"user","message":{"content":"' + b"\\ud800" + b' lone surrogate"}}',
        b'{"type":"assistant","message":{"content":[{"type":"tool_use","name":"X","input":{"a":'
        + b"[" * 30
        + b"]" * 30
        + b"}}]}}",
    ],
)
def test_odd_shapes_never_raise(line: bytes) -> None:
    events = parse_line(line)
    for e in events:
        e.text.encode("utf-8")  # always encodable, even from lone surrogates
        assert isinstance(e.is_sidechain, bool)


@given(st.binary(max_size=2000), st.integers(min_value=-10, max_value=3000))
@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_read_new_never_raises_on_arbitrary_bytes(tmp_path: Path, data: bytes, offset: int) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    events, new_offset = read_new(path, offset)
    assert 0 <= new_offset <= len(data)
    assert new_offset == 0 or data[new_offset - 1 : new_offset] == b"\n"
    assert all(isinstance(e, Event) for e in events)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "message",
                    "content",
                    "text",
                    "name",
                    "input",
                    "isMeta",
                    "isSidechain",
                    "tool_use_id",
                    "is_error",
                    "summary",
                    "subtype",
                    "role",
                    "command",
                    "file_path",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@given(JSONISH, st.sampled_from(["user", "assistant", "summary", "system", "attachment"]))
@settings(max_examples=300)
def test_parse_line_never_raises_on_json_of_any_shape(body: Any, kind: str) -> None:
    obj = {"type": kind, "message": body} if not isinstance(body, dict) else {**body}
    obj.setdefault("type", kind)
    for e in parse_line(json.dumps(obj).encode()):
        assert isinstance(e.text, str)
        assert isinstance(e.tool_input, str)


# ---------------------------------------------------------------------------------------------
# What the person said
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wrapper",
    [
        "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n"
        "<command-args></command-args>",
        "<local-command-stdout>(no content)</local-command-stdout>",
        "<local-command-stderr>boom</local-command-stderr>",
        "<system-reminder>\nThe todo list is empty.\n</system-reminder>",
        "<bash-input>ls</bash-input>",
        "<bash-stdout>a.txt</bash-stdout><bash-stderr></bash-stderr>",
        "<task-notification><result>done</result></task-notification>",
        "<memory-context>\n- user prefers tabs\n</memory-context>",
        "[Request interrupted by user]",
        "[Request interrupted by user for tool use]",
    ],
)
def test_wrappers_are_not_the_person(tmp_path: Path, wrapper: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_user(wrapper) + _user(f"{wrapper}\nreal words"))
    events, _ = read_new(path, 0)
    assert person_text(events) == ["real words"]


def test_meta_lines_are_not_the_person(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_user("Base directory for this skill: /x", isMeta=True) + _user("typed by me"))
    events, _ = read_new(path, 0)
    assert person_text(events) == ["typed by me"]
    assert [e.text for e in events if e.is_meta] == ["Base directory for this skill: /x"]


def test_list_content_text_blocks_are_the_person_and_tool_results_are_not(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        _line(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "output text"},
                        {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
                        {"type": "text", "text": "look at this screenshot"},
                    ],
                },
            }
        )
    )
    events, _ = read_new(path, 0)
    assert person_text(events) == ["look at this screenshot"]
    assert [(e.kind, e.text) for e in events if e.kind == "tool_result"] == [
        ("tool_result", "output text")
    ]


def test_tool_result_text_is_capped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_tool_result("t1", "y" * (MAX_TOOL_RESULT_CHARS * 3)))
    events, _ = read_new(path, 0)
    assert len(events[0].text) == MAX_TOOL_RESULT_CHARS


# ---------------------------------------------------------------------------------------------
# Tool helpers
# ---------------------------------------------------------------------------------------------


def test_tool_input_summaries(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        _assistant(
            _tool_use("NotebookEdit", "n1", notebook_path="/p/analysis.ipynb", new_source="x"),
            _tool_use("Bash", "b1", command="git status --short", description="status"),
            _tool_use("Grep", "g1", pattern="def upload", path="src"),
            _tool_use("mcp__db__query", "m1", sql="select 1", rows=[1] * 500),
            {"type": "thinking", "thinking": "secret plan"},
            {"type": "text", "text": "done"},
        )
    )
    events, _ = read_new(path, 0)
    uses = {e.tool_name: e.tool_input for e in events if e.kind == "tool_use"}
    assert uses["NotebookEdit"] == "/p/analysis.ipynb"
    assert uses["Bash"] == "git status --short"
    assert uses["Grep"] == "def upload"
    assert uses["mcp__db__query"].startswith('{"sql":"select 1"')
    assert len(uses["mcp__db__query"]) == MAX_INPUT_SUMMARY_CHARS
    assert assistant_text(events) == ["done"]
    assert files_edited(events) == ["/p/analysis.ipynb"]


def test_files_edited_is_ordered_unique_and_skips_failed_edits(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        _assistant(
            _tool_use("Edit", "e1", file_path="/p/b.py"),
            _tool_use("Write", "w1", file_path="/p/a.py"),
            _tool_use("MultiEdit", "m1", file_path="/p/b.py", edits=[]),
            _tool_use("Edit", "e2", file_path="/p/c.py"),
            _tool_use("Read", "r1", file_path="/p/d.py"),
        )
        + _tool_result("e2", "String to replace not found in file.", is_error=True)
    )
    events, _ = read_new(path, 0)
    assert files_edited(events) == ["/p/b.py", "/p/a.py"]
    assert tool_call_count(events) == 5


def test_commands_run_keeps_order_and_repeats(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        _assistant(_tool_use("Bash", "b1", command="make test"))
        + _assistant(_tool_use("Bash", "b2", command="git diff"))
        + _assistant(_tool_use("Bash", "b3", command="make test"))
    )
    events, _ = read_new(path, 0)
    assert commands_run(events) == ["make test", "git diff", "make test"]


def test_helpers_accept_any_iterable(session_file: Path) -> None:
    events, _ = read_new(session_file, 0)
    assert files_edited(iter(events)) == files_edited(events)
    assert tool_call_count(e for e in events) == 10


def test_reading_does_not_modify_the_file(session_file: Path) -> None:
    before = session_file.read_bytes()
    mtime = os.stat(session_file).st_mtime_ns
    read_new(session_file, 0)
    assert session_file.read_bytes() == before
    assert os.stat(session_file).st_mtime_ns == mtime
