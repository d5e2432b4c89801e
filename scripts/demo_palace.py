"""A small, realistic memory palace for the web UI's tests and screenshots: one project with
rules, facts and a CONTEXT.md, room notes that link to each other, a wiki record, cold summaries
of past sessions and inbox candidates; enough always-load candidates that some fall off.

Everything is written through the library (``add_memory``, ``write_candidates``) into whatever
HOME / state root the environment names: call it with the environment already sandboxed."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from memory_tool.base import paths
from memory_tool.base.fsutil import atomic_write_text
from memory_tool.hygiene.roots import remember_root
from memory_tool.store import lifecycle
from memory_tool.store.index import open_index
from memory_tool.store.palace import add_memory, init_palace
from memory_tool.tiers import inbox

# A memory that holds markup: the UI must show it as text and never run it.
HOSTILE = (
    "Markup test: <script>window.__pwned = 1;</script> and "
    '<img src=x onerror="window.__pwned = 2"> stay text.'
)


def sandbox(base: Path) -> None:
    """Point every root memory-tool uses at ``base`` (nothing of the real HOME is read)."""
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ.update(
        HOME=str(home),
        MEMORY_TOOL_TODAY="2026-11-29",
        MEMORY_TOOL_SEMANTIC="0",
        MEMORY_TOOL_NO_BACKGROUND="1",
    )
    for name in ("CLAUDE_CONFIG_DIR", "MEMORY_TOOL_HOME", "CLAUDE_PROJECT_DIR"):
        os.environ.pop(name, None)


USER = "Dana is a backend engineer; prefers terse answers and Python with type hints."
RULES = [
    (
        "Never run database migrations against production by hand. Why: a manual migration "
        "dropped the orders table in March. How to apply: use the deploy pipeline's migrate step.",
        5,
        "2026-03-20",
    ),
    ("Run the test suite with -x before pushing; CI takes 20 minutes.", 4, "2026-10-02"),
    ("Always pin new dependencies to an exact version in requirements.txt.", 3, "2026-08-14"),
]
FACTS = [
    (
        "The checkout service moves from Flask to FastAPI; the cutover is 2026-12-15.",
        4,
        "2026-11-20",
    ),
    (
        "Staging runs on the old k8s cluster until the network team finishes its move.",
        3,
        "2026-05-02",
    ),
    ("Invoices are rendered by the billing worker, not by the web app.", 3, "2026-09-09"),
    (
        "Feature flags live in flags.yaml; remove a flag two releases after it ships.",
        2,
        "2026-07-30",
    ),
    (
        "The nightly export to the data warehouse starts at 02:00 UTC and takes about an hour.",
        2,
        "2026-06-11",
    ),
    ("Product analytics events are named object_action, e.g. cart_checked_out.", 2, "2026-10-28"),
    ("Order ids are ULIDs: sortable by time, safe to expose in URLs.", 3, "2026-11-03"),
    (
        "Support asks for receipts in PDF; the HTML receipt is for the browser only.",
        1,
        "2026-04-18",
    ),
    (
        "The mobile app still calls the v1 cart API; keep it until the app's March release.",
        3,
        "2026-11-12",
    ),
    (
        "Load tests run from the perf runner against staging, never against production.",
        4,
        "2026-09-25",
    ),
    (
        "Emails go out through the notifications service (templates in notifications/templates).",
        2,
        "2026-08-01",
    ),
    ("Customer data exports need a ticket from the privacy team first.", 3, "2026-10-15"),
    ("Prices are stored in cents as integers; never as floats.", 4, "2026-02-10"),
]
ROOM_NOTES = [
    (
        "authentication",
        "session-cookies",
        "Session cookies are HttpOnly, Secure and SameSite=Lax; the session lasts 12 hours.",
        "2026-10-01",
    ),
    (
        "authentication",
        "token-refresh",
        "Access tokens expire after 15 minutes and the refresh token rotates on every use: a "
        "reused refresh token logs the user out everywhere. See [[session-cookies]].",
        "2026-11-02",
    ),
    (
        "authentication",
        "old-login-page",
        "The legacy login page at /signin still serves the partner portal.",
        "2025-12-01",
    ),
    (
        "database",
        "postgres-version",
        "Production runs Postgres 16; alembic migrations, one revision per pull request. "
        "Background: [[token-refresh]] sessions are stored in Redis, not Postgres.",
        "2026-09-14",
    ),
    (
        "deployment",
        "deploy-window",
        "Deploys to production happen Tuesday to Thursday before 15:00; no Friday deploys.",
        "2026-06-20",
    ),
]
ROLLBACK = """---
name: rollback
description: Roll back with the pipeline's previous-release button, not by reverting commits.
---

Roll back with the pipeline's previous-release button, not by reverting commits: a revert
re-runs the migrations.
"""
CONTEXT = """# Shop

