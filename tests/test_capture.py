"""Auto-capture (issue 22): what a session says explicitly becomes memory at Stop, with no step
by the user; clean one-fact text; provenance; no duplicates; supersede; the brief says what was
learned. Through the real hook process, real files and a real SQLite index in a sandboxed HOME."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from helpers import log_text, run_hook, write_memory

from memory_tool.base import paths
from memory_tool.cli.main import main
from memory_tool.store.index import open_index
from memory_tool.tiers import capture, inbox
from memory_tool.tiers.signals import EXPLICIT_KINDS, tag_signals, user_signals

# --- a transcript as Claude Code writes it ------------------------------------------------------


def _line(kind: str, text: str, sid: str, cwd: Path, n: int) -> dict[str, Any]:
    content: Any = text if kind == "user" else [{"type": "text", "text": text}]
    return {
        "type": kind,
        "sessionId": sid,
        "cwd": str(cwd),
        "uuid": f"u{n}",
        "timestamp": f"2026-11-29T10:{n // 60:02d}:{n % 60:02d}Z",
        "message": {"role": kind, "content": content},
    }


def transcript(project: Path, turns: list[tuple[str, str]], sid: str | None = None) -> Path:
    """A transcript of (user|assistant, text) turns where Claude Code keeps it."""
    sid = sid or str(uuid.uuid4())
    folder = paths.projects_dir() / paths.sanitize_path(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sid}.jsonl"
    with open(path, "a", encoding="utf-8") as fh:
        for n, (kind, text) in enumerate(turns):
            fh.write(json.dumps(_line(kind, text, sid, project, n)) + "\n")
    return path


def stop(project: Path, path: Path, event: str = "Stop") -> None:
    data = {
        "session_id": path.stem,
        "transcript_path": str(path),
        "cwd": str(project),
        "hook_event_name": event,
    }
    if event == "Stop":
        data["stop_hook_active"] = False
    res = run_hook(event, data)
    assert res.returncode == 0, res.stderr
    assert log_text() == ""


def session(project: Path, turns: list[tuple[str, str]], sid: str | None = None) -> Path:
    path = transcript(project, turns, sid)
    stop(project, path)
    return path


def memories(project: Path) -> dict[str, tuple[dict[str, Any], str]]:
    """The project's memory files: name -> (frontmatter, body)."""
    out = {}
    for p in sorted(paths.project_memory_dir(project).glob("*.md")):
        if p.name == "MEMORY.md":
            continue
        head, body = p.read_text(encoding="utf-8").split("\n---\n", 1)
        out[p.name] = (yaml.safe_load(head.removeprefix("---\n")), body.strip())
    return out


def bodies(project: Path) -> list[str]:
    return [b for _, b in memories(project).values()]


def wake(project: Path) -> str:
    res = CliRunner().invoke(main, ["wake", "--cwd", str(project)])
    assert res.exit_code == 0, res.output
    return res.output


def set_config(state: Path, text: str) -> None:
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text(text, encoding="utf-8")


