"""Always-load discipline: more than ``always_load_max`` entries in L1+L2 (the brief drops the
rest unseen), with a triage list ranked by the irreversible-consequence rule."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from ..base.config import ALWAYS_LOAD_MAX
from ..recall.layers import dedupe, is_stale, l1_candidates, l2_candidates, rank, weight
from ..store.entry import IRREVERSIBLE_RE, Entry, is_critical
from ..store.index import Index
from .report import PROBLEM, Finding, label

_CONSEQUENCE_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("money loss", ("money", "charg", "double")),
    ("downtime", ("production", "prod", "outage", "downtime")),
    ("security", ("secret", "credential", "api key", "password", "breach", "leak", "pii", "gdpr")),
)
CONSEQUENCES = ("data loss", "money loss", "downtime", "security")


def consequence(e: Entry) -> str:
    """Which irreversible consequence forgetting this memory risks ('' for none): only a
    critical rule has one (``is_critical``, as the brief decides), named from the same
    ``IRREVERSIBLE_RE``."""
    if not is_critical(e):
        return ""
    m = IRREVERSIBLE_RE.search(f"{e.name} {e.description} {e.body}")
    if m is None:
        return ""
    word = m.group(0).lower()
    for name, stems in _CONSEQUENCE_WORDS:
        if word.startswith(stems):
            return name
    return "data loss"


VERDICTS = ("keep", "profile", "on-demand")


def triage(
    l1: Sequence[Entry], l2: Sequence[Entry], day: dt.date, cfg: dict[str, Any]
) -> list[dict[str, Any]]:
    """The always-load set ordered for a person to cut, by the irreversible-consequence rule:
    what can cause data loss, money loss, downtime or a security breach stays ("keep", by
    consequence); the user's profile facts (L1) are next ("profile": keep those that shape
    every session); the rest can move to on-demand. Within a verdict, the brief's own order."""
    rows = []
    for pos, (layer, e) in enumerate([("L1", e) for e in l1] + [("L2", e) for e in l2]):
        cons = consequence(e)
        verdict = "keep" if cons else ("profile" if e.type == "user" else "on-demand")
        row: dict[str, Any] = {
            "id": e.id,
            "layer": layer,
            "verdict": verdict,
            "why": cons or ("user profile" if verdict == "profile" else "no irreversible risk"),
            "name": label(e),
            "pinned": e.always,
            "stale": is_stale(e, day, cfg),
            "weight": round(weight(e, day, cfg), 3),
            "path": e.path,
        }
        if e.always and not cons:
            row["how"] = "remove `always: true`"
        elif verdict == "profile":
            row["how"] = "keep if it shapes every session, else delete or move to rooms/<room>/"
        elif verdict == "on-demand":
            row["how"] = "move the file to rooms/<room>/ (it then loads with its topic)"
        order = CONSEQUENCES.index(cons) if cons else 0
        rows.append((VERDICTS.index(verdict), order, pos, row))
    return [r[3] for r in sorted(rows, key=lambda r: r[:3])]


def always_load_cap(cfg: dict[str, Any]) -> int:
    return int(cfg.get("always_load_max", ALWAYS_LOAD_MAX))


def as_loaded(entries: Sequence[Entry], day: dt.date, cfg: dict[str, Any]) -> list[Entry]:
    """A layer's candidates ranked and de-duplicated, as the brief sees them."""
    return dedupe(rank(entries, day, cfg))


def overflow_finding(
    l1: list[Entry],
    l2: list[Entry],
    project: str,
    day: dt.date,
    cfg: dict[str, Any],
    with_triage: bool,
) -> Finding | None:
    """``l1``/``l2``: the layers' ranked, de-duplicated candidates (as the brief sees them)."""
    cap = always_load_cap(cfg)
    n = len(l1) + len(l2)
    if n <= cap:
        return None
    rows = triage(l1, l2, day, cfg) if with_triage else []
    keep = sum(bool(consequence(e)) for e in [*l1, *l2])
    profile = sum(1 for e in l1 if e.type == "user" and not consequence(e))
    msg = (
        f"{n} always-loaded entries for {project} (L1 {len(l1)} + L2 {len(l2)}; max {cap}): "
        f"{n - cap} never reach the brief; keep {keep} with irreversible consequences, review "
        f"{profile} profile facts, move {n - keep - profile} to on-demand"
    )
    data = {"project": project, "count": n, "max": cap, "keep": keep, "triage": rows}
    return Finding("always_load", PROBLEM, msg, data=data)


def always_load_findings(
    idx: Index, projects: Iterable[str], day: dt.date, cfg: dict[str, Any]
) -> list[Finding]:
    """One finding, with its triage, per project over the cap; only one in all when L1 alone
    is over."""
    cap = always_load_cap(cfg)
    l1 = as_loaded(l1_candidates(idx), day, cfg)
    if len(l1) > cap:
        # L1 alone is over: every project overflows for the same reason; say it once.
        found = overflow_finding(l1, [], "*", day, cfg, with_triage=True)
        if found is not None:
            found.message = (
                f"L1 alone holds {len(l1)} always-loaded entries (max {cap}): "
                + (found.message.split(": ", 1)[1])
            )
        return [found] if found else []
    out = []
    for project in projects:
        l2 = as_loaded(l2_candidates(idx, project), day, cfg)
        found = overflow_finding(l1, l2, project, day, cfg, with_triage=True)
        if found is not None:
            out.append(found)
    return out
