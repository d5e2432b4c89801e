"""Generate Claude Code session transcripts (<config>/projects/<p>/<session>.jsonl) in the real
format, up to a target size, for the transcript-history benchmark.

What a real history looks like, by bytes: most of it is tool output (file reads, command output,
test logs), which Claude Code writes twice (the ``tool_result`` block and ``toolUseResult``);
then tool calls, thinking, Claude's text, and the person's prompts — the only parts we index.
Lines carry the real envelope (uuid, parentUuid, sessionId, cwd, gitBranch, version, usage…).
Prompts come from tests/data/prompts.jsonl (written the way developers type); the rest is made
from phrase banks and a pool of code/log text. Deterministic for a seed.

Usage: python bench/gen_transcripts.py HOME_DIR MEGABYTES
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memory_tool.base.paths import sanitize_path  # noqa: E402

PROJECTS = 20
# A session's prompts and the tool calls per prompt: a typical working session is an hour or
# two of back and forth, and 1-5 MB on disk.
PROMPTS_PER_SESSION = (8, 40)
TOOLS_PER_TURN = (1, 7)
# Tool output sizes (characters): a file read or a test log is a few KB, sometimes 30+ KB.
TOOL_OUTPUT_MEDIAN = 3_000
TOOL_OUTPUT_MAX = 40_000
SPAN_DAYS = 730
END = dt.datetime(2026, 11, 28, 18, 0, tzinfo=dt.timezone.utc)

ASSISTANT = [
    "I'll look at {file} first to see how {thing} is handled.",
    "The failure comes from {thing}: {file} assumes the value is never empty.",
    "I changed {file} so that {thing} is retried with backoff, and added a test.",
    "All {n} tests pass now. The root cause was {thing} in {file}.",
    "Two options: keep {thing} in {file}, or move it behind the service boundary. "
    "I'd keep it for now; it is simpler and the call sites are few.",
    "I ran the suite again; {n} failures remain, all in {file}, all about {thing}.",
    "Done. Summary: {thing} now lives in {file}; the old path is removed and the docs updated.",
    "Let me check the migration history before touching {thing}.",
]
THINKING = [
    "The user wants {thing}. I should read {file} and the tests before editing anything.",
    "This looks like a race in {thing}; the lock in {file} is taken too late.",
    "Maybe the fixture is stale. Check {file} and how {thing} is built there.",
]
THINGS = [
    "the refresh token rotation",
    "the retry loop",
    "the connection pool",
    "the CSV export",
    "the webhook signature check",
    "the pagination cursor",
    "the cache invalidation",
    "the nightly ETL job",
    "the feature flag lookup",
    "the rate limiter",
    "the invoice totals",
    "the session cookie",
    "the search index",
    "the upload client",
    "the migration script",
]
FILES = [
    "src/auth/tokens.py",
    "src/db/pool.py",
    "app/routes/charges.py",
    "web/src/Table.tsx",
    "services/export/csv.go",
    "tests/test_retry.py",
    "infra/helm/values-prod.yaml",
    "pipeline/dags/nightly.py",
    "src/api/pagination.ts",
    "src/upload/client.py",
]
COMMANDS = [
    "pytest -x -q",
    "npm test",
    "go test ./...",
    "git status",
    "git diff --stat",
    "ruff check .",
    "make build",
    "docker compose up -d",
    "alembic upgrade head",
    "rg -n TODO",
]
WORDS = (
    "def return self value result request response client server config error retry timeout "
    "token session user account order invoice payment cache index query table row column "
    "import from class async await if else for while try except raise with open read write "
    "assert expected actual passed failed skipped warning info debug trace status ok"
).split()


def _code_pool(rng: random.Random, chars: int) -> str:
    lines, total = [], 0
    while total < chars:
        indent = "    " * rng.randint(0, 3)
        line = indent + " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


class Writer:
    def __init__(self, rng: random.Random, pool: str, prompts: list[str]) -> None:
        self.rng, self.pool, self.prompts = rng, pool, prompts

    def fill(self, template: str) -> str:
        r = self.rng
        return template.format(thing=r.choice(THINGS), file=r.choice(FILES), n=r.randint(2, 300))

    def blob(self) -> str:
        r = self.rng
        size = min(TOOL_OUTPUT_MAX, int(r.lognormvariate(0, 1.0) * TOOL_OUTPUT_MEDIAN))
        start = r.randrange(0, len(self.pool) - size - 1)
        return self.pool[start : start + size]

    def session(self, cwd: str, session_id: str, start: dt.datetime) -> list[str]:
        r = self.rng
        out: list[str] = []
        parent: str | None = None
        t = start
        base = {
            "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session_id,
            "version": "2.1.197", "gitBranch": r.choice(["main", "feature/x", "fix/retry"]),
        }  # fmt: skip

        def line(kind: str, body: dict[str, Any], **extra: Any) -> None:
            nonlocal parent, t
            t += dt.timedelta(seconds=r.randint(2, 40))
            u = str(uuid.UUID(int=r.getrandbits(128), version=4))
            rec = {
                "parentUuid": parent,
                **base,
                "type": kind,
                **body,
                "uuid": u,
                "timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z",
            }
            rec.update(extra)
            out.append(json.dumps(rec, ensure_ascii=False))
            parent = u

        def assistant(content: dict[str, Any]) -> None:
            msg = {
                "id": f"msg_{r.getrandbits(64):016x}", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5-20250929", "content": [content], "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": r.randint(1, 50), "cache_read_input_tokens":
                          r.randint(1000, 90000), "output_tokens": r.randint(5, 900)},
            }  # fmt: skip
            line("assistant", {"message": msg}, requestId=f"req_{r.getrandbits(64):016x}")

        out.append(
            json.dumps(
                {
                    "type": "file-history-snapshot",
                    "messageId": str(uuid.uuid4()),
                    "snapshot": {"trackedFileBackups": {}},
                    "isSnapshotUpdate": False,
                }
            )
        )
        for _ in range(r.randint(*PROMPTS_PER_SESSION)):
            prompt = r.choice(self.prompts)
            if r.random() < 0.3:
                prompt += " " + self.fill("also check {file}, {thing} looked off")
            line("user", {"message": {"role": "user", "content": prompt}})
            if r.random() < 0.6:
                assistant(
                    {
                        "type": "thinking",
                        "thinking": self.fill(r.choice(THINKING)),
                        "signature": "Eq" + "A" * 40,
                    }
                )
            for _ in range(r.randint(*TOOLS_PER_TURN)):
                tool_id = f"toolu_{r.getrandbits(64):016x}"
                if r.random() < 0.55:
                    path = "/" + r.choice(FILES)
                    assistant(
                        {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": "Read",
                            "input": {"file_path": cwd + path},
                        }
                    )
                    text = self.blob()
                    result = {
                        "type": "text",
                        "file": {
                            "filePath": cwd + path,
                            "content": text,
                            "numLines": text.count("\n") + 1,
                        },
                    }
                else:
                    cmd = r.choice(COMMANDS)
                    assistant(
                        {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": "Bash",
                            "input": {"command": cmd, "description": "Run " + cmd},
                        }
                    )
                    text = self.blob()
                    result = {"stdout": text, "stderr": "", "interrupted": False}
                line(
                    "user",
                    {
                        "message": {
                            "role": "user",
                            "content": [
                                {
                                    "tool_use_id": tool_id,
                                    "type": "tool_result",
                                    "content": text,
                                    "is_error": r.random() < 0.1,
                                }
                            ],
                        }
                    },
                    toolUseResult=result,
                )
            assistant(
                {
                    "type": "text",
                    "text": self.fill(r.choice(ASSISTANT))
                    + (" " + self.fill(r.choice(ASSISTANT)) if r.random() < 0.5 else ""),
                }
            )
        return out


def _prompts() -> list[str]:
    rows = [json.loads(x) for x in (REPO / "tests" / "data" / "prompts.jsonl").open()]
    return [r["prompt"] for r in rows if r.get("prompt")]


def project_dirs(home: Path) -> list[str]:
    return [str(home / "work" / f"repo-{i:02d}") for i in range(PROJECTS)]


def generate(home: Path, megabytes: float, seed: int = 11) -> dict[str, Any]:
    """Write sessions until the history reaches ``megabytes``; returns counts."""
    rng = random.Random(seed)
    writer = Writer(rng, _code_pool(rng, 4_000_000), _prompts())
    target = int(megabytes * 1024 * 1024)
    projects = home / ".claude" / "projects"
    total = sessions = 0
    dirs = project_dirs(home)
    while total < target:
        cwd = rng.choice(dirs)
        folder = projects / sanitize_path(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        start = END - dt.timedelta(days=rng.random() * SPAN_DAYS)
        data = ("\n".join(writer.session(cwd, sid, start)) + "\n").encode()
        (folder / f"{sid}.jsonl").write_bytes(data)
        total += len(data)
        sessions += 1
    return {"bytes": total, "sessions": sessions, "projects": len(dirs)}


def one_session(home: Path, seed: int = 99) -> tuple[Path, int]:
    """Write one more (new) typical session; returns its path and size."""
    rng = random.Random(seed)
    writer = Writer(rng, _code_pool(rng, 1_000_000), _prompts())
    cwd = project_dirs(home)[0]
    folder = home / ".claude" / "projects" / sanitize_path(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    data = ("\n".join(writer.session(cwd, sid, END)) + "\n").encode()
    path = folder / f"{sid}.jsonl"
    path.write_bytes(data)
    return path, len(data)


if __name__ == "__main__":
    print(json.dumps(generate(Path(sys.argv[1]), float(sys.argv[2]))))
