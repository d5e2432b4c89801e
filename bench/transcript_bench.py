"""Transcript history (L4): search latency with a large Claude Code history indexed, and the cost
of indexing one more session.

A temporary HOME gets a 1,000-file memory tree and MEGABYTES of generated transcripts
(bench/gen_transcripts.py). `memory-tool index` indexes everything (timed: the first full read of
the history). Then:
- in-process: `store.search.search` (depth 1, what `memory-tool search` runs) and
  `recall.deep.deep_recall` (what UserPromptSubmit injects for a past-tense question), median
  over a set of queries;
- whole processes: `memory-tool search QUERY` (it refreshes the index first: stats every memory
  file and transcript) and the UserPromptSubmit hook with a past-tense question, against
  `python -c pass`;
- one new typical session is written; the refresh that indexes it is timed in-process, next to a
  no-change refresh.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    MEMORY_TOOL,
    PYTHON,
    REPO,
    TIME_BIN,
    Results,
    bench_env,
    hook_command,
    log,
    median,
    p95,
    run_process,
)

TREE_FILES = 1_000
QUERIES = [
    "have we fixed the retry loop in the upload client before?",
    "what did we decide about the refresh token rotation",
    "last time the nightly ETL job failed, what was the cause",
    "did we ever change the connection pool size",
    "remember when the webhook signature check broke",
    "why did we move the pagination cursor",
    "csv export timeout",
    "rate limiter 429 retry-after",
    "invoice totals rounding",
    "session cookie safari",
]
APPEND_PROBE = """
import json, time
from memory_tool.store.index import open_index
idx = open_index()
t = time.perf_counter(); n = idx.refresh_sessions(); first = time.perf_counter() - t
t = time.perf_counter(); m = idx.refresh_sessions(); again = time.perf_counter() - t
print(json.dumps({"added": n, "append_s": first, "nochange_s": again, "again_added": m}))
"""


def run(megabytes: float, runs: int, res: Results, workdir: Path | None = None) -> None:
    from gen_transcripts import generate, one_session
    from gen_tree import generate as gen_tree

    base = Path(tempfile.mkdtemp(prefix="mt-bench-hist-", dir=workdir))
    try:
        home = base / "home"
        home.mkdir()
        info = gen_tree(home, TREE_FILES)
        cwd = str(info["home_project_dir"])
        log(f"history: generating {megabytes:,.0f} MB of transcripts")
        t = time.perf_counter()
        hist = generate(home, megabytes)
        gen_s = time.perf_counter() - t
        env = bench_env(home)
        run_process([*MEMORY_TOOL, "init"], env=env).check("memory-tool init")
        log(
            f"history: {hist['bytes'] / 1e6:,.0f} MB, {hist['sessions']} sessions written in "
            f"{gen_s:.0f}s; indexing"
        )
        # Peak RSS through GNU time when present (see common.peak_rss_kb for why not wait4).
        timer = [TIME_BIN, "-f", "%M", "-o", str(base / "rss")] if Path(TIME_BIN).exists() else []
        build = run_process([*timer, *MEMORY_TOOL, "index", "--cwd", cwd, "--json"], env=env).check(
            "memory-tool index"
        )
        build.max_rss_kb = int((base / "rss").read_text().split()[-1]) if timer else 0
        db = home / ".claude" / "memory-tool" / "index.db"
        out: dict[str, Any] = {
            "history_bytes": hist["bytes"],
            "sessions": hist["sessions"],
            "generate_s": gen_s,
            "index_s": build.seconds,
            "index_rss_mb": build.max_rss_kb / 1024,
            "db_mb": db.stat().st_size / 1e6,
        }
        log(f"history: indexed in {build.seconds:.0f}s; searching")
        qfile = base / "queries.json"
        qfile.write_text(json.dumps(QUERIES), encoding="utf-8")
        probe = run_process(
            [PYTHON, str(REPO / "bench" / "probe_search.py"), str(qfile), "3"], env=env
        )
        out["probe"] = json.loads(probe.check("probe_search").stdout)
        cli, hook, bare = [], [], []
        payload = json.dumps(
            {
                "session_id": "bench",
                "cwd": cwd,
                "hook_event_name": "UserPromptSubmit",
                "prompt": QUERIES[0],
            }
        ).encode()
        for i in range(2 + runs):
            r_bare = run_process([PYTHON, "-c", "pass"], env=env)
            r_cli = run_process([*MEMORY_TOOL, "search", QUERIES[i % len(QUERIES)]], env=env)
            r_hook = run_process(
                hook_command("UserPromptSubmit"),
                payload.replace(b'"bench"', f'"b{i}"'.encode()),
                env=env,
                cwd=cwd,
            )
            if i >= 2:
                bare.append(r_bare.seconds)
                cli.append(r_cli.seconds)
                hook.append(r_hook.seconds)
        out["cli_search_median_s"] = median(cli)
        out["cli_search_p95_s"] = p95(cli)
        out["hook_past_median_s"] = median(hook)
        out["hook_past_p95_s"] = p95(hook)
        out["bare_median_s"] = median(bare)
        out["runs"] = runs
        path, size = one_session(home)
        app = run_process([PYTHON, "-c", APPEND_PROBE], env=env)
        out["append"] = json.loads(app.check("append probe").stdout) | {"session_bytes": size}
        res.data["history"] = out
        report(out, res)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def report(o: dict[str, Any], res: Results) -> None:
    size = (
        f"{o['history_bytes'] / 2**30:.2f} GB"
        if o["history_bytes"] > 2**29
        else f"{o['history_bytes'] / 2**20:.0f} MB"
    )
    p = o["probe"]
    sec = "Transcript history"
    res.add(
        sec,
        f"history indexed ({size}, {o['sessions']} sessions, {p['session_entries']:,} chunks)",
        f"{o['index_s']:.0f} s first full index "
        f"({o['history_bytes'] / 2**20 / max(o['index_s'], 1e-9):.0f} MB/s), "
        f"DB {o['db_mb']:.0f} MB, peak RSS {o['index_rss_mb']:.0f} MB",
        runs="1",
    )
    res.add(
        sec,
        f"L4 search, in-process (search, {size})",
        f"{p['search_median_s'] * 1000:.1f} ms median (p95 {p['search_p95_s'] * 1000:.1f})",
        runs=f"{p['queries']} queries x {p['runs']}",
    )
    res.add(
        sec,
        f"L4 hook injection, in-process (deep_recall, {size})",
        f"{p['deep_recall_median_s'] * 1000:.1f} ms median",
        runs=f"{p['queries']} queries x {p['runs']}",
    )
    bare = o["bare_median_s"]
    res.add(
        sec,
        f"`memory-tool search` whole process ({size})",
        f"{o['cli_search_median_s'] * 1000:.0f} ms (p95 {o['cli_search_p95_s'] * 1000:.0f})",
        compare=f"python -c pass {bare * 1000:.0f} ms",
        runs=str(o["runs"]),
        note="includes the stat-only refresh of every memory file and transcript",
    )
    res.add(
        sec,
        f"UserPromptSubmit with a past question, whole process ({size})",
        f"{o['hook_past_median_s'] * 1000:.0f} ms (p95 {o['hook_past_p95_s'] * 1000:.0f}) = "
        f"{o['hook_past_median_s'] / bare:.2f}x",
        compare=f"python -c pass {bare * 1000:.0f} ms",
        runs=str(o["runs"]),
    )
    a = o["append"]
    res.add(
        sec,
        f"index one new session ({a['session_bytes'] / 2**20:.1f} MB, {a['added']} chunks)",
        f"{a['append_s'] * 1000:.0f} ms in-process",
        compare=f"no-change transcript refresh {a['nochange_s'] * 1000:.1f} ms",
        runs="1",
    )


if __name__ == "__main__":
    from common import compile_bytecode

    compile_bytecode()
    r = Results()
    run(float(sys.argv[1]) if len(sys.argv) > 1 else 50, 10, r)
    for f in r.figures:
        print(f"{f.name:70} {f.value} | {f.compare}")
