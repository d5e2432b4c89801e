"""The tiers as injected: what the hot, cold and wiki tiers add to a prompt or a resumed session,
as units counted exactly and packed within a budget.

- UserPromptSubmit (``prompt_context``): the tiers the prompt's situation calls for
  (``situations.LOAD_TABLE``); the hot state only when the conversation does not hold it yet;
- SessionStart on resume or compact (``resume_units``): this session's hot state, and on resume
  the latest cold summary of another session of this project;
- the working tree's handoff (``handoff_units``): to the first session after it was written, on
  resume, and for a "where were we" prompt, once per session.

Hook path: stdlib plus our light modules; the tokenizer is never loaded here for a steady prompt
(unit counts come from the index's token cache, which the Scribe warms).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base import paths
from ..base.event import HookEvent
from ..base.privacy import escape_fence
from ..store.entry import is_text
from ..store.search import search
from .digest import update_session
from .hot import (
    IDLE_SESSION_MAX_PROMPTS,
    hot_sections,
    load_state,
    read_handoff_section,
    session_key,
)
from .situations import LOAD_TABLE, asks_where_we_were, is_about, situation_and_topic

if TYPE_CHECKING:
    from ..recall.layers import Unit
    from ..store.entry import Entry
    from ..store.index import Index

# --- injection budgets (exact cl100k tokens) ----------------------------------------------------
# What SessionStart adds on resume/compact. The hot file at the low end of its 2-4 KB target is
# ~500 tokens; the latest cold summary gets the rest. Together with L1 (200) and L2 (500) the
# brief stays near 2K tokens.
RESUME_BUDGET_TOKENS = 1000
HOT_INJECT_MAX_TOKENS = 500
# The brief drops extra sections that would push the hook output past Claude Code's cap
# (wake.build_brief); the L1+L2 layers may take up to 7 KB, so keep ours well below the rest.
RESUME_MAX_CHARS = 4000
PROMPT_CONTEXT_MAX_CHARS = 4000
# Search hits per tier for a prompt: a few good pointers beat a page of weak ones.
MAX_COLD_HITS = 3
MAX_WIKI_HITS = 4
# Matching lines shown under each cold hit (the part of the summary the prompt is about).
COLD_HIT_LINES = 2

# A handoff's own share (it comes on top of the brief's layers): a filled-in template runs
# 200-400 tokens; a longer one is given as a pointer to its file.
HANDOFF_BUDGET_TOKENS = 400
HANDOFF_MAX_CHARS = 2_400

HOT_HEADING = "## This session so far (hot memory)\n"
HANDOFF_HEADING = "## Handoff from an earlier session\n"
# The handoff as a session summary's files changed name it.
HANDOFF_FILE = "thoughts/HANDOFF.md"
# How a handoff's own lines are given (quoted: its headings must not read as the brief's).
HANDOFF_QUOTE = "> "
# Followed by the summary's id, so the session's no-repeat record sees it: one request never
# carries it twice (SessionStart on resume, then "where were we?").
COLD_LATEST_HEADING = "## Latest earlier session of this project (cold memory)\n"
COLD_SEARCH_HEADING = "## Earlier sessions that match (cold memory)\n"
WIKI_HEADING = "## Matching decisions and conventions (wiki)\n"

_WS = re.compile(r"\s+")
_WORD = re.compile(r"[A-Za-z0-9_]+")

_STOPWORDS = frozenset((
    "the", "and", "for", "with", "that", "this", "from", "what", "where", "when", "which", "who",
    "how", "why", "are", "was", "were", "have", "has", "had", "you", "your", "our", "can",
    "could", "would", "should", "will", "did", "does", "not", "but", "all", "any", "into",
    "about", "again", "still", "some", "then", "than", "them", "they", "there", "their", "its",
    "just", "also", "use", "using", "used", "please", "let", "lets", "need", "want", "make",
    "sure", "more", "most", "very", "much", "like", "been", "being", "one", "two", "get", "got",
    "here", "now", "yes", "okay",
))  # fmt: skip


Counter = Callable[[str], int]


def unit_text(line: str) -> str:
    """A line as injected: one line, escaped, starting with a non-space character and ending
    with a newline (so token counts of consecutive units add up exactly)."""
    text = escape_fence(_WS.sub(" ", line).strip())
    return f"{text}\n" if text else ""


HOT_LINE_LABELS = {
    "Open blockers": "Blocker",
    "Decisions this session": "Decision",
    "Last actions": "Recent action",
}


def hot_lines(state: dict[str, Any], handoff: str = "") -> list[str]:
    """The hot file as injected lines, most important first."""
    out = []
    for heading, lines in hot_sections(state):
        if not lines:
            continue
        if heading == "Current task":
            out.append(unit_text(f"Current task: {lines[0]}"))
            out += [unit_text(x) for x in lines[1:]]
        else:
            out += [unit_text(f"{HOT_LINE_LABELS.get(heading, heading)}: {x}") for x in lines]
    if handoff:
        out.append(unit_text(f"Handoff written this session: {handoff}"))
    return [x for x in out if x]


def _pack_groups(
    head: Unit, groups: Iterable[list[Unit]], budget: int, max_chars: int, *, skip_misfits: bool
) -> list[Unit]:
    """``head``, then each group whole while it fits: the first group that does not fit ends
    the packing (``skip_misfits``: is passed over). Nothing at all if no group fits. Groups are
    taken one at a time, so nothing after the end is counted."""
    units = [head]
    used, chars = head.tokens, len(head.text)
    for group in groups:
        need = sum(u.tokens for u in group)
        size = sum(len(u.text) for u in group)
        if used + need > budget or chars + size > max_chars:
            if skip_misfits:
                continue
            break
        units += group
        used += need
        chars += size
    return units if len(units) > 1 else []


def _pack(
    heading: str, lines: Iterable[str], count: Counter, budget: int, max_chars: int
) -> list[Unit]:
    """Heading plus lines in order while they fit; nothing at all if no line fits."""
    from ..recall.layers import Unit

    groups = ([Unit(text, count(text))] for text in lines if text)
    return _pack_groups(
        Unit(heading, count(heading)), groups, budget, max_chars, skip_misfits=False
    )


# Sections of a cold summary that are bookkeeping, not memory: never injected.
COLD_SKIPPED_SECTIONS = ("Stats",)


def cold_body_lines(body: str) -> list[str]:
    """A cold summary's body as injectable lines (the Scribe warms their token counts); a
    section heading becomes a line ending in ':'."""
    out = []
    skipping = False
    for raw in body.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("## "):
            title = line[3:].strip().rstrip(":")
            skipping = title.split(" (")[0] in COLD_SKIPPED_SECTIONS
            line = title + ":"
        if not skipping:
            out.append(unit_text(line))
    return [x for x in out if x]


def _drop_dangling_titles(units: list[Unit]) -> list[Unit]:
    """A section title cut off from all of its lines by the budget says nothing: drop it."""
    while len(units) > 1 and units[-1].text.endswith(":\n") and not units[-1].text.startswith("- "):
        units.pop()
    return units if len(units) > 1 else []


# A cold summary's own account of its session (the Scribe's "## Stats" line).
_COLD_STATS = re.compile(r"^(\d+) prompts?, (\d+) tool calls?, (\d+) files? edited", re.M)
# Sections that hold something decided or left open: a session with one of them had substance.
_COLD_SUBSTANCE_SECTIONS = re.compile(
    r"^## (Decisions|Open items|Gotchas|Reusable|Compaction summary)\b", re.M
)


def cold_has_substance(body: str) -> bool:
    """Whether a cold summary is of a session that did something (scribe.has_substance): a
    summary written before the Scribe skipped idle sessions may be of one that did not. One
    without the Scribe's stats (by hand, or older) counts as substantial."""
    stats = _COLD_STATS.search(body)
    if stats is None:
        return True
    prompts, calls, files = (int(n) for n in stats.groups())
    busy = calls or files or prompts > IDLE_SESSION_MAX_PROMPTS
    return bool(busy or _COLD_SUBSTANCE_SECTIONS.search(body))


