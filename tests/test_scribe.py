"""The Scribe: cold summaries (content, ~1/10 of the session), the rolling window with wiki
promotion, privacy, and the optional isolated `claude -p` summary."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import as_event, run_hook
from test_tiers_support import (
    ANTHROPIC_KEY,
    LONG_SID,
    SECRETS,
    SMALL_SID,
    hook_json,
    install_transcript,
    payload,
    state_files,
)

from memory_tool.cli.main import main
from memory_tool.store.index import open_index
from memory_tool.tiers import digest, inbox, scribe
from memory_tool.tiers.hot import load_state


@pytest.fixture(autouse=True)
def inbox_mode(state: Path) -> None:
    """The cold tier and its roll into the wiki, with every signal left in the inbox
    (capture.mode: inbox) so a lesson reaches the brief only through them; auto-capture has
    tests/test_capture.py."""
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text("capture:\n  mode: inbox\n", encoding="utf-8")


def _summarise(project: Path, name: str = "tiers_long") -> Path:
    transcript = install_transcript(name, project)
    digest.update_session(as_event(payload("Stop", name, project, transcript)))
    entry = scribe.run(LONG_SID if name == "tiers_long" else SMALL_SID)
    assert entry is not None
    return Path(entry.path)


def _body(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("\n---\n", 1)[1]


def test_cold_summary_holds_the_session_in_a_tenth_of_its_text(project: Path, state: Path) -> None:
    path = _summarise(project)
    assert path.parent == state / "cold" / path.parent.name
    assert path.name == f"2026-11-29-{LONG_SID[:8]}.md"
    body = _body(path)
    summary = body.split("\n## Stats\n")[0]
    session_chars = load_state(LONG_SID)["text_chars"]  # type: ignore[index]
    ratio = len(summary) / session_chars
    assert 0.05 < ratio <= 0.11, ratio  # about a tenth; never a copy
    # The task, the result (from the final answer), decisions, files, commands, open items.
    assert "Task: Add idempotency keys to POST /charges" in body
    assert "Result: Idempotency keys are in place for POST /charges" in body
    decisions = body.split("## Decisions\n")[1].split("\n\n")[0]
    assert "Store idempotency records in Redis with a 24 h TTL" in decisions
    assert "User: Always run mypy before committing." in decisions
    assert "## Gotchas\n- The test suite needs Redis" in body
    files = body.split("## Files changed (6)\n")[1].split("\n\n")[0].splitlines()
    assert "- app/idempotency.py" in files and "- docs/idempotency.md" in files  # subagent's too
    commands = body.split("## Commands that mattered\n")[1].split("\n\n")[0]
    assert "`mypy app`: failed 1x" in commands and "passes now" in commands
    assert "git status --short" not in commands  # not every command matters
    assert "## Open items\n- POST /refunds still has no idempotency" in body
    assert "Stats" in body and "25 tool calls, 6 files edited" in body


def test_cold_summary_is_indexed_as_cold_memory_and_never_always_loaded(project: Path) -> None:
    path = _summarise(project)
    with open_index() as idx:
        (entry,) = idx.query("path = ?", (str(path),))
    assert entry.source == "cold" and entry.type == "cold" and not entry.always
    assert entry.created == "2026-11-29"
    assert entry.line.startswith(f"- [{entry.id}] Task: Add idempotency keys")
    result = CliRunner().invoke(main, ["wake", "--cwd", str(project)])
    assert "idempotency" not in result.output  # cold is on demand, not in the brief


def test_a_session_is_one_summary_rewritten_as_it_goes(project: Path, state: Path) -> None:
    transcript = install_transcript("tiers_long", project, lines=20)
    digest.update_session(as_event(payload("Stop", "tiers_long", project, transcript)))
    first = scribe.run(LONG_SID)
    assert first is not None
    assert "Result:" in Path(first.path).read_text()
    install_transcript("tiers_long", project)
    run_hook("Stop", payload("Stop", "tiers_long", project, transcript,
                             last_assistant_message="Final: all done, refunds next."))  # fmt: skip
    files = list((state / "cold").rglob("*.md"))
    assert [str(p) for p in files] == [first.path]
    # The Stop payload's final answer wins over the transcript, which may lag.
    assert "Result: Final: all done, refunds next." in files[0].read_text()


def test_session_end_hook_writes_the_summary(project: Path, state: Path) -> None:
    transcript = install_transcript("tiers_small", project)
    out = run_hook("SessionEnd", payload("SessionEnd", "tiers_small", project, transcript,
                                         reason="prompt_input_exit"))  # fmt: skip
    assert out.returncode == 0 and hook_json(out.stdout) is None
    (path,) = (state / "cold").rglob("*.md")
    body = _body(path)
    assert "Task: Fix the typo in the README heading." in body
    assert "- README.md" in body and "- docs/index.md" in body
    # A short session keeps its essentials even above a tenth (COLD_MIN_CHARS).
    assert len(body) <= scribe.COLD_MIN_CHARS + 400


def test_secrets_private_spans_and_injected_memory_never_reach_any_tier(
    project: Path, state: Path
) -> None:
    transcript = install_transcript("tiers_long", project)
    run_hook("Stop", payload("Stop", "tiers_long", project, transcript))
    run_hook("SessionEnd", payload("SessionEnd", "tiers_long", project, transcript))
    written = state_files(state)
    assert any("cold" in p.parts for p in written) and any("inbox" in p.parts for p in written)
    for path in written:
        text = path.read_text(encoding="utf-8")
        for secret in SECRETS:
            assert secret not in text, (secret, path)
    # Redacted in place, so the text stays useful: the kind of secret is still visible.
    hot_state = (state / "hot" / f"{LONG_SID}.json").read_text()
    assert "postgres://billing:[REDACTED:url_password]@db.internal" in hot_state
    assert "Bearer [REDACTED:anthropic_key]" in hot_state


def _age(path: Path, created: str) -> None:
    text = path.read_text(encoding="utf-8")
    text = text.replace('created: "2026-11-29"', f'created: "{created}"')
    text = text.replace('updated: "2026-11-29"', f'updated: "{created}"')
    path.write_text(text, encoding="utf-8")


def test_roll_promotes_decisions_and_gotchas_then_removes_old_summaries(
    project: Path, state: Path
) -> None:
    old = _summarise(project)
    recent = _summarise(project, "tiers_small")
    _age(old, "2026-10-20")  # 40 days before today (MEMORY_TOOL_TODAY=2026-11-29)
    _age(recent, "2026-11-01")  # 28 days: inside the 30-day window
    waiting = {c.text for c in inbox.list_candidates()}
    assert "Always run mypy before committing." in waiting
    with open_index() as idx:
        report = scribe.roll(idx)
        assert report.removed == [str(old)]
        assert not old.exists() and recent.exists()
        assert idx.query("path = ?", (str(old),)) == []
        wiki = idx.query("source = 'wiki'")
    texts = {e.description: Path(e.path).read_text() for e in wiki}
    adr = next(t for d, t in texts.items() if d.startswith("Store idempotency records in Redis"))
    for part in ("**Decision:** Store idempotency", "**Context:** Add idempotency keys",
                 "**Consequences:** The code changed under it then: app/idempotency.py",
                 "**Date:** 2026-10-20"):  # fmt: skip
        assert part in adr
    assert "created: '2026-10-20'" in adr and "- decision" in adr
    assert any("**Gotcha:** The test suite needs Redis" in t for t in texts.values())
    assert any("Always run mypy before committing" in d for d in texts)  # the user's rule
    assert (state / "wiki" / "MEMORY.md").read_text().count("- [") == len(wiki)
    # What was promoted leaves the inbox: accepting it too would save a copy.
    left = {c.text for c in inbox.list_candidates()}
    assert "Always run mypy before committing." not in left
    assert not any(t.startswith("Store idempotency records in Redis") for t in left)
    # Promotion happens once: rolling again (or the same decision twice) adds nothing.
    with open_index() as idx:
        assert scribe.roll(idx).removed == []
        assert len(idx.query("source = 'wiki'")) == len(wiki)


def test_retention_days_come_from_the_config(project: Path, state: Path) -> None:
    path = _summarise(project)
    _age(path, "2026-11-20")  # 9 days old
    with open_index() as idx:
        assert scribe.roll(idx).removed == []
    (state / "config.yaml").write_text("cold:\n  retention_days: 7\n")
    result = CliRunner().invoke(main, ["scribe", "--roll"])
    assert result.exit_code == 0, result.output
    assert "1 summaries rolled" in result.output
    assert not path.exists()


def test_the_live_session_is_never_rolled_away(project: Path, state: Path) -> None:
    # A transcript from long ago, summarised by hand: its summary is old, but it is the one
    # being written, so the run that writes it keeps it.
    transcript = Path(__file__).parent / "data" / "transcripts" / "session_basic.jsonl"
    result = CliRunner().invoke(main, ["scribe", str(transcript)])
    assert result.exit_code == 0, result.output
    (path,) = (state / "cold").rglob("*.md")
    assert path.name.startswith("2026-03-02-8d0c5f3e")
    assert "Task: The upload client gives up on the first 503." in path.read_text()
    assert "characters" in result.output and "%" in result.output


def _fake_claude(tmp_path: Path, output: str) -> tuple[Path, Path]:
    record = tmp_path / "claude-call.json"
    script = tmp_path / "claude"
    script.write_text(
        "#!/usr/bin/env python3\n"
        "import json, os, sys\n"
        f"json.dump({{'argv': sys.argv[1:], 'nested': os.environ.get('MEMORY_TOOL_NESTED')}}, "
        f"open({str(record)!r}, 'w'))\n"
        f"print({output!r})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, record


def test_model_summary_is_off_by_default(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, record = _fake_claude(tmp_path, "model text")
    monkeypatch.setenv("MEMORY_TOOL_CLAUDE_BIN", str(script))
    transcript = install_transcript("tiers_small", project)
    run_hook("SessionEnd", payload("SessionEnd", "tiers_small", project, transcript))
    assert not record.exists()


def test_model_summary_runs_isolated_capped_and_sanitised(
    project: Path, state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long_text = "The session added idempotency keys. " * 40 + f"key {ANTHROPIC_KEY}"
    script, record = _fake_claude(tmp_path, long_text)
    monkeypatch.setenv("MEMORY_TOOL_CLAUDE_BIN", str(script))
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text(
        "cold:\n  model_summary: true\n  model_summary_max_chars: 300\n"
    )
    transcript = install_transcript("tiers_long", project)
    run_hook("Stop", payload("Stop", "tiers_long", project, transcript))
    assert not record.exists()  # only when the session ends: one call per session
    run_hook("SessionEnd", payload("SessionEnd", "tiers_long", project, transcript))
    call = json.loads(record.read_text())
    argv = call["argv"]
    assert argv[0] == "-p"
    for flag in ("--bare", "--no-session-persistence"):
        assert flag in argv
    assert argv[argv.index("--tools") + 1] == ""  # no tools at all
    assert call["nested"] == "1"  # our own hooks stand down even if hooks ran
    prompt = argv[1]
    assert "Add idempotency keys" in prompt
    for secret in SECRETS:
        assert secret not in prompt
    (path,) = (state / "cold").rglob("*.md")
    section = path.read_text().split("## Model summary\n")[1].split("\n## Stats")[0].strip()
    assert 0 < len(section) <= 300
    assert ANTHROPIC_KEY not in path.read_text()


def test_nested_environment_makes_every_hook_a_no_op(project: Path, state: Path) -> None:
    transcript = install_transcript("tiers_long", project)
    nested = {"MEMORY_TOOL_NESTED": "1"}
    for event in ("SessionStart", "Stop", "SessionEnd"):
        data = payload(event, "tiers_long", project, transcript, source="startup")
        out = run_hook(event, data, env=nested)
        assert out.returncode == 0 and out.stdout == b""
    assert not state.exists() or not list(state.rglob("*.md"))
    assert os.environ.get("MEMORY_TOOL_NESTED") is None


def _long_session(path: Path, turns: int) -> None:
    """A long session in the transcript format: each turn a request, a big tool output and a
    reply (tool output dominates, as in real sessions)."""
    lines = []
    for i in range(turns):
        ts = f"2026-11-29T{8 + i // 60:02d}:{i % 60:02d}:00.000Z"
        common = {"sessionId": "77777777-0000-4000-8000-000000000000", "cwd": "/w/app",
                  "timestamp": ts, "isSidechain": False}  # fmt: skip
        ask = f"Step {i}: tune the cache eviction for shard {i}"
        lines.append({**common, "type": "user", "message": {"role": "user", "content": ask}})
        lines.append({**common, "type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": "Bash",
             "input": {"command": f"bench --shard {i}"}}]}})  # fmt: skip
        lines.append({**common, "type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}",
             "content": f"shard {i} p99 latency sample line\n" * 90}]}})  # fmt: skip
        lines.append({**common, "type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": f"Shard {i}: LRU beat LFU by {i % 7} ms at p99; kept LRU. "
             + "Details of the run follow. " * 20}]}})  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_a_long_session_fills_toward_a_tenth_with_one_line_per_turn(
    project: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "long.jsonl"
    _long_session(transcript, 60)
    result = CliRunner().invoke(main, ["scribe", str(transcript), "--cwd", str(project)])
    assert result.exit_code == 0, result.output
    path = Path(result.output.split(" -> ")[1].split(" (")[0])
    body = _body(path).split("\n## Stats\n")[0]
    state = load_state("77777777-0000-4000-8000-000000000000")
    assert state is not None
    target = min(scribe.COLD_MAX_CHARS, state["text_chars"] * scribe.COLD_RATIO)
    assert 0.6 * target < len(body) <= target + 400  # filled toward the target, not past it
    turns = body.split("## Turns\n")[1].splitlines()
    # The first turn asked the task: the summary says it once, on its Task line.
    assert body.lstrip().startswith("Task: Step 0: tune the cache eviction for shard 0")
    assert turns[0].startswith("- (the task above) → Shard 0: LRU")
    # Both ends of the session survive the cap on kept turns.
    assert any(t.startswith("- Step 59:") for t in turns)
    assert len(turns) <= digest.KEEP_FIRST_TURNS + digest.KEEP_LAST_TURNS


PASSWD = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"


def _hot_files(state: Path) -> dict[str, bytes]:
    folder = state / "hot"
    return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.is_dir() else {}


@pytest.mark.parametrize(
    "text",
    [PASSWD, "", '{"name": "pkg", "version": "1.0"}\n{"other": true}\n', "\x00\x01binary\n"],
    ids=["passwd", "empty", "other-json-lines", "binary"],
)
def test_scribing_a_file_that_is_no_transcript_writes_nothing(
    project: Path, state: Path, tmp_path: Path, text: str
) -> None:
    passwd = tmp_path / "passwd"
    passwd.write_text(text)
    runner = CliRunner()
    result = runner.invoke(main, ["scribe", str(passwd), "--cwd", str(project)])
    assert result.exit_code == 1
    assert f"Error: {passwd} is not a Claude Code transcript" in result.output
    assert "nothing was written" in result.output
    assert _hot_files(state) == {}
    assert not (state / "cold").exists() or not any((state / "cold").rglob("*.md"))
    # No fake session became this project's latest.
    for args in (["hot"], ["scribe"]):
        later = runner.invoke(main, [*args, "--cwd", str(project)])
        assert "passwd" not in later.output, later.output


def test_a_transcript_with_nothing_to_summarise_writes_nothing(
    project: Path, state: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "empty-session.jsonl"
    line = {"type": "system", "sessionId": "12345678-0000-4000-8000-000000000000", "cwd": "/x"}
    transcript.write_text(json.dumps(line) + "\n")
    result = CliRunner().invoke(main, ["scribe", str(transcript), "--cwd", str(project)])
    assert result.exit_code == 1
    assert "has nothing to summarise yet" in result.output
    assert _hot_files(state) == {}


def test_a_file_that_is_no_transcript_never_touches_the_session_it_is_named_after(
    project: Path, state: Path, tmp_path: Path
) -> None:
    _summarise(project)
    before = _hot_files(state)
    assert f"{LONG_SID}.md" in before and f"{LONG_SID}.json" in before
    impostor = tmp_path / f"{LONG_SID}.jsonl"
    impostor.write_text(PASSWD)
    result = CliRunner().invoke(main, ["scribe", str(impostor), "--cwd", str(project)])
    assert result.exit_code == 1
    assert "is not a Claude Code transcript" in result.output
    assert _hot_files(state) == before


def test_a_session_that_only_said_thanks_gets_no_cold_summary(project: Path, state: Path) -> None:
    # It would clutter search and stand in, as the latest summary, for the session a
    # "where were we" should bring back.
    from memory_tool.base import paths

    sid = "5b1c2d3e-0000-4000-8000-00000000beef"
    folder = paths.projects_dir() / paths.sanitize_path(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / f"{sid}.jsonl"
    base = {"sessionId": sid, "cwd": str(project), "timestamp": "2026-11-30T09:00:00.000Z"}
    lines = [
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "thanks!"}},
        {**base, "type": "assistant", "uuid": "a1",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Any time."}]}},
    ]  # fmt: skip
    transcript.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    out = run_hook("SessionEnd", {"session_id": sid, "transcript_path": str(transcript),
                                  "cwd": str(project), "hook_event_name": "SessionEnd",
                                  "reason": "prompt_input_exit"})  # fmt: skip
    assert out.returncode == 0
    state_now = load_state(sid)
    assert state_now is not None and state_now["prompt_count"] == 1  # the session was read
    assert not list((state / "cold").rglob("*.md"))


def test_the_result_line_does_not_keep_the_tags_of_a_lesson() -> None:
    # The tagged lesson goes to Decisions; the result says the rest of what happened, without
    # the lesson again (a request would carry it twice) or its marks.
    lesson = "We use RS256 for JWT signing."
    state = {"notes": [{"kind": "decision", "text": lesson, "role": "a"}],
             "first_task": "sign the tokens", "task": "sign the tokens",
             "final": f"**[DECISION]:** {lesson} Tokens rotate hourly."}  # fmt: skip
    full = digest.new_state("s-tags", "/tmp", "")
    full.update(state)
    items = scribe.summary_items(full)
    assert ("", "Result: Tokens rotate hourly.") in items
    assert ("Decisions", "We use RS256 for JWT signing.") in items


def test_a_tagged_line_of_the_result_is_not_glued_to_the_line_before() -> None:
    # The week benchmark: "…, fixed with keyExtractor Moving the trip photos to expo-image is
    # deferred …" in the Result, and the same open item in the brief: one fact, twice.
    item = "Moving the trip photos to expo-image is deferred until after the 3.0 release."
    full = digest.new_state("s-tags2", "/tmp", "")
    full.update({"notes": [{"kind": "defer", "text": item, "role": "a"}],
                 "first_task": "fix the flicker", "task": "fix the flicker",
                 "final": f"- rows had no stable key, fixed with keyExtractor\n[DEFER] {item}\n"
                          "- a short fade is left"})  # fmt: skip
    result = next(line for _, line in scribe.summary_items(full) if line.startswith("Result:"))
    assert (
        result == "Result: - rows had no stable key, fixed with keyExtractor - a short fade is left"
    )
    assert any(
        item in line for _, line in scribe.summary_items(full) if not line.startswith("Result:")
    )


def _chat(project: Path, sid: str, asks: list[str]) -> Path:
    """A session that only talked: each prompt answered, no tool call, nothing tagged."""
    from memory_tool.base import paths

    folder = paths.projects_dir() / paths.sanitize_path(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / f"{sid}.jsonl"
    base = {"sessionId": sid, "cwd": str(project), "timestamp": "2026-11-30T09:00:00.000Z"}
    lines = []
    for n, ask in enumerate(asks):
        lines += [
            {**base, "type": "user", "uuid": f"u{n}", "message": {"role": "user", "content": ask}},
            {**base, "type": "assistant", "uuid": f"a{n}", "message": {
                "role": "assistant", "content": [{"type": "text", "text": f"Answer {n}."}]}},
        ]  # fmt: skip
    transcript.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return transcript


IDLE_SID = "6c2d3e4f-0000-4000-8000-0000000idle"


def test_a_session_of_a_question_or_two_gets_no_cold_summary(project: Path, state: Path) -> None:
    asks = ["What does the retry decorator in the billing client do?", "And its backoff?"]
    transcript = _chat(project, IDLE_SID, asks)
    end = {"session_id": IDLE_SID, "transcript_path": str(transcript), "cwd": str(project),
           "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}  # fmt: skip
    assert run_hook("SessionEnd", end).returncode == 0
    state_now = load_state(IDLE_SID)
    assert state_now is not None and state_now["prompt_count"] == 2  # the session was read
    assert not list((state / "cold").rglob("*.md"))
    # A third prompt makes it a conversation worth a summary.
    transcript = _chat(project, IDLE_SID, [*asks, "Write that down as a note for the team."])
    assert run_hook("SessionEnd", end).returncode == 0
    assert len(list((state / "cold").rglob("*.md"))) == 1


def test_a_hello_that_looks_like_a_hint_gets_no_cold_summary(project: Path, state: Path) -> None:
    # blind20: "morning! no task, just wanted to say 0.3 got 40 stars" was a hint for the inbox,
    # which made the hello a session of substance and the latest for "where were we?".
    asks = ["morning! nope, nothing to fix today, just saying the release got 40 stars overnight"]
    transcript = _chat(project, IDLE_SID, asks)
    end = {"session_id": IDLE_SID, "transcript_path": str(transcript), "cwd": str(project),
           "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}  # fmt: skip
    assert run_hook("SessionEnd", end).returncode == 0
    state_now = load_state(IDLE_SID)
    assert state_now is not None and state_now["notes"]  # a hint was read
    assert {n["signal"] for n in state_now["notes"]} == {"heuristic"}
    assert not list((state / "cold").rglob("*.md"))


def test_an_idle_sessions_summary_is_never_the_latest_earlier_session(
    project: Path, state: Path
) -> None:
    """Summaries written before the Scribe skipped idle sessions: resume and "where were we"
    look past them to the last session that did something."""
    from memory_tool.base import paths
    from memory_tool.tiers import inject

    worked = _summarise(project)
    idle = digest.new_state(IDLE_SID, str(project), "")
    idle.update(first_task="What does the retry decorator do?", prompt_count=1,
                final="It retries.", text_chars=60)  # fmt: skip
    with open_index() as idx:
        idle_path = Path(scribe.write_cold(idx, idle).path)
        os.utime(idle_path, (worked.stat().st_mtime + 60,) * 2)  # written last
        idx.refresh(project)
        latest = inject.latest_cold(idx, paths.project_key(project))
    assert "0 tool calls" in idle_path.read_text(encoding="utf-8")
    assert latest is not None and latest.path == str(worked)


def test_the_task_line_leaves_out_what_became_a_memory() -> None:
    # blind4: "Task: … remember: the field units only have 4 MB flash …" came with the rule in
    # the same request: the sentence is a memory of its own.
    rule = "The field units only have 4 MB flash, so the app image has to stay under 1.5 MB."
    full = digest.new_state("s-lessons", "/tmp", "")
    full.update({"notes": [{"kind": "correction", "text": rule, "role": "u"}],
                 "first_task": "the builds got bigger. remember: the field units only have 4 MB "
                               "flash, so the app image has to stay under 1.5 MB. find what grew?",
                 "task": "never log from inside an ISR. no ESP_LOGx there",
                 "final": "Found it."})  # fmt: skip
    full["notes"].append({"kind": "correction", "text": "Never log from inside an ISR.",
                          "role": "u"})  # fmt: skip
    items = dict((line.split(":", 1)[0], line) for _, line in scribe.summary_items(full))
    assert items["Task"] == "Task: the builds got bigger. find what grew?"
    assert items["Last request"] == "Last request: no ESP_LOGx there"


def test_the_description_leaves_out_what_became_a_memory() -> None:
    # blind5: a search result listed the summary as "heads up, the courier moved collection to
    # 2pm, …" under the memory that says it, in the same request.
    rule = "The courier moved collection to 2pm, so the ship-today cutoff is 1pm now."
    full = digest.new_state("s-desc", "/tmp", "")
    full.update({"notes": [{"kind": "correction", "text": rule, "role": "u"}],
                 "first_task": "heads up, the courier moved collection to 2pm, so the ship-today "
                               "cutoff is 1pm now. update the banner",
                 "final": "Banner updated."})  # fmt: skip
    meta = scribe.render_cold(full, "Task: update the banner\n").split("---")[1]
    assert '\ndescription: "update the banner"\n' in meta
    # All of it a memory: the result says what the session was.
    full["first_task"] = "heads up: the courier moved collection to 2pm, so the ship-today " \
                         "cutoff is 1pm now."  # fmt: skip
    meta = scribe.render_cold(full, "Task: …\n").split("---")[1]
    assert '\ndescription: "Banner updated."\n' in meta and "courier" not in meta
