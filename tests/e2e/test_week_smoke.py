"""The week benchmark's harness (bench/week) measures what it says: a two-day mini week through
the real client, with control facts whose outcome is known whatever memory-tool does.

Controls go into the project's CLAUDE.md (Claude writes it in the first session; the baseline
session has none), which Claude Code itself loads into every later request, so they reach the
model by a route that does not depend on memory-tool: a fact written there twice
must be found (and counted as duplicated), an old fact there after its replacement was said must
count as stale, a secret there as a leak, a noise session's words as noise; a fact never planted
anywhere must not be found. These tests check the harness, not how well the product scores.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_sandbox import REPO_ROOT, find_claude_bin

WEEK_DIR = REPO_ROOT / "bench" / "week"
sys.path.insert(0, str(WEEK_DIR))
measure = importlib.import_module("measure")

HAND = "Deploys always go through scripts/bluegreen.sh with the HANDFACT-7731 flag."
OLD = "The artifact registry lives in region OLDREGION-west."
SECRET = "AKIASMOKETESTKEY0001"
# The noise session's reply is there too: the noise control needs it in a later request.
CLAUDE_MD = (
    f"# Team notes\n\n{HAND}\n\nAgain, because it matters: {HAND}\n\n{OLD}\n\nkey {SECRET}\n"
    "\nNOISE-REPLY-5521 was said once.\n"
)


def mini_scenario() -> dict[str, Any]:
    facts = {
        "HAND": {"project": "svc", "kind": "control: in CLAUDE.md twice", "match": "HANDFACT-7731"},
        "MISSING": {"project": "svc", "kind": "control: never planted", "match": "NEVERSAID-4410"},
        "OLD": {
            "project": "svc",
            "kind": "control: superseded, still in CLAUDE.md",
            "match": "OLDREGION-west",
            "superseded_by": "NEW",
        },
        "NEW": {"project": "svc", "kind": "control: said on day 1", "match": "NEWREGION-east"},
    }
    return {
        "name": "smoke",
        "start": "2026-11-02",
        "projects": {"svc": {"dir": "svc", "files": {"README.md": "# svc\n"}}},
        "facts": facts,
        "noise": ["NOISE-REPLY-5521"],
        "privacy": {"secrets": [SECRET], "private": []},
        "sessions": [
            {
                "day": 1,
                "project": "svc",
                "turns": [
                    {
                        "user": f"The registry moved to NEWREGION-east. Also my key is {SECRET}.",
                        "assistant": [
                            {
                                "tool": "Write",
                                "input": {"file_path": "{project}/CLAUDE.md", "content": CLAUDE_MD},
                            },
                            {"text": "Noted."},
                        ],
                    }
                ],
            },
            {
                "day": 1,
                "project": "svc",
                "turns": [{"user": "hi", "assistant": [{"text": "Hello. NOISE-REPLY-5521"}]}],
            },
        ],
        "topics": [
            {"fact": "HAND", "project": "svc", "prompt": "deploy the service"},
            {"fact": "MISSING", "project": "svc", "prompt": "rotate the signing keys"},
            {"fact": "NEW", "project": "svc", "prompt": "push the image to the registry"},
        ],
    }


@pytest.mark.e2e
def test_a_mini_week_measures_known_controls(tmp_path: Path) -> None:
    if find_claude_bin() is None:
        pytest.skip("the real claude binary is not installed: run .ci/install_claude.sh")
    week = importlib.import_module("week")
    scenario = mini_scenario()
    record = week.run_week(scenario, tmp_path / "out", days=2)
    result = measure.analyze(record)

    topics = {t["fact"]: t for t in result["topics"]}
    assert topics["HAND"]["reached"] and "other" in topics["HAND"]["via"]
    assert not topics["MISSING"]["reached"]
    # NEW was only said in a session: whether it reached the topic is memory-tool's business,
    # but the CLAUDE.md line with the old fact alone is stale either way.
    assert OLD in topics["NEW"]["stale_lines"]
    dup = [d for d in result["duplicates"]["items"] if d["fact"] == "HAND"]
    assert dup and all(d["times"] >= 2 for d in dup)
    assert any(s["fact"] == "OLD" for s in result["stale"]["items"])
    assert result["noise"]["requests"] >= 1
    assert any(leak.get("secret") == SECRET for leak in result["leaks"])
    # The harness wires the hooks as installed (an HTTP hook to the sandbox's own server port).
    assert result["hook_errors"] == []
    # Every session's first request was recorded; the clock reached the hooks.
    assert all(r["rc"] == 0 and r["requests"] >= 1 for r in record["runs"]), record["warnings"]
    assert {r["day"] for r in record["runs"]} == {1, 2}
    assert result["cost"]["hooks"]["Stop"]["calls"] >= len(record["runs"])
    reached = result["recall"]["reached"]
    assert 1 <= reached <= 2  # HAND yes, MISSING no, NEW up to memory-tool
    assert f"| topic prompts that got their fact | **{reached} / 3** |" in measure.markdown(result)


def test_context_lines_drop_the_clients_own_lines_and_the_prompt() -> None:
    baseline = {"You are Claude Code.", "# Environment"}
    request = "You are Claude Code.\n# Environment\n fix the bug \nUse httpx.\n\n"
    assert measure.context_lines(request, baseline, "fix the bug") == ["Use httpx."]


def test_an_index_lines_pointer_is_not_the_fact() -> None:
    rx = measure.fact_regex({"match": r"\bhttpx\b"})
    pointer = "- [use-httpx-instead](feedback_use_httpx.md) — rule captured 2026-11-16"
    described = "- [use-httpx-instead](feedback_use_httpx.md) — Use httpx, not requests."
    assert measure.hits([pointer, described], rx) == [described]


def test_a_line_with_the_old_fact_and_its_replacement_is_not_stale() -> None:
    facts = {
        "old": {"match": "pandas", "superseded_by": "new"},
        "new": {"match": "polars"},
    }
    assert measure.is_stale_line("- load events with pandas", facts["old"], facts)
    assert not measure.is_stale_line("switch to polars instead of pandas", facts["old"], facts)


def test_mangled_text_is_named() -> None:
    assert measure.mangled_reasons("no, use httpx instead of requests") == ["lead-in"]
    assert measure.mangled_reasons("[DECISION] Keys live in Redis.") == ["raw tag"]
    assert measure.mangled_reasons("Keys live in Redis. done") == ["trailing word"]
    assert measure.mangled_reasons("The user is Dana, I work on payments.") == ["mixed person"]
    assert measure.mangled_reasons("Use httpx instead of requests.") == []
    assert measure.mangled_reasons("No emoji in answers.") == []  # a fact, not "no, …"
    assert measure.mangled_reasons("no: use httpx") == ["lead-in"]