def recent_cold(idx: Index, project: str, exclude_session: str = "") -> list[Entry]:
    """A project's cold summaries, newest first, other than the given session's own and other
    than those of idle sessions (``cold_has_substance``)."""
    key = session_key(exclude_session)[:8] if exclude_session else ""
    rows = [
        e
        for e in idx.entries(source="cold", project=project)
        if not (key and e.name.endswith(key)) and is_text(e) and cold_has_substance(e.body)
    ]
    # Dates have day resolution: within a day the file written last (the Scribe rewrites a
    # session's summary as it goes) is the latest session.
    rows.sort(key=lambda e: (e.updated or e.created, e.mtime_ns, e.path), reverse=True)
    return rows


def latest_cold(idx: Index, project: str, exclude_session: str = "") -> Entry | None:
    """The newest of ``recent_cold``."""
    rows = recent_cold(idx, project, exclude_session)
    return rows[0] if rows else None


def summary_text(entry: Entry) -> str:
    """What a cold summary says, for ``is_about`` and ``open_work.related``."""
    return f"{entry.description}\n{entry.body}"


def _matching_lines(entry: Entry, prompt: str, n: int) -> list[str]:
    words = {w for w in _WORD.findall(prompt.lower()) if len(w) >= 4 and w not in _STOPWORDS}
    if not words:
        return []
    scored = []
    for i, line in enumerate(cold_body_lines(entry.body)):
        low = line.lower()
        hits = sum(1 for w in words if w in low)
        if hits and not line.startswith(("Task:", "Result:")):
            scored.append((-hits, i, line))
    return [line for _, _, line in sorted(scored)[:n]]


