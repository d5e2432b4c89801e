"""Where a served prompt's time goes, in-process, over many different prompts: the
UserPromptSubmit handler as the hook server runs it (one kept index connection, a fresh session
per prompt), and inside it the room search (L3's) and the project's own matches, each timed on
its own. Run in a sandboxed HOME holding an indexed tree (bench/recall_identity.py --reuse
keeps one), with PYTHONPATH pointing at the source under test. Prints one JSON object.

``--write``: before each prompt another connection rewrites one memory in the index (as the
Scribe writes after a turn), so every prompt meets a changed index.

Usage: python bench/probe_prompt.py CWD [--prompts N | --prompt TEXT...] [--write] [--rounds R]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import time
from pathlib import Path

PROMPTS = Path(__file__).resolve().parent.parent / "tests" / "data" / "prompts.jsonl"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cwd")
    ap.add_argument("--prompts", type=int, default=0, help="the first N (0: all)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--prompt", action="append", help="these prompts instead (repeatable)")
    args = ap.parse_args()

    from memory_tool.base import paths
    from memory_tool.recall.followup import choose_rooms
    from memory_tool.recall.room import L3_CANDIDATE_FACTOR, MAX_ROOMS, ROOM_FILL
    from memory_tool.runtime import dispatch
    from memory_tool.store import index as index_module
    from memory_tool.store.index import Index, open_index
    from memory_tool.store.rooms import compiled_rooms
    from memory_tool.store.search import project_matches, search, topic_terms

    with open(PROMPTS, encoding="utf-8") as fh:
        prompts = [json.loads(line)["prompt"] for line in fh if line.strip()]
    if args.prompts:
        prompts = prompts[: args.prompts]
    if args.prompt:
        prompts = args.prompt
    cwd = args.cwd
    home = paths.project_key(cwd)
    index_module.keep_open()
    writer = Index.open() if args.write else None
    victim = None
    if writer is not None:
        row = writer.conn.execute(
            "SELECT id FROM entries WHERE source = 'room' ORDER BY rowid LIMIT 1"
        ).fetchone()
        victim = writer.get(row[0])

    def touch(i: int) -> None:
        if writer is not None and victim is not None:
            victim.body = f"{victim.body.split(' [probe')[0]} [probe {i}]"
            writer.write_entries([victim])

    handler_wall, handler_cpu, room_ms, own_ms = [], [], [], []
    rooms_of = {
        p: [r for r, _ in choose_rooms(p, None, time.time(), MAX_ROOMS, compiled_rooms())[0]]
        for p in prompts
    }
    n = 0
    # A first pass warms the page cache and the server's caches, as a running server has them.
    for r in range(args.rounds + 1):
        for p in prompts:
            n += 1
            touch(n)
            payload = {
                "session_id": os.urandom(8).hex(),
                "cwd": cwd,
                "hook_event_name": "UserPromptSubmit",
                "prompt": p,
            }
            w, c = time.perf_counter(), time.process_time()
            dispatch.run("UserPromptSubmit", stdin=io.BytesIO(json.dumps(payload).encode()),
                         stdout=io.StringIO())  # fmt: skip
            index_module.release_kept()
            w, c = time.perf_counter() - w, time.process_time() - c
            touch(n)
            idx = open_index()
            t = time.perf_counter()
            if rooms_of[p]:
                search(
                    idx, p, limit=ROOM_FILL, rooms=rooms_of[p], sessions=False, cold=False,
                    fuzzy=False, home_project=home, candidate_factor=L3_CANDIDATE_FACTOR,
                    live_only=True, intent=False,
                )  # fmt: skip
            t2 = time.perf_counter()
            if topic_terms(p):
                project_matches(idx, p, project=home, limit=3)
            t3 = time.perf_counter()
            idx.close()
            index_module.release_kept()
            if r == 0:
                continue
            handler_wall.append(w * 1000)
            handler_cpu.append(c * 1000)
            if rooms_of[p]:
                room_ms.append((t2 - t) * 1000)
            own_ms.append((t3 - t2) * 1000)

    def fig(v: list[float]) -> dict[str, float]:
        s = sorted(v)
        return {
            "median": round(statistics.median(s), 2),
            "mean": round(statistics.fmean(s), 2),
            "p95": round(s[int(0.95 * (len(s) - 1))], 2),
        }

    print(
        json.dumps(
            {
                "prompts": len(prompts),
                "write": args.write,
                "handler_wall_ms": fig(handler_wall),
                "handler_cpu_ms": fig(handler_cpu),
                "room_search_ms": fig(room_ms),
                "project_matches_ms": fig(own_ms),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
