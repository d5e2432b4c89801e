"""What the web UI's pages cost: each page of `memory-tool ui` fetched over HTTP from a real
server on 127.0.0.1, on bench/gen_tree.py's realistic trees, median of RUNS fetches after one
warm-up. Each page refreshes the index (a stat of every file) and asks the library, as the CLI
does; `memory-tool doctor --json` over the same tree is the comparison point for the health
page.

Usage: .venv/bin/python bench/ui_bench.py [N ...]   (default: 1000 10000)
"""

from __future__ import annotations

import http.client
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

# Median of this many fetches per page (after one warm-up): pages take tens to hundreds of ms.
RUNS = 7
PROMPT = "the+login+redirect+loops+after+the+token+refresh"


def _get(port: int, cookie: str, path: str) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t = time.perf_counter()
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}", "Cookie": cookie})
    resp = conn.getresponse()
    resp.read()
    took = time.perf_counter() - t
    conn.close()
    if resp.status != 200:
        raise RuntimeError(f"{path}: HTTP {resp.status}")
    return took * 1000


def measure(n: int) -> list[tuple[str, float]]:
    import gen_tree

    base = Path(tempfile.mkdtemp(prefix="memory-tool-ui-bench-"))
    try:
        home = base / "home"
        tree = gen_tree.generate(home, n)
        env = {
            "HOME": str(home),
            "MEMORY_TOOL_TODAY": gen_tree.TODAY,
            "MEMORY_TOOL_NO_BACKGROUND": "1",
            "MEMORY_TOOL_SEMANTIC": "0",
        }
        os.environ.update(env)
        for name in ("CLAUDE_CONFIG_DIR", "MEMORY_TOOL_HOME"):
            os.environ.pop(name, None)
        cwd = str(tree["home_project_dir"])
        cli = str(Path(sys.executable).parent / "memory-tool")
        subprocess.run([cli, "index", "--cwd", cwd], check=True, capture_output=True)
        t = time.perf_counter()
        subprocess.run([cli, "doctor", "--json", "--cwd", cwd], capture_output=True)
        doctor_ms = (time.perf_counter() - t) * 1000

        from memory_tool.store.index import open_index
        from memory_tool.ui.serve import Running

        with open_index() as idx:
            some = idx.entries(source="room")[0].id
        rows = []
        with Running(cwd) as ui:
            keys = ui.keys
            cookie = f"{keys.cookie}={keys.token}"
            pages = [
                ("next session", "/brief"),
                ("rooms", "/rooms"),
                ("rooms + prompt box", f"/rooms?room=authentication&prompt={PROMPT}"),
                ("one memory", f"/memory/{some}"),
                ("inbox", "/inbox"),
                ("sessions", "/sessions"),
                ("search", "/search?q=refresh+token+rotation"),
                ("health (doctor)", "/health"),
            ]
            for label, path in pages:
                _get(keys.port, cookie, path)  # warm-up
                times = [_get(keys.port, cookie, path) for _ in range(RUNS)]
                rows.append((label, statistics.median(times)))
        rows.append(("`memory-tool doctor --json` (whole process, once)", doctor_ms))
        return rows
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> int:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10000]
    results = {n: measure(n) for n in sizes}
    print(f"Median of {RUNS} fetches per page after a warm-up, ms (HTTP on 127.0.0.1)\n")
    print("| page | " + " | ".join(f"{n:,} files" for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for i, (label, _) in enumerate(results[sizes[0]]):
        cells = " | ".join(f"{results[n][i][1]:.0f}" for n in sizes)
        print(f"| {label} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
