"""server start / stop / status / run: the resident process that answers hooks warm."""

from __future__ import annotations

import click

from ..base import paths
from ..runtime import client, server
from .app import main


@main.group(name="server")
def server_group() -> None:
    """The resident hook server (UserPromptSubmit answered warm; exits after 30 idle minutes).

    Hooks start it by themselves; these commands are for checking on it by hand."""


@server_group.command()
def status() -> None:
    """Whether a server runs for this state root (exit 1 when none does)."""
    line = server.ping()
    if line is None:
        click.echo(f"no server on {client.socket_path()}")
        raise SystemExit(1)
    click.echo(f"running on {client.socket_path()}: {line}")


@server_group.command()
def start() -> None:
    """Start one (unless one runs) and wait until it answers."""
    if client.disabled():
        raise click.ClickException("MEMORY_TOOL_SERVER=0 is set: the server is switched off")
    line = server.start()
    if line is None:
        raise click.ClickException("the server did not start; see <state>/logs/hooks.log")
    click.echo(f"running on {client.socket_path()}: {line}")


@server_group.command()
def stop() -> None:
    """Ask the running server to exit (hooks then run in-process until one starts again)."""
    click.echo("stopped" if server.stop() else "no server was running")


@server_group.command(name="run")
@click.option("--idle-exit", type=float, default=None, help="Seconds without calls before exiting.")
def run_foreground(idle_exit: float | None) -> None:
    """Run a server in the foreground (for debugging); exits at once if one already runs."""
    if server.ping() is not None:
        click.echo(f"a server already runs on {client.socket_path()} (`memory-tool server stop`)")
        raise SystemExit(0)
    click.echo(
        f"serving on {client.socket_path()}; Ctrl-C stops it, errors go to {paths.log_file()}"
    )
    code = server.main(idle_exit)
    click.echo("stopped" if code == 0 else f"failed: see {paths.log_file()}")
    raise SystemExit(code)
