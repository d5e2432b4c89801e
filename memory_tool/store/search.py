"""Search: the one ranking of entries against a query, used by room recall (L3), deep recall
(L4), the tiers, the CLI, the MCP server and the benchmarks alike.

SQLite FTS5 (porter stemming) with BM25 field weights, then importance and a mild recency prior,
and a boost for covering more of the query's words; a fuzzy fallback when nothing matches; fused
with sentence-vector similarity when the semantic extra is in use (never on the hook path).
Hook-path code here imports no YAML, tokenizer, click or rapidfuzz.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..base.record import record
from .prefs import asks_preference, expansion
from .when import When
from .when import parse as parse_when

if TYPE_CHECKING:
    from .entry import Entry
    from .index import Index

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
# A room's search tests its filters against the room's rowids (Index.member_filter) rather than
# joining every match to its row: the same hits in the same order (tests compare both ways),
# about 3 ms less a prompt at 10,000 files once the server keeps the rowids.
NARROW_TO_ROOM = True
# A query keeps at most this many terms (most prompts have far fewer): bounds FTS work on a
# pasted 5 MB log.
MAX_QUERY_TERMS = 48
# Only the head and tail of a huge prompt are searched: that is where the question is.
QUERY_HEAD_CHARS = 3_000
QUERY_TAIL_CHARS = 1_000
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
# Time in the query (store/when.py). An entry dated outside the window the query names keeps
# this share of its score: the words still rank, inside the window first, and an entry whose
# date is wrong or missing can still be found.
OUTSIDE_WINDOW = 0.3
# Days after a window's end that still count as inside it: what happened "in October" is often
# told in a session of early November.
WINDOW_LAG_DAYS = 0
# "The first/last time", "most recent": among the hits scoring at least ORDER_FLOOR of the best,
# the newest (or oldest) gains up to ORDER_BOOST, the others in proportion to their date.
ORDER_FLOOR = 0.5
ORDER_BOOST = 1.0
# Latest wins: a superseded or ended memory keeps this share of its score (found, as history,
# below what replaced it).
HISTORY_SHARE = 0.5
# Two memories are on the same subject when this share of the shorter one's words is in the
# other: "Staging runs on Fly.io." and "Staging runs on Heroku, in the staging-eu app" share
# 2 of 4; "The public API docs are generated..." and "The rate limit for the public API is 100
# requests per minute" 3 of 7, not enough.
SAME_SUBJECT = 0.5
# The newer of two live memories on one subject goes first when it scores at least this share
# of the older's score (a live one always goes before history on its subject).
NEWER_WITHIN = 0.5
# Only the top hits are compared (pairs: cheap), each by its first characters.
SUBJECT_SCAN = 10
SUBJECT_CHARS = 1_000
# A question about the user's own likes and setup (store/prefs.py): what the user said about
# themselves (``user`` memories) counts this much more.
USER_BOOST = 1.0
# Entries dated inside the window that share no word with the query join the hits at this share
# of the best score: "what did we fix yesterday?" asks for yesterday's session, which may never
# say "fix". Above OUTSIDE_WINDOW, so they pass word matches from outside the window.
WINDOW_ONLY = 0.35

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


def _match(terms: list[str], extra: list[str] | None = None, prefix: bool = False) -> str | None:
    """``terms`` with a proximity match for each adjacent pair; ``extra`` words only alone.
    ``prefix``: a long word also matches by its first COVERAGE_PREFIX letters (see search)."""
    if not terms and not extra:
        return None
    parts = [f'"{t}"' for t in [*terms, *(extra or [])]]
    if prefix:
        parts += [
            f'"{t[:COVERAGE_PREFIX]}"*'
            for t in terms
            if len(t) > COVERAGE_PREFIX and t.isalnum() and t.isascii()
        ]
    pairs = list(zip(terms[:-1], terms[1:], strict=True))[:MAX_NEAR_PAIRS]
    parts += [f'NEAR("{a}" "{b}", {NEAR_DISTANCE})' for a, b in pairs]
    return " OR ".join(parts)


_ALNUM_RUN = re.compile(r"[a-z0-9]+")


class Coverage:
    """Which of the query's words an entry contains: a word of the entry that starts with the
    query word's first COVERAGE_PREFIX letters (a shorter query word must be a whole word).

    Substring look-ups at the start of the entry's alphanumeric runs, not one regex per query
    word: compiling those cost a prompt hook milliseconds. A query word with other characters
    (``db_url``) keeps a regex with the same meaning."""

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
        return self._share(f"{entry.name} {entry.description} {entry.body} {' '.join(entry.tags)}")

    def share_row(self, row: sqlite3.Row) -> float:
        """``share`` of an index row (its tags as stored: a JSON list)."""
        tags = row["tags"]
        try:
            words = "" if tags == "[]" else " ".join(json.loads(tags))
        except ValueError as exc:  # as index.row_to_entry reports it: a damaged index
            raise sqlite3.DatabaseError(f"damaged index row {row['id']!r}: {exc}") from exc
        return self._share(f"{row['name']} {row['description']} {row['body']} {words}")

    def _share(self, text: str) -> float:
        if not self.n:
            return 0.0
        text = text.lower()
        # A search scores 40-130 rows this way: finding the few query words in the text costs
        # a third of splitting every text into its runs (0.5 ms a prompt at 10,000 files).
        found = sum(_starts_run(text, p, False) for p in self.prefixes)
        found += sum(_starts_run(text, w, True) for w in self.words)
        found += sum(1 for p in self.patterns if p.search(text))
        return found / self.n


_RUN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_NOT_RUN = re.compile(r"[^a-z0-9]")


def _starts_run(text: str, part: str, whole: bool) -> bool:
    """Whether an alphanumeric run of ``text`` (a match of ``_ALNUM_RUN``) starts with ``part``
    (alphanumeric itself), or is ``part`` when ``whole``."""
    end = len(text)
    i = text.find(part)
    while i >= 0:
        if i and text[i - 1] in _RUN_CHARS:
            # Inside a run: look again after it (a long run is skipped in one step).
            after = _NOT_RUN.search(text, i)
            if after is None:
                return False
            i = text.find(part, after.start())
            continue
        j = i + len(part)
        if not whole or j == end or text[j] not in _RUN_CHARS:
            return True
        i = text.find(part, i + 1)
    return False


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
    promoted from its sessions, its subagents' notes, the room memories added from inside it)
    stay with it."""
    return (
        f"{alias}source NOT IN ('claude', 'context', 'wiki', 'agent', 'room') "
        f"OR {alias}project IN ('', ?)"
    )


