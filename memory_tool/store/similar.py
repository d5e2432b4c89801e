"""Near-duplicates: two memories of which one says nothing the other does not.

One memory nearly repeats another when its words, in order, are all inside the other's (case,
punctuation and markup aside): "Run the tests with -x before pushing." inside the same sentence
plus its Why and How. The brief keeps the richer of two such memories and ``add`` refuses the
second unless forced. Cheap enough for the SessionStart path: a regex over each candidate's first
characters and substring tests, no rapidfuzz (the doctor's fuzzy comparison finds rewordings).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .entry import Entry

# A text of fewer words than this repeats another only when it is the same text: "Tests run
# with pytest." sits inside many a longer memory about something else.
NEAR_MIN_WORDS = 5
# The words compared are those of a memory's first this-many characters: a fact's gist is at its
# start, and a pasted log must not make every brief scan kilobytes.
GIST_CHARS = 2_000
# The brief compares its best-ranked candidates only: 15 entries at most are loaded, so a pair
# further down never shows, and a few dozen candidates keep the pairwise test well under 1 ms.
NEAR_SCAN = 40

_WORD = re.compile(r"[^\W_]+")


def gist(text: str) -> str:
    """The text's words, lower-cased, each between spaces (" run the test suite with x ")."""
    words = _WORD.findall(text[:GIST_CHARS].lower())
    return f" {' '.join(words)} " if words else ""


def gist_of(entry: Entry) -> str:
    return gist(entry.body or entry.description or entry.name)


def word_count(g: str) -> int:
    return g.count(" ") - 1 if g else 0


def repeats(shorter: str, longer: str) -> bool:
    """Whether the gist ``shorter`` says nothing ``longer`` does not: the same words, or at
    least NEAR_MIN_WORDS of them found in order inside it."""
    if not shorter or not longer:
        return False
    if shorter == longer:
        return True
    return word_count(shorter) >= NEAR_MIN_WORDS and shorter in longer


def either_repeats(a: str, b: str) -> bool:
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return repeats(short, long_)


def richest(entries: Sequence[Entry]) -> list[Entry]:
    """``entries`` (best first) with each near-duplicate replaced by the richest memory that
    holds it (most words; the better ranked on a tie), placed where the better ranked of them
    stood; each memory appears once. Only the first NEAR_SCAN are compared."""
    head = list(entries[:NEAR_SCAN])
    gists = [gist_of(e) for e in head]
    sizes = [word_count(g) for g in gists]
    rep = list(range(len(head)))
    for i, g in enumerate(gists):
        for j, other in enumerate(gists):
            if i == j or sizes[j] < sizes[i] or (sizes[j] == sizes[i] and j > i):
                continue
            if repeats(g, other) and (
                sizes[j] > sizes[rep[i]] or (sizes[j] == sizes[rep[i]] and j < rep[i])
            ):
                rep[i] = j
    out: list[Entry] = []
    taken: set[int] = set()
    for i in range(len(head)):
        r = rep[i]
        while rep[r] != r:  # the holder may itself be held by a richer one
            r = rep[r]
        if r not in taken:
            taken.add(r)
            out.append(head[r])
    return out + list(entries[NEAR_SCAN:])
