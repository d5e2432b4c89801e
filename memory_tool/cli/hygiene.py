"""Hygiene commands: doctor (full report, exit 1 on problems, --fix), stale, budget."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..base import paths, tokens
from ..base.config import budget as layer_budget
from ..base.config import load_config, today
from ..hygiene.age import stale_items
from ..hygiene.doctor import diagnose
from ..hygiene.fix import FixResult, fix
from ..hygiene.report import NOTE, PROBLEM, TITLES, Finding, Report, sorted_findings
from ..hygiene.wake_line import wake_units
from ..recall.wake import build_brief
from ..runtime import http_status
from ..store.entry import Entry
from ..store.index import Index, open_index
from ..sync.state import sync_findings
from .app import domain_errors, main
from .options import cwd_option, json_option

# Bars are this many cells wide: fits an 80-column terminal beside the labels and numbers.
BAR_WIDTH = 30
# A check with more findings than this prints a few examples and one line for the rest (a
# 20,000-file room must not print 20,000 lines); --json lists every one.
LISTED_MAX = 10
EXAMPLES_SHOWN = 3


def _short(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home) :] if path.startswith(home + "/") else path


def _print_report(report: Report) -> None:
    """Grouped by check, problems first. The always-load triage is printed for this project
    (or for all when L1 alone is over); other projects' triage lists are in --json."""
    root = report.roots.get(report.project) if report.project else None
    where = f", project {report.project}" if report.project else ""
    where += f" (root {_short(root)})" if root else ""
    click.echo(f"memory-tool doctor: {report.checked} memories checked{where}")
    groups: dict[str, list[Finding]] = {}
    for f in report.findings:
        groups.setdefault(f.check, []).append(f)
    for level, heading in ((PROBLEM, None), (NOTE, "notes")):
        shown = [(c, fs) for c, fs in groups.items() if fs[0].level == level]
        if not shown:
            continue
        if heading:
            click.echo(f"\n-- {heading} --")
        for check, items in shown:
            click.echo(f"\n{TITLES.get(check, check)} ({len(items):,})")
            listed = items if len(items) <= LISTED_MAX else items[:EXAMPLES_SHOWN]
            for f in listed:
                _print_finding(f, report.project)
            if len(listed) < len(items):
                rest = len(items) - len(listed)
                click.echo(
                    f"  … and {rest:,} more like these (`memory-tool doctor --json` lists all)"
                )


def _print_finding(f: Finding, project: str) -> None:
    head = f"{f.entry_id:<9} " if f.entry_id else ""
    click.echo(f"  {head}{f.message}")
    if f.path and f.check not in ("index_missing_file", "index_truncated"):
        click.echo(f"  {'':<9} {_short(f.path)}")
    elif f.path:
        click.echo(f"  {_short(f.path)}")
    if f.check in ("duplicate", "contradiction"):
        other = f.data["paths"][1]
        click.echo(f"  {'':<9} {_short(other)}")
    if f.check == "always_load" and f.data["project"] in (project, "*"):
        for row in f.data["triage"]:
            stale = " (stale)" if row["stale"] else ""
            how = f" -> {row['how']}" if row.get("how") else ""
            click.echo(
                f"    {row['verdict']:<9} {row['id']:<9} {row['layer']} {row['why']:<28} "
                f"{row['name']}{stale}{how}"
            )


def _footer(report: Report) -> str:
    if report.ok:
        notes = f" ({len(report.notes):,} notes)" if report.notes else ""
        return f"\nclean: no problems{notes}"
    n = len(report.problems)
    fixable = sum(1 for f in report.problems if f.data.get("fixable"))
    hint = f"; `memory-tool doctor --fix` repairs {fixable:,} of them safely" if fixable else ""
    return f"\n{n:,} problem{'s' if n != 1 else ''}: {report.summary()}{hint}"


