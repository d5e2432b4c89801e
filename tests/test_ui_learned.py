"""The web UI's Learned view, Forget / Undo and the inbox's bulk accept / reject, over real HTTP
on 127.0.0.1 (tests/test_ui_browser.py clicks the same buttons in a browser): each change is a
POST with the CSRF value, writes the memory's file, and sends the person back where they were."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_memory
from ui_support import Served, location_path, served

from memory_tool.store.index import open_index
from memory_tool.store.tree import claude_folder_of
from memory_tool.tiers import inbox


@pytest.fixture
def ui(sandbox: Path) -> Served:
    with served(sandbox) as s:
        yield s


def captured(ui: Served, name: str, text: str, signal: str, quoted: str, session: str) -> Path:
    """A memory as auto-capture writes it: its provenance in the frontmatter."""
    return write_memory(
        claude_folder_of(ui.root).path, name, text, type_="feedback", created="2026-11-28",
        origin=f"capture:{signal}", originSessionId=session, captured_from=quoted,
    )  # fmt: skip


def id_of(path: Path) -> str:
    with open_index() as idx:
        idx.refresh()
        return idx.get_by_path(str(path)).id


def test_the_learned_view_lists_captures_by_session_with_their_source_line(ui: Served) -> None:
    a = captured(ui, "feedback_httpx.md", "Use httpx, not requests.", "correction",
                 "no, use httpx instead of requests", "5e55-0001-aaaa")  # fmt: skip
    b = captured(ui, "feedback_webhooks.md", "Never log webhook bodies.", "rule",
                 "Never log webhook bodies. password=[REDACTED]", "5e55-0002-bbbb")  # fmt: skip
    status, _, page = ui.request("GET", "/learned")
    assert status == 200
    for path in (a, b):
        assert id_of(path) in page
    assert "no, use httpx instead of requests" in page and "correction" in page
    assert "Session <code>5e55-000" in page
    assert "Deploys to production" not in page  # a memory written by hand is not a capture


def test_forget_from_the_learned_view_and_undo(ui: Served) -> None:
    path = captured(ui, "feedback_httpx.md", "Use httpx, not requests.", "correction",
                    "no, use httpx instead of requests", "5e55-0001-aaaa")  # fmt: skip
    mid = id_of(path)
    status, _, _ = ui.request("POST", f"/memory/{mid}/forget", form={"back": "/learned"})
    assert status == 403 and "forgotten" not in path.read_text()  # no CSRF value: refused
    status, headers, _ = ui.post(f"/memory/{mid}/forget", {"back": "/learned"})
    assert status == 303 and location_path(headers).startswith("/learned?note=forgot")
    assert "forgotten: 2026-11-29" in path.read_text()
    page = ui.request("GET", "/learned")[2]
    assert f'id="learned-{mid}" class="forgotten"' in page and "Undo" in page
    # Elsewhere it goes back to the memory's page, never to a place the form names.
    status, headers, _ = ui.post(f"/memory/{mid}/unforget", {"back": "https://evil.example/"})
    assert status == 303 and location_path(headers).startswith(f"/memory/{mid}?note=")
    assert "forgotten" not in path.read_text()


def test_the_memory_page_forgets_and_shows_the_chain(ui: Served) -> None:
    from memory_tool.store import lifecycle

    old, new = ui.ids["fact0"], ui.ids["fact1"]
    with open_index() as idx:
        lifecycle.supersede(idx, old, new)
    page = ui.request("GET", f"/memory/{old}")[2]
    assert f"history: superseded 2026-11-29 by {new}" in page
    assert f'newer: <a href="/memory/{new}">{new}</a>' in page
    page = ui.request("GET", f"/memory/{new}")[2]
    assert f'older: <a href="/memory/{old}">{old}</a>' in page and 'id="forget"' in page
    status, headers, _ = ui.post(f"/memory/{new}/forget", {})
    assert status == 303 and location_path(headers).startswith(f"/memory/{new}?note=forgot")
    assert 'id="unforget"' in ui.request("GET", f"/memory/{new}")[2]
    status, headers, _ = ui.post("/memory/p-000000/forget", {})
    assert status == 303 and "no+memory+with+id" in location_path(headers)


def test_bulk_accept_and_reject_in_the_inbox(ui: Served) -> None:
    waiting = inbox.list_candidates()
    assert len(waiting) == 3
    first, second, third = (c.id for c in waiting)
    page = ui.request("GET", "/inbox")[2]
    assert f'type="checkbox" name="cid" value="{first}" form="bulk"' in page
    status, _, _ = ui.request("POST", "/inbox/bulk", form={"action": "accept", "cid": first})
    assert status == 403  # no CSRF value
    assert len(inbox.list_candidates()) == 3
    status, headers, _ = ui.post("/inbox/bulk", {"action": "reject"})
    assert "tick+the+candidates" in location_path(headers)
    pairs = [("csrf", ui.ui.keys.csrf), ("action", "accept"), ("cid", first), ("cid", second)]
    status, headers, _ = ui.request("POST", "/inbox/bulk", form=[*pairs, ("cid", "x-nosuch")])
    assert status == 303
    where = location_path(headers)
    assert "accepted+2+of+3" in where and "1+failed" in where
    assert [c.id for c in inbox.list_candidates()] == [third]
    status, headers, _ = ui.post("/inbox/bulk", {"action": "reject", "cid": third})
    assert "rejected+1+of+1" in location_path(headers)
    assert inbox.list_candidates() == []
