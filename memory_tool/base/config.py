"""Budgets, modes and thresholds: named defaults, overridable in ``<state>/config.yaml``.

The hook path reads the config through a JSON cache (``cache.py``), so YAML is parsed only when
config.yaml changes.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import sys
from collections.abc import Callable
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
# Tool-level recall (PostToolUse, PostToolUseFailure: the memories of a file Claude touched, of a
# failed command's error). One event: a tied memory in full or three to four lines, small beside
# the file or output it comes with. One session: 3K, what two prompts' room recall cost; a
# session of 200 tool calls pays for its first few new files and errors, then nothing more.
TOOL_EVENT_BUDGET_TOKENS = 300
TOOL_SESSION_BUDGET_TOKENS = 3000
# A subagent's spawn brief (SubagentStart): the parent's task, decisions and blockers, the
# critical rules, recall on the subagent's own task, cold/wiki when the task is about history.
# 1.2K: about L2 plus most of an L3, for a context that starts nearly empty and a task narrower
# than a session's.
SPAWN_BUDGET_TOKENS = 1200
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
# The loopback port of the hook server's HTTP hooks. Fixed rather than picked at install so the
# plugin's hooks.json (one static file for every user of the plugin) can name it; below Linux's
# ephemeral range (32768-60999), so no outgoing connection happens to hold it, and assigned to
# no common service. Where it is taken: `server.port`, then `memory-tool install` again.
HOOK_SERVER_PORT = 23_419

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
        "tool_event_tokens": TOOL_EVENT_BUDGET_TOKENS,
        "tool_session_tokens": TOOL_SESSION_BUDGET_TOKENS,
        "spawn_tokens": SPAWN_BUDGET_TOKENS,
    },
    "always_load_max": ALWAYS_LOAD_MAX,
    "decay": DEFAULT_DECAY,
    "stale_days": DEFAULT_STALE_DAYS,
    "recall": {
        "enabled": True,
        "deep_search_enabled": True,
        "tool_recall_enabled": True,
        "l2_background": True,
    },
    "handoff": {
        "mode": "block",
        "min_file_edits": 5,
        "min_tool_calls": 20,
        "stale_after_hours": 24,
    },
    "cold": {"retention_days": 30, "model_summary": False, "model_summary_max_chars": 4000},
    "hygiene": {"enabled": True},
    "server": {"enabled": True, "port": HOOK_SERVER_PORT},
    # What a session says explicitly (rules, corrections, tagged decisions) becomes memory at
    # the end of each turn (auto), waits in the inbox for a person (inbox), or is not kept (off).
    # statements: also what the statement model (tiers.statements) takes for said for good in
    # no shape the capture rules know.
    "capture": {"mode": "auto", "statements": True},
    # Sync and team palaces on git (docs/sync.md): detached runs after SessionEnd (the Scribe
    # first) and, at most every few minutes, at SessionStart; only once `sync init` or
    # `team add` set a remote up.
    "sync": {"auto": True, "on_start": True},
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


# --- What each setting accepts ----------------------------------------------------------------
# A rule: (does the value fit, what a valid value is). A value that does not fit is reported and
# its default used: one typo must cost that setting, not the brief.
Rule = tuple[Callable[[Any], bool], str]
HANDOFF_MODES = ("off", "remind", "block")


def _whole(least: int) -> Rule:
    return (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= least,
        f"a whole number >= {least}",
    )


def _number(least: float) -> Rule:
    return (
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v >= least,
        f"a number >= {least:g}",
    )


_SWITCH: Rule = (lambda v: isinstance(v, bool), "true or false")
_DAYS_OR_NEVER: Rule = (
    lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0),
    "a whole number of days, or null (never stale)",
)


CAPTURE_MODES = ("auto", "inbox", "off")


def _capture_mode(value: Any) -> bool:
    # YAML reads a bare `off` as false; capture.mode_of reads it as "off".
    off = ("false", "no", "none", "0")
    return str(value).strip().lower() in (*CAPTURE_MODES, *off) and not isinstance(value, float)


def _handoff_mode(value: Any) -> bool:
    # YAML reads a bare `off` as false; handoff.mode_of reads these spellings of it as "off".
    off = ("false", "no", "none", "0")
    return str(value).strip().lower() in (*HANDOFF_MODES, *off) and not isinstance(value, float)


_TYPES = sorted({*DEFAULT_DECAY, *DEFAULT_STALE_DAYS})
RULES: dict[str, Rule | dict[str, Rule]] = {
    "budgets": {key: _whole(0) for key in DEFAULTS["budgets"]},
    "always_load_max": _whole(0),
    "decay": {t: _number(0) for t in _TYPES},
    "stale_days": {t: _DAYS_OR_NEVER for t in _TYPES},
    "recall": {
        "enabled": _SWITCH,
        "deep_search_enabled": _SWITCH,
        "tool_recall_enabled": _SWITCH,
        "l2_background": _SWITCH,
    },
    "handoff": {
        "mode": (_handoff_mode, "one of " + ", ".join(HANDOFF_MODES)),
        "min_file_edits": _whole(0),
        "min_tool_calls": _whole(0),
        "stale_after_hours": _whole(0),
    },
    "cold": {
        "retention_days": _whole(0),
        "model_summary": _SWITCH,
        "model_summary_max_chars": _whole(1),
    },
    "hygiene": {"enabled": _SWITCH},
    "server": {
        "enabled": _SWITCH,
        "port": (
            lambda v: isinstance(v, int) and not isinstance(v, bool) and 1024 <= v <= 65535,
            "a port number from 1024 to 65535",
        ),
    },
    "capture": {
        "mode": (_capture_mode, "one of " + ", ".join(CAPTURE_MODES)),
        "statements": _SWITCH,
    },
    "sync": {"auto": _SWITCH, "on_start": _SWITCH},
}


def _problem(key: str, brief: str, message: str) -> dict[str, str]:
    """A config.yaml problem: ``key`` (dotted, "" for the whole file), ``brief`` (for the
    one-line SessionStart warning) and ``message`` (for doctor, stderr and the hook log)."""
    return {"key": key, "brief": brief, "message": message}


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def _default_of(key: str) -> Any:
    value: Any = DEFAULTS
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _check(key: str, value: Any, rule: Rule) -> dict[str, str] | None:
    fits, valid = rule
    if fits(value):
        return None
    default = _default_of(key)
    brief = f"{_shown(value)} is not {valid} (using {_shown(default)})"
    return _problem(
        key,
        brief,
        f"config.yaml {key}: {_shown(value)} is not {valid}, e.g. "
        f"`{key.rsplit('.', 1)[-1]}: {_shown(default)}`; the default ({_shown(default)}) is "
        "used meanwhile.",
    )


def _unknown(key: str) -> dict[str, str]:
    import difflib  # only for a config.yaml with a misspelt key

    section, _, sub = key.rpartition(".")
    rules = RULES.get(section) if section else RULES
    known = [str(k) for k in rules] if isinstance(rules, dict) else []
    close = difflib.get_close_matches(sub, known, n=1)
    full = f"{section}.{close[0]}" if close and section else (close[0] if close else "")
    brief = f"not a setting (did you mean {full}?)" if full else "not a setting"
    hint = f"did you mean {full}?" if full else f"the settings here: {', '.join(known)}."
    return _problem(key, brief, f"config.yaml {key} is not a setting, so it is ignored; {hint}")


def validate(data: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The settings of a parsed config.yaml that are valid, and a problem for each that is not
    (a value of the wrong kind, an unknown key): only the valid ones override the defaults."""
    settings: dict[str, Any] = {}
    problems: list[dict[str, str]] = []
    for raw_key, value in data.items():
        key = str(raw_key)
        rule = RULES.get(key)
        if rule is None:
            problems.append(_unknown(key))
        elif not isinstance(rule, dict):
            problem = _check(key, value, rule)
            if problem:
                problems.append(problem)
            else:
                settings[key] = value
        elif value is None:  # `recall:` with nothing under it
            continue
        elif not isinstance(value, dict):
            first = next(iter(rule))
            brief = f"{_shown(value)} is not a mapping of settings"
            example = f"`{key}: {{{first}: {_shown(_default_of(f'{key}.{first}'))}}}`"
            message = f"config.yaml {key}: {brief}, e.g. {example}; the defaults are used."
            problems.append(_problem(key, brief, message))
        else:
            section: dict[str, Any] = {}
            for raw_sub, sub_value in value.items():
                sub = f"{key}.{raw_sub}"
                sub_rule = rule.get(str(raw_sub))
                problem = _unknown(sub) if sub_rule is None else _check(sub, sub_value, sub_rule)
                if problem:
                    problems.append(problem)
                else:
                    section[str(raw_sub)] = sub_value
            settings[key] = section
    return settings, problems


