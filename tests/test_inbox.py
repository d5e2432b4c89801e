"""Extraction of tagged lines and corrections into the inbox; accept writes a real memory,
reject drops it for good; nothing reaches always-load without a person accepting it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from helpers import run_hook
from test_tiers_support import LONG_SID, SMALL_SID, install_transcript, payload

from memory_tool.base import paths
from memory_tool.cli.main import main
from memory_tool.tiers import inbox


@pytest.fixture(autouse=True)
def inbox_mode(state: Path) -> None:
    """These tests are about the inbox itself: every signal goes there (capture.mode: inbox),
    as it did before auto-capture (tests/test_capture.py covers the default, auto)."""
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text("capture:\n  mode: inbox\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("line", "kind", "text"),
    [
        ("[DECISION] Use Redis for idempotency records.", "decision",
         "Use Redis for idempotency records."),
        ("- **[GOTCHA]** fakeredis only starts when REDIS_URL is unset", "gotcha",
         "fakeredis only starts when REDIS_URL is unset"),
        ("[REUSE]: with_idempotency(key, fn) wraps any handler", "reuse",
         "with_idempotency(key, fn) wraps any handler"),
        ("Notes — [defer] — refunds need the same treatment later", "defer",
         "refunds need the same treatment later"),
    ],
)  # fmt: skip
def test_each_tag_is_extracted(line: str, kind: str, text: str) -> None:
    assert inbox.tagged_lines(f"Some text first.\n{line}\nMore text.") == [(kind, text)]


def test_tags_inside_our_injected_memory_are_ignored() -> None:
    text = "<memory-context>\n[DECISION] Something we injected ourselves\n</memory-context>\nOk."
    assert inbox.tagged_lines(text) == []
    assert inbox.tagged_lines("[DECISION] ok") == []  # too short to be a fact


@pytest.mark.parametrize(
    ("prompt", "found"),
    [
        ("no, use the make test target instead", ["no, use the make test target instead"]),
        ("Don't unset env vars in commands.", ["Don't unset env vars in commands."]),
        ("Thanks. Always run mypy before committing.", ["Always run mypy before committing."]),
        ("Never push to main directly, open a PR", ["Never push to main directly, open a PR"]),
        ("Create a.py and b.py; never use tabs in them.",
         ["Create a.py and b.py; never use tabs in them."]),
        ("Import it from retry.py instead, and keep the cap at 30 s.",
         ["Import it from retry.py instead, and keep the cap at 30 s."]),
        ("Why does it always fail on CI?", []),  # a question, not a rule
        ("Add a CSV export to the reports page", []),
        ("no", []),
        ("x " * 400 + "never do this", []),  # a long paste is not a correction
    ],
)  # fmt: skip
def test_corrections_are_extracted(prompt: str, found: list[str]) -> None:
    assert inbox.corrections(prompt) == found


def _session(project: Path) -> None:
    transcript = install_transcript("tiers_long", project)
    run_hook("Stop", payload("Stop", "tiers_long", project, transcript))


def test_stop_fills_the_inbox_with_one_candidate_per_lesson(project: Path, state: Path) -> None:
    _session(project)
    found = {(c.kind, c.text) for c in inbox.list_candidates()}
    assert ("decision", "Store idempotency records in Redis with a 24 h TTL, keyed by "
            "`idem:{account_id}:{key}`, not in Postgres: the lookups are hot and the records are "
            "disposable.") in found  # fmt: skip
    assert ("gotcha", "The test suite needs Redis: tests/conftest.py starts fakeredis only when "
            "REDIS_URL is unset, and .env sets it.") in found  # fmt: skip
    assert any(k == "reuse" and "with_idempotency" in t for k, t in found)
    assert any(k == "defer" and "POST /refunds" in t for k, t in found)
    assert ("correction", "Always run mypy before committing.") in found
    assert any(k == "correction" and "use the `make test` target" in t.lower() for k, t in found)
    assert not any("Old injected note" in t for _, t in found)
    # Proposed places: decision -> project, gotcha -> wiki, correction -> feedback.
    by_kind = {c.kind: c for c in inbox.list_candidates()}
    assert (by_kind["decision"].type, by_kind["decision"].tier) == ("project", "")
    assert by_kind["gotcha"].tier == "wiki"
    assert by_kind["correction"].type == "feedback"
    assert all(c.session == LONG_SID for c in by_kind.values())
    # The next Stop finds the same lessons: nothing is added twice.
    before = len(inbox.list_candidates())
    _session(project)
    assert len(inbox.list_candidates()) == before


def test_inbox_lists_and_accept_writes_a_claude_code_memory(project: Path, state: Path) -> None:
    _session(project)
    runner = CliRunner()
    listing = runner.invoke(main, ["inbox"])
    assert listing.exit_code == 0 and "correction" in listing.output and "waiting" in listing.output
    (rule,) = [c for c in inbox.list_candidates() if c.text == "Always run mypy before committing."]

    # Not in the always-loaded brief before a person accepts it...
    assert "mypy" not in runner.invoke(main, ["wake", "--cwd", str(project)]).output
    result = runner.invoke(main, ["inbox", "accept", rule.id])
    assert result.exit_code == 0, result.output
    saved = Path(result.output.split(" -> ")[1].strip())
    assert saved.parent == paths.project_memory_dir(project)
    assert saved.name.startswith("feedback_")
    head, body = saved.read_text().split("\n---\n", 1)
    meta = yaml.safe_load(head.removeprefix("---\n"))
    assert meta["metadata"] == {"type": "feedback"}
    assert meta["created"] == "2026-11-29"
    assert meta["originSessionId"] == LONG_SID
    assert body.strip() == "Always run mypy before committing."
    index_md = (saved.parent / "MEMORY.md").read_text()
    assert f"]({saved.name}) — Always run mypy before committing." in index_md
    # ...and in it after.
    assert "mypy" in runner.invoke(main, ["wake", "--cwd", str(project)]).output
    assert rule.id not in runner.invoke(main, ["inbox"]).output


def test_accept_gotcha_goes_to_the_wiki_or_the_given_room(project: Path, state: Path) -> None:
    _session(project)
    runner = CliRunner()
    gotcha = next(c for c in inbox.list_candidates() if c.kind == "gotcha")
    result = runner.invoke(main, ["inbox", "accept", gotcha.id])
    assert result.exit_code == 0, result.output
    assert Path(result.output.split(" -> ")[1].strip()).parent == state / "wiki"
    decision = next(c for c in inbox.list_candidates() if c.kind == "decision")
    result = runner.invoke(main, ["inbox", "accept", decision.id, "--room", "database"])
    assert result.exit_code == 0, result.output
    assert Path(result.output.split(" -> ")[1].strip()).parent == state / "rooms" / "database"


def test_reject_drops_a_candidate_for_good(project: Path, state: Path) -> None:
    _session(project)
    runner = CliRunner()
    reuse = next(c for c in inbox.list_candidates() if c.kind == "reuse")
    result = runner.invoke(main, ["inbox", "reject", reuse.id])
    assert result.exit_code == 0 and result.output.strip() == f"rejected {reuse.id}"
    # The same transcript read again (a new session summarised by hand) does not bring it back.
    (state / "hot" / f"{LONG_SID}.json").unlink()
    _session(project)
    assert reuse.id not in {c.id for c in inbox.list_candidates()}
    again = runner.invoke(main, ["inbox", "reject", reuse.id])
    assert again.exit_code != 0 and "accepted or rejected already" in again.output
    bad = runner.invoke(main, ["inbox", "accept", "nonsense"])
    assert bad.exit_code != 0 and "not an inbox id" in bad.output


def test_several_tags_on_one_line_are_separate_lessons_in_every_tier(
    project: Path, state: Path
) -> None:
    """`[DECISION] … [GOTCHA] …` on one line is a decision and a gotcha, each with its own
    text: in the inbox, the hot file's decisions, the cold summary and the wiki after a roll."""
    from memory_tool.store.index import open_index
    from memory_tool.tiers import scribe
    from memory_tool.tiers.hot import hot_path

    final = (
        "Done. [DECISION] We use RS256 for JWT signing. "
        "[GOTCHA] the refresh token endpoint needs the state param."
    )
    transcript = install_transcript("tiers_small", project)
    stop = payload("Stop", "tiers_small", project, transcript, last_assistant_message=final)
    assert run_hook("Stop", stop).returncode == 0
    decision = "We use RS256 for JWT signing."
    gotcha = "The refresh token endpoint needs the state param."
    found = {(c.kind, c.text) for c in inbox.list_candidates()}
    assert ("decision", decision) in found and ("gotcha", gotcha) in found
    assert not any("[GOTCHA]" in t or ("RS256" in t and "refresh" in t) for _, t in found)
    hot = hot_path(SMALL_SID).read_text()
    decided = hot.split("## Decisions this session\n")[1].split("\n## ")[0]
    assert decision in decided and "refresh token" not in decided
    (cold,) = (state / "cold").rglob("*.md")
    body = cold.read_text()
    assert f"## Decisions\n- {decision}\n\n" in body  # the decision alone
    assert f"## Gotchas\n- {gotcha}" in body
    # Rolled out of the window: the decision and the gotcha become two wiki records.
    text = cold.read_text().replace('created: "2026-11-29"', 'created: "2026-10-20"')
    cold.write_text(text.replace('updated: "2026-11-29"', 'updated: "2026-10-20"'))
    with open_index() as idx:
        scribe.roll(idx)
        wiki = {e.description: Path(e.path).read_text() for e in idx.query("source = 'wiki'")}
    adr = next(t for d, t in wiki.items() if d.startswith("We use RS256"))
    assert "**Decision:** We use RS256 for JWT signing." in adr and "refresh token" not in adr
    assert any(f"**Gotcha:** {gotcha}" in t for t in wiki.values())


