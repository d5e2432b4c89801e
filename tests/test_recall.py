"""L3 room recall, L4 deep search, and the session's memory of what it was given."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from helpers import as_event, run_hook, write_memory

from memory_tool.base import paths, tokens
from memory_tool.recall.deep import deep_recall, is_past_question
from memory_tool.recall.room import room_recall
from memory_tool.runtime.prompt_submit import prompt_context
from memory_tool.store.index import open_index
from memory_tool.store.search import search

ROOMS = paths.state_root


def room(name: str) -> Path:
    return paths.state_root() / "rooms" / name


def seed(project: Path) -> None:
    write_memory(
        room("authentication"),
        "jwt.md",
        "Login tokens are JWTs signed with RS256; refresh tokens rotate every 24h.",
    )
    write_memory(
        room("authentication"), "oauth.md", "The OAuth callback must validate the state parameter."
    )
    write_memory(room("database"), "pool.md", "Postgres pool size is 20 per worker.")
    write_memory(room("deployment"), "freeze.md", "No deploys on Friday afternoons.")


def payload(project: Path, prompt: str, session: str = "s1") -> dict[str, str]:
    return {
        "session_id": session,
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


def test_a_prompt_about_a_room_brings_that_room_only(project: Path) -> None:
    seed(project)
    with open_index() as idx:
        idx.refresh(project)
    text, ids = prompt_context(
        as_event(payload(project, "fix the login bug, the refresh token expires"))
    )
    assert "RS256" in text and "OAuth callback" in text
    assert "pool size" not in text and "Friday" not in text
    assert text.startswith("<memory-context>") and text.endswith("</memory-context>\n")
    assert len(ids) == 2


@pytest.mark.parametrize(
    "prompt", ["thanks!", "rename x to y in this function", "what does this regex do", "hi"]
)
def test_an_unrelated_prompt_brings_nothing(project: Path, prompt: str) -> None:
    seed(project)
    with open_index() as idx:
        idx.refresh(project)
    assert prompt_context(as_event(payload(project, prompt))) == ("", [])


def test_no_entry_is_injected_twice_in_a_session(project: Path) -> None:
    seed(project)
    write_memory(
        paths.project_memory_dir(project),
        "feedback_auth.md",
        "Never log raw auth tokens.",
        type_="feedback",
        room="authentication",
    )
    with open_index() as idx:
        idx.refresh(project)
    start = run_hook("SessionStart", {"session_id": "s9", "cwd": str(project), "source": "startup"})
    assert "Never log raw auth tokens" in start.stdout.decode()
    first, ids1 = prompt_context(as_event(payload(project, "login is broken again", "s9")))
    assert ids1 and "Never log raw auth tokens" not in first  # already in the brief
    second, ids2 = prompt_context(as_event(payload(project, "still the login bug", "s9")))
    assert not set(ids1) & set(ids2)
    other_session, ids3 = prompt_context(as_event(payload(project, "login is broken again", "s10")))
    assert set(ids1) <= set(ids3)


def test_other_projects_facts_stay_with_their_project(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    (other / ".git").mkdir(parents=True)
    write_memory(
        paths.project_memory_dir(other),
        "project_auth.md",
        "Their login uses SAML.",
        type_="project",
        room="authentication",
    )
    write_memory(
        paths.project_memory_dir(project),
        "project_auth.md",
        "Our login uses passkeys.",
        type_="project",
        room="authentication",
    )
    with open_index() as idx:
        idx.refresh(project)
    text, _ = prompt_context(as_event(payload(project, "the login page breaks")))
    assert "passkeys" in text and "SAML" not in text


def test_cold_summaries_are_no_room_memories(project: Path, tmp_path: Path) -> None:
    # A past session's log (this project's or another's) comes in through the situations
    # (resuming, a recurring bug) and deep search, never with an ordinary new-task prompt.
    seed(project)
    for folder in (paths.state_root() / "cold" / paths.project_key(project),
                   paths.state_root() / "cold" / "elsewhere"):  # fmt: skip
        write_memory(
            folder,
            "2026-11-01-abc.md",
            "Task: rotate the login refresh tokens. Decisions: refresh tokens rotate hourly.",
            type_="project",
            room="authentication",
        )
    with open_index() as idx:
        idx.refresh(project)
        assert len([h for h in search(idx, "refresh tokens rotate hourly") if
                    h.entry.source == "cold"]) == 2  # fmt: skip
    text, _ = prompt_context(
        as_event(payload(project, "fix the login bug, the refresh token expires"))
    )
    assert "RS256" in text
    assert "hourly" not in text


def test_a_cold_summary_gets_its_room_from_what_the_session_was_about(project: Path) -> None:
    # Its name is generated ("session-<date>-<id>"), and "session" is an authentication word.
    cold = paths.state_root() / "cold" / paths.project_key(project)
    task = "fix the login redirect loop"
    write_memory(cold, "2026-11-30-aa.md", "Task: (no task stated)\nResult: ok",
                 title="session-2026-11-30-aa", description="session")  # fmt: skip
    write_memory(cold, "2026-11-30-bb.md", f"Task: {task}\nResult: fixed",
                 title="session-2026-11-30-bb", description=task)  # fmt: skip
    with open_index() as idx:
        idx.refresh(project)
        rooms = dict(idx.conn.execute("SELECT name, room FROM entries WHERE source = 'cold'"))
    assert rooms == {"session-2026-11-30-aa": "", "session-2026-11-30-bb": "authentication"}


@pytest.mark.parametrize("seed_n", range(8))
def test_l3_never_exceeds_its_budget_and_counts_exactly(project: Path, seed_n: int) -> None:
    rng = random.Random(seed_n)
    for i in range(rng.randint(1, 80)):
        body = " ".join(
            rng.choice(
                [
                    "login",
                    "token",
                    "oauth",
                    "session",
                    "cookie",
                    "sso",
                    "x" * 9,
                    "🔐",
                    "===",
                    "naïve",
                ]
            )
            for _ in range(rng.randint(3, 400))
        )
        write_memory(room("authentication"), f"m{i}.md", body, importance=rng.randint(1, 5))
    budget = rng.choice([60, 200, 1500])
    with open_index() as idx:
        idx.refresh(project)
        result = room_recall(idx, "login token oauth bug", str(project), budget=budget)
    assert result.tokens <= budget
    assert tokens.count(result.text) == result.tokens
    assert result.picked or budget < 100


@pytest.mark.parametrize(
    "prompt",
    [
        "have we done this before?",
        "did we ever fix the flaky upload test",
        "last time this broke what was it",
        "what did we decide about the cache layer",
        "remember when the deploy failed on tuesday",
        "Have we seen this error before",
        "why did we pick postgres",
        "we discussed this earlier, right?",
    ],
)
def test_past_questions_trigger_deep_search(prompt: str) -> None:
    assert is_past_question(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "fix the login bug",
        "add a test for the parser",
        "before merging, run the linter",
        "deploy to staging",
        "what does this function do",
        "remember to update the changelog",
        "refactor the retry logic so it backs off",
        "explain the difference between these two",
    ],
)
def test_ordinary_prompts_do_not_trigger_deep_search(prompt: str) -> None:
    assert not is_past_question(prompt)


def test_deep_search_injects_ids_and_summaries_not_full_text(project: Path) -> None:
    long_tail = " ".join(f"detail{i}" for i in range(300))
    write_memory(
        paths.state_root() / "wiki",
        "mascot.md",
        f"We decided to rename the team mascot to Quokka in March. {long_tail}",
        description="Decision: the team mascot is now Quokka",
    )
    question = "what did we decide about the team mascot"  # no room: only L4 can bring it
    with open_index() as idx:
        idx.refresh(project)
        result = deep_recall(idx, question, budget=3000)
    assert result.picked
    assert result.picked[0].id in result.text
    assert "detail250" not in result.text  # summaries only
    text, _ = prompt_context(as_event(payload(project, question)))
    assert "(L4" in text and "detail250" not in text


def transcript_line(uuid: str, role: str, text: str) -> str:
    if role == "user":
        msg = {"role": "user", "content": text}
    else:
        msg = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return (
        json.dumps(
            {
                "type": role,
                "uuid": uuid,
                "sessionId": "sess-1",
                "timestamp": "2026-10-01T10:00:00Z",
                "message": msg,
            }
        )
        + "\n"
    )


def test_past_sessions_are_indexed_incrementally(project: Path) -> None:
    folder = paths.projects_dir() / paths.project_key(project)
    folder.mkdir(parents=True)
    log = folder / "sess-1.jsonl"
    log.write_text(
        transcript_line("u1", "user", "how do we rotate the signing keys for staging?")
        + transcript_line("a1", "assistant", "Rotate them with the kms-rotate script.")
    )
    with open_index() as idx:
        assert idx.refresh(project).sessions_added == 2
        hits = search(idx, "rotate signing keys")
        assert hits and hits[0].entry.type == "session"
        # Its peek shows what was said, so an agent can decide whether to fetch it.
        assert "person: how do we rotate the signing keys" in hits[0].entry.summary
        offset = idx.conn.execute("SELECT offset FROM transcripts").fetchone()[0]
        assert offset == log.stat().st_size
        # Rewrite what was already read with garbage of the same length: a re-read would lose
        # the old entries' text; an incremental read never looks back.
        size = log.stat().st_size
        with open(log, "r+b") as fh:
            fh.write(b"x" * (size - 1))
        with open(log, "a") as fh:
            fh.write(
                transcript_line(
                    "u2", "user", "and what about the production database password rotation?"
                )
            )
        assert idx.refresh(project).sessions_added == 1
        assert search(idx, "kms-rotate script")
        assert search(idx, "production database password rotation")
        assert idx.refresh(project).sessions_added == 0


def test_secrets_in_transcripts_are_not_indexed(project: Path) -> None:
    folder = paths.projects_dir() / paths.project_key(project)
    folder.mkdir(parents=True)
    (folder / "s.jsonl").write_text(
        transcript_line(
            "u1", "user", "use the key ghp_abcdefghijklmnopqrstuvwxyz0123456789 for the deploy bot"
        )
    )
    with open_index() as idx:
        idx.refresh(project)
        bodies = " ".join(e.body for e in idx.query("source = 'session'"))
    assert "ghp_abcdefghijklmnopqrstuvwxyz" not in bodies and "REDACTED" in bodies


def test_user_prompt_submit_hook_as_a_process(project: Path) -> None:
    seed(project)
    with open_index() as idx:
        idx.refresh(project)
    proc = run_hook("UserPromptSubmit", payload(project, "the oauth login flow is broken"))
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "OAuth callback" in out["hookSpecificOutput"]["additionalContext"]
    assert len(proc.stdout) < 10_000
    assert "decision" not in out  # never blocks the prompt


def test_a_huge_prompt_stays_under_the_output_cap(project: Path) -> None:
    for i in range(200):
        write_memory(room("authentication"), f"m{i}.md", f"Login fact {i}: " + "oauth token " * 60)
    with open_index() as idx:
        idx.refresh(project)
    big = "login oauth token bug have we done this before? " + "log line\n" * 500_000
    proc = run_hook("UserPromptSubmit", payload(project, big))
    assert proc.returncode == 0
    assert 0 < len(proc.stdout) < 10_000


def test_a_huge_prompt_is_read_by_its_head_and_tail(project: Path) -> None:
    # A pasted 6 MB log: the question typed after it still picks the room, and the stored task
    # is redacted like any prompt, a key straddling the 600-character cut included.
    from memory_tool.tiers.hot import load_state

    built(project)
    key = "sk-ant-api03-" + "Xy7_-" * 18
    log = "x" * 585 + " " + key + "\n" + "lorem ipsum dolor sit amet\n" * 230_000
    prompt = log + "why does the login refresh token expire so early?"
    proc = run_hook("UserPromptSubmit", payload(project, prompt, "big1"))
    assert proc.returncode == 0
    assert "RS256" in proc.stdout.decode()
    state = load_state("big1")
    assert state is not None
    stored = json.dumps(state)
    assert "sk-ant-api03" not in stored  # not even the part before the cut


@pytest.mark.parametrize("stdin", [b"", b"{", b"\xff\xfe", b'{"prompt": 5}', b"[]"])
def test_user_prompt_submit_fails_open(stdin: bytes) -> None:
    proc = run_hook("UserPromptSubmit", stdin)
    assert proc.returncode == 0 and proc.stdout == b""


def test_a_broken_rooms_yaml_falls_back_to_the_shipped_rooms_and_says_so(project: Path) -> None:
    """A typo in rooms.yaml must not switch room recall off: the shipped rooms classify the
    prompt meanwhile, and doctor and the SessionStart line say what is wrong, and where."""
    from click.testing import CliRunner
    from helpers import start_payload
    from test_hooks import HEAVY, imported_modules

    from memory_tool.base.resources import template_path
    from memory_tool.cli.main import main

    seed(project)
    with open_index() as idx:
        idx.refresh(project)
    mine = paths.state_root() / "rooms.yaml"
    shipped = template_path("rooms.yaml").read_text()
    mine.write_text(shipped + "  broken: [unclosed\n")
    bad_line = len(shipped.splitlines()) + 1
    prompt = payload(project, "the login refresh token expires")
    proc = run_hook("UserPromptSubmit", prompt)
    assert proc.returncode == 0 and "RS256" in proc.stdout.decode()
    assert "rooms.yaml is not valid YAML" in paths.log_file().read_text()
    # The fallback is cached like any compile: the next prompt parses no YAML.
    modules = imported_modules("UserPromptSubmit", payload(project, "the login token", "s2"))
    assert not {m for m in HEAVY if f" {m}\n" in modules or f" {m}." in modules}
    start = json.loads(run_hook("SessionStart", start_payload(project)).stdout)
    brief = start["hookSpecificOutput"]["additionalContext"]
    assert (
        "Memory hygiene: rooms.yaml not valid (shipped rooms in use): memory-tool doctor" in brief
    )
    doctor = CliRunner().invoke(main, ["doctor", "--cwd", str(project)])
    assert doctor.exit_code == 1
    assert "rooms.yaml is not valid YAML" in doctor.output and f"line {bad_line}," in doctor.output
    assert "shipped rooms meanwhile" in doctor.output
    classify = CliRunner().invoke(main, ["classify", "the login refresh token expires"])
    assert classify.exit_code == 0 and classify.stdout.startswith("authentication")
    assert f"line {bad_line}," in classify.stderr
    # Fixed: the user's rooms again, and nothing to report.
    mine.write_text(shipped)
    assert CliRunner().invoke(main, ["doctor", "--cwd", str(project)]).exit_code == 0
    start = json.loads(run_hook("SessionStart", start_payload(project)).stdout)
    assert "Memory hygiene" not in start["hookSpecificOutput"]["additionalContext"]


def test_past_hints_never_hide_a_match() -> None:
    """Every prompt the full pattern matches holds one of the cheap substring hints."""
    from helpers import REPO

    from memory_tool.recall.deep import PAST_RE

    prompts = [
        json.loads(line)["prompt"]
        for line in (REPO / "tests" / "data" / "prompts.jsonl").read_text().splitlines()
        if line
    ]
    prompts += [
        "have we done this before?",
        "Remember when it broke",
        "in a previous chat we",
        "we tried this earlier",
        "been here before",
        "LAST TIME it failed",
    ]
    for p in prompts:
        assert is_past_question(p) == bool(PAST_RE.search(p)), p


# --- files are the truth: what changed since the last refresh -----------------------------------


def built(project: Path) -> None:
    seed(project)
    with open_index() as idx:
        idx.refresh(project)


def test_a_note_written_after_the_last_refresh_is_recalled_on_the_next_prompt(
    project: Path,
) -> None:
    # By hand, or by Claude mid-session: no `memory-tool index`, no new session in between.
    built(project)
    write_memory(
        room("authentication"), "saml.md", "SAML login goes through Okta; the ACS URL is /sso/acs."
    )
    text, _ = prompt_context(as_event(payload(project, "SAML login with okta fails with 401")))
    assert "ACS URL is /sso/acs" in text
    # A new room folder too.
    write_memory(
        room("billing"), "stripe.md", "Stripe webhooks are verified with the signing secret."
    )
    with open_index() as idx:
        idx.refresh_changed_folders(project)
        assert [e.room for e in idx.query("name = 'stripe'")] == ["billing"]


def test_an_edited_memory_is_injected_as_edited_and_a_deleted_one_not_at_all(
    project: Path,
) -> None:
    built(project)
    jwt = room("authentication") / "jwt.md"
    jwt.write_text(jwt.read_text().replace("RS256", "EdDSA"))  # in place: the folder is unchanged
    (room("authentication") / "oauth.md").unlink()
    text, _ = prompt_context(
        as_event(payload(project, "fix the login bug, the refresh token expires"))
    )
    assert "EdDSA" in text and "RS256" not in text
    assert "OAuth callback" not in text
    with open_index() as idx:
        assert idx.query("name = 'oauth'") == []  # and the index forgot it


def test_a_deleted_room_folder_takes_its_memories_with_it(project: Path) -> None:
    built(project)
    import shutil

    shutil.rmtree(room("deployment"))
    with open_index() as idx:
        stats = idx.refresh_changed_folders(project)
        assert [Path(p).name for p in stats.removed] == ["freeze.md"]
        assert idx.query("room = 'deployment'") == []


def test_the_prompt_hook_does_not_build_an_index_that_never_was(project: Path) -> None:
    # A full build is no job for a hook (thousands of files to parse within its timeout).
    seed(project)
    with open_index() as idx:
        assert not idx.refresh_changed_folders(project).touched
        assert idx.count() == 0


@pytest.mark.parametrize(
    ("text", "query"),
    [
        (
            "Die Datenbank-Verbindung läuft über PgBouncer; größere Abfragen brauchen Zeit.",
            "größere",
        ),
        ("Die Datenbank-Verbindung läuft über PgBouncer.", "Läuft PgBouncer"),
        ("连接池 的大小 是 20。", "连接池"),
        ("Ünïcödé file names break the exporter.", "ünïcödé"),
    ],
)
def test_words_of_any_script_are_found(project: Path, text: str, query: str) -> None:
    write_memory(room("database"), "note.md", text)
    with open_index() as idx:
        idx.refresh(project)
        assert [h.entry.name for h in search(idx, query)] == ["note"]


def test_wiki_records_promoted_from_another_project_stay_with_it(project: Path) -> None:
    built(project)
    wiki = paths.state_root() / "wiki"
    theirs = "Decision: the orders table is partitioned by month."
    write_memory(wiki, "orders-partitioned.md", theirs, room="database", project="elsewhere")
    write_memory(wiki, "pool-size.md", "Decision: the database pool holds 20 connections.",
                 room="database")  # fmt: skip
    write_memory(wiki, "ours.md", "Decision: migrations run before the deploy, never after.",
                 room="database", project=paths.project_key(project))  # fmt: skip
    with open_index() as idx:
        idx.refresh(project)
    text, _ = prompt_context(
        as_event(payload(project, "add an index to the orders table in a migration"))
    )
    assert "partitioned by month" not in text
    assert "pool holds 20" in text and "never after" in text


def test_full_text_does_not_give_a_cut_description_of_its_own_body() -> None:
    # blind4: a captured reference's description is its body cut with "…": L3 gave the
    # description line and then the body, the same fact twice.
    from memory_tool.store.entry import Entry, full_text

    body = "components/sensirion/crc8.c sensirion_crc8() checks the CRC-8 on every frame."
    e = Entry(id="r-abc123", path="/x.md", source="claude", type="reference", name="crc8",
              description=body[:40] + "…", body=body)  # fmt: skip
    assert full_text(e).count("sensirion_crc8()") == 1
    other = Entry(id="r-abc124", path="/y.md", source="claude", type="reference", name="crc8",
                  description="How frames are checked", body=body)  # fmt: skip
    assert "How frames are checked" in full_text(other)
