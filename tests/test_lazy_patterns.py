"""LazyPattern's hints rule texts out before its regex compiles: a hint list that misses an
alternative of its regex would silently turn a rule off. These tests hold every hinted pattern
of the hook path to its regex over every prompt in tests/data and the phrasings the rules are
written for."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memory_tool.base.privacy import LazyPattern
from memory_tool.recall import deep, followup
from memory_tool.store import words

DATA = Path(__file__).parent / "data"

HINTED = {
    "followup.FOLLOW_RE": followup.FOLLOW_RE,
    "followup.CLOSING_RE": followup.CLOSING_RE,
    "followup.SWITCH_RE": followup.SWITCH_RE,
    "followup.SAME_TASK_RE": followup.SAME_TASK_RE,
    "followup.REPORT_OPENING_RE": followup.REPORT_OPENING_RE,
    "followup.NEXT_TASK_RE": followup.NEXT_TASK_RE,
    "followup.STILL_RE": followup.STILL_RE,
    "deep.PAST_RE": deep.PAST_RE,
    **{f"words special token {i}": p for i, (p, _) in enumerate(words._SPECIAL_TOKENS)},
}

# Texts each rule is meant to catch, so that every pattern is checked on matches, not only on
# the (mostly non-matching) prompts of the data sets.
PHRASINGS = [
    "now do the same for the refund cases",
    "what about the admin page?",
    "the admin page too",
    "and for staging",
    "ok then the rest of them",
    "still failing",
    "perfect, thanks!",
    "that fixed it \U0001f44d",
    "green now, lgtm",
    "btw unrelated: the logo is blurry",
    "quick q, how do I undo a rebase",
    "have we done this before?",
    "what did we decide about retries",
    "remember when the cache broke",
    "last time it was the proxy",
    "the orm is doing N+1 queries",
    "O(n log n) is fine here",
    "it should return 201 not 200",
    "upgrade pytest from 6 to 8",
    "bump react to 18.3",
    "ok did that, still null in the route handler",
    "javax -> jakarta is done. now hibernate complains",
    "nice the queue thing works. what if the refresh fails",
    "lol it was brew's postgres. anyway, what is a monad",
    "cargo tree -i, nice trick. removed it",
    "it was a plain pipeline job, switched it. ok",
    "sqlite with WAL it is, good enough for now",
    "good comment. ship it",
    "moved it into ngAfterViewInit... ugly but works. thanks anyway",
]


def corpus() -> list[str]:
    texts = list(PHRASINGS)
    for path in sorted(DATA.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts += [row[k] for k in ("prompt", "first", "second") if isinstance(row.get(k), str)]
    return texts


@pytest.mark.parametrize("name", sorted(HINTED))
def test_hints_never_rule_out_a_match(name: str) -> None:
    pattern = HINTED[name]
    assert pattern.hints, name
    matched = 0
    for text in corpus():
        if pattern.compiled.search(text):
            matched += 1
            assert pattern.may_match(text.lower()), (name, text)
    assert matched > 0, f"{name} matched nothing: the check above checked nothing"


def test_a_text_without_hints_is_ruled_out_without_compiling() -> None:
    pattern = LazyPattern(r"\bfoo(bar)?\b", re.IGNORECASE, hints=("foo",))
    assert not pattern.found("nothing here")
    assert pattern._compiled is None
    assert pattern.found("a FooBar here")
    assert not pattern.found("food")  # a hint is a necessary condition, not a sufficient one
    assert LazyPattern(r"x").found("x")  # no hints: the regex decides alone
