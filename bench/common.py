"""Shared pieces of the benchmarks: the interpreter, the environment of a benchmark process,
timing a whole process (wall time and its own peak RSS), statistics and the machine line."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out"  # git-ignored
VENV_PY = REPO / ".venv" / "bin" / "python"
PYTHON = str(VENV_PY if VENV_PY.exists() else Path(sys.executable))
_CLI = REPO / ".venv" / "bin" / "memory-tool"
MEMORY_TOOL = (
    [str(_CLI)]
    if _CLI.exists()
    else [PYTHON, "-c", "from memory_tool.cli.main import main; main()"]
)
# The source tree under test: the working tree, or (bench/run's default) a snapshot of the
# committed HEAD, so that other people's edits in progress cannot change the figures midway.
SRC = Path(os.environ.get("MEMORY_TOOL_BENCH_SRC", str(REPO)))


def hook_command(event: str) -> list[str]:
    """A hook exactly as `memory-tool install` writes it: the interpreter without site on the
    package's start-up script, the event as its argument."""
    return [PYTHON, "-S", str(SRC / "memory_tool" / "runtime" / "hook.py"), event]


def snapshot_head(dest_root: Path) -> Path:
    """Export the committed HEAD's package (templates included) to ``dest_root/src-<sha>`` and
    make it the source under test."""
    global SRC
    sha = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dest = dest_root.resolve() / f"src-{sha}"
    if not dest.exists():
        tmp = dest_root / f".src-{sha}-{os.getpid()}"
        tmp.mkdir(parents=True)
        archive = subprocess.run(
            [
                "git",
                "archive",
                "HEAD",
                "memory_tool",
                # The plugin (its src/ links resolve to the snapshot's package) and what the
                # package's build needs: bench/plugin_bench.py builds the plugin's environment.
                "plugin",
                "README.md",
                "bench",
                "tests/data",
                "pyproject.toml",
            ],
            cwd=REPO,
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        os.replace(tmp, dest)
    SRC = dest
    os.environ["MEMORY_TOOL_BENCH_SRC"] = str(dest)
    return dest


LOCOMO = Path(
    os.environ.get("MEMORY_TOOL_LOCOMO", str(REPO.parent / "shared" / "bench" / "locomo10.json"))
)
TODAY = "2026-11-29"


def bench_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a benchmark process: a sandboxed HOME, no background refresh, a pinned
    day, and bytecode caching ON (a user's machine caches .pyc files; this sandbox sets
    PYTHONDONTWRITEBYTECODE=1, which would make every hook recompile our modules)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE", "CLAUDE_CONFIG_DIR", "MEMORY_TOOL_HOME")
        and not k.startswith("MEMORY_TOOL_")
    }
    env.update(
        HOME=str(home),
        MEMORY_TOOL_NO_BACKGROUND="1",
        # Words only unless a benchmark asks (LoCoMo's semantic mode): the hooks never use the
        # model, and embedding a 100,000-file tree would dominate the run.
        MEMORY_TOOL_SEMANTIC="0",
        MEMORY_TOOL_TODAY=TODAY,
        PYTHONPATH=str(SRC),
        # Claude Code sets it for every hook; with it each hook claims its event (runtime/claim.py),
        # as in a real session. Fixed: the payloads differ per run, so no run is a twin of another.
        CLAUDE_PID="4242",
    )
    env.update(extra)
    return env


