"""Why the brief holds what it holds (recall/explain.py): each entry's reason, what fell off and
why (the entry cap, the budget, a duplicate, an expiry), and a prompt's rooms and L3 text; plus
[[links]] both ways (store/links.py) and a room's words (store/rooms.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_memory

from memory_tool.base import paths
from memory_tool.recall import explain
from memory_tool.store import links
from memory_tool.store.index import open_index
from memory_tool.store.palace import add_memory, init_palace
from memory_tool.store.rooms import room_vocabulary


@pytest.fixture
def palace(project: Path) -> Path:
    init_palace()
    return project


def _add(project: Path, text: str, **kw: object) -> str:
    with open_index() as idx:
        return add_memory(idx, text, cwd=project, **kw).id  # type: ignore[arg-type]


def _rows(ex: explain.Explanation) -> dict[str, explain.Row]:
    return {r.entry.id: r for rows in ex.rows.values() for r in rows} | {
        r.entry.id: r for r in ex.dropped
    }


def test_each_entry_says_why_it_is_in_the_brief(palace: Path) -> None:
    pinned = _add(palace, "The API style guide is in docs/api.md.", type_="note", room="api",
                  always=True)  # fmt: skip
    critical = _add(palace, "Never force-push to main: it destroys teammates' work.",
                    type_="feedback")  # fmt: skip
    rule = _add(palace, "Prefer small pull requests.", type_="feedback")
    fact = _add(palace, "The service listens on port 8080.", type_="project", importance=4)
    user = _add(palace, "Dana prefers terse answers.", type_="user")
    with open_index() as idx:
        ex = explain.explain_brief(idx, palace)
    rows = _rows(ex)
    assert rows[pinned].reason == "pinned (always: true)"
    assert rows[critical].reason == "critical rule (irreversible consequences)"
    assert rows[rule].reason == "rule"
    assert rows[fact].reason == "importance x decay"
    assert rows[fact].formula == "importance 4 x (1 + 0 days)^-0.3 = 4.00"
    assert rows[user].layer == "L1" and rows[user].loaded
    assert all(r.loaded for r in rows.values())
    assert ex.loaded == 5 and ex.cap == 15
    assert all(f"[{i}]" in ex.brief.text for i in rows)  # the explained brief is the brief


def test_what_the_cap_the_budget_and_the_expiry_leave_out_is_named(palace: Path) -> None:
    (paths.state_root() / "config.yaml").write_text("always_load_max: 3\n")
    ids = [_add(palace, f"Fact number {n}: the {w} service owns its own schema.",
                type_="project", importance=5 - n)
           for n, w in enumerate(["cart", "billing", "search", "email", "search2"])]  # fmt: skip
    long = _add(palace, "Long fact. " + "word " * 300, type_="project", importance=5)
    expired = _add(palace, "The freeze lasts until the audit ends.", type_="project",
                   extra={"expires": "2026-01-01"})  # fmt: skip
    with open_index() as idx:
        ex = explain.explain_brief(idx, palace)
    rows = _rows(ex)
    loaded = [i for i in ids + [long] if rows[i].loaded]
    assert len(loaded) == 3 and ex.loaded == 3
    capped = [i for i in ids if rows[i].dropped == explain.DROP_CAP]
    assert capped and all("3-entry always-load cap" in rows[i].detail for i in capped)
    assert rows[expired].dropped == explain.DROP_EXPIRED
    assert rows[expired].detail == "expired on 2026-01-01"
    # Every candidate is accounted for: loaded, or left out with a reason.
    assert all(r.loaded or r.dropped for r in rows.values())


def test_an_entry_too_long_for_what_is_left_is_a_budget_drop(palace: Path) -> None:
    (paths.state_root() / "config.yaml").write_text("budgets:\n  l2_tokens: 60\n")
    short = _add(palace, "Short fact about the cart.", type_="project", importance=5)
    long = _add(palace, "A long fact: " + "the cart service retries payments " * 12,
                type_="project", importance=4)  # fmt: skip
    with open_index() as idx:
        ex = explain.explain_brief(idx, palace)
    rows = _rows(ex)
    assert rows[short].loaded
    assert rows[long].dropped == explain.DROP_BUDGET
    assert "did not fit L2's budget" in rows[long].detail and "of 60 were left" in rows[long].detail


def test_the_same_fact_in_two_projects_is_one_entry_and_the_other_says_so(
    palace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    a = _add(palace, "Dana works in Berlin.", type_="user")
    b = _add(other, "Dana works in Berlin.", type_="user")
    with open_index() as idx:
        ex = explain.explain_brief(idx, palace)
    rows = _rows(ex)
    kept, twin = (a, b) if rows[a].loaded else (b, a)
    assert rows[kept].loaded and rows[twin].dropped == explain.DROP_DUPLICATE
    assert f"[{kept}]" in rows[twin].detail


def test_a_prompt_shows_its_rooms_scores_and_what_l3_injects(palace: Path) -> None:
    note = _add(palace, "OAuth callback URLs must be registered per environment.",
                type_="note", room="authentication")  # fmt: skip
    with open_index() as idx:
        idx.refresh(palace)
        p = explain.preview_prompt(idx, "the oauth login redirect fails", palace)
        nothing = explain.preview_prompt(idx, "tell me a joke", palace)
        brief_has_it = explain.preview_prompt(idx, "oauth login", palace, exclude={note})
    top = p.scores[0]
    assert (top.room, top.verdict) == ("authentication", explain.CHOSEN)
    assert "oauth" in top.terms and top.score >= p.threshold
    assert note in p.recall.text and "(L3)" in p.recall.text
    assert nothing.recall.text == "" and not any(
        s.verdict == explain.CHOSEN for s in nothing.scores
    )
    assert note not in brief_has_it.recall.text  # what the brief holds is not repeated


def test_links_resolve_both_ways(palace: Path) -> None:
    rooms = paths.palace_dir("rooms") / "api"
    write_memory(rooms, "rate-limits.md", "Clients get 100 requests a minute.")
    write_memory(
        rooms, "retries.md", "Retry 429s with backoff, see [[Rate Limits]] and [[nowhere]]."
    )
    with open_index() as idx:
        idx.refresh(palace)
        (limits,) = idx.entries(path=str(rooms / "rate-limits.md"))
        (retries,) = idx.entries(path=str(rooms / "retries.md"))
        out = links.outgoing(idx, retries)
        assert [(t, e.id if e else None) for t, e in out] == [
            ("Rate Limits", limits.id),
            ("nowhere", None),
        ]
        assert [e.id for e in links.backlinks(idx, limits)] == [retries.id]
        assert links.backlinks(idx, retries) == []


def test_a_rooms_words_are_what_rooms_yaml_lists(palace: Path) -> None:
    (paths.state_root() / "rooms.yaml").write_text(
        "rooms:\n  billing:\n    description: Money in.\n    keywords: [invoice, stripe]\n"
        "    phrases: [credit note]\n"
    )
    (paths.palace_dir("rooms") / "ops").mkdir(parents=True)
    words = room_vocabulary()
    assert words["billing"]["keywords"] == ["invoice", "stripe"]
    assert words["billing"]["phrases"] == ["credit note"]
    assert words["billing"]["description"] == "Money in."
    assert words["ops"]["keywords"] == []  # a folder-only room: its name alone


def test_wake_why_prints_the_same_reasons(palace: Path) -> None:
    from click.testing import CliRunner

    from memory_tool.cli.main import main

    (paths.state_root() / "config.yaml").write_text("always_load_max: 2\n")
    _add(palace, "Dana prefers terse answers.", type_="user")
    rule = _add(palace, "Never drop a table in production.", type_="feedback")
    fact = _add(palace, "The cart service is written in Go.", type_="project")
    out = CliRunner().invoke(main, ["wake", "--why", "--cwd", str(palace)]).output
    why = out.split("--- why (2 of at most 2 entries loaded)\n")[1]
    assert f"* L2 {rule}" in why and "critical rule (irreversible consequences)" in why
    assert f"  L2 {fact}" in why
    assert "left out: the 2-entry always-load cap was reached (1 left for L2 after L1)" in why
    data = __import__("json").loads(
        CliRunner().invoke(main, ["wake", "--why", "--json", "--cwd", str(palace)]).output
    )
    assert [r["id"] for r in data["why"]["layers"]["L2"] if not r["loaded"]] == [fact]
