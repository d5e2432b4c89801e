"""Where the files shipped inside the package are: the templates and the hook start-up script.

Both live in the package itself (package data), so a wheel installed with pip, pipx or
``uv tool install`` has them as much as a checkout does.
"""

from __future__ import annotations

from pathlib import Path

from .errors import MemoryToolError

_PACKAGE = Path(__file__).resolve().parents[1]
_TEMPLATES = _PACKAGE / "templates"


def templates_dir() -> Path:
    if not _TEMPLATES.is_dir():
        raise MemoryToolError(
            f"templates not found at {_TEMPLATES}: the package is incomplete; reinstall it "
            "(pip install --force-reinstall memory-tool, or ./install.sh in a checkout)."
        )
    return _TEMPLATES


def template_path(name: str) -> Path:
    """Where the shipped template ``name`` is, without checking it exists (a cache fingerprint
    stats it on every prompt; a missing file is a fingerprint like any other)."""
    return _TEMPLATES / name


def hook_script() -> Path:
    """The script every hook command runs (``runtime/hook.py``), by path: with ``python -S`` the
    package is not importable until that script has put it on ``sys.path``."""
    return _PACKAGE / "runtime" / "hook.py"