def _new_facts(lines: list[str], held: set[str]) -> list[str]:
    """``lines`` without those whose every fact the request carries already (``held``, fact
    keys: the brief, an earlier block), nor those repeating an earlier one of ``lines``; a
    section title left with no line under it goes too."""
    from ..recall.seen import carried, fact_keys

    seen = set(held)
    kept: list[str] = []
    for line in lines:
        if carried(line, seen):
            continue
        seen |= fact_keys(line)
        kept.append(line)
    titles = [_is_title(x) for x in kept]
    return [
        x for i, x in enumerate(kept) if not (titles[i] and (i + 1 == len(kept) or titles[i + 1]))
    ]


def superseded_facts(idx: Index, project: str) -> set[str]:
    """Fact keys of what ``project``'s superseded memories said: a past session's summary that
    states one ("Task: The carrier API base URL is api.carrier-a.example. Add the label
    request.") tells an old truth as if it were one; its line is left out, and a hit whose task
    states one goes (a week of use gave it beside the memory of the move)."""
    from ..recall.seen import fact_keys

    return fact_keys("\n".join(idx.superseded_texts(project)))


def _not_retired(lines: list[str], retired: frozenset[str] | set[str]) -> list[str]:
    """``lines`` without those that state a superseded memory's fact (``superseded_facts``)."""
    return [x for x in lines if not _facts_of([x]) & retired] if retired else lines


def _is_title(line: str) -> bool:
    return line.endswith(":\n") and not line.startswith("- ")


def _hold(units: list[Unit], held: set[str] | None) -> list[Unit]:
    """Add the facts of what was packed to ``held`` (what the request carries so far)."""
    if held is not None and units:
        from ..recall.seen import fact_keys

        held |= fact_keys("".join(u.text for u in units))
    return units


