"""Choosing and packing what the always-loaded layers hold.

L1 (identity) holds ``user`` facts from every project and ``identity/``, de-duplicated.
L2 (critical facts) holds this project's ``project`` and ``feedback`` memories, its
``thoughts/CONTEXT.md`` and anything pinned with ``always: true``.
When a layer holds more than its budget, pinned and irreversible-consequence rules go first, then
importance weighted by a power-law recency decay; what does not fit becomes one counted line.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from typing import Any

from ..base.record import field, record
from ..store.entry import Entry, is_critical, is_rule, one_line
from ..store.index import Index
from ..store.similar import gist, richest


@record(frozen=True)
class Unit:
    """One emitted line (ends with a newline) and its exact token count. ``given`` marks what the
    line hands the session beyond entry ids (a handoff), for the session's no-repeat record."""

    text: str
    tokens: int
    given: str = ""


class Fill:
    """Lines taken in groups while each whole group fits both a token budget and a character
    cap (a heading goes with its first line or not at all). Tool recall and failure recall
    pack this way."""

    __slots__ = ("budget", "chars", "max_chars", "units", "used")

    def __init__(self, budget: int, max_chars: int) -> None:
        self.budget = budget
        self.max_chars = max_chars
        self.units: list[Unit] = []
        self.used = 0
        self.chars = 0

    def add(self, group: list[Unit]) -> bool:
        need = sum(u.tokens for u in group)
        size = sum(len(u.text) for u in group)
        if self.used + need > self.budget or self.chars + size > self.max_chars:
            return False
        self.units.extend(group)
        self.used += need
        self.chars += size
        return True


@record
class Layer:
    name: str
    budget: int
    picked: list[Entry] = field(default_factory=list)
    omitted: list[Entry] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)
    rooms: list[tuple[str, float]] = field(default_factory=list)  # L3: the rooms that chose it

    @property
    def tokens(self) -> int:
        return sum(u.tokens for u in self.units)

    @property
    def text(self) -> str:
        return "".join(u.text for u in self.units)


def age_days(entry: Entry, today: dt.date) -> int:
    try:
        return max(0, (today - dt.date.fromisoformat(entry.created)).days)
    except ValueError:
        return 0


def is_expired(entry: Entry, today: dt.date) -> bool:
    if not entry.expires:
        return False
    try:
        return dt.date.fromisoformat(entry.expires) < today
    except ValueError:
        return False


def is_stale(entry: Entry, today: dt.date, cfg: dict[str, Any]) -> bool:
    """Older than its type's staleness age (``stale_days`` in config), or past ``expires``.
    An ``expires:`` date wins over the type's age: a memory someone reviewed and marked valid
    until a date is not stale before that date."""
    if entry.expires:
        try:
            return dt.date.fromisoformat(entry.expires) < today
        except ValueError:
            pass  # an unreadable date: the type's age decides
    limit = cfg.get("stale_days", {}).get(entry.type)
    return isinstance(limit, int) and age_days(entry, today) > limit


# A stale memory still counts, at a tenth of its weight: it may be right, but fresh facts win.
STALE_WEIGHT_FACTOR = 0.1


def weight(entry: Entry, today: dt.date, cfg: dict[str, Any]) -> float:
    decay = float(cfg.get("decay", {}).get(entry.type, 0.3))
    w: float = entry.importance * (1 + age_days(entry, today)) ** -decay
    return w * STALE_WEIGHT_FACTOR if is_stale(entry, today, cfg) else w


def rank(entries: Sequence[Entry], today: dt.date, cfg: dict[str, Any]) -> list[Entry]:
    """Pinned, then irreversible-consequence rules, then other rules, then the rest; within a
    group by decayed importance; ties by id so the same tree always gives the same order."""
    live = [e for e in entries if not is_expired(e, today)]
    return sorted(live, key=lambda e: (e.priority, -round(weight(e, today, cfg), 9), e.id))


def dedupe(entries: Sequence[Entry]) -> list[Entry]:
    """The same fact saved in several projects appears once (the first, i.e. best-ranked), and
    of two near-duplicates (one holds all the other says) only the richer, where the better
    ranked of them stood."""
    seen: set[str] = set()
    out = []
    for e in entries:
        if e.dedupe_key in seen:
            continue
        seen.add(e.dedupe_key)
        out.append(e)
    return richest(out)


