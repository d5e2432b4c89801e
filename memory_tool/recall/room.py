"""Recall: L3 room recall for a prompt, L4 deep search over everything, and the per-session
record of what was already injected.

One ranking path serves the hook, the CLI and the benchmarks: SQLite FTS5 (porter stemming) with
BM25 field weights, then importance and a mild recency prior; a fuzzy fallback when nothing
matches. Hook-path code here imports no YAML, tokenizer, click or rapidfuzz.
"""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING, Any

from ..base import paths
from ..base.privacy import LazyPattern, escape_fence, strip_injected
from ..base.record import record
from .layers import Layer, Unit, pack, rank

if TYPE_CHECKING:
    from ..store.entry import Entry
    from ..store.index import Index

# BM25 column weights for (name, description, body, tags, room): a hit in a memory's name or
# one-line description says more than one in its body.
FIELD_WEIGHTS = (4.0, 2.0, 1.0, 1.0, 0.5)
# The score of a hit is its BM25 relevance scaled by these priors; relevance dominates.
IMPORTANCE_BOOST = 0.08  # per importance step above/below 3
RECENCY_DECAY = 0.03  # score * (1 + age_days) ** -RECENCY_DECAY
# How many FTS candidates to re-rank per result asked for.
CANDIDATE_FACTOR = 5
# Adjacent query words that sit within this many words of each other in a memory add a proximity
# match ("refresh token" together says more than both somewhere in a long text). On LoCoMo
# sessions this took hit@5 from 0.917 to 0.925 (bench/locomo_bench.py).
NEAR_DISTANCE = 5
# At most this many adjacent pairs get a proximity match: bounds FTS work on a long prompt.
MAX_NEAR_PAIRS = 12
# A candidate's score is multiplied by 1 + COVERAGE_BOOST * (the share of the query's distinct
# words it contains): BM25 alone lets one rare word repeated many times outrank a memory that
# mentions most of what was asked. 1.0 doubles the score of full coverage; 0.5-2.0 all gave
# hit@5 0.929-0.931 on LoCoMo sessions, 0 gave 0.925.
COVERAGE_BOOST = 1.0
# Words count as present for coverage when their first letters agree ("volunteer",
# "volunteering"): a light stem that also joins forms the index's Porter stemmer keeps apart.
COVERAGE_PREFIX = 5
# A query keeps at most this many terms (most prompts have far fewer): bounds FTS work on a
# pasted 5 MB log.
MAX_QUERY_TERMS = 48
# Only the head and tail of a huge prompt are searched: that is where the question is.
QUERY_HEAD_CHARS = 3_000
QUERY_TAIL_CHARS = 1_000
# L3 injects at most two rooms' memories: a prompt about three topics is about none in depth.
MAX_ROOMS = 2
# The best this many L3 entries come as full text when the budget allows; the rest as lines.
FULL_TEXT_TOP = 2
# Candidates per room for L3, from the search and again by importance and recency: a 1,500-token
# budget holds about 20 one-line memories, so more candidates only cost time.
ROOM_FILL = 20
# L3 re-ranks fewer search candidates than a deep search: it runs on every prompt, and the room
# filter already narrows the field.
L3_CANDIDATE_FACTOR = 2
# Fuzzy fallback: entries scanned and the rapidfuzz score a hit needs.
FUZZY_SCAN = 5_000
FUZZY_MIN_SCORE = 75
# Semantic search (optional extra, memory_tool/semantic.py; CLI search only, never the hooks):
# fused score = (1 - SEMANTIC_WEIGHT) * BM25 score / best BM25 score + SEMANTIC_WEIGHT * cosine
# min-max scaled over the entries. Tuned on LoCoMo conversations 0-4 (sessions): 0.3-0.4 gave
# hit@5 0.945-0.952, hit@10 0.979-0.984 (BM25 alone 0.942 / 0.978); RRF scored hit@5 as well
# but lowered NDCG@10.
SEMANTIC_WEIGHT = 0.35
# An entry no query word matched joins the results only if this similar (cosine): unrelated
# text scores about 0-0.15 with this model, so a query about nothing stored still finds nothing.
SEMANTIC_ONLY_MIN = 0.2

