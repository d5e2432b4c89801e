"""Tier commands: context, hot, scribe, backfill, handoff, inbox (list / accept / reject)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..base import paths
from ..base.errors import MemoryToolError
from ..store.index import open_index
from ..tiers import handoff as handoff_mod
from ..tiers import inbox as inbox_mod
from ..tiers import scribe as scribe_mod
from ..tiers.context import context_heading, situation_context, state_for
from ..tiers.hot import hot_path, latest_state, load_state, render_hot
from ..tiers.situations import SITUATIONS
from .app import domain_errors, main
from .options import cwd_option, json_option, publish_team, team_option


@main.command()
@click.option(
    "--situation",
    type=click.Choice(list(SITUATIONS)),
    help="A row of the when-to-load table; detected from --prompt when omitted.",
)
@click.option("--prompt", default="", help="A prompt to detect the situation and search with.")
@click.option("--session", help="Session id for the hot tier (default: this project's latest).")
@click.option("--budget", type=click.IntRange(0), help="Token budget (default: budgets.l4_tokens).")
@cwd_option
@json_option
@domain_errors
def context(
    situation: str | None,
    prompt: str,
    session: str | None,
    budget: int | None,
    cwd: str,
    as_json: bool,
) -> None:
    """Print what the prompt hook would load from the hot, cold and wiki tiers.

    \b
    situation  hot                        cold                      wiki
    new        (in the conversation)      -                         -
    resume     hot file, the handoff      latest of this project    -
    debug      (in the conversation)      search                    -
    spec       (in the conversation)      -                         matching records
    onboard    (in the conversation)      -                         matching records
    incident   (in the conversation)      search                    matching records
    """
    with open_index() as idx:
        ctx = situation_context(
            idx, situation=situation, prompt=prompt, session=session, budget=budget, cwd=cwd
        )
    if as_json:
        data = {
            "situation": ctx.situation,
            "loads": {"hot": ctx.hot, "cold": ctx.cold or None, "wiki": ctx.wiki},
            "session": ctx.session,
            "tokens": ctx.tokens,
            "budget": ctx.budget,
            "text": ctx.text,
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(context_heading(ctx))
    click.echo("---")
    click.echo(ctx.text or "(nothing to load)\n", nl=False)
    click.echo("---")
    click.echo(f"{ctx.tokens}/{ctx.budget} tokens, {len(ctx.text)} characters")


@main.command()
@click.option("--session", help="Session id (default: this project's most recent session).")
@cwd_option
@domain_errors
def hot(session: str | None, cwd: str) -> None:
    """Show a session's hot file: current task, decisions, last actions, blockers, handoff."""
    state = state_for(session, cwd)
    if state is None:
        click.echo("no hot memory for this project yet (the hooks write it as a session runs)")
        return
    path = hot_path(state["session_id"])
    try:
        click.echo(path.read_text(encoding="utf-8"), nl=False)
    except OSError:
        click.echo(render_hot(state), nl=False)
    click.echo(f"---\nfile: {path}")


@main.command()
@click.option("--session", help="Session id to put in the template.")
@cwd_option
@domain_errors
def handoff(session: str | None, cwd: str) -> None:
    """Print the handoff template and where the handoff goes (thoughts/HANDOFF.md)."""
    target = handoff_mod.target(cwd)
    state = load_state(session) if session else latest_state(cwd)
    sid = session or (state["session_id"] if state else "")
    # Where it goes on stderr, the template alone on stdout: `handoff > thoughts/HANDOFF.md`.
    click.echo(f"Write the handoff to {target}", err=True)
    if target.exists():
        click.echo("(it exists: replace it with this session's handoff)", err=True)
    click.echo(handoff_mod.render_template(cwd, sid), nl=False)


