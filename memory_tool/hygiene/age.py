"""Age checks: memories stale by type or past ``expires:``, and created dates that were inferred
(from ``modified:`` or the file's mtime). The rules themselves live in ``layers`` (``is_stale``,
``is_expired``): the brief and the report must agree on what is stale."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..recall.layers import age_days, is_expired, is_stale
from ..store.entry import Entry
from .report import NOTE, PROBLEM, Finding, is_generated, label


@dataclass
class StaleItem:
    entry: Entry
    age: int
    rule: str
    expired: bool


def stale_items(entries: Iterable[Entry], day: dt.date, cfg: dict[str, Any]) -> list[StaleItem]:
    """Stale and expired memories, oldest first, each with its age and the rule that applies."""
    out = []
    for e in entries:
        if not is_stale(e, day, cfg):
            continue
        age = age_days(e, day)
        if is_expired(e, day):
            out.append(StaleItem(e, age, f"expires: {e.expires}", True))
        else:
            limit = cfg.get("stale_days", {}).get(e.type)
            out.append(StaleItem(e, age, f"{e.type}: stale after {limit} days", False))
    return sorted(out, key=lambda s: (-s.age, s.entry.id))


def inferred_from(e: Entry) -> str:
    if e.updated and e.updated == e.created:
        return "its modified/updated date"
    return "the file's modification time"


def age_findings(entries: Sequence[Entry], day: dt.date, cfg: dict[str, Any]) -> list[Finding]:
    out = []
    for s in stale_items(entries, day, cfg):
        e = s.entry
        inferred = " (created date inferred)" if e.created_inferred else ""
        if s.expired:
            msg = f"expired on {e.expires}; {label(e)}"
        else:
            msg = f"{s.age} days old{inferred}, {s.rule}; {label(e)}"
        data = {"age_days": s.age, "rule": s.rule, "created": e.created}
        data["created_inferred"] = e.created_inferred
        # A session summary past its age is the Scribe's to roll into the wiki, not a person's.
        level = NOTE if is_generated(e) else PROBLEM
        if level == NOTE:
            msg += " (the Scribe's rolling window takes it: `memory-tool scribe --roll`)"
        out.append(Finding("expired" if s.expired else "stale", level, msg, e.id, e.path, data))
    for e in entries:
        # CONTEXT.md is the project's own document, not a memory file: its date is its mtime.
        # A created date that is there but invalid is reported as such (``files``), not here.
        invalid = e.extra.get("invalid")
        if isinstance(invalid, dict) and "created" in invalid:
            continue
        if e.created_inferred and e.source != "context" and e.created:
            src = inferred_from(e)
            out.append(
                Finding(
                    "inferred_date",
                    NOTE,
                    f"no created date: {e.created} inferred from {src}",
                    e.id,
                    e.path,
                    # "fixable" is decided by doctor with the check --fix runs (it reads the
                    # file and YAML, which the SessionStart line must not).
                    {"created": e.created, "inferred_from": src},
                )
            )
    return out
