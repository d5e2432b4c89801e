"""LoCoMo recall@1/@5 per question type, through the shipped search, against plain BM25 on the
same questions: the figure issue 26 (recall across time) is judged by.

Each conversation is asked at its own *now*: the day after its last session (the questions are
asked once the conversation is over), passed as `memory-tool search --now` and pinned for the
whole process (MEMORY_TOOL_TODAY), so the recency prior is the same before and after a change.
The recipes, data handling and metrics are bench/locomo_bench.py's (read from outside the
repository, never copied in). Plain BM25 is k1 1.2, b 0.75, lower-cased word tokens, no stemming,
no stop words (the reference point of ../shared/bench/README.md; its overall hit@5 is printed
beside the README's 0.877 as a check).

Usage: python bench/locomo_types_bench.py [--range A-B] [--recipes sessions,facts]
                                          [--modes lexical,semantic] [--no-now] [--json FILE]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import re
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import locomo_bench as lb  # noqa: E402
from common import log  # noqa: E402

BM25_K1, BM25_B = 1.2, 0.75
_TOKEN = re.compile(r"\w+")


def conversation_now(sample: dict[str, Any]) -> str:
    """The day after the conversation's last dated session."""
    conv = sample["conversation"]
    days = [lb.parse_date(conv.get(f"session_{n}_date_time", "")) for n in lb.sessions_of(conv)]
    last = max(d for d in days if d)
    return (dt.date.fromisoformat(last) + dt.timedelta(days=1)).isoformat()


def bm25_rank(docs: dict[str, str], query: str, limit: int) -> list[str]:
    toks = {k: _TOKEN.findall(v.lower()) for k, v in docs.items()}
    n = len(toks)
    avg = sum(len(t) for t in toks.values()) / max(n, 1)
    df: Counter[str] = Counter()
    tfs = {}
    for k, t in toks.items():
        tf = Counter(t)
        tfs[k] = tf
        df.update(tf.keys())
    q = _TOKEN.findall(query.lower())
    scores: dict[str, float] = {}
    for k, tf in tfs.items():
        s = 0.0
        dl = len(toks[k])
        for w in q:
            f = tf.get(w, 0)
            if not f:
                continue
            idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            s += idf * f * (BM25_K1 + 1) / (f + BM25_K1 * (1 - BM25_B + BM25_B * dl / avg))
        scores[k] = s
    return sorted(scores, key=lambda k: (-scores[k], k))[:limit]


def docs_of(hs: lb.Haystack) -> dict[str, str]:
    """Each file's text as it was written (frontmatter description included, as BM25 over the
    file would see it)."""
    wiki = hs.home / ".claude" / "memory-tool" / "wiki" / hs.sample
    return {stem: (wiki / f"{stem}.md").read_text(encoding="utf-8") for stem in hs.files}


def run_bm25(samples: list[dict[str, Any]], recipe: str, base: Path) -> list[dict[str, Any]]:
    rows = []
    for sample in samples:
        home = base / f"bm25-{recipe}-{sample['sample_id']}"
        hs = (lb.write_sessions if recipe == "sessions" else lb.write_facts)(sample, home)
        docs = docs_of(hs)
        for q, cat, gold in hs.questions:
            ranked = [
                hs.files[s] if recipe == "sessions" else s for s in bm25_rank(docs, q, lb.LIMIT)
            ]
            rows.append({"category": cat, **lb.metrics(ranked, gold)})
        shutil.rmtree(home, ignore_errors=True)
    return rows


def per_type(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups["all"].append(r)
        if r["category"] in (1, 2, 3, 4):
            groups["cat 1-4"].append(r)
        groups[f"{r['category']} {lb.CATEGORIES.get(r['category'], '?')}"].append(r)
    return {
        g: {
            "n": len(rs),
            **{k: sum(r[k] for r in rs) / len(rs) for k in ("hit@1", "hit@5", "hit@10")},
        }
        for g, rs in groups.items()
    }


def run_tool(
    samples: list[dict[str, Any]], recipe: str, base: Path, mode: str, use_now: bool
) -> list[dict[str, Any]]:
    flags, env = lb.MODES[mode]
    lb.MODE_ENV.clear()
    lb.MODE_ENV.update(env)
    rows: list[dict[str, Any]] = []
    for sample in samples:
        now = conversation_now(sample)
        lb.SEARCH_FLAGS[:] = [*flags, *(["--now", now] if use_now else [])]
        # The recency prior reads today(): pinned to the same day before and after a change.
        lb.MODE_ENV["MEMORY_TOOL_TODAY"] = now
        res = lb.evaluate([sample], recipe, base, in_process=False, with_tokens=False)
        rows += res["questions"]
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--range", default="0-9", help="conversations A-B (0-based, inclusive)")
    ap.add_argument("--recipes", default="sessions")
    ap.add_argument("--modes", default="lexical")
    ap.add_argument(
        "--no-now", action="store_true", help="no --now (the search before issue 26 has none)"
    )
    ap.add_argument("--no-bm25", action="store_true")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    data = lb.load()
    if data is None:
        print(f"LoCoMo skipped: {lb.LOCOMO} not found (not in the repository)")
        return 0
    a, _, b = args.range.partition("-")
    samples = data[int(a) : int(b or a) + 1]
    base = Path(tempfile.mkdtemp(prefix="mt-bench-locomo-types-"))
    out: dict[str, Any] = {"range": args.range, "now": not args.no_now}
    try:
        for recipe in args.recipes.split(","):
            if not args.no_bm25:
                out[f"{recipe}/bm25"] = per_type(run_bm25(samples, recipe, base))
            for mode in args.modes.split(","):
                log(f"{recipe} {mode} conversations {args.range}")
                rows = run_tool(samples, recipe, base, mode, not args.no_now)
                out[f"{recipe}/{mode}"] = per_type(rows)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    for key, groups in out.items():
        if not isinstance(groups, dict):
            continue
        print(f"== {key}")
        for g in sorted(groups, key=lambda g: (g != "all", g)):
            m = groups[g]
            print(
                f"  {g:16} n={m['n']:4d}  hit@1 {m['hit@1']:.3f}  hit@5 {m['hit@5']:.3f}  "
                f"hit@10 {m['hit@10']:.3f}"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    os.environ.pop("MEMORY_TOOL_TODAY", None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
