"""install / uninstall: our hooks in Claude Code's settings.json (and, with --mcp, the MCP
server in Claude Code's user configuration)."""

from __future__ import annotations

import click

from ..base import paths
from ..base.errors import MemoryToolError
from ..mcp import register
from ..runtime import server, settings
from .app import domain_errors, main


@main.command()
@click.option("--dry-run", is_flag=True, help="Show the settings.json that would be written.")
@click.option(
    "--mcp",
    "with_mcp",
    is_flag=True,
    help="Also register the MCP server (memory as tools) for all your projects, as "
    "`claude mcp add --scope user` would (needs the mcp extra).",
)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Choice(["claude", "codex", "gemini", "all"]),
    help="Which coding agent(s) to install for (repeatable; default claude). codex and gemini "
    "get hooks and the MCP server in their own config (docs/agents.md).",
)
@click.option(
    "--backfill",
    "backfill_days",
    type=click.IntRange(1),
    default=None,
    metavar="DAYS",
    help="Also run the Scribe and capture over the sessions of the last DAYS days "
    "(`memory-tool backfill`); on a terminal, install asks.",
)
@click.option("--no-backfill", is_flag=True, help="Do not backfill, and do not ask.")
@domain_errors
def install(
    dry_run: bool,
    with_mcp: bool,
    agents: tuple[str, ...],
    backfill_days: int | None,
    no_backfill: bool,
) -> None:
    """Add memory-tool's hooks to <config>/settings.json (backed up first; idempotent).

    Then offers to backfill: to read the Claude Code sessions of the last 30 days for their
    summaries and what capture finds in them (asked on a terminal; --backfill DAYS or
    --no-backfill otherwise)."""
    if backfill_days is not None and no_backfill:
        raise MemoryToolError("give --backfill DAYS or --no-backfill, not both.")
    chosen = _agents(agents)
    others = [a for a in chosen if a != "claude"]
    if others and not dry_run:
        _install_agents(others)
    if "claude" not in chosen:
        return
    if with_mcp and not register.sdk_installed():
        raise MemoryToolError(register.EXTRA_HINT)
    plan = settings.install(dry_run=dry_run)
    if dry_run:
        click.echo(plan.after, nl=False)
        click.echo(f"(dry run: {plan.settings_path} not changed)", err=True)
        if with_mcp:
            reg = register.register(dry_run=True)
            state = "would register" if reg.changed else "already registered"
            click.echo(f"(dry run: {reg.path}: {state} the MCP server)", err=True)
        return
    if server.stop():  # the hooks may have changed: the next prompt starts a fresh server
        click.echo("  stopped the running hook server (it restarts with the next session)")
    state = "updated" if plan.changes else "already up to date"
    click.echo(f"{plan.settings_path}: {state}")
    # The hooks need the palace (config.yaml, rooms.yaml): `install` alone is enough to start.
    from ..store.palace import init_palace

    created = init_palace().created
    if created:
        click.echo(
            f"  created the palace at {paths.state_root()} ({len(created)} files and folders)"
        )
    for event, command in plan.commands.items():
        click.echo(f"  {event}: {command}")
    for target, _ in plan.files:
        if target not in plan.skipped:
            click.echo(f"  installed {target}")
    for target in plan.skipped:
        click.echo(f"  kept your {target} (not overwritten)")
    if plan.agent is not None:
        # The brief tells Claude to run this command through its shell.
        click.echo(f"  Claude runs memory-tool as: {plan.agent.command}")
        if plan.agent.note:
            click.echo(f"  {plan.agent.note}")
    if with_mcp:
        reg = register.register()
        state = "registered" if reg.changed else "already registered"
        click.echo(f"{reg.path}: MCP server {register.SERVER_NAME} {state}")
        click.echo(f"  the same by hand: {reg.command}")
        click.echo("  (new sessions see it; one already running does after a restart)")
    _offer_backfill(backfill_days, no_backfill)


# What install offers to backfill when not told: Claude Code keeps about 30 days of transcripts.
OFFER_DAYS = 30


def _offer_backfill(days: int | None, refused: bool) -> None:
    """Backfill as told (--backfill DAYS / --no-backfill), or ask on a terminal; without one,
    say how to do it later. Always says what it did."""
    import sys

    from ..tiers.backfill import backfill, transcripts
    from .tiers import backfill_lines, progress_printer

    later = f"memory-tool backfill --days {OFFER_DAYS}"
    if refused:
        click.echo(f"backfill: not run (--no-backfill); to run it later: {later}")
        return
    if days is None:
        waiting = len(transcripts(OFFER_DAYS))
        if not waiting:
            click.echo(f"backfill: no Claude Code sessions of the last {OFFER_DAYS} days to read")
            return
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            click.echo(
                f"backfill: not run ({waiting} sessions of the last {OFFER_DAYS} days could be "
                f"read; no terminal to ask): run `{later}`, or install with --backfill "
                f"{OFFER_DAYS}"
            )
            return
        question = (
            f"Read your {waiting} Claude Code sessions of the last {OFFER_DAYS} days, so the "
            "next session knows their decisions and corrections? (no model call)"
        )
        if not click.confirm(question, default=True):
            click.echo(f"backfill: not run; to run it later: {later}")
            return
        days = OFFER_DAYS
    report = backfill(days, progress=progress_printer())
    for line in backfill_lines(report, days):
        click.echo(line)


def _agents(agents: tuple[str, ...]) -> list[str]:
    if not agents:
        return ["claude"]
    if "all" in agents:
        return ["claude", "codex", "gemini"]
    return list(dict.fromkeys(agents))


def _install_agents(agents: list[str]) -> None:
    from ..runtime import agent_install
    from ..store.palace import init_palace

    init_palace()
    for agent in agents:
        report = agent_install.install(agent, mcp=register.sdk_installed())
        for path in report.files:
            state = "updated" if path in report.changed else "already up to date"
            click.echo(f"{path}: {state} ({agent})")
        for note in report.notes:
            click.echo(f"  {note}")


@main.command()
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Choice(["claude", "codex", "gemini", "all"]),
    help="Which coding agent(s) to uninstall from (repeatable; default claude).",
)
@domain_errors
def uninstall(agents: tuple[str, ...]) -> None:
    """Remove exactly the hooks, files and MCP server registration memory-tool installed."""
    chosen = _agents(agents)
    from ..runtime import agent_install

    for agent in (a for a in chosen if a != "claude"):
        agent_report = agent_install.uninstall(agent)
        for path in agent_report.files:
            state = "restored" if path in agent_report.changed else "unchanged"
            click.echo(f"{path}: memory-tool removed ({state}, {agent})")
    if "claude" not in chosen:
        return
    server.stop()  # nothing of ours may keep running
    report = settings.uninstall()
    how = "restored byte for byte" if report.restored_exact else "hooks removed"
    click.echo(f"{report.settings_path}: {report.removed_handlers} handlers removed ({how})")
    mcp_file = register.unregister()
    if mcp_file is not None:
        click.echo(f"{mcp_file}: MCP server {register.SERVER_NAME} removed")
    for f in report.removed_files:
        click.echo(f"  removed {f}")
    for f in report.kept_files:
        click.echo(f"  kept {f} (you changed it)")
    if report.kept_backup is not None:
        click.echo(
            f"  kept {report.kept_backup}: settings.json as it was before memory-tool last "
            "changed it, with settings your file no longer has; delete it when you do not "
            "need them"
        )