# Prompts that ask about the past trigger L4 from the hook. Compiled on first need: every
# alternative holds one of PAST_HINTS, so most prompts are ruled out by substring tests.
PAST_HINTS = (
    "have", "had", "did", "last", "remember", "discussed", "decided", "talked", "looked",
    "tried", "session", "conversation", "chat", "before",
)  # fmt: skip
PAST_RE = LazyPattern(
    r"\b(have|had|did)\s+(we|i|you)\b.{0,40}\b(before|ever|already|previously|last time|"
    r"decide|done|tried|try|fix|use|see|hit|discuss)\w*"
    r"|\b(did|have)\s+(we|i|you)\s+ever\b"
    r"|\blast\s+time\b"
    r"|\bremember\s+(when|how|what|why|that|the)\b"
    r"|\bwhat\s+did\s+(we|i|you)\s+(decide|choose|pick|agree|settle|conclude|do|say|use)\b"
    r"|\bwhy\s+did\s+(we|i|you)\b"
    r"|\b(we|i)\s+(discussed|decided|talked about|looked at|tried)\b.{0,30}\b(before|earlier|"
    r"last|previously|yesterday)\b"
    r"|\b(in|from)\s+(a|an|the)\s+(previous|earlier|past|last)\s+(session|conversation|chat)\b"
    r"|\bhave\s+we\s+(done|seen|solved|fixed|had)\s+(this|that|it)\b"
    r"|\b(been|come)\s+(here|across this)\s+before\b",
    re.IGNORECASE,
    hints=PAST_HINTS,
)
# Words of any script ("größere", "数据库"): FTS5's unicode61 tokenizer indexes them, so the
# query must keep them whole (an ASCII-only pattern split "größere" into "gr" and "ere").
_WORD_RE = re.compile(r"[^\W_][\w']*")

# A search drops only English function words and chat filler. Room classification ignores more
# ("bug", "file", "work", "first"...: words that say nothing about a room), but in a search they
# can be what tells two memories apart, and BM25's IDF already discounts the common ones.
# fmt: off
SEARCH_STOP_WORDS = frozenset({
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
    "aren", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "cannot", "could", "couldn", "did", "didn", "didnt", "do", "does",
    "doesn", "doesnt", "doing", "don", "dont", "down", "during", "each", "few", "for", "from",
    "further", "had", "hadn", "has", "hasn", "have", "haven", "having", "he", "her", "here",
    "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "isn",
    "isnt", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor",
    "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves",
    "out", "over", "own", "same", "she", "should", "shouldn", "shouldnt", "so", "some", "such",
    "than", "that", "thats", "the", "their", "theirs", "them", "themselves", "then", "there",
    "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very",
    "was", "wasn", "we", "were", "weren", "what", "whats", "when", "where", "which", "while",
    "who", "whom", "why", "will", "with", "won", "wont", "would", "wouldn", "you", "your",
    "yours", "yourself", "yourselves", "ll", "ve", "re", "ok", "okay", "yes", "yeah", "yep",
    "nope", "thanks", "thank", "thx", "ty", "hi", "hello", "hey", "please", "pls", "plz", "lol",
    "hmm", "rn", "tho", "btw", "imo", "idk", "let", "lets",
})
# fmt: on


@record
class Hit:
    entry: Entry
    score: float


# What one layer contributes to a prompt's context (L3 also records the rooms that chose it).
RecallResult = Layer


# --- queries ---------------------------------------------------------------------------------
def query_terms(text: str) -> list[str]:
    if len(text) > QUERY_HEAD_CHARS + QUERY_TAIL_CHARS:
        text = text[:QUERY_HEAD_CHARS] + " " + text[-QUERY_TAIL_CHARS:]
    terms: list[str] = []
    seen: set[str] = set()
    for raw in _WORD_RE.findall(text.lower()):
        word = raw.strip("'").replace("'", "")
        if len(word) < 2 or word in SEARCH_STOP_WORDS or word in seen:
            continue
        seen.add(word)
        terms.append(word)
        if len(terms) >= MAX_QUERY_TERMS:
            break
    return terms