def room_members(idx: Index, rooms: list[str], *, home_project: str, limit: int) -> list[Entry]:
    """The most important, then newest, memories of ``rooms`` (no identity facts, past sessions
    or cold summaries; other projects' own facts stay with them): what fills L3 beyond the
    memories the prompt's words matched."""
    from .index import LIVE_SQL, TEXT_ONLY_SQL, live_params, row_to_entry

    if not rooms:
        return []
    # Each room's best ``limit`` walk its (room, importance, created) index and stop; their
    # union is sorted again. Ties go by room, then rowid: the order the single query over
    # ``room IN (...)`` gave (it read each room's rows in rowid order, rooms in sorted order,
    # into a stable sort), which sorted every row of the rooms (70 ms for two rooms of
    # 100,000 files) to keep 20.
    best = (
        "SELECT * FROM (SELECT rowid AS rid, importance, created, room FROM entries "
        "WHERE room = ? AND source NOT IN ('session', 'cold') AND type != 'user' "
        f"AND ({own_facts_sql()}) AND {TEXT_ONLY_SQL} AND {LIVE_SQL} "
        "ORDER BY importance DESC, created DESC, rowid LIMIT ?)"
    )
    distinct = list(dict.fromkeys(rooms))
    params: list[Any] = []
    for room in distinct:
        params += [room, home_project, *live_params(), limit]
    union = " UNION ALL ".join([best] * len(distinct))
    rows = idx.conn.execute(
        f"SELECT e.* FROM ({union}) m JOIN entries e ON e.rowid = m.rid "
        "ORDER BY m.importance DESC, m.created DESC, m.room, m.rid LIMIT ?",
        (*params, limit),
    ).fetchall()
    return [row_to_entry(r) for r in rows]


