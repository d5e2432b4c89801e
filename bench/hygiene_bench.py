"""What memory hygiene costs the SessionStart hook, measured as Claude Code runs it: a whole
process (``python -S memory_tool/runtime/hook.py SessionStart`` with JSON on stdin), median of
RUNS runs after one warm-up, hygiene on vs off (``hygiene.enabled`` in config.yaml), against
``python -c pass``.

Scenarios, each with an index already built:
- steady:   startup with nothing changed (the brief and the hygiene line come from caches);
- resume:   source=resume (the brief is rebuilt; the hygiene line comes from its cache);
- new day:  every run on a new MEMORY_TOOL_TODAY, so the brief and the hygiene checks both run
            (the once-a-day, or once-per-change, cost).
Trees:
- mix:         bench/gen_tree.py's realistic mix (Claude memory across projects, rooms, wiki);
- one-project: every file in the session's own Claude memory folder (the worst case for the
               hygiene checks, which cover what the session loads), 1 in 5 naming a repo path.
Also times ``memory-tool doctor --json`` (every check, rapidfuzz included) once per tree.

Usage: .venv/bin/python bench/hygiene_bench.py [N ...]   (default: 1000 10000)
"""

from __future__ import annotations

import datetime as dt
import json
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

from memory_tool.base.paths import sanitize_path  # noqa: E402

# Median of this many runs per cell (after one warm-up run): enough to steady a 2-core machine.
RUNS = 11
TODAY = dt.date(2026, 11, 29)
HOOK = REPO / "memory_tool" / "runtime" / "hook.py"
CLI = str(Path(sys.executable).parent / "memory-tool")


def env_for(home: Path, state: Path, day: dt.date = TODAY) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}
    env.update(
        HOME=str(home),
        MEMORY_TOOL_HOME=str(state),
        MEMORY_TOOL_TODAY=day.isoformat(),
        MEMORY_TOOL_NO_BACKGROUND="1",
        MEMORY_TOOL_SEMANTIC="0",  # hygiene, not search: no sentence vectors to compute
    )
    return env


def one_project_tree(home: Path, n: int) -> Path:
    """N memories in one project's Claude folder, dated, listed in MEMORY.md; 1 in 5 names a
    repo path (half of them gone)."""
    project = home / "work" / "big-repo"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    mem = home / ".claude" / "projects" / sanitize_path(str(project)) / "memory"
    mem.mkdir(parents=True)
    kinds = ("project", "feedback", "reference", "project", "user")
    lines = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        created = (TODAY - dt.timedelta(days=(i * 37) % 400)).isoformat()
        body = f"Fact {i}: the {kind} detail number {i} about module {i % 97}."
        if i % 5 == 0:
            target = f"src/mod{i}.py"
            if i % 10 == 0:
                (project / target).write_text("")
            body += f" It lives in {target}."
        name = f"{kind}_fact_{i}.md"
        (mem / name).write_text(
            f"---\nname: {kind}-fact-{i}\ndescription: {kind} fact {i}\nmetadata:\n"
            f"  type: {kind}\ncreated: {created}\n---\n\n{body}\n"
        )
        lines.append(f"- [{kind}-fact-{i}]({name}) — {kind} fact {i}")
    (mem / "MEMORY.md").write_text("\n".join(lines) + "\n")
    return project


def mix_tree(home: Path, n: int) -> Path | None:
    try:
        from gen_tree import generate  # the core benchmarks' tree (bench/gen_tree.py)
    except ImportError:
        return None
    return Path(str(generate(home, n)["home_project_dir"]))


def timed(cmd: list[str], env: dict[str, str], stdin: bytes = b"") -> tuple[float, str]:
    """Wall-clock seconds of one whole process, and its stdout."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):  # doctor exits 1 when it finds problems
        raise RuntimeError(proc.stderr.decode(errors="replace"))
    return elapsed, proc.stdout.decode()


def hook(home: Path, state: Path, project: Path, source: str, day: dt.date) -> tuple[float, str]:
    payload = {"session_id": "bench", "cwd": str(project), "source": source}
    payload |= {"hook_event_name": "SessionStart", "transcript_path": "/nonexistent.jsonl"}
    cmd = [sys.executable, "-S", str(HOOK), "SessionStart"]
    elapsed, out = timed(cmd, env_for(home, state, day), json.dumps(payload).encode())
    ctx = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""
    line = next((x for x in ctx.splitlines() if x.startswith("Memory hygiene:")), "")
    return elapsed, line


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bench_tree(label: str, home: Path, project: Path, n: int, bare: float) -> list[str]:
    """Two state roots over the same Claude memory: hygiene on in one, off in the other, so
    runs can alternate (machine drift hits both alike) without touching any config."""
    on_state = home / ".claude" / "memory-tool"
    off_state = home / "state-off"
    on_state.mkdir(parents=True, exist_ok=True)
    shutil.copytree(on_state, off_state)
    states = {True: on_state, False: off_state}
    for on, state in states.items():
        (state / "config.yaml").write_text(f"hygiene:\n  enabled: {str(on).lower()}\n")
        timed([CLI, "index", "--cwd", str(project)], env_for(home, state))
    results: dict[tuple[str, bool], float] = {}
    line = ""
    day = TODAY
    for scenario in ("steady", "resume", "new day"):
        source = "resume" if scenario == "resume" else "startup"
        samples: dict[bool, list[float]] = {True: [], False: []}
        for k in range(RUNS + 1):
            if scenario == "new day":
                day += dt.timedelta(days=1)
            for on in (True, False) if k % 2 else (False, True):
                elapsed, text = hook(home, states[on], project, source, day)
                if k:  # the first round warms the caches
                    samples[on].append(elapsed)
                if on and scenario == "steady":
                    line = text
        for on in (True, False):
            results[(scenario, on)] = median_ms(samples[on])
    doctor_s, _ = timed([CLI, "doctor", "--json", "--cwd", str(project)], env_for(home, on_state))
    rows = []
    for scenario in ("steady", "resume", "new day"):
        on, off = results[(scenario, True)], results[(scenario, False)]
        rows.append(
            f"| {label} | {n:,} | {scenario} | {off:.0f} | {on:.0f} | {on - off:+.0f} "
            f"| {on / bare:.2f}x |"
        )
    rows.append(f"| {label} | {n:,} | `doctor --json` (all checks) | | {doctor_s * 1000:.0f} | | |")
    print(f"  line in the brief ({label}, {n}): {line or '(none)'}", file=sys.stderr)
    return rows


def main() -> int:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10000]
    bare_samples = [timed([sys.executable, "-c", "pass"], dict(os.environ))[0] for _ in range(RUNS)]
    bare = median_ms(bare_samples)
    out = [
        f"python -c pass: {bare:.0f} ms (median of {RUNS})",
        "",
        "| tree | files | scenario | hygiene off (ms) | hygiene on (ms) | cost (ms) | on / bare |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in sizes:
        for label, make in (("one-project", one_project_tree), ("mix", mix_tree)):
            with tempfile.TemporaryDirectory(prefix="hygiene-bench-") as tmp:
                home = Path(tmp) / "home"
                home.mkdir()
                project = make(home, n)
                if project is None:
                    print(f"  {label}: bench/gen_tree.py not found, skipped", file=sys.stderr)
                    continue
                print(f"  {label} {n}: built, measuring", file=sys.stderr)
                out += bench_tree(label, home, project, n, bare)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
