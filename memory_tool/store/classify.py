"""Rooms and the keyword intent classifier that picks the room(s) a prompt is about.

Two phases:

* ``compile_rooms`` (index time) turns the parsed rooms.yaml mapping into ``CompiledRooms``: a
  stemmed term table, a phrase table and a typo table (a SymSpell-style map from deletion
  variants of each keyword to the keyword). It is plain JSON (``to_json``/``from_json``) so the
  index can cache it and the hook never parses YAML.
* ``classify`` (hook time, every prompt) tokenises the prompt and scores rooms with dict
  look-ups only. Typos cost a handful of extra look-ups and a tiny edit-distance check.

This module is on the UserPromptSubmit hook path: stdlib only (no yaml, rapidfuzz, click,
tiktoken; not even dataclasses, whose import of inspect costs several ms), and it builds nothing
heavy at import time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ..base.errors import ConfigError
from .words import (
    FUZZY_MIN_LEN,
    IDENT_HEAD,
    IDENT_MODIFIER,
    STOP_WORDS,
    TRAILING_DIGITS_RE,
    WORD,
    deletes,
    edit_distance,
    max_edits,
    stem,
    stems_of_phrase,
    tokenize,
)

# --- scoring constants -------------------------------------------------------------------------

# A room is injected when its score reaches this. Scores are in "keyword units": one specific
# keyword (weight 1.0) in a prompt of up to LENGTH_PIVOT content words scores 1.0, a weak word
# 0.5, a phrase 1.5. 0.75 lets one specific keyword (or one typo'd keyword, 0.8-0.9) through on
# its own, keeps a lone weak word (0.5) or a lone word shared by two rooms (0.71) out, and needs
# about two keywords in a long pasted log. Tuned on the dev split of tests/data/prompts.jsonl
# (bench/classify_bench.py prints the sweep): top-1 is flat from 0.6 to 1.0 with no false
# injection; at 0.5 and below lone weak words inject (7% of no-room prompts), from 1.2 top-1
# falls to ~0.83. 0.75 sits inside the flat range, below a two-edit typo (0.8).
ROOM_THRESHOLD = 0.75

KEYWORD_WEIGHT = 1.0  # a word that on its own says which room (e.g. "alembic")
ALIAS_WEIGHT = 1.0  # abbreviations are as specific as the word they stand for ("k8s")
WEAK_WEIGHT = 0.5  # a hint ("table", "page"): needs a second clue to pass the threshold
PHRASE_WEIGHT = 1.5  # "foreign key" says more than "foreign" + "key"; its words are consumed
# rooms.yaml's `decisive` terms settle the room whatever else a prompt says: an exercise
# ("leetcode", "interview prep") is general programming though its subject (an LRU cache) is a
# performance word. 20 outweighs any sum of room words: the highest room score over the 3,000
# labelled prompts in tests/data is 5.5, 11 with CONCERN_RANK_FACTOR.
DECISIVE_WEIGHT = 20.0
INSTINCT_WEIGHT = 1.0  # trigger words of a mature instinct act as ordinary keywords

# A word seen only inside a code identifier is weaker evidence than the same word written as a
# word: "rename getData to fetchUserProfile" is about neither data nor profiling. The last part
# of an identifier is its head noun, the kind of thing it is (Profile, Context, Error, Store):
# generic, so it is held under ROOM_THRESHOLD on its own. The parts before it qualify the head
# with the domain ("useAuthContext", "test_checkout", "SessionStore") and still pass alone,
# a little under a written word so that they lose to a written keyword of another room.
# Whole identifiers that are keywords ("useEffect", "CrashLoopBackOff") keep full weight.
IDENT_MODIFIER_FACTOR = 0.9
IDENT_HEAD_FACTOR = 0.7
_PART_FACTOR = {IDENT_MODIFIER: IDENT_MODIFIER_FACTOR, IDENT_HEAD: IDENT_HEAD_FACTOR}

# A concern room (tests, docs, speed, security, CI, dependencies) named before the part of the
# system it is about ranks as if its score were this many times higher: the prompt leads with
# its task ("add snapshot tests for the Button component", "write an ADR for postgres over
# mongo", "document the env vars") and the part words that follow only say where. 2 lets one
# leading concern keyword outrank two part keywords; a prompt that leads with the part ("the
# orm is doing N+1 queries") or piles up part evidence (3+ keywords) keeps the part. Tuned on
# both labeled sets: 1.5 recovers half the cases; from 2.5 prompts start to be lost.
CONCERN_RANK_FACTOR = 2.0

# Prompts up to this many content words score at full strength; longer ones (pasted logs,
# long explanations) are scaled by sqrt(pivot / n) so a long prompt does not reach the threshold
# just by containing many words. 12 is about two sentences; most typed prompts are shorter.
LENGTH_PIVOT = 12

# At most this many distinct words per prompt get a typo look-up: a typo that matters is in the
# typed part, and a long paste of unknown words must not cost the hook tens of milliseconds.
MAX_FUZZY_LOOKUPS = 48
# A typo'd keyword counts a little less than an exact one (the match could be a real word).
FUZZY_FACTOR_ONE_EDIT = 0.9
FUZZY_FACTOR_TWO_EDITS = 0.8

# Only the first HEAD and last TAIL characters of a long prompt are read: the question is typed
# before or after a paste, and classifying a 200 KB paste whole costs ~250 ms (measured), far
# over the hook's budget. 4,000 characters is a page of text, ~5 ms at worst.
CLASSIFY_HEAD_CHARS = 3000
CLASSIFY_TAIL_CHARS = 1000

# classify_entry: a memory's name and description are short, deliberate summaries, so a keyword
# there says more than one in the body.
ENTRY_NAME_WEIGHT = 2.0
ENTRY_DESCRIPTION_WEIGHT = 1.5
ENTRY_BODY_WEIGHT = 1.0
# A memory is filed in a room when its score reaches this: one keyword in its name (2 x 1.0) or
# two in its body, but not one weak word in the name ("user_role" is about the user, not auth).
# Higher than ROOM_THRESHOLD because a misfiled memory is injected in every prompt of the wrong
# room, while an unfiled one is still found by search.
ENTRY_THRESHOLD = 1.5
# Claude Code names auto-memory files <type>_<topic>.md; the type word says nothing about the
# room ("user_role" is the user's job, not RBAC), so it is dropped from the name before scoring.
MEMORY_TYPE_PREFIXES = ("user", "feedback", "project", "reference")

# Instincts (learned trigger -> action patterns) are trusted once their confidence reaches this;
# below it they are still being learned and stay out of rooms and recall.
MATURE_CONFIDENCE = 0.7
# Shorter trigger words ("run", "api", "fix") are too common to fire a room on their own.
TRIGGER_WORD_MIN_LEN = 4

# Bump when the CompiledRooms JSON layout or the tokeniser/stemmer changes: a cached compile
# from another version is then rejected (from_json raises) and rebuilt.
# 2: rooms carry "concern" (the tie-break of _rank_key).
# 3: the tokeniser marks HTTP status codes ("return 201" -> httpstatus) and identifier parts.
# 4: real_words (rooms.yaml's not_typos).
# 5: the tokeniser marks version moves ("bump react to 18" -> versionbump).
# 6: rooms carry "inject" (background rooms).
# 7: false_friends (rooms.yaml's false_friends).
# 8: multi-word false friends ("rest of") are phrases that credit no room; `decisive` terms.
COMPILED_FORMAT = 8

# --- compiled rooms ---------------------------------------------------------------------------

# term stem -> [[room, weight], ...]
TermTable = dict[str, list[list[Any]]]
# deletion variant -> index into CompiledRooms.fuzzy (an int, or a list when several share it)
TypoTable = dict[str, Any]
# first stem -> [[[stem, ...], [[room, weight], ...]], ...], longest phrase first
PhraseTable = dict[str, list[list[Any]]]


class CompiledRooms:
    """Everything ``classify`` needs, as plain JSON-compatible data.

    ``fuzzy`` lists the typo-matchable keyword forms as ``[form, term]`` (``["deployment",
    "deploy"]``: the form as written, and its key in ``terms``). ``typos`` maps each one-deletion
    variant of a form (and the form itself) to its index in ``fuzzy``. Only depth one is stored
    (it keeps the cached JSON small enough to load in about a millisecond on every prompt); the
    prompt side deletes up to two letters of long words, which still catches two inserted
    letters ("authentification") and an insertion plus a substitution.
    """

    __slots__ = (
        "rooms",
        "terms",
        "phrases",
        "fuzzy",
        "typos",
        "real_words",
        "false_friends",
        "format",
    )

    def __init__(
        self,
        rooms: dict[str, dict[str, Any]],
        terms: TermTable,
        phrases: PhraseTable,
        fuzzy: list[list[str]],
        typos: TypoTable,
        real_words: Iterable[str] = (),
        false_friends: Iterable[str] = (),
        format: int = COMPILED_FORMAT,
    ) -> None:
        self.rooms = rooms
        self.terms = terms
        self.phrases = phrases
        self.fuzzy = fuzzy
        self.typos = typos
        # English words that are never read as typos of a keyword ("perfect" is not "prefect",
        # "resolve" not "resolver"): rooms.yaml's top-level `not_typos`.
        # English words that share a keyword's stem but not its meaning ("core" is not CORS,
        # "required" not requirements.txt, "pipe" not pip): rooms.yaml's `false_friends`. They
        # match nothing, neither by stem nor as a typo. (Multi-word ones, "rest of the code",
        # live in the phrase table with no room: they consume their words and credit nothing.)
        self.false_friends = frozenset(false_friends)
        self.real_words = frozenset(real_words) | self.false_friends
        self.format = format

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CompiledRooms):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable tables

    def __repr__(self) -> str:
        return f"CompiledRooms(rooms={sorted(self.rooms)}, terms={len(self.terms)})"

    @property
    def names(self) -> list[str]:
        return sorted(self.rooms)

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": self.format,
                "rooms": self.rooms,
                "terms": self.terms,
                "phrases": self.phrases,
                "fuzzy": self.fuzzy,
                "typos": self.typos,
                "real_words": sorted(self.real_words),
                "false_friends": sorted(self.false_friends),
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> CompiledRooms:
        """Load a cached compile. Raises ConfigError if it is not one or is from another
        format version (the caller then recompiles from rooms.yaml)."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigError(
                f"cached room table is not valid JSON ({exc}); run `memory-tool index` to rebuild"
            ) from exc
        if not isinstance(data, dict) or data.get("format") != COMPILED_FORMAT:
            raise ConfigError(
                "cached room table is from another memory-tool version; "
                "run `memory-tool index` to rebuild it"
            )
        try:
            return cls(
                rooms=data["rooms"],
                terms=data["terms"],
                phrases=data["phrases"],
                fuzzy=data["fuzzy"],
                typos=data["typos"],
                real_words=data["real_words"],
                false_friends=data["false_friends"],
            )
        except KeyError as exc:
            raise ConfigError(
                f"cached room table lacks {exc}; run `memory-tool index` to rebuild it"
            ) from exc


