"""The statement model (tiers.statements): what no capture shape knows, said for good, becomes a
memory; a task, a question, a secret or what a shape took already does not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_capture import bodies, memories, session, set_config, start

from memory_tool.store.index import open_index
from memory_tool.tiers import statements
from memory_tool.tiers.signals import user_signals

REPO = Path(__file__).resolve().parent.parent


def _statements(prompt: str) -> list[str]:
    return [s.text for s in user_signals(prompt) if s.kind == "statement"]


def test_the_shipped_model_is_what_the_training_script_makes(tmp_path: Path) -> None:
    """The weights are data anyone can make again: the script, the listed weeks and tests/data
    give the same file, byte for byte (seeded; no hand edits)."""
    out = tmp_path / "statements.json"
    res = subprocess.run(
        [sys.executable, str(REPO / "bench" / "statements_train.py"), "--out", str(out)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() == statements.MODEL_PATH.read_bytes()


@pytest.mark.parametrize(
    ("prompt", "found"),
    [
        # What no shape of signals.py takes (user_signals without the model finds nothing).
        ("we bill in arrears, always on the 1st", "We bill in arrears, always on the 1st."),
        (
            "ok so the reports use the warehouse replica, we use the prod db for writes only",
            "The reports use the warehouse replica, we use the prod db for writes only.",
        ),
    ],
)
def test_a_statement_no_shape_knows_is_taken(prompt: str, found: str) -> None:
    assert [s for s in user_signals(prompt, statements=False) if s.kind != "heuristic"] == []
    assert found in _statements(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "can you add a login page",
        "thanks that worked",
        "ok lets look at the flaky test in ci",
        "should edit be PUT or PATCH here? ~40 fields, we always send all of them",
        "password reset tokens never expire in our app, fix that so they expire after an hour",
        "let me check with the platform team before we apply any of this",
        "what do we always do with the migrations",
    ],
)
def test_a_task_a_question_or_a_request_about_now_is_no_statement(prompt: str) -> None:
    assert _statements(prompt) == []


def _phrasings() -> list[dict[str, Any]]:
    path = REPO / "tests" / "data" / "rule_phrasings.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_on_the_phrasing_set_the_model_takes_no_look_alike_and_leans_on_nothing() -> None:
    """The phrasing set's tasks and reports that look like rules ("it always crashes when I
    save") give no statement; beside its rules the model adds what their sentences say besides
    (a reason, a setup fact), never a sentence that leans on the one before ("That's a condition
    of my ethics approval.") nor a refusal the correction took ("Not moment pls, …")."""
    rows = _phrasings()
    taken = {r["prompt"]: _statements(r["prompt"]) for r in rows}
    assert [p for r in rows if not r["standing"] for p in taken[r["prompt"]]] == []
    added = [s for r in rows if r["standing"] for s in taken[r["prompt"]]]
    assert not any(s.split()[0].lower() in ("that's", "they've", "they", "not") for s in added)
    # A rule no shape takes, said as a fact, is taken by the model.
    assert any(s.startswith("Tests need to run against the real postgres container") for s in added)


def test_what_a_shape_took_is_not_taken_twice() -> None:
    prompt = (
        "switch the sqlite db in our tauri app to WAL mode, make sure its set on every connection"
    )
    kinds = [s.kind for s in user_signals(prompt)]
    assert "change" in kinds and "statement" not in kinds


def test_a_sentence_that_held_a_secret_is_no_statement() -> None:
    text = "we always connect as etl_rt, password [REDACTED:password]"
    assert statements.statement_signals(text, []) == []


def test_no_model_file_means_no_statement(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    broken = tmp_path / "statements.json"
    broken.write_text("{not json", encoding="utf-8")
    monkeypatch.setattr(statements, "MODEL_PATH", broken)
    statements._model.cache_clear()
    try:
        assert statements.probability("we bill in arrears, always on the 1st") == 0.0
        assert _statements("we bill in arrears, always on the 1st") == []
    finally:
        statements._model.cache_clear()


def test_a_statement_becomes_a_memory_the_next_session_gets(project: Path, state: Path) -> None:
    session(project, [("user", "we bill in arrears, always on the 1st. add the invoice export")])
    found = {body: meta for meta, body in memories(project).values()}
    meta = found["We bill in arrears, always on the 1st."]
    assert meta["metadata"] == {"type": "feedback"}
    assert meta["origin"] == "capture:statement"
    assert meta["captured_from"].startswith("we bill in arrears")
    with open_index() as idx:
        (entry,) = [e for e in idx.captured(10) if e.body.startswith("We bill")]
    brief = start(project)
    assert "We bill in arrears, always on the 1st." in brief
    # The first brief says what kind of memory it is, with its id, and how to undo it.
    assert f"Learned in the last session: 1 statement ({entry.id}); undo:" in brief


def test_capture_statements_false_keeps_only_the_shapes(project: Path, state: Path) -> None:
    set_config(state, "capture:\n  mode: auto\n  statements: false\n")
    session(project, [("user", "we bill in arrears, always on the 1st. add the invoice export")])
    assert [b for _, b in memories(project).values()] == []


def test_beside_what_a_shape_took_the_rest_of_the_message_is_context() -> None:
    """A rule's reasons and context in the same message are no statements of their own (a week
    kept "flutter_riverpod 2 + the @riverpod generator, it's all in pubspec already." beside the
    correction it explained: the same fact twice in every later request)."""
    prompt = (
        "ah no, we're on riverpod in this app, not provider. flutter_riverpod 2 + the @riverpod "
        "generator, it's all in pubspec already."
    )
    assert [s.kind for s in user_signals(prompt)] == ["correction"]


def test_a_statement_of_a_tool_is_retired_by_the_switch_away_from_it(
    project: Path, state: Path
) -> None:
    said = "we send mail through Mailgun via the Swoosh adapter, config is already in runtime.exs"
    session(project, [("user", said)])
    session(project, [("user", "use postmark instead of mailgun for email")])
    found = {body: meta for meta, body in memories(project).values()}
    old = found[
        "We send mail through Mailgun via the Swoosh adapter, config is already in runtime.exs."
    ]
    assert old["origin"] == "capture:statement"
    assert old.get("superseded_by"), old
    brief = start(project)
    assert "Use postmark instead of mailgun for email." in brief and "Swoosh" not in brief


def test_a_guess_of_what_memory_holds_is_not_kept_twice(project: Path, state: Path) -> None:
    """Claude's decision and the person's statement of the same fact in one session: the
    statement (weighed last) is taken as said before, and one memory holds the fact."""
    session(
        project,
        [
            ("user", "we render them with puppeteer, it's already in package.json"),
            (
                "assistant",
                "[DECISION] Payslip PDFs are rendered from templates/payslip.hbs with puppeteer.",
            ),
        ],
    )
    found = [b for b in bodies(project) if "puppeteer" in b]
    assert found == ["Payslip PDFs are rendered from templates/payslip.hbs with puppeteer."]


def test_a_plain_rule_replaces_the_statement_that_guessed_it(project: Path, state: Path) -> None:
    session(
        project,
        [("user", "every change to a pay run, submit included, has to write an audit_log row")],
    )
    session(
        project,
        [("user", "usual rule: every change writes an audit_log row, who + when + old/new values")],
    )
    live = {b: m for m, b in memories(project).values() if not m.get("superseded_by")}
    assert [b for b in live if "audit_log" in b] == [
        "Every change writes an audit_log row, who + when + old/new values."
    ]
    brief = start(project)
    assert brief.count("audit_log") == 1


def test_a_tool_dropped_retires_what_went_through_it(project: Path, state: Path) -> None:
    """ "the practice dropped twilio as of this morning - we're on esendex now" retires "SMS goes
    through twilio" (blind27 kept both: the old one in 16 requests)."""
    session(project, [("user", "always send the sms through twilio, the sid is in TWILIO_SID")])
    session(
        project,
        [
            (
                "user",
                "heads up, the practice dropped twilio as of this morning - we're on esendex now",
            )
        ],
    )
    live = [b for m, b in memories(project).values() if not m.get("superseded_by")]
    assert not any("through twilio" in b for b in live), live
    assert any("esendex" in b for b in live)


@pytest.mark.parametrize(
    ("prompt", "found"),
    [
        (
            "hm, no. it's hilt in this project - the plugin's in app/build.gradle.kts and "
            "SurveyApp is already @HiltAndroidApp. swap koin out",
            "It's hilt in this project - the plugin's in app/build.gradle.kts and SurveyApp is "
            "already @HiltAndroidApp.",
        ),
        (
            "no - broker is rabbitmq, we already run it on the practice server for the lab "
            "results feed",
            "Broker is rabbitmq, we already run it on the practice server for the lab results "
            "feed.",
        ),
    ],
)
def test_what_follows_a_no_is_a_correction_when_the_model_agrees(prompt: str, found: str) -> None:
    """After a "no", a sentence no shape makes a correction of is a hint for the inbox; with the
    statement model's word it is the correction (blind27 lost both to the inbox)."""
    assert [(s.kind, s.text) for s in user_signals(prompt, statements=False)][:1] == [
        ("heuristic", found)
    ]
    assert ("correction", found) in [(s.kind, s.text) for s in user_signals(prompt)]


@pytest.mark.parametrize(
    "prompt",
    [
        "ok, not distributed so fine. will check with legal anyway, thanks",
        "no, go back to the previous version",
        "redis cache hit rate is only 40%, what are we doing wrong",
        "added the dind service like u said, now its failing with x509 errors",
    ],
)
def test_a_plan_a_revert_or_a_report_after_a_no_stays_out(prompt: str) -> None:
    kinds = [s.kind for s in user_signals(prompt)]
    assert "correction" not in kinds and "statement" not in kinds


def test_after_a_no_one_correction_and_the_reasons_stay_hints() -> None:
    prompt = (
        "hm, no, not sidekiq. there's no redis on the legacy boxes and i'm not getting ops to add "
        "one for this. the app already runs delayed_job - config.active_job.queue_adapter is set "
        "to it in application.rb - so just make it a normal ActiveJob"
    )
    kinds = [s.kind for s in user_signals(prompt)]
    assert kinds.count("correction") <= 1 and "statement" not in kinds


def test_a_value_changed_from_a_day_on_retires_the_old_value(project: Path, state: Path) -> None:
    """blind30: the statement of the old minimum stayed in 17 requests after it changed (the
    change retired a note on the code that computes premiums instead)."""
    session(project, [("user", "underwriting's minimum is £120 a year, nobody should pay less")])
    session(
        project,
        [
            (
                "assistant",
                "[REUSE] PremiumCalculator.new(quote).breakdown "
                "(app/services/premium_calculator.rb) returns the base premium, each loading and "
                "the minimum premium top-up.",
            )
        ],
    )
    session(
        project,
        [
            (
                "user",
                "Underwriting have reviewed the minimum premium: from Monday it goes up from "
                "£120 to £150 a year for all new quotes.",
            )
        ],
    )
    live = [b for m, b in memories(project).values() if not m.get("superseded_by")]
    assert "The minimum premium is now £150 a year, changed from £120." in live
    assert not any("£120 a year" in b for b in live), live
    assert any(b.startswith("PremiumCalculator.new(quote)") for b in live)


def test_a_fact_kept_as_a_rule_is_retired_when_its_value_moves(project: Path, state: Path) -> None:
    """blind34: "The SHT40 is on I2C1 (PB6/PB7) …" (said after "fyi", so kept as a rule) stayed
    in 16 requests after "rev C boards arrived and the SHT40 moved from I2C1 to I2C2"."""
    session(project, [("user", "oh fyi the SHT40 is on I2C1 (PB6/PB7) on the rev B boards")])
    found = {b: m for m, b in memories(project).values()}
    assert found["The SHT40 is on I2C1 (PB6/PB7) on the rev B boards."]["origin"] == "capture:rule"
    session(
        project,
        [("user", "rev C boards arrived and the SHT40 moved from I2C1 to I2C2 (PB10/PB11)")],
    )
    live = [b for m, b in memories(project).values() if not m.get("superseded_by")]
    assert "The SHT40 moved from I2C1 to I2C2 (PB10/PB11)." in live
    assert not any("PB6" in b for b in live), live
