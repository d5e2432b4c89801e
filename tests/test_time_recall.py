"""Recall across time through the one ranking (store.search): time words in a query rank what
falls in their window first, orderings pick the first or latest, and a query without time
words ranks exactly as before. Real memory files, real transcripts, a real index."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from click.testing import CliRunner
from helpers import write_memory

from memory_tool.base import paths
from memory_tool.cli.main import main
from memory_tool.recall.deep import deep_recall
from memory_tool.store.index import Index, open_index
from memory_tool.store.search import search

NOW = dt.date(2026, 11, 20)  # a Friday


def session(project: Path, sid: str, day: str, *messages: str) -> None:
    """A Claude Code transcript of one session on ``day``: person, then Claude, in turn."""
    folder = paths.projects_dir() / paths.project_key(project)
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, text in enumerate(messages):
        role = "user" if i % 2 == 0 else "assistant"
        content: object = text if role == "user" else [{"type": "text", "text": text}]
        lines.append(
            json.dumps(
                {
                    "type": role,
                    "uuid": f"{sid}-{i}",
                    "sessionId": sid,
                    "timestamp": f"{day}T10:0{i}:00Z",
                    "message": {"role": role, "content": content},
                }
            )
        )
    (folder / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def release_history(project: Path) -> None:
    session(
        project, "rel-aug", "2026-08-12",
        "the release script bumps the version twice, fix scripts/release.sh",
        "Fixed scripts/release.sh: the version bump ran in the tag step and the publish step.",
    )  # fmt: skip
    session(
        project, "rel-sep", "2026-09-21",
        "add a changelog step to the release script scripts/release.sh",
        "scripts/release.sh runs git-cliff to write the changelog before tagging the release.",
    )  # fmt: skip
    session(
        project, "rel-nov", "2026-11-16",
        "the release script should refuse a dirty tree",
        "The release script exits early when git status --porcelain is not empty.",
    )  # fmt: skip
    session(
        project, "docker", "2026-11-03",
        "the docker image is 1.2GB, slim it down",
        "Switched the Dockerfile to a multi-stage build; the docker image is 240MB now.",
    )  # fmt: skip
    session(
        project, "arm", "2026-10-06",
        "docker build fails on the arm64 runner",
        "psycopg2 had no arm64 wheel; psycopg 3 ships one, so the docker build passes.",
    )  # fmt: skip
    session(
        project, "flaky", "2026-11-19",
        "test_login flaky again on CI, it passes locally",
        "The flaky login test shared a database with test_signup; each gets its own schema.",
    )  # fmt: skip


def sessions_of(idx: Index, query: str, **kw: object) -> list[str]:
    """The session ids of the hits, best first, each once."""
    out: list[str] = []
    for h in search(idx, query, now=NOW, **kw):  # type: ignore[arg-type]
        sid = str(h.entry.extra.get("session_id") or h.entry.id)
        if sid not in out:
            out.append(sid)
    return out


def test_a_day_named_in_the_query_ranks_that_days_session_first(project: Path) -> None:
    release_history(project)
    with open_index() as idx:
        idx.refresh(project)
        # Words alone prefer the richer September session...
        assert sessions_of(idx, "what did we change in the release script")[0] != "rel-nov"
        # ...Monday (the 16th) is the one asked about.
        assert sessions_of(idx, "what did we change in the release script on Monday?")[0] == (
            "rel-nov"
        )
        assert sessions_of(idx, "what did we change in the release script in August?")[0] == (
            "rel-aug"
        )
        assert sessions_of(idx, "the release script two months ago")[0] == "rel-sep"


def test_only_time_words_bring_what_the_window_holds(project: Path) -> None:
    release_history(project)
    with open_index() as idx:
        idx.refresh(project)
        # Yesterday's session never says "fix": the window finds it all the same.
        assert sessions_of(idx, "what did we fix yesterday?")[0] == "flaky"
        assert sessions_of(idx, "what did we do yesterday?") == ["flaky"]


def test_first_and_latest(project: Path) -> None:
    release_history(project)
    with open_index() as idx:
        idx.refresh(project)
        assert sessions_of(idx, "the first time we touched the release script")[0] == "rel-aug"
        assert sessions_of(idx, "the latest change to the release script")[0] == "rel-nov"
        assert sessions_of(idx, "most recent change to the docker image")[0] == "docker"


def test_before_and_since_an_event(project: Path) -> None:
    release_history(project)
    with open_index() as idx:
        idx.refresh(project)
        # The event ("the image was slimmed down") is dated by its own best match, 3 November.
        got = sessions_of(
            idx, "which docker problem did we have before the image was slimmed down?"
        )
        assert got[0] == "arm"
        got = sessions_of(idx, "what happened to the release script since the changelog step")
        assert got[0] == "rel-nov"


def test_an_event_nothing_matches_leaves_the_ranking_to_the_words(project: Path) -> None:
    release_history(project)
    with open_index() as idx:
        idx.refresh(project)
        plain = [h.entry.id for h in search(idx, "docker build", now=NOW)]
        odd = [h.entry.id for h in search(idx, "docker build since the zyzzyva", now=NOW)]
        assert odd == plain


def test_no_time_words_rank_exactly_as_without_time(project: Path) -> None:
    release_history(project)
    write_memory(
        paths.state_root() / "wiki", "rate.md", "The API rate limit is 100 requests a minute.",
        created="2026-11-13",
    )  # fmt: skip
    queries = [
        "what did we change in the release script",
        "docker build arm64",
        "rate limit",
        "how should I write this commit?",
        "login test flaky",
    ]
    with open_index() as idx:
        idx.refresh(project)
        for q in queries:
            with_time = [(h.entry.id, h.score) for h in search(idx, q, now=NOW)]
            without = [(h.entry.id, h.score) for h in search(idx, q, now=NOW, intent=False)]
            assert with_time == without, q


def test_now_defaults_to_today(project: Path) -> None:
    release_history(project)
    with open_index() as idx:
        idx.refresh(project)
        # The sandbox pins today to 2026-11-29 (a Sunday): "on Monday" is the 23rd, and
        # nothing happened then, so the words decide; with now=NOW it is the 16th.
        pinned = [h.entry.id for h in search(idx, "release script on Monday")]
        fixed = [h.entry.id for h in search(idx, "release script on Monday", now=NOW)]
        assert pinned != fixed


def test_cli_search_takes_now(project: Path) -> None:
    release_history(project)
    with open_index() as idx:
        idx.refresh(project)
        expected = search(idx, "the release script on Monday", now=NOW)[0].entry.id
    r = CliRunner().invoke(
        main, ["search", "--json", "--now", "2026-11-20", "the release script on Monday"]
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)[0]["id"] == expected
    bad = CliRunner().invoke(main, ["search", "--now", "20 Nov", "release"])
    assert bad.exit_code != 0


def test_deep_recall_reads_time_words(project: Path) -> None:
    release_history(project)
    with open_index() as idx:
        idx.refresh(project)
        layer = deep_recall(idx, "what did we change in the release script last week", budget=3000)
    # The sandbox's today is 2026-11-29: last week is the 16th to the 22nd.
    assert layer.picked and layer.picked[0].created == "2026-11-16"