def _string_list(room: str, key: str, value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) for v in value):
        raise ConfigError(
            f"rooms.yaml: room {room!r}: {key!r} must be a list of words, e.g. {key}: [a, b]"
        )
    return [str(v) for v in value if str(v).strip()]


class _Builder:
    def __init__(self) -> None:
        # term stem -> room -> weight (max over the ways the room lists it)
        self.terms: dict[str, dict[str, float]] = {}
        self.phrases: dict[tuple[str, ...], dict[str, float]] = {}
        self.surface: dict[str, str] = {}  # typo-matchable form as written -> its term stem
        self.words: set[str] = set()  # every single word listed, as written (lower case)

    def add_word(self, room: str, word: str, weight: float) -> None:
        tokens = tokenize(word).words
        if len(tokens) > 1:  # "node_modules", "e-mail": a word in YAML that tokenises to several
            self.add_phrase(room, word, weight)
            joined = "".join(tokens)
            self._add_term(room, joined, joined, weight)
            return
        if tokens:
            self.words.add(tokens[0])
            self._add_term(room, tokens[0], stem(tokens[0]), weight)

    def _add_term(self, room: str, form: str, term: str, weight: float) -> None:
        rooms = self.terms.setdefault(term, {})
        rooms[room] = max(rooms.get(room, 0.0), weight)
        if weight > WEAK_WEIGHT and form.isalpha() and max_edits(form) > 0:
            self.surface.setdefault(form, term)

    def add_false_friend_phrase(self, phrase: str) -> None:
        """A phrase whose words mean nothing here ("rest of" is not REST): matched like any
        phrase, so its words are consumed, but it credits no room. A room listing the same
        phrase keeps it."""
        stems = stems_of_phrase(phrase)
        if len(stems) > 1:
            self.phrases.setdefault(stems, {})

    def add_phrase(self, room: str, phrase: str, weight: float) -> None:
        stems = stems_of_phrase(phrase)
        if len(stems) == 1:
            self.add_word(room, phrase, weight)
            return
        if stems:
            rooms = self.phrases.setdefault(stems, {})
            rooms[room] = max(rooms.get(room, 0.0), weight)

    def build(
        self,
        rooms_meta: dict[str, dict[str, Any]],
        real_words: Iterable[str] = (),
        false_friends: Iterable[str] = (),
    ) -> CompiledRooms:
        # A term listed by several rooms says less about any one of them: divide by sqrt(df).
        terms: TermTable = {}
        for term in sorted(self.terms):
            by_room = self.terms[term]
            damp = 1.0 / math.sqrt(len(by_room))
            terms[term] = [
                [room, round(w * damp * rooms_meta[room]["weight"], 4)]
                for room, w in sorted(by_room.items())
            ]
        phrases: PhraseTable = {}
        for stems in sorted(self.phrases, key=lambda s: (s[0], -len(s), s)):
            by_room = self.phrases[stems]
            damp = 1.0 / math.sqrt(len(by_room)) if by_room else 0.0
            phrases.setdefault(stems[0], []).append(
                [
                    list(stems),
                    [
                        [room, round(w * damp * rooms_meta[room]["weight"], 4)]
                        for room, w in sorted(by_room.items())
                    ],
                ]
            )
        # A plural whose singular is also listed adds nothing: the prompt side also tries the
        # word without its final "s".
        forms = sorted(f for f in self.surface if not (f.endswith("s") and f[:-1] in self.surface))
        fuzzy = [[form, self.surface[form]] for form in forms]
        variants: dict[str, list[int]] = {}
        for index, form in enumerate(forms):
            for variant in deletes(form, 1):
                variants.setdefault(variant, []).append(index)
        typos: TypoTable = {k: (v[0] if len(v) == 1 else v) for k, v in sorted(variants.items())}
        return CompiledRooms(
            rooms=rooms_meta,
            terms=terms,
            phrases=phrases,
            fuzzy=fuzzy,
            typos=typos,
            real_words=real_words,
            # A word a room lists is meant: "core" as a keyword of a core-platform room matches,
            # whatever false_friends says.
            false_friends=set(false_friends) - self.words,
        )