def cold_units(
    idx: Index,
    entries: list[Entry],
    prompt: str,
    budget: int,
    max_chars: int,
    heading: str,
    held: set[str] | None = None,
    retired: frozenset[str] | set[str] = frozenset(),
) -> list[Unit]:
    """Each hit's brief line (stored count) and the lines of it the prompt is about, but for
    those the request carries already (``held``: fact keys, updated with what is packed) and
    those that state what is no longer so (``retired``: ``superseded_facts``)."""
    from ..recall.layers import Unit

    count = idx.count_cached
    head = Unit(heading, count(heading))
    from ..recall.seen import fact_keys

    seen = set(held or ())
    groups = []
    for e in entries:
        body = cold_body_lines(e.body)
        if body and retired and _facts_of(body[:1]) & retired:
            continue  # its task states what is no longer so
        # The hit's own line is its summary's start, decisions and all: when it repeats a fact
        # the request carries, the hit is named by its task alone.
        shown = _facts_of(body)  # what its flattened line may hold
        if shown & seen:
            pointer = _counted(idx, cold_pointer(e))
            seen |= fact_keys(pointer.text)
        else:
            pointer = Unit(e.line, e.line_tokens)
            seen |= shown
        lines = _not_retired(_new_facts(_matching_lines(e, prompt, COLD_HIT_LINES), seen), retired)
        seen |= _facts_of(lines)
        groups.append([pointer] + [Unit(x, count(x)) for x in lines])
    return _hold(_pack_groups(head, groups, budget, max_chars, skip_misfits=True), held)


def cold_pointer(entry: Entry) -> str:
    """A cold summary named by its id and first line (its task), nothing more (the Scribe
    counts it when it writes the summary)."""
    lines = cold_body_lines(entry.body)
    first = lines[0].rstrip("\n") if lines else escape_fence(entry.description) or "(summary)"
    return f"- [{entry.id}] {first}\n"


def _counted(idx: Index, text: str) -> Unit:
    from ..recall.layers import Unit

    return Unit(text, idx.count_cached(text))


def _facts_of(lines: list[str]) -> set[str]:
    from ..recall.seen import fact_keys

    return fact_keys("".join(lines))


def wiki_units(idx: Index, entries: list[Entry], budget: int, max_chars: int) -> list[Unit]:
    from ..recall.layers import Unit

    head = Unit(WIKI_HEADING, idx.count_cached(WIKI_HEADING))
    groups = ([Unit(e.line, e.line_tokens)] for e in entries)
    return _pack_groups(head, groups, budget, max_chars, skip_misfits=True)


def latest_cold_units(
    idx: Index,
    project: str,
    exclude_session: str,
    budget: int,
    max_chars: int,
    exclude: frozenset[str] | set[str] = frozenset(),
    held: set[str] | None = None,
    topic: list[str] | None = None,
    after_handoff: bool = False,
) -> list[Unit]:
    """The latest earlier session's summary, but for the lines the request carries already
    (``held``: fact keys, updated with what is packed); with a ``topic`` (a continuation's
    words), only when the summary is about it. ``after_handoff``: the request gives the
    handoff; the summary of the session that wrote it (its files changed name the handoff)
    would tell the same work a second time in the same request, and is left out."""
    entry = latest_cold(idx, project, exclude_session)
    if entry is None or entry.id in exclude:
        return []
    if after_handoff and HANDOFF_FILE in entry.body:
        return []
    heading = cold_latest_heading(entry.id)
    if topic and not is_about(summary_text(entry), topic):
        # "let's sort out the belgian fixtures problem from yesterday" after a session of other
        # work: the newest of the last few sessions that is about it (blind25).
        entry = _recent_about(idx, project, exclude_session, topic)
        if entry is None or entry.id in exclude:
            return []
        heading = f"{COLD_ABOUT_HEADING[:-1]} [{entry.id}]\n"
    lines = _new_facts(cold_body_lines(entry.body), held if held is not None else set())
    lines = _not_retired(lines, superseded_facts(idx, project))
    return _hold(
        _drop_dangling_titles(_pack(heading, lines, idx.count_cached, budget, max_chars)),
        held,
    )


