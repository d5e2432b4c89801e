"""The same memory for Codex CLI and Gemini CLI: what each agent's hooks cost and what the brief
weighs, against Claude Code's on the same generated tree.

Each hook is run as the agent runs it (the command `memory-tool install --agent ...` writes:
`python -S .../hook.py --agent AGENT EVENT`, the agent's own payload on stdin), interleaved
with Claude Code's command hook and `python -c pass`, on a tree of 1,000 memory files. Other
agents' hooks run in-process (no resident server: it speaks Claude Code's protocol), so their
prompt hook is compared with Claude Code's in-process path too (MEMORY_TOOL_SERVER=0).

Usage: .venv/bin/python bench/agents_bench.py [RUNS]   (prints a Markdown section)
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SRC, bench_env, median, p95, run_process  # noqa: E402

FILES = 1000
WARMUP = 2
HOOK = SRC / "memory_tool" / "runtime" / "hook.py"
PROMPT = "fix the login bug, refresh tokens expire early"  # a room prompt (scale_bench's)

# (label, argv after hook.py, payload)
CASES: list[tuple[str, list[str], str]] = [
    ("Claude Code SessionStart", ["SessionStart"], "start"),
    ("Codex SessionStart", ["--agent", "codex", "SessionStart"], "start"),
    ("Gemini SessionStart", ["--agent", "gemini", "SessionStart"], "start"),
    ("Claude Code UserPromptSubmit (in-process)", ["UserPromptSubmit"], "prompt"),
    ("Codex UserPromptSubmit", ["--agent", "codex", "UserPromptSubmit"], "prompt"),
    ("Gemini BeforeAgent", ["--agent", "gemini", "BeforeAgent"], "prompt"),
]


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    tmp = Path(tempfile.mkdtemp(prefix="agents-bench-"))
    try:
        home = tmp / "home"
        import gen_tree

        info = gen_tree.generate(home, FILES)
        project = Path(str(info["home_project_dir"]))  # the tree's project: its rooms and L2
        env = bench_env(home, MEMORY_TOOL_SERVER="0")
        payload = {
            "start": {"session_id": "b", "cwd": str(project), "source": "startup",
                      "hook_event_name": "SessionStart", "transcript_path": ""},
            "prompt": {"session_id": "b", "cwd": str(project), "prompt": PROMPT,
                       "transcript_path": ""},
        }  # fmt: skip
        times: dict[str, list[float]] = {label: [] for label, _, _ in CASES}
        base: list[float] = []
        sizes: dict[str, int] = {}
        from memory_tool.base import tokens

        for i in range(WARMUP + runs):
            for label, argv, kind in CASES:
                body = dict(payload[kind], session_id=f"b{i}")
                r = run_process(
                    [sys.executable, "-S", str(HOOK), *argv], json.dumps(body).encode(), env
                )
                if i >= WARMUP:
                    times[label].append(r.seconds * 1000)
                    out = r.stdout.decode()
                    ctx = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
                    sizes[label] = tokens.count(ctx)
            r = run_process([sys.executable, "-c", "pass"], b"", env)
            if i >= WARMUP:
                base.append(r.seconds * 1000)
        print(f"### Agents: hook time and context ({FILES} memory files, {runs} runs)\n")
        print("| hook | median ms | p95 ms | context tokens |")
        print("|---|---|---|---|")
        for label, _, _ in CASES:
            t = times[label]
            print(f"| {label} | {median(t):.1f} | {p95(t):.1f} | {sizes.get(label, 0)} |")
        print(f"| `python -c pass` | {median(base):.1f} | {p95(base):.1f} | |")
        print(f"\n(tokenizer: {tokens.method()})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
