"""Why the wake-up brief holds what it holds: each L1 and L2 entry with the reason it is there
(pinned, critical rule, rule, importance x decay), and what fell off and why (the entry cap, the
token budget, the same text kept elsewhere, an expiry).

The brief itself decides (``wake.build_brief``): what it picked and what it left out are taken
from it as they are; this module only says why. Not on the hook path."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..base.config import ALWAYS_LOAD_MAX, load_config, today
from ..base.record import field, record
from ..store.entry import PRIORITY_IRREVERSIBLE, PRIORITY_PINNED, PRIORITY_RULE, Entry
from ..store.index import Index
from ..store.similar import either_repeats, gist_of
from .layers import (
    Layer,
    Unit,
    age_days,
    is_expired,
    is_stale,
    l1_candidates,
    l2_background,
    l2_candidates,
    rank,
    weight,
)
from .wake import Brief, build_brief

# Why an entry ranks where it does, by the priority group the brief sorts on first.
PRIORITY_REASONS = {
    PRIORITY_PINNED: "pinned (always: true)",
    PRIORITY_IRREVERSIBLE: "critical rule (irreversible consequences)",
    PRIORITY_RULE: "rule",
}
WEIGHT_REASON = "importance x decay"

# Why a candidate is not in the brief.
DROP_CAP = "cap"  # the always-load entry cap was reached
DROP_BUDGET = "budget"  # its line did not fit the layer's token or character budget
DROP_DUPLICATE = "duplicate"  # the same fact is loaded from elsewhere
DROP_EXPIRED = "expired"  # past its expires: date


@record
class Row:
    """One candidate of a layer: loaded or not, and why."""

    entry: Entry
    layer: str
    loaded: bool
    reason: str  # PRIORITY_REASONS or WEIGHT_REASON
    weight: float
    formula: str  # how the weight came about, for a person
    age: int
    stale: bool
    dropped: str = ""  # "" when loaded, else one of the DROP_ kinds
    detail: str = ""  # the sentence a person reads about why it fell off


@record
class Explanation:
    brief: Brief
    project: str
    cap: int
    rows: dict[str, list[Row]] = field(default_factory=dict)  # layer -> rank order
    dropped: list[Row] = field(default_factory=list)  # candidates the packer never saw

    @property
    def loaded(self) -> int:
        return sum(len(layer.picked) for layer in self.brief.layers.values())

    def to_json(self) -> dict[str, Any]:
        def row(r: Row) -> dict[str, Any]:
            return {
                "id": r.entry.id,
                "layer": r.layer,
                "loaded": r.loaded,
                "reason": r.reason,
                "weight": round(r.weight, 4),
                "formula": r.formula,
                "age_days": r.age,
                "stale": r.stale,
                "dropped": r.dropped or None,
                "detail": r.detail,
            }

        return {
            "project": self.project,
            "cap": self.cap,
            "loaded": self.loaded,
            "layers": {name: [row(r) for r in rows] for name, rows in self.rows.items()},
            "dropped": [row(r) for r in self.dropped],
        }


def reason_of(e: Entry) -> str:
    return PRIORITY_REASONS.get(e.priority, WEIGHT_REASON)


def formula_of(e: Entry, day: dt.date, cfg: dict[str, Any]) -> str:
    """``importance 4 x (1 + 12 days)^-0.3 = 1.85`` (and the stale factor when it applies)."""
    decay = float(cfg.get("decay", {}).get(e.type, 0.3))
    text = f"importance {e.importance} x (1 + {age_days(e, day)} days)^-{decay:g}"
    if is_stale(e, day, cfg):
        text += " x 0.1 (stale)"
    return f"{text} = {weight(e, day, cfg):.2f}"


def _row(e: Entry, layer: str, loaded: bool, day: dt.date, cfg: dict[str, Any]) -> Row:
    return Row(
        entry=e,
        layer=layer,
        loaded=loaded,
        reason=reason_of(e),
        weight=weight(e, day, cfg),
        formula=formula_of(e, day, cfg),
        age=age_days(e, day),
        stale=is_stale(e, day, cfg),
    )


def _layer_rows(
    layer: Layer, max_entries: int, cap: int, day: dt.date, cfg: dict[str, Any]
) -> list[Row]:
    """The layer's candidates in the order the packer took them, each loaded or not, and for
    those left out whether the entry cap or the budget stopped them."""
    picked = {id(e) for e in layer.picked}
    order = {id(e): n for n, e in enumerate(rank([*layer.picked, *layer.omitted], day, cfg))}
    seen = sorted([*layer.picked, *layer.omitted], key=lambda e: order.get(id(e), len(order)))
    left = max(0, layer.budget - layer.tokens)
    rows: list[Row] = []
    loaded_before = 0
    for e in seen:
        row = _row(e, layer.name, id(e) in picked, day, cfg)
        if row.loaded:
            loaded_before += 1
        elif loaded_before >= max_entries:
            row.dropped = DROP_CAP
            row.detail = f"the {cap}-entry always-load cap was reached"
            if max_entries != cap:
                row.detail += f" ({max_entries} left for {layer.name} after L1)"
        else:
            row.dropped = DROP_BUDGET
            row.detail = (
                f"did not fit {layer.name}'s budget: its line is {e.line_tokens} tokens, "
                f"{left} of {layer.budget} were left"
            )
        rows.append(row)
    return rows


def _dropped(pool: Sequence[Entry], layer: Layer, day: dt.date, cfg: dict[str, Any]) -> list[Row]:
    """Candidates the packer never saw: expired ones, and the same fact loaded from elsewhere."""
    shown = {e.id for e in [*layer.picked, *layer.omitted]}
    kept = {e.dedupe_key: e for e in [*layer.picked, *layer.omitted]}
    rows = []
    for e in pool:
        if e.id in shown:
            continue
        row = _row(e, layer.name, False, day, cfg)
        if is_expired(e, day):
            row.dropped, row.detail = DROP_EXPIRED, f"expired on {e.expires}"
        else:
            twin = kept.get(e.dedupe_key)
            row.dropped = DROP_DUPLICATE
            if twin is not None:
                row.detail = f"the same text is in the brief's candidates as [{twin.id}]"
            else:
                mine = gist_of(e)
                holder = next((k for k in kept.values() if either_repeats(mine, gist_of(k))), None)
                row.detail = "a near-duplicate of " + (
                    f"[{holder.id}], which says at least as much" if holder else "another candidate"
                )
        rows.append(row)
    return rows


def explain_brief(idx: Index, cwd: str | Path, extra: list[Unit] | None = None) -> Explanation:
    """The brief a session started in ``cwd`` would get (``extra``: the hygiene line SessionStart
    adds, as the hook passes it), with the reason for each entry and for each one left out. The
    caller refreshes the index first."""
    cfg = load_config()
    day = today()
    brief = build_brief(idx, cwd, extra=extra)
    cap = int(cfg.get("always_load_max", ALWAYS_LOAD_MAX))
    l1, l2 = brief.layers["L1"], brief.layers["L2"]
    out = Explanation(brief=brief, project=brief.project, cap=cap)
    out.rows["L1"] = _layer_rows(l1, cap, cap, day, cfg)
    out.rows["L2"] = _layer_rows(l2, max(0, cap - len(l1.picked)), cap, day, cfg)
    out.dropped = _dropped(l1_candidates(idx, brief.project), l1, day, cfg)
    out.dropped += _dropped(
        l2_candidates(idx, brief.project) + l2_background(idx, brief.project, cfg), l2, day, cfg
    )
    return out


# --- a prompt's room recall --------------------------------------------------------------------

CHOSEN = "chosen"
BELOW_THRESHOLD = "below threshold"
BACKGROUND = "background room"
BACKGROUND_WON = "outranked by a background room"  # the prompt is general programming
NOT_TAKEN = "not taken"  # passes, but L3 takes at most MAX_ROOMS rooms


@record
class RoomScore:
    room: str
    score: float
    terms: list[str]
    verdict: str  # CHOSEN, BELOW_THRESHOLD, BACKGROUND, BACKGROUND_WON or NOT_TAKEN


@record
class PromptPreview:
    """What the first prompt of a session would bring in by room recall (L3), and why."""

    prompt: str
    scores: list[RoomScore]
    recall: Layer
    threshold: float
    ignored: list[str]  # words of the prompt rooms.yaml says are not keywords


def preview_prompt(
    idx: Index, prompt: str, cwd: str | Path, exclude: set[str] | None = None
) -> PromptPreview:
    """Which room(s) ``prompt`` maps to (every room that scored, with the words that matched and
    the verdict) and exactly what L3 would inject for it as a session's first prompt in ``cwd``
    (``exclude``: what the brief already holds; the hook never repeats it)."""
    from ..base.config import budget
    from ..store.classify import (
        ROOM_THRESHOLD,
        classify_detail,
        false_friends_in,
        injectable,
        injects,
    )
    from ..store.rooms import compiled_rooms
    from .room import L3_MAX_CHARS, room_recall

    compiled = compiled_rooms()
    detail = classify_detail(prompt, compiled)
    recall = room_recall(
        idx,
        prompt,
        str(cwd),
        budget=budget(load_config(), "l3"),
        max_chars=L3_MAX_CHARS,
        exclude=exclude or set(),
    )
    chosen = {r for r, _ in recall.rooms}
    passing = {m.room for m in injectable(detail, compiled)}
    scores = []
    for m in detail:
        if m.room in chosen:
            verdict = CHOSEN
        elif m.score < ROOM_THRESHOLD:
            verdict = BELOW_THRESHOLD
        elif not injects(m.room, compiled):
            verdict = BACKGROUND
        elif m.room not in passing:
            verdict = BACKGROUND_WON
        else:
            verdict = NOT_TAKEN
        scores.append(RoomScore(m.room, m.score, list(m.terms), verdict))
    return PromptPreview(
        prompt=prompt,
        scores=scores,
        recall=recall,
        threshold=ROOM_THRESHOLD,
        ignored=false_friends_in(prompt, compiled),
    )
