"""Accuracy and speed of the room classifier on tests/data/prompts.jsonl and the blind set.

Run from the repo root:  .venv/bin/python bench/classify_bench.py

Prints top-1 accuracy (all / dev / held-out), the false-injection rate on no-room prompts, the
confusion of the misses, a threshold sweep, the compile time, the cost of loading the cached
JSON, the median time per classify call, and a whole-process hook-style start-up measurement.
The split is by hash of the prompt (70% dev, the vocabulary was tuned on it; 30% held out).

Eight more sets were written by people who had not read the classifier, its vocabulary or the
other sets. tests/data/prompts_blind.jsonl ("blind 1") was measured before any change (top-1
0.842) and has since been tuned on, like prompts.jsonl. tests/data/prompts_blind2.jsonl ("blind
2") was the held-out set of the second pass: its misses were read once (they showed the classes
of miss: tool names, follow-ups, pasted errors); the vocabulary grown since (by ecosystem, by
someone who had not seen them) was not fitted to them. tests/data/prompts_blind3.jsonl and
prompts_blind4.jsonl were written by two more people in the same way and measured once after
that vocabulary (at c9d99f3: top-1 0.917 and 0.875); their misses were then read and a second
round of general fixes followed (language names and big-O are weak, a version move marks
dependencies, a few perf and CSS words). tests/data/prompts_blind5.jsonl and
prompts_blind6.jsonl were written after that round and measured once (at 0f0f3be: top-1 0.917
and 0.867, 5 and 3 of 30 no-room prompts injecting); their misses are listed for reporting and
were not read. Round 3 (a background room for general programming) was tuned on
tests/data/prompts_tune1.jsonl, written blind for it (110 of its 200 prompts have no room and
are full of programming words); blind 5 and 6, measured a second time after it, remain held out.
tests/data/prompts_blind7.jsonl and prompts_blind8.jsonl were written after round 3 and measured
once (at 81e287e: top-1 0.942 and 0.933, 2 and 2 of 30 no-room prompts injecting).
tests/data/prompts_blind9.jsonl and prompts_blind10.jsonl (100 prompts with a room and 50
without, each, for a tighter no-room figure) were written after that and measured at a643c14
before any change (top-1 0.900 and 0.920, 5 and 6 of 50 no-room prompts injecting), then again
after round 4 (false friends, a stricter not_typos; tuned on tests/data/prompts_tune2.jsonl,
written blind with them, and the sets already read). Round 5 read the misses of blind 5 to 10
(they are tuned on now, like the older sets) and added decisive exercise markers ("leetcode",
"interview prep"), false-friend phrases ("rest of", "array of hashes"), and a few weak words.
tests/data/prompts_blind11.jsonl and prompts_blind12.jsonl (100 prompts with a room and 50
without, each) were written blind for it and measured at 0313c19 before round 5 and once after
it (top-1 0.880 and 0.920, 3 and 1 of 50 no-room prompts injecting, both times): the held-out
sets now, whose misses are listed for reporting only. A few prompts of blind 1 equal prompts of
the old set; "blind1-new" leaves those out.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402  (bench is not the hook path)

from memory_tool.store.classify import (  # noqa: E402
    ROOM_THRESHOLD,
    CompiledRooms,
    classify,
    classify_detail,
    compile_rooms,
    injectable,
)

# tests/data/<name>.jsonl: prompts.jsonl, prompts_blind.jsonl, prompts_blind2..10.jsonl, and the
# tuning sets prompts_tune1.jsonl (200 prompts, 110 no-room ones full of programming words,
# written blind for round 3) and prompts_tune2.jsonl (150, 60 no-room, written with blind 9
# and 10 for round 4)
DATA = REPO / "tests" / "data"
TEMPLATE = REPO / "memory_tool" / "templates" / "rooms.yaml"
SWEEP = (0.4, 0.5, 0.6, 0.7, ROOM_THRESHOLD, 0.8, 0.9, 1.0, 1.2, 1.5)


def split_of(prompt: str) -> str:
    """Same split as tests/test_classify.py."""
    return "dev" if hashlib.sha256(prompt.encode()).digest()[0] % 10 < 7 else "held-out"


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]


def timed_ms(fn: Any, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def evaluate(rows: list[dict[str, Any]], rooms: CompiledRooms, threshold: float) -> dict[str, Any]:
    hits = total = injected = empty = 0
    misses: list[tuple[str, str, str]] = []
    for row in rows:
        # A background room winning means: no room.
        chosen = injectable(classify_detail(row["prompt"], rooms), rooms, threshold)
        top = chosen[0].room if chosen else "-"
        if row["rooms"]:
            total += 1
            if top == row["rooms"][0]:
                hits += 1
            else:
                misses.append((row["rooms"][0], top, row["prompt"]))
        else:
            empty += 1
            if top != "-":
                injected += 1
                misses.append(("-", top, row["prompt"]))
    return {
        "top1": hits / total if total else 0.0,
        "n": total,
        "false_injection": injected / empty if empty else 0.0,
        "n_empty": empty,
        "misses": misses,
    }


def process_ms(code: str, env: dict[str, str], repeat: int = 15) -> float:
    subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, check=True)  # warm-up
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, check=True)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    spec = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))
    rows = read_rows(DATA / "prompts.jsonl")
    old_prompts = {r["prompt"] for r in rows}
    blind = read_rows(DATA / "prompts_blind.jsonl")
    blind2, blind3, blind4, blind5, blind6, blind7, blind8, blind9, blind10, blind11, blind12 = (
        read_rows(DATA / f"prompts_blind{n}.jsonl") for n in range(2, 13)
    )
    read_after_round4 = blind5 + blind6 + blind7 + blind8 + blind9 + blind10
    unseen = blind11 + blind12
    splits = {
        "all": rows,
        "dev": [r for r in rows if split_of(r["prompt"]) == "dev"],
        "held-out": [r for r in rows if split_of(r["prompt"]) == "held-out"],
        "blind1": blind,
        "blind1-new": [r for r in blind if r["prompt"] not in old_prompts],
        "blind2": blind2,
        "blind3": blind3,
        "blind4": blind4,
        "blind3+4": blind3 + blind4,
        "blind5": blind5,
        "blind6": blind6,
        "blind5+6": blind5 + blind6,
        "tune1": read_rows(DATA / "prompts_tune1.jsonl"),
        "blind7": blind7,
        "blind8": blind8,
        "blind7+8": blind7 + blind8,
        "tune2": read_rows(DATA / "prompts_tune2.jsonl"),
        "blind9": blind9,
        "blind10": blind10,
        "blind9+10": blind9 + blind10,
        "blind5-10": read_after_round4,
        "blind11": blind11,
        "blind12": blind12,
        "blind11+12": unseen,
    }

    compile_ms = timed_ms(lambda: compile_rooms(spec), 7)
    rooms = compile_rooms(spec)
    cached = rooms.to_json()
    load_ms = timed_ms(lambda: CompiledRooms.from_json(cached), 31)

    print(f"rooms: {len(rooms.rooms)}  terms: {len(rooms.terms)}  "
          f"phrase heads: {len(rooms.phrases)}  typo variants: {len(rooms.typos)}")  # fmt: skip
    print(f"compile: {compile_ms:.1f} ms   cached JSON: {len(cached) / 1024:.0f} KiB, "
          f"from_json: {load_ms:.2f} ms")  # fmt: skip

    print(f"\nthreshold {ROOM_THRESHOLD}")
    print(f"{'split':<11}{'prompts':>7}{'top-1':>9}{'no-room':>9}{'false inj.':>12}")
    for name, subset in splits.items():
        r = evaluate(subset, rooms, ROOM_THRESHOLD)
        print(f"{name:<11}{r['n']:>7}{r['top1']:>9.3f}{r['n_empty']:>9}"
              f"{r['false_injection']:>12.3f}")  # fmt: skip

    print("\nthreshold sweep (top-1 / false injection)")
    print(f"{'threshold':<10}{'dev':>16}{'held-out':>16}")
    for threshold in SWEEP:
        dev = evaluate(splits["dev"], rooms, threshold)
        held = evaluate(splits["held-out"], rooms, threshold)
        print(f"{threshold:<10}{dev['top1']:>9.3f} / {dev['false_injection']:.2f}"
              f"{held['top1']:>9.3f} / {held['false_injection']:.2f}")  # fmt: skip

    result = evaluate(rows, rooms, ROOM_THRESHOLD)
    print("\nconfusion of the misses (expected -> got, '-' = no room)")
    for (want, got), count in sorted(
        Counter((w, g) for w, g, _ in result["misses"]).items(), key=lambda i: (-i[1], i[0])
    ):
        print(f"  {count:>2}  {want} -> {got}")
    print("\nmissed prompts")
    for want, got, prompt in result["misses"]:
        shown = prompt.replace("\n", " ")[:90]
        print(f"  [{split_of(prompt)}] {want} -> {got}: {shown}")

    blind_result = evaluate(unseen, rooms, ROOM_THRESHOLD)
    print("\nblind 11 and 12: missed prompts (the held-out sets: do not tune on these)")
    for want, got, prompt in blind_result["misses"]:
        shown = prompt.replace("\n", " ")[:90]
        print(f"  {want} -> {got}: {shown}")

    prompts = [r["prompt"] for r in rows]
    per_call: list[float] = []
    for _ in range(15):
        start = time.perf_counter()
        for p in prompts:
            classify(p, rooms)
        per_call.append((time.perf_counter() - start) / len(prompts) * 1e6)
    singles = []
    for p in prompts:
        start = time.perf_counter()
        classify(p, rooms)
        singles.append((time.perf_counter() - start) * 1e6)
    median_us, max_us, mean_us = statistics.median(singles), max(singles), min(per_call)
    print(f"\nclassify: median {median_us:.0f} µs per call (max {max_us:.0f} µs, "
          f"mean over the set {mean_us:.0f} µs)")  # fmt: skip

    tmp = REPO / "bench" / "out"
    tmp.mkdir(parents=True, exist_ok=True)
    cache_file = tmp / "rooms.json"
    cache_file.write_text(cached, encoding="utf-8")
    hook_code = (
        "from memory_tool.store.classify import CompiledRooms, classify\n"
        f"r = CompiledRooms.from_json(open({str(cache_file)!r}).read())\n"
        "classify('kubernets pod stuck in CrashLoopBackOff after the deploy', r)\n"
    )
    # Users' machines cache bytecode; some sandboxes set PYTHONDONTWRITEBYTECODE, which makes
    # every hook run recompile our modules from source. Measure both.
    warm = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    warm["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    cold = dict(warm, PYTHONDONTWRITEBYTECODE="1")
    cold.pop("PYTHONPYCACHEPREFIX")
    for label, env in (("bytecode cached", warm), ("no bytecode cache", cold)):
        bare = process_ms("pass", env)
        hook = process_ms(hook_code, env)
        print(f"process ({label}): bare python {bare:.1f} ms, import classify + from_json + "
              f"classify {hook:.1f} ms (+{hook - bare:.1f} ms)")  # fmt: skip


if __name__ == "__main__":
    main()
