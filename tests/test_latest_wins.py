"""Latest wins (issue 26): of several memories on one subject the most recent valid one ranks
first; a superseded or ended one is still found, as history, below it, labelled with its
dates. Real memory files, a real index, the one ranking (store.search) and the CLI."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from click.testing import CliRunner
from helpers import write_memory

from memory_tool.base import paths
from memory_tool.cli.main import main
from memory_tool.recall.depth import hit_line
from memory_tool.store.index import open_index
from memory_tool.store.search import search

NOW = dt.date(2026, 11, 20)


def wiki() -> Path:
    return paths.state_root() / "wiki"


def deploy_history() -> None:
    write_memory(
        wiki(), "deploy-old.md",
        "Deploys go through GitHub Actions to Fly.io; staging deploys on every merge to main.",
        id="deploy-old", created="2026-08-20", valid_to="2026-10-28", superseded_by="deploy-new",
    )  # fmt: skip
    write_memory(
        wiki(), "deploy-new.md",
        "Releases reach the cluster through Argo CD; it syncs on every merge.",
        id="deploy-new", created="2026-10-28", supersedes="deploy-old",
    )  # fmt: skip


FILLER = [
    "The billing service retries failed charges three times.",
    "Use ruff for linting and formatting Python code.",
    "The frontend is built with Vite and React.",
    "Database backups run nightly at 02:00 UTC.",
    "Feature flags live in flags.yaml.",
    "Error tracking is Sentry; the DSN is in an environment variable.",
    "The search page caches results in Redis for five minutes.",
    "Integration tests need Docker running locally.",
]


def filler() -> None:
    """Unrelated memories, so that BM25's word weights mean what they mean in a real palace
    (in a palace of two memories, a word both hold weighs nothing)."""
    for i, text in enumerate(FILLER):
        write_memory(wiki(), f"filler-{i}.md", text, created="2026-09-01")


def ids(query: str, **kw: object) -> list[str]:
    with open_index() as idx:
        idx.refresh()
        return [h.entry.id for h in search(idx, query, now=NOW, **kw)]  # type: ignore[arg-type]


def test_what_replaced_a_memory_ranks_above_it_even_in_the_old_words() -> None:
    deploy_history()
    filler()
    # "staging", "Fly.io", "GitHub Actions": only the old memory has these words...
    got = ids("how do we deploy to staging on Fly.io?")
    # ...and the memory that replaced it answers first; the old one follows, as history.
    assert got[:2] == ["deploy-new", "deploy-old"]
    # Without reading the question's intent (what room recall does), words alone decide.
    assert ids("how do we deploy to staging on Fly.io?", intent=False)[0] == "deploy-old"


def test_history_is_labelled_with_its_dates() -> None:
    deploy_history()
    with open_index() as idx:
        idx.refresh()
        hits = {h.entry.id: h for h in search(idx, "deploy staging", now=NOW)}
    assert "history: superseded 2026-10-28 by deploy-new" in hit_line(hits["deploy-old"])
    assert "history" not in hit_line(hits["deploy-new"])
    r = CliRunner().invoke(main, ["search", "--json", "--now", "2026-11-20", "deploy staging"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert [row["id"] for row in rows[:2]] == ["deploy-new", "deploy-old"]
    assert rows[1]["history"].startswith("history: superseded 2026-10-28")


def test_a_memory_past_its_valid_to_ranks_below_a_live_one() -> None:
    write_memory(
        wiki(), "staging-heroku.md", "Staging runs on Heroku, in the staging-eu app of the team.",
        id="staging-heroku", created="2025-12-01", valid_to="2026-06-30",
    )  # fmt: skip
    write_memory(
        wiki(), "staging-fly.md", "Staging runs on Fly.io.",
        id="staging-fly", created="2026-07-01",
    )  # fmt: skip
    filler()
    question = "where does staging run? the staging app of the team"
    assert ids(question, intent=False)[0] == "staging-heroku"  # more of its words
    assert ids(question)[:2] == ["staging-fly", "staging-heroku"]


def test_of_two_live_memories_on_one_subject_the_newer_goes_first() -> None:
    write_memory(
        wiki(), "limit-a.md",
        "The rate limit for the public API is 60 requests per minute per IP address.",
        id="limit-a", created="2026-08-15",
    )  # fmt: skip
    write_memory(
        wiki(), "limit-b.md", "The rate limit for the public API is 100 requests per minute.",
        id="limit-b", created="2026-11-13",
    )  # fmt: skip
    write_memory(
        wiki(), "api-docs.md",
        "The public API docs are generated from the OpenAPI file per minute of build time.",
        id="api-docs", created="2026-11-19",
    )  # fmt: skip
    filler()
    question = "the rate limit of the public API per IP address"
    assert ids(question, intent=False).index("limit-a") == 0  # words alone: the older
    got = ids(question)
    assert got.index("limit-b") < got.index("limit-a")
    # A newer memory on another subject does not jump ahead.
    assert got.index("limit-a") < got.index("api-docs")
