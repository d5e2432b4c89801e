"""Hot tier: the per-session hot file, updated incrementally from real-format transcripts, and
re-injected by SessionStart on resume and after compaction."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import as_event, run_hook
from test_tiers_support import (
    LONG_SID,
    SECRETS,
    SMALL_SID,
    append_rest,
    hook_json,
    install_transcript,
    payload,
    state_files,
)

from memory_tool.base import tokens
from memory_tool.store.index import open_index
from memory_tool.tiers import digest, scribe
from memory_tool.tiers import inject as tiers
from memory_tool.tiers.hot import HOT_ACTIONS, HOT_MAX_CHARS, hot_path, load_state


def _hot(sid: str = LONG_SID) -> str:
    return hot_path(sid).read_text(encoding="utf-8")


def test_hot_file_holds_task_decisions_last_actions_and_blockers(project: Path) -> None:
    transcript = install_transcript("tiers_long", project, lines=22)
    digest.update_session(as_event(payload("Stop", "tiers_long", project, transcript)), scan=True)
    hot = _hot()
    assert "## Current task\nAdd idempotency keys to POST /charges" in hot
    assert "Store idempotency records in Redis with a 24 h TTL" in hot  # a [DECISION] line
    # The failing test run is the open blocker and the last action so far.
    blockers = hot.split("## Open blockers\n")[1].split("##")[0]
    assert (
        "`pytest tests/test_idempotency.py -q` fails: redis.exceptions.ConnectionError" in blockers
    )
    assert "wrote app/idempotency.py" in hot  # paths relative to where the session ran
    assert "edited app/routes/charges.py" in hot

    append_rest("tiers_long", transcript)
    digest.update_session(as_event(payload("Stop", "tiers_long", project, transcript)), scan=True)
    hot = _hot()
    actions = hot.split("## Last actions\n")[1].split("\n\n")[0].splitlines()
    assert len(actions) == HOT_ACTIONS  # the last 5, no more
    assert actions[-1] == "- ran `make test` (ok)"
    assert "git commit -m 'Idempotency keys for POST /charges'" in actions[-3]
    # A later successful run (env -u REDIS_URL pytest ...) settled the blocker.
    assert hot.split("## Open blockers\n")[1].startswith("- none")
    assert "Always run mypy before committing." in hot  # the user's correction
    assert "Started with: Add idempotency keys" in hot
    assert len(hot.encode()) <= HOT_MAX_CHARS * 4 and len(hot) <= HOT_MAX_CHARS


def test_transcript_is_read_incrementally_from_the_stored_offset(project: Path) -> None:
    transcript = install_transcript("tiers_long", project, lines=10)
    state = digest.update_session(
        as_event(payload("Stop", "tiers_long", project, transcript)), scan=True
    )
    assert state is not None
    first_offset = state["offset"]
    assert first_offset == transcript.stat().st_size
    calls_before = state["tool_calls"]

    # Scribble over what was already read (same length, newlines kept): a reader that went
    # back to the start would now see a different first prompt and count calls twice.
    raw = bytearray(transcript.read_bytes())
    start = raw.index(b"Add idempotency keys")
    raw[start : start + 20] = b"X" * 20
    transcript.write_bytes(bytes(raw))
    append_rest("tiers_long", transcript)

    state = digest.update_session(
        as_event(payload("Stop", "tiers_long", project, transcript)), scan=True
    )
    assert state is not None
    assert state["offset"] == transcript.stat().st_size > first_offset
    assert state["first_task"].startswith("Add idempotency keys")
    assert state["tool_calls"] == 25 and calls_before < 25
    # Nothing new: nothing changes, the generation stays.
    generation = state["generation"]
    state = digest.update_session(
        as_event(payload("Stop", "tiers_long", project, transcript)), scan=True
    )
    assert state is not None and state["generation"] == generation


def test_the_same_transcript_named_another_way_is_not_read_twice(project: Path) -> None:
    import os

    transcript = install_transcript("tiers_long", project)
    state = digest.update_session(
        as_event(payload("Stop", "tiers_long", project, transcript)), scan=True
    )
    assert state is not None and state["tool_calls"] == 25
    link = transcript.parent / "alias.jsonl"
    os.symlink(transcript, link)  # or a relative path: the same file
    state = digest.update_session(as_event(payload("Stop", "tiers_long", project, link)), scan=True)
    assert state is not None and state["tool_calls"] == 25  # not 50


def test_on_prompt_sets_the_task_but_not_for_acknowledgements(project: Path) -> None:
    transcript = install_transcript("tiers_small", project)
    base = payload("UserPromptSubmit", "tiers_small", project, transcript)
    digest.on_prompt(
        as_event({**base, "prompt": "Rename the billing module to payments everywhere"})
    )
    assert (
        _hot(SMALL_SID)
        .split("## Current task\n")[1]
        .startswith("Rename the billing module to payments everywhere")
    )
    closings = ("thanks, works now", "ship it", "going with bigserial", "lgtm, merged")
    for ack in ("yes", "ok, go ahead", "continue", "where were we?", *closings):
        digest.on_prompt(as_event({**base, "prompt": ack}))
        state = load_state(SMALL_SID)
        assert state is not None and state["task"].startswith("Rename the billing module")


def test_nothing_private_secret_or_injected_reaches_the_hot_tier(
    project: Path, state: Path
) -> None:
    transcript = install_transcript("tiers_long", project)
    digest.update_session(as_event(payload("Stop", "tiers_long", project, transcript)), scan=True)
    digest.on_prompt(
        as_event(
            {
                **payload("UserPromptSubmit", "tiers_long", project, transcript),
                "prompt": f"use the key {SECRETS[1]} <private>{SECRETS[2]}</private> for the test",
            }
        )
    )
    written = state_files(state)
    assert written
    for path in written:
        text = path.read_text(encoding="utf-8")
        for secret in SECRETS:
            assert secret not in text, (secret, path)
    assert "[REDACTED:anthropic_key]" in _hot()


def test_session_start_resume_brings_back_the_hot_state(project: Path) -> None:
    transcript = install_transcript("tiers_long", project)
    # The session ran with our Stop hook; later it is resumed (same session id).
    run_hook("Stop", payload("Stop", "tiers_long", project, transcript))
    out = run_hook(
        "SessionStart", payload("SessionStart", "tiers_long", project, transcript, source="resume")
    )
    assert out.returncode == 0
    data = hook_json(out.stdout)
    assert data is not None
    context = data["hookSpecificOutput"]["additionalContext"]
    assert "## This session so far (hot memory)" in context
    assert "Current task: Always run mypy before committing." in context
    assert "Decision: Store idempotency records in Redis" in context
    assert context.index("hot memory") < context.index("</memory-context>")


def test_session_start_compact_re_injects_the_hot_state_only(project: Path) -> None:
    small = install_transcript("tiers_small", project)
    long = install_transcript("tiers_long", project)
    run_hook("Stop", payload("Stop", "tiers_small", project, small))  # an earlier session
    out = run_hook(
        "SessionStart", payload("SessionStart", "tiers_long", project, long, source="compact")
    )
    data = hook_json(out.stdout)
    assert data is not None
    context = data["hookSpecificOutput"]["additionalContext"]
    assert "## This session so far (hot memory)" in context
    assert "cold memory" not in context  # compaction keeps the conversation's own history
    startup = run_hook(
        "SessionStart", payload("SessionStart", "tiers_long", project, long, source="startup")
    )
    assert b"hot memory" not in startup.stdout


def test_resume_units_are_exactly_counted_and_within_budget(project: Path) -> None:
    small = install_transcript("tiers_small", project)
    long = install_transcript("tiers_long", project)
    run_hook("Stop", payload("Stop", "tiers_long", project, long))
    run_hook("Stop", payload("Stop", "tiers_small", project, small))
    with open_index() as idx:
        units = tiers.resume_units(
            idx, as_event(payload("SessionStart", "tiers_small", project, small)), "resume"
        )
    text = "".join(u.text for u in units)
    assert "## This session so far (hot memory)" in text
    # The latest summary of *another* session of this project comes with it.
    assert "## Latest earlier session of this project (cold memory)" in text
    assert "Task: Add idempotency keys" in text
    assert sum(u.tokens for u in units) == tokens.count(text) <= tiers.RESUME_BUDGET_TOKENS
    assert len(text) <= tiers.RESUME_MAX_CHARS
    assert all(u.text.endswith("\n") and not u.text[0].isspace() for u in units)


def test_steady_prompt_path_never_loads_the_tokenizer_or_yaml(project: Path, state: Path) -> None:
    transcript = install_transcript("tiers_long", project)
    digest.update_session(as_event(payload("Stop", "tiers_long", project, transcript)), scan=True)
    scribe.run(LONG_SID)  # what the Stop hook starts: warms the counts of what may be injected
    probe = (
        "import json, sys\n"
        "from memory_tool.base.event import HookEvent\n"
        "from memory_tool.tiers import digest, inject as tiers\n"
        "from memory_tool.store.index import open_index\n"
        "p = json.loads(sys.argv[1])\n"
        "idx = open_index()\n"
        "out = {}\n"
        "for prompt in ('Add a CSV export to the reports page', 'where were we?'):\n"
        "    q = HookEvent.from_payload('UserPromptSubmit', dict(p, prompt=prompt))\n"
        "    digest.on_prompt(q)\n"
        "    out[prompt] = sum(u.tokens for u in tiers.prompt_context(idx, q, 3000))\n"
        "print(json.dumps({'tokens': out, 'loaded': [m for m in ('tiktoken', 'yaml', 'click',\n"
        "    'rapidfuzz', 'frontmatter') if m in sys.modules]}))\n"
    )
    base = payload("UserPromptSubmit", "tiers_long", project, transcript)
    result = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(base)], capture_output=True, check=True
    )
    report = json.loads(result.stdout)
    assert report["loaded"] == []
    assert report["tokens"]["Add a CSV export to the reports page"] == 0  # new task: nothing
    assert report["tokens"]["where were we?"] > 0


def _context(out: subprocess.CompletedProcess[bytes]) -> str:
    data = hook_json(out.stdout)
    return str(data["hookSpecificOutput"]["additionalContext"]) if data else ""


def test_where_were_we_does_not_repeat_a_hot_state_the_conversation_holds(
    project: Path,
) -> None:
    transcript = install_transcript("tiers_long", project)
    run_hook("Stop", payload("Stop", "tiers_long", project, transcript))
    resume = payload("SessionStart", "tiers_long", project, transcript, source="resume")
    ask = payload("UserPromptSubmit", "tiers_long", project, transcript, prompt="where were we?")
    assert tiers.HOT_HEADING in _context(run_hook("SessionStart", resume))
    assert tiers.HOT_HEADING not in _context(run_hook("UserPromptSubmit", ask))
    # The session moves on: the conversation holds that work itself, and one hot state.
    with open(transcript, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "user", "sessionId": LONG_SID, "cwd": str(project),
                             "timestamp": "2026-11-29T10:00:00.000Z", "message": {
                                 "role": "user", "content": "Now add idempotency to refunds."}})
                 + "\n")  # fmt: skip
    run_hook("Stop", payload("Stop", "tiers_long", project, transcript))
    assert tiers.HOT_HEADING not in _context(run_hook("UserPromptSubmit", ask))
    assert tiers.HOT_HEADING not in _context(run_hook("SessionStart", resume))
    # A compaction drops it (the prompt above sent what SessionStart gave): it comes back.
    compact = payload("SessionStart", "tiers_long", project, transcript, source="compact")
    after = _context(run_hook("SessionStart", compact))
    assert "Current task: Now add idempotency to refunds." in after
    assert tiers.HOT_HEADING not in _context(run_hook("UserPromptSubmit", ask))
