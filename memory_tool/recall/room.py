"""L3, room recall: the memories of the room(s) a prompt is about, ranked by relevance to the
prompt, then importance and recency, packed under the L3 budget.

Hook path: imports no YAML, tokenizer, click or rapidfuzz.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..base import paths
from ..base.privacy import escape_fence, strip_injected
from ..store.search import room_members, search
from .layers import Layer, Unit, rank

if TYPE_CHECKING:
    from ..store.entry import Entry
    from ..store.index import Index

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

# L3's share of a prompt hook's output, which must stay under Claude Code's 10,000-character
# cap: L4 (runtime.prompt_submit) has its own share, the frame and JSON envelope the rest.
L3_MAX_CHARS = 5_200

# When this project's memories are among a room's, L3 says which are whose: a room memory added
# from inside a project (or a memory of the project's own folder filed under the room) is that
# project's; the rest are for every project.
PROJECT_HEADING = "### For this project\n"
GLOBAL_HEADING = "### For every project\n"

# A project's own memories that no layer loads by themselves come with a prompt about them
# (store.search.project_matches): at most this many, one line each (a captured reference or
# fact is one sentence, 20-40 tokens), and within this share of L3 so that a prompt's rooms
# keep most of it.
PROJECT_MATCH_MAX = 3
PROJECT_MATCH_TOKENS = 200
PROJECT_MATCH_HEADING = "## This project's memories about this prompt (L3)\n"

# What one layer contributes to a prompt's context (L3 also records the rooms that chose it).
RecallResult = Layer


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
    index_hooks: Callable[[], dict[str, str]] | None = None,
    own_matches: bool = True,
) -> RecallResult:
    """The memories of the room(s) a prompt is about, ranked by relevance to the prompt, then
    importance and recency, packed under ``budget``: full text for the best where it fits,
    one line for the rest; and the project's own memories the prompt is about that no layer
    loads by themselves (``project_units``), first within PROJECT_MATCH_TOKENS. Cold summaries
    are no room's memories: a past session's log comes in through the situations (resuming, a
    recurring bug) and deep search, not with every prompt. No room above the threshold means no
    room's memories, unless the session's ``previous`` (room, time) carries over to a follow-up
    (followup.choose_rooms; ``now`` is the time to judge it by). ``rooms``: recall these
    rooms only (no project matches). ``cfg``: the configuration when the caller has it already
    (the hook does). ``index_hooks``: when the agent loads the project's MEMORY.md itself, its
    lines by file (``store.tree.memory_index_hooks``, read only when a candidate is a memory
    Claude Code wrote): such a memory whose line says its fact already is left out, as L2
    leaves it out (``layers.stated_by_index``). ``own_matches``: False leaves the project matches
    to deep recall (a past question gets them as L4's ids and summaries, not as lines)."""
    from ..store.rooms import compiled_rooms

    text = strip_injected(prompt)
    compiled = compiled_rooms()
    carried = False
    if rooms is not None:
        chosen = rooms
    else:
        from .followup import choose_rooms

        chosen, carried = choose_rooms(text, previous, now, MAX_ROOMS, compiled)
    skip = set(exclude or ())
    own: RecallResult | None = None
    if rooms is None and own_matches:
        own = project_units(
            idx, text, cwd, budget=min(PROJECT_MATCH_TOKENS, budget), max_chars=max_chars,
            exclude=skip, rooms={r for r, _ in chosen}, index_hooks=index_hooks,
        )  # fmt: skip
        skip |= {e.id for e in own.picked}
        budget -= own.tokens
        max_chars -= sum(len(u.text) for u in own.units)
    result = _rooms_recall(
        idx, text, cwd, chosen, carried, compiled, budget=budget, max_chars=max_chars,
        exclude=skip, cfg=cfg, index_hooks=index_hooks,
    )  # fmt: skip
    if own is not None and own.units:
        result.budget += own.tokens
        result.units += own.units
        result.picked += own.picked
    return result


def project_units(
    idx: Index,
    text: str,
    cwd: str,
    *,
    budget: int,
    max_chars: int,
    exclude: set[str],
    rooms: set[str] | frozenset[str] = frozenset(),
    index_hooks: Callable[[], dict[str, str]] | None = None,
) -> RecallResult:
    """The project's own memories ``text`` is about that the session lacks (``exclude``: what
    the brief and earlier prompts gave, by id; a line whose facts the session holds under
    another id too), one line each (store.search.project_matches): how a reference, a fact
    with no room or an open item past L2's budget reaches the prompt about it. A memory of one
    of the prompt's ``rooms`` is left to room recall, under its room's heading. Nothing for a
    closing or an acknowledgement ("thanks, that fixed it")."""
    from .followup import is_ack, is_closing

    result = RecallResult("L3", budget)
    if budget <= 0 or is_closing(text) or is_ack(text):
        return result
    from ..store.search import project_matches

    hits = project_matches(
        idx, text, project=paths.project_key(cwd), exclude=exclude, limit=PROJECT_MATCH_MAX
    )
    if not hits:
        return result
    from .seen import carried

    count = idx.count_cached
    heading = Unit(PROJECT_MATCH_HEADING, count(PROJECT_MATCH_HEADING))
    units = [heading]
    used, chars = heading.tokens, len(heading.text)
    for e in _not_in_index(idx.current([h.entry for h in hits]), index_hooks):
        if e.room in rooms or carried(e.line, exclude):  # its room's; the brief holds it
            continue
        if used + e.line_tokens <= budget and chars + len(e.line) <= max_chars:
            units.append(Unit(e.line, e.line_tokens))
            used += e.line_tokens
            chars += len(e.line)
            result.picked.append(e)
        else:
            result.omitted.append(e)
    if result.picked:
        result.units = units
    return result


def _not_in_index(
    entries: list[Entry], index_hooks: Callable[[], dict[str, str]] | None
) -> list[Entry]:
    """``entries`` but the memories Claude Code wrote whose MEMORY.md line, which the agent
    loads into every request itself, states their fact already: one fact once per request."""
    if index_hooks is None or not any(e.client_written for e in entries):
        return entries
    hooks = index_hooks()
    if not hooks:
        return entries
    from .layers import stated_by_index

    return [e for e in entries if not stated_by_index(e, hooks)]


def _rooms_recall(
    idx: Index,
    text: str,
    cwd: str,
    chosen: list[tuple[str, float]],
    carried: bool,
    compiled: Any,
    *,
    budget: int,
    max_chars: int,
    exclude: set[str],
    cfg: dict[str, Any] | None,
    index_hooks: Callable[[], dict[str, str]] | None = None,
) -> RecallResult:
    """The memories of the ``chosen`` rooms, ranked and packed (see ``room_recall``)."""
    from ..base.config import load_config, today
    from ..store.classify import instincts_for
    from ..store.entry import is_live
    from ..store.rooms import load_instinct_records

    result = RecallResult("L3", budget)
    result.rooms = chosen
    if not chosen:
        return result
    names = [r for r, _ in chosen]
    skip = exclude
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
        live_only=True,
        # A task's time words ("the login bug from yesterday") do not reorder a room's rules.
        intent=False,
    )
    matched = [h.entry for h in hits if h.entry.type != "user"]
    ids = {e.id for e in matched}
    members = room_members(idx, names, home_project=home, limit=ROOM_FILL)
    rest = [e for e in members if e.id not in ids and e.id not in skip]
    ranked = matched + rank(rest, today(), cfg if cfg is not None else load_config())
    # As the files are now: an edited memory is shown as edited, a deleted one not at all.
    ranked = [e for e in idx.current(ranked) if e.room in names and is_live(e, today())]
    ranked = _not_in_index(ranked, index_hooks)
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

    # Sub-headings only when some candidate is this project's own: a room of memories for
    # every project reads as it always did.
    labelled = any(e.project for e in ranked)
    groups: dict[bool, list[Unit]] = {True: [], False: []}  # this project's -> its units
    group_heads = {True: PROJECT_HEADING, False: GLOBAL_HEADING}
    for i, e in enumerate(ranked):
        mine = bool(e.project)
        head_cost = 0
        if labelled and not groups[mine]:
            head_cost = count(group_heads[mine])
        options = [Unit(full_text(e), e.full_tokens)] if i < FULL_TEXT_TOP else []
        options.append(Unit(e.line, e.line_tokens))
        for unit in options:
            cost = unit.tokens + head_cost
            size = len(unit.text) + (len(group_heads[mine]) if head_cost else 0)
            if used + cost <= budget and chars + size <= max_chars:
                if head_cost:
                    groups[mine].append(Unit(group_heads[mine], head_cost))
                groups[mine].append(unit)
                used += cost
                chars += size
                result.picked.append(e)
                break
        else:
            result.omitted.append(e)
    if labelled and not groups[True]:  # none of this project's fitted: no labels needed
        groups[False] = groups[False][1:]
    units = [heading] + groups[True] + groups[False]
    if not result.picked and not learned:
        return result
    result.units = units + learned
    return result