# --- a project's own memories on a prompt's topic ----------------------------------------------
# A project's memories that no layer loads by themselves (a reference, a fact without a room, an
# open item past L2's budget) come with a prompt about them: the prompt's words against the
# project's own memories, in the one ranking, and only where a word that says what the prompt
# is about matches. Words every task says (add, make, file, work: the classifier's stop words)
# and the parts of a path any repository has match nothing on their own.
PATH_WORDS = frozenset(
    "app apps src lib libs util utils helper helpers common core main index py js ts tsx jsx "
    "md json yaml yml toml txt ipynb sh".split()
)
# A word found in the memory only inside a path ("notebooks" in notebooks/templates/cohort.ipynb)
# is weaker evidence than one in its words ("the cohort template"): two such words make a match,
# one does not ("commit the exploratory notebook" is not about the cohort template).
PATH_ONLY_WEIGHT = 0.5
TOPIC_MATCH_MIN = 1.0
# A word of the prompt picks a memory only when at most this many of the project's memories
# hold it: "cohort" in one reference says which memory the prompt is about; "split" or
# "approach", in dozens of a busy project's memories, says nothing (a generated project of
# 1,000 files matched a third of its no-room prompts on such words).
RARE_HOLDERS = 3
# Candidates the ranking returns before the topic check: a project has few memories outside L2.
PROJECT_MATCH_CANDIDATES = 8
PROJECT_MATCH_SOURCES = ("claude", "context", "room")
_PATHLIKE = re.compile(r"\S*/\S*|\S+\.[A-Za-z][A-Za-z0-9]{0,5}\b")


def topic_terms(text: str) -> list[str]:
    """The words of ``text`` that say what it is about (query terms but the classifier's stop
    words, path parts any repository has, numbers)."""
    from .words import STOP_WORDS

    return [
        t
        for t in query_terms(text)
        if len(t) >= 3 and t not in STOP_WORDS and t not in PATH_WORDS and not t.isdigit()
    ]


def topic_weight(terms: list[str], entry: Entry, says: Callable[[str], bool]) -> float:
    """How much of ``terms`` the subject of ``entry`` (the first sentence of its description and
    of its body) holds: 1 for each term among its words, PATH_ONLY_WEIGHT for one only inside a
    path; a term matches a word starting with its first COVERAGE_PREFIX
    letters (a shorter term must be the whole word). Only the terms ``says`` keeps count (by
    their first letters: ``project_matches`` keeps those that few of the project's memories
    hold)."""
    text = f"{_subject(entry.description)}\n{_subject(entry.body)}".lower()
    in_paths = " ".join(_PATHLIKE.findall(text))
    prose = _PATHLIKE.sub(" ", text)

    def forms(chunk: str) -> tuple[set[str], set[str]]:
        runs = _ALNUM_RUN.findall(chunk.replace("_", " "))
        return set(runs), {w[:COVERAGE_PREFIX] for w in runs if len(w) >= COVERAGE_PREFIX}

    said, said_starts = forms(prose)
    pathed, path_starts = forms(in_paths)
    total = 0.0
    # Forms of one word count once: "the funnel notebook" in a prompt that also says
    # "notebooks" is one word about notebooks, not two.
    for key in dict.fromkeys(t[:COVERAGE_PREFIX] for t in terms):
        if len(key) >= COVERAGE_PREFIX:
            weight = 1.0 if key in said_starts else PATH_ONLY_WEIGHT * (key in path_starts)
        else:
            weight = 1.0 if key in said else PATH_ONLY_WEIGHT * (key in pathed)
        if weight and says(key):
            total += weight
    return total


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s|\n")