def fts_query(text: str) -> str | None:
    """An FTS5 OR-query of the text's content words, plus a proximity match for each pair of
    adjacent words (each word quoted: no FTS syntax gets through)."""
    return _match(query_terms(text))


def _match(terms: list[str]) -> str | None:
    if not terms:
        return None
    parts = [f'"{t}"' for t in terms]
    pairs = list(zip(terms[:-1], terms[1:], strict=True))[:MAX_NEAR_PAIRS]
    parts += [f'NEAR("{a}" "{b}", {NEAR_DISTANCE})' for a, b in pairs]
    return " OR ".join(parts)


_ALNUM_RUN = re.compile(r"[a-z0-9]+")


class Coverage:
    """Which of the query's words an entry contains: a word of the entry that starts with the
    query word's first COVERAGE_PREFIX letters (a shorter query word must be a whole word).

    Set look-ups over the entry's alphanumeric runs, not one regex per query word: compiling
    those cost a prompt hook milliseconds. A query word with other characters (``db_url``) keeps
    a regex with the same meaning."""

    def __init__(self, terms: list[str]) -> None:
        self.n = len(terms)
        self.prefixes: list[str] = []
        self.words: list[str] = []
        self.patterns: list[re.Pattern[str]] = []
        for t in terms:
            if not t.isalnum() or not t.isascii():
                stem = re.escape(t[:COVERAGE_PREFIX])
                tail = "" if len(t) >= COVERAGE_PREFIX else "(?![a-z0-9])"
                self.patterns.append(re.compile(f"(?<![a-z0-9]){stem}{tail}"))
            elif len(t) >= COVERAGE_PREFIX:
                self.prefixes.append(t[:COVERAGE_PREFIX])
            else:
                self.words.append(t)

    def share(self, entry: Entry) -> float:
        if not self.n:
            return 0.0
        text = f"{entry.name} {entry.description} {entry.body} {' '.join(entry.tags)}".lower()
        runs = _ALNUM_RUN.findall(text)
        whole = set(runs)
        starts = {w[:COVERAGE_PREFIX] for w in runs if len(w) >= COVERAGE_PREFIX}
        found = sum(p in starts for p in self.prefixes) + sum(w in whole for w in self.words)
        found += sum(1 for p in self.patterns if p.search(text))
        return found / self.n


def is_past_question(prompt: str) -> bool:
    return PAST_RE.found(prompt[:QUERY_HEAD_CHARS] + " " + prompt[-QUERY_TAIL_CHARS:])


def _age_days(created: str, today_ord: int) -> int:
    try:
        y, m, d = (int(p) for p in created[:10].split("-"))
        import datetime as dt

        return max(0, today_ord - dt.date(y, m, d).toordinal())
    except (ValueError, TypeError):
        return 0


def own_facts_sql(alias: str = "") -> str:
    """What a project may see of the rest (one ``?``: the project): everything in the palace,
    but another project's own facts (its memory folder, its CONTEXT.md, the wiki records
    promoted from its sessions) stay with it."""
    return f"{alias}source NOT IN ('claude', 'context', 'wiki') OR {alias}project IN ('', ?)"


