"""One MCP tool call's latency at scale: the server (``python -m memory_tool.mcp``) started by
the official SDK's stdio client, as Claude Code starts it, against a generated memory tree
(bench/gen_tree.py) with its index built.

Per size: the server's start to its first answer (initialize + a first search, which also does
the full index refresh and loads the tokenizer), then warm calls, RUNS rounds of each tool in
turn (search, peek at 3 ids, get 1 id, context for a debug prompt), median and p95 of each, the
client's round trip over stdio included. For comparison, the same search as the CLI does it (a
whole `memory-tool search` process, CLI_RUNS runs), which is what an agent pays per look-up
without the server.

Usage: .venv/bin/python bench/mcp_bench.py [N ...] [--runs R]   (default: 10000, 30 runs)
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import MEMORY_TOOL, PYTHON, bench_env  # noqa: E402
from gen_tree import generate  # noqa: E402

RUNS = 30
CLI_RUNS = 5
QUERY = "refresh token rotation"
DEBUG_PROMPT = "the login keeps failing with an expired token again"


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


async def _measure(home: Path, project: Path, runs: int) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=PYTHON, args=["-m", "memory_tool.mcp"], env=bench_env(home), cwd=project
    )
    out: dict[str, Any] = {}
    start = time.perf_counter()
    with open("/dev/null", "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            first = await session.call_tool("search", {"query": QUERY})
            out["first answer"] = time.perf_counter() - start
            text = first.content[0].text  # type: ignore[union-attr]
            ids = [line.split()[0] for line in text.splitlines()[1:-2]]
            if len(ids) < 3:
                raise RuntimeError(f"the tree gave too few hits: {text}")
            calls = {
                "search": ("search", {"query": QUERY}),
                "peek (3 ids)": ("peek", {"ids": ids[:3]}),
                "get (1 id)": ("get", {"ids": ids[:1]}),
                "context (debug)": ("context", {"prompt": DEBUG_PROMPT}),
            }
            times: dict[str, list[float]] = {name: [] for name in calls}
            tokens: dict[str, str] = {}
            for _ in range(runs):
                for name, (tool, args) in calls.items():
                    t = time.perf_counter()
                    res = await session.call_tool(tool, args)
                    times[name].append(time.perf_counter() - t)
                    if res.is_error:
                        raise RuntimeError(f"{tool}: {res.content}")
                    tokens[name] = res.content[0].text.splitlines()[-1]  # type: ignore[union-attr]
            out["warm"] = {
                name: (statistics.median(xs), pct(xs, 0.95), tokens[name])
                for name, xs in times.items()
            }
    return out


def cli_search(home: Path, project: Path) -> float:
    xs = []
    for _ in range(CLI_RUNS + 1):
        t = time.perf_counter()
        subprocess.run(
            [*MEMORY_TOOL, "search", QUERY],
            cwd=project,
            env=bench_env(home),
            capture_output=True,
            check=True,
        )
        xs.append(time.perf_counter() - t)
    return statistics.median(xs[1:])  # the first run warms the file cache


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("sizes", nargs="*", type=int, default=[10_000])
    ap.add_argument("--runs", type=int, default=RUNS)
    args = ap.parse_args()
    try:
        import anyio
        import mcp  # noqa: F401
    except ImportError:
        print("skipped: the mcp extra is not installed (pip install -e '.[mcp]')")
        return 0
    print("| memories | call | median | p95 | answer |")
    print("|---|---|---|---|---|")
    for n in args.sizes:
        root = Path(tempfile.mkdtemp(prefix="mcp-bench-"))
        try:
            home = root / "home"
            project = Path(str(generate(home, n)["home_project_dir"]))
            env = bench_env(home)
            for cmd in (["init"], ["index", "--cwd", str(project)]):
                subprocess.run([*MEMORY_TOOL, *cmd], env=env, capture_output=True, check=True)
            got = anyio.run(_measure, home, project, args.runs)
            print(f"| {n:,} | server start to first answer | {got['first answer'] * 1000:.0f} ms "
                  "| | |")  # fmt: skip
            for name, (med, p, answer) in got["warm"].items():
                print(f"| {n:,} | {name}, warm | {med * 1000:.1f} ms | {p * 1000:.1f} ms "
                      f"| {answer} |")  # fmt: skip
            cli = cli_search(home, project)
            print(f"| {n:,} | search, CLI process | {cli * 1000:.0f} ms | | |")
        finally:
            shutil.rmtree(root, ignore_errors=True)
    print(f"\n{args.runs} warm rounds of the four calls after the first answer; the CLI figure is "
          f"the median of {CLI_RUNS} whole `memory-tool search` processes.")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