def _subject(text: str) -> str:
    """A memory's subject: its first sentence. What follows (a Why: and How to apply:, more
    detail) is about many things; "the previous approach did not scale" does not make a memory
    about "compare these two approaches"."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0] if text else ""


def _holders(idx: Index, project: str, forms: list[str]) -> int:
    """How many of ``project``'s own live memories hold one of ``forms`` (FTS terms), up to
    RARE_HOLDERS + 1 (enough to tell rare from common)."""
    from .index import live_params, live_sql, text_only_sql

    marks = ",".join("?" * len(PROJECT_MATCH_SOURCES))
    # Tested against the project's rowids (read once, Index.member_filter), as a room's search
    # is: joining every match of a common word to its row cost milliseconds at 10,000 files.
    # The same condition, word for word, as project_matches' search builds (text_only, live,
    # project, sources): one row set serves both, so a room's sets are not pushed out.
    member = idx.member_filter(
        f"{text_only_sql('e.')} AND ({live_sql('e.')}) AND e.project = ? AND e.source IN ({marks})",
        (*live_params(), project, *PROJECT_MATCH_SOURCES),
        "rowid",
    )
    try:
        row = idx.conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM entries_fts WHERE entries_fts MATCH ? "
            f"AND {member} LIMIT ?)",
            (" OR ".join(forms), RARE_HOLDERS + 1),
        ).fetchone()
    except sqlite3.OperationalError:
        return RARE_HOLDERS + 1
    return int(row[0])


def project_matches(
    idx: Index,
    query: str,
    *,
    project: str,
    exclude: set[str] | frozenset[str] = frozenset(),
    limit: int = 3,
) -> list[Hit]:
    """The memories of ``project``'s own (its memory folder, its CONTEXT.md, room memories
    added from inside it) that ``query`` is about: ranked by ``search`` (words matched by
    their first letters too), kept when they hold TOPIC_MATCH_MIN of the query's topic words
    that at most RARE_HOLDERS of the project's memories hold (``topic_weight``): a word most
    of them hold picks none of them. Identity facts are L1's."""
    terms = topic_terms(query)
    if not terms:
        return []
    hits = search(
        idx,
        " ".join(terms),
        limit=PROJECT_MATCH_CANDIDATES,
        project=project,
        sources=PROJECT_MATCH_SOURCES,
        exclude=exclude,
        fuzzy=False,
        live_only=True,
        intent=False,
        prefix=True,
    )
    mine = [h for h in hits if h.entry.type != "user"]
    if not mine:
        return []
    by_key: dict[str, list[str]] = {}
    for t in terms:
        by_key.setdefault(t[:COVERAGE_PREFIX], []).append(t)
    rare: dict[str, bool] = {}

    def says(key: str) -> bool:
        if key not in rare:
            forms = [f'"{t}"' for t in by_key.get(key, [key])]
            if len(key) >= COVERAGE_PREFIX and key.isalnum() and key.isascii():
                forms.append(f'"{key}"*')
            rare[key] = _holders(idx, project, forms) <= RARE_HOLDERS
        return rare[key]

    return [h for h in mine if topic_weight(terms, h.entry, says) >= TOPIC_MATCH_MIN][:limit]


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
    sources: tuple[str, ...] = (),
    candidate_factor: int = CANDIDATE_FACTOR,
    semantic: bool = False,
    live_only: bool = False,
    now: dt.date | None = None,
    intent: bool = True,
    prefix: bool = False,
) -> list[Hit]:
    """Rank every entry (memories, wiki, cold summaries, past sessions) against ``query``.
    ``semantic``: fuse in sentence-vector similarity where the index holds vectors and the
    extra is installed (loads numpy and the model: never on the hook path). ``live_only``:
    leave out superseded, forgotten and out-of-date memories (what a loaded layer may hold);
    without it they are found too, as history (their summary says so), below what replaced
    them. ``now``: the day time words in the query count from (default today). ``intent``:
    read what a question asks beyond its words (its time words; the latest version first; the
    user's own likes for a question about them); a task prompt's room recall and a duplicate
    check do not. ``prefix``: a word also matches the words that share its first
    COVERAGE_PREFIX letters ("convert" finds "conversion", which the Porter stemmer keeps
    apart), as coverage counts them; for the few memories of one project (``project_matches``),
    not for a search of everything."""
    from ..base.config import today
    from .index import live_params, live_sql, row_to_entry, text_only_sql

    day = now or today()
    asked = parse_when(query, day) if intent and query.strip() else None
    if asked is not None:
        query = asked.rest
    terms = query_terms(query)
    prefer = intent and bool(terms) and asks_preference(query)
    more = expansion(terms)[: max(0, MAX_QUERY_TERMS - len(terms))] if prefer else []
    match = _match(terms, more, prefix)
    hits: list[Hit] = []
    filters: list[str] = [text_only_sql("e.")]
    filter_params: list[Any] = []
    if live_only:
        filters.append(f"({live_sql('e.')})")
        filter_params += live_params()
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
    if sources:  # only these kinds of entry (cold summaries, wiki records...)
        filters.append(f"e.source IN ({','.join('?' * len(sources))})")
        filter_params += list(sources)
    if home_project is not None:  # other projects' own facts stay with their project
        filters.append(f"({own_facts_sql('e.')})")
        filter_params.append(home_project)
    window: tuple[str, str] | None = None
    if asked is not None:
        window = _resolve_window(
            idx, asked, day, room=room, type_=type_, project=project, rooms=rooms,
            sessions=sessions, cold=cold, home_project=home_project, sources=sources,
            live_only=live_only,
        )  # fmt: skip
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
        narrow = room_list or (project and prefix)  # a room's, or one project's own (few)
        if NARROW_TO_ROOM and narrow and window is None and not prefer:
            # A room's search (L3, on every prompt) tests the filters against the room's rowids,
            # read once (Index.member_filter), instead of joining every match to its row. Same
            # rows, same scores, same order: the full-text scan still drives, so ties keep
            # their order.
            member = idx.member_filter(" AND ".join(filters), filter_params, "rowid")
            sql = (
                f"SELECT rowid AS rid, bm25(entries_fts, {weights}) AS r FROM entries_fts "
                f"WHERE entries_fts MATCH ? AND {member} ORDER BY r LIMIT ?"
            )
            params = [match]
        params.append(max(limit, 1) * candidate_factor + len(exclude))
        today_ord = day.toordinal()
        cover = Coverage(terms)
        try:
            ranked = idx.conn.execute(sql, params).fetchall()
            if window is not None:
                # The best matches inside the window join the candidates: those the words alone
                # rank below the cut are what the time words ask for.
                lo, hi = window
                ranked += idx.conn.execute(
                    sql.replace(" ORDER BY", " AND e.created >= ? AND e.created <= ? ORDER BY"),
                    [*params[:-1], lo or "0000", hi or "9999", params[-1]],
                ).fetchall()
            if prefer:
                # What the user said about themselves joins the candidates.
                ranked += idx.conn.execute(
                    sql.replace(" ORDER BY", " AND e.type = 'user' ORDER BY"), params
                ).fetchall()
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
        ranked_rows: list[_Ranked] = []
        for row in rows:
            if row["id"] in exclude:
                continue
            rel = -scores[row["rid"]]
            prior = 1 + IMPORTANCE_BOOST * (row["importance"] - 3)
            recency = (1 + _age_days(row["created"], today_ord)) ** -RECENCY_DECAY
            own = 1 + USER_BOOST if prefer and row["type"] == "user" else 1
            ranked_rows.append(_Ranked(row, rel * prior * recency * own))
        ranked_rows.sort(key=lambda h: (-h.score, h.row["id"]))
        # With time words, hits below the cut may rise by their date: boost every one.
        _boost_coverage(ranked_rows, cover, limit if asked is None else len(ranked_rows))
        # Rows become entries only where something reads them: without the steps below (a
        # room's recall), the hits past ``limit`` are dropped unseen.
        if not intent and not semantic:
            ranked_rows = ranked_rows[:limit]
        hits = [Hit(row_to_entry(h.row), h.score) for h in ranked_rows]
    elif asked is not None and (window is not None or asked.order):
        # Only time words ("what did we do yesterday?"): what the window holds, newest first.
        hits = _dated(idx, window, filters, filter_params, limit * candidate_factor, exclude)
    if semantic and query.strip():
        hits = _fuse_semantic(
            idx, query, hits, filters, filter_params, limit * candidate_factor, exclude
        )
    if intent and hits:
        _latest_first(idx, hits, day, filters, filter_params, exclude)
    if asked is not None:
        if window is not None and match:
            known = {h.entry.id for h in hits} | set(exclude)
            best = max((h.score for h in hits), default=1.0)
            hits += [
                Hit(h.entry, best * WINDOW_ONLY)
                for h in _dated(
                    idx, window, filters, filter_params, limit * candidate_factor, known
                )
            ]
        _rank_in_time(hits, window, asked.order)
    if not hits and fuzzy and query.strip():
        hits = _fuzzy(
            idx, query, room=room, type_=type_, project=project, exclude=exclude,
            live_only=live_only,
        )  # fmt: skip
    return hits[:limit]