def _room_name_words(name: str) -> tuple[str, tuple[str, ...]]:
    """A room's own name is always one of its terms: "ci" a keyword, "data-pipeline" a phrase."""
    words = tokenize(name).words
    return (" ".join(words), words)


def compile_rooms(
    spec: Mapping[str, Any],
    extra_room_names: Iterable[str] = (),
    instincts: Iterable[Instinct] = (),
) -> CompiledRooms:
    """Compile the parsed rooms.yaml mapping (``{"rooms": {name: {...}}}``) for ``classify``.

    ``extra_room_names``: rooms that exist only as palace folders (``rooms/<name>/``); each is
    recognised by its name until rooms.yaml gives it keywords. ``instincts``: the mature ones
    (confidence >= MATURE_CONFIDENCE) add their trigger words to their domain room's keywords.
    Raises ConfigError when the mapping is malformed.
    """
    rooms_spec = spec.get("rooms") if isinstance(spec, Mapping) else None
    if not isinstance(rooms_spec, Mapping):
        raise ConfigError(
            "rooms.yaml must have a top-level `rooms:` mapping of room name to "
            "{keywords, phrases, aliases}; see memory_tool/templates/rooms.yaml for an example"
        )
    builder = _Builder()
    meta: dict[str, dict[str, Any]] = {}
    for raw_name, body in rooms_spec.items():
        name = str(raw_name).strip().lower()
        if not name or not tokenize(name).words:
            raise ConfigError(f"rooms.yaml: {raw_name!r} is not a usable room name")
        if body is None:
            body = {}
        if not isinstance(body, Mapping):
            raise ConfigError(
                f"rooms.yaml: room {name!r} must be a mapping with keywords/phrases/aliases"
            )
        weight = body.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight <= 0:
            raise ConfigError(f"rooms.yaml: room {name!r}: weight must be a positive number")
        description = body.get("description") or ""
        concern = body.get("concern", False)
        if not isinstance(concern, bool):
            raise ConfigError(f"rooms.yaml: room {name!r}: concern must be true or false")
        inject = body.get("inject", True)
        if not isinstance(inject, bool):
            raise ConfigError(f"rooms.yaml: room {name!r}: inject must be true or false")
        meta[name] = {
            "weight": float(weight),
            "description": str(description),
            "concern": concern,
            "inject": inject,
        }
        for word in _string_list(name, "keywords", body.get("keywords")):
            builder.add_word(name, word, KEYWORD_WEIGHT)
        for word in _string_list(name, "aliases", body.get("aliases")):
            builder.add_word(name, word, ALIAS_WEIGHT)
        for word in _string_list(name, "weak", body.get("weak")):
            builder.add_word(name, word, WEAK_WEIGHT)
        for phrase in _string_list(name, "phrases", body.get("phrases")):
            builder.add_phrase(name, phrase, PHRASE_WEIGHT)
        for term in _string_list(name, "decisive", body.get("decisive")):
            builder.add_phrase(name, term, DECISIVE_WEIGHT)  # a single word goes to add_word
    for raw_name in extra_room_names:
        name = str(raw_name).strip().lower()
        if name and name not in meta and tokenize(name).words:
            meta[name] = {"weight": 1.0, "description": "", "concern": False, "inject": True}
    for name in meta:
        phrase, words = _room_name_words(name)
        if len(words) == 1:
            builder.add_word(name, words[0], KEYWORD_WEIGHT)
        else:
            builder.add_phrase(name, phrase, PHRASE_WEIGHT)
            builder.add_word(name, "".join(words), KEYWORD_WEIGHT)
    real_words = [
        w.lower() for w in _string_list("(top level)", "not_typos", spec.get("not_typos"))
    ]
    # (a word is skipped by the typo look-up only; as a keyword it still matches exactly)
    false_friends = []
    for entry in _string_list("(top level)", "false_friends", spec.get("false_friends")):
        if len(tokenize(entry).words) > 1:
            builder.add_false_friend_phrase(entry)
        else:
            false_friends.append(entry.lower())
    # partial lets instinct domains ("db", "k8s") resolve via aliases
    partial = builder.build(meta, real_words, false_friends)
    added = False
    for instinct in mature_instincts(instincts):
        room = resolve_domain(instinct.domain, partial)
        if room is None:
            continue
        for word in trigger_words(instinct.trigger):
            builder.add_word(room, word, INSTINCT_WEIGHT)
            added = True
    return builder.build(meta, real_words, false_friends) if added else partial