@main.command("doctor")
@json_option
@click.option(
    "--fix",
    "do_fix",
    is_flag=True,
    help="Back up, then add inferred created dates and missing MEMORY.md lines.",
)
@click.option("--no-duplicates", is_flag=True, help="Skip the near-duplicate comparison.")
@cwd_option
@domain_errors
def doctor_cmd(as_json: bool, do_fix: bool, no_duplicates: bool, cwd: str) -> None:
    """Check memory for staleness, drift, duplicates and always-load overflow.

    Exit 0 when clean, 1 when there are problems: what a person should fix (for pre-commit
    hooks and CI). Notes (inferred dates, links to write, paths not checkable, what is off in
    files the tool wrote itself or in the palace's MEMORY.md files) do not fail the run. --fix
    only does safe, reversible things after copying each touched file to
    <state>/backups/<time>/."""
    with open_index() as idx:
        idx.refresh(cwd)
        report = diagnose(idx, cwd, duplicates=not no_duplicates)
        fixed: FixResult | None = None
        if do_fix:
            fixed = fix(idx, report)
            if fixed.actions:
                idx.refresh(cwd)
                report = diagnose(idx, cwd, duplicates=not no_duplicates)
    outside = sync_findings() + http_status.findings()  # what the index does not hold
    report.findings = sorted_findings(outside + report.findings)
    if as_json:
        data = report.to_json()
        if fixed is not None:
            data["fix"] = fixed.to_json()
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        if fixed is not None:
            _print_fix(fixed)
        _print_report(report)
        click.echo(_footer(report))
    sys.exit(0 if report.ok else 1)


def _print_fix(fixed: FixResult) -> None:
    if not fixed.actions and not fixed.skipped:
        click.echo("fix: nothing safe to repair\n")
        return
    for a in fixed.actions:
        click.echo(f"fixed: {_short(a['path'])}: {a['action']}")
    for s in fixed.skipped:
        click.echo(f"skipped: {_short(s['path'])}: {s['reason']}")
    if fixed.backup:
        where = _short(str(fixed.backup))
        click.echo(f"backup: {where} (manifest.json maps each file to its copy)")
    click.echo("")


