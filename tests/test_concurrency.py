"""Several writers and readers at once: Claude Code runs sessions in parallel, each with its own
hooks, and the agent or the person may add memories meanwhile. Nothing may be lost."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO
from test_faults import check_output, substantial_transcript

from memory_tool.base import paths
from memory_tool.runtime.settings import HOOK_EVENTS, hook_command
from memory_tool.store import tree
from memory_tool.store.index import open_index

WRITERS = 8
PER_WRITER = 100
# Every third text is the same in all writers: same slug, so file names collide across processes.
SHARED_EVERY = 3
LINE_RE = re.compile(r"^- \[[^\]]*\]\(([^)]+)\) — ")


def _writer(n: int, project: str, home: str, out: Any) -> None:
    """One process adding PER_WRITER memories through the library, as `memory-tool add` does."""
    os.environ["HOME"] = home
    from memory_tool.store.index import open_index
    from memory_tool.store.palace import add_memory
    from memory_tool.store.rooms import room_classifier

    made = []
    with open_index() as idx:
        idx.room_classifier = room_classifier()
        for i in range(PER_WRITER):
            text = (  # the same file name for every writer (six words), a text of its own
                f"Shared fact number {i}: the build uses cache level {i}, says writer {n}."
                if i % SHARED_EVERY == 0
                else f"Writer {n} fact {i}: widget {n}-{i} runs on port {8000 + i}."
            )
            kind = ("project", None) if i % 2 else ("note", "deployment")
            entry = add_memory(idx, text, type_=kind[0], cwd=project, room=kind[1])
            made.append([entry.id, entry.path])
    out.put((n, made))


def run_hook(event: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        hook_command(event),
        shell=True,
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=HOOK_EVENTS[event][2],
        env=dict(os.environ),
    )


def memory_index_lines(folder: Path) -> list[str]:
    """File names named by a folder's MEMORY.md, one per line, in order."""
    text = (folder / tree.MEMORY_INDEX_NAME).read_text(encoding="utf-8")
    names = []
    for line in text.splitlines():
        m = LINE_RE.match(line)
        assert m, f"not a MEMORY.md line: {line!r}"
        names.append(m.group(1))
    return names


def test_eight_writers_and_hooks_lose_nothing(project: Path, sandbox: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(n, str(project), str(sandbox), queue))
        for n in range(WRITERS)
    ]
    stop = threading.Event()
    hook_runs: Counter[str] = Counter()
    started: list[float] = []
    failures: list[str] = []

    def read_meanwhile() -> None:
        """Hooks of other sessions, reading (and refreshing) the index during the writes."""
        i = 0
        while not stop.is_set() or i < 2:  # one of each event at least, however slow the machine
            started.append(time.monotonic())
            event = ("SessionStart", "UserPromptSubmit")[i % 2]
            payload = {
                "session_id": f"reader-{i}",
                "transcript_path": "/nonexistent.jsonl",
                "cwd": str(project),
                "source": "startup",
                "prompt": "how do we deploy the widget?",
            }
            began = time.monotonic()
            try:
                proc = run_hook(event, payload)
                assert proc.returncode == 0
                check_output(proc.stdout, event)
            except subprocess.TimeoutExpired:  # Claude Code would have killed it
                failures.append(f"{event}: over its timeout ({time.monotonic() - began:.1f} s)")
            except AssertionError as exc:
                failures.append(f"{event}: {exc} {proc.stderr!r}")
            hook_runs[event] += 1
            i += 1

    reader = threading.Thread(target=read_meanwhile, daemon=True)
    for p in procs:
        p.start()
    reader.start()
    made: dict[int, list[list[str]]] = {}
    for _ in procs:
        n, rows = queue.get(timeout=600)
        made[n] = rows
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    writes_done = time.monotonic()
    stop.set()
    reader.join(timeout=120)
    assert not failures, failures[:3]
    assert hook_runs["SessionStart"] >= 1 and hook_runs["UserPromptSubmit"] >= 1
    assert started[0] < writes_done  # the hooks ran against the index while it was written
    if os.environ.get("MEMORY_TOOL_CONCURRENCY_STATS"):  # figures for RELIABILITY.md
        Path(os.environ["MEMORY_TOOL_CONCURRENCY_STATS"]).write_text(json.dumps(hook_runs))

    written = [(entry_id, path) for rows in made.values() for entry_id, path in rows]
    assert len(written) == WRITERS * PER_WRITER
    # Every file exists, each under its own name (colliding slugs got -2, -3, ...).
    file_paths = {path for _, path in written}
    assert len(file_paths) == WRITERS * PER_WRITER
    assert all(Path(p).is_file() for p in file_paths)
    # The index holds all of them, with distinct ids.
    assert len({entry_id for entry_id, _ in written}) == WRITERS * PER_WRITER
    with open_index() as idx:
        rows = idx.conn.execute("SELECT id, path FROM entries").fetchall()
        indexed = {r["path"]: r["id"] for r in rows}
        for entry_id, path in written:
            assert indexed.get(path) == entry_id
        # A full refresh finds nothing the writers did not already index.
        stats = idx.refresh(project)
        assert not stats.added and not stats.removed
    # Every MEMORY.md line is there: one per file, none twice, none torn.
    folders = {Path(p).parent for p in file_paths}
    listed: list[str] = []
    for folder in folders:
        names = memory_index_lines(folder)
        assert len(names) == len(set(names))
        listed += [str(folder / name) for name in names]
    assert sorted(listed) == sorted(file_paths)


