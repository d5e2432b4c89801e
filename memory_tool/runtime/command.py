"""The `memory-tool` command the agent runs: the brief tells Claude to run `memory-tool search`,
`peek` and `get` through its shell, so `install` makes sure that name runs there.

A pip or uv install into a virtual environment puts the console script in the venv's `bin/`,
which is on no one's PATH unless the venv is active. `install` links it into a bin folder as
./install.sh does (``MEMORY_TOOL_BIN_DIR``, else ``~/.local/bin``), and when that folder is not
on PATH either, records the absolute path, which the brief then names (``paths.agent_command``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from pathlib import Path

from ..base import paths
from ..base.record import record

BIN_DIR_ENV = "MEMORY_TOOL_BIN_DIR"


@record
class AgentCommand:
    command: str  # what the brief names: AGENT_COMMAND, or an absolute path
    script: str = ""  # this install's console script ("" when none was found)
    link: str = ""  # the link `install` made or kept ("" when none)
    note: str = ""  # what a person should know (printed by `install`)


def bin_dir() -> Path:
    return Path(os.environ.get(BIN_DIR_ENV) or Path.home() / ".local" / "bin")


def own_script() -> Path | None:
    """This environment's `memory-tool` console script (beside its interpreter: a venv, pipx,
    uv tool), or None (a checkout run with ``python -m``)."""
    script = Path(sys.executable).parent / paths.AGENT_COMMAND
    return script if os.access(script, os.X_OK) and script.is_file() else None


def _same(a: str | Path, b: str | Path) -> bool:
    with contextlib.suppress(OSError):
        return os.path.samefile(a, b)
    return False


def make_runnable() -> AgentCommand:
    """Make `memory-tool` run this install where the agent's shell looks (PATH), linking it into
    ``bin_dir()`` when needed; returns what the brief should name."""
    name = paths.AGENT_COMMAND
    script = own_script()
    if script is None:
        return AgentCommand(name)
    found = shutil.which(name)
    if found and _same(found, script):
        return AgentCommand(name, str(script))  # on PATH already (pipx, an active venv)
    folder = bin_dir()
    link = folder / name
    note = ""
    if os.path.lexists(link) and not link.is_symlink():
        # Someone's own file (another install's script): never replaced.
        kept = f"kept {link} (not ours): the brief names {script} instead"
        return AgentCommand(str(script), str(script), "", kept)
    if not _same(link, script):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f".{name}.{os.getpid()}.tmp"
            tmp.unlink(missing_ok=True)
            os.symlink(script, tmp)
            os.replace(tmp, link)
        except OSError as exc:
            failed = f"could not link {link} ({exc.strerror}): the brief names {script} instead"
            return AgentCommand(str(script), str(script), "", failed)
        note = f"linked {link} -> {script}"
    found = shutil.which(name)
    if found and _same(found, script):
        return AgentCommand(name, str(script), str(link), note)
    why = f"{folder} is not on PATH" if not found else f"{found} comes first on PATH"
    note = (note + "; " if note else "") + (
        f"{why}: the brief names {link} instead (put {folder} first on PATH for plain `{name}`)"
    )
    return AgentCommand(str(link), str(script), str(link), note)


def remove_link(recorded: dict[str, object]) -> str | None:
    """Uninstall: the link `install` made, if it still points at the script it recorded."""
    link, script = recorded.get("agent_link"), recorded.get("agent_script")
    if not isinstance(link, str) or not link or not isinstance(script, str):
        return None
    path = Path(link)
    if path.is_symlink() and os.readlink(path) == script:
        path.unlink()
        return link
    return None
