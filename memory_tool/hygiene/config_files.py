"""Problems in the state root's own files: a config.yaml setting that is not valid (its default
is used meanwhile), a rooms.yaml (or instincts file) that does not parse or compile (the shipped
rooms are used meanwhile). Hook path: both are read from small JSON caches, no YAML."""

from __future__ import annotations

from ..base.config import config_path, config_problems
from ..base.errors import ConfigError
from ..store.rooms import instincts_files, rooms_problems, rooms_yaml
from .report import PROBLEM, Finding

# What the SessionStart line says a broken file costs, by file.
ROOMS_FALLBACK = {"rooms.yaml": "shipped rooms in use", "instincts": "instincts left out"}


def config_findings() -> list[Finding]:
    path = str(config_path())
    return [
        Finding(
            "config",
            PROBLEM,
            p.get("message", ""),
            path=path,
            data={"key": p.get("key", ""), "brief": p.get("brief", "")},
        )
        for p in config_problems()
    ]


def rooms_findings() -> list[Finding]:
    try:
        problems = rooms_problems()
    except ConfigError as exc:  # not even the shipped rooms compile: no room recall at all
        problems = [{"file": "rooms.yaml", "message": f"{exc} Room recall is off."}]
    found = []
    for p in problems:
        name = p.get("file", "rooms.yaml")
        instincts = [f for f in instincts_files() if f.exists()]
        path = instincts[0] if name == "instincts" and instincts else rooms_yaml()
        brief = f"{path.name} not valid ({ROOMS_FALLBACK.get(name, 'room recall off')})"
        found.append(Finding("rooms", PROBLEM, p.get("message", ""), path=str(path),
                             data={"brief": brief}))  # fmt: skip
    return found