# --- item 2: clean text, one fact each ----------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "found"),
    [
        ("no, use httpx instead of requests", [("correction", "Use httpx instead of requests.")]),
        ("ok so actually no, use polars for dataframes, and always pin its version",
         [("correction", "Use polars for dataframes."), ("rule", "Always pin its version.")]),
        ("Also, don't log webhook bodies. Use httpx instead of requests.",
         [("rule", "Don't log webhook bodies."), ("correction", "Use httpx instead of requests.")]),
        ("remember: the staging DB is read-only on Fridays",
         [("rule", "The staging DB is read-only on Fridays.")]),
        ("Thanks. Always run mypy before committing.",
         [("rule", "Always run mypy before committing.")]),
        ("I prefer terse answers", [("identity", "The user prefers terse answers.")]),
        ("I'm Dana, backend", [("identity", "The user is Dana, backend.")]),
        # blind14: "close, but" corrects; an error body is no error report; "stop with X";
        # a switch said as done by "i", into "the shared" tool, after the one it replaces.
        ("close, but the convention here is every error body is {error: {code, message}} "
         "with a SCREAMING_SNAKE code.",
         [("rule", "The convention here is every error body is {error: {code, message}} with a "
                   "SCREAMING_SNAKE code.")]),
        ("ahh can we stop with pandas, polars only please. pandas eats all the ram",
         [("correction", "Can we stop with pandas, polars only.")]),
        ("big one: sqlite is gone as of today, i moved everything into the shared postgres "
         "under a touts schema.",
         [("correction", "Use postgres instead of sqlite under a touts schema.")]),
        # blind13: a rule after what the project is; a preference after a preamble; "uh";
        # "only in this repo"; a switch said as done, to something named.
        ("nice. btw this is svelte 5, new components use Svelte 5 runes ($props, $state), not "
         "export let or $: statements. the old syntax still compiles",
         [("rule", "New components use Svelte 5 runes ($props, $state), not export let or $: "
                   "statements.")]),
        ("ok general thing, for both repos: when I ask how to do something, give me the "
         "commands first and the explanation after.",
         [("preference", "When I ask how to do something, give me the commands first and the "
                         "explanation after.")]),
        ("uh I'm red-green colorblind, so a red vs green difference tells me nothing",
         [("identity", "The user is red-green colorblind.")]),
        ("runes only in this repo pls. I keep saying it",
         [("rule", "Runes only in this repo pls.")]),
        ("we moved hosting to Cloudflare Pages yesterday, netlify's free plan ran out",
         [("change", "Hosting switched to Cloudflare Pages.")]),
        ("ok shipped, no more flash", []),
        # blind15/16: a change with its old value; a setting bumped to a new value; a name
        # from code said to be wrong, then what is right.
        ("compliance changed it: quotes are valid for 14 days now, not 30. fix the template",
         [("change", "Quotes are now valid for 14 days.")]),
        ("bump the rate loop to 4 kHz and drive it off the data-ready interrupt",
         [("change", "The rate loop is now 4 kHz.")]),
        ("bump the font size to larger", []),
        ("week() is wrong, reporting weeks are ISO weeks: isoweek() with isoyear().",
         [("correction", "week() is wrong, reporting weeks are ISO weeks: isoweek() with "
                         "isoyear().")]),
        ("getUser() is wrong here, it returns null", []),
        # A trait said in passing is about the person; what it means to them is no rule of its
        # own (blind14 kept "I'm dyslexic, and names like sel_hdl …" as a rule too).
        ("heads up i'm dyslexic, and names like sel_hdl are painful for me to read. always "
         "spell column names out in full please.",
         [("identity", "The user is dyslexic."),
          ("rule", "Always spell column names out in full.")]),
        ("Create a.py and b.py; never use tabs in them.",
         [("heuristic", "Never use tabs in them.")]),
        ("No tests should touch the network",
         [("heuristic", "No tests should touch the network.")]),
        ("don't mock the database in the repo-12 tests; use the test container",
         [("rule", "Don't mock the database in the repo-12 tests; use the test container.")]),
        ("Never push to main; always open a PR.",
         [("rule", "Never push to main."), ("rule", "Always open a PR.")]),
        ("Why does it always fail on CI?", []),
        ("Add a CSV export to the reports page", []),
        ("Don't know why this fails", []),
        ("I'm not sure what you mean", []),
        ("x " * 400 + "never do this", []),  # a paste, not a rule
        # A long task with a plain rule in passing (blind14): only that rule is kept; beyond
        # LONG_PROSE_MAX_CHARS it is a paste.
        ("ok supervisor overrides. " + "the queue lists the open ones newest first. " * 14
         + "every override needs an audit row too. oh and never put a buyer's name or email in "
         "console.log, log the order id only. the tablets are on 4G.",
         [("rule", "Never put a buyer's name or email in console.log, log the order id only.")]),
        ("the queue lists the open ones newest first. " * 60 + "never log a buyer's email.", []),
        # A week of use (bench/week, dev): a statement about the person in mixed person and
        # the preference after it dropped; two lower-case rules on one line kept as one.
        ("I'm Dana, I work on the payments backend. Keep answers terse. Set up the fraud-check "
         "client in app/fraud.py.",
         [("identity", "The user is Dana and works on the payments backend."),
          ("preference", "Keep answers terse.")]),
        ("always use snake_case column names. never commit notebooks with outputs. Clean up "
         "the funnel notebook.",
         [("rule", "Always use snake_case column names."),
          ("rule", "Never commit notebooks with outputs.")]),
        ("my name is Dana and I prefer terse answers",
         [("identity", "The user is named Dana and prefers terse answers.")]),
        ("My name is Dana.", [("identity", "The user's name is Dana.")]),
        ("I work at Acme, I'm a staff engineer",
         [("identity", "The user works at Acme and is a staff engineer.")]),
        # A later clause that is no statement about the person is left out, never kept in the
        # first person.
        ("I'm Dana, I need the deploy logs", [("identity", "The user is Dana.")]),
        ("I prefer answers that I can skim", []),
        ("Be concise.", [("preference", "Be concise.")]),
        ("no emojis", [("preference", "No emojis.")]),
        ("keep answers short, and always run the linters",
         [("preference", "Keep answers short."), ("rule", "Always run the linters.")]),
        ("keep the responses small", []),  # maybe an API's responses: not about answers
        ("respond with JSON from the export endpoint", []),
        ("Keep answers terse?", []),
        # About the answer just given, or this time only: no preference.
        ("make the answer shorter", []),
        ("answer in German this time", []),
        ("make your answers shorter", [("preference", "Make your answers shorter.")]),
        # blind28-31: how answers show code and lists (each a held-out week's miss).
        ("when you change existing code show me a diff, not the whole file.",
         [("preference", "When you change existing code show me a diff, not the whole file.")]),
        ("answers as short bullet points please, and skip explaining C++ or React basics",
         [("preference",
           "Answers as short bullet points please, and skip explaining C++ or React basics.")]),
        ("ugh, pls no tables, my terminal turns them into soup.",
         [("preference", "No tables, my terminal turns them into soup.")]),
        ("show me the diff of the migration", []),
        ("no tables, just the view", [("heuristic", "No tables, just the view.")]),
        # A full stop before a lower-case word ends a sentence, but not after an abbreviation
        # or an initial.
        ("we bill U.S. customers in dollars. always show cents on invoices",
         [("rule", "Always show cents on invoices.")]),
        ("never use e.g. pickle for the cache", [("rule", "Never use e.g. pickle for the cache.")]),
        # A second week (bench/week, blind2): a greeting before the introduction, a name with
        # an accent, "mostly", and how they like their answers, said with "I like".
        ("hey, I'm Tomás, I mostly work on the mobile app. I like answers as bullet points, not "
         "essays. the home screen flashes empty on launch, can you cache the profile?",
         [("identity", "The user is Tomás and works on the mobile app."),
          ("identity", "The user likes answers as bullet points, not essays.")]),
        ("I want answers in German", [("identity", "The user wants answers in German.")]),
        # How to follow the rule stays with it (blind2 lost "open a PR and Atlantis ...").
        ("never run terraform apply against prod from a laptop; open a PR and Atlantis applies "
         "it after review",
         [("rule", "Never run terraform apply against prod from a laptop; open a PR and Atlantis "
                   "applies it after review.")]),
        ("I like the new layout", []),
        # blind7: what they do, said after the name; a smiley or an aside with an emoji ends
        # what was said before it.
        ("hi! I'm Kasia, I do mostly the backend here. english is not my first language so pls "
         "keep explanations in simple english, no idioms :) ok so first thing: rooms need to "
         "show who is online",
         [("identity", "The user is Kasia and does mostly the backend here."),
          ("preference", "Keep explanations in simple english, no idioms.")]),
        ("I'm Kasia, I do want the logs", [("identity", "The user is Kasia.")]),
        ("the PR adds it as :naive_datetime again \U0001f644 for timestamps we use "
         "utc_datetime_usec, always. fix it before I merge pls",
         [("rule", "For timestamps we use utc_datetime_usec, always.")]),
        ("\U0001f44d use httpx, not requests", [("correction", "Use httpx, not requests.")]),
        # blind4: a rule after a preamble and a colon; a preference labelled as one; "every …
        # has to"; an order with "whenever"; "Rosa here." and "I'm the only developer at …".
        ("outbound mail goes through Mailgun. and one thing I want to get ahead of: don't pass "
         "email bodies into Sidekiq job arguments. args sit in Redis",
         [("rule", "Outbound mail goes through Mailgun."),  # where a kind of thing goes
          ("rule", "Don't pass email bodies into Sidekiq job arguments.")]),
        ("hey! Rosa here. I'm the only developer at Fernhill, so it's me on both apps. one "
         "preference before we start: when you explain something, show the code first and "
         "keep the explanation after it, short. today's thing: paginate it",
         [("identity", "The user's name is Rosa."),
          ("identity", "The user is the only developer at Fernhill."),
          ("preference", "When you explain something, show the code first and keep the "
                         "explanation after it, short.")]),
        ("give them a my tickets page. every query on tickets there has to go through "
         "Current.account",
         [("rule", "Every query on tickets there has to go through Current.account.")]),
        ("the SHT45 change is ready. bump FIRMWARE_VERSION in main/version.h whenever anything "
         "under main/ changes",
         [("rule", "Bump FIRMWARE_VERSION in main/version.h whenever anything under main/ "
                   "changes.")]),
        ("the build breaks whenever I touch the lockfile", []),
        ("moisture readings are garbage whenever wifi is up", []),
        ("Docker here is slow", []),
        # blind3: a lead-in before a preference, "please" at its end, "I lead the … team".
        ("hi, I'm Ingrid, I lead the team that owns the inventory service. one thing up front: "
         "no emoji in answers, please. first job: set up a Postgres connection",
         [("identity", "The user is Ingrid and leads the team that owns the inventory service."),
          ("preference", "No emoji in answers.")]),
        ("I need the logs from yesterday", []),
    ],
)  # fmt: skip
def test_the_persons_signals_are_clean_single_facts(
    prompt: str, found: list[tuple[str, str]]
) -> None:
    assert [(s.kind, s.text) for s in user_signals(prompt)] == found


