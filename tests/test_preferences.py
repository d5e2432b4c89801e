"""Preferences (issue 26): a question about the user's own likes and setup is answered from
what the user said about themselves, though it shares none of their words."""

from __future__ import annotations

import datetime as dt

import pytest
from helpers import write_memory

from memory_tool.base import paths
from memory_tool.store.index import open_index
from memory_tool.store.prefs import asks_preference, expansion
from memory_tool.store.search import search

NOW = dt.date(2026, 11, 20)


@pytest.mark.parametrize(
    "question",
    [
        "how should I write this commit?",
        "set up my terminal the way I like it",
        "configure my editor for this repo",
        "should I open one big PR for this refactor?",
        "what style of answers does the user want?",
        "how do I like things explained?",
        "can you recommend a test runner?",
    ],
)
def test_questions_about_the_users_likes(question: str) -> None:
    assert asks_preference(question)


@pytest.mark.parametrize(
    "question",
    [
        "fix the refresh token flow",
        "what did Melanie recommend to Caroline?",  # someone else's
        "What is Melanie's favorite book?",
        "how do we deploy to staging?",
        "why does the login test fail on CI",
    ],
)
def test_other_questions(question: str) -> None:
    assert not asks_preference(question)


def test_the_expansion_adds_cues_and_the_topics_words() -> None:
    more = expansion(["terminal"])
    assert {"prefer", "like", "use"} <= set(more)
    assert {"shell", "tmux", "fish", "zsh"} <= set(more)
    assert "terminal" not in more


def palace() -> None:
    folder = paths.state_root() / "identity"
    write_memory(
        folder, "shell.md", "I use fish and tmux, with a dark colour scheme.", type_="user"
    )
    write_memory(
        folder, "commits.md", "I like small commits with conventional messages.", type_="user"
    )
    wiki = paths.state_root() / "wiki"
    for i, text in enumerate(
        [
            "The terminal emulator on the CI runners is xterm; colours are off there.",
            "Write the commit hook in scripts/hooks/commit-msg.",
            "The release job sets up the terminal width to 120 columns.",
            "Deploys go through Argo CD.",
            "The login test waits 15 s for the redirect.",
            "Feature flags live in flags.yaml.",
        ]
    ):
        write_memory(wiki, f"w{i}.md", text)


def top(question: str, **kw: object) -> str:
    with open_index() as idx:
        idx.refresh()
        hits = search(idx, question, now=NOW, **kw)  # type: ignore[arg-type]
        return hits[0].entry.body.strip() if hits else ""


def test_a_setup_is_found_without_its_words() -> None:
    palace()
    assert top("set up my terminal the way I like it").startswith("I use fish and tmux")
    # Words alone find the memories that say "terminal".
    assert not top("set up my terminal the way I like it", intent=False).startswith("I use fish")


def test_a_habit_answers_how_should_i() -> None:
    palace()
    assert top("how should I write this commit?").startswith("I like small commits")
