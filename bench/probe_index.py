"""In-process index timings on the tree under $HOME (run by bench/scale_bench.py in a sandboxed
environment): no-change refresh, refresh after one changed file, and the scoped refresh a
SessionStart does. Prints one JSON object.

Usage: python bench/probe_index.py CWD RUNS FILE_TO_CHANGE
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from memory_tool.store.index import open_index
from memory_tool.store.rooms import room_classifier


def main() -> int:
    cwd, runs, victim = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    idx = open_index()
    idx.room_classifier = room_classifier()
    out: dict[str, object] = {"entries": idx.count()}
    try:
        idx.refresh(cwd, sessions=False)  # settle (the CLI build may leave nothing to do)
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            stats = idx.refresh(cwd, sessions=False)
            samples.append(time.perf_counter() - t)
            assert not stats.touched, "a no-change refresh changed something"
        out["nochange_s"] = samples
        out["nochange_median_s"] = statistics.median(samples)
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            idx.refresh_for_wake(cwd)
            samples.append(time.perf_counter() - t)
        out["wake_refresh_median_s"] = statistics.median(samples)
        # One changed file (a person or Claude edited a memory): only it is re-read.
        changed = []
        for i in range(max(3, runs // 3)):
            with victim.open("a", encoding="utf-8") as fh:
                fh.write(f"\nEdited again ({i}).\n")
            t = time.perf_counter()
            stats = idx.refresh(cwd, sessions=False)
            changed.append(time.perf_counter() - t)
            assert len(stats.changed) == 1, stats
        out["one_changed_s"] = changed
        # The first sample pays for importing YAML/frontmatter/tokenizer in this process.
        out["one_changed_first_s"] = changed[0]
        out["one_changed_median_s"] = statistics.median(changed[1:])
    finally:
        idx.close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
