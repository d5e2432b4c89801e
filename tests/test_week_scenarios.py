"""Every week-benchmark scenario (bench/week/*.json) loads through the harness and is sound
before anyone spends minutes running it: every topic names a fact that exists, every fact's
regex compiles, finds the fact's own sentence and is said in some session (else no figure can
count it), a regex claims no other fact's sentence and no topic prompt (it must find the fact,
not the topic), and the noise and privacy needles are really said where they are measured."""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO

WEEK = REPO / "bench" / "week"
sys.path.insert(0, str(WEEK))

import measure  # noqa: E402
import week  # noqa: E402

SCENARIOS = sorted(p.stem for p in WEEK.glob("*.json"))
PRIVATE_SPAN_RE = re.compile(r"<private>(.*?)</private>", re.DOTALL)


def turn_texts(scenario: dict[str, Any]) -> list[tuple[int, str, str]]:
    """(day, user text, the turn as week.py scans it for planted facts) per turn, in order."""
    out = []
    for s in scenario["sessions"]:
        for turn in s["turns"]:
            said = [turn["user"]] + [json.dumps(a, ensure_ascii=False) for a in turn["assistant"]]
            out.append((s["day"], turn["user"], "\n".join(said)))
    return out


@pytest.fixture(params=SCENARIOS)
def scenario(request: pytest.FixtureRequest) -> dict[str, Any]:
    return week.load_scenario(request.param)


def test_the_known_scenarios_are_there() -> None:
    assert {"dev", "blind", "blind2", "blind3", "blind4"} <= set(SCENARIOS)


def test_it_loads_by_name_and_names_itself(scenario: dict[str, Any]) -> None:
    # `week.py --scenario NAME` loads NAME.json and writes to bench/out/week-<its name>.
    assert (WEEK / f"{scenario['name']}.json").is_file()
    dt.date.fromisoformat(scenario["start"])
    assert scenario["about"]
    for spec in scenario["projects"].values():
        assert spec["dir"] and isinstance(spec.get("files", {}), dict)


def test_sessions_are_well_formed(scenario: dict[str, Any]) -> None:
    days = [s["day"] for s in scenario["sessions"]]
    assert days == sorted(days) and days[0] >= 1
    for s in scenario["sessions"]:
        assert s["project"] in scenario["projects"]
        assert s["turns"]
        for turn in s["turns"]:
            assert isinstance(turn["user"], str) and turn["user"].strip()
            assert turn["assistant"], "the stand-in needs at least one scripted answer"
            for a in turn["assistant"]:
                assert ("text" in a) != ("tool" in a), a
                if "tool" in a:
                    assert isinstance(a["input"], dict)
                else:
                    assert a["text"].strip()


def test_every_fact_is_sound(scenario: dict[str, Any]) -> None:
    facts = scenario["facts"]
    turns = turn_texts(scenario)
    planted_at = {}
    for fid, fact in facts.items():
        assert fact["project"] is None or fact["project"] in scenario["projects"], fid
        assert fact["kind"] and fact["text"], fid
        rx = measure.fact_regex(fact)
        assert rx.search(fact["text"]), f"{fid}: its regex misses its own sentence"
        said = [i for i, (_, _, text) in enumerate(turns) if rx.search(text)]
        assert said, f"{fid}: never said in a session, so it is never planted"
        planted_at[fid] = said[0]
    for fid, fact in facts.items():
        newer = fact.get("superseded_by")
        if newer:
            assert newer in facts and not facts[newer].get("superseded_by"), fid
            assert planted_at[fid] < planted_at[newer], f"{fid} is said after what replaces it"


def test_a_regex_claims_only_its_own_fact(scenario: dict[str, Any]) -> None:
    """A regex that also matched another fact's sentence would count that fact as this one
    (recall, duplicates, another project's fact). Old and new versions of one fact may share
    words: the new sentence often names the old ("use ruff instead of flake8")."""
    facts = scenario["facts"]
    for fid, fact in facts.items():
        rx = measure.fact_regex(fact)
        for other_id, other in facts.items():
            linked = fact.get("superseded_by") == other_id or other.get("superseded_by") == fid
            if other_id != fid and not linked:
                assert not rx.search(other["text"]), f"{fid}'s regex matches {other_id}"


def test_every_topic_needs_a_planted_fact(scenario: dict[str, Any]) -> None:
    facts = scenario["facts"]
    topics = scenario["topics"]
    named = [t["fact"] for t in topics]
    for t in topics:
        fact = facts[t["fact"]]
        assert t["project"] in scenario["projects"]
        assert fact["project"] in (None, t["project"]), t
        # The prompt is taken out of the context: a prompt that states the fact measures nothing.
        assert not measure.fact_regex(fact).search(t["prompt"]), t
    current = [fid for fid, f in facts.items() if not f.get("superseded_by")]
    assert sorted(set(named)) == sorted(current), "each current fact has a topic, and only those"
    for fid, fact in facts.items():
        if fact["kind"] == "handoff":
            # "where were we?" and a prompt that names the handoff's topic.
            assert named.count(fid) >= 2, fid
    last_day = max(s["day"] for s in scenario["sessions"])
    first_said = {
        fid: min(d for d, _, text in turn_texts(scenario) if measure.fact_regex(f).search(text))
        for fid, f in facts.items()
    }
    assert all(first_said[fid] < last_day for fid in named), "a fact is said before its topic day"


def test_noise_and_privacy_needles_are_really_planted(scenario: dict[str, Any]) -> None:
    turns = turn_texts(scenario)
    everything = "\n".join(text for _, _, text in turns).lower()
    stated = [f["text"] for f in scenario["facts"].values()] + [
        t["prompt"] for t in scenario["topics"]
    ]
    for needle in scenario["noise"]:
        assert needle.lower() in everything, f"noise {needle!r} is never said"
        assert not any(needle.lower() in s.lower() for s in stated), needle
    privacy = scenario["privacy"]
    users = [user for _, user, _ in turns]
    spans = [m for user in users for m in PRIVATE_SPAN_RE.findall(user)]
    for secret in privacy["secrets"]:
        assert any(secret in u for u in users), f"secret {secret!r} is never said"
    for private in privacy["private"]:
        assert any(private in span for span in spans), f"{private!r} is not in a <private> span"
    for needle in privacy["secrets"] + privacy["private"]:
        assert not any(needle in s for s in stated), needle


def test_week_py_accepts_each_scenario_name() -> None:
    for name in SCENARIOS:
        assert week.load_scenario(name)["name"] == name
    assert Path(week.__file__).parent == WEEK
