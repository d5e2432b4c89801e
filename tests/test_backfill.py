"""Backfill (tiers/backfill.py, `memory-tool backfill`, `install --backfill`): the Scribe over
Claude Code's own transcripts of the last N days, in a sandboxed HOME with real files and the
real index. It finds the transcripts where Claude Code keeps them (CLAUDE_CONFIG_DIR included),
writes each session's summary and candidates once, writes nothing on a second run, leaves no
old session passing for the latest one, survives bad input, and reports its progress."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from memory_tool.base import paths
from memory_tool.cli.main import main
from memory_tool.store.index import open_index
from memory_tool.tiers import inbox
from memory_tool.tiers.backfill import backfill, ledger_path, transcripts
from memory_tool.tiers.hot import hot_dir

DAY = 86400


def write_transcript(
    project: Path,
    session: str,
    turns: list[tuple[str, str]],
    *,
    age_days: float = 1.0,
    tools: bool = True,
) -> Path:
    """A session as Claude Code writes it: user prompts, assistant text, a tool call each turn
    (a session with work in it), file mtime ``age_days`` ago."""
    folder = paths.projects_dir() / paths.sanitize_path(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for n, (prompt, answer) in enumerate(turns):
        base = {"sessionId": session, "cwd": str(project), "timestamp": "2026-11-20T10:00:00Z"}
        lines.append({**base, "type": "user", "uuid": f"{session}-u{n}",
                      "message": {"role": "user", "content": prompt}})  # fmt: skip
        tool = {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash",
                "input": {"command": "pytest -q"}}  # fmt: skip
        if tools:
            lines.append({**base, "type": "assistant", "uuid": f"{session}-t{n}",
                          "message": {"role": "assistant", "content": [tool]}})  # fmt: skip
        lines.append({**base, "type": "assistant", "uuid": f"{session}-a{n}",
                      "message": {"role": "assistant",
                                  "content": [{"type": "text", "text": answer}]}})  # fmt: skip
    path = folder / f"{session}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    stamp = time.time() - age_days * DAY
    os.utime(path, (stamp, stamp))
    return path


def history(project: Path) -> dict[str, Path]:
    return {
        "decision": write_transcript(
            project,
            "aaaa1111-0000-0000-0000-000000000001",
            [
                (
                    "Pick the HTTP client for the fraud-check service",
                    "[DECISION] Use httpx for every outgoing HTTP call in the fraud-check service.",
                ),
            ],
            age_days=3,
        ),  # fmt: skip
        "correction": write_transcript(
            project,
            "aaaa1112-0000-0000-0000-000000000002",
            [
                ("Load yesterday's events into a dataframe", "I used pandas.read_csv for it."),
                ("no, use polars instead of pandas for the events pipeline", "Switched to polars."),
            ],
            age_days=2,
        ),  # fmt: skip
        "old": write_transcript(
            project,
            "aaaa1113-0000-0000-0000-000000000003",
            [
                ("Set up the queue", "[DECISION] The queue is SQS, with a dead-letter queue."),
            ],
            age_days=45,
        ),  # fmt: skip
    }


def learned() -> str:
    """The text of everything capture kept: live memories (auto-capture) and inbox candidates."""
    with open_index() as idx:
        idx.refresh()
        kept = [f"{e.body} {e.description}" for e in idx.captured()]
    return " ".join(kept + [c.text for c in inbox.list_candidates()])


def tree_state(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and mtime (what a second run must not change)."""
    out = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            p = Path(dirpath) / name
            if p.suffix in (".db", ".db-wal", ".db-shm", ".lock") or name.endswith("-journal"):
                continue  # the derived index and lock files are no memory
            st = p.stat()
            out[str(p)] = (st.st_size, st.st_mtime_ns)
    return out