def search(
    idx: Index,
    query: str,
    *,
    limit: int = 10,
    room: str | None = None,
    type_: str | None = None,
    project: str | None = None,
    rooms: list[str] | None = None,
    sessions: bool = True,
    cold: bool = True,
    exclude: set[str] | frozenset[str] = frozenset(),
    fuzzy: bool = True,
    home_project: str | None = None,
    candidate_factor: int = CANDIDATE_FACTOR,
    semantic: bool = False,
) -> list[Hit]:
    """Rank every entry (memories, wiki, cold summaries, past sessions) against ``query``.
    ``semantic``: fuse in sentence-vector similarity where the index holds vectors and the
    extra is installed (loads numpy and the model: never on the hook path)."""
    from ..base.config import today
    from ..store.index import row_to_entry

    terms = query_terms(query)
    match = _match(terms)
    hits: list[Hit] = []
    filters: list[str] = []
    filter_params: list[Any] = []
    room_list = [room] if room else (rooms or [])
    if room_list:
        filters.append(f"e.room IN ({','.join('?' * len(room_list))})")
        filter_params += room_list
    if type_:
        filters.append("e.type = ?")
        filter_params.append(type_)
    if project:
        filters.append("e.project = ?")
        filter_params.append(project)
    if not sessions:
        filters.append("e.source != 'session'")
    if not cold:
        filters.append("e.source != 'cold'")
    if home_project is not None:  # other projects' own facts stay with their project
        filters.append(f"({own_facts_sql('e.')})")
        filter_params.append(home_project)
    if match:
        where = ["entries_fts MATCH ?", *filters]
        params: list[Any] = [match, *filter_params]
        weights = ", ".join(str(w) for w in FIELD_WEIGHTS)
        # Rank on (rowid, score) only, then read the few rows that made the cut: sorting every
        # match with its whole row (bodies included) was most of a prompt hook's search time.
        sql = (
            f"SELECT e.rowid AS rid, bm25(entries_fts, {weights}) AS r FROM entries_fts "
            f"JOIN entries e ON e.rowid = entries_fts.rowid WHERE {' AND '.join(where)} "
            f"ORDER BY r LIMIT ?"
        )
        params.append(max(limit, 1) * candidate_factor + len(exclude))
        today_ord = today().toordinal()
        cover = Coverage(terms)
        try:
            ranked = idx.conn.execute(sql, params).fetchall()
            scores = {r["rid"]: float(r["r"]) for r in ranked}
            marks = ",".join("?" * len(scores))
            rows = (
                idx.conn.execute(
                    f"SELECT rowid AS rid, * FROM entries WHERE rowid IN ({marks})", list(scores)
                ).fetchall()
                if scores
                else []
            )
        except sqlite3.OperationalError:
            rows, scores = [], {}
        for row in rows:
            if row["id"] in exclude:
                continue
            entry = row_to_entry(row)
            rel = -scores[row["rid"]]
            prior = 1 + IMPORTANCE_BOOST * (entry.importance - 3)
            recency = (1 + _age_days(entry.created, today_ord)) ** -RECENCY_DECAY
            hits.append(Hit(entry, rel * prior * recency))
        hits.sort(key=lambda h: (-h.score, h.entry.id))
        _boost_coverage(hits, cover, limit)
    if semantic and query.strip():
        hits = _fuse_semantic(
            idx, query, hits, filters, filter_params, limit * candidate_factor, exclude
        )
    if not hits and fuzzy and query.strip():
        hits = _fuzzy(idx, query, room=room, type_=type_, project=project, exclude=exclude)
    return hits[:limit]


def _boost_coverage(hits: list[Hit], cover: Coverage, limit: int) -> None:
    """Scale each score by its coverage of the query and re-sort (``hits`` sorted best first).
    Coverage at most multiplies a score by 1 + COVERAGE_BOOST, so a hit that could not reach the
    ``limit``-th score even then is left as it is: it stays below the cut either way."""
    if not COVERAGE_BOOST or not cover.n or not hits:
        return
    floor = hits[min(limit, len(hits)) - 1].score
    for h in hits:
        if h.score * (1 + COVERAGE_BOOST) < floor:
            break
        h.score *= 1 + COVERAGE_BOOST * cover.share(h.entry)
    hits.sort(key=lambda h: (-h.score, h.entry.id))


