"""Brief lines are counted one by one and the sums must equal the count of the emitted text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_tool.base import tokens

line_text = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
    ),
    min_size=0,
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(line_text, min_size=1, max_size=8))
def test_lines_starting_with_dash_add_up_exactly(bodies: list[str]) -> None:
    lines = [f"- {b.strip()}\n" for b in bodies]
    assert tokens.count("".join(lines)) == sum(tokens.count(line) for line in lines)


def test_truncate_respects_the_limit() -> None:
    text = "word " * 500
    cut = tokens.truncate(text, 50)
    assert tokens.count(cut) <= 50
    assert cut.endswith("…")
    assert tokens.truncate("short", 50) == "short"


def test_exact_encoding_is_available_offline() -> None:
    assert tokens.method() == tokens.EXACT
    assert tokens.count("hello world") == 2
