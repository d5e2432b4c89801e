"""Words as the room classifier sees them: normalisation, light stemming, and the typo helpers.

A prompt or a memory becomes a list of stems: lower-cased, identifiers split (camelCase,
snake_case, paths), stop words kept apart so they are never scored or fuzzy-matched. Typo
tolerance is SymSpell-style: deletion variants of keywords, checked by a bounded edit distance.

On the UserPromptSubmit hook path (via classify.py): stdlib only, nothing heavy at import time.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..base.privacy import LazyPattern

# Typo tolerance by keyword length: short words have too many real-word neighbours ("model" ~
# "modal", "rules" ~ "roles"), so no fuzzy match under 6 letters; one edit up to 8 letters; two
# from 9 ("authentification", "deploymnets"). A transposition counts as one edit. Only keywords
# and aliases are typo-matched, never weak words (a typo of a hint is too little evidence).
FUZZY_MIN_LEN = 6
FUZZY_TWO_EDITS_LEN = 9
# Longer words are identifiers, hashes or base64, not typos of a keyword (the longest keywords,
# "modulenotfounderror", "imagepullbackoff", are under 20); their deletion sets grow as len^2.
FUZZY_MAX_LEN = 24
# --- normalisation -----------------------------------------------------------------------------

# Function words and conversational filler: never scored, not counted as content, never
# fuzzy-matched (so "thanks" cannot become a typo of anything).
# fmt: off
STOP_WORDS = frozenset({
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and",
    "any", "are", "aren", "as", "at", "be", "because", "been", "before", "being", "below",
    "between", "both", "but", "by", "can", "cannot", "could", "couldn", "did", "didn",
    "didnt", "do", "does", "doesn", "doesnt", "doing", "don", "dont", "down", "during",
    "each", "few", "for", "from", "further", "had", "hadn", "has", "hasn", "have", "haven",
    "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i",
    "if", "in", "into", "is", "isn", "isnt", "it", "its", "itself", "just", "let", "lets",
    "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on",
    "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same",
    "she", "should", "shouldn", "shouldnt", "so", "some", "such", "than", "that", "thats",
    "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this",
    "those", "through", "to", "too", "under", "until", "up", "very", "was", "wasn", "we",
    "were", "weren", "what", "whats", "when", "where", "which", "while", "who", "whom", "why",
    "will", "with", "won", "wont", "would", "wouldn", "you", "your", "yours", "yourself",
    "yourselves", "ll", "ve", "re", "ok", "okay", "yes", "yeah", "yep", "nope", "thanks",
    "thank", "thx", "ty", "hi", "hello", "hey", "please", "pls", "plz", "lol", "hmm", "rn",
    "tho", "btw", "imo", "idk", "maybe", "really", "actually", "basically", "like", "want",
    "wants", "need", "needs", "get", "gets", "got", "make", "makes", "made", "go", "going",
    "gone", "goes", "done", "use", "used", "using", "add", "adds", "added", "fix", "fixed",
    "fixing", "change", "changed", "changes", "try", "tried", "see", "look", "looks",
    "looking", "thing", "things", "stuff", "something", "anything", "everything", "nothing",
    "way", "ways", "new", "old", "good", "bad", "better", "best", "nice", "great", "right",
    "wrong", "sure", "still", "even", "instead", "one", "two", "three", "first", "last",
    "next", "previous", "today", "yesterday", "tomorrow", "always", "never", "code",
    "function", "functions", "file", "files", "line", "lines", "bug", "bugs", "error",
    "errors", "issue", "issues", "problem", "problems", "work", "works", "working", "worked",
    "help", "write", "wrote", "written", "show", "tell", "explain", "mean", "means",
    "getting", "making", "uses", "adding", "fixes", "changing", "tries", "trying", "seeing",
    "keep", "keeps", "kept", "put", "puts", "writing", "creating", "create", "created",
    "running", "editing", "edit", "edited", "updating", "starting", "calling", "handling",
    "setting", "implement", "implementing", "whenever"
})
# fmt: on

# Symbols and phrasings that carry meaning but vanish when tokenising on [A-Za-z0-9]: each is
# (pattern, marker replacement). A pattern compiles on first need and runs only when one of its
# hints is in the lower-cased text: compiling all of them up front cost the hook ~1 ms.
_SPECIAL_TOKENS: tuple[tuple[LazyPattern, str], ...] = (
    (LazyPattern(r"\bn\s*\+\s*1\b", re.IGNORECASE, hints=("+",)), " nplusone "),
    (LazyPattern(r"\bo\(\s*(?:n|log|1)", re.IGNORECASE, hints=("o(",)), " bigo ("),
    # A three-digit number right after a word that returns or names a response ("return 201",
    # "responds with a 404", "status 500", "HTTP 429") is an HTTP status code; a bare number
    # ("200 rows", "500 ms") is not, so only this context adds the marker word.
    (
        LazyPattern(
            r"\b((?:return|respond|repl(?:y|ie)|status|http|throw)[a-z]*(?:\s+code)?"
            r"\s+(?:with\s+)?(?:an?\s+)?[1-5][0-9][0-9])\b",
            re.IGNORECASE,
            hints=("return", "respond", "repl", "status", "http", "throw"),
        ),
        r"\1 httpstatus ",
    ),
    # Moving a named thing to a version number is a dependency change, whatever the thing is
    # ("upgrade pytest from 6 to 8", "bump react to 18.3", "pin numpy to 1.26"): the marker
    # word is a dependencies keyword.
    (
        LazyPattern(
            r"\b((?:upgrade|bump|downgrade|pin)[a-z]*\s+[\w.@/-]+\s+"
            r"(?:from\s+v?\d[\w.-]*\s+)?to\s+v?\d[\w.-]*)",
            re.IGNORECASE,
            hints=("upgrade", "bump", "downgrade", "pin"),
        ),
        r"\1 versionbump ",
    ),
)
_COMPOUND_RE = re.compile(r"[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
TRAILING_DIGITS_RE = re.compile(r"^([a-z]{3,})[0-9]+$")
_VOWELS = frozenset("aeiouy")
_NO_UNDOUBLE = frozenset("lsz")  # "install", "access", "fizz" keep their double letter
# Words whose stem would merge two meanings: "staging" (an environment) is not a "stage".
_STEM_KEEP = frozenset({"staging"})


def _undouble(word: str) -> str:
    if len(word) >= 3 and word[-1] == word[-2] and word[-1] not in _VOWELS | _NO_UNDOUBLE:
        return word[:-1]
    return word


def _has_vowel(word: str) -> bool:
    return any(c in _VOWELS for c in word)


def stem(word: str) -> str:
    """Light, deterministic suffix stripper (a tiny Porter subset), applied to lowercase words.

    Words of 3 letters or fewer, or with digits (k8s, oauth2, p99), are kept as they are.
    1. Plural: -sses -> -ss, -ies -> -i, else a final -s is dropped unless the word ends in
       -ss, -us or -is (class, status, redis).
    2. At most one suffix: -ization -> -iz (optimization ~ optimize); -ation -> -at
       (migration ~ migrate, authentication ~ authenticate); -ment when at least 6 letters
       remain (deployment ~ deploy); -ing / -ed when the rest has a vowel (string, speed and
       need stay), undoubling a final double consonant except l, s, z (logging -> log).
    3. A final -e is dropped (cache ~ caching); a final consonant+y becomes -i (query ~ queries).
    A few words are kept whole (_STEM_KEEP). Both sides (keywords at compile time, prompt words
    at classify time) go through the same function, so it only has to be consistent, not
    linguistically right.
    """
    w = word
    if len(w) <= 3 or not w.isalpha() or w in _STEM_KEEP:
        return w
    if w.endswith("sses") or (w.endswith("ies") and len(w) > 4):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ization") and len(w) > 9:
        w = w[:-5]
    elif w.endswith("ation") and len(w) >= 8:
        w = w[:-3]
    elif w.endswith("ment") and len(w) >= 10:
        w = w[:-4]
    elif w.endswith("ing") and len(w) >= 6 and _has_vowel(w[:-3]):
        w = _undouble(w[:-3])
    elif w.endswith("ed") and not w.endswith("eed") and len(w) >= 5 and _has_vowel(w[:-2]):
        w = _undouble(w[:-2])
    if len(w) >= 4:
        if w.endswith("e"):
            w = w[:-1]
        elif w.endswith("y") and w[-2] not in _VOWELS:
            w = w[:-1] + "i"
    return w


# Kinds of word in Tokens.ident.
WORD = 0
IDENT_MODIFIER = 1
IDENT_HEAD = 2


class Tokens(NamedTuple):
    """A text split into lowercase words.

    ``words`` keeps order (phrases match on it); ``extras`` holds joined forms of identifiers
    (``useEffect`` -> ``useeffect``, ``pre-commit`` -> ``precommit``), looked up as single
    words only. ``ident`` says, per word, whether it was written as a word (WORD) or is a part
    of a code identifier (camelCase or snake_case; kebab-case is prose: "end-to-end"): its last
    part, the head noun naming the kind of thing (IDENT_HEAD: ``fetchUserProfile`` -> profile),
    or a part before it (IDENT_MODIFIER: fetch, user).
    """

    words: tuple[str, ...]
    extras: tuple[str, ...]
    ident: tuple[int, ...] = ()


def tokenize(text: str) -> Tokens:
    """Lowercase words of ``text``, splitting snake_case, kebab-case, camelCase and paths."""
    low = text.lower()
    for pattern, replacement in _SPECIAL_TOKENS:
        if pattern.may_match(low):
            text = pattern.sub(replacement, text)
    words: list[str] = []
    extras: list[str] = []
    ident: list[int] = []
    for match in _COMPOUND_RE.finditer(text):
        compound = match.group()
        parts: list[str] = []
        camel = False
        for piece in re.split(r"[-_]", compound):
            if not piece:
                continue
            split = _CAMEL_RE.sub(" ", piece).lower().split()
            camel = camel or len(split) > 1
            parts.extend(split)
        words.extend(parts)
        if len(parts) > 1 and (camel or "_" in compound):
            ident.extend([IDENT_MODIFIER] * (len(parts) - 1) + [IDENT_HEAD])
        else:
            ident.extend([WORD] * len(parts))
        if len(parts) > 1:
            joined = "".join(parts)
            if len(joined) <= 40:
                extras.append(joined)
    return Tokens(tuple(words), tuple(extras), tuple(ident))


def stems_of_phrase(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in tokenize(text).words)


# --- typo table ----------------------------------------------------------------------------------


def max_edits(word: str) -> int:
    if len(word) < FUZZY_MIN_LEN or len(word) > FUZZY_MAX_LEN:
        return 0
    return 2 if len(word) >= FUZZY_TWO_EDITS_LEN else 1


def deletes(word: str, depth: int) -> set[str]:
    """``word`` and every string made from it by deleting up to ``depth`` characters, never the
    first one (a fuzzy match must keep the first letter anyway)."""
    out = {word}
    frontier = {word}
    for _ in range(depth):
        nxt: set[str] = set()
        for w in frontier:
            for i in range(1, len(w)):
                nxt.add(w[:i] + w[i + 1 :])
        out |= nxt
        frontier = nxt
    return out


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (a transposition is one edit), or ``limit + 1`` as soon
    as it is known to exceed ``limit``. Pure Python, fine for the few short words it sees."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[len(b)]
