"""Generate a realistic memory tree of N files in a temporary HOME, for the scale benchmarks.

Mix (what a heavy user's machine looks like after a year or two):
- Claude Code auto memory: a few dozen files per project across up to 20 projects, types
  user / feedback / project / reference, both frontmatter layouts, a MEMORY.md index each;
- identity/: a handful of facts about the person;
- the bulk in palace rooms (``<state>/rooms/<room>/``) across the twelve shipped rooms plus a few
  user rooms;
- a wiki share (10%).
Text is made from developer phrase banks, so BM25 and the room classifier see realistic words.
Everything is deterministic for a given N and seed.

Usage: .venv/bin/python bench/gen_tree.py HOME_DIR N
"""

from __future__ import annotations

import json
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memory_tool.base.paths import sanitize_path  # noqa: E402

# Up to this many projects, each with at most this many auto-memory files: a few dozen per
# project across ~20 projects is what a busy Claude Code user accumulates.
MAX_PROJECTS = 20
MAX_CLAUDE_PER_PROJECT = 30
CLAUDE_SHARE = 0.4  # of small trees; large trees stop at MAX_PROJECTS * MAX_CLAUDE_PER_PROJECT
WIKI_SHARE = 0.10
IDENTITY_FILES = 6
# Days back that memories' created: dates spread over (two years of use).
SPAN_DAYS = 730
TODAY = "2026-11-29"  # matches MEMORY_TOOL_TODAY in the benchmarks
# The project the hooks run in (its folder is <home>/work/<name>, a git repository).
HOME_PROJECT = "billing-api"