def yaml_error_text(exc: Exception) -> str:
    """A YAML error in one line, with where it is: "expected ',' or ']' at line 59, column 3"."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is None:
        return str(problem)
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"


def _parse_yaml_config() -> dict[str, Any]:
    """The checked config.yaml, as the cache keeps it: ``{"settings", "problems"}``."""
    path = config_path()
    if not path.exists():
        return {"settings": {}, "problems": []}
    import yaml  # only when config.yaml changed

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        brief = f"not valid YAML ({yaml_error_text(exc)})"
        message = f"{path} is {brief}; fix it or delete it. Using the defaults meanwhile."
        problems = [_problem("", brief, message)]
        data = {}
    else:
        problems = []
    if not isinstance(data, dict):
        brief = f"not a mapping of settings (a {type(data).__name__})"
        message = (
            f"{path} is {brief}; see the shipped memory_tool/templates/config.yaml. "
            "Using the defaults meanwhile."
        )
        problems, data = [_problem("", brief, message)], {}
    settings, bad = validate(data)
    problems += bad
    if problems:  # once per change of config.yaml: the result is cached
        from .log import log_error

        log_error("config", " ".join(p["message"] for p in problems))
    return {"settings": settings, "problems": problems}


# The cache holds the checked settings (name changed with its format: a plain dict before).
_CACHE_NAME = "config-checked"
# Problems already printed by this process: a command that reads the config ten times says it once.
_SAID: set[str] = set()
# Whether config problems are also printed on stderr: yes for the CLI, no in a hook (a hook's
# output is its JSON; what went wrong goes to the hook log and the SessionStart hygiene line).
STDERR_NOTES = True


def _checked() -> dict[str, Any]:
    value = cached_json(_CACHE_NAME, [config_path()], _parse_yaml_config)
    if not isinstance(value, dict) or not isinstance(value.get("settings"), dict):
        return {"settings": {}, "problems": []}
    return value


def config_problems() -> list[dict[str, str]]:
    """What is wrong in config.yaml (each with ``key``, ``brief`` and ``message``); doctor and
    the SessionStart hygiene line report them."""
    problems = _checked().get("problems")
    return [p for p in problems if isinstance(p, dict)] if isinstance(problems, list) else []


def load_config() -> dict[str, Any]:
    """The effective configuration: defaults overridden by config.yaml's valid settings. A
    config.yaml that does not parse, a value of the wrong kind or an unknown key is reported
    (stderr, the hook log, doctor and the SessionStart hygiene line) and the default applies:
    a typo must not switch memory off."""
    checked = _checked()
    for problem in config_problems():
        text = f"memory-tool: {problem.get('message', '')}"
        if text not in _SAID and STDERR_NOTES:
            _SAID.add(text)
            print(text, file=sys.stderr)
    return _merge(DEFAULTS, checked["settings"])


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