def compile_bytecode() -> None:
    """What pip does at install time: cache bytecode so hooks do not recompile per run."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for target in ("memory_tool",):
        subprocess.run([PYTHON, "-m", "compileall", "-q", str(SRC / target)], env=env, check=False)


@dataclass
class Run:
    seconds: float
    max_rss_kb: int
    stdout: bytes
    returncode: int
    stderr: bytes = b""

    def check(self, what: str) -> Run:
        if self.returncode != 0:
            tail = self.stderr.decode(errors="replace")[-1500:]
            raise RuntimeError(f"{what} exited {self.returncode}: {tail}")
        return self


def run_process(
    cmd: list[str], stdin: bytes = b"", env: dict[str, str] | None = None, cwd: str | None = None
) -> Run:
    """Run one process; wall time from spawn to reap, and that child's own peak RSS (wait4)."""
    with (
        tempfile.TemporaryFile() as fin,
        tempfile.TemporaryFile() as fout,
        tempfile.TemporaryFile() as ferr,
    ):
        fin.write(stdin)
        fin.seek(0)
        start = time.perf_counter()
        # Never the repository as the working directory: `python -c` puts the cwd first on
        # sys.path, which would import the working tree instead of the source under test.
        where = cwd or tempfile.gettempdir()
        proc = subprocess.Popen(cmd, stdin=fin, stdout=fout, stderr=ferr, env=env, cwd=where)
        _, status, usage = os.wait4(proc.pid, 0)  # ru_maxrss: see peak_rss_kb
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        fout.seek(0)
        ferr.seek(0)
        out, err = fout.read(), ferr.read()
    return Run(elapsed, int(usage.ru_maxrss), out, proc.returncode, err)


TIME_BIN = "/usr/bin/time"


def peak_rss_kb(
    cmd: list[str], stdin: bytes = b"", env: dict[str, str] | None = None, cwd: str | None = None
) -> tuple[int, str]:
    """Peak RSS of one process, and how it was measured.

    Not from our own wait4: Python spawns children with vfork, and Linux folds the RSS high-water
    mark of the address space replaced at exec (ours) into the child's ru_maxrss, so every child
    would look at least as big as this harness. GNU time is a small process: its child's
    ru_maxrss is the child's own."""
    if os.path.exists(TIME_BIN):
        with tempfile.NamedTemporaryFile(suffix=".rss") as out:
            run_process([TIME_BIN, "-f", "%M", "-o", out.name, *cmd], stdin, env, cwd).check(
                " ".join(cmd[:3])
            )
            return int(Path(out.name).read_text().split()[-1]), "GNU time %M"
    # No GNU time: a small launcher (python -S) forks the child; its own ~8 MB is a floor.
    launcher = (
        "import os,sys,resource;pid=os.fork()\n"
        "if pid==0: os.execv(sys.argv[1],sys.argv[1:])\n"
        "os.waitpid(pid,0);print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    r = run_process([PYTHON, "-S", "-c", launcher, *cmd], stdin, env, cwd).check("rss launcher")
    return int(r.stdout.split()[-1]), "fork from a python -S launcher (floor ~8 MB)"


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def p95(xs: list[float]) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, round(0.95 * (len(s) - 1))))
    return s[k]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GB RAM"
    except (OSError, ValueError, IndexError):
        pass
    out = subprocess.run(
        [
            PYTHON,
            "-c",
            "import sys, sqlite3; print(sys.version.split()[0], sqlite3.sqlite_version)",
        ],
        capture_output=True,
        text=True,
    )
    py, sq = (out.stdout.split() + ["?", "?"])[:2]
    return (
        f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}, "
        f"Python {py}, SQLite {sq}"
    )


@dataclass
class Figure:
    """One row of the results table."""

    section: str
    name: str
    value: str
    compare: str = ""  # the comparison point from the same run
    runs: str = ""  # run count
    target: str = ""  # the target and whether it is met
    note: str = ""


@dataclass
class Results:
    figures: list[Figure] = field(default_factory=list)
    notes: dict[str, list[str]] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)  # raw numbers for plots and JSON
    skipped: list[str] = field(default_factory=list)

    def add(self, section: str, name: str, value: str, **kw: str) -> None:
        self.figures.append(Figure(section, name, value, **kw))

    def note(self, section: str, text: str) -> None:
        self.notes.setdefault(section, []).append(text)

    def dump_json(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.data, indent=1, default=str), encoding="utf-8")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
