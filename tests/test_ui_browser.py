"""The web UI in a real browser: Debian's chromium driven by Playwright (launched from its system
path; `playwright install` is never run), against the demo palace served on 127.0.0.1.

Each page loads with its script and stylesheet and no console error (the CSP lets only the
shipped files run); accepting an inbox item writes the memory file; editing, pinning and
archiving change the file; the prompt box shows the room and what L3 injects; a memory holding
<script> shows as text and never runs; without the token the browser gets 403.

Where chromium or Playwright is missing, these tests fail in CI (CI=true: ./test.sh installs
both, so a missing one is a broken install) and are skipped with a loud reason elsewhere (a
developer without root cannot apt-get install chromium)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_support import Served, served

from memory_tool.base import paths

CHROMIUM = os.environ.get("MEMORY_TOOL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PAGES = [
    ("/brief", "Next session"),
    ("/rooms", "Rooms"),
    ("/inbox", "Inbox"),
    ("/learned", "Learned"),
    ("/sessions", "Sessions"),
    ("/health", "Health"),
    ("/search?q=token+refresh", "Search"),
]


def _missing() -> str:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (./test.sh installs the test extra)"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no chromium at {CHROMIUM} (./test.sh installs Debian's chromium as root)"
    return ""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    why = _missing()
    if why and os.environ.get("CI"):
        pytest.fail(f"the browser tests cannot run in CI: {why}")
    if why:
        pytest.skip(f"BROWSER TESTS NOT RUN: {why}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


class Tab:
    """A logged-in browser tab on the served demo palace, recording console errors."""

    def __init__(self, ui: Served, page: Any) -> None:
        self.ui = ui
        self.page = page
        self.errors: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, path: str) -> Any:
        return self.page.goto(self.ui.ui.origin + path)

    def flash(self) -> str:
        return str(self.page.locator("p.flash").first.inner_text())


@pytest.fixture
def tab(browser: Any, sandbox: Path) -> Iterator[Tab]:
    with served(sandbox) as ui:
        context = browser.new_context()
        page = context.new_page()
        t = Tab(ui, page)
        page.goto(ui.ui.url)  # the printed URL: its token becomes the cookie
        yield t
        context.close()


def _file_of(tab: Tab, entry_id: str) -> Path:
    from memory_tool.store.index import open_index

    with open_index() as idx:
        return Path(idx.get(entry_id).path)


def test_every_page_loads_with_its_script_and_no_console_error(tab: Tab) -> None:
    assert tab.page.url == f"{tab.ui.ui.origin}/brief"  # the token left the address bar
    for path, heading in PAGES:
        response = tab.open(path)
        assert response.status == 200, path
        assert tab.page.locator("h1").first.inner_text() == heading, path
    tab.open(f"/memory/{tab.ui.ids['token-refresh']}")
    assert tab.page.locator("h1 .id").inner_text() == tab.ui.ids["token-refresh"]
    css = tab.page.evaluate("getComputedStyle(document.querySelector('header.top')).display")
    assert css == "flex"  # the shipped stylesheet applies
    assert tab.errors == []


def test_the_next_session_page_shows_the_brief_its_reasons_and_what_fell_off(tab: Tab) -> None:
    tab.open("/brief")
    brief = tab.page.locator("#brief-text").inner_text()
    assert brief.startswith("<memory-context>") and "Never run database migrations" in brief
    rule = tab.page.locator("tr", has_text=tab.ui.ids["rule0"])
    assert "critical rule (irreversible consequences)" in rule.inner_text()
    pinned = tab.page.locator("tr", has_text=tab.ui.ids["pinned"])
    assert "pinned (always: true)" in pinned.inner_text()
    assert "15 / 15" in tab.page.locator(".budgets").inner_text()  # the cap, full
    off = tab.page.locator("tr.off .why-off").all_inner_texts()
    assert off and all("cap" in t or "budget" in t for t in off)


def test_accepting_an_inbox_item_writes_its_memory_file(tab: Tab) -> None:
    tab.open("/inbox")
    card = tab.page.locator("article.candidate", has_text="Use ULIDs for every new public id")
    card.locator("select[name=to]").select_option("room:database")
    card.locator("button.accept").click()
    tab.page.wait_for_url("**/inbox?**")
    note = tab.flash()
    assert note.startswith("saved ")
    path = Path(note.split(" -> ", 1)[1])
    assert path.parent == paths.palace_dir("rooms") / "database"
    assert "Use ULIDs for every new public id, not UUIDv4." in path.read_text()
    assert "Use ULIDs" not in tab.page.locator("main").inner_text().replace(note, "")
    assert tab.page.locator("article.candidate").count() == 2


def test_bulk_accept_of_ticked_inbox_items_writes_their_files(tab: Tab) -> None:
    tab.open("/inbox")
    for text in ("Use ULIDs for every new public id", "Don't mock the database"):
        card = tab.page.locator("article.candidate", has_text=text)
        card.locator("input[type=checkbox]").check()
    tab.page.click("#bulk-accept")
    tab.page.wait_for_url("**/inbox?**")
    assert tab.flash() == "accepted 2 of 2"
    left = tab.page.locator("article.candidate")
    assert left.count() == 1 and "billing worker" in left.inner_text()
    from memory_tool.store.index import open_index
    from memory_tool.store.search import search

    with open_index() as idx:
        hit = search(idx, "ULIDs public id")[0].entry
    assert "Use ULIDs for every new public id" in Path(hit.path).read_text()
    tab.page.locator("article.candidate input[type=checkbox]").check()
    tab.page.click("#bulk-reject")
    tab.page.wait_for_url("**/inbox?**")
    assert tab.flash() == "rejected 1 of 1" and tab.page.locator("article.candidate").count() == 0
    assert tab.errors == []


def test_forget_and_undo_from_the_learned_view_and_the_memory_page(tab: Tab) -> None:
    from helpers import write_memory

    from memory_tool.store.tree import claude_folder_of

    path = write_memory(
        claude_folder_of(tab.ui.root).path, "feedback_httpx.md", "Use httpx, not requests.",
        type_="feedback", created="2026-11-28", origin="capture:correction",
        originSessionId="5e55-0001-aaaa", captured_from="no, use httpx instead of requests",
    )  # fmt: skip
    tab.open("/learned")
    row = tab.page.locator("table.learned tr", has_text="Use httpx")
    assert "no, use httpx instead of requests" in row.inner_text()
    assert "correction" in row.inner_text() and "live" in row.inner_text()
    row.locator("button.forget").click()
    tab.page.wait_for_url("**/learned?note=forgot*")
    assert "forgotten: 2026-11-29" in path.read_text()
    row = tab.page.locator("table.learned tr", has_text="Use httpx")
    assert "history: forgotten 2026-11-29" in row.inner_text()
    tab.open("/brief")
    assert "Use httpx" not in tab.page.locator("#brief-text").inner_text()
    tab.open("/learned")
    tab.page.locator("table.learned tr", has_text="Use httpx").locator("button.unforget").click()
    tab.page.wait_for_url("**/learned?note=*")
    assert "forgotten" not in path.read_text()
    # The memory page's own button.
    mid = tab.ui.ids["fact0"]
    tab.open(f"/memory/{mid}")
    tab.page.click("#forget")
    tab.page.wait_for_url(f"**/memory/{mid}?note=forgot*")
    assert tab.page.locator("h1 .badge.state").inner_text() == "forgotten"
    assert "forgotten: 2026-11-29" in _file_of(tab, mid).read_text()
    tab.page.click("#unforget")
    tab.page.wait_for_url(f"**/memory/{mid}?note=*")
    assert "forgotten" not in _file_of(tab, mid).read_text()
    assert tab.errors == []


def test_editing_a_memory_changes_its_file(tab: Tab) -> None:
    mid = tab.ui.ids["deploy-window"]
    path = _file_of(tab, mid)
    head = path.read_text().split("\n---\n", 1)[0]
    tab.open(f"/memory/{mid}")
    tab.page.fill("#body", "Deploys to production happen Monday to Thursday before 16:00.")
    tab.page.click("#save")
    tab.page.wait_for_url(f"**/memory/{mid}?note=saved")
    text = path.read_text()
    assert text.startswith(head + "\n---\n")  # the frontmatter as it was
    body = text.split("\n---\n", 1)[1]
    assert body == "\nDeploys to production happen Monday to Thursday before 16:00.\n"
    assert "Monday to Thursday" in tab.page.locator("#body").input_value()


def test_a_bad_frontmatter_edit_keeps_what_was_typed_and_the_file(tab: Tab) -> None:
    mid = tab.ui.ids["deploy-window"]
    path = _file_of(tab, mid)
    before = path.read_text()
    tab.open(f"/memory/{mid}")
    tab.page.fill("#frontmatter", "name: [oops")
    tab.page.fill("#body", "A rewrite I do not want to lose.")
    tab.page.click("#save")
    assert "not valid YAML" in tab.page.locator("#form-error").inner_text()
    assert tab.page.locator("#body").input_value() == "A rewrite I do not want to lose."
    assert path.read_text() == before


def test_pin_then_archive_with_its_confirmation(tab: Tab) -> None:
    mid = tab.ui.ids["old-login-page"]
    path = _file_of(tab, mid)
    tab.open(f"/memory/{mid}")
    tab.page.click("#pin")
    tab.page.wait_for_url(f"**/memory/{mid}?note=pinned*")
    assert "always: true" in path.read_text()
    assert tab.page.locator("h1 .badge.pin").count() == 1
    tab.page.once("dialog", lambda d: d.dismiss())  # the shipped script asks first
    tab.page.click("#archive")
    assert path.exists() and "/memory/" in tab.page.url
    tab.page.once("dialog", lambda d: d.accept())
    tab.page.click("#archive")
    tab.page.wait_for_url("**/rooms?note=archived*")
    assert not path.exists()
    assert (paths.state_root() / "archive" / path.relative_to(paths.state_root())).is_file()


def test_the_prompt_box_shows_the_room_and_what_l3_would_inject(tab: Tab) -> None:
    tab.open("/rooms")
    tab.page.fill("#prompt", "the oauth login redirect loops after a token refresh")
    tab.page.click("text=Classify")
    tab.page.wait_for_url("**/rooms?prompt=*")
    chosen = tab.page.locator("#preview tr.loaded")
    assert chosen.count() == 1
    assert "authentication" in chosen.inner_text() and "chosen" in chosen.inner_text()
    injected = tab.page.locator("#l3-text").inner_text()
    assert "## Memories about authentication (L3)" in injected
    assert tab.ui.ids["token-refresh"] in injected


def test_a_memory_holding_script_shows_as_text_and_never_runs(tab: Tab) -> None:
    hostile = tab.ui.ids["hostile"]
    for path in (f"/memory/{hostile}", "/rooms?room=frontend", "/search?q=markup+test"):
        tab.open(path)
        assert tab.page.evaluate("window.__pwned") is None, path
        assert tab.page.locator("main script, main img").count() == 0, path
    tab.open(f"/memory/{hostile}")
    assert "<script>window.__pwned = 1;</script>" in tab.page.locator("#body").input_value()
    tab.open("/rooms?room=frontend")
    assert "<script>window.__pwned" in tab.page.locator("main").inner_text()


def test_the_health_page_repairs_what_doctor_fix_can(tab: Tab) -> None:
    rollback = paths.palace_dir("rooms") / "deployment" / "rollback.md"
    assert "created:" not in rollback.read_text()
    tab.open("/health")
    tab.page.click("#fix")
    tab.page.wait_for_url("**/health?note=*")
    assert "repaired" in tab.flash() and "backup in" in tab.flash()
    assert "created:" in rollback.read_text()
    assert "rollback.md" in (rollback.parent / "MEMORY.md").read_text()


def test_without_the_token_the_browser_is_refused(browser: Any, sandbox: Path) -> None:
    with served(sandbox) as ui:
        context = browser.new_context()
        page = context.new_page()
        response = page.goto(ui.ui.origin + "/brief")
        assert response.status == 403
        assert "403 Forbidden" in page.content()
        assert "Never run database migrations" not in page.content()
        response = page.goto(ui.ui.url)
        assert response.status == 200 and page.url == ui.ui.origin + "/brief"
        context.close()


def test_the_screenshot_script_writes_a_png_of_every_main_page(
    browser: Any, tmp_path: Path
) -> None:
    """scripts/screenshots.py keeps the README's pictures current: it must keep working."""
    import subprocess
    import sys

    from helpers import REPO

    out = tmp_path / "images"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "screenshots.py"),
            "--out",
            str(out),
            "--chromium",
            CHROMIUM,
            "--base",
            str(tmp_path / "demo"),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    shots = sorted(p.name for p in out.glob("*.png"))
    assert shots == sorted(p.name for p in (REPO / "docs" / "images").glob("ui-*.png"))
    for shot in out.glob("*.png"):
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a page, not a blank
    assert not (tmp_path / "demo").exists()  # the demo palace is cleaned away