def test_the_inbox_shows_this_projects_candidates_first_and_names_the_others(
    project: Path, state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "elsewhere"
    (other / ".git").mkdir(parents=True)
    for kind, text, where in [
        ("decision", "We use RS256 for JWTs.", other),
        ("gotcha", "The staging DB is read-only on Fridays.", project),
    ]:
        inbox.write_candidates([(kind, text)], session="s1", project=paths.project_key(where),
                               cwd=str(where), day="2026-11-30")  # fmt: skip
    monkeypatch.chdir(project)
    out = CliRunner().invoke(main, ["inbox"]).output
    theirs = f"## {paths.project_key(other)}"
    assert out.index("## this project") < out.index("read-only") < out.index(theirs)
    assert out.index(theirs) < out.index("RS256")


def test_a_candidate_can_be_edited_then_accepted_in_the_place_a_person_picks(
    project: Path, state: Path
) -> None:
    """The web UI's inbox: edit a candidate's text (redacted, its id kept), accept a gotcha
    into the project's memory instead of the proposed wiki, a decision into the wiki."""
    from memory_tool.base.errors import MemoryToolError
    from memory_tool.store.index import open_index

    key = paths.project_key(project)
    found = [("gotcha", "The cache warms for ten minutes after a deploy."),
             ("decision", "We keep one alembic revision per pull request.")]  # fmt: skip
    gotcha_id, decision_id = inbox.write_candidates(
        found, session="s1", project=key, cwd=str(project), day="2026-11-29"
    )
    secret = "sk-ant-api03-" + "B" * 40
    edited = inbox.revise(gotcha_id, f"The cache warms for 15 minutes after a deploy. {secret}")
    assert edited.id == gotcha_id and secret not in edited.text
    assert inbox.get_candidate(gotcha_id).text == edited.text
    with pytest.raises(MemoryToolError, match="at least"):
        inbox.revise(gotcha_id, "<private>all of it</private>")
    assert inbox.get_candidate(gotcha_id).text == edited.text  # a refused edit changes nothing
    with open_index() as idx:
        kept = inbox.accept(idx, gotcha_id, place="project")
        wiki = inbox.accept(idx, decision_id, place="wiki")
        with pytest.raises(MemoryToolError, match="place must be one of"):
            inbox.accept(idx, gotcha_id, place="elsewhere")
    assert Path(kept.path).parent == paths.project_memory_dir(project)
    assert "15 minutes" in Path(kept.path).read_text() and secret not in Path(kept.path).read_text()
    assert Path(wiki.path).parent == state / "wiki"
    assert inbox.list_candidates() == []


def test_a_gotcha_accepted_in_one_project_is_another_projects_gotcha_elsewhere(
    tmp_path: Path, state: Path
) -> None:
    """Accepted in `pipeline`, the gotcha's wiki page says `project: pipeline's key`: in
    `shop` it is recalled under "From other projects", never as shop's own."""
    from memory_tool.base.event import HookEvent
    from memory_tool.recall.deep import OTHER_PROJECTS_HEADING
    from memory_tool.runtime.prompt_submit import prompt_context
    from memory_tool.store.index import open_index

    pipeline, shop = tmp_path / "src" / "pipeline", tmp_path / "src" / "shop"
    for repo in (pipeline, shop):
        (repo / ".git").mkdir(parents=True)
    (gotcha_id,) = inbox.write_candidates(
        [("gotcha", "The Kafka consumer drops offsets when rebalancing under load.")],
        session="s1", project=paths.project_key(pipeline), cwd=str(pipeline), day="2026-11-29",
    )  # fmt: skip
    with open_index() as idx:
        page = inbox.accept(idx, gotcha_id)
        idx.refresh()
    assert Path(page.path).parent == state / "wiki"
    meta = yaml.safe_load(Path(page.path).read_text().split("---")[1])
    assert meta["project"] == paths.project_key(pipeline)

    def l4(cwd: Path, session: str) -> str:
        event = HookEvent(
            "UserPromptSubmit", session_id=session, cwd=str(cwd),
            prompt="What did we find out last time about the kafka consumer offsets?",
        )  # fmt: skip
        return prompt_context(event)[0]

    theirs = l4(shop, "shop-1")
    assert page.id in theirs
    assert theirs.index(OTHER_PROJECTS_HEADING) < theirs.index(page.id)
    ours = l4(pipeline, "pipeline-1")
    assert page.id in ours and OTHER_PROJECTS_HEADING not in ours