ROOMS = {
    "authentication": [
        "the {svc} login flow redirects back to /login when the session cookie is missing",
        "refresh tokens are rotated on every use; a reused refresh token revokes the family",
        "access tokens expire after {n} minutes; the client refreshes {m} seconds early",
        "JWT signing keys come from the JWKS endpoint and are cached for {n} minutes",
        "password hashing uses argon2id with {n} MB memory cost",
        "OAuth callback for {vendor} must match the registered redirect URI exactly",
        "the admin role check lives in the requireAuth middleware, not in each route",
        "MFA with TOTP is mandatory for staff accounts since the {month} audit",
        "magic link sign-in tokens are single use and valid for {n} minutes",
        "SSO via {vendor} maps the groups claim to our roles at login",
    ],
    "database": [
        "migrations run with alembic; never edit a migration that already ran in production",
        "the {table} table has a unique constraint on (tenant_id, email)",
        "use the read replica for reporting queries over {table}",
        "connection pool size is {n} per worker; postgres max_connections is {m}",
        "a missing index on {table}.created_at caused a full table scan in the nightly job",
        "we use jsonb for {table}.metadata and a GIN index on it",
        "deadlocks in {table} updates went away after ordering rows by id before locking",
        "soft deletes: {table} rows get deleted_at instead of DELETE",
        "the ORM session is scoped per request; never share it across threads",
        "database is locked errors in tests came from two sqlite connections without WAL",
    ],
    "deployment": [
        "deploys go through the {svc} helm chart; bump the image tag in values-prod.yaml",
        "blue-green deploy: switch the load balancer only after health checks pass {n} times",
        "kubernetes pods for {svc} need {n} MiB memory limit or they get OOMKilled",
        "rollback with kubectl rollout undo deployment/{svc}",
        "staging deploys happen automatically on merge to main; production needs a tag",
        "terraform state for {svc} lives in the s3 bucket with dynamodb locking",
        "the docker image is built multi-stage; final image is distroless",
        "canary gets {n} percent of traffic for {m} minutes before full rollout",
    ],
    "testing": [
        "pytest fixtures for {svc} live in tests/conftest.py; use the tmp_path fixture for files",
        "integration tests need the docker compose stack; unit tests must not",
        "flaky test {test} failed because it depended on wall-clock time; freeze time instead",
        "snapshot tests for the {svc} API are updated with --snapshot-update",
        "coverage must stay above {n} percent on the {svc} package",
        "mock only at the network boundary; use a real database in tests",
        "property-based tests with hypothesis found the unicode bug in {svc}",
        "the e2e suite runs playwright against a seeded staging database",
    ],
    "frontend": [
        "the {svc} dashboard uses react query; invalidate the cache after mutations",
        "tailwind classes only; no inline styles in components",
        "the modal focus trap broke keyboard navigation on safari",
        "forms use react-hook-form with zod schemas shared with the backend",
        "the table component virtualises rows above {n} items",
        "dark mode colours come from css variables in theme.css",
        "hydration mismatch came from rendering dates in the server time zone",
        "bundle size budget is {n} KB gzipped for the main chunk",
    ],
    "api": [
        "POST /{table} is idempotent with an Idempotency-Key header stored for 24 hours",
        "the public API is versioned in the path (/v{n}/); breaking changes need a new version",
        "pagination uses opaque cursors, never offsets, on /{table}",
        "rate limit is {n} requests per minute per API key; 429 carries Retry-After",
        "error responses follow RFC 7807 problem+json",
        "the OpenAPI spec is generated from the route types; do not edit openapi.yaml by hand",
        "webhooks from {vendor} are verified with the signing secret before parsing",
        "graphql resolvers for {table} batch with a dataloader to avoid N+1 queries",
    ],
    "performance": [
        "p95 latency of /{table} went from {n} ms to {m} ms after adding the covering index",
        "profiling with py-spy showed JSON serialisation as the hot path in {svc}",
        "the redis cache for {table} lookups has a TTL of {n} seconds",
        "memory leak in {svc} came from an unbounded lru_cache on request objects",
        "batch inserts of {n} rows cut the import time by {m}x",
        "the slow endpoint was doing {n} sequential HTTP calls; made them concurrent",
        "gzip on responses over {n} KB halved the transfer time",
    ],
    "security": [
        "secrets come from the vault; never commit .env files",
        "dependabot alerts for {svc} are triaged every monday",
        "CSP header blocks inline scripts; nonces are generated per request",
        "SQL injection risk: always use bound parameters, never f-strings, in {svc}",
        "PII in logs is redacted by the logging filter; email addresses included",
        "the pentest found an open redirect in the {svc} callback handler",
        "CORS allows only the app domains; no wildcard with credentials",
    ],
    "ci": [
        "github actions workflow for {svc} caches pip and node_modules keyed on the lockfiles",
        "the ci job times out after {n} minutes; split the test matrix if it grows",
        "required checks: lint, typecheck, unit tests, build; merges blocked otherwise",
        "the release workflow tags and publishes on push of a v* tag",
        "ci runners are ubuntu-latest; the arm build runs on a self-hosted runner",
        "pre-commit runs ruff and prettier; ci runs the same hooks",
    ],
    "dependencies": [
        "pin {pkg} below {n}.0: the new major drops python 3.10",
        "renovate groups minor updates weekly; majors get their own PR",
        "the lockfile is uv.lock; regenerate with uv lock after editing pyproject",
        "{pkg} {n}.{m} broke our import of the legacy client; stay on the previous minor",
        "npm audit fix must not be run blindly; it upgraded {pkg} across a major",
        "vendored copy of {pkg} in third_party/ has a local patch for the timeout bug",
    ],
    "data-pipeline": [
        "the nightly ETL loads {table} into the warehouse with airflow",
        "kafka consumer for {table} events commits offsets only after the batch is written",
        "dbt models for {table} are incremental on updated_at",
        "the spark job for {svc} reads parquet partitioned by day",
        "backfills run with the --start and --end flags, one day per task",
        "late events older than {n} hours go to the dead letter topic",
    ],
    "documentation": [
        "the README for {svc} has a quick start; keep it runnable end to end",
        "architecture decision records live in docs/adr; number them sequentially",
        "docs site is built with mkdocs; deploy preview on every PR",
        "docstrings follow the google style; the API reference is generated from them",
        "the runbook for {svc} incidents is in docs/runbooks/{svc}.md",
        "changelog entries are written with each PR under the Unreleased heading",
    ],
}
USER_ROOMS = {
    "billing": [
        "invoices for {vendor} customers are generated on the first of the month",
        "stripe webhooks retry for 3 days; our handler must be idempotent",
        "proration on plan change is computed by stripe, never by us",
    ],
    "mobile": [
        "the ios app uses the same refresh token flow as the web client",
        "push notifications go through firebase; tokens are refreshed at app start",
        "the android build needs the release keystore from the vault",
    ],
    "observability": [
        "traces go to the otel collector; sample {n} percent in production",
        "the {svc} dashboard in grafana shows p95 latency and error rate",
        "alerts page on-call only for error budget burn over {n}x",
    ],
}
WHY = [
    "it broke production once when this was ignored",
    "the team agreed on this in the last retro",
    "it took a day to debug the last time",
    "the customer contract requires it",
    "it keeps the behaviour consistent across services",
    "the previous approach did not scale",
]
HOW = [
    "check this before touching the related code",
    "mention it in the PR description",
    "apply it to new code; leave old code until it is touched",
    "ask before changing it",
    "follow the existing pattern in the module",
]
SVCS = "billing auth gateway search orders inventory notifications reports payments ledger".split()
TABLES = "users orders invoices payments sessions events accounts products audit_log".split()
VENDORS = "okta auth0 google github stripe azure".split()
PKGS = "pydantic sqlalchemy requests django fastapi numpy react webpack eslint celery".split()
TESTS = "test_refresh test_checkout test_export test_login test_retry test_sync".split()
MONTHS = "january march may july september november".split()

