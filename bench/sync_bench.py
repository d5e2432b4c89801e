"""What sync costs, at N memories (bench/gen_tree.py's realistic mix), against a bare repository
on the same disk (the network is not what is measured), as whole `memory-tool` processes:

- first sync:    `sync init REMOTE` on a machine with N memories (export, commit, push);
- no change:     `sync` with nothing changed anywhere (median of RUNS);
- one change:    `sync` after one memory was added (median of RUNS, a new memory each time);
- second machine: `sync init REMOTE` on an empty machine (fetch, bring the files here, index
  them; the projects' memory waits in the repository, as that machine has none of them).

And what it costs the hooks: SessionStart as Claude Code runs it (`python -S
memory_tool/runtime/hook.py SessionStart`, median of RUNS after a warm-up) with sync not set up,
set up (the common start: the pull ran less than 5 minutes ago, so nothing starts), and set up
with the detached pull starting (each sample waits for that process to end before the next).

Usage: .venv/bin/python bench/sync_bench.py [N ...]   (default: 10000)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from gen_tree import generate  # noqa: E402

from memory_tool.base.paths import sanitize_path  # noqa: E402

RUNS = 5
HOOK_RUNS = 11
CLI = [sys.executable, "-c", "import sys; from memory_tool.cli.main import main; sys.exit(main())"]
HOOK = REPO / "memory_tool" / "runtime" / "hook.py"  # as `memory-tool install` runs it


def env_for(home: Path, machine: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CLAUDE_CONFIG"))}
    env.pop("MEMORY_TOOL_HOME", None)
    env.update(
        HOME=str(home),
        MEMORY_TOOL_MACHINE=machine,
        MEMORY_TOOL_TODAY="2026-11-29",
        MEMORY_TOOL_NO_BACKGROUND="1",
        MEMORY_TOOL_SEMANTIC="0",
        MEMORY_TOOL_SERVER="0",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        PYTHONPATH=str(REPO),
    )
    return env


def timed(cmd: list[str], env: dict[str, str], cwd: Path, stdin: bytes = b"") -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, env=env, cwd=cwd, capture_output=True, check=False)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[-2:]}: {proc.stderr.decode(errors='replace')}")
    return took


def git(*args: str, cwd: Path) -> str:
    env = env_for(cwd, "bench")
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=True)
    return out.stdout.decode()


def real_projects(home: Path) -> int:
    """gen_tree's projects as real repositories with an origin, each with one Claude Code
    session on record (that is how sync learns which folder a project key stands for)."""
    work = home / "work"
    n = 0
    for project in sorted(p for p in work.iterdir() if p.is_dir()):
        (project / ".git").rmdir()
        git("init", "-q", ".", cwd=project)
        git("remote", "add", "origin", f"git@github.com:bench/{project.name}.git", cwd=project)
        folder = home / ".claude" / "projects" / sanitize_path(str(project))
        folder.mkdir(parents=True, exist_ok=True)
        line = {"type": "user", "cwd": str(project), "sessionId": "s", "message": {}}
        (folder / "s.jsonl").write_text(json.dumps(line) + "\n")
        n += 1
    return n


def detached_running(home: Path) -> bool:
    needle = b"HOME=" + str(home).encode() + b"\0"
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if b"memory_tool.sync.detached" in cmd and needle in env:
            return True
    return False


def hook_ms(home: Path, project: Path, env: dict[str, str]) -> dict[str, float]:
    """SessionStart in three states, alternated sample by sample (drift on a shared machine
    hits all alike): sync not set up (its working tree's .git renamed away), set up with the
    pull not due, set up with the detached pull starting."""
    payload = {"session_id": "bench", "cwd": str(project), "source": "startup"}
    payload |= {"hook_event_name": "SessionStart", "transcript_path": "/nonexistent.jsonl"}
    sync = home / ".claude" / "memory-tool" / "sync"
    stamp = sync / ".last-start"
    modes = ("not set up", "pull not due", "pull starting")
    samples: dict[str, list[float]] = {m: [] for m in modes}
    for k in range(HOOK_RUNS + 1):
        for mode in modes if k % 2 else modes[::-1]:
            if mode == "not set up":
                (sync / "repo" / ".git").rename(sync / "repo" / ".git-away")
            elif mode == "pull starting":
                stamp.unlink(missing_ok=True)
            else:
                stamp.touch()
            cmd = [sys.executable, "-S", str(HOOK), "SessionStart"]
            took = timed(cmd, env, home, json.dumps(payload).encode())
            if mode == "not set up":
                (sync / "repo" / ".git-away").rename(sync / "repo" / ".git")
            if k:
                samples[mode].append(took)
            while detached_running(home):  # its work must not slow the next sample
                time.sleep(0.05)
    return {m: statistics.median(v) * 1000 for m, v in samples.items()}


def bench(n: int) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="sync-bench-") as tmp:
        root = Path(tmp)
        home = root / "laptop"
        info = generate(home, n)
        projects = real_projects(home)
        project = Path(str(info["home_project_dir"]))
        remote = root / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        env = env_for(home, "laptop")
        timed([*CLI, "index"], env, home)
        first = timed([*CLI, "sync", "init", str(remote)], env, project)
        files = len(git("ls-tree", "-r", "--name-only", "main", cwd=remote).split())
        nochange = statistics.median(timed([*CLI, "sync"], env, project) for _ in range(RUNS))
        one = []
        state = home / ".claude" / "memory-tool"
        for k in range(RUNS):
            note = state / "rooms" / "testing" / f"bench-note-{k}.md"
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text(f"---\nname: bench note {k}\n---\n\nA new fact number {k}.\n")
            one.append(timed([*CLI, "sync"], env, project))
        other = root / "desktop"
        other.mkdir()
        second = timed([*CLI, "sync", "init", str(remote)], env_for(other, "desktop"), other)
        arrived = sum(1 for p in (other / ".claude").rglob("*.md") if "sync" not in p.parts)
        # A fresh full refresh: the hooks then start no background refresh (every 5 minutes),
        # which would cost all three states alike and blur the difference.
        timed([*CLI, "index"], env, home)
        hooks = hook_ms(home, project, {**env, "MEMORY_TOOL_NO_BACKGROUND": ""})
        bare = statistics.median(
            timed([sys.executable, "-c", "pass"], env, home) for _ in range(HOOK_RUNS)
        )
    return [
        f"| {n:,} | {files:,} ({projects} projects) | {first:.1f} | {nochange:.2f} | "
        f"{statistics.median(one):.2f} | {second:.1f} ({arrived:,} files here) |",
        "",
        f"SessionStart hook, whole process, ms, median of {HOOK_RUNS} runs (python -c pass "
        f"{bare * 1000:.0f}): " + "; ".join(f"{mode} {ms:.0f}" for mode, ms in hooks.items()),
    ]


def main() -> int:
    sizes = [int(a) for a in sys.argv[1:]] or [10000]
    out = [
        "| memories | files in the remote | first sync (s) | no-change sync (s) "
        "| one-change sync (s) | second machine's first sync (s) |",
        "|---|---|---|---|---|---|",
    ]
    hooks = []
    for n in sizes:
        print(f"  sync {n}: building the tree", file=sys.stderr)
        rows = bench(n)
        out.append(rows[0])
        hooks += [f"{n:,} memories: {rows[2]}"]
    print("\n".join(out + [""] + hooks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
