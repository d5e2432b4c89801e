"""Where the shipped templates and hook scripts are: the project checkout this package runs from."""

from __future__ import annotations

from pathlib import Path

from .errors import MemoryToolError

_ROOT = Path(__file__).resolve().parents[2]


def templates_dir() -> Path:
    path = _ROOT / "templates"
    if not path.is_dir():
        raise MemoryToolError(
            f"templates not found at {path}: install memory-tool from its checkout with "
            "./install.sh (an editable install keeps templates/ and hooks/ beside the package)."
        )
    return path


def template_path(name: str) -> Path:
    """Where the shipped template ``name`` is, without checking it exists (a cache fingerprint
    stats it on every prompt; a missing file is a fingerprint like any other)."""
    return _ROOT / "templates" / name


def hooks_dir() -> Path | None:
    path = _ROOT / "hooks"
    return path if path.is_dir() else None