Render = Callable[[list[Entry], int], list[Unit]]


def pack(
    name: str,
    ranked: Sequence[Entry],
    budget: int,
    max_entries: int,
    max_chars: int,
    render: Render,
) -> Layer:
    """Greedy: take entries in rank order while the rendered layer (headings, lines and the
    "N more" line) stays within the token budget, the entry cap and the character cap.

    ``render(picked, n_omitted)`` returns the layer's units; an entry is skipped (not the rest)
    when it alone does not fit, so a long memory does not starve shorter ones behind it."""
    layer = Layer(name, budget)
    total = len(ranked)

    def fits(picked: list[Entry]) -> list[Unit] | None:
        units = render(picked, total - len(picked))
        tokens = sum(u.tokens for u in units)
        chars = sum(len(u.text) for u in units)
        return units if tokens <= budget and chars <= max_chars else None

    picked: list[Entry] = []
    for entry in ranked:
        if len(picked) >= max_entries:
            break
        if fits(picked + [entry]) is not None:
            picked.append(entry)
    units = fits(picked)
    while units is None and picked:
        picked.pop()
        units = fits(picked)
    chosen = {id(e) for e in picked}
    layer.picked = picked
    layer.omitted = [e for e in ranked if id(e) not in chosen]
    layer.units = units or []
    return layer


def critical(entries: Sequence[Entry]) -> list[Entry]:
    """The critical rules: rules whose consequence is irreversible (a pinned fact is none)."""
    return [e for e in entries if is_critical(e)]


def rules(entries: Sequence[Entry]) -> list[Entry]:
    return [e for e in entries if is_rule(e)]


# A MEMORY.md line states a memory Claude Code wrote when it holds at least this share of the
# words of the memory's first sentence (the fact itself; a description may only label it, as in
# "project fact 01"): Claude Code loads that line into every session itself, so L2 giving the
# memory again put the same fact twice into a request.
INDEX_STATES_SHARE = 0.6
# Fewer words than this say too little to tell (a bare "Testing").
INDEX_STATES_MIN_WORDS = 3
# Or the line is the fact in brief: at least this many words of three letters or more, this
# share of them in the fact's first sentence.
INDEX_BRIEF_MIN_WORDS = 4
INDEX_BRIEF_SHARE = 0.8
# Or at least this many of its words are the fact's: a line that says the fact in brief with a
# few words of its own ("vitest run - one-shot unit tests, pnpm test waits forever" for "Run the
# unit tests with pnpm vitest run; plain pnpm test starts vitest in watch mode and never exits
# here": two held-out weeks put both into 21 requests). A label shares fewer ("How to run the
# unit tests": three).
INDEX_BRIEF_ENOUGH_WORDS = 5
# Words of a brief that say how, not what ("use --exclude cluster, no epmd here").
_BRIEF_LIGHT_WORDS = frozenset(
    "use uses using here there also just only always never please".split()
)


def stated_by_index(e: Entry, hooks: dict[str, str]) -> bool:
    """Whether the project's MEMORY.md line for ``e`` (``hooks``: ``tree.memory_index_hooks``)
    already says what ``e`` says: only for a file Claude Code wrote (memory-tool's own lines
    only point at their file)."""
    if not e.client_written:
        return False
    hook = hooks.get(e.path.rsplit("/", 1)[-1])
    if not hook:
        return False
    words = set(gist(first_sentence(e.body) or e.description).split())
    if len(words) < INDEX_STATES_MIN_WORDS:
        return False
    said = set(gist(hook).split())
    if len(words & said) >= INDEX_STATES_SHARE * len(words):
        return True
    # A short line that is the fact in brief ("yarn test:unit; yarn test starts Detox" for "Run
    # the unit tests with yarn test:unit; yarn test also starts Detox, which needs an
    # emulator."): nearly every word of it is the fact's; a label ("How to run the unit tests")
    # has words of its own.
    brief = {w for w in said if len(w) > 2} - _BRIEF_LIGHT_WORDS
    # Another form of a word is the word: "compiles" for "compile", "min" for "minutes".
    long_words = [f for f in words if len(f) > 2]
    found = sum(1 for w in brief if any(f.startswith(w) or w.startswith(f) for f in long_words))
    if found >= INDEX_BRIEF_ENOUGH_WORDS:
        return True
    if len(brief) >= INDEX_BRIEF_MIN_WORDS:
        return found >= INDEX_BRIEF_SHARE * len(brief)
    # Three words, all the fact's ("use --exclude cluster, no epmd here").
    return len(brief) == INDEX_BRIEF_MIN_WORDS - 1 and found == len(brief)


