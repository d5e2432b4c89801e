"""Duplicate and contradiction checks: near-identical memories in one folder or room (or among
the user's facts across projects), and similar ones that disagree.

CLI path only: rapidfuzz costs a hook 20-50 ms of import, so ``memory-tool doctor`` runs this and
the SessionStart line does not (and rapidfuzz is imported inside the check, not here).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..store.entry import Entry
from ..store.links import norm_name
from .report import PROBLEM, Finding, is_generated

# Near-duplicates: rapidfuzz token-sort ratio (0-100) at or above this. 90 keeps rewordings of the
# same sentence ("tests run with pytest -q" / "... -q.") and drops merely related facts.
DUPLICATE_MIN_SCORE = 90
# Contradiction candidates: this similar *and* disagreeing (a negation on one side only, or
# different numbers/quoted values). 70 pairs "always/never run migrations before deploy" (81).
CONTRADICTION_MIN_SCORE = 70
# Compare the first this-many characters of each memory: a fact's gist is at its start, and the
# scorer's cost grows with length.
COMPARE_CHARS = 600
# Candidate pairs share one of each memory's few rarest words (blocking): without it a 10,000-file
# tree needs 50M comparisons; near-duplicates share their rare words almost always.
RARE_KEYS_PER_ENTRY = 4
# A rare-word bucket bigger than this is not rare: skip it rather than compare it pairwise
# (150 members = 11K comparisons, a few ms in rapidfuzz's C loop).
MAX_BUCKET = 150
# Each memory appears in at most this many pairs (its closest): templated memories ("Sprint 12
# goals", "Sprint 13 goals"…) would otherwise list every pair among them.
MAX_MATCHES_PER_ENTRY = 2

_WORDS = re.compile(r"[a-z][a-z0-9_-]{2,}")
_TOKENS = re.compile(r"[a-z']+")
_NUMBERS = re.compile(r"(?<![\w.])\d+(?:[.:]\d+)*(?![\w])")
# A number that labels a memory ("Rule 10:", "step 3", "#12") is no value two memories can
# disagree on: numbered rules are not contradictions of each other.
_LABELS = re.compile(r"\b(?:rule|step|item|point|note|part|no\.?)\s*\d+\b|#\d+\b", re.IGNORECASE)
_QUOTED = re.compile(r"`([^`\n]{1,60})`")
_NEGATIONS = frozenset(
    ("not", "no", "never", "dont", "don't", "doesn't", "isn't", "aren't", "won't", "can't")
    + ("cannot", "shouldn't", "mustn't", "without", "avoid", "disable", "disabled", "false")
    + ("off", "deny", "forbidden", "nor")
)
_STOP = frozenset(
    ("the", "and", "for", "with", "that", "this", "from", "are", "was", "were", "have", "has")
    + ("not", "but", "you", "your", "use", "using", "when", "into", "than", "then", "them")
    + ("they", "its", "our", "can", "all", "any", "per", "via", "also", "only", "should", "must")
)


def _compare_text(e: Entry) -> str:
    text = f"{e.description} {e.body}" if e.description not in e.body else e.body
    return " ".join(text.lower().split())[:COMPARE_CHARS]


def _bucket(e: Entry) -> str:
    # Compare memories that can meet in one layer or room: the user's facts across projects
    # (L1 loads them together), otherwise one folder's worth.
    if e.type == "user":
        return "user"
    if e.source == "claude":
        return f"claude:{e.project}"
    if e.source == "room":
        return f"room:{e.room}"
    return f"{e.source}:{e.project}"


@dataclass
class _Text:
    """One memory's text as the comparison sees it, worked out once (not once per pair)."""

    words: set[str]  # for rare-word blocking and the "differ in" hint
    sorted_text: str  # tokens sorted: ratio() of these is token_sort_ratio, minus the re-sorting
    negation: str  # the first negation word, '' for none
    numbers: set[str]
    quoted: set[str]

    @classmethod
    def of(cls, text: str) -> _Text:
        neg = next((t for t in _TOKENS.findall(text) if t in _NEGATIONS or t.endswith("n't")), "")
        return cls(
            set(_WORDS.findall(text)) - _STOP,
            " ".join(sorted(text.split())),
            neg,
            set(_NUMBERS.findall(_LABELS.sub(" ", text))),
            set(_QUOTED.findall(text)),
        )


