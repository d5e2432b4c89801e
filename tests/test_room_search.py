"""The room search made cheaper finds exactly what it found before, and the hook server's kept
index connection never answers from an index that changed or went away."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import REPO, write_memory

from memory_tool.base import paths
from memory_tool.recall.followup import choose_rooms
from memory_tool.recall.room import L3_CANDIDATE_FACTOR, MAX_ROOMS, ROOM_FILL, room_recall
from memory_tool.store import index as index_module
from memory_tool.store import migrations
from memory_tool.store import search as search_module
from memory_tool.store.index import Index, keep_open, open_index, release_kept
from memory_tool.store.rooms import compiled_rooms
from memory_tool.store.search import search

sys.path.insert(0, str(REPO / "bench"))

# A generated tree big enough that rooms hold hundreds of memories, ties and all.
TREE_FILES = 1_500
PROMPTS = 120


@pytest.fixture
def kept() -> Iterator[None]:
    keep_open()
    yield
    keep_open(False)


def room_search(idx: Index, prompt: str, rooms: list[str], home: str, **kw: object) -> list:
    return search(
        idx, prompt, limit=ROOM_FILL, rooms=rooms, sessions=False, cold=False, fuzzy=False,
        home_project=home, candidate_factor=L3_CANDIDATE_FACTOR, live_only=True, intent=False,
        **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def ranked(hits: list) -> list[tuple[str, float]]:
    return [(h.entry.id, h.score) for h in hits]


def test_a_room_search_ranks_exactly_as_the_join_did(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gen_tree import generate

    info = generate(sandbox, TREE_FILES)
    cwd = str(info["home_project_dir"])
    home = paths.project_key(cwd)
    with open_index() as idx:
        idx.refresh(cwd)
    with open(REPO / "tests" / "data" / "prompts.jsonl", encoding="utf-8") as fh:
        prompts = [json.loads(line)["prompt"] for line in fh if line.strip()][:PROMPTS]
    compared = found = 0
    with open_index() as idx:
        for i, prompt in enumerate(prompts):
            rooms, _ = choose_rooms(prompt, None, time.time(), MAX_ROOMS, compiled_rooms())
            names = [r for r, _ in rooms]
            if not names:
                continue
            # What a session was given already is left out, as L3 does from its second prompt.
            skip = {h.entry.id for h in room_search(idx, prompt, names, home)[: i % 4]}
            monkeypatch.setattr(search_module, "NARROW_TO_ROOM", False)
            joined = [ranked(room_search(idx, prompt, names, home, exclude=skip))]
            joined.append(ranked(room_search(idx, prompt, names, "")))
            before = room_recall(idx, prompt, cwd, budget=1500, exclude=skip)
            monkeypatch.setattr(search_module, "NARROW_TO_ROOM", True)
            narrowed = [ranked(room_search(idx, prompt, names, home, exclude=skip))]
            narrowed.append(ranked(room_search(idx, prompt, names, "")))
            after = room_recall(idx, prompt, cwd, budget=1500, exclude=skip)
            assert narrowed == joined, prompt
            assert [u.text for u in after.units] == [u.text for u in before.units], prompt
            compared += 1
            found += bool(joined[0])
    assert compared >= PROMPTS // 2 and found >= compared * 3 // 4


def seed(project: Path) -> None:
    rooms = paths.state_root() / "rooms"
    write_memory(rooms / "authentication", "jwt.md", "Login tokens are JWTs signed with RS256.")
    write_memory(rooms / "database", "pool.md", "Postgres pool size is 20 per worker.")
    with open_index() as idx:
        idx.refresh(project)


def ids_for(prompt: str) -> list[str]:
    idx = open_index()
    try:
        return [h.entry.id for h in room_search(idx, prompt, ["authentication"], "")]
    finally:
        idx.close()
        release_kept()


def test_the_kept_connection_sees_what_another_process_wrote(project: Path, kept: None) -> None:
    seed(project)
    first = open_index()
    assert len(ids_for("login tokens")) == 1
    write_memory(
        paths.state_root() / "rooms" / "authentication", "rotate.md", "Login tokens rotate hourly."
    )
    other = Index.open()  # another process's refresh: a connection of its own
    other.refresh(project)
    other.close()
    assert len(ids_for("login tokens")) == 2
    assert open_index() is first  # one connection throughout
    # And what it writes itself (the prompt's own folder refresh) counts as a change too.
    (paths.state_root() / "rooms" / "authentication" / "rotate.md").unlink()
    first.refresh(project)
    assert len(ids_for("login tokens")) == 1


def test_the_kept_connection_follows_an_index_file_replaced_or_removed(
    project: Path, kept: None
) -> None:
    seed(project)
    first = open_index()
    assert len(ids_for("login tokens")) == 1
    for suffix in ("", "-wal", "-shm"):  # deleted, as "the index can be deleted at any time"
        Path(f"{paths.index_file()}{suffix}").unlink(missing_ok=True)
    write_memory(
        paths.state_root() / "rooms" / "authentication", "rotate.md", "Login tokens rotate hourly."
    )
    fresh = open_index()
    assert fresh is not first
    fresh.refresh(project)
    assert len(ids_for("login tokens")) == 2
    with pytest.raises(sqlite3.ProgrammingError):
        first.conn.execute("SELECT 1")  # the old one was really closed


def test_a_transaction_a_call_left_open_is_rolled_back(project: Path, kept: None) -> None:
    seed(project)
    idx = open_index()
    idx.conn.execute("BEGIN IMMEDIATE")
    idx.set_meta("half-done", "1")
    idx.close()  # the hook's own close leaves the kept connection as it is...
    release_kept()  # ...and the server's end of call rolls back what it left
    assert not idx.conn.in_transaction
    other = sqlite3.connect(paths.index_file(), timeout=0.5)
    other.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('other', '1')")  # no lock
    other.close()
    assert idx.meta("half-done") == ""


def test_without_keep_open_every_close_closes(project: Path) -> None:
    seed(project)
    idx = open_index()
    idx.close()
    assert index_module._kept == []
    with pytest.raises(sqlite3.ProgrammingError):
        idx.conn.execute("SELECT 1")


def test_a_rooms_rowids_are_read_from_an_index_not_the_rows(project: Path) -> None:
    """Every prompt after a write to the index reads the room's rowids again: from the covering
    index, not from each entry's whole row."""
    seed(project)
    with open_index() as idx:
        statements: list[str] = []
        idx.conn.set_trace_callback(statements.append)  # statements with their values bound
        room_search(idx, "login tokens", ["authentication"], paths.project_key(str(project)))
        idx.conn.set_trace_callback(None)
        members = next(s for s in statements if "FROM entries e WHERE" in s)
        assert "?" not in members
        plan = " ".join(r[3] for r in idx.conn.execute(f"EXPLAIN QUERY PLAN {members}"))
    assert "COVERING INDEX entries_room_filter" in plan