def first_sentence(body: str) -> str:
    """The body's first sentence, Markdown headings left out."""
    lines = [line for line in body.splitlines() if not line.lstrip().startswith("#")]
    text = one_line(" ".join(lines))
    end = next(
        (i for i, c in enumerate(text) if c in ".!?" and text[i + 1 : i + 2] in ("", " ")), -1
    )
    return text[: end + 1] if end >= 0 else text


# "The user is Priya", "The user is named Tom": a memory that says who is at the keyboard.
_NAMES_USER = re.compile(r"\bthe user(?:'s name)? is (?:named |called )?([A-Z][A-Za-z'-]+)\b", re.I)


def _named(e: Entry) -> str:
    """The person ``e`` names the user as ("" when it names nobody): a capital after "The user
    is" ("a backend dev" names nobody)."""
    m = _NAMES_USER.search(e.body or e.description)
    return m.group(1).lower() if m and m.group(1)[0].isupper() else ""


def l1_candidates(index: Index, project: str | None = None) -> list[Entry]:
    """L1's candidates for a session in ``project`` (None: every project's, as listed).

    Capture cannot tell who types: when memories in two projects' folders name the user as two
    people ("The user is Dana" in one, "The user is Priya" where a colleague typed), each is
    that project's own, so neither tells the other project's sessions who they are talking to.
    A name in the palace's identity/ (set by hand) holds everywhere."""
    facts = index.identity_facts()
    if project is None:
        return facts
    local = {e.id: _named(e) for e in facts if e.project and e.source != "identity"}
    if len({name for name in local.values() if name}) < 2:
        return facts
    return [e for e in facts if not local.get(e.id) or e.project == project]


# L2's background: the project's references and its gotchas filed in a room, which room recall
# (L3) gives only to a prompt that shares their words ("400 invites in a minute" never named the
# "rate limiter" a [REUSE] pointed to). They come after the project's own facts and rules and
# take only the entries and tokens those leave, so a young project's few lessons reach every
# session whatever its prompts say; as they grow, importance x decay picks which and L3 keeps
# the rest. At most the always-load cap of them can be picked, so no more are read.
L2_BACKGROUND_MAX = 15


def l2_background(index: Index, project: str, cfg: dict[str, Any]) -> list[Entry]:
    """L2's background candidates, none when ``recall.l2_background`` is off."""
    if not cfg.get("recall", {}).get("l2_background", True):
        return []
    return index.project_references(project, L2_BACKGROUND_MAX)


def l2_ranked(
    index: Index, project: str, context_path: str | None, day: dt.date, cfg: dict[str, Any]
) -> list[Entry]:
    """L2 in the order the brief takes it: the project's facts, rules and pins ranked, then
    its background ranked."""
    own = rank(l2_candidates(index, project, context_path), day, cfg)
    have = {e.id for e in own}
    more = [e for e in rank(l2_background(index, project, cfg), day, cfg) if e.id not in have]
    return dedupe(own + more)


def l2_candidates(index: Index, project: str, context_path: str | None = None) -> list[Entry]:
    """The project's facts and rules, and what is pinned for it. ``context_path``: the working
    tree's CONTEXT.md (see ``Index.project_facts``)."""
    # Two indexed lookups instead of one OR that would scan the whole table.
    own = index.project_facts(project, context_path)
    pinned = index.pinned_for(project)
    seen = {e.id for e in own}
    return own + [e for e in pinned if e.id not in seen]
