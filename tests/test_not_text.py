"""A memory file that is not text (random bytes, a binary dropped into a memory folder) is never
injected or returned by search; the doctor names it. Text with a stray odd byte still is text."""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path

from helpers import start_payload, write_memory

from memory_tool.base import paths
from memory_tool.hygiene.doctor import diagnose
from memory_tool.recall.wake import build_brief
from memory_tool.runtime import dispatch
from memory_tool.store.entry import NOT_TEXT, parse_file, render
from memory_tool.store.index import open_index
from memory_tool.store.search import search

# C0 controls other than tab, newline and carriage return, and DEL: what a brief must not carry.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def garbage(seed: int = 15, size: int = 20_000) -> bytes:
    return random.Random(seed).randbytes(size)


def tree_with_garbage(project: Path) -> Path:
    d = paths.project_memory_dir(project)
    write_memory(d, "project_db.md", "Postgres 16 runs the orders database.", type_="project")
    path = d / "project_garbage.md"
    path.write_bytes(garbage())
    return path


def test_random_bytes_are_kept_out_of_the_brief_and_search(project: Path) -> None:
    path = tree_with_garbage(project)
    with open_index() as idx:
        idx.refresh(project)
        (bad,) = idx.entries(path=str(path))
        assert bad.error.startswith(NOT_TEXT)
        brief = build_brief(idx, project)
        l2 = brief.layers["L2"]
        assert bad.id not in {e.id for e in l2.picked + l2.omitted}  # no competing for L2
        assert "Postgres 16" in brief.text
        assert not CONTROL.search(brief.text)
        # Whatever words the bytes happen to hold, search never returns the file.
        words = set(re.findall(r"[A-Za-z]{2,}", garbage().decode("latin-1")))
        for query in [*sorted(words)[:40], "garbage", "project_garbage"]:
            assert bad.id not in {h.entry.id for h in search(idx, query, limit=50)}


def test_the_session_start_hook_carries_no_control_characters(project: Path) -> None:
    tree_with_garbage(project)
    stdout = io.StringIO()
    stdin = io.BytesIO(json.dumps(start_payload(project)).encode())
    assert dispatch.run("SessionStart", stdin=stdin, stdout=stdout) == 0
    out = json.loads(stdout.getvalue())
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "Postgres 16" in text
    assert not CONTROL.search(text)
    assert not CONTROL.search(json.dumps(out, ensure_ascii=False))


def test_doctor_names_the_file_that_is_not_text(project: Path) -> None:
    path = tree_with_garbage(project)
    with open_index() as idx:
        idx.refresh(project)
        report = diagnose(idx, project, duplicates=False)
    found = [f for f in report.problems if f.path == str(path)]
    assert [f.check for f in found] == ["not_text"]
    assert found[0].message.startswith(NOT_TEXT)
    assert report.summary().startswith("1 file that is not text")


def test_text_with_a_few_odd_bytes_is_still_text(tmp_path: Path) -> None:
    # A stray NUL, a Latin-1 accent, a terminal colour code: text all the same.
    cases = {
        "nul.md": b"A fact with one stray\x00 NUL byte in it, saved by a crashed editor.",
        "latin1.md": "Le café ouvre à huit heures; the standup is at 9:30.".encode("latin-1"),
        "ansi.md": b"Build output: \x1b[32mPASSED\x1b[0m in 12 seconds on the CI runner.",
        "utf16.md": "A fact saved as UTF-16 with its byte order mark.".encode("utf-16"),
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        e = parse_file(path, "room", stable_key=name, room="misc")
        render(e)
        assert not e.error.startswith(NOT_TEXT), (name, e.error)
        assert "fact" in e.body or "café" in e.body or "PASSED" in e.body or "caf" in e.body
        assert not CONTROL.search(e.line), (name, e.line)  # shown without control characters


def test_a_binary_file_in_a_room_is_not_recalled(project: Path) -> None:
    room = paths.state_root() / "rooms" / "authentication"
    room.mkdir(parents=True)
    (room / "blob.md").write_bytes(b"login token refresh " + garbage(7, 4_000))
    write_memory(room, "rotation.md", "Refresh tokens rotate every 15 minutes.")
    from memory_tool.recall.room import room_recall

    with open_index() as idx:
        idx.refresh(project)
        result = room_recall(idx, "How does the login token refresh work?", str(project),
                             budget=1500)  # fmt: skip
    assert "rotate every 15 minutes" in result.text
    assert "blob" not in result.text and not CONTROL.search(result.text)


def test_text_padded_with_nul_bytes_is_text(tmp_path: Path) -> None:
    # What a crash (or a preallocating writer) leaves: intact text, then zeros to the end.
    path = tmp_path / "padded.md"
    path.write_bytes(b"---\nname: padded\n---\nThe padded fact survives.\n" + b"\x00" * 50_000)
    e = parse_file(path, "room", stable_key="padded", room="misc")
    assert not e.error.startswith(NOT_TEXT) and "padded fact survives" in e.body
