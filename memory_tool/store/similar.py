"""Near-duplicates: two memories of which one says nothing the other does not.

One memory nearly repeats another when its words, in order, are all inside the other's (case,
punctuation and markup aside): "Run the tests with -x before pushing." inside the same sentence
plus its Why and How; or when the other is the same text with a few words put in ("Never push to
main, because a push there deploys." against "Never push to main; a push there deploys."), none
of which could change what it says (a negation, a restriction, a number). The brief keeps the
richer of two such memories and ``add`` refuses the second unless forced. Cheap enough for the
SessionStart path: a regex over each candidate's first characters, substring and set tests, no
rapidfuzz (the doctor's fuzzy comparison finds other rewordings).
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

# A rewording may put in at most this share of the shorter text's words (at least one): "because",
# "always", "the". More than a quarter new words is a new statement, not the same one reworded.
INSERTED_MAX_SHARE = 0.25
# Words whose insertion can turn a memory into its opposite or narrow it ("do not use", "only
# on Fridays", "doesn't": "doesn" + "t"): a text with one of them put in is a different memory,
# and showing both lets the reader see the contradiction. Inserted numbers count the same way.
CHANGES_MEANING = frozenset(
    "not no never nor t cannot without except unless only neither none nothing instead".split()
)

# How many words either side of a contained text are checked for CHANGES_MEANING: "do not", "only
# for", "except when" sit right next to what they change.
NEIGHBOURS = 2

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
    least NEAR_MIN_WORDS of them found in order inside it, or ``longer`` is ``shorter`` with a
    few harmless words put in."""
    if not shorter or not longer:
        return False
    if shorter == longer:
        return True
    if word_count(shorter) < NEAR_MIN_WORDS:
        return False
    return _inside(shorter, longer) or _reworded(shorter.split(), longer.split(), None, None)


def _inside(shorter: str, longer: str) -> bool:
    """Whether ``shorter`` is inside ``longer`` without a CHANGES_MEANING word just before or
    after it ("do not" + the rule is its opposite; the rule + "only on Fridays" narrows it)."""
    at = longer.find(shorter)
    if at < 0:
        return False
    before = longer[:at].split()[-NEIGHBOURS:]
    after = longer[at + len(shorter) :].split()[:NEIGHBOURS]
    return not any(w in CHANGES_MEANING for w in (*before, *after))


def _reworded(
    short: list[str],
    long_: list[str],
    short_set: frozenset[str] | None,
    long_set: frozenset[str] | None,
) -> bool:
    """Whether ``long_`` is ``short`` with at most INSERTED_MAX_SHARE of its length in new
    words put in (order kept), none of them CHANGES_MEANING or a number. The sets, when the
    caller has them, save building them again for every pair."""
    extra = len(long_) - len(short)
    if extra <= 0 or extra > max(1, int(len(short) * INSERTED_MAX_SHARE)):
        return False
    # The cheap refusal of almost every pair.
    if not (short_set or frozenset(short)) <= (long_set or frozenset(long_)):
        return False
    inserted: list[str] = []
    i = 0
    for word in long_:  # greedy: finds ``short`` as a subsequence whenever it is one
        if i < len(short) and word == short[i]:
            i += 1
        else:
            inserted.append(word)
    if i < len(short):
        return False
    return not any(w in CHANGES_MEANING or any(c.isdigit() for c in w) for w in inserted)


def either_repeats(a: str, b: str) -> bool:
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return repeats(short, long_)


def richest(entries: Sequence[Entry]) -> list[Entry]:
    """``entries`` (best first) with each near-duplicate replaced by the richest memory that
    holds it (most words; the better ranked on a tie), placed where the better ranked of them
    stood; each memory appears once. Only the first NEAR_SCAN are compared."""
    head = list(entries[:NEAR_SCAN])
    gists = [gist_of(e) for e in head]
    words = [g.split() for g in gists]
    sets = [frozenset(w) for w in words]
    sizes = [len(w) for w in words]
    rep = list(range(len(head)))

    def holds(j: int, i: int) -> bool:  # repeats(), with the words split once per entry
        if gists[i] == gists[j]:
            return bool(gists[i])
        return sizes[i] >= NEAR_MIN_WORDS and (
            _inside(gists[i], gists[j]) or _reworded(words[i], words[j], sets[i], sets[j])
        )

    for i in range(len(head)):
        for j in range(len(head)):
            if i == j or sizes[j] < sizes[i] or (sizes[j] == sizes[i] and j > i):
                continue
            if holds(j, i) and (
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