COLD_ABOUT_HEADING = "## Earlier session about this (cold memory)\n"


def _recent_about(idx: Index, project: str, exclude_session: str, topic: list[str]) -> Entry | None:
    """The newest of the project's last few substantial sessions (``open_work``'s lookback)
    whose summary is about ``topic``."""
    from .open_work import LOOKBACK_SESSIONS

    rows = recent_cold(idx, project, exclude_session)[1 : 1 + LOOKBACK_SESSIONS]
    return next((e for e in rows if is_about(summary_text(e), topic)), None)


def worked_on_since(idx: Index, project: str, since: float, text: str) -> bool:
    """Whether a session summarised after ``since`` worked on what the handoff ``text`` left
    (``open_work.related``), or the handoff is older than ``open_work.OPEN_MAX_DAYS``."""
    import time

    from .open_work import OPEN_MAX_DAYS, plan_part, related

    if time.time() - since > OPEN_MAX_DAYS * 86_400:
        return True
    plan = plan_part(text)
    rows = [e for e in idx.entries(source="cold", project=project) if is_text(e)]
    texts = [summary_text(e) for e in rows]
    return any(
        related(plan, t, texts[:i] + texts[i + 1 :])
        for i, (e, t) in enumerate(zip(rows, texts, strict=True))
        if e.mtime_ns / 1e9 > since
    )


# A plan left open by an earlier session: a line and its task, no more.
OPEN_PLAN_HEADING = "## Left open by an earlier session (cold memory)\n"
OPEN_PLAN_BUDGET_TOKENS = 150


def open_plan_units(
    idx: Index,
    project: str,
    exclude_session: str,
    budget: int,
    max_chars: int,
    exclude: frozenset[str] | set[str] = frozenset(),
) -> list[Unit]:
    """The plan an earlier session (not the latest) left at its end ("next time the repack
    part") when no later session worked on it (``open_work``): its task and its plan line."""
    import datetime as dt

    from .open_work import LOOKBACK_SESSIONS, OPEN_MAX_DAYS, plan_line, related

    rows = recent_cold(idx, project, exclude_session)
    texts = [summary_text(e) for e in rows]
    newest = (rows[0].updated or rows[0].created) if rows else ""
    for i, entry in enumerate(rows[1 : 1 + LOOKBACK_SESSIONS], start=1):
        plan = plan_line(entry.body)
        if not plan:
            continue
        day = entry.updated or entry.created
        try:
            old = (dt.date.fromisoformat(newest) - dt.date.fromisoformat(day)).days
        except ValueError:
            old = 0
        if entry.id in exclude or old > OPEN_MAX_DAYS:
            return []
        others = texts[:i] + texts[i + 1 :]
        if any(related(plan, t, others) for t in texts[:i]):
            return []  # taken up since
        task = next((x for x in cold_body_lines(entry.body) if x.startswith("Task:")), "")
        lines = [f"- {day} [{entry.id}]: {unit_text(plan)}"] + ([f"  {task}"] if task else [])
        return _pack(OPEN_PLAN_HEADING, lines, idx.count_cached, budget, max_chars)
    return []


def cold_latest_heading(entry_id: str) -> str:
    return f"{COLD_LATEST_HEADING[:-1]} [{entry_id}]\n"


