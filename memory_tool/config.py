"""Budgets, modes and thresholds: named defaults, overridable in ``<state>/config.yaml``.

The hook path reads the config through a JSON cache (``cache.py``), so YAML is parsed only when
config.yaml changes.
"""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from typing import Any

from . import paths
from .cache import cached_json
from .errors import ConfigError

# --- Token budgets (exact cl100k counts of the text actually emitted) ---------------------------
# L1: who the user is. A handful of one-line facts; the layered design we build on sizes it ~200.
L1_BUDGET_TOKENS = 200
# L2: this project's hard constraints, decisions and feedback rules: ~500 keeps the whole
# wake-up brief under 1K tokens, a fraction of a percent of the context window.
L2_BUDGET_TOKENS = 500
# L3: one room's memories per prompt; 1.5K is mid-range of the design's 1-2K.
L3_BUDGET_TOKENS = 1500
# L4: ids and summaries of a deep search; 3K is mid-range of the design's 2-5K.
L4_BUDGET_TOKENS = 3000
# Always-load entries across L1+L2: above 10-15 items models lose the ones in the middle
# (Liu et al. 2023, "Lost in the Middle"); the Boeing memory-items rule caps at ~10-15.
ALWAYS_LOAD_MAX = 15
# One brief line may not eat a layer: a memory longer than this is cut with "…" (`get ID` shows
# all of it). 80 tokens holds a rule plus its Why/How-to-apply in one line.
ENTRY_LINE_MAX_TOKENS = 80
# thoughts/CONTEXT.md is a hand-curated project summary: allow it more room than one memory.
CONTEXT_LINE_MAX_TOKENS = 200
# Claude Code caps hook output at 10,000 characters (larger output is replaced by a preview):
# leave room for the JSON envelope and escaping.
MAX_HOOK_OUTPUT_CHARS = 9_000

# Power-law recency decay exponents: weight = importance * (1 + age_days) ** -decay.
# Identity never decays; feedback rules barely do; project state goes stale fastest.
DEFAULT_DECAY = {
    "user": 0.0,
    "feedback": 0.05,
    "project": 0.3,
    "reference": 0.2,
    "wiki": 0.05,
    "cold": 0.5,
    "session": 0.5,
}
# Days after which a memory of a type is stale (None: never). From the priority-enforcement design.
DEFAULT_STALE_DAYS: dict[str, int | None] = {
    "project": 90,
    "reference": 180,
    "cold": 30,
    "feedback": None,
    "user": None,
}

DEFAULTS: dict[str, Any] = {
    "budgets": {
        "l1_tokens": L1_BUDGET_TOKENS,
        "l2_tokens": L2_BUDGET_TOKENS,
        "l3_tokens": L3_BUDGET_TOKENS,
        "l4_tokens": L4_BUDGET_TOKENS,
    },
    "always_load_max": ALWAYS_LOAD_MAX,
    "decay": DEFAULT_DECAY,
    "stale_days": DEFAULT_STALE_DAYS,
    "recall": {"enabled": True, "deep_search_enabled": True},
    "handoff": {"mode": "block", "min_file_edits": 5, "min_tool_calls": 20},
    "cold": {"retention_days": 30, "model_summary": False, "model_summary_max_chars": 4000},
    "hygiene": {"enabled": True},
    "server": {"enabled": True},
}


def config_path() -> Path:
    return paths.state_root() / "config.yaml"


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _parse_yaml_config() -> dict[str, Any]:
    path = config_path()
    if not path.exists():
        return {}
    import yaml  # only when config.yaml changed

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid YAML ({exc}); fix it or delete it.") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a mapping of settings, got {type(data).__name__}.")
    return data


def load_config() -> dict[str, Any]:
    """The effective configuration: defaults overridden by config.yaml. A config.yaml that does
    not parse is reported (stderr and the hook log) and the defaults apply: a typo must not
    switch memory off."""
    try:
        user = cached_json("config", [config_path()], _parse_yaml_config)
    except ConfigError as exc:
        import sys

        from .hooks import log_error

        print(f"memory-tool: {exc} Using the defaults meanwhile.", file=sys.stderr)
        log_error("config", f"{exc} Using the defaults meanwhile.")
        user = {}
    return _merge(DEFAULTS, user if isinstance(user, dict) else {})


def budget(cfg: dict[str, Any], layer: str) -> int:
    value = cfg["budgets"][f"{layer.lower()}_tokens"]
    if not isinstance(value, int) or value < 0:
        raise ConfigError(f"budgets.{layer.lower()}_tokens must be a non-negative whole number.")
    return value


def today() -> dt.date:
    """Today's date; ``MEMORY_TOOL_TODAY=YYYY-MM-DD`` pins it so output is reproducible."""
    import os

    pinned = os.environ.get("MEMORY_TOOL_TODAY")
    if pinned:
        try:
            return dt.date.fromisoformat(pinned)
        except ValueError:
            pass
    return dt.date.today()