def test_projects_show_name_and_path_and_a_worktree_is_its_repository(
    tab: Tab, sandbox: Path
) -> None:
    """Claude Code files a session in a linked worktree under that folder's own key: the UI
    lists the repository once, by its name and path, and its worktree's sessions with it; the
    inbox's headings and a room's table name projects, not their keys."""
    from helpers import add_worktree, write_memory

    from memory_tool.store.index import open_index
    from memory_tool.store.palace import add_memory
    from memory_tool.tiers import inbox

    repo, worktree = sandbox / "src" / "pipeline", sandbox / "src" / "pipeline-wt"
    repo.mkdir(parents=True)
    add_worktree(repo, worktree)
    key, wt_key = paths.project_key(repo), paths.sanitize_path(str(worktree.resolve()))
    assert paths.project_key(worktree) == key != wt_key
    write_memory(paths.project_memory_dir(repo), "project_kafka.md",
                 "The pipeline reads from Kafka ZKAFKAQ.", type_="project")  # fmt: skip
    transcripts = paths.projects_dir() / wt_key
    transcripts.mkdir(parents=True)
    # A session in the worktree: its transcript records where it ran.
    text = (Path(__file__).parent / "data" / "transcripts" / "session_basic.jsonl").read_text()
    (transcripts / "8d0c5f3e-2b7a-4c1e-9f6d-1a2b3c4d5e6f.jsonl").write_text(
        text.replace("/home/dev/upload-svc", str(worktree))
    )
    inbox.write_candidates([("gotcha", "Offsets drop when the consumer group rebalances.")],
                           session="s1", project=key, cwd=str(repo), day="2026-11-29")  # fmt: skip
    inbox.write_candidates([("decision", "Batch size stays at 500 records per poll.")],
                           session="s2", project=wt_key, cwd=str(worktree),
                           day="2026-11-29")  # fmt: skip
    with open_index() as idx:
        mem = add_memory(idx, "Migrations for the pipeline run nightly ZNIGHTQ.", type_="note",
                         cwd=repo, room="database")  # fmt: skip
        idx.refresh()  # the sessions too, as the background refresh does
        assert wt_key in idx.distinct_values("project")

    label = "pipeline — ~/src/pipeline"
    tab.open("/brief")
    options = tab.page.locator("form.picker select[name=project] option").all_inner_texts()
    assert label in options
    assert not [o for o in options if "pipeline-wt" in o or o.startswith("-")], options
    tab.open(f"/sessions?project={wt_key}")  # the worktree's key opens its repository
    picked = tab.page.locator("form.picker select[name=project] option:checked").inner_text()
    assert picked == label

    tab.open("/inbox")
    headings = tab.page.locator("main h2").all_inner_texts()
    (theirs,) = [h for h in headings if h.startswith(label)]
    assert theirs.endswith("2")  # the worktree's candidate is the repository's
    assert not [h for h in headings if key in h or wt_key in h], headings

    tab.open("/rooms?room=database")
    row = tab.page.locator("tr", has_text=mem.id)
    assert row.locator("td").nth(2).inner_text() == "pipeline"
    assert key not in tab.page.locator("main").inner_text()
    assert tab.errors == []