def _resolve_target(target: str | None, cwd: str, transcript_cwd: bool) -> str:
    """A session id, from a session id or a transcript path (or this project's latest)."""
    if target is None:
        state = latest_state(cwd)
        if state is None:
            raise MemoryToolError(
                "no session seen in this project yet: pass a session id or a transcript path."
            )
        return str(state["session_id"])
    path = Path(target)
    if path.is_file():
        return str(
            scribe_mod.state_from_transcript(path, None if transcript_cwd else cwd)["session_id"]
        )
    if load_state(target) is not None:
        return target
    found = scribe_mod.find_transcript(target)
    if found is None:
        raise MemoryToolError(
            f"{target!r} is neither a transcript file nor a session the hooks have seen, and no "
            f"transcript {target}.jsonl is under {paths.projects_dir()}."
        )
    return str(scribe_mod.state_from_transcript(found)["session_id"])


@main.command()
@click.argument("target", required=False)
@click.option("--roll", is_flag=True, help="Only run the rolling window (promote, then remove).")
@click.option(
    "--model/--no-model",
    default=None,
    help="Also ask `claude -p` for a summary (default: cold.model_summary in config).",
)
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, exists=True),
    default=None,
    help="Project a transcript belongs to (default: the cwd recorded in it).",
)
@json_option
@domain_errors
def scribe(
    target: str | None, roll: bool, model: bool | None, cwd: str | None, as_json: bool
) -> None:
    """Compress a session (id or transcript path) into its cold summary, by hand.

    Without TARGET: this project's most recent session. Hooks do this on their own at Stop and
    SessionEnd; --roll promotes summaries older than cold.retention_days to the wiki and removes
    them."""
    if roll:
        with open_index() as idx:
            report = scribe_mod.roll(idx)
        if as_json:
            data = {"removed": report.removed, "promoted": [e.id for e in report.promoted]}
            click.echo(json.dumps(data, indent=2))
            return
        for e in report.promoted:
            click.echo(f"promoted {e.id} -> {e.path}")
        for p in report.removed:
            click.echo(f"removed  {p}")
        click.echo(f"{len(report.removed)} summaries rolled, {len(report.promoted)} wiki records")
        return
    sid = _resolve_target(target, cwd or os.getcwd(), transcript_cwd=cwd is None)
    entry = scribe_mod.run(sid, final=True, model=model)
    if entry is None:
        raise MemoryToolError(
            f"session {sid} has nothing to summarise yet (no task asked, no tool run)."
        )
    state = load_state(sid) or {}
    chars = int(state.get("text_chars") or 0)
    size = len(entry.body)
    if as_json:
        summary = {"id": entry.id, "path": entry.path, "session_chars": chars}
        summary["summary_chars"] = size
        click.echo(json.dumps(summary, indent=2))
        return
    ratio = f", {size / chars:.0%} of the session's {chars:,}" if chars else ""
    click.echo(f"saved {entry.id} -> {entry.path} ({size:,} characters{ratio})")


# The progress bar's width in characters (a TTY); without one, a line every PLAIN_STEP percent.
BAR_WIDTH = 30
PLAIN_STEP = 10


def progress_printer(stream: Any = None) -> Callable[[int, int], None]:
    """A progress callback that writes to stderr: a bar redrawn in place on a terminal, a plain
    line every PLAIN_STEP percent otherwise (a log file gets no carriage returns)."""
    import sys

    out = stream or sys.stderr
    tty = bool(getattr(out, "isatty", lambda: False)())
    last = [-1]

    def show(done: int, total: int) -> None:
        if total <= 0:
            return
        if tty:
            filled = BAR_WIDTH * done // total
            bar = "#" * filled + "-" * (BAR_WIDTH - filled)
            end = "\n" if done == total else ""
            out.write(f"\rbackfill [{bar}] {done}/{total} sessions{end}")
            out.flush()
            return
        step = done * 100 // total // PLAIN_STEP
        if step != last[0] or done == total:
            last[0] = step
            out.write(f"backfill: {done}/{total} sessions\n")
            out.flush()

    return show