The shop's checkout, cart and billing services. Python 3.12, FastAPI (Flask until the
cutover), Postgres 16, Redis for sessions. Deploys through the pipeline only.
"""
COLD = [
    (
        "2026-11-26",
        "Fix the token refresh race in the checkout",
        "Task: Fix the token refresh race in the checkout\n\n## Decisions\n- Refresh tokens "
        "rotate on every use; a reused one revokes the family.\n\n## Files changed (2)\n- "
        "auth/refresh.py\n- tests/test_refresh.py\n\n## Result\n- The race is gone; 2 tests "
        "added.\n",
    ),
    (
        "2026-11-27",
        "Move the invoice PDF rendering to the billing worker",
        "Task: Move the invoice PDF rendering to the billing worker\n\n## Decisions\n- The "
        "web app no longer renders PDFs.\n\n## Gotchas\n- The worker needs the fonts package "
        "installed, or PDFs render without text.\n\n## Result\n- Invoices render in the worker.\n",
    ),
    (
        "2026-11-28",
        "Plan the FastAPI cutover",
        "Task: Plan the FastAPI cutover\n\n## Decisions\n- Cut over on 2026-12-15, behind a "
        "flag.\n\n## Next\n- Port the cart endpoints first.\n",
    ),
]
CANDIDATES = [
    ("decision", "Use ULIDs for every new public id, not UUIDv4."),
    ("gotcha", "The billing worker silently drops PDFs over 10 MB; split large invoices."),
    ("correction", "Don't mock the database in the checkout tests; use the test container."),
]


def _cold(project: str, root: Path, day: str, task: str, body: str, n: int) -> None:
    meta = {
        "name": f"session-{day}-{n:04x}",
        "description": task,
        "type": "cold",
        "created": day,
        "session": f"{n:08x}-demo",
        "project": project,
        "cwd": str(root),
    }
    head = "".join(f"{k}: {json.dumps(v)}\n" for k, v in meta.items())
    path = paths.palace_dir("cold") / project / f"{day}-{n:04x}.md"
    atomic_write_text(path, f"---\n{head}---\n\n{body}")


def build(base: Path, hostile: bool = False) -> dict[str, Any]:
    """Build the palace and a project folder under ``base``; returns the project's root and
    key, and the ids of the memories a test or a screenshot points at (by a short name)."""
    init_palace()
    root = base / "work" / "shop"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    atomic_write_text(root / "thoughts" / "CONTEXT.md", CONTEXT)
    key = paths.project_key(root)
    ids: dict[str, str] = {}
    with open_index() as idx:

        def add(label: str, text: str, type_: str, **kw: Any) -> None:
            created = kw.pop("created", None)
            extra = {"created": created} if created else None
            ids[label] = add_memory(idx, text, type_=type_, cwd=root, extra=extra, **kw).id

        add("user", USER, "user", created="2026-01-15")
        for n, (text, importance, day) in enumerate(RULES):
            add(f"rule{n}", text, "feedback", importance=importance, created=day)
        for n, (text, importance, day) in enumerate(FACTS):
            add(f"fact{n}", text, "project", importance=importance, created=day)
        for room, name, text, day in ROOM_NOTES:
            add(name, text, "note", room=room, name=name, created=day)
        add(
            "pinned",
            "Card numbers never reach our logs: the payment form posts straight to the provider.",
            "reference",
            room="security",
            name="card-numbers",
            always=True,
            created="2026-05-05",
        )
        add(
            "adr",
            "ADR: FastAPI over Django for the checkout service. Context: async I/O to the "
            "payment provider. Decision: FastAPI. Consequences: port the cart endpoints first.",
            "wiki",
            tier="wiki",
            name="adr-fastapi-checkout",
            created="2026-11-21",
        )
        if hostile:
            add(
                "hostile",
                HOSTILE,
                "note",
                room="frontend",
                name="markup-test",
                created="2026-11-01",
            )
        # What auto-capture saved from one session of another project (the Learned view; this
        # project's brief, which the README shows, stays as it was): a correction that
        # replaced an older rule, a tagged decision, and one the person forgot again.
        other = base / "work" / "events"
        (other / ".git").mkdir(parents=True, exist_ok=True)
        remember_root(idx, other)  # the UI names the project by its folder, not its key
        session = "5e55a0b1-demo"

        def capture(label: str, text: str, type_: str, signal: str, quoted: str) -> None:
            origin = {"origin": f"capture:{signal}", "originSessionId": session,
                      "captured_from": quoted, "created": "2026-11-28"}  # fmt: skip
            ids[label] = add_memory(idx, text, type_=type_, cwd=other, extra=origin).id

        old = {"created": "2026-10-02"}
        text = "Load event files with pandas.read_csv."
        ids["pandas"] = add_memory(idx, text, type_="feedback", cwd=other, extra=old).id
        polars = "use polars instead of pandas for the events pipeline"
        capture("polars", polars.capitalize() + ".", "feedback", "correction", "no, " + polars)
        lifecycle.supersede(idx, ids["pandas"], ids["polars"], day=dt.date(2026, 11, 28))
        ulid = "Event ids are ULIDs, generated by the producer."
        capture("ulid-events", ulid, "project", "decision", f"[DECISION] {ulid}")
        capture("tabs", "Indent YAML with tabs.", "feedback", "rule",
                "always indent YAML with tabs")  # fmt: skip
        lifecycle.forget(idx, ids["tabs"], day=dt.date(2026, 11, 28))
        # Written by hand, as people do: no created: date and no MEMORY.md line (the doctor's
        # repairs add both).
        atomic_write_text(paths.palace_dir("rooms") / "deployment" / "rollback.md", ROLLBACK)
        for n, (day, task, body) in enumerate(COLD, start=1):
            _cold(key, root, day, task, body, n)
        inbox.write_candidates(
            CANDIDATES, session="c0ffee00-demo", project=key, cwd=str(root), day="2026-11-28"
        )
        idx.refresh(root)
        for e in idx.entries(source="cold"):
            ids[f"cold-{e.created}"] = e.id
    return {"root": root, "key": key, "ids": ids}