def handoff_units(
    idx: Index,
    cwd: str,
    *,
    first_only: bool,
    exclude: frozenset[str] | set[str] = frozenset(),
    budget: int = HANDOFF_BUDGET_TOKENS,
    max_chars: int = HANDOFF_MAX_CHARS,
    cfg: dict[str, Any] | None = None,
    topic: list[str] | None = None,
) -> list[Unit]:
    """The working tree's handoff (tiers.handoff), unless the session has it (``exclude`` holds
    its marker) or, with ``first_only``, another session was given this version already. Whole
    when it fits the budget, else a pointer to the file; a stale one is reported, not injected.
    ``topic``: the words a continuation named (``situations.continuation_topic``); a handoff
    about something else is not given. Each unit's ``given`` is the handoff's marker:
    ``deliver`` records what was handed out."""
    from ..base.config import load_config
    from ..recall.layers import Unit
    from .handoff import find_handoff, is_stale, moved_past, read_handoff, was_delivered

    found = find_handoff(cwd)
    if found is None or found.marker in exclude or (first_only and was_delivered(found)):
        return []
    count = idx.count_cached
    written = _day(found.mtime)
    where = escape_fence(str(found.path))
    latest = latest_cold(idx, paths.project_key(cwd))
    latest_at = latest.mtime_ns / 1e9 if latest is not None and latest.mtime_ns > 0 else None
    text = read_handoff(found)
    if topic and text is not None and not is_about(text, topic):
        return []
    if moved_past(found):
        lines = [
            f"- {where} (written {written}) is older than later work in this working tree (a "
            "session that started after it did substantial work): not loaded, since it moved "
            "on. Read it only if it still applies.\n"
        ]
    elif is_stale(found, latest_at, cfg if cfg is not None else load_config()) and (
        text is None or worked_on_since(idx, paths.project_key(cwd), found.mtime, text)
    ):
        lines = [
            f"- {where} (written {written}) is older than the latest session summary "
            f"({_day(latest_at or 0)}): not loaded, since later sessions moved on. Read it "
            "only if it still applies.\n"
        ]
    elif text is None:
        lines = [f"- {where} (written {written}) is too large to load here: read the file.\n"]
    else:
        lines = [f"From {where} (written {written}):\n"]
        # Quoted: the file's own headings must not read as sections of the brief.
        lines += [
            f"{HANDOFF_QUOTE}{escape_fence(line.rstrip())}\n"
            for line in text.splitlines()
            if line.strip()
        ]
    units = _pack(HANDOFF_HEADING, lines, count, budget, max_chars)
    if len(units) < len(lines) + 1:  # it does not fit whole: point at the file instead
        pointer = (
            f"- {where} (written {written}) holds the last session's handoff, longer than its "
            "share here: read it before picking up the work.\n"
        )
        units = _pack(HANDOFF_HEADING, [pointer], count, budget, max_chars)
    return [Unit(u.text, u.tokens, found.marker) for u in units]


def deliver(units: list[Unit], session_id: str) -> list[str]:
    """Record that a session was given the handoff among ``units`` (later sessions are not);
    returns the markers to add to the session's no-repeat record (the handoff's, the hot
    state's)."""
    from .handoff import MARKER_PREFIX, HandoffFile, mark_delivered

    given = sorted({u.given for u in units if u.given})
    for marker in given:
        if not marker.startswith(MARKER_PREFIX):
            continue
        _, rest = marker.split(":", 1)
        path, mtime, size = rest.rsplit(":", 2)
        mark_delivered(HandoffFile(Path(path), float(mtime), int(size)), session_id)
    return given


def _day(epoch: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch).date().isoformat()


HOT_MARKER = "hot:"


def holds_hot(exclude: frozenset[str] | set[str]) -> bool:
    """The conversation holds a hot state already: the session's record has a hot marker
    (until a compaction drops it). Between compactions the conversation holds the work itself,
    so one hot section per request is all it needs."""
    return any(m.startswith(HOT_MARKER) for m in exclude)


