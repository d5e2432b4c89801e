"""``memory-tool ui``: the local web page for seeing and tending memory (memory_tool.ui).

The UI's libraries are an optional extra (``pip install -e '.[ui]'``; install.sh installs it):
they are imported when the command runs, never by another command or a hook."""

from __future__ import annotations

import click

from ..base.errors import MemoryToolError
from .app import domain_errors, main
from .options import cwd_option

# What the UI imports that the core install does not have.
UI_MODULES = ("starlette", "jinja2", "uvicorn", "multipart")


@main.command("ui")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 to listen on (0: a free one).",
)
@click.option("--no-browser", is_flag=True, help="Print the URL only; do not open a browser.")
@cwd_option
@domain_errors
def ui(port: int, no_browser: bool, cwd: str) -> None:
    """Serve a local web page to see and tend memory: the next session's brief and why, the
    rooms, each memory (edit, pin, move, archive), the inbox, past sessions, the doctor.

    Listens on 127.0.0.1 only and prints a URL holding a random token made for this run;
    requests without it are refused. Ctrl-C stops it."""
    import importlib.util

    missing = [m for m in UI_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise MemoryToolError(
            f"the web UI needs its extra ({', '.join(missing)} missing): run ./install.sh, or "
            "pip install -e '.[ui]' in memory-tool's checkout."
        )
    from ..ui.serve import serve

    serve(cwd, port=port, open_browser=not no_browser, say=lambda text: click.echo(text))
