"""Problems in the state root's own files: a config.yaml setting that is not valid (its default
is used meanwhile). Hook path: reads the checked config from its JSON cache, no YAML."""

from __future__ import annotations

from ..config import config_path, config_problems
from .report import PROBLEM, Finding


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
