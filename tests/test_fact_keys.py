"""A fact's key is stored in the session's record (``recall.seen``): the keys must stay what
they were, or a fact given before an upgrade is given again after it. The reference below is
the first implementation, kept as the oracle."""

from __future__ import annotations

import re
import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_tool.base import paths
from memory_tool.recall.seen import fact_keys

_IDS = re.compile(r"\[[a-z]-[0-9a-f]{6,12}\]")
_LEAD = re.compile(
    r"^(?:[-*>#\s]+|(?:user|decision|blocker|recent action|current task|task|result)\s*:\s*)+",
    re.I,
)
_SPLIT = re.compile(r"(?<=[.!?;])\s+")
_NON_WORD = re.compile(r"[^a-z0-9]+")


def reference(text: str) -> set[str]:
    keys = set()
    for line in text.splitlines():
        body = _LEAD.sub("", _IDS.sub(" ", line).strip())
        for sentence in _SPLIT.split(body):
            words = _NON_WORD.sub(" ", sentence.lower()).split()
            if len(words) >= 3:
                keys.add(f"fact:{zlib.crc32(' '.join(words).encode()):08x}")
    return keys


LINES = [
    "- [p-3fa9c1] Decision: use bigserial ids. Then migrate! Done? ok; fine",
    "## Current task: fix the login bug, refresh tokens expire early",
    "> * task: result : run the migration tests after changing these",
    "User: I prefer terse answers.",
    "İstanbul ÇAĞ straße ﬁle naïve — the K (kelvin) sign and x² stay apart",
    "[not-an-id] [p-12] text with [brackets] around a few words",
    "   ",
    "",
    "a.b.c d e f. g h i",
    "Files changed: src/auth/tokens.py, src/auth/login.py",
]
PIECES = st.sampled_from(
    ["- ", "* ", "> ", "# ", "user:", "Decision :", "task:", "[p-3fa9c1]", "[x-1]", ". ", "! ",
     "? ", "; ", "\n", "\r\n", " ", "\t", "word", "Token", "İ", "ß", "é", "2nd", "x_y", "a-b"]
)  # fmt: skip


def test_keys_are_those_of_the_reference() -> None:
    text = "\n".join(LINES)
    assert fact_keys(text) == reference(text)
    for line in LINES:
        assert fact_keys(line) == reference(line)


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES | st.text(max_size=12), max_size=30).map("".join))
def test_any_text_gives_the_reference_keys(text: str) -> None:
    assert fact_keys(text) == reference(text)


def test_within_a_hook_call_the_keys_are_the_same() -> None:
    # A prompt asks for the keys of the same lines twice within its call: read once, the same.
    text = "\n".join(LINES)
    with paths.one_call():
        first = fact_keys(text)
        again = fact_keys(text + "\nAnother line with enough words.")
        assert first == reference(text)
        assert again == reference(text + "\nAnother line with enough words.")
    assert fact_keys(text) == first