def all_at_once(event: str, payload: dict[str, object]) -> list[tuple[int, bytes, bytes]]:
    """WRITERS copies of a hook, run as installed and started together: (exit code, stdout,
    stderr) of each."""
    procs = [
        subprocess.Popen(
            hook_command(event),
            shell=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(WRITERS)
    ]
    outs = [p.communicate(json.dumps(payload).encode(), timeout=60) for p in procs]
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outs, strict=True)]


def test_parallel_session_starts_on_a_fresh_machine(project: Path, sandbox: Path) -> None:
    """Eight sessions start at once before any index exists: the schema is created once and
    every one of them gets the brief."""
    from helpers import write_memory

    write_memory(
        paths.project_memory_dir(project), "project_a.md", "Fresh fact ZFRESHQ.", type_="project"
    )
    payload = {"session_id": "p", "transcript_path": "/x", "cwd": str(project), "source": "startup"}
    for code, out, err in all_at_once("SessionStart", payload):
        assert code == 0, err
        doc = check_output(out, "SessionStart")
        assert doc is not None, err
        assert "ZFRESHQ" in doc["hookSpecificOutput"]["additionalContext"]
    with open_index() as idx:
        assert idx.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert idx.count() == 1


def test_racing_stop_hooks_ask_for_the_handoff_once(project: Path, tmp_path: Path) -> None:
    """Claude Code may run the Stop hook of one session twice at once (two settings files):
    only one of them may block."""
    transcript = substantial_transcript(tmp_path / "t.jsonl", project)
    payload = {
        "session_id": "race-1",
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "Built the widget modules.",
    }
    blocks = 0
    for code, out, err in all_at_once("Stop", payload):
        assert code == 0, err
        doc = check_output(out, "Stop")
        blocks += bool(doc and doc.get("decision") == "block")
    assert blocks == 1


@pytest.mark.skipif(not (REPO / ".venv" / "bin").is_dir(), reason="needs the dev venv")
def test_parallel_cli_adds(project: Path) -> None:
    """The person's (or agent's) `memory-tool add` from several shells at once."""
    code = "import sys; from memory_tool.cli.main import main; sys.argv[0] = 'memory-tool'; main()"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, "add", "--json", "--type", "feedback", f"Rule {n}: same."],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WRITERS)
    ]
    rows = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        rows.append(json.loads(out))
    assert len({r["path"] for r in rows}) == WRITERS
    folder = paths.project_memory_dir(project)
    assert sorted(memory_index_lines(folder)) == sorted(Path(r["path"]).name for r in rows)
    with open_index() as idx:
        assert {r["id"] for r in rows} <= {e.id for e in idx.query("type = 'feedback'")}


@pytest.mark.parametrize("which", ["refresh_for_wake", "refresh"])
def test_a_memory_indexed_while_a_refresh_scans_is_kept(
    which: str, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interleaving behind a lost index row: a refresh lists the folder, another process
    then writes and indexes a new memory, and the refresh goes on. The new row must survive."""
    from memory_tool.store.palace import add_memory

    with open_index() as idx:
        add_memory(idx, "An old fact.", type_="project", cwd=project)
    real_scan = tree.scan
    added: list[Any] = []

    def scan_then_another_writer(folder: tree.Folder) -> Any:
        items = list(real_scan(folder))
        if not added and folder.source == "claude":
            with open_index() as other:  # another process's connection
                added.append(add_memory(other, "A new fact.", type_="project", cwd=project))
        return iter(items)

    monkeypatch.setattr(tree, "scan", scan_then_another_writer)
    with open_index() as idx:
        getattr(idx, which)(project)
    monkeypatch.setattr(tree, "scan", real_scan)
    (new,) = added
    with open_index() as idx:
        assert idx.get(new.id).path == new.path


def test_a_database_another_process_is_writing_is_waited_for_not_set_aside(
    tmp_path: Path,
) -> None:
    """Two hooks of a first session create index.db at once: while one holds the new database's
    write lock, SQLite answers the other's switch to WAL "database is locked" at once, without
    the busy wait. That is a database in use, not a damaged one (it was moved aside, and the
    first process wrote on into the moved file: a session without its brief, seen in CI)."""
    import sqlite3

    from memory_tool.store.index import Index

    db = tmp_path / "index.db"
    other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # the RESERVED lock a creating process holds
    other.execute("CREATE TABLE written_by_the_other (a)")
    release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    release.start()
    try:
        idx = Index.open(db)
    finally:
        release.join()
    try:
        assert idx.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in idx.conn.execute("SELECT name FROM sqlite_master")}
        assert {"written_by_the_other", "entries", "meta"} <= tables
    finally:
        idx.close()
        other.close()
    assert sorted(p.name for p in tmp_path.iterdir() if "corrupt" in p.name) == []