# --- classification -----------------------------------------------------------------------------


class RoomMatch(NamedTuple):
    """One room's score for a text and the terms that produced it (for `explain` output)."""

    room: str
    score: float
    terms: tuple[str, ...]
    lead: bool = False  # a concern named before the part of the system it is about


def _fuzzy_term(word: str, rooms: CompiledRooms) -> tuple[str, float] | None:
    """The term ``word`` is a typo of, with its weight factor, or None."""
    if word in rooms.real_words:
        return None
    limit = max_edits(word)
    base = stem(word)
    if len(base) + 1 < len(word):
        # An inflected short word ("opened", "listed") is a real word, not a typo: allow only
        # the edits its stem's length allows ("opened" -> "open", none; "openid" stays apart).
        limit = min(limit, max_edits(base))
    if limit == 0:
        return None
    typos = rooms.typos
    fuzzy = rooms.fuzzy
    queries = [word]
    if word.endswith("s") and len(word) > FUZZY_MIN_LEN:
        queries.append(word[:-1])  # plural forms are not in the table (see _Builder.build)
    best: tuple[int, str, str] | None = None
    for query in queries:
        for variant in deletes(query, limit):
            hit = typos.get(variant)
            if hit is None:
                continue
            for index in hit if isinstance(hit, list) else (hit,):
                form, term = fuzzy[index]
                if form[0] != query[0]:  # typos rarely hit the first letter
                    continue
                allowed = min(limit, max_edits(form))
                dist = edit_distance(query, form, allowed)
                if dist <= allowed and (best is None or (dist, form) < best[:2]):
                    best = (dist, form, term)
    if best is None or best[0] == 0:
        return None
    factor = FUZZY_FACTOR_ONE_EDIT if best[0] == 1 else FUZZY_FACTOR_TWO_EDITS
    return best[2], factor