USER_FACTS = [
    ("user_role", "The user is a senior backend engineer who works mostly in Python and Go."),
    ("user_editor", "The user prefers short answers with code first, explanation after."),
    ("user_tz", "The user works in the Europe/Berlin time zone; meetings are in the morning."),
    ("user_tests", "The user wants tests written before the fix when reproducing a bug."),
    ("user_git", "The user squashes commits before merging and writes imperative messages."),
    ("user_lang", "The user reads English and German; code comments stay in English."),
    ("user_shell", "The user uses zsh and ripgrep; suggest rg over grep."),
    ("user_review", "The user likes a summary of risky changes at the end of a task."),
]
FEEDBACK = [
    "never force-push to main; open a PR instead",
    "run the full test suite before saying a change is done",
    "do not add new dependencies without asking",
    "keep functions under 50 lines where possible",
    "prefer explicit errors over silent fallbacks",
    "write the migration and its rollback together",
    "do not touch generated files; change the generator",
    "use structured logging with the request id",
]
PROJECT = [
    "the {svc} rewrite targets the end of {month}; the old endpoints stay until then",
    "current focus: moving {table} to the new schema without downtime",
    "blocked on the {vendor} contract renewal for the SSO integration",
    "decided to keep the monolith for {svc} and split out only the reports job",
    "the {table} export must be GDPR compliant before the {month} release",
]
REFERENCE = [
    "dashboards for {svc} are in grafana under the team folder",
    "the on-call runbook is in the wiki page for {svc}",
    "API keys for {vendor} sandbox are in the vault under dev/",
    "design doc for the {table} migration is linked from the epic",
]
WIKI = [
    "how {svc} handles retries: exponential backoff with jitter, max {n} tries",
    "glossary: a tenant owns accounts; an account owns {table}",
    "onboarding: clone, run make dev, open localhost:{n}",
    "incident {n}: {svc} outage caused by an expired certificate",
    "spec: {table} archival after {n} days, restore on request",
    "the {svc} service owns {table}; other services read through its API",
]


@dataclass
class Layout:
    projects: int
    claude_per_project: int
    identity: int
    wiki: int
    rooms: int

    @property
    def total(self) -> int:
        return self.projects * self.claude_per_project + self.identity + self.wiki + self.rooms