def _latest_first(
    idx: Index,
    hits: list[Hit],
    day: dt.date,
    filters: list[str],
    filter_params: list[Any],
    exclude: set[str] | frozenset[str],
) -> None:
    """Latest wins. A memory replaced by another (``superseded_by``) or past its ``valid_to``
    is history: it keeps HISTORY_SHARE of its score, and what replaced it joins the hits at no
    less than the old one's own score (a question in the old memory's words is answered by the
    new one first). Of two live memories on the same subject (SAME_SUBJECT of their words in
    common), the newer ranks first when the older is not far ahead."""
    from .entry import is_live
    from .index import row_to_entry

    by_id = {h.entry.id: h for h in hits}
    wanted = {
        h.entry.superseded_by: h.score
        for h in hits
        if h.entry.superseded_by and h.entry.superseded_by not in exclude
    }
    missing = [i for i in wanted if i not in by_id]
    if missing:
        where = [f"e.id IN ({','.join('?' * len(missing))})", *filters]
        for row in idx.conn.execute(
            f"SELECT * FROM entries e WHERE {' AND '.join(where)}", [*missing, *filter_params]
        ).fetchall():
            hit = Hit(row_to_entry(row), 0.0)
            hits.append(hit)
            by_id[hit.entry.id] = hit
    for h in hits:
        if not is_live(h.entry, day) and not h.entry.forgotten:
            h.score *= HISTORY_SHARE
    for old_id, old_score in wanted.items():
        new = by_id.get(old_id)
        if new is not None:
            new.score = max(new.score, old_score)
    hits.sort(key=lambda h: (-h.score, h.entry.id))
    _newer_first(hits, day)