def _raw_scores(
    text: str, rooms: CompiledRooms
) -> tuple[dict[str, float], dict[str, list[str]], int, dict[str, int]]:
    """Per-room sums of matched term weights (each term once), matched terms, content length,
    and the word position of each room's first match."""
    text = _clip(text)
    tokens = tokenize(text)
    words = tokens.words
    stems = [stem(w) for w in words]
    consumed = [False] * len(words)
    scores: dict[str, float] = {}
    matched: dict[str, list[str]] = {}
    first: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()

    def credit(label: str, weights: Sequence[Sequence[Any]], at: int, factor: float = 1.0) -> None:
        for room, weight in weights:
            if at < first.get(room, at + 1):
                first[room] = at
            if (room, label) in seen:
                continue
            seen.add((room, label))
            scores[room] = scores.get(room, 0.0) + weight * factor
            matched.setdefault(room, []).append(label)

    phrases = rooms.phrases
    i = 0
    while i < len(stems):
        step = 1
        for phrase_stems, weights in phrases.get(stems[i], ()):  # longest first
            n = len(phrase_stems)
            if stems[i : i + n] == phrase_stems:
                credit(" ".join(phrase_stems), weights, i)  # by stems: "unit tests" = "unit test"
                for j in range(i, i + n):
                    consumed[j] = True
                step = n
                break
        i += step

    terms = rooms.terms
    typo_memo: dict[str, tuple[str, float] | None] = {}
    kinds = tokens.ident or (WORD,) * len(words)
    # Words written as words and whole identifiers first, identifier parts after: a term counts
    # once per room, at the weight of its first (strongest) occurrence.
    numbered = list(enumerate(zip(words, stems, consumed, kinds, strict=True)))
    candidates = [(at, w, s, 1.0) for at, (w, s, c, k) in numbered if not c and k == WORD]
    # A joined identifier's position is unknown here; it counts as mentioned last.
    candidates += [(len(words), w, stem(w), 1.0) for w in tokens.extras]
    candidates += sorted(
        ((at, w, s, _PART_FACTOR[k]) for at, (w, s, c, k) in numbered if not c and k != WORD),
        key=lambda c: -c[3],
    )
    false_friends = rooms.false_friends
    for at, word, word_stem, part_factor in candidates:
        if word in STOP_WORDS or word in false_friends:
            continue
        hit = terms.get(word_stem)
        if hit is None:
            # "python3", "oauth2", "sqlite3": fall back to the name without its version digits.
            digits = TRAILING_DIGITS_RE.match(word)
            if digits:
                word_stem = stem(digits.group(1))
                hit = terms.get(word_stem)
        if hit is not None:
            credit(word_stem, hit, at, part_factor)
        elif word.isalpha():
            if word in typo_memo:
                fuzzy = typo_memo[word]
            elif len(typo_memo) < MAX_FUZZY_LOOKUPS:
                fuzzy = typo_memo[word] = _fuzzy_term(word, rooms)
            else:
                fuzzy = None
            if fuzzy is not None:
                term, factor = fuzzy
                credit(term, terms.get(term, ()), at, factor * part_factor)
    content = sum(1 for w in words if w not in STOP_WORDS and not w.isdigit())
    return scores, matched, content, first