@main.command("stale")
@json_option
@domain_errors
def stale_cmd(as_json: bool) -> None:
    """List stale and expired memories, oldest first, with their age and the rule that applies.

    Staleness ages per type come from config.yaml (stale_days); an `expires:` date wins.
    A stale memory still loads, at a tenth of its weight: review it, update it or delete it."""
    with open_index() as idx:
        idx.refresh()
        items = stale_items(idx.memories(), today(), load_config())
    if as_json:
        rows = [
            {
                "id": s.entry.id,
                "type": s.entry.type,
                "age_days": s.age,
                "rule": s.rule,
                "expired": s.expired,
                "created": s.entry.created,
                "created_inferred": s.entry.created_inferred,
                "name": s.entry.name,
                "path": s.entry.path,
            }
            for s in items
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for s in items:
        e = s.entry
        created = f"{e.created}{'~' if e.created_inferred else ' '}"
        click.echo(f"{e.id:<9} {e.type:<9} {s.age:>5}d  {created:<11} {s.rule:<30} {e.name[:40]}")
    if not items:
        click.echo("no stale memories")
    elif any(s.entry.created_inferred for s in items):
        click.echo("~ created date inferred (from modified:, or the file's mtime)")


# --- budget --------------------------------------------------------------------------------------


def _bar(used: int, budget: int) -> str:
    full, empty = "█", "░"
    enc = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        (full + empty).encode(enc)
    except (UnicodeEncodeError, LookupError):
        full, empty = "#", "."
    if budget <= 0:
        return empty * BAR_WIDTH
    cells = min(BAR_WIDTH, round(BAR_WIDTH * used / budget))
    if used and not cells:
        cells = 1
    return full * cells + empty * (BAR_WIDTH - cells)


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def _row(name: str, used: int | None, budget: int, note: str) -> dict[str, Any]:
    return {"layer": name, "tokens": used, "budget": budget, "note": note}


def _ids(entries: list[Entry]) -> list[dict[str, str]]:
    return [{"id": e.id, "name": " ".join((e.name or e.description).split())[:50]} for e in entries]


def _l3(
    idx: Index, prompt: str | None, room: str | None, cwd: str, loaded: set[str]
) -> dict[str, Any]:
    """Room recall (the recall module) for a sample prompt, or for one room, as the first
    prompt of a session would get it (what the brief already holds is not repeated)."""
    budget = layer_budget(load_config(), "l3")
    if not prompt and not room:
        return {"row": _row("L3", None, budget, "give --prompt TEXT or --room R"), "omitted": []}
    from ..recall.room import L3_MAX_CHARS, room_recall

    kwargs: dict[str, Any] = {"budget": budget, "exclude": loaded, "max_chars": L3_MAX_CHARS}
    if room:
        kwargs["rooms"] = [(room, 1.0)]
    result = room_recall(idx, prompt or room or "", cwd, **kwargs)
    names = ", ".join(f"{r} {score:.2f}" for r, score in result.rooms) or "no room matched"
    note = f"{names}: {_entries(len(result.picked))}"
    if result.omitted:
        note += f", {len(result.omitted)} deferred"
    if result.rooms and loaded:  # the hook never repeats what the brief holds: say so
        again = room_recall(idx, prompt or room or "", cwd, **(kwargs | {"exclude": set()}))
        repeated = {e.id for e in again.picked} & loaded
        if repeated:
            note += f" ({len(repeated)} more already in the brief)"
    row = _row("L3", result.tokens, result.budget, note)
    return {"row": row, "omitted": _ids(list(result.omitted))}


def _hot(idx: Index, session: str | None) -> dict[str, Any]:
    """The hot tier: what SessionStart re-injects of a session's working state on resume or
    after compaction (the tiers module), for the given session or the latest one."""
    from ..tiers import hot, inject

    budget = inject.HOT_INJECT_MAX_TOKENS
    hot_dir = paths.palace_dir("hot")
    if session:
        sid = session
    else:
        states = sorted(hot_dir.glob("*.json"), key=lambda p: p.stat().st_mtime)
        if not states:
            return _row("hot", None, budget, "no session has hot state yet")
        sid = states[-1].stem
    state = hot.load_state(sid)
    if state is None:
        return _row("hot", None, budget, f"no hot state for session {sid}")
    units = inject.hot_units(idx, state, budget, inject.RESUME_MAX_CHARS)
    return _row("hot", sum(u.tokens for u in units), budget, f"session {sid}, on resume")


@main.command("budget")
@click.option("--prompt", help="A sample prompt: show what L3 room recall would add for it.")
@click.option("--room", help="Show L3 for this room.")
@click.option("--session", help="Hot tier of this session id (default: the latest).")
@cwd_option
@json_option
@domain_errors
def budget_cmd(
    prompt: str | None, room: str | None, session: str | None, cwd: str, as_json: bool
) -> None:
    """What each layer holds against its token budget, as a bar chart, and what was deferred.

    L1 and L2 are the SessionStart brief; L3 is room recall for --prompt or --room; the hot
    tier is a session's working state. Exact cl100k counts of the text actually emitted."""
    with open_index() as idx:
        idx.refresh(cwd)  # all of it: L3 reads rooms that the wake-up refresh skips
        brief = build_brief(idx, cwd, extra=wake_units(idx, cwd))  # as the hook does
        l1, l2 = brief.layers["L1"], brief.layers["L2"]
        rows = []
        deferred: dict[str, list[dict[str, str]]] = {}
        for layer in (l1, l2):
            note = _entries(len(layer.picked))
            if layer.omitted:
                note += f", {len(layer.omitted)} deferred"
            rows.append(_row(layer.name, layer.tokens, layer.budget, note))
            deferred[layer.name] = _ids(layer.omitted)
        loaded = {e.id for e in l1.picked + l2.picked}
        l3 = _l3(idx, prompt, room, cwd, loaded)
        rows.append(l3["row"])
        deferred["L3"] = l3["omitted"]
        rows.append(_hot(idx, session))
        frame, total = brief.frame_tokens, brief.tokens
    if as_json:
        data = {
            "project": brief.project,
            "tokenizer": tokens.method(),
            "layers": rows,
            "frame_tokens": frame,
            "brief_tokens": total,
            "deferred": deferred,
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(f"Budget for {brief.project} ({tokens.method()} tokens)")
    for r in rows:
        used = r["tokens"]
        shown = "-" if used is None else str(used)
        amount = f"{shown}/{r['budget']}"
        click.echo(f"{r['layer']:<4} {_bar(used or 0, r['budget'])} {amount:>10}  {r['note']}")
    hygiene = " and hygiene line" if brief.extra_units else ""
    click.echo(f"brief: {total} tokens at SessionStart (L1 + L2 + {frame} of frame{hygiene})")
    for name, items in deferred.items():
        if items:
            listed = "; ".join(f"{d['id']} {d['name']}" for d in items)
            click.echo(f"deferred from {name}: {listed}")