def _subject_words(entry: Entry) -> set[str]:
    return set(query_terms(f"{entry.name} {entry.description} {entry.body[:SUBJECT_CHARS]}"))


def _newer_first(hits: list[Hit], day: dt.date) -> None:
    """Among the top memories (not past sessions or cold summaries), one ahead of another on
    the same subject swaps places with it when the other is live and it is history, or when
    both are live and the other is newer and not far behind."""
    from .entry import is_live

    top = [h for h in hits[:SUBJECT_SCAN] if h.entry.source not in ("session", "cold")]
    words = {h.entry.id: _subject_words(h.entry) for h in top}
    live = {h.entry.id: is_live(h.entry, day) for h in top}
    changed = False
    for i, ahead in enumerate(top):
        for behind in top[i + 1 :]:
            if ahead.score <= behind.score or behind.score <= 0:
                continue  # already in order (an earlier swap), or matched nothing
            a, b = ahead.entry, behind.entry
            if live[a.id] and not live[b.id]:
                continue
            if live[a.id] and (
                entry_date(b) <= entry_date(a) or behind.score < NEWER_WITHIN * ahead.score
            ):
                continue
            wa, wb = words[a.id], words[b.id]
            if not wa or not wb or len(wa & wb) / min(len(wa), len(wb)) < SAME_SUBJECT:
                continue
            ahead.score, behind.score = behind.score, ahead.score
            changed = True
    if changed:
        hits.sort(key=lambda h: (-h.score, h.entry.id))


def entry_date(entry: Entry) -> str:
    """The day an entry speaks for: when it became valid, else when it was written (a past
    session's message: its transcript timestamp; a cold summary: its session's day)."""
    return (entry.valid_from or entry.created or "")[:10]