def _disagreement(a: _Text, b: _Text) -> str:
    if bool(a.negation) != bool(b.negation):
        return f"only one says {(a.negation or b.negation)!r}"
    for va, vb, what in ((a.numbers, b.numbers, "numbers"), (a.quoted, b.quoted, "quoted values")):
        if va - vb and vb - va:  # each says a value the other does not: 5432 vs 5433
            return f"different {what}: {', '.join(sorted(va - vb))} vs {', '.join(sorted(vb - va))}"
    return ""


def duplicate_findings(entries: Sequence[Entry]) -> list[Finding]:
    from rapidfuzz import fuzz, process

    # What the tool wrote itself (summaries of similar sessions) is no merge candidate; nor is
    # a retired memory (superseded or forgotten): it disagrees with its successor on purpose.
    pool = [
        e
        for e in entries
        if e.source not in ("context", "session")
        and not e.error
        and not is_generated(e)
        and not (e.superseded_by or e.forgotten)
    ]
    texts = [_Text.of(_compare_text(e)) for e in pool]
    df: Counter[tuple[str, str]] = Counter()
    for e, t in zip(pool, texts, strict=True):
        df.update((_bucket(e), w) for w in t.words)
    postings: dict[tuple[str, str], list[int]] = defaultdict(list)
    names: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, (e, t) in enumerate(zip(pool, texts, strict=True)):
        bucket = _bucket(e)
        for w in sorted(t.words, key=lambda w: (df[(bucket, w)], w))[:RARE_KEYS_PER_ENTRY]:
            postings[(bucket, w)].append(i)
        names[(bucket, norm_name(e.name))].append(i)
    scores: dict[tuple[int, int], float] = {}
    for members in postings.values():
        if not 1 < len(members) <= MAX_BUCKET:
            continue
        choices = [texts[m].sorted_text for m in members]
        for k, i in enumerate(members[:-1]):
            # C-level scan of the rest of the bucket; only pairs above the cut come back.
            for _, score, pos in process.extract(
                texts[i].sorted_text,
                choices[k + 1 :],
                scorer=fuzz.ratio,
                score_cutoff=CONTRADICTION_MIN_SCORE,
                limit=None,
            ):
                j = members[k + 1 + pos]
                scores[(min(i, j), max(i, j))] = score
    for members in names.values():  # same name in one folder: always worth a look
        for k, i in enumerate(members):
            for j in members[k + 1 :]:
                pair = (min(i, j), max(i, j))
                scores.setdefault(pair, fuzz.ratio(texts[i].sorted_text, texts[j].sorted_text))

    out = []
    shown: Counter[int] = Counter()
    for (i, j), score in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])):
        if shown[i] >= MAX_MATCHES_PER_ENTRY or shown[j] >= MAX_MATCHES_PER_ENTRY:
            continue
        a, b = pool[i], pool[j]
        if a.dedupe_key == b.dedupe_key and a.project != b.project and a.type == "user":
            continue  # the same fact saved in two projects: L1 already loads it once
        same_name = norm_name(a.name) == norm_name(b.name)
        why = _disagreement(texts[i], texts[j])
        data: dict[str, Any] = {"ids": [a.id, b.id], "paths": [a.path, b.path]}
        data["score"] = round(score)
        if why:
            check, msg = "contradiction", f"{a.id} and {b.id} disagree ({why})"
        elif score >= DUPLICATE_MIN_SCORE or same_name:
            check = "duplicate"
            reason = f"{round(score)}% alike" if score >= DUPLICATE_MIN_SCORE else "same name"
            only_a = sorted(texts[i].words - texts[j].words)[:4]
            only_b = sorted(texts[j].words - texts[i].words)[:4]
            diff = f"; differ in {' '.join(only_a) or '-'} / {' '.join(only_b) or '-'}"
            msg = f"{a.id} and {b.id}: {reason}{diff if (only_a or only_b) else ''}"
        else:
            continue
        shown[i] += 1
        shown[j] += 1
        out.append(Finding(check, PROBLEM, f"{msg}: merge candidates", a.id, a.path, data))
    return out


def duplicate_findings_for(entry: Entry, entries: Sequence[Entry]) -> list[Finding]:
    """The near-duplicates and contradictions ``entry`` is part of: the same comparison as
    ``duplicate_findings``, over the one group it is compared within (its folder or room, or the
    user's facts), so one memory's page does not compare every memory with every other."""
    bucket = _bucket(entry)
    found = duplicate_findings([e for e in entries if _bucket(e) == bucket])
    return [f for f in found if entry.id in f.data["ids"]]
