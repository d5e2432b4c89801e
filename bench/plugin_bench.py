"""The plugin route: how long its private environment takes to build, and what its hook launcher
adds to every hook.

- Build: `plugin_env.py build` (a venv, `pip install` of the plugin's package source, the
  palace) into a fresh data folder, as the first session after installing the plugin starts it;
  once with an empty pip cache (a first install: every dependency downloaded) and once more with
  the cache that run filled (an update of the plugin).
- Hooks: SessionStart and a UserPromptSubmit answered by the hook server, each run as Claude Code
  runs it for the plugin (`plugin/scripts/hook EVENT VERSION`: sh, the stamp, exec) and as a
  settings.json install runs it (`python -S .../hook.py EVENT`), against `python -c pass`, in the
  same interleaved rounds, on a generated tree of 1,000 files.

Usage: .venv/bin/python bench/plugin_bench.py [RUNS]   (prints a Markdown section)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SRC, bench_env, median, p95, run_process  # noqa: E402

PLUGIN = SRC / "plugin"
SET_UP = SRC / "memory_tool" / "runtime" / "plugin_env.py"
FILES = 1000
WARMUP = 2
VERSION = "0.0.0-bench"


def build_once(data: Path, home: Path) -> tuple[float, str]:
    env = bench_env(home)
    env.pop("PYTHONPATH", None)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(SET_UP), "build", str(data), str(PLUGIN), VERSION, "-1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError((data / "build.log").read_text()[-2000:])
    stamp = (data / "env.sh").read_text()
    return took, stamp


def stamp_values(data: Path) -> dict[str, str]:
    sys.path.insert(0, str(SET_UP.parent))
    import plugin_env

    values = plugin_env.read_stamp(str(data))
    assert values is not None
    return values


def payload(event: str, cwd: str, **kw: str) -> bytes:
    data = {"session_id": str(uuid.uuid4()), "transcript_path": "", "cwd": cwd}
    return json.dumps({**data, "hook_event_name": event, **kw}).encode()


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    work = Path(tempfile.mkdtemp(prefix="mt-plugin-bench-"))
    rows = ["| Figure | Value | Comparison point (same run) | Runs |", "|---|---|---|---|"]
    try:
        home = work / "home"
        home.mkdir()
        data = home / ".claude" / "plugins" / "data" / "memory-tool-bench"
        data.mkdir(parents=True)
        cold, _ = build_once(data, home)
        warm, _ = build_once(data, home)  # the same HOME: pip's cache is filled now
        rows.append(f"| plugin environment build, empty pip cache | {cold:.1f} s | | 1 |")
        rows.append(f"| plugin environment build, pip cache filled | {warm:.1f} s | | 1 |")
        stamp = stamp_values(data)
        env_python = stamp["PYTHON"]

        from gen_tree import generate

        tree_home = work / "tree"
        tree_home.mkdir()
        cwd = str(generate(tree_home, FILES)["home_project_dir"])
        env = bench_env(tree_home, CLAUDE_PLUGIN_DATA=str(data), CLAUDE_PLUGIN_ROOT=str(PLUGIN))
        env.pop("PYTHONPATH", None)  # the environment's own package, as in a session
        memory_tool = [str(Path(stamp["BIN"]) / "memory-tool")]
        run_process([*memory_tool, "init"], env=env).check("init")
        run_process([*memory_tool, "index", "--cwd", cwd], env=env).check("index")
        variants = {
            "python -c pass": ([env_python, "-c", "pass"], None),
            "SessionStart, plugin launcher": (
                [str(PLUGIN / "scripts" / "hook"), "SessionStart", VERSION],
                "SessionStart",
            ),
            "SessionStart, settings.json command": (
                [env_python, "-S", stamp["HOOK"], "SessionStart"],
                "SessionStart",
            ),
            "UserPromptSubmit (server), plugin launcher": (
                [str(PLUGIN / "scripts" / "hook"), "UserPromptSubmit", VERSION],
                "UserPromptSubmit",
            ),
            "UserPromptSubmit (server), settings.json command": (
                [env_python, "-S", stamp["HOOK"], "UserPromptSubmit"],
                "UserPromptSubmit",
            ),
        }
        run_process([*memory_tool, "server", "start"], env=env).check("server start")
        samples: dict[str, list[float]] = {k: [] for k in variants}
        try:
            for round_ in range(WARMUP + runs):
                for name, (cmd, event) in variants.items():
                    extra = {"prompt": "fix the login bug"} if event == "UserPromptSubmit" else {}
                    if event == "SessionStart":
                        extra = {"source": "startup"}
                    body = payload(event, cwd, **extra) if event else b""
                    r = run_process(cmd, body, env=env, cwd=cwd).check(name)
                    if event and not r.stdout:
                        raise RuntimeError(f"{name}: no answer")
                    if round_ >= WARMUP:
                        samples[name].append(r.seconds)
        finally:
            run_process([*memory_tool, "server", "stop"], env=env)
        base = median(samples["python -c pass"])
        for name, xs in samples.items():
            if name == "python -c pass":
                continue
            med = median(xs)
            rows.append(
                f"| {name} @ {FILES:,} files | {med * 1000:.0f} ms (p95 {p95(xs) * 1000:.0f}) "
                f"= {med / base:.2f}x | python -c pass {base * 1000:.0f} ms | {runs} after "
                f"{WARMUP} warm-up |"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
