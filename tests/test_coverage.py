"""A search's coverage boost (``search.Coverage``) decides the order of what is recalled: the
share it gives an entry must stay what it was. The reference below is the first implementation
(every run of the text, as sets), kept as the oracle."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_tool.store.search import COVERAGE_PREFIX, Coverage, query_terms

_RUN = re.compile(r"[a-z0-9]+")


def reference(cover: Coverage, text: str) -> float:
    if not cover.n:
        return 0.0
    text = text.lower()
    runs = _RUN.findall(text)
    whole = set(runs)
    starts = {w[:COVERAGE_PREFIX] for w in runs if len(w) >= COVERAGE_PREFIX}
    found = sum(p in starts for p in cover.prefixes) + sum(w in whole for w in cover.words)
    found += sum(1 for p in cover.patterns if p.search(text))
    return found / cover.n


QUERIES = [
    "fix the login bug, refresh tokens expire early",
    "why does the db_url env var break CI on arm64?",
    "use k8s or ecs for the api v2 rollout",
    "aaaaa aaa naïve straße",
]
TEXTS = [
    "Refresh tokens are rotated on each login; expiry is 15 min (tokens_v2).",
    "refreshing refresh-token REFRESH xrefresh loginbug log in",
    "aaaaaaaaaaaaaaaaaaaaaaaa aaa aaaaab",
    "db_url comes from the env; arm64 runners need CI=1 and k8s 1.29",
    "",
    "İstanbul K ﬁx naïve straße api2 v2api api",
]
WORDS = st.sampled_from(
    ["login", "log", "refresh", "refreshes", "tok", "tokens", "aaaaa", "aaa", "ci", "k8s", "v2",
     "db_url", "api", "x", "İ", "K", "ß", "ﬁ", "é", "-", "_", ".", " ", "\n", "0", "9z"]
)  # fmt: skip


def test_shares_are_those_of_the_reference() -> None:
    for query in QUERIES:
        cover = Coverage(query_terms(query))
        for text in TEXTS + QUERIES:
            assert cover._share(text) == reference(cover, text), (query, text)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(WORDS, min_size=1, max_size=8).map(" ".join),
    st.lists(WORDS | st.text(max_size=8), max_size=40).map("".join),
)
def test_any_text_gets_the_reference_share(query: str, text: str) -> None:
    cover = Coverage(query_terms(query))
    assert cover._share(text) == reference(cover, text)