def fresh_ids(prompt: str, rooms: list[str], home: str) -> list[tuple[str, float]]:
    """What a connection with nothing kept finds."""
    idx = Index.open()
    try:
        return ranked(room_search(idx, prompt, rooms, home))
    finally:
        idx.close()


def test_the_kept_sets_follow_each_write_without_reading_the_room_again(
    project: Path, kept: None
) -> None:
    """After a write, the kept connection tests again only the entries it touched (added,
    edited into or out of the room, superseded, forgotten, removed), and finds what a fresh
    connection finds; a write that touched no entry leaves the sets alone."""
    seed(project)
    auth = paths.state_root() / "rooms" / "authentication"
    home = paths.project_key(str(project))
    rooms = ["authentication", "database"]
    prompt = "login tokens pool worker"
    first = open_index()
    room_search(first, prompt, rooms, home)
    release_kept()
    steps = [
        lambda: write_memory(auth, "rotate.md", "Login tokens rotate hourly."),
        lambda: write_memory(auth, "rotate.md", "Login tokens rotate daily, pool of workers."),
        lambda: write_memory(auth, "jwt.md", "Login tokens are JWTs.", superseded_by="x-1"),
        lambda: write_memory(auth, "old.md", "Login tokens were opaque.", valid_to="2020-01-01"),
        lambda: write_memory(auth, "gone.md", "Login tokens were forgotten.", forgotten="2026"),
        lambda: (auth / "rotate.md").unlink(),
        lambda: write_memory(auth.parent / "database", "rotate.md", "Pool tokens per worker."),
    ]
    for i, step in enumerate(steps):
        step()
        other = Index.open()  # another process's refresh
        other.refresh(project)
        if i == 3:  # and a write that touched no entry
            other.set_meta("unrelated", "1")
        other.close()
        statements: list[str] = []
        first.conn.set_trace_callback(statements.append)
        got = ranked(room_search(first, prompt, rooms, home))
        first.conn.set_trace_callback(None)
        release_kept()
        assert got == fresh_ids(prompt, rooms, home), i
        reread = [s for s in statements if "group_concat(e.rowid)" in s]
        assert reread and all("entry_changes" in s for s in reread), i
    assert open_index() is first


def test_a_kept_set_far_behind_is_read_again(
    project: Path, kept: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(project)
    auth = paths.state_root() / "rooms" / "authentication"
    home = paths.project_key(str(project))
    first = open_index()
    room_search(first, "login tokens", ["authentication"], home)
    release_kept()
    monkeypatch.setattr(index_module, "MEMBER_CATCH_UP_MAX", 2)
    for n in range(3):
        write_memory(auth, f"more-{n}.md", f"Login tokens note {n}.")
    other = Index.open()
    other.refresh(project)
    other.close()
    statements: list[str] = []
    first.conn.set_trace_callback(statements.append)
    got = ranked(room_search(first, "login tokens", ["authentication"], home))
    first.conn.set_trace_callback(None)
    assert got == fresh_ids("login tokens", ["authentication"], home) and len(got) == 4
    reread = [s for s in statements if "group_concat(e.rowid)" in s]
    assert reread and not any("entry_changes" in s for s in reread)


def test_the_list_of_entry_changes_stays_short(project: Path) -> None:
    """Every write of an entry is listed (whichever code writes it), and the list keeps only
    the newest CHANGES_KEEP or so."""
    seed(project)
    with open_index() as idx:
        conn = idx.conn
        (before,) = conn.execute("SELECT coalesce(max(seq), 0) FROM entry_changes").fetchone()
        conn.execute("UPDATE entries SET mtime_ns = -1")  # two entries
        changed = conn.execute("SELECT rid FROM entry_changes WHERE seq > ?", (before,))
        assert sorted(r[0] for r in changed) == sorted(
            r[0] for r in conn.execute("SELECT rowid FROM entries")
        )
        for _ in range(3_000):
            conn.execute("UPDATE entries SET mtime_ns = -1")
        (count,) = conn.execute("SELECT count(*) FROM entry_changes").fetchone()
    assert migrations.CHANGES_KEEP <= count <= migrations.CHANGES_KEEP + 1024