def _resolve_window(
    idx: Index, asked: When, day: dt.date, **filters: Any
) -> tuple[str, str] | None:
    """The window of ``asked`` as (first day, last day) ISO strings ("" open), the end
    stretched by WINDOW_LAG_DAYS; an event anchor ("since the release") dated by its best
    match. None: no window (no time words for one, or an event nothing matches)."""
    start, end = asked.start, asked.end
    if asked.anchor:
        found = search(idx, asked.anchor, limit=1, fuzzy=False, intent=False, now=day, **filters)
        date = entry_date(found[0].entry) if found else ""
        if not date:
            return None
        try:
            event = dt.date.fromisoformat(date)
        except ValueError:
            return None
        # The event itself is not what is asked about: "since the rounding fix" is what came
        # after the day of the fix, "before the upgrade" what came before its day.
        if asked.side in ("since", "after"):
            start, end = (event + dt.timedelta(days=1)).isoformat(), day.isoformat()
        elif asked.side == "until":
            start, end = "", date
        else:  # before, prior to
            start, end = "", (event - dt.timedelta(days=1)).isoformat()
    if not (start or end):
        return None
    if end and WINDOW_LAG_DAYS:
        end = (dt.date.fromisoformat(end) + dt.timedelta(days=WINDOW_LAG_DAYS)).isoformat()
    return start, end


def _dated(
    idx: Index,
    window: tuple[str, str] | None,
    filters: list[str],
    filter_params: list[Any],
    limit: int,
    exclude: set[str] | frozenset[str],
) -> list[Hit]:
    """The entries dated inside ``window`` (all of them: None), newest first, all at one score:
    the ordering and the window decide among them."""
    from .index import row_to_entry

    lo, hi = window or ("", "")
    where = ["e.created >= ?", "e.created <= ?", *filters]
    rows = idx.conn.execute(
        f"SELECT * FROM entries e WHERE {' AND '.join(where)} "
        f"ORDER BY e.created DESC, e.importance DESC, e.id LIMIT ?",
        [lo or "0000", hi or "9999", *filter_params, limit + len(exclude)],
    ).fetchall()
    return [Hit(row_to_entry(r), 1.0) for r in rows if r["id"] not in exclude]


def _rank_in_time(hits: list[Hit], window: tuple[str, str] | None, order: str) -> None:
    """Scale ``hits`` by the query's time and re-sort: outside the window an entry keeps
    OUTSIDE_WINDOW of its score; with an order, the newest (``last``) or oldest (``first``) of
    the hits near the best score gains up to ORDER_BOOST."""
    if window is not None:
        lo, hi = window
        for h in hits:
            d = entry_date(h.entry)
            if not d or (lo and d < lo) or (hi and d > hi):
                h.score *= OUTSIDE_WINDOW
    if order and hits:
        best = max(h.score for h in hits)
        near = [h for h in hits if h.score >= ORDER_FLOOR * best and entry_date(h.entry)]
        if len(near) > 1:
            days = sorted({entry_date(h.entry) for h in near})
            span = max(len(days) - 1, 1)
            for h in near:
                pos = days.index(entry_date(h.entry)) / span
                h.score *= 1 + ORDER_BOOST * (pos if order == "last" else 1 - pos)
    hits.sort(key=lambda h: (-h.score, h.entry.id))


class _Ranked:
    """A matching row and its score, before it becomes a Hit (if it makes the cut)."""

    __slots__ = ("row", "score")

    def __init__(self, row: sqlite3.Row, score: float) -> None:
        self.row = row
        self.score = score


def _boost_coverage(hits: list[_Ranked], cover: Coverage, limit: int) -> None:
    """Scale each score by its coverage of the query and re-sort (``hits`` sorted best first).
    Coverage at most multiplies a score by 1 + COVERAGE_BOOST, so a hit that could not reach the
    ``limit``-th score even then is left as it is: it stays below the cut either way."""
    if not COVERAGE_BOOST or not cover.n or not hits:
        return
    floor = hits[min(limit, len(hits)) - 1].score
    for h in hits:
        if h.score * (1 + COVERAGE_BOOST) < floor:
            break
        h.score *= 1 + COVERAGE_BOOST * cover.share_row(h.row)
    hits.sort(key=lambda h: (-h.score, h.row["id"]))


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
    from . import semantic
    from .index import row_to_entry

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
    live_only: bool = False,
) -> list[Hit]:
    """Typos and partial words FTS cannot match: rapidfuzz over names and descriptions."""
    from rapidfuzz import fuzz, process

    from .index import LIVE_SQL, TEXT_ONLY_SQL, live_params, row_to_entry

    where: list[str] = [TEXT_ONLY_SQL]
    params: list[Any] = []
    if live_only:
        where.append(f"({LIVE_SQL})")
        params += live_params()
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