def hot_units(
    idx: Index,
    state: dict[str, Any] | None,
    budget: int,
    max_chars: int,
    *,
    snapshot: bool = False,
) -> list[Unit]:
    """The hot state as units, each marked ``hot:<digest>`` for the session's no-repeat record.
    ``snapshot``: as of the last Stop, with the counts the Scribe stored then (a prompt hook
    must not load the tokenizer for a line it has not seen); otherwise as of now, counted
    through the token cache."""
    if not state or not (state["task"] or state["actions"]):
        return []
    stored = state.get("hot_snapshot")
    if snapshot and isinstance(stored, list) and stored:
        counts = {str(t): int(n) for t, n in stored}
        units = _pack(
            HOT_HEADING,
            list(counts),
            lambda text: counts[text] if text in counts else idx.count_cached(text),
            budget,
            max_chars,
        )
    else:
        lines = list(dict.fromkeys(hot_lines(state, read_handoff_section(state["session_id"]))))
        units = _pack(HOT_HEADING, lines, idx.count_cached, budget, max_chars)
    from ..recall.layers import Unit

    marker = HOT_MARKER + _hot_digest(units)
    return [Unit(u.text, u.tokens, marker) for u in units] if units else []


def _room_left(units: list[Unit], budget: int, max_chars: int) -> tuple[int, int]:
    """Tokens and characters still free within ``budget`` and ``max_chars`` after ``units``."""
    return budget - sum(u.tokens for u in units), max_chars - sum(len(u.text) for u in units)


def units_for(
    idx: Index,
    situation: str,
    *,
    prompt: str,
    cwd: str,
    state: dict[str, Any] | None,
    budget: int,
    max_chars: int,
    snapshot: bool = False,
    exclude: frozenset[str] | set[str] = frozenset(),
    topic: list[str] | None = None,
) -> list[Unit]:
    """What the when-to-load table loads for ``situation``, within ``budget`` exact tokens
    (``snapshot``: the hot state as of the last Stop, see ``hot_units``). ``exclude``: ids the
    session already has (an earlier prompt, this prompt's room recall), never repeated.
    ``topic``: what a continuation named; the handoff and the latest session come only when
    they are about it."""
    want_hot, cold, want_wiki = LOAD_TABLE.get(situation, LOAD_TABLE["new"])
    project = paths.project_key(cwd)
    sid = state["session_id"] if state else ""
    units: list[Unit] = []
    held = set(exclude)  # facts the request carries: a cold block does not repeat one

    def left() -> tuple[int, int]:
        return _room_left(units, budget, max_chars)

    # A continuation that names a topic asks for earlier work, not this session's own state,
    # which the conversation holds (SessionStart brings it back on resume and compaction).
    if want_hot and not topic and not holds_hot(exclude):
        tokens_left, chars_left = left()
        units += hot_units(
            idx, state, min(HOT_INJECT_MAX_TOKENS, tokens_left), chars_left, snapshot=snapshot
        )
    if topic and len(topic) == 1 and situation == "resume" and asks_where_we_were(prompt):
        # "what was I doing on the shop yesterday?", "what was i in the middle of on the
        # firmware?": one word names the project, not a topic in it (blind23, blind26; the
        # firmware's sessions all say "firmware"). "where did we leave the flaky login test?"
        # names a topic and gets nothing stale.
        topic = None
    handed: list[Unit] = []
    if situation == "resume":  # "where were we": the handoff, unless the session has it
        tokens_left, chars_left = left()
        handed = handoff_units(
            idx,
            cwd,
            first_only=False,
            exclude=exclude,
            budget=min(HANDOFF_BUDGET_TOKENS, tokens_left),
            max_chars=min(HANDOFF_MAX_CHARS, chars_left),
            topic=topic,
        )
        units += handed
    held |= _facts_of([u.text for u in units])  # the hot state and the handoff, if given
    if cold == "latest":
        from .handoff import holds_handoff

        units += latest_cold_units(
            idx, project, sid, *left(), exclude=exclude, held=held, topic=topic,
            # given now, or earlier in the session (its brief)
            after_handoff=any(u.text.startswith(HANDOFF_QUOTE) for u in handed)
            or holds_handoff(exclude),
        )  # fmt: skip
        if situation == "resume" and not topic and not handed:
            # "where did we leave off?" after a session of other work: the plan still open.
            tokens_left, chars_left = left()
            units += open_plan_units(
                idx, project, sid, min(OPEN_PLAN_BUDGET_TOKENS, tokens_left), chars_left,
                exclude=exclude,
            )  # fmt: skip
    elif cold == "search":
        found = search(
            idx, prompt, limit=MAX_COLD_HITS, project=project, sources=("cold",),
            exclude=exclude, fuzzy=False, live_only=True,
        )  # fmt: skip
        hits = [h.entry for h in found]
        if not hits and situation == "incident":
            # "post-incident review of yesterday's outage" shares no word with the summary of
            # the session that fixed it: the latest sessions are what a review looks back on.
            latest = latest_cold(idx, project, sid)
            hits = [latest] if latest is not None and latest.id not in exclude else []
        retired = superseded_facts(idx, project) if hits else set()
        if want_wiki:  # incident: leave the wiki half the room
            tokens_left, chars_left = left()
            units += cold_units(
                idx, hits, prompt, tokens_left // 2, chars_left // 2, COLD_SEARCH_HEADING, held,
                retired,
            )  # fmt: skip
        else:
            units += cold_units(idx, hits, prompt, *left(), COLD_SEARCH_HEADING, held, retired)
    if want_wiki:
        # Another project's promoted records stay with it (search.own_facts_sql).
        found = search(
            idx, prompt, limit=MAX_WIKI_HITS, home_project=project, sources=("wiki",),
            exclude=exclude, fuzzy=False, live_only=True,
        )  # fmt: skip
        units += wiki_units(idx, [h.entry for h in found], *left())
    return units