# --- a change said without "use", "never" or "always" -------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "found"),
    [
        # A switch to a tool that stands in for another: a correction, reworded as the rule it
        # is; the reason kept when it names what was replaced, the task after it not.
        ("switch to polars for the event loads, pandas is too slow on the full export",
         [("correction", "Use polars instead of pandas for the event loads (pandas is too slow "
                         "on the full export).")]),
        ("we switched from pip to uv", [("correction", "Use uv instead of pip.")]),
        ("let's switch to polars, then rerun the job", [("correction", "Use polars.")]),
        ("no, switch to polars", [("correction", "Use polars.")]),
        # A fact of the project's setup that changed, with its exact new value: a project fact,
        # without "last night" (true the day it was said) and without the task after it.
        ("the bucket moved to eu-central-1 last night, update the upload",
         [("change", "The bucket moved to eu-central-1.")]),
        ("the API is now at /v2", [("change", "The API is now at /v2.")]),
        ("our staging DB was renamed to stage-db-2",
         [("change", "Our staging DB was renamed to stage-db-2.")]),
        # "now" last, a setting named as in the code (kept as written), the change at the end
        # of a sentence that says why (blind2: "minSdk is 26 now" was not captured).
        ("product signed off, we're dropping Android 7, minSdk is 26 now. bump it",
         [("change", "minSdk is now 26.")]),
        ("the node version is 22 now", [("change", "The node version is now 22.")]),
        # "from today" for "now"; a hint first, then what it means for good, after "so"
        # (blind11: the courier's new cutoff went to the inbox).
        ("minSdk is 26 from today", [("change", "minSdk is now 26.")]),
        ("We changed couriers this week: it's GLS now instead of DHL, and GLS comes at 12:45, "
         "so the same-day cutoff is 12:00 from now on.",
         [("change", "The same-day cutoff is now 12:00.")]),
        ("`MAX_RETRIES` is now 5", [("change", "`MAX_RETRIES` is now 5.")]),
        # A setting switched to an exact value; the task after "and" is not kept (blind2).
        ("switch state locking to the S3 native lockfile (use_lockfile = true) and drop the "
         "DynamoDB table",
         [("change", "State locking switched to the S3 native lockfile (use_lockfile = true).")]),
        ("switch the CI job to ubuntu-24.04", [("change", "The CI job switched to ubuntu-24.04.")]),
        # An environment as the subject, the change after what led to it (blind3).
        ("platform moved us over last night, staging is in the supply-stg namespace now. fix "
         "the deploy manifests", [("change", "Staging is now in the supply-stg namespace.")]),
        # A part of the project moved from one tool to another, the how kept (blind3).
        ("let's move logging off env_logger and onto tracing with tracing-subscriber. I want a "
         "span per input file",
         [("correction", "Use tracing instead of env_logger for logging (with "
                         "tracing-subscriber).")]),
        ("we migrated the tests from nose to pytest",
         [("correction", "Use pytest instead of nose for tests.")]),
        # blind4: "out of … and into …"; a change said after a colon, with its old value.
        ("let's move the probe calibration out of the SPIFFS json and into NVS, and drop the "
         "SPIFFS partition altogether",
         [("correction", "Use NVS instead of SPIFFS for probe calibration.")]),
        ("heads up, sales renegotiated the enterprise contracts: the first-reply promise is 4 "
         "working hours now, down from 8. update the due-by calculation",
         [("change", "The first-reply promise is now 4 working hours.")]),
        # blind30: a value from one number to another from a day on; "it" is what the
        # preamble named.
        ("Underwriting have reviewed the minimum premium: from Monday it goes up from £120 to "
         "£150 a year for all new quotes.",
         [("change", "The minimum premium is now £150 a year, changed from £120.")]),
        ("from next week the standup moves from 9:30 to 10:00",
         [("change", "The standup is now 10:00, changed from 9:30.")]),
    ],
)  # fmt: skip
def test_a_change_said_plainly_is_captured(prompt: str, found: list[tuple[str, str]]) -> None:
    assert [(s.kind, s.text) for s in user_signals(prompt)] == found


# Said about a change and no change to keep: a question, a hypothetical, a condition, a hedge
# with a modal, a negation, a future, a one-off step, a pronoun with nothing to name.
NOT_A_CHANGE = [
    "should we switch to polars?",
    "the page load went from 2s to 9s after the deploy",
    "it went from 3 to 5 failures overnight",
    "switch to polars?",
    "what if the bucket moved to eu-central-1",
    "what if we switched to polars for the event loads",
    "if the bucket moved to eu-central-1, update the upload",
    "in case the bucket moved to eu-central-1, check both regions",
    "suppose we switch to polars for the event loads",
    "did the bucket move to eu-central-1?",
    "the bucket moved to eu-central-1?",
    "has the bucket moved to eu-central-1?",
    "maybe switch to polars for the event loads",
    "we could switch to polars for the event loads",
    "would switching to polars help with the event loads?",
    "the bucket might have moved to eu-central-1",
    "the bucket will move to eu-central-1 next week",
    "the bucket hasn't moved to eu-central-1 yet",
    "the bucket has not moved to eu-central-1",
    "switch to the main branch",
    "switch to main for the release",
    "move to the next step",
    "it moved to eu-central-1",
    "the ticket moved to done",
    "I wonder if the bucket moved to eu-central-1",
    "if we ship today, the bucket is now eu-central-1",
    "when the release is out, minSdk is 26 now",
    "my_var is broken now",
    "move the button from left to right",
    # Refactoring tasks from the classifier's prompt sets: files and pronouns name no tool.
    "move the helper funcs out of main.go into their own package",
    "move the enums out of helpers.py into their own enums.py and fix the imports",
    "move the deps from setup.py into pyproject",
    "move us off requirements.txt to uv",
    "should we move logging off env_logger onto tracing?",
    "staging is broken now",
    "prod is down now",
    "switch it to v2",
    "move the button to the left",
    "switch the CI job to ubuntu-24.04 for now",
    "should we switch state locking to the S3 native lockfile?",
    "it is 5 now",
]


@pytest.mark.parametrize("prompt", NOT_A_CHANGE)
def test_a_question_or_a_hypothetical_change_is_never_captured(prompt: str) -> None:
    assert user_signals(prompt) == []


@pytest.mark.parametrize(
    ("prompt", "hint"),
    [
        # Heard of, not known: the person confirms it.
        ("I think the bucket moved to eu-central-1", "The bucket moved to eu-central-1."),
        ("apparently the API is now at /v2", "The API is now at /v2."),
        # Not the project's setup: maybe a durable fact, maybe today's news.
        ("the standup moved to 10:30", "The standup moved to 10:30."),
        # A switch between two names no list knows: maybe the task of the moment.
        ("switch from main to develop", "Switch from main to develop."),
        # For now only.
        ("switch to polars for now", "Switch to polars for now."),
        (
            "the bucket temporarily moved to eu-central-1",
            "The bucket temporarily moved to eu-central-1.",
        ),
    ],
)
def test_a_change_heard_of_or_about_something_else_only_goes_to_the_inbox(
    prompt: str, hint: str
) -> None:
    assert [(s.kind, s.text) for s in user_signals(prompt)] == [("heuristic", hint)]


def test_redaction_keeps_the_sentence_boundary_and_the_secret_is_never_kept() -> None:
    (sig,) = user_signals("password=hunter2. Never log webhook bodies.")
    assert (sig.kind, sig.text) == ("rule", "Never log webhook bodies.")
    assert "hunter2" not in sig.line and "[REDACTED:password]." in sig.line


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("[DECISION] Use httpx for all HTTP calls. Done.",
         [("decision", "Use httpx for all HTTP calls.")]),
        ("Done. [DECISION] We use RS256 for JWT signing. [GOTCHA] the refresh endpoint "
         "needs state.",
         [("decision", "We use RS256 for JWT signing."),
          ("gotcha", "The refresh endpoint needs state.")]),
        ("[DEFER] refunds need retries later — done", [("defer", "Refunds need retries later.")]),
        ("[DECISION] e.g. Redis caches sessions. More text.",
         [("decision", "e.g. Redis caches sessions.")]),
        ("Example:\n```\n[DECISION] not a real one at all\n```", []),
        ("> [GOTCHA] quoted from an old log line", []),
    ],
)  # fmt: skip
def test_a_tag_holds_one_sentence(text: str, found: list[tuple[str, str]]) -> None:
    assert [(s.kind, s.text) for s in tag_signals(text)] == found