def backfill_lines(report: Any, days: int) -> list[str]:
    """What a backfill did, for people (``backfill`` and ``install`` print it)."""
    lines = [
        f"backfill: {report.found} sessions of the last {days} days: {report.done} read, "
        f"{report.already} already done, {report.kept_by_hooks} kept by the hooks, "
        f"{report.empty} with nothing to keep ({report.seconds:.1f} s)",
        f"  wrote {report.summaries} cold summaries, {report.captured} captured memories, "
        f"{report.candidates} inbox candidates",
    ]
    if report.captured:
        lines.append("  see them: memory-tool ui (Learned), undo one: memory-tool forget ID")
    if report.candidates:
        lines.append("  review the inbox: memory-tool inbox")
    lines += [f"  failed: {f}" for f in report.failed[:5]]
    return lines


@main.command()
@click.option(
    "--days",
    type=click.IntRange(1),
    default=30,
    show_default=True,
    help="How far back (Claude Code keeps about 30 days of transcripts).",
)
@json_option
@domain_errors
def backfill(days: int, as_json: bool) -> None:
    """Run the Scribe and capture over the sessions you had before installing.

    Reads Claude Code's transcripts of the last --days days (<config>/projects/*/*.jsonl) and
    writes what a session's end would have: its cold summary, and what capture finds in it.
    No model call. Safe to run again: a transcript read before is not read again, and nothing
    is written twice. Progress goes to stderr."""
    from ..tiers.backfill import backfill as run_backfill

    report = run_backfill(days, progress=None if as_json else progress_printer())
    if as_json:
        click.echo(json.dumps(report.to_json()))
        return
    for line in backfill_lines(report, days):
        click.echo(line)


@main.group(invoke_without_command=True)
@json_option
@click.pass_context
@domain_errors
def inbox(ctx: click.Context, as_json: bool) -> None:
    """Candidate memories found in sessions, waiting for you: accept or reject each.

    Lines tagged [DECISION] [GOTCHA] [REUSE] [DEFER] and your corrections land here; nothing
    here is recalled or always-loaded until you accept it."""
    if ctx.invoked_subcommand is not None:
        return
    found = inbox_mod.list_candidates()
    if as_json:
        rows = [
            {
                "id": c.id,
                "kind": c.kind,
                "type": c.type,
                "tier": c.tier or None,
                "session": c.session,
                "project": c.project,
                "created": c.created,
                "text": c.text,
            }
            for c in found
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    # This project's candidates first; the others under their project, so that a lesson of
    # one project is not accepted into another by mistake.
    here = paths.project_key(os.getcwd())
    projects = sorted({c.project for c in found}, key=lambda p: (p != here, p))
    for project in projects:
        if len(projects) > 1:
            label = "this project" if project == here else (project or "no project")
            click.echo(f"## {label}")
        for c in (c for c in found if c.project == project):
            where = "wiki" if c.tier == "wiki" else c.type
            text = " ".join(c.text.split())
            click.echo(f"{c.id}  {c.kind:<10} -> {where:<9} {c.created}  {text[:90]}")
    if not found:
        click.echo("inbox empty")
    else:
        click.echo(
            f"{len(found)} waiting: `memory-tool inbox accept ID [--room R]` or `inbox reject ID`"
        )


@inbox.command("accept")
@click.argument("candidate_id")
@click.option("--room", help="File it in this palace room instead of its proposed place.")
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, exists=True),
    default=None,
    help="Project it belongs to (default: the project of the session it came from).",
)
@team_option
@domain_errors
def inbox_accept(candidate_id: str, room: str | None, cwd: str | None, team: str | None) -> None:
    """Save a candidate as a memory (Claude Code format, dated, with its MEMORY.md line).

    With --team, in that team palace (a --room of it, or its wiki), pushed to your teammates."""
    with open_index() as idx:
        entry = inbox_mod.accept(idx, candidate_id, room=room, cwd=cwd, team=team)
    click.echo(f"saved {entry.id} -> {entry.path}")
    if team:
        publish_team(team)


@inbox.command("reject")
@click.argument("candidate_id")
@domain_errors
def inbox_reject(candidate_id: str) -> None:
    """Drop a candidate; it is not offered again."""
    c = inbox_mod.reject(candidate_id)
    click.echo(f"rejected {c.id}")