def _hot_digest(units: list[Unit]) -> str:
    import hashlib  # lazily: 3 ms of import a hook rarely needs

    return hashlib.sha1("".join(u.text for u in units).encode("utf-8")).hexdigest()[:16]


def prompt_context(
    idx: Index,
    event: HookEvent,
    budget_tokens: int,
    exclude: frozenset[str] | set[str] = frozenset(),
) -> list[Unit]:
    """UserPromptSubmit: the tiers this prompt's situation calls for, within ``budget_tokens``
    (exact cl100k, units not fenced: the caller fences and escapes nothing further). Nothing
    the conversation holds (``exclude``: the session's record) comes again: not an id, not the
    handoff, not a second hot state."""
    prompt = event.prompt
    situation, topic = situation_and_topic(prompt)
    if situation == "new" or budget_tokens <= 0:
        return []
    state = load_state(event.session_id) if event.session_id else None
    return units_for(
        idx,
        situation,
        prompt=prompt,
        cwd=event.cwd,
        state=state,
        budget=budget_tokens,
        max_chars=PROMPT_CONTEXT_MAX_CHARS,
        snapshot=True,
        exclude=exclude,
        topic=topic,
    )


def resume_units(
    idx: Index, event: HookEvent, source: str, exclude: frozenset[str] | set[str] = frozenset()
) -> list[Unit]:
    """SessionStart on resume or compact: this session's hot state comes back (and on resume
    the latest summary of another session of this project, without the facts the request
    carries already), within RESUME_BUDGET_TOKENS; neither when the conversation holds it
    (``exclude``: the session's record, with the fact keys of the brief this start gives)."""
    state = update_session(event)
    cwd = event.cwd
    budget, max_chars = RESUME_BUDGET_TOKENS, RESUME_MAX_CHARS
    units = [] if holds_hot(exclude) else hot_units(idx, state, HOT_INJECT_MAX_TOKENS, max_chars)
    if source in ("resume", "fork"):
        sid = state["session_id"] if state else ""
        left = _room_left(units, budget, max_chars)
        held = set(exclude) | _facts_of([u.text for u in units])
        project = paths.project_key(cwd)
        units += latest_cold_units(idx, project, sid, *left, exclude=exclude, held=held)
    return units