@pytest.mark.parametrize(
    "prompt",
    [
        "here is the log:\n```\nno, use requests instead of httpx\nnever retry\n```\nwhat broke?",
        "> never retry webhooks\n> always page the on-call\nwhy did the bot say that?",
        "2026-11-29 10:00:01 ERROR never retry: webhook failed\nwhat does this mean?",
        "    never retry webhooks  # from the old handler\nis that still true?",
        "<private>never use the staging key for tests</private> thanks",
    ],
)
def test_code_blocks_quoted_logs_and_private_spans_are_not_signals(prompt: str) -> None:
    assert user_signals(prompt) == []


@pytest.mark.parametrize(
    "prompt", ["ok, no problem, thanks", "no worries, that's all for today", "No need to rush."]
)
def test_pleasantries_that_open_with_no_are_not_even_hints(prompt: str) -> None:
    """A scripted week's "ok, no problem, thanks" became the inbox candidate "No problem." that
    every later brief announced."""
    assert user_signals(prompt) == []


# --- item 1 and 6: captured with no step, with its provenance -----------------------------------


def test_a_correction_and_a_decision_become_memories_at_stop_with_provenance(
    project: Path, state: Path
) -> None:
    path = session(
        project,
        [
            ("user", "Add a client for the fraud-check service."),
            ("assistant", "I'll use requests for it."),
            ("user", "no, use httpx instead of requests"),
            (
                "assistant",
                "Switched. [DECISION] The fraud client retries 3 times with backoff. Done.",
            ),
        ],
    )
    found = memories(project)
    by_body = {body: (name, meta) for name, (meta, body) in found.items()}
    name, meta = by_body["Use httpx instead of requests."]
    assert name == "feedback_use_httpx_instead_of_requests.md"
    assert meta["metadata"] == {"type": "feedback"}
    assert meta["origin"] == "capture:correction"
    assert meta["originSessionId"] == path.stem
    assert meta["created"] == "2026-11-29"
    assert meta["project"] == paths.project_key(project)
    assert meta["captured_from"] == "no, use httpx instead of requests"
    name, meta = by_body["The fraud client retries 3 times with backoff."]
    assert name.startswith("project_the_fraud_client_retries")
    assert meta["metadata"] == {"type": "project"} and meta["origin"] == "capture:decision"
    # Claude's own text is no rule of the person's: "I'll use requests" is not captured.
    assert not any("requests for it" in b for b in by_body)
    # Both reach the next session's brief, with no step by anyone, and nothing waits in the inbox.
    brief = wake(project)
    assert "Use httpx instead of requests." in brief
    assert "The fraud client retries 3 times with backoff." in brief
    assert inbox.list_candidates() == []
    index_md = (paths.project_memory_dir(project) / "MEMORY.md").read_text()
    assert "feedback_use_httpx_instead_of_requests.md" in index_md


def test_each_signal_goes_where_it_belongs(project: Path, state: Path) -> None:
    from memory_tool.store.palace import init_palace

    init_palace()  # rooms.yaml: a gotcha about the database goes to the database room
    session(
        project,
        [
            ("user", "I'm Dana, backend. Never run migrations against production by hand."),
            (
                "assistant",
                "[GOTCHA] The postgres migration lock times out after 5 s on the orders table.\n"
                "[REUSE] with_retry(fn) in app/retry.py wraps any flaky call.\n"
                "[DEFER] the refunds endpoint needs the same idempotency keys.",
            ),
            ("user", "stop doing that, it is annoying"),
        ],
    )
    found = {body: meta for meta, body in memories(project).values()}
    assert found["The user is Dana, backend."]["metadata"] == {"type": "user"}
    rule = found["Never run migrations against production by hand."]
    assert rule["metadata"] == {"type": "feedback"} and rule["origin"] == "capture:rule"
    reuse = found["with_retry(fn) in app/retry.py wraps any flaky call."]
    assert reuse["metadata"] == {"type": "reference"}
    defer = found["Open item: The refunds endpoint needs the same idempotency keys."]
    assert defer["metadata"] == {"type": "project"} and defer["origin"] == "capture:defer"
    (gotcha,) = [p for p in (state / "rooms" / "database").glob("*.md") if p.name != "MEMORY.md"]
    meta = yaml.safe_load(gotcha.read_text().split("\n---\n")[0].removeprefix("---\n"))
    assert meta["project"] == paths.project_key(project) and meta["origin"] == "capture:gotcha"
    # The weak hint waits for a person.
    assert [c.text for c in inbox.list_candidates()] == ["Stop doing that, it is annoying."]
    brief = wake(project)
    assert "The user is Dana, backend." in brief and "## About the user (L1)" in brief


def test_who_the_user_is_and_how_they_want_answers_reach_every_project(
    project: Path, state: Path, tmp_path: Path
) -> None:
    """The week's "I'm Dana, I work on the payments backend. Keep answers terse. Set up ...":
    one identity in the third person and the preference, both facts about the user (L1 of
    every project); the task is not captured."""
    session(
        project,
        [
            ("user", "I'm Dana, I work on the payments backend. Keep answers terse. Set up the "
                     "fraud-check client in app/fraud.py."),
            ("assistant", "Done: app/fraud.py has the client."),
        ],
    )  # fmt: skip
    found = {body: meta for meta, body in memories(project).values()}
    assert sorted(found) == [
        "Keep answers terse.",
        "The user is Dana and works on the payments backend.",
    ]
    assert {m["metadata"]["type"] for m in found.values()} == {"user"}
    assert found["Keep answers terse."]["origin"] == "capture:preference"
    assert "room" not in found["Keep answers terse."]
    other = tmp_path / "work" / "analytics"
    other.mkdir(parents=True)
    brief = wake(other)
    assert "## About the user (L1)" in brief
    assert "Keep answers terse." in brief and "works on the payments backend" in brief
    assert "I work" not in brief and inbox.list_candidates() == []


def test_two_rules_on_one_lower_case_line_are_two_memories(project: Path, state: Path) -> None:
    session(
        project,
        [("user", "always use snake_case column names. never commit notebooks with outputs. "
                  "Clean up the funnel notebook.")],
    )  # fmt: skip
    assert sorted(bodies(project)) == [
        "Always use snake_case column names.",
        "Never commit notebooks with outputs.",
    ]


def test_capture_mode_inbox_and_off(project: Path, state: Path) -> None:
    set_config(state, "capture:\n  mode: inbox\n")
    session(project, [("user", "Always run mypy before committing.")])
    assert bodies(project) == []
    assert [c.text for c in inbox.list_candidates()] == ["Always run mypy before committing."]
    # A preference waits as a fact about the user.
    session(project, [("user", "Keep answers terse.")])
    assert [(c.kind, c.type) for c in inbox.list_candidates() if "terse" in c.text] == [
        ("identity", "user")
    ]
    set_config(state, "capture:\n  mode: off\n")
    session(project, [("user", "Never push to main directly.")])
    assert bodies(project) == [] and len(inbox.list_candidates()) == 2


