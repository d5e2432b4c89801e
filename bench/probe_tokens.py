"""What the layers inject, in exact cl100k tokens, on the tree under $HOME (run by
bench/scale_bench.py in a sandboxed environment). Prints one JSON object.

- per prompt of tests/data/prompts.jsonl: what UserPromptSubmit would add (L3 room recall, plus
  L4 deep search when the prompt asks about the past, plus tier context), as the hook builds it
  (runtime.prompt_submit.prompt_context, a fresh session each time: nothing already seen);
- eager: every memory's full text (depth 3) summed — what loading everything would cost.

Usage: python bench/probe_tokens.py CWD
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from memory_tool.base import tokens
from memory_tool.base.config import budget, load_config
from memory_tool.base.event import HookEvent
from memory_tool.recall.deep import is_past_question
from memory_tool.recall.room import L3_MAX_CHARS, room_recall
from memory_tool.runtime.prompt_submit import prompt_context
from memory_tool.store.index import open_index

PROMPTS = Path(__file__).resolve().parent.parent / "tests" / "data" / "prompts.jsonl"


def main() -> int:
    cwd = sys.argv[1]
    rows = [json.loads(line) for line in PROMPTS.open(encoding="utf-8") if line.strip()]
    per: list[dict[str, object]] = []
    l3_budget = budget(load_config(), "l3")
    for row in rows:
        prompt = row["prompt"]
        text, ids = prompt_context(
            HookEvent.from_payload("UserPromptSubmit", {"prompt": prompt, "cwd": cwd})
        )
        with open_index() as idx:
            l3 = room_recall(idx, prompt, cwd, budget=l3_budget, max_chars=L3_MAX_CHARS)
        per.append(
            {
                "l3_tokens": tokens.count(l3.text) if l3.units else 0,
                "l3_entries": len(l3.picked),
                "tokens": tokens.count(text) if text else 0,
                "chars": len(text),
                "ids": len(ids),
                "labeled_rooms": row.get("rooms") or [],
                "past": is_past_question(prompt),
            }
        )
    with open_index() as idx:
        eager, n = idx.conn.execute(
            "SELECT sum(full_tokens), count(*) FROM entries WHERE source != 'session'"
        ).fetchone()
    injected = [int(p["tokens"]) for p in per if p["tokens"]]  # type: ignore[call-overload]
    all_tokens = [int(p["tokens"]) for p in per]  # type: ignore[call-overload]
    none_rows = [p for p in per if not p["labeled_rooms"]]
    l3 = [int(p["l3_tokens"]) for p in per if p["l3_tokens"]]  # type: ignore[call-overload]
    out = {
        "l3_budget": l3_budget,
        "l3_injecting": len(l3),
        "l3_mean": statistics.mean(l3) if l3 else 0,
        "l3_median": statistics.median(l3) if l3 else 0,
        "l3_max": max(l3) if l3 else 0,
        "l3_entries_mean": statistics.mean(
            int(p["l3_entries"])
            for p in per
            if p["l3_tokens"]  # type: ignore[call-overload]
        )
        if l3
        else 0,
        "prompts": len(per),
        "injecting": len(injected),
        "mean_all": statistics.mean(all_tokens),
        "mean_injecting": statistics.mean(injected) if injected else 0,
        "median_injecting": statistics.median(injected) if injected else 0,
        "p95_injecting": sorted(injected)[int(0.95 * (len(injected) - 1))] if injected else 0,
        "max": max(all_tokens),
        "max_chars": max(int(p["chars"]) for p in per),  # type: ignore[call-overload]
        "no_room_prompts": len(none_rows),
        "no_room_injecting": sum(1 for p in none_rows if p["tokens"]),
        "eager_tokens": int(eager or 0),
        "memories": int(n),
        "tokenizer": tokens.method(),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
