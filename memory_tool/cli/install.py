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
@domain_errors
def install(dry_run: bool, with_mcp: bool) -> None:
    """Add memory-tool's hooks to <config>/settings.json (backed up first; idempotent)."""
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


@main.command()
@domain_errors
def uninstall() -> None:
    """Remove exactly the hooks, files and MCP server registration memory-tool installed."""
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