def _clip(text: str) -> str:
    """The head and tail of a long text (idempotent)."""
    if len(text) <= CLASSIFY_HEAD_CHARS + CLASSIFY_TAIL_CHARS + 1:
        return text
    return text[:CLASSIFY_HEAD_CHARS] + "\n" + text[-CLASSIFY_TAIL_CHARS:]


def _length_factor(content_words: int) -> float:
    if content_words <= LENGTH_PIVOT:
        return 1.0
    return math.sqrt(LENGTH_PIVOT / content_words)


def _parts(text: str) -> list[str]:
    """The whole text and, for a multi-line prompt, its first and last non-blank lines: the
    question typed around a pasted log or file ("fix this:\n<trace>", "<trace>\nwhy?") must
    not be diluted by the paste's length."""
    text = _clip(text)
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return [text]
    return [text, lines[0], lines[-1]]


def _rank_key(
    room: str, score: float, rooms: CompiledRooms, lead: bool = False
) -> tuple[bool, float, bool, bool, str]:
    """Best first. Rooms reaching ROOM_THRESHOLD come before those that do not. A concern
    room (a quality or artefact of any part of the system: speed, security, tests, docs, CI,
    dependencies) that ``lead``s, i.e. is named before the part rooms of the prompt, ranks by
    CONCERN_RANK_FACTOR times its score. Equal ranks are common (scores come in whole keyword
    units: "the /reports endpoint is slow"): a concern then ranks before a part, because the
    concern is what the prompt is about; remaining ties go by name."""
    concern = rooms.rooms.get(room, {}).get("concern", False)
    passes = score >= ROOM_THRESHOLD
    rank = score * CONCERN_RANK_FACTOR if concern and passes and lead else score
    # A background room loses a tie: equal evidence for a room and for general programming
    # ("refactor the auth module") still brings the room.
    return (not passes, -rank, not injects(room, rooms), not concern, room)