def test_a_transcript_that_is_not_json_or_huge_costs_nothing(project: Path, state: Path) -> None:
    bad = paths.projects_dir() / paths.sanitize_path(str(project)) / f"{uuid.uuid4()}.jsonl"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(b"not json at all\n\x00\xff{\n" * 1000)
    stop(project, bad)
    assert bodies(project) == []
    # 50 MB of session with one rule at its end: bounded time, the rule captured on the read
    # that reaches it (each hook reads at most 16 MiB of backlog).
    sid = str(uuid.uuid4())
    big = transcript(project, [("user", "Summarise the logs.")], sid)
    filler = json.dumps(_line("assistant", "log line " * 200, sid, project, 1)) + "\n"
    with open(big, "a", encoding="utf-8") as fh:
        fh.write(filler * (50 * 1024 * 1024 // len(filler)))
        fh.write(json.dumps(_line("user", "Never retry webhooks.", sid, project, 2)) + "\n")
    started = time.monotonic()
    for _ in range(4):
        stop(project, big)
    assert time.monotonic() - started < 60
    assert bodies(project) == ["Never retry webhooks."]


def test_nothing_private_reaches_a_captured_memory(project: Path, state: Path) -> None:
    from test_tiers_support import SECRETS, install_transcript, payload

    transcript_path = install_transcript("tiers_long", project)
    assert run_hook("Stop", payload("Stop", "tiers_long", project, transcript_path)).returncode == 0
    written = [p for p in paths.config_dir().rglob("*") if p.is_file() and p.suffix != ".jsonl"]
    captured = bodies(project)
    assert "Always run mypy before committing." in captured
    assert "Don't unset env vars in commands." in captured
    assert not any("Old injected note" in b for b in captured)
    for p in written:
        if p.suffix in (".md", ".json", ".jsonl", ".yaml") or p.name == "ledger.jsonl":
            text = p.read_text(encoding="utf-8", errors="replace")
            assert not any(s in text for s in SECRETS), p


# --- item 3: no duplicates anywhere --------------------------------------------------------------


def test_the_same_transcript_read_again_never_writes_twice(project: Path, state: Path) -> None:
    path = session(
        project,
        [
            ("user", "no, use httpx instead of requests"),
            ("assistant", "[DECISION] The fraud client retries 3 times with backoff."),
        ],
    )
    first = memories(project)
    stop(project, path, "SessionEnd")  # Stop, then SessionEnd: the same lines again
    from memory_tool.tiers import scribe

    scribe.run(path.stem, final=True)  # and a second Scribe run
    (state / "hot" / f"{path.stem}.json").unlink()  # even with the session's state gone
    stop(project, path)
    assert memories(project) == first
    assert len(first) == 2


def test_a_repeat_in_a_later_session_refreshes_the_memory_instead(
    project: Path, state: Path
) -> None:
    session(project, [("user", "Never log webhook bodies.")])
    ((name, (meta, _)),) = memories(project).items()
    assert "confirmed" not in meta and "importance" not in meta
    # A later session, another day: the person says it again, in other words.
    session(project, [("user", "remember: never log the webhook bodies")])
    session(project, [("user", "Never log webhook bodies!")])
    ((again, (meta, body)),) = memories(project).items()
    assert again == name and body == "Never log webhook bodies."
    assert str(meta["confirmed"]) == "2026-11-29" and meta["importance"] == 4


def test_a_rule_claude_saved_to_auto_memory_is_not_captured_again(
    project: Path, state: Path
) -> None:
    folder = paths.project_memory_dir(project)
    claude_file = write_memory(
        folder,
        "feedback_http_client.md",
        "Prefer httpx over requests for HTTP calls; the user corrected this.",
        type_="feedback",
    )
    written = claude_file.read_bytes()
    (folder / "MEMORY.md").write_text(
        "- [HTTP client](feedback_http_client.md) — httpx, not requests\n"
        "- Staging deploys need the VPN up first.\n",
        encoding="utf-8",
    )
    session(
        project,
        [
            ("user", "no, use httpx instead of requests"),
            ("assistant", "[GOTCHA] Staging deploys need the VPN up first."),
        ],
    )
    assert list(memories(project)) == ["feedback_http_client.md"]
    # Claude Code's own file is Claude Code's: counted as the repeat, never rewritten.
    assert claude_file.read_bytes() == written


def test_a_rule_claude_saved_in_its_own_words_in_the_same_session_is_not_kept_twice(
    project: Path, state: Path
) -> None:
    # blind4: Claude saved "Run the specs with … --tag ~js; the js system specs need headless
    # Chrome …" while the person said "don't run the whole suite - the js system specs drive
    # headless Chrome …"; both were kept and both loaded in 19 requests.
    folder = paths.project_memory_dir(project)
    write_memory(folder, "feedback_rspec_skip_js.md",
                 "Run the specs with bundle exec rspec --tag ~js; the js-tagged system specs need "
                 "headless Chrome, which this machine doesn't have.", type_="feedback")  # fmt: skip
    session(project, [("user", "write specs for the stale job. and please don't run the whole "
                               "suite - the js system specs drive headless Chrome and there's no "
                               "Chrome on this machine")])  # fmt: skip
    assert list(memories(project)) == ["feedback_rspec_skip_js.md"]


def test_an_older_claude_memory_on_the_topic_does_not_stop_a_new_rule(
    project: Path, state: Path
) -> None:
    folder = paths.project_memory_dir(project)
    old = write_memory(folder, "feedback_rspec_skip_js.md",
                       "Run the specs with bundle exec rspec --tag ~js; the js-tagged system specs "
                       "need headless Chrome, which this machine doesn't have.",
                       type_="feedback")  # fmt: skip
    os.utime(old, (1_600_000_000, 1_600_000_000))  # written long before this session
    said = ("please don't run the whole suite - the js system specs drive headless Chrome and "
            "there's no Chrome on this machine")  # fmt: skip
    session(project, [("user", said)])
    assert len(memories(project)) == 2


def test_a_palace_memory_that_says_it_already_is_a_repeat(project: Path, state: Path) -> None:
    room = state / "rooms" / "testing"
    write_memory(room, "mypy.md", "Always run mypy before committing.", type_="feedback")
    session(project, [("user", "Always run mypy before committing.")])
    assert memories(project) == {}
    text = (room / "mypy.md").read_text()
    assert "confirmed: 2026-11-29" in text


def test_a_forgotten_capture_is_not_made_again_from_its_source(project: Path, state: Path) -> None:
    from memory_tool.store.lifecycle import forget

    path = session(
        project,
        [
            ("user", "Always squash commits before merging."),
            ("assistant", "[DECISION] Releases are cut from the release branch."),
        ],
    )
    with open_index() as idx:
        for e in idx.captured(10):
            forget(idx, e.id)
    (state / "hot" / f"{path.stem}.json").unlink()
    stop(project, path)  # the same transcript read again
    session(project, [("assistant", "[DECISION] Releases are cut from the release branch.")])
    assert len(memories(project)) == 2
    assert all(meta.get("forgotten") for meta, _ in memories(project).values())
    assert "squash" not in wake(project) and "release branch" not in wake(project)
    # The person saying it again in a new session brings their rule back.
    session(project, [("user", "Always squash commits before merging.")])
    assert "Always squash commits before merging." in wake(project)
    assert len(memories(project)) == 2


# --- item 4: a new decision retires the one it replaces ------------------------------------------


@pytest.mark.parametrize(
    ("new", "old", "replaced"),
    [
        ("Use polars for dataframes.", "Use pandas for dataframes.", True),
        ("Use polars.", "Use pandas.", True),
        ("Use ruff instead of flake8.", "Use flake8 for linting.", True),
        ("We switched from pip to uv.", "Use pip for packages.", True),
        ("The bucket moved to eu-central-1.", "The events bucket is in us-east-1.", True),
        ("The bucket moved to eu-central-1.", "The payments S3 bucket is in us-east-1.", True),
        ("The API is now at /v2.", "The API is served at /v1.", True),
        # A change retires the fact that states the old value, not a rule about the same thing.
        ("The bucket moved to eu-central-1.", "Never make the bucket public.", False),
        (
            "Use polars instead of pandas for the event loads (pandas is too slow on the full "
            "export).",
            "Use pandas for the event loads.",
            True,
        ),
        ("Never use requests.", "Use requests for HTTP calls.", True),
        ("Use ruff instead of flake8.", "Run flake8 with max-line 100.", False),
        ("Use pytest for tests.", "Use ruff for linting.", False),
        ("Don't use requests in tests.", "Use requests for HTTP calls.", False),
        ("Always run mypy before committing.", "Never push to main directly.", False),
        # A fact that says what is used by another verb (blind3: the old logging decision
        # kept loading in 20 requests after the switch).
        ("Use tracing instead of env_logger for logging (with tracing-subscriber).",
         "Logging goes through env_logger; -v sets the filter to debug.", True),
        ("Use httpx instead of requests.", "HTTP calls go through requests with a 5 s timeout.",
         True),
        ("Use tracing instead of env_logger for logging.", "Never log secrets with env_logger.",
         False),
        ("Use httpx instead of requests.", "HTTP calls go through httpx and requests.", False),
        ("Use NVS instead of SPIFFS for probe calibration.",
         "Probe calibration lives in /spiffs/calib.json on the SPIFFS partition.", True),
        # blind5: said with any passive verb.
        ("Use Room instead of SharedPreferences for offline upload queue.",
         "Uploads taken offline are queued as JSON in SharedPreferences under pending.", True),
        ("Use Room instead of SharedPreferences for offline upload queue.",
         "Uploads are retried by WorkManager with backoff.", False),
        # blind6: off what the old fact used.
        ("We're off the council relay, overdue mails go through Postmark now.",
         "Outgoing mail goes through the council's SMTP relay, port 25, no auth needed.", True),
        ("We're off the council relay, overdue mails go through Postmark now.",
         "Never send mail around the council relay.", False),
        ("We're off the council relay, overdue mails go through Postmark now.",
         "Never log patron card numbers.", False),
        ("We moved off Heroku, we deploy with fly now.", "Deploys go through the Heroku pipeline.",
         True),
        # blind9: the same unit with another number, about the same thing.
        ("The late-cancel cutoff is now 48h before the appt.",
         "Patients can cancel online up to 24h before the appointment, then they phone.", True),
        ("The upload limit is now 50 MB.", "Images are resized to 2 MB before upload.", False),
        ("The timeout is now 30s.", "Retries wait 10s between attempts.", False),
        # blind17: a switch away from a name the old fact states, to one it does not.
        ("Switch the processed output to one Zarr store per variable instead of the per-year "
         "NetCDF files.", "Processed output is written as NetCDF, one file per variable per "
         "year, named <var>_<model>_<year>.nc.", True),
        ("Switch the processed output to one Zarr store per variable instead of the per-year "
         "NetCDF files.", "Never commit NetCDF files to git.", False),
        ("Switch the processed output to one Zarr store per variable instead of the per-year "
         "NetCDF files.", "Processed output goes to /data/processed on the cluster.", False),
        # blind19: a tool dropped and what is used now, said in one breath.
        ("Push goes through firebase cloud messaging now; we're off onesignal.",
         "Push notifications go through OneSignal (onesignal_flutter).", True),
        ("Push goes through firebase cloud messaging now; we're off onesignal.",
         "Never send a push between 22:00 and 07:00.", False),
    ],
)  # fmt: skip
def test_what_replaces_what(new: str, old: str, replaced: bool) -> None:
    assert capture.replaces(new, old) is replaced


def test_a_new_decision_supersedes_the_old_one_which_stays_as_history(
    project: Path, state: Path
) -> None:
    first = session(project, [("assistant", "[DECISION] Use pandas for the events loader.")])
    session(project, [("user", "Never push to main directly.")])
    (old_name, (old_meta, _)) = next(
        (n, m) for n, m in memories(project).items() if "pandas" in m[1]
    )
    assert "superseded_by" not in old_meta
    later = session(project, [("user", "no, use polars for the events loader")])
    found = memories(project)
    old_meta = found[old_name][0]
    (new_name,) = [n for n, (_, b) in found.items() if "polars" in b]
    new_meta = found[new_name][0]
    with open_index() as idx:
        old_id = idx.get_by_path(str(paths.project_memory_dir(project) / old_name)).id
        new_id = idx.get_by_path(str(paths.project_memory_dir(project) / new_name)).id
    assert old_meta["superseded_by"] == new_id and str(old_meta["valid_to"]) == "2026-11-29"
    assert new_meta["supersedes"] == old_id and str(new_meta["valid_from"]) == "2026-11-29"
    assert old_meta["originSessionId"] == first.stem and new_meta["originSessionId"] == later.stem
    # The old one no longer loads; the new one and the unrelated rule do; search finds both.
    brief = wake(project)
    assert "polars" in brief and "pandas" not in brief and "push to main" in brief
    found_ids = CliRunner().invoke(main, ["search", "events loader"]).output
    assert old_id in found_ids and new_id in found_ids


def test_moving_a_part_off_a_tool_retires_the_decision_that_named_it(
    project: Path, state: Path
) -> None:
    # blind3: the switch was taken for a repeat of the decision it retires, so the old
    # decision kept loading in 20 requests and the new one was never kept.
    session(project, [("assistant", "[DECISION] Logging goes through env_logger; -v sets the "
                                    "filter to debug and RUST_LOG overrides it.")])  # fmt: skip
    session(project, [("user", "let's move logging off env_logger and onto tracing with "
                               "tracing-subscriber. I want a span per input file")])  # fmt: skip
    by_body = {body: meta for meta, body in memories(project).values()}
    new = by_body["Use tracing instead of env_logger for logging (with tracing-subscriber)."]
    old = next(meta for body, meta in by_body.items() if body.startswith("Logging goes"))
    assert new["origin"] == "capture:correction"
    assert old["superseded_by"] and new["supersedes"]


def test_a_quantity_that_changed_retires_the_rule_that_gave_it_another_number(
    project: Path, state: Path
) -> None:
    """blind9: a limit said as "the clinics' rule: …" and then changed; the rule beside it that
    names no such quantity stays."""
    folder = paths.project_memory_dir(project)
    said = "Patients can cancel online up to 24h before the appointment, after that they have to "
    write_memory(folder, "feedback_cancel.md", said + "phone the clinic.", type_="feedback")
    write_memory(folder, "feedback_cancel_log.md", "Never log why a patient cancelled.",
                 type_="feedback")  # fmt: skip
    session(
        project,
        [("user", "clinics complained abt last-minute cancels so the late-cancel cutoff is 48h "
                  "before the appt now. update the check pls")],
    )  # fmt: skip
    by_body = {body: meta for meta, body in memories(project).values()}
    new = by_body["The late-cancel cutoff is now 48h before the appt."]
    old = by_body[
        "Patients can cancel online up to 24h before the appointment, after that they have to "
        "phone the clinic."
    ]
    assert old.get("superseded_by") and new.get("supersedes")
    assert not by_body["Never log why a patient cancelled."].get("superseded_by")
    brief = wake(project)
    assert "48h" in brief and "24h" not in brief


def test_a_rule_said_again_in_other_words_refreshes_the_one_said_before(
    project: Path, state: Path
) -> None:
    """blind12: "All player-facing text goes through the strings csv, you know this." after
    "Always put new strings in localization/strings.csv.": the person says memory holds it, so
    it is the same rule, said again, and no second memory; without the reminder two rules
    sharing words stay two."""
    session(project, [("user", "Always put new strings in localization/strings.csv.")])
    ((name, (meta, _)),) = memories(project).items()
    session(project, [("user", "the pause menu labels are hardcoded again. All player-facing "
                               "text goes through the strings csv, you know this.")])  # fmt: skip
    found = memories(project)
    assert list(found) == [name] and found[name][0].get("confirmed")
    session(project, [("user", "Never ship a strings csv with empty cells.")])
    assert any("empty cells" in body for _, body in memories(project).values())


def test_a_switch_to_anything_retires_the_fact_it_changes_and_is_otherwise_a_task(
    project: Path, state: Path
) -> None:
    """blind11/blind12: "switch the loss to dice + focal" after the decision "The loss is plain
    pixel-wise cross-entropy", "can we switch saves to something binary?" after "Saves are plain
    JSON files": neither names a known tool nor an exact value; each is the fact changed because
    memory holds the fact it changes. "switch the tab to dark mode" changes no fact: a task."""
    folder = paths.project_memory_dir(project)
    write_memory(folder, "project_loss.md",
                 "The loss is plain pixel-wise cross-entropy (nn.CrossEntropyLoss).",
                 type_="project")  # fmt: skip
    write_memory(folder, "project_saves.md",
                 "Saves are plain JSON files in user://saves/, one slot_N.json per slot.",
                 type_="project")  # fmt: skip
    # blind13: the fact a switch changes was said as a rule.
    write_memory(folder, "feedback_parser.md",
                 "The parser is hand-written recursive descent in lib/parser.ml, just add to it.",
                 type_="feedback")  # fmt: skip
    session(
        project,
        [
            ("user", "boundaries are mush. switch the loss to dice + focal. plain cross entropy "
                     "ignores the thin boundary pixels"),
            ("assistant", "fieldseg/losses.py has DiceFocalLoss now."),
            ("user", "testers edit the save file in notepad lol. can we switch saves to "
                     "something binary? store_var or whatever"),
            ("assistant", "save_game.gd writes slot_N.sav with store_var now."),
            ("user", "every new operator is 40 lines. switch the parser to menhir."),
            ("assistant", "lib/parser.mly replaces lib/parser.ml."),
            ("user", "switch the tab to dark mode"),
            ("assistant", "Done."),
        ],
    )  # fmt: skip
    by_body = {body: meta for meta, body in memories(project).values()}
    loss = by_body["The loss switched to dice + focal."]
    saves = by_body["Saves switched to binary."]
    assert loss["origin"] == saves["origin"] == "capture:change"
    old_loss = by_body["The loss is plain pixel-wise cross-entropy (nn.CrossEntropyLoss)."]
    old_saves = by_body["Saves are plain JSON files in user://saves/, one slot_N.json per slot."]
    assert old_loss.get("superseded_by") and old_saves.get("superseded_by")
    old_parser = by_body[
        "The parser is hand-written recursive descent in lib/parser.ml, just add to it."
    ]
    assert old_parser.get("superseded_by")
    assert by_body["The parser switched to menhir."]["origin"] == "capture:change"
    assert not any("dark mode" in body for body in by_body)
    brief = wake(project)
    assert "dice + focal" in brief and "cross-entropy" not in brief and "JSON files" not in brief


def test_a_switch_and_a_changed_fact_said_plainly_retire_the_older_memories(
    project: Path, state: Path
) -> None:
    """The week's "switch to polars for the event loads, pandas is too slow on the full export"
    and "the bucket moved to eu-central-1 last night, update the upload": neither says use,
    never or always; both are kept and retire what they replace, not the rule beside it."""
    folder = paths.project_memory_dir(project)
    write_memory(
        folder, "project_event_loads.md", "Use pandas for the event loads.", type_="project"
    )
    write_memory(
        folder, "project_bucket.md", "The payments S3 bucket is in us-east-1.", type_="project"
    )
    write_memory(folder, "feedback_bucket_public.md", "Never make the bucket public.",
                 type_="feedback")  # fmt: skip
    session(
        project,
        [
            ("user", "switch to polars for the event loads, pandas is too slow on the full export"),
            ("assistant", "etl/load.py now uses polars."),
            ("user", "the bucket moved to eu-central-1 last night, update the upload"),
            ("assistant", "app/settlement.py now targets eu-central-1."),
        ],
    )
    found = memories(project)
    by_body = {body: meta for meta, body in found.values()}
    polars_text = (
        "Use polars instead of pandas for the event loads (pandas is too slow on the full export)."
    )
    bucket_text = "The bucket moved to eu-central-1."
    polars = by_body[polars_text]
    assert polars["metadata"] == {"type": "feedback"} and polars["origin"] == "capture:correction"
    bucket = by_body[bucket_text]
    assert bucket["metadata"] == {"type": "project"} and bucket["origin"] == "capture:change"
    with open_index() as idx:
        ids = {
            p.name: idx.get_by_path(str(p)).id for p in folder.glob("*.md") if p.name != "MEMORY.md"
        }
    new_ids = {b: ids[n] for n, (_, b) in found.items()}
    assert found["project_event_loads.md"][0]["superseded_by"] == new_ids[polars_text]
    assert polars["supersedes"] == ids["project_event_loads.md"]
    assert found["project_bucket.md"][0]["superseded_by"] == new_ids[bucket_text]
    assert bucket["supersedes"] == ids["project_bucket.md"]
    assert "superseded_by" not in found["feedback_bucket_public.md"][0]
    # The tasks are not captured; the brief has the new facts, not the old ones.
    assert not any("update the upload" in b or "Update" in b for b in by_body)
    brief = wake(project)
    assert "eu-central-1" in brief and "us-east-1" not in brief
    assert (
        "Use pandas for the event loads." not in brief and "Never make the bucket public." in brief
    )
    assert inbox.list_candidates() == []


# --- item 5: the next brief says what was learned; item 7: the discipline stays ------------------


def start(project: Path, source: str = "startup") -> str:
    from helpers import start_payload

    res = run_hook("SessionStart", start_payload(project, source))
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    return str(out["additionalContext"])


def test_the_first_brief_after_a_capture_says_what_was_learned_once(
    project: Path, state: Path
) -> None:
    from memory_tool.store.lifecycle import forget

    start(project)  # a brief before: cached, and nothing learned yet
    session(
        project,
        [
            ("user", "no, use httpx instead of requests. Always set a timeout on HTTP calls."),
            ("assistant", "[DECISION] The fraud client retries 3 times with backoff."),
            ("user", "stop doing that, it is annoying"),
        ],
    )
    with open_index() as idx:
        ids = {e.body: e.id for e in idx.captured(10)}
        forget(idx, ids["Always set a timeout on HTTP calls."])
    brief = start(project)
    rule, decision = (
        ids["Use httpx instead of requests."],
        ids["The fraud client retries 3 times with backoff."],
    )
    assert (
        f"Learned in the last session: 1 rule, 1 decision ({rule}, {decision}); "
        "undo: `memory-tool forget ID`\n"
    ) in brief
    assert "Memory hygiene: 1 in the inbox: memory-tool inbox" in brief
    assert "timeout" not in brief  # forgotten before the brief: not loaded, not announced
    again = start(project)
    assert "Learned in" not in again and "Use httpx instead of requests." in again
    # A resumed session is not told again either; the inbox line stays until it is settled.
    assert "Learned in" not in start(project, "resume")
    (candidate,) = inbox.list_candidates()
    inbox.reject(candidate.id)
    assert "in the inbox" not in start(project)


def test_captures_compete_for_l2_and_never_displace_a_pinned_memory(
    project: Path, state: Path
) -> None:
    folder = paths.project_memory_dir(project)
    for n in range(14):
        write_memory(
            folder,
            f"project_pinned_{n}.md",
            f"Pinned fact number {n} about service {n}.",
            type_="project",
            always=True,
        )
    session(
        project,
        [
            ("user", "Never log webhook bodies. Always run mypy before committing."),
            ("assistant", "[DECISION] Deploys go out on Tuesdays only."),
        ],
    )
    assert len(memories(project)) == 17
    res = CliRunner().invoke(main, ["wake", "--cwd", str(project), "--json"])
    data = json.loads(res.output)
    l2 = data["layers"]["L2"]
    assert len(l2["entries"]) + len(data["layers"]["L1"]["entries"]) <= 15
    assert l2["tokens"] <= 500
    text = data["text"]
    assert all(f"Pinned fact number {n} " in text for n in range(14))
    assert "- 2 more project facts: memory-tool list --layer L2" in text


def test_a_projects_references_and_room_gotchas_fill_what_its_facts_leave_of_l2(
    project: Path, state: Path, tmp_path: Path
) -> None:
    """A [REUSE] and a [GOTCHA] filed in a room reach the next session's brief whatever its
    prompt says, after the project's own rules and facts, and only this project's."""
    from memory_tool.store.palace import init_palace

    init_palace()
    other = tmp_path / "work" / "other"
    (other / ".git").mkdir(parents=True)
    session(other, [("assistant", "[REUSE] lib/throttle.py Throttle.hit is the one limiter.")])
    session(
        project,
        [
            ("user", "Never run migrations against production by hand."),
            (
                "assistant",
                "[GOTCHA] The postgres migration lock times out after 5 s on the orders table.\n"
                "[REUSE] with_retry(fn) in app/retry.py wraps any flaky call.",
            ),
        ],
    )
    brief = wake(project)
    rule = brief.index("Never run migrations against production by hand.")
    assert rule < brief.index("The postgres migration lock times out after 5 s")
    assert rule < brief.index("with_retry(fn) in app/retry.py wraps any flaky call.")
    assert "Throttle.hit" not in brief and "Throttle.hit" in wake(other)
    set_config(state, "recall:\n  l2_background: false\n")  # facts and rules only
    assert "with_retry" not in wake(project) and rule
    from memory_tool.recall.explain import explain_brief
    from memory_tool.store.index import open_index

    with open_index() as idx:  # not a candidate at all, so not reported as dropped either
        idx.refresh(project)
        why = explain_brief(idx, project)
    assert not any("with_retry" in r.entry.body for r in why.dropped)
    set_config(state, "recall:\n  l2_background: true\n")
    # Own facts first: with the cap taken by them, the background waits for a prompt (L3).
    folder = paths.project_memory_dir(project)
    for n in range(15):
        write_memory(folder, f"project_fact_{n}.md", f"Fact {n}.", type_="project")
    brief = wake(project)
    assert sum(f"Fact {n}." in brief for n in range(15)) == 14  # and the rule: the cap
    assert "with_retry" not in brief and "migration lock" not in brief


@pytest.mark.parametrize(
    ("new", "old", "same"),
    [
        ("Use httpx instead of requests.", "Prefer httpx over requests for HTTP calls.", True),
        ("Use httpx instead of requests.", "Use requests instead of httpx.", False),
        ("Use httpx instead of requests.", "Never use httpx or requests.", False),
        ("Never deploy service 1 on Fridays.", "Never deploy service 2 on Fridays.", False),
        ("Never log webhook bodies.", "remember: never log the webhook bodies", True),
    ],
)
def test_what_counts_as_the_same_fact(new: str, old: str, same: bool) -> None:
    assert capture.same_fact(new, old) is same


@pytest.mark.parametrize(
    ("new", "old", "same"),
    [
        # blind2: the same rule said again with another reason, and reworded around the same
        # name from code, made two memories each and both reached every later request.
        ("Always pin provider versions in versions.tf, we got burned when aws 6.0 came out.",
         "Always pin provider versions in versions.tf, no >= ranges.", True),
        ("User-facing strings always go through t().",
         "Always wrap user-facing strings in t(), we ship in four languages.", True),
        ("Never push to main, it deploys.", "Never push to main, not even hotfixes.", True),
        # Other rules that share most words: a different tool, a negation, another name.
        ("Always run tests before pushing.", "Always run lint before pushing.", False),
        ("Always run make test before pushing, CI is slow.",
         "Always run make lint before pushing, CI is slow.", False),
        ("Never push to main.", "Always push to main, it deploys.", False),
        ("Use httpx instead of requests, it is async.",
         "Use requests instead of httpx, it is simpler.", False),
        ("Call retry() around S3 reads.", "Never call retry() around S3 writes.", False),
        ("Use formatDate() for dates on screen.", "Use formatDate() for times in logs.", False),
        ("Use tracing instead of env_logger for logging (with tracing-subscriber).",
         "Logging goes through env_logger; -v sets the filter to debug.", False),
        # blind3: said three times, kept twice.
        ("Every outbound gRPC call gets a deadline.",
         "Always set a deadline on outgoing gRPC calls, a hung catalog took the service down.",
         True),
        ("Always set a deadline on incoming gRPC calls.",
         "Always set a deadline on outgoing gRPC calls.", False),
        # blind5: "text" and "string", and a "pls", made two memories of one rule.
        ("Every user-facing string goes in strings.xml - the polish riders get english otherwise.",
         "All user-facing text goes in strings.xml pls, nothing hardcoded in compose.", True),
        ("Every log line goes in logs.txt.", "All user-facing text goes in strings.xml.", False),
    ],
)  # fmt: skip
def test_what_counts_as_the_same_rule_said_again(new: str, old: str, same: bool) -> None:
    assert capture.same_rule(new, old) is same


def test_a_rule_said_again_with_another_reason_stays_one_memory(project: Path, state: Path) -> None:
    session(project, [("user", "add the datadog provider. always pin provider versions in "
                               "versions.tf, we got burned when aws 6.0 came out")])  # fmt: skip
    first = memories(project)
    assert len(first) == 1
    session(project, [("user", "bump the aws provider to 5.80. and always pin provider "
                               "versions in versions.tf, no >= ranges")])  # fmt: skip
    assert list(memories(project)) == list(first)


def test_a_team_palace_memory_that_says_it_is_a_repeat_and_stays_untouched(
    project: Path, state: Path
) -> None:
    room = state / "teams" / "acme" / "rooms" / "testing"
    path = write_memory(room, "mypy.md", "Always run mypy before committing.", type_="feedback")
    before = path.read_text()
    session(project, [("user", "Always run mypy before committing.")])
    assert memories(project) == {}
    assert path.read_text() == before  # a team's memory is shared: not refreshed from here


def _phrasings() -> list[dict[str, Any]]:
    path = Path(__file__).parent / "data" / "rule_phrasings.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(
    "row",
    [r for r in _phrasings() if r["found"] or not r["standing"]],
    ids=lambda r: r["prompt"][:40],
)
def test_a_standing_instruction_is_captured_in_the_shapes_people_use(row: dict[str, Any]) -> None:
    """tests/data/rule_phrasings.jsonl: rules said with the marker inside the sentence ("X must
    never …", "use tabs going forward", "next time you add a dependency, pin it"), and today's
    tasks and reports that look like them ("it always crashes when I save"). Rules it still
    misses are in the file with an empty ``found`` (bench/phrasings.py counts them). These are
    the shapes' findings; what the statement model adds is tests/test_statements.py's."""
    said = user_signals(row["prompt"], statements=False)
    found = [[s.kind, s.text] for s in said if s.kind in EXPLICIT_KINDS]
    assert found == row["found"]