def _fuse_semantic(
    idx: Index,
    query: str,
    hits: list[Hit],
    filters: list[str],
    filter_params: list[Any],
    candidates: int,
    exclude: set[str] | frozenset[str],
) -> list[Hit]:
    """BM25 hits (best first) re-scored with the query's sentence-vector similarity; the most
    similar entries no query word matched join them. Unchanged without vectors or the extra."""
    from ..store import semantic
    from ..store.index import row_to_entry

    if not semantic.usable(idx):
        return hits
    sims = semantic.similarities(idx, query)
    if not sims:
        return hits
    lo, hi = min(sims.values()), max(sims.values())
    span = (hi - lo) or 1.0
    known = {h.entry.id for h in hits}
    extra = [
        i
        for i in sorted(sims, key=lambda i: (-sims[i], i))[: candidates + len(exclude)]
        if i not in known and i not in exclude and sims[i] >= SEMANTIC_ONLY_MIN
    ]
    if extra:
        where = [f"e.id IN ({','.join('?' * len(extra))})", *filters]
        rows = idx.conn.execute(
            f"SELECT * FROM entries e WHERE {' AND '.join(where)}", [*extra, *filter_params]
        ).fetchall()
        hits = hits + [Hit(row_to_entry(r), 0.0) for r in rows]
    best = max((h.score for h in hits), default=0.0) or 1.0
    for h in hits:
        lexical = h.score / best
        sim = sims.get(h.entry.id)
        # An entry without vectors (a past session transcript: those stay lexical) is scored by
        # its words alone, on the same scale, rather than as if it matched nothing in meaning.
        dense = lexical if sim is None else (sim - lo) / span
        h.score = (1 - SEMANTIC_WEIGHT) * lexical + SEMANTIC_WEIGHT * dense
    hits.sort(key=lambda h: (-h.score, h.entry.id))
    return hits


def _fuzzy(
    idx: Index,
    query: str,
    *,
    room: str | None,
    type_: str | None,
    project: str | None,
    exclude: set[str] | frozenset[str],
) -> list[Hit]:
    """Typos and partial words FTS cannot match: rapidfuzz over names and descriptions."""
    from rapidfuzz import fuzz, process

    from ..store.index import row_to_entry

    where, params = ["1"], []
    for col, value in (("room", room), ("type", type_), ("project", project)):
        if value:
            where.append(f"{col} = ?")
            params.append(value)
    rows = idx.conn.execute(
        f"SELECT * FROM entries WHERE {' AND '.join(where)} ORDER BY created DESC LIMIT ?",
        (*params, FUZZY_SCAN),
    ).fetchall()
    choices = {i: f"{r['name']} {r['description']}" for i, r in enumerate(rows)}
    found = process.extract(query, choices, scorer=fuzz.WRatio, limit=20)
    hits = [
        Hit(row_to_entry(rows[key]), score / 100.0)
        for _, score, key in found
        if score >= FUZZY_MIN_SCORE and rows[key]["id"] not in exclude
    ]
    hits.sort(key=lambda h: (-h.score, h.entry.id))
    return hits


# --- L3: room recall ---------------------------------------------------------------------------
def _room_heading(rooms: list[tuple[str, float]], carried: bool = False) -> str:
    names = ", ".join(escape_fence(r) for r, _ in rooms)
    if carried:
        return f"## Memories about {names} (L3, the topic of the previous prompt)\n"
    return f"## Memories about {names} (L3)\n"


