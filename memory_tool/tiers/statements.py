"""Standing statements no capture shape knows: a small linear model over a sentence's words.

The capture shapes in ``signals`` (never/always/don't, "no, use X", a changed fact, who the
person is) were tuned on the scenarios each held-out week was read for, and every new week
brought shapes nobody had listed: over eight held-out weeks the shapes of the code before they
were read took 38 of 99 facts the person said. A logistic regression over a sentence's words
and word pairs, trained on those read weeks and the phrasing set (``bench/statements_train.py``;
docs/tiers.md says on what, and how it was measured), takes what the shapes miss: "money is
integer pence everywhere", "marketing moved the newsletter off mailchimp, it's brevo now".

What it finds is a ``statement`` signal: a live memory of the project in ``capture.mode: auto``,
one sentence, cleaned as any other, never one that retires an older memory (a guess must not
take a fact away). ``capture.statements: false`` turns it off. No model call, no numpy: the
weights are a JSON table read once per process, off the prompt path (the Stop hook and the
Scribe scan what was said).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .said import Signal

MODEL_PATH = Path(__file__).resolve().parent / "statements.json"
# A sentence is taken when the model gives it at least this probability. Trained on the weeks
# up to blind18 and run on blind19-26 (held out from it; `bench/statements_train.py --eval`),
# 0.8 took 43 of the 96 facts stated in them (a sentence that holds the fact's words), 4 of
# their 492 other sentences and 4 of the 55 that only mention a fact, and 16 of 2,184 sentences
# of held-out task prompts (some of them rules: "use pathlib instead of os.path"); 0.7 took 47,
# 5 and 24; 0.9 took 25, 2 and 9. A wrong rule in the brief costs every session of the project,
# a missed one only the prompts that needed it: the stricter side.
STATEMENT_MIN_PROB = 0.8
# A statement is a sentence with a verb and an object; fewer words are a reply ("ok use that").
MIN_WORDS = 4
# The model's words: lower case, an apostrophe kept inside one ("don't").
_WORD = re.compile(r"[a-z0-9_']+")
# What a stored fact must not carry: the redaction's marks (a sentence that held a secret is
# about the secret) and a question, also one the sentence cutter left inside ("Should it be a
# jsonb column or a table? ~40 keys, …").
_REDACTED = "[REDACTED"
# A hedge, a hypothetical or what did not happen is no decision ("we could switch to polars for
# the event loads").
_HEDGE = re.compile(
    r"\b(?:(?:we|you|i)\s+(?:could|might|may)|maybe|perhaps|probably|what\s+if|if\s+we"
    r"|i\s+(?:think|guess|wonder|suppose)"
    # "the bucket has not moved to eu-central-1": what did not happen
    r"|(?:has|have|had|did)(?:n't|\s+not)|won't|will\s+not)\b",
    re.IGNORECASE,
)
# A sentence that opens on a pronoun leans on the one before it ("That's a condition of my
# ethics approval.", "They've opened the 4 escalation beds."), one that opens on "not"
# refuses what the sentence before said (the correction's shapes take both together), one that
# opens on "again" says what was said before in other words, one that opens on "I" is about
# the person now ("I can't get the assume-role working from my machine right now so …").
_LEANS_ON = frozenset(
    "that that's thats they they've they're theyre this these those he she not again"
    " i i'm im i've ive i'd i'll will gonna".split()
)
# A report of what broke is no statement ("The plan workflow is red on every PR since
# yesterday: 'Error: …'", "CI cache never hits, every run reinstalls all gems", "we can never
# reproduce it locally").
_BROKE = re.compile(
    r"\b(?:error|exception|traceback|fail(?:s|ed|ing)?|crash\w*|broken|stuck|complains?"
    r"|since\s+yesterday|never\s+(?:hits|restores|works|loads|finishes|returns)"
    r"|(?:we|i)\s+(?:can|could)\s*(?:never|not|n't)|(?:we|i)\s+can'?t)\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"\?(?:\s|$)")
# A request about now said beside it: the sentence is today's task ("password reset tokens never
# expire in our app, fix that so …", "run ruff and black on every PR, can we just reuse …", "let
# me check with the platform team before we apply any of this"), found over tests/data.
_ASKS_NOW = re.compile(
    r"\b(?:fix\s+(?:that|it|this)|tell\s+me|let\s+me|show\s+me|(?:can|could|would)\s+(?:we|you|i)"
    r"|how\s+(?:do|to|can|should|come)|what\s+(?:do|does|should|is|are|am|did)|why\s+(?:is|does|do)"
    r"|any\s+idea|(?:like|as)\s+(?:you|u)\s+said|this\s+time|for\s+now)\b",
    re.IGNORECASE,
)


def features(sentence: str) -> set[str]:
    """The sentence's features, the same for training and for scoring: words, word pairs, the
    first word and pair, a length bucket, a question mark."""
    text = sentence.replace("\u2019", "'").lower()
    words = _WORD.findall(text)
    out = {f"u:{w}" for w in words}
    out |= {f"b:{a}_{b}" for a, b in zip(words, words[1:], strict=False)}
    if words:
        out.add(f"^{words[0]}")
    if len(words) > 1:
        out.add(f"^{words[0]}_{words[1]}")
    out.add(f"len:{min(len(words) // 5, 8)}")
    if text.rstrip().endswith("?"):
        out.add("q")
    return out


@cache
def _model() -> tuple[dict[str, float], float]:
    try:
        data = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
        return {str(k): float(v) for k, v in data["weights"].items()}, float(data["bias"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}, -math.inf  # no model shipped or a broken file: nothing is a statement


def probability(sentence: str) -> float:
    """How likely ``sentence`` states something for good (a rule, a fact of the project's
    setup, a correction), by the shipped model."""
    weights, bias = _model()
    if bias == -math.inf:
        return 0.0
    z = bias + sum(weights.get(f, 0.0) for f in features(sentence))
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _covered(sentence: str, found: list[Signal]) -> bool:
    """Whether a capture shape took this sentence already: half the words of the shorter of
    the two are in the other ("switch the sqlite db to WAL mode" beside the change "The sqlite
    db switched to WAL mode; make sure …")."""
    have = set(_WORD.findall(sentence.lower()))
    for sig in found:
        words = set(_WORD.findall(sig.text.lower()))
        if words and len(words & have) >= max(2, (min(len(words), len(have)) + 1) // 2):
            return True
    return False


def plain(said: str) -> bool:
    """Whether ``said`` (lead-ins stripped) may be kept as said for good at all: long enough, no
    question, request about now, hedge or report of what broke, no secret, not leaning on the
    sentence before, and not the person's own plan ("will check with legal anyway")."""
    words = said.split()
    return not (
        len(words) < MIN_WORDS
        or words[0].lower().rstrip(",").replace("\u2019", "'") in _LEANS_ON
        or _QUESTION.search(said) is not None
        or _ASKS_NOW.search(said) is not None
        or _HEDGE.search(said) is not None
        or _BROKE.search(said) is not None
        or _REDACTED in said
    )


def parts(text: str) -> Iterator[tuple[str, str]]:
    """(line, clause) for each clause of ``text`` (prose), its lead-ins stripped: what the
    model scores, and what it was trained on (``bench/statements_train.py`` cuts text here)."""
    from .said import clauses, sentences, strip_lead_in

    for raw_line in text.splitlines():
        line = " ".join(raw_line.split())
        for sentence in sentences(line) if line else ():
            for part in clauses(sentence):
                yield line, strip_lead_in(part)[0]


def statement_signals(text: str, found: list[Signal]) -> list[Signal]:
    """The sentences of ``text`` (prose, sanitised already) the model takes for standing
    statements, but for those a shape in ``found`` took: one ``statement`` signal each."""
    from .said import Signal, tidy

    out: list[Signal] = []
    for line, said in parts(text):
        if not plain(said) or _covered(said, found + out) or probability(said) < STATEMENT_MIN_PROB:
            continue
        fact = tidy(said)
        if fact:
            out.append(Signal("statement", fact, line))
    return out
