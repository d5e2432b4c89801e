"""Backfill on a generated history: 200 Claude Code sessions of the last 30 days, in the real
transcript format (bench/gen_transcripts.py's writer: prompts from tests/data/prompts.jsonl,
tool calls and their output), with facts planted in them the way people and Claude write them:
corrections and rules in the user's prompts, ``[DECISION]``/``[GOTCHA]``/``[REUSE]``/``[DEFER]``
tags in Claude's answers. Most facts are planted in more than one session of their project (a
rule said again, a decision repeated): each must still be written once.

It runs ``memory-tool backfill --days 30`` as a process in a throwaway HOME, twice, and reports:
wall time, sessions read, what was written (cold summaries, captured memories, inbox
candidates), planted facts found, duplicates (a planted fact written more than once, or two
written memories / candidates with the same words), and what the second run wrote (goal 0).

Usage: python bench/backfill_bench.py [--sessions 200] [--days 30] [--seed 7] [--json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

import gen_transcripts as gen  # noqa: E402
from common import MEMORY_TOOL  # noqa: E402

from memory_tool.base.paths import sanitize_path  # noqa: E402

# A backfilled session here is a typical short working session: 4-14 prompts, 1-4 tool calls a
# prompt, tool output around a kilobyte (gen_transcripts' defaults model a 1-5 MB history
# session; 200 of those are a gigabyte, which measures disk, not the Scribe).
PROMPTS_PER_SESSION = (4, 14)
TOOLS_PER_TURN = (1, 4)
TOOL_OUTPUT_MEDIAN = 1_000
TOOL_OUTPUT_MAX = 8_000
PROJECTS = 8
# Planted facts per project, and how many sessions each is said in (repeats must not duplicate).
FACTS_PER_PROJECT = 5
REPEATS = (1, 3)

# (who says it, the line, the words that identify the fact in whatever was written)
FACT_TEMPLATES: list[tuple[str, str, str]] = [
    ("user", "no, use httpx instead of requests for outgoing calls in {p}", "httpx"),
    ("user", "never run the {p} migrations against production by hand", "migrations"),
    ("user", "always pin the {p} docker base image by digest", "digest"),
    ("assistant", "[DECISION] {p} stores event timestamps as UTC epoch milliseconds.", "epoch"),
    ("assistant", "[GOTCHA] The {p} integration tests hang without REDIS_URL.", "REDIS_URL"),
    ("assistant", "[REUSE] The {p} retry helper is lib/retry.py; use it everywhere.", "retry.py"),
    ("assistant", "[DEFER] Move the {p} CSV export to a background job.", "CSV export"),
    ("user", "don't mock the database in the {p} tests; use the test container", "test container"),
]  # fmt: skip


def plant(rng: random.Random) -> dict[str, list[tuple[str, str, str]]]:
    """Per project: its planted facts (who, line, marker)."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for i in range(PROJECTS):
        name = f"repo-{i:02d}"
        chosen = rng.sample(FACT_TEMPLATES, FACTS_PER_PROJECT)
        out[name] = [(who, line.format(p=name), marker) for who, line, marker in chosen]
    return out


def generate(home: Path, sessions: int, days: int, seed: int) -> dict[str, Any]:
    """Write ``sessions`` transcripts spread over the last ``days`` days, facts planted."""
    gen.PROMPTS_PER_SESSION = PROMPTS_PER_SESSION
    gen.TOOLS_PER_TURN = TOOLS_PER_TURN
    gen.TOOL_OUTPUT_MEDIAN = TOOL_OUTPUT_MEDIAN
    gen.TOOL_OUTPUT_MAX = TOOL_OUTPUT_MAX
    rng = random.Random(seed)
    writer = gen.Writer(rng, gen._code_pool(rng, 600_000), gen._prompts())
    facts = plant(rng)
    # Which sessions of a project say each fact: REPEATS times, at random.
    per_project = {p: [] for p in facts}  # type: dict[str, list[int]]
    order = [f"repo-{rng.randrange(PROJECTS):02d}" for _ in range(sessions)]
    for n, p in enumerate(order):
        per_project[p].append(n)
    said: dict[int, list[tuple[str, str]]] = {}
    planted = 0
    kept: dict[str, list[tuple[str, str, str]]] = {p: [] for p in facts}
    for p, items in facts.items():
        for who, line, marker in items:
            if not per_project[p]:
                continue
            k = min(len(per_project[p]), rng.randint(*REPEATS))
            for n in rng.sample(per_project[p], k):
                said.setdefault(n, []).append((who, line))
                planted += 1
            kept[p].append((who, line, marker))
    now = time.time()
    total = 0
    for n, p in enumerate(order):
        cwd = str(home / "work" / p)
        folder = home / ".claude" / "projects" / sanitize_path(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        age = rng.random() * (days - 1)
        start = dt.datetime.fromtimestamp(now - age * 86400 - 7200, tz=dt.timezone.utc)
        lines = writer.session(cwd, sid, start)
        for who, text in said.get(n, []):
            lines.insert(rng.randrange(1, len(lines) + 1), _line(who, text, cwd, sid, start))
        data = ("\n".join(lines) + "\n").encode()
        path = folder / f"{sid}.jsonl"
        path.write_bytes(data)
        stamp = now - age * 86400
        os.utime(path, (stamp, stamp))
        total += len(data)
    # Only the facts some session says (a project may have had no session).
    lines = [line for items in kept.values() for _, line, _ in items]
    return {"sessions": sessions, "bytes": total, "planted_lines": planted, "facts": kept,
            "lines": lines}  # fmt: skip


def _line(who: str, text: str, cwd: str, sid: str, start: dt.datetime) -> str:
    stamp = start.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    base = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": cwd,
            "sessionId": sid, "version": "2.1.197", "uuid": str(uuid.uuid4()),
            "timestamp": stamp}  # fmt: skip
    if who == "user":
        return json.dumps({**base, "type": "user", "message": {"role": "user", "content": text}})
    msg = {"role": "assistant", "type": "message", "content": [{"type": "text", "text": text}]}
    return json.dumps({**base, "type": "assistant", "message": msg})


