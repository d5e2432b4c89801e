"""Auto-capture's cost (issue 22): Stop and SessionEnd time and index growth over a run of
sessions with planted signals, capture on against capture off, and against an older checkout.

A temporary HOME, a project, then SESSIONS sessions in turn, each a transcript of TURNS prompts
and answers as Claude Code writes them, two or three of them carrying a signal (a correction, a
rule, a [DECISION]/[GOTCHA] line; some repeat an earlier session's). After each session: the Stop
hook, then SessionEnd, as whole processes with the Scribe inline (MEMORY_TOOL_NO_BACKGROUND=1:
the work a detached Scribe does is inside the timing), the hook server off; each session runs
through every variant in turn, so a busy machine slows them alike. Reported: median and p90 of
each hook, the memory files written, the index's size and rows.

    .venv/bin/python bench/capture_bench.py                       # this checkout, auto and off
    .venv/bin/python bench/capture_bench.py --before /tmp/before  # and an older checkout
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SESSIONS = int(os.environ.get("CAPTURE_BENCH_SESSIONS", "20"))
TURNS = 12
TOOLS = ("httpx", "polars", "ruff", "uv", "pytest", "fastapi", "redis", "alembic")


def _signals(n: int) -> list[tuple[str, str]]:
    """The turns of session ``n`` that carry a signal (every third session repeats one)."""
    k = n if n % 3 or n == 0 else n - 1  # every third session repeats the one before
    tool = TOOLS[k % len(TOOLS)]
    return [
        ("user", f"no, use {tool} for the service {k} module instead of the old one"),
        ("assistant", f"Done. [DECISION] Service {k} keeps its cache in Redis for {k + 1} hours."),
        ("user", f"Never deploy service {k} on Fridays."),
    ]


def _turns(n: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for t in range(TURNS):
        out.append(("user", f"Step {t} of task {n}: update the handler and its tests, please."))
        out.append(("assistant", f"Updated the handler for step {t}; tests pass. " * 5))
    return out[:4] + _signals(n) + out[4:]


def _line(kind: str, text: str, sid: str, cwd: Path, i: int) -> str:
    content: Any = text if kind == "user" else [{"type": "text", "text": text}]
    return json.dumps(
        {
            "type": kind,
            "sessionId": sid,
            "cwd": str(cwd),
            "uuid": f"u{i}",
            "timestamp": f"2026-11-29T10:{i // 60 % 60:02d}:{i % 60:02d}Z",
            "message": {"role": kind, "content": content},
        }
    )


def _hook(code: Path, event: str, data: dict[str, Any], env: dict[str, str]) -> float:
    script = code / "memory_tool" / "runtime" / "hook.py"
    started = time.perf_counter()
    res = subprocess.run(
        [sys.executable, str(script), event],
        input=json.dumps(data).encode(),
        capture_output=True,
        env=env,
        timeout=120,
    )
    elapsed = time.perf_counter() - started
    if res.returncode != 0:
        raise SystemExit(f"{event} failed: {res.stderr.decode()[:500]}")
    return elapsed


class Variant:
    """One checkout and capture.mode, in its own HOME."""

    def __init__(self, code: Path, mode: str) -> None:
        self.code, self.mode = code, mode
        self.home = Path(tempfile.mkdtemp(prefix="capture-bench-"))
        self.project = self.home / "work" / "svc"
        (self.project / ".git").mkdir(parents=True)
        self.state = self.home / ".claude" / "memory-tool"
        self.state.mkdir(parents=True)
        config = "server:\n  enabled: false\n"
        if mode != "default":
            config += f"capture:\n  mode: {mode}\n"
        (self.state / "config.yaml").write_text(config)
        self.env = {
            **os.environ,
            "HOME": str(self.home),
            "MEMORY_TOOL_NO_BACKGROUND": "1",
            "MEMORY_TOOL_SEMANTIC": "0",
            "MEMORY_TOOL_TODAY": "2026-11-29",
            "PYTHONPATH": str(code),
        }
        for key in ("CLAUDE_CONFIG_DIR", "MEMORY_TOOL_HOME"):
            self.env.pop(key, None)
        self.folder = self.home / ".claude" / "projects" / "transcripts"
        self.folder.mkdir(parents=True)
        self.stops: list[float] = []
        self.ends: list[float] = []

    def session(self, n: int) -> None:
        sid = str(uuid.uuid4())
        path = self.folder / f"{sid}.jsonl"
        lines = [_line(k, t, sid, self.project, i) for i, (k, t) in enumerate(_turns(n))]
        path.write_text("\n".join(lines) + "\n")
        data = {"session_id": sid, "transcript_path": str(path), "cwd": str(self.project)}
        stop = {**data, "hook_event_name": "Stop", "stop_hook_active": False}
        self.stops.append(_hook(self.code, "Stop", stop, self.env))
        end = {**data, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
        self.ends.append(_hook(self.code, "SessionEnd", end, self.env))

    def report(self) -> dict[str, Any]:
        projects = self.home / ".claude" / "projects"
        memory = [p for p in projects.glob("*/memory/*.md") if p.name != "MEMORY.md"]
        rooms = [p for p in (self.state / "rooms").rglob("*.md") if p.name != "MEMORY.md"]
        inbox = list((self.state / "inbox").glob("*.md"))
        with sqlite3.connect(self.state / "index.db") as conn:
            rows = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        size = sum(p.stat().st_size for p in self.state.glob("index.db*"))
        return {
            "code": str(self.code),
            "mode": self.mode,
            "stop_ms": _stats(self.stops),
            "session_end_ms": _stats(self.ends),
            "memories_written": len(memory) + len(rooms),
            "inbox": len(inbox),
            "index_rows": rows,
            "index_kb": round(size / 1024),
        }


def run(variants: list[Variant]) -> None:
    """Each session through every variant in turn: a busy machine slows them alike."""
    try:
        for n in range(SESSIONS):
            for v in variants:
                v.session(n)
        for v in variants:
            print(json.dumps(v.report()))
    finally:
        if not os.environ.get("CAPTURE_BENCH_KEEP"):
            for v in variants:
                shutil.rmtree(v.home, ignore_errors=True)


def _stats(values: list[float]) -> dict[str, float]:
    ms = sorted(v * 1000 for v in values)
    return {
        "median": round(statistics.median(ms), 1),
        "p90": round(ms[int(len(ms) * 0.9) - 1], 1),
        "max": round(ms[-1], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, help="also run an older checkout's package")
    parser.add_argument("--modes", default="auto,off", help="capture.mode values to run")
    args = parser.parse_args()
    variants = [Variant(REPO, mode) for mode in args.modes.split(",")]
    if args.before:
        variants.append(Variant(args.before, "default"))
    run(variants)


if __name__ == "__main__":
    main()
