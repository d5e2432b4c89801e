"""In-process search timings on the index under $HOME (run by bench/transcript_bench.py in a
sandboxed environment). Prints one JSON object.

Usage: python bench/probe_search.py QUERIES_JSON RUNS
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from memory_tool.recall.deep import deep_recall
from memory_tool.store.index import open_index
from memory_tool.store.search import search


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as fh:
        queries = json.loads(fh.read())
    runs = int(sys.argv[2])
    idx = open_index()
    try:
        search(idx, "warm up the page cache", limit=10)
        per_query, hook_l4, hits = [], [], []
        for _ in range(runs):
            for q in queries:
                t = time.perf_counter()
                found = search(idx, q, limit=10)
                per_query.append(time.perf_counter() - t)
                hits.append(sum(1 for h in found if h.entry.type == "session"))
                t = time.perf_counter()
                deep_recall(idx, q, budget=3000)
                hook_l4.append(time.perf_counter() - t)
        out = {
            "queries": len(queries),
            "runs": runs,
            "search_median_s": statistics.median(per_query),
            "search_p95_s": sorted(per_query)[int(0.95 * (len(per_query) - 1))],
            "deep_recall_median_s": statistics.median(hook_l4),
            "session_hits_per_query": statistics.mean(hits),
            "entries": idx.count(),
            "session_entries": idx.conn.execute(
                "SELECT count(*) FROM entries WHERE source='session'"
            ).fetchone()[0],
        }
    finally:
        idx.close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