def run_backfill(env: dict[str, str], days: int) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    done = subprocess.run(
        [*MEMORY_TOOL, "backfill", "--days", str(days), "--json"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return time.perf_counter() - started, json.loads(done.stdout)


def written(home: Path) -> list[tuple[str, str]]:
    """(what, text) of every memory file and inbox candidate on disk: captured memories in the
    projects' memory folders and the palace, candidates in the inbox (cold summaries aside)."""
    out: list[tuple[str, str]] = []
    state = home / ".claude" / "memory-tool"
    for path in sorted((home / ".claude" / "projects").glob("*/memory/*.md")):
        if path.name != "MEMORY.md":
            out.append((f"memory {path.parent.parent.name}", _body(path)))
    for sub in ("rooms", "wiki", "identity"):
        for path in sorted((state / sub).rglob("*.md")):
            if path.name != "MEMORY.md" and "capture:" in path.read_text(errors="replace"):
                out.append((f"memory {path.parent}", _body(path)))
    for path in sorted((state / "inbox").glob("i-*.md")):
        out.append(("candidate", _body(path)))
    return out


def _body(path: Path) -> str:
    text = path.read_text(errors="replace")
    return text.split("\n---\n", 1)[1].strip() if text.startswith("---") else text.strip()


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def measure(sessions: int, days: int, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="backfill-bench-") as tmp:
        home = Path(tmp)
        made = generate(home, sessions, days, seed)
        env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR",)}
        env.update(HOME=str(home), MEMORY_TOOL_SEMANTIC="0", MEMORY_TOOL_NO_BACKGROUND="1")
        env.pop("MEMORY_TOOL_HOME", None)
        env.pop("MEMORY_TOOL_TODAY", None)
        first_s, first = run_backfill(env, days)
        items = written(home)
        second_s, second = run_backfill(env, days)
        after = written(home)
        markers = [(p, m) for p, fs in made["facts"].items() for _, _, m in fs]
        found = dup_facts = 0
        missed = []
        for p, marker in markers:
            # A fact names its project, or sits in that project's memory folder (a line capture
            # split in two keeps the project's name in one half only).
            hits = [t for w, t in items if marker.lower() in t.lower() and (p in t or p in w)]
            found += bool(hits)
            dup_facts += len(hits) > 1
            if not hits:
                missed.append(next(line for line in made["lines"] if p in line and marker in line))
        seen: dict[str, list[str]] = {}
        for where, t in items:
            seen.setdefault(_words(t), []).append(where)
        # The same words written twice in one place (a project's folder, the inbox): a duplicate.
        # One rule in two projects' folders is each project's own rule, counted apart.
        same_words = sum(len(w) - len(set(w)) for w in seen.values())
        across = sum(1 for w in seen.values() if len(set(w)) > 1)
        samples = [t for t, w in seen.items() if len(w) > 1][:10]
    return {
        "sessions": sessions,
        "days": days,
        "history_mb": round(made["bytes"] / 1e6, 1),
        "planted_facts": len(markers),
        "planted_lines": made["planted_lines"],
        "first_run_s": round(first_s, 1),
        "first": first,
        "facts_found": found,
        "facts_missed": missed,
        "memories_written": sum(1 for w, _ in items if w.startswith("memory")),
        "candidates_written": sum(1 for w, _ in items if w == "candidate"),
        "duplicate_facts": dup_facts,
        "same_text_twice": same_words,
        "same_text_in_several_projects": across,
        "same_text_samples": samples,
        "second_run_s": round(second_s, 1),
        "second": second,
        "second_run_new_items": len(after) - len(items),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = measure(args.sessions, args.days, args.seed)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    f, s = result["first"], result["second"]
    print(f"history: {result['sessions']} sessions, {result['history_mb']} MB, "
          f"{result['planted_facts']} facts in {result['planted_lines']} lines")  # fmt: skip
    print(f"first run: {result['first_run_s']} s; read {f['done']}, empty {f['empty']}, "
          f"failed {len(f['failed'])}; {f['summaries']} cold summaries, {f['captured']} "
          f"captured memories, {f['candidates']} inbox candidates")  # fmt: skip
    print(f"planted facts found: {result['facts_found']} / {result['planted_facts']}; "
          f"duplicates: {result['duplicate_facts']} facts written twice, "
          f"{result['same_text_twice']} items with the same words")  # fmt: skip
    print(f"second run: {result['second_run_s']} s; read {s['done']}, already {s['already']}; "
          f"new items {result['second_run_new_items']}, summaries {s['summaries']}")  # fmt: skip


if __name__ == "__main__":
    main()