def room_recall(
    idx: Index,
    prompt: str,
    cwd: str,
    *,
    budget: int,
    max_chars: int = 6_000,
    exclude: set[str] | None = None,
    rooms: list[tuple[str, float]] | None = None,
    cfg: dict[str, Any] | None = None,
    previous: tuple[str, float] | None = None,
    now: float = 0.0,
) -> RecallResult:
    """The memories of the room(s) a prompt is about, ranked by relevance to the prompt, then
    importance and recency, packed under ``budget``: full text for the best where it fits,
    one line for the rest. Cold summaries are no room's memories: a past session's log comes in
    through the situations (resuming, a recurring bug) and deep search, not with every prompt.
    No room above the threshold means nothing is injected, unless the session's ``previous``
    (room, time) carries over to a follow-up (followup.choose_rooms; ``now`` is the time to
    judge it by). ``cfg``: the configuration when the caller has it already (the hook does)."""
    from ..base.config import load_config, today
    from ..store.classify import instincts_for
    from ..store.index import row_to_entry
    from ..store.rooms import compiled_rooms, load_instinct_records

    result = RecallResult("L3", budget)
    text = strip_injected(prompt)
    compiled = compiled_rooms()
    carried = False
    if rooms is not None:
        chosen = rooms
    else:
        from .followup import choose_rooms

        chosen, carried = choose_rooms(text, previous, now, MAX_ROOMS, compiled)
    result.rooms = chosen
    if not chosen:
        return result
    names = [r for r, _ in chosen]
    skip = set(exclude or ())
    home = paths.project_key(cwd)
    hits = search(
        idx,
        text,
        limit=ROOM_FILL,
        rooms=names,
        sessions=False,
        cold=False,
        exclude=skip,
        fuzzy=False,
        home_project=home,
        candidate_factor=L3_CANDIDATE_FACTOR,
    )
    matched = [h.entry for h in hits if h.entry.type != "user"]
    ids = {e.id for e in matched}
    marks = ",".join("?" * len(names))
    rest_rows = idx.conn.execute(
        f"SELECT * FROM entries WHERE room IN ({marks}) AND source NOT IN ('session', 'cold') "
        f"AND type != 'user' AND ({own_facts_sql()}) "
        f"ORDER BY importance DESC, created DESC LIMIT ?",
        (*names, home, ROOM_FILL),
    ).fetchall()
    rest = [row_to_entry(r) for r in rest_rows if r["id"] not in ids and r["id"] not in skip]
    ranked = matched + rank(rest, today(), cfg if cfg is not None else load_config())
    # As the files are now: an edited memory is shown as edited, a deleted one not at all.
    ranked = [e for e in idx.current(ranked) if e.room in names]
    instinct_lines: list[str] = []
    try:
        from ..store.classify import load_instincts

        instincts = load_instincts(load_instinct_records())
        for name in names:
            for inst in instincts_for(name, instincts, compiled):
                instinct_lines.append(
                    escape_fence(f"- Learned ({name}): when {inst.trigger}, {inst.action}\n")
                )
    except Exception:  # noqa: BLE001 - a broken instincts file must not cost the room recall
        instinct_lines = []
    count = idx.count_cached
    head = _room_heading(chosen, carried)
    heading = Unit(head, count(head))
    learned = [Unit(line, count(line)) for line in instinct_lines]
    used = heading.tokens + sum(u.tokens for u in learned)
    chars = len(heading.text) + sum(len(u.text) for u in learned)
    if used > budget or chars > max_chars:
        return result
    from ..store.entry import full_text

    units = [heading]
    for i, e in enumerate(ranked):
        options = [Unit(full_text(e), e.full_tokens)] if i < FULL_TEXT_TOP else []
        options.append(Unit(e.line, e.line_tokens))
        for unit in options:
            if used + unit.tokens <= budget and chars + len(unit.text) <= max_chars:
                units.append(unit)
                used += unit.tokens
                chars += len(unit.text)
                result.picked.append(e)
                break
        else:
            result.omitted.append(e)
    if not result.picked and not learned:
        return result
    result.units = units + learned
    return result


# --- L4: deep search for the hook ---------------------------------------------------------------
def deep_recall(
    idx: Index,
    prompt: str,
    *,
    budget: int,
    max_chars: int = 3_000,
    exclude: set[str] | None = None,
    limit: int = 10,
) -> RecallResult:
    """IDs and one-line summaries (depth 2) of the best matches anywhere, past sessions
    included; the agent fetches full text with ``memory-tool get`` only for what it confirms."""
    result = RecallResult("L4", budget)
    hits = search(idx, strip_injected(prompt), limit=limit, exclude=set(exclude or ()))
    if not hits:
        return result
    count = idx.count_cached
    head = "## Possibly related, from past sessions and all memory (L4; `memory-tool get ID`)\n"
    heading = Unit(head, count(head))

    def render(picked: list[Entry], n_omitted: int) -> list[Unit]:
        if not picked:
            return []
        return [heading] + [Unit(e.summary, e.summary_tokens) for e in picked]

    entries = idx.current(h.entry for h in hits)  # no old version of an edited file
    layer = pack("L4", entries, budget, limit, max_chars, render)
    result.units, result.picked, result.omitted = layer.units, layer.picked, layer.omitted
    return result