def test_backfill_summarises_the_last_n_days_once(project: Path) -> None:
    files = history(project)
    assert transcripts(30) == [files["decision"], files["correction"]]  # oldest first
    result = CliRunner().invoke(main, ["backfill", "--days", "30"])
    assert result.exit_code == 0, result.output
    assert "2 sessions of the last 30 days: 2 read" in result.stdout
    assert "wrote 2 cold summaries" in result.stdout
    assert "backfill: 2/2 sessions" in result.stderr  # plain progress: no terminal here
    with open_index() as idx:
        idx.refresh()
        cold = idx.entries(source="cold")
    assert len(cold) == 2 and all(e.project == paths.project_key(project) for e in cold)
    texts = learned()
    assert "httpx" in texts and "polars" in texts
    assert "SQS" not in texts  # 45 days old: outside --days 30
    # The first session after it already knows them (auto-capture: live memories, in L2).
    brief = CliRunner().invoke(main, ["wake", "--cwd", str(project)]).stdout
    assert "httpx" in brief and "polars" in brief
    # No hot state is left behind: an old session must never pass for the latest one.
    assert not [n for n in os.listdir(hot_dir()) if n.endswith((".json", ".md"))]
    # A second run reads nothing and writes nothing.
    before = tree_state(paths.state_root())
    again = CliRunner().invoke(main, ["backfill", "--days", "30", "--json"])
    report = json.loads(again.stdout)
    assert report["done"] == 0 and report["already"] == 2
    assert report["summaries"] == report["candidates"] == report["captured"] == 0
    assert tree_state(paths.state_root()) == before
    # A wider window reads the older one, and only it.
    wider = backfill(60)
    assert (wider.done, wider.already, wider.summaries) == (1, 2, 1)
    # A forgotten capture is not made again from the same source, even when every transcript
    # is read again (the ledger gone).
    with open_index() as idx:
        httpx = [e.id for e in idx.captured() if "httpx" in e.body]
    assert len(httpx) == 1
    assert CliRunner().invoke(main, ["forget", httpx[0]]).exit_code == 0
    ledger_path().unlink()
    again_all = backfill(60)
    assert again_all.done == 3 and again_all.captured == 0
    with open_index() as idx:
        assert [e.id for e in idx.captured() if "httpx" in e.body] == httpx
    assert "httpx" not in CliRunner().invoke(main, ["wake", "--cwd", str(project)]).stdout


def test_a_transcript_that_grew_is_read_again_in_place(project: Path) -> None:
    path = write_transcript(project, "bbbb2221-0000-0000-0000-000000000001", [
        ("Fix the flaky upload test", "[GOTCHA] The upload test needs the fake S3 clock."),
    ])  # fmt: skip
    assert backfill(30).summaries == 1
    with path.open("a", encoding="utf-8") as fh:  # the session was resumed
        line = {"type": "user", "sessionId": "bbbb2221-0000-0000-0000-000000000001",
                "cwd": str(project), "uuid": "later",
                "message": {"role": "user", "content": "[DEFER] Retry uploads later"}}  # fmt: skip
        fh.write(json.dumps(line) + "\n")
    report = backfill(30)
    assert (report.done, report.summaries) == (1, 0)  # the same summary, rewritten
    with open_index() as idx:
        idx.refresh()
        assert len(idx.entries(source="cold")) == 1


def test_bad_input_is_skipped_and_the_rest_is_read(project: Path) -> None:
    good = write_transcript(project, "cccc3331-0000-0000-0000-000000000001", [
        ("Choose the cache", "[DECISION] Cache sessions in Redis with a 1 hour TTL."),
    ])  # fmt: skip
    folder = good.parent
    (folder / "not-json.jsonl").write_bytes(b"\x00\x01garbage {not json\n" * 100)
    (folder / "empty.jsonl").write_text("")
    write_transcript(
        project,
        "cccc3332-0000-0000-0000-000000000002",
        [("thanks!", "You're welcome.")],
        tools=False,
    )
    result = CliRunner().invoke(main, ["backfill", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["found"] == 4 and report["failed"] == []
    assert report["summaries"] == 1 and report["empty"] == 3  # no summary for "thanks!"
    assert "Redis" in learned()


def test_it_reads_where_claude_config_dir_points(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    path = write_transcript(project, "dddd4441-0000-0000-0000-000000000001", [
        ("Pick the build tool", "[DECISION] Build with uv, not poetry."),
    ])  # fmt: skip
    assert str(path).startswith(str(tmp_path / "elsewhere" / "projects"))
    assert backfill(30).done == 1
    assert ledger_path().is_file()


def test_install_backfills_as_told_and_says_what_it_did(project: Path) -> None:
    history(project)
    runner = CliRunner()
    told = runner.invoke(main, ["install", "--no-backfill"])
    assert told.exit_code == 0, told.output
    assert "backfill: not run (--no-backfill)" in told.stdout
    asked = runner.invoke(main, ["install"])  # no terminal: says how, runs nothing
    assert "backfill: not run (2 sessions of the last 30 days could be read" in asked.stdout
    assert "httpx" not in learned()
    done = runner.invoke(main, ["install", "--backfill", "30"])
    assert done.exit_code == 0, done.output
    assert "2 sessions of the last 30 days: 2 read" in done.stdout
    assert "httpx" in learned()
    both = runner.invoke(main, ["install", "--backfill", "5", "--no-backfill"])
    assert both.exit_code == 1 and "not both" in both.output


def test_progress_is_a_bar_on_a_terminal_and_lines_elsewhere() -> None:
    import io

    from memory_tool.cli.tiers import progress_printer

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, plain = Tty(), io.StringIO()
    bar, lines = progress_printer(tty), progress_printer(plain)
    for n in range(1, 201):
        bar(n, 200)
        lines(n, 200)
    assert tty.getvalue().count("\r") == 200 and tty.getvalue().endswith("200/200 sessions\n")
    assert "[##############################]" in tty.getvalue()
    assert "\r" not in plain.getvalue() and len(plain.getvalue().splitlines()) == 11