def _leading_concerns(
    scores: Mapping[str, float], first: Mapping[str, int], rooms: CompiledRooms
) -> set[str]:
    """The concern rooms whose first word comes before the first word of every part room
    (a room without ``concern``) that reaches the threshold; none if no part room does."""
    parts = [
        first[r]
        for r, v in scores.items()
        if v >= ROOM_THRESHOLD and not rooms.rooms.get(r, {}).get("concern", False)
    ]
    if not parts:
        return set()
    start = min(parts)
    return {r for r in scores if rooms.rooms.get(r, {}).get("concern", False) and first[r] < start}


def classify_detail(text: str, rooms: CompiledRooms) -> list[RoomMatch]:
    """Every room with a non-zero score for ``text``, best first, with the terms that matched.

    A room's score is the best of the length-normalised scores of the whole text and of its
    first and last lines (see _parts)."""
    best: dict[str, RoomMatch] = {}
    for part in _parts(text):
        scores, matched, content, first = _raw_scores(part, rooms)
        factor = _length_factor(content)
        scaled = {room: round(score * factor, 4) for room, score in scores.items()}
        leading = _leading_concerns(scaled, first, rooms)
        for room, value in scaled.items():
            if value > 0 and (room not in best or value > best[room].score):
                best[room] = RoomMatch(room, value, tuple(matched[room]), room in leading)
    return sorted(best.values(), key=lambda m: _rank_key(m.room, m.score, rooms, m.lead))


def false_friends_in(text: str, rooms: CompiledRooms) -> list[str]:
    """The false friends of ``text`` (words and phrases of rooms.yaml's ``false_friends``), as
    written in the prompt: what ``classify --explain`` shows when a keyword did not count."""
    words = tokenize(_clip(text)).words
    stems = [stem(w) for w in words]
    found = {w for w in words if w in rooms.false_friends}
    for i, first in enumerate(stems):
        for phrase_stems, weights in rooms.phrases.get(first, ()):
            n = len(phrase_stems)
            if not weights and stems[i : i + n] == phrase_stems:
                found.add(" ".join(words[i : i + n]))
    return sorted(found)


def injects(room: str, rooms: CompiledRooms) -> bool:
    """False for a background room (``inject: false``): a topic that is no room's business."""
    return bool(rooms.rooms.get(room, {}).get("inject", True))


def injectable(
    detail: Sequence[RoomMatch], rooms: CompiledRooms, threshold: float = ROOM_THRESHOLD
) -> list[RoomMatch]:
    """The matches of ``detail`` that choose a room: those reaching ROOM_THRESHOLD, none at all
    when the best of them is a background room ("implement an LRU cache, leetcode style" is
    general programming, though "cache" alone says performance), and never a background room."""
    passing = [m for m in detail if m.score >= threshold]
    if passing and not injects(passing[0].room, rooms):
        return []
    return [m for m in passing if injects(m.room, rooms)]


def classify(text: str, rooms: CompiledRooms) -> list[tuple[str, float]]:
    """Rooms ``text`` is about, as (room, score) best first (ties: see _rank_key), only those
    scoring at least ROOM_THRESHOLD and none when a background room wins (see ``injectable``).
    An empty list means: inject no room."""
    return [(m.room, m.score) for m in injectable(classify_detail(text, rooms), rooms)]