def layout_for(n: int) -> Layout:
    claude = min(MAX_PROJECTS * MAX_CLAUDE_PER_PROJECT, int(n * CLAUDE_SHARE))
    projects = min(MAX_PROJECTS, max(2, claude // 8))
    per = max(1, claude // projects)
    identity = min(IDENTITY_FILES, max(1, n // 50))
    wiki = int(n * WIKI_SHARE)
    rooms = max(0, n - projects * per - identity - wiki)
    return Layout(projects, per, identity, wiki, rooms)


def _fill(rng: random.Random, template: str) -> str:
    return template.format(
        svc=rng.choice(SVCS),
        table=rng.choice(TABLES),
        vendor=rng.choice(VENDORS),
        pkg=rng.choice(PKGS),
        test=rng.choice(TESTS),
        month=rng.choice(MONTHS),
        n=rng.randint(2, 90),
        m=rng.randint(2, 500),
    )


def _date(rng: random.Random) -> str:
    import datetime as dt

    day = dt.date.fromisoformat(TODAY) - dt.timedelta(days=int(rng.random() ** 1.5 * SPAN_DAYS))
    return day.isoformat()


def _body(rng: random.Random, fact: str, extra: list[str]) -> str:
    lines = [fact[0].upper() + fact[1:] + "."]
    for _ in range(rng.randint(0, 2)):
        more = _fill(rng, rng.choice(extra))
        lines.append(more[0].upper() + more[1:] + ".")
    lines.append(f"**Why:** {rng.choice(WHY)}.")
    lines.append(f"**How to apply:** {rng.choice(HOW)}.")
    return "\n".join(lines)


def _slug(text: str, i: int) -> str:
    words = [w for w in "".join(c if c.isalnum() else " " for c in text.lower()).split()][:6]
    return "-".join(words) + f"-{i}"


def _write(path: Path, meta: list[str], body: str) -> None:
    path.write_text("---\n" + "\n".join(meta) + "\n---\n\n" + body + "\n", encoding="utf-8")


def _q(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid YAML double-quoted scalar


def generate(home: Path, n: int, seed: int = 7) -> dict[str, object]:
    """Write the tree under ``home`` (as $HOME). Returns a description of what was written."""
    rng = random.Random(seed * 1_000_003 + n)
    lay = layout_for(n)
    config = home / ".claude"
    state = config / "memory-tool"
    work = home / "work"
    names = [HOME_PROJECT] + [f"{s}-{k}" for k in range(3) for s in SVCS][: lay.projects - 1]
    project_dirs = []
    for name in names[: lay.projects]:
        d = work / name
        (d / ".git").mkdir(parents=True, exist_ok=True)
        project_dirs.append(d)
    all_rooms = {**ROOMS, **USER_ROOMS}
    every_fact = [t for bank in all_rooms.values() for t in bank]
    counter = 0

    # Claude Code auto memory.
    for d in project_dirs:
        mem = config / "projects" / sanitize_path(str(d)) / "memory"
        mem.mkdir(parents=True, exist_ok=True)
        index_lines = []
        for j in range(lay.claude_per_project):
            counter += 1
            kind = ("user", "feedback", "project", "reference", "project", "feedback")[j % 6]
            if kind == "user":
                k = j // 6
                slug, fact = USER_FACTS[k % len(USER_FACTS)]
                body = fact
                desc = fact
                fname = f"{slug}.md" if k < len(USER_FACTS) else f"{slug}_{k}.md"
            else:
                bank = {"feedback": FEEDBACK, "project": PROJECT, "reference": REFERENCE}[kind]
                fact = _fill(rng, rng.choice(bank))
                body = _body(rng, fact, bank)
                desc = fact[0].upper() + fact[1:]
                fname = f"{kind}_{_slug(fact, j)}.md"
            if j % 3 == 0:  # older layout: top-level type, free-text name
                meta = [f"name: {_q(desc[:60])}", f"description: {_q(desc)}", f"type: {kind}"]
            else:
                meta = [
                    f"name: {fname[:-3]}",
                    f"description: {_q(desc)}",
                    "metadata:",
                    f"  type: {kind}",
                ]
            if rng.random() < 0.5:
                meta.append(f"created: {_date(rng)}")
            _write(mem / fname, meta, body)
            index_lines.append(f"- [{desc[:50]}]({fname}) — {desc[:80]}")
        (mem / "MEMORY.md").write_text("\n".join(index_lines) + "\n", encoding="utf-8")

    # identity/
    ident = state / "identity"
    ident.mkdir(parents=True, exist_ok=True)
    for j in range(lay.identity):
        counter += 1
        slug, fact = USER_FACTS[j % len(USER_FACTS)]
        _write(ident / f"{slug}.md", [f"name: {slug}", f"description: {_q(fact)}"], fact)

    # rooms/<room>/: the bulk, spread unevenly (some rooms are busier than others).
    room_names = list(all_rooms)
    weights = [1.0 / (1 + k * 0.25) for k in range(len(room_names))]
    room_dirs = {r: state / "rooms" / r for r in room_names}
    for p in room_dirs.values():
        p.mkdir(parents=True, exist_ok=True)
    for j in range(lay.rooms):
        counter += 1
        room = rng.choices(room_names, weights)[0]
        fact = _fill(rng, rng.choice(all_rooms[room]))
        body = _body(rng, fact, all_rooms[room])
        meta = [
            f"name: {_slug(fact, j)}",
            f"description: {_q(fact[0].upper() + fact[1:])}",
            "metadata:",
            f"  type: {rng.choice(('project', 'feedback', 'reference', 'note'))}",
            f"created: {_date(rng)}",
        ]
        if rng.random() < 0.2:
            meta.append(f"importance: {rng.randint(1, 5)}")
        # Big rooms are split in sub-folders (by year) the way people file them.
        sub = room_dirs[room] / str(2025 + j % 2)
        sub.mkdir(exist_ok=True)
        _write(sub / f"{_slug(fact, j)}.md", meta, body)

    # wiki/
    wiki = state / "wiki"
    wiki.mkdir(parents=True, exist_ok=True)
    for j in range(lay.wiki):
        counter += 1
        fact = _fill(rng, rng.choice(WIKI))
        body = _body(rng, fact, every_fact)
        meta = [f"name: {_q(fact[:60])}", f"description: {_q(fact)}", f"created: {_date(rng)}"]
        _write(wiki / f"{_slug(fact, j)}.md", meta, body)

    return {
        "files": counter,
        "projects": lay.projects,
        "claude_per_project": lay.claude_per_project,
        "identity": lay.identity,
        "wiki": lay.wiki,
        "rooms": lay.rooms,
        "home_project_dir": str(project_dirs[0]),
        "other_project_dir": str(project_dirs[-1]),
    }


def main() -> int:
    home, n = Path(sys.argv[1]), int(sys.argv[2])
    home.mkdir(parents=True, exist_ok=True)
    print(json.dumps(generate(home, n)))
    return 0


if __name__ == "__main__":
    os.umask(0o077)
    sys.exit(main())