def classify_entry(name: str, description: str, body: str, rooms: CompiledRooms) -> str | None:
    """The room a memory belongs to (at index time), or None.

    Same machinery as ``classify``; the name (file stem, e.g. ``feedback_testing``, without its
    Claude Code type word) and the description count more than the body, which is
    length-normalised like a prompt. Needs ENTRY_THRESHOLD, stricter than a prompt.
    """
    name_words = tokenize(name).words
    if len(name_words) > 1 and name_words[0] in MEMORY_TYPE_PREFIXES:
        name_words = name_words[1:]
    total: dict[str, float] = {}
    for text, weight, normalise in (
        (" ".join(name_words), ENTRY_NAME_WEIGHT, False),
        (description, ENTRY_DESCRIPTION_WEIGHT, False),
        (body, ENTRY_BODY_WEIGHT, True),
    ):
        if not text:
            continue
        scores, _, content, _ = _raw_scores(text, rooms)
        factor = weight * (_length_factor(content) if normalise else 1.0)
        for room, score in scores.items():
            total[room] = total.get(room, 0.0) + score * factor
    if not total:
        return None
    room, score = min(total.items(), key=lambda item: _rank_key(item[0], item[1], rooms))
    return room if score >= ENTRY_THRESHOLD and injects(room, rooms) else None


# --- instincts ---------------------------------------------------------------------------------


class Instinct(NamedTuple):
    """A learned pattern: when ``trigger`` comes up, ``action`` is what worked, in ``domain``."""

    trigger: str
    action: str
    domain: str
    confidence: float

    @property
    def mature(self) -> bool:
        return self.confidence >= MATURE_CONFIDENCE


def load_instincts(data: Iterable[Any]) -> list[Instinct]:
    """Instincts from records ``{trigger, action, domain, confidence}`` (e.g. a parsed
    mature-instincts.json). Records without a trigger or domain, or with a confidence that is
    not a number, are skipped: one bad record must not cost the rest. Confidence is clamped
    to [0, 1]."""
    out: list[Instinct] = []
    for record in data:
        if not isinstance(record, Mapping):
            continue
        trigger = record.get("trigger")
        domain = record.get("domain")
        action = record.get("action", "")
        confidence = record.get("confidence")
        if not isinstance(trigger, str) or not trigger.strip():
            continue
        if not isinstance(domain, str) or not domain.strip():
            continue
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
            continue
        if math.isnan(confidence):
            continue
        out.append(
            Instinct(
                trigger=trigger.strip(),
                action=str(action or "").strip(),
                domain=domain.strip(),
                confidence=min(1.0, max(0.0, float(confidence))),
            )
        )
    return out


def mature_instincts(
    instincts: Iterable[Instinct], min_confidence: float = MATURE_CONFIDENCE
) -> list[Instinct]:
    """Instincts at or above ``min_confidence``, most confident first (ties by trigger)."""
    return sorted(
        (i for i in instincts if i.confidence >= min_confidence),
        key=lambda i: (-i.confidence, i.trigger, i.domain, i.action),
    )


def trigger_words(trigger: str) -> list[str]:
    """The words of an instinct trigger that join its room's keywords: not stop words, not
    digits, at least TRIGGER_WORD_MIN_LEN letters. A trigger should name something specific
    ("flyway checksum"): its words then fire the room on their own."""
    out: list[str] = []
    for word in tokenize(trigger).words:
        if (
            len(word) >= TRIGGER_WORD_MIN_LEN
            and word not in STOP_WORDS
            and not word.isdigit()
            and word not in out
        ):
            out.append(word)
    return out


def resolve_domain(domain: str, rooms: CompiledRooms | None = None) -> str | None:
    """The room an instinct's ``domain`` names: the room itself ("database", "Data Pipeline"),
    or, given compiled rooms, the one room a word of it points to ("db", "k8s", "auth")."""
    name = "-".join(tokenize(domain).words)
    if rooms is None:
        return name or None
    if name in rooms.rooms:
        return name
    scores, _, _, _ = _raw_scores(domain, rooms)
    if not scores:
        return None
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    if len(ranked) > 1 and ranked[1][1] == ranked[0][1]:
        return None  # ambiguous: better no room than a wrong one
    return ranked[0][0]


def instincts_for(
    room: str,
    instincts: Iterable[Instinct],
    rooms: CompiledRooms | None = None,
    min_confidence: float = MATURE_CONFIDENCE,
) -> list[Instinct]:
    """The mature instincts of ``room`` (injected with its recall), most confident first.
    Pass ``rooms`` to also match domains given as an alias ("db" for database)."""
    return [
        i
        for i in mature_instincts(instincts, min_confidence)
        if resolve_domain(i.domain, rooms) == room
    ]
