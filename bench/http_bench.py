"""Hooks over HTTP against command hooks, with the real Claude Code client (issue 24 item 4).

For each tree size (bench/gen_tree.py): install memory-tool from the source under test into a
sandboxed HOME (`memory-tool install`: HTTP hooks now, command hooks before issue 24), start its
hook server, then run scripted `claude -p` sessions against the stand-in API (tests/e2e):

- per-hook time as Claude Code's debug log reports it: an HTTP hook from its "HTTP hook POST"
  line to the response line; a command hook by its own "finished with status 0 (N ms)" line;
- a whole session of TOOL_CALLS tool calls (Read then Edit of each of TOOL_CALLS / 2 files),
  with the hooks and with no hooks at all: what the hooks add to the session's wall time;
- the server's RSS after the sessions (`memory-tool server status`);
- SessionStart as a whole process, `<python> -S hook.py SessionStart` with the server running,
  against `python3 -S -c pass`, interleaved; and what it imports (`-X importtime`).

The tool events had no hooks before issue 24; for the "before" figures the same events get
command hooks (the package's own start-up, which answers them with nothing): what per-tool hooks
would have cost without HTTP.

Usage: .venv/bin/python bench/http_bench.py [--sizes 1000,10000] [--src DIR] [--label NAME]
         [--runs N] [--tool-calls N] [--workdir DIR]
Prints a JSON line per size and writes bench/out/http-<label>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests" / "e2e"))

from claude_sandbox import Sandbox, find_claude_bin  # noqa: E402
from common import OUT, PYTHON, bench_env, log  # noqa: E402
from fake_api import FakeAnthropicAPI  # noqa: E402

TOOL_CALLS = 200
ROOM_PROMPT = "fix the login bug, refresh tokens expire early"
# Tool-event matchers as HOOK_EVENTS has them (the "before" install gets them as commands).
TOOL_HOOKS = {
    "PreToolUse": "Edit|Write|MultiEdit|NotebookEdit|Agent",
    "PostToolUse": "Read|Edit|Write|MultiEdit|NotebookEdit|Grep|Glob",
    "PostToolUseFailure": "Bash",
}
STAMP = re.compile(r"^(\S+Z) \[[A-Z]+\] (.*)$")
COMMAND_DONE = re.compile(r"^Hooks: (\w+)(?::\w+)? \[.*\] finished with status \d+ \((\d+)ms\)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def hook_times(debug_log: Path) -> dict[str, list[float]]:
    """event -> milliseconds of each of its hooks, as the debug log reports them."""
    out: dict[str, list[float]] = {}
    pending: dict[str, datetime] = {}
    last = ""
    for line in debug_log.read_text(encoding="utf-8", errors="replace").splitlines():
        m = STAMP.match(line)
        if not m:
            continue
        when = datetime.fromisoformat(m.group(1).replace("Z", "+00:00"))
        text = m.group(2)
        done = COMMAND_DONE.match(text)
        if done:
            out.setdefault(done.group(1), []).append(float(done.group(2)))
        elif text.startswith("Hooks: HTTP hook POST to "):
            last = text.removeprefix("Hooks: HTTP hook POST to ").strip()
            pending[last] = when
        elif text.startswith("Hooks: HTTP hook") and last in pending:
            ms = (when - pending.pop(last)).total_seconds() * 1000
            out.setdefault(last.rsplit("/", 1)[1], []).append(ms)
    return out


def summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {
        "n": len(values),
        "median": statistics.median(values),
        "p95": ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))],
    }


def memory_tool(src: Path, env: dict[str, str], *args: str) -> str:
    code = "import sys; from memory_tool.cli.main import main; sys.argv[0]='memory-tool'; main()"
    proc = subprocess.run(
        [PYTHON, "-c", code, *args],
        env={**env, "PYTHONPATH": str(src)},
        # Not this checkout: `python -c` puts the working folder first on sys.path.
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"memory-tool {' '.join(args)}: {proc.stdout}\n{proc.stderr}")
    return proc.stdout


def tool_hook_commands(src: Path) -> dict[str, Any]:
    """Command hooks for the tool events (the "before" figures): the package's start-up."""
    hook = src / "memory_tool" / "runtime" / "hook.py"
    return {
        event: [
            {
                "matcher": matcher,
                "hooks": [
                    {"type": "command", "command": f'"{PYTHON}" -S "{hook}" {event}', "timeout": 5}
                ],
            }
        ]
        for event, matcher in TOOL_HOOKS.items()
    }


def script_tools(api: FakeAnthropicAPI, project: Path, calls: int) -> None:
    files = []
    for i in range(calls // 2):
        path = project / "src" / f"mod_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE_{i} = {i}\n")
        files.append(path)
    for i, path in enumerate(files):
        api.add_tool_use("Read", {"file_path": str(path)})
        api.add_tool_use(
            "Edit",
            {"file_path": str(path), "old_string": f"= {i}\n", "new_string": f"= {i + 1}\n"},
        )
    api.add_text("done")


def session(
    box: Sandbox, env: dict[str, str], prompt: str, calls: int, debug: Path | None
) -> tuple[float, subprocess.CompletedProcess[str]]:
    box.api.reset()
    script_tools(box.api, box.project, calls)
    args = ["--debug-file", str(debug)] if debug else []
    t = time.perf_counter()
    res = box.run_claude(prompt, extra_args=args, env=env, timeout=1800)
    wall = time.perf_counter() - t
    if res.returncode != 0:
        raise RuntimeError(f"claude exited {res.returncode}: {res.stderr[-2000:]}")
    wait_for_scribes(box.home)
    return wall, res


# The longest a session's Scribe may take to write its cold summary before the next session.
SCRIBE_WAIT_S = 30.0


def wait_for_scribes(home: Path) -> None:
    """Wait until no Scribe of this HOME runs. A session's end starts a detached Scribe (it
    loads the tokenizer and writes the cold summary), and a scripted session that starts at
    once has its first prompt find that summary half-written: the prompt then indexes it
    itself, tokenizer and all (0.1-0.6 s). A person does not type the next session's first
    prompt a quarter of a second after the last one ended; the figures are for a prompt, not
    for that race (docs/benchmarks.md says what a prompt that finds a new memory costs)."""
    marker = f"HOME={home}".encode()
    deadline = time.monotonic() + SCRIBE_WAIT_S
    while time.monotonic() < deadline:
        busy = False
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if b"memory_tool.tiers.scribe" not in fh.read():
                        continue
                with open(f"/proc/{pid}/environ", "rb") as fh:
                    busy = marker in fh.read().split(b"\0")
            except OSError:
                continue
            if busy:
                break
        if not busy:
            return
        time.sleep(0.05)


def direct_http(port: int, secret: str, cwd: str, event: str, runs: int) -> dict[str, float]:
    """``runs`` requests straight at the server, as Claude Code sends them (a fresh connection
    each): the hook's time without the client's own scheduling, many samples per size."""
    import http.client

    times = []
    for i in range(runs + 5):
        body = {
            "session_id": f"direct-{os.getpid()}-{i}",
            "cwd": cwd,
            "hook_event_name": event,
            "prompt": ROOM_PROMPT,
            "prompt_id": f"p{i}",
            "tool_name": "Read",
            "tool_use_id": f"t{i}",
            "tool_input": {"file_path": os.path.join(cwd, "src", "mod_0.py")},
            "tool_response": {"type": "text"},
        }
        # The session is known to the server first, as a real session's SessionStart makes
        # it (the server writes its list of sessions when a new one appears, not per hook).
        # (Another tool_use_id: the same body twice would be answered once, as a twin.)
        reg = {**body, "hook_event_name": "PreToolUse", "tool_use_id": f"register-{i}"}
        _post(port, secret, "PreToolUse", reg)
        t = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request(
            "POST",
            f"/hook/{event}",
            body=json.dumps(body).encode(),
            headers={"X-Memory-Tool-Secret": secret, "Content-Type": "application/json"},
        )
        resp = conn.getresponse()
        resp.read()
        conn.close()
        if i >= 5:
            times.append((time.perf_counter() - t) * 1000)
    return summary(times)


def _post(port: int, secret: str, event: str, body: dict[str, Any]) -> None:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(
        "POST",
        f"/hook/{event}",
        body=json.dumps(body).encode(),
        headers={"X-Memory-Tool-Secret": secret, "Content-Type": "application/json"},
    )
    conn.getresponse().read()
    conn.close()


def session_start_process(src: Path, env: dict[str, str], cwd: str, runs: int) -> dict[str, Any]:
    """SessionStart as a whole process (server running) against python3 -S -c pass."""
    hook = [PYTHON, "-S", str(src / "memory_tool" / "runtime" / "hook.py"), "SessionStart"]
    bare = [PYTHON, "-S", "-c", "pass"]  # the hooks' own interpreter (python3 may be a shim)
    hook_s: list[float] = []
    bare_s: list[float] = []
    for i in range(runs + 2):
        payload = json.dumps(
            {"session_id": f"bench-{i}", "cwd": cwd, "source": "startup", "transcript_path": ""}
        ).encode()
        t = time.perf_counter()
        out = subprocess.run(hook, input=payload, env=env, cwd=cwd, capture_output=True)
        h = time.perf_counter() - t
        t = time.perf_counter()
        subprocess.run(bare, env=env, capture_output=True)
        b = time.perf_counter() - t
        if i >= 2:
            hook_s.append(h * 1000)
            bare_s.append(b * 1000)
    imp = subprocess.run(
        [*hook[:1], "-X", "importtime", *hook[1:]],
        input=payload,
        env=env,
        cwd=cwd,
        capture_output=True,
    )
    modules = [
        line.split("|")[-1].strip()
        for line in imp.stderr.decode().splitlines()
        if line.startswith("import time:") and "imported package" not in line
    ][1:]
    hm, bm = statistics.median(hook_s), statistics.median(bare_s)
    return {
        "hook_ms": summary(hook_s),
        "python -S -c pass_ms": summary(bare_s),
        "ratio": hm / bm,
        "brief_chars": len(out.stdout),
        "imports": [m for m in modules if m],
    }


def measure(
    n: int, src: Path, workdir: Path, runs: int, calls: int, claude: Path
) -> dict[str, Any]:
    from gen_tree import generate

    tree = workdir / f"tree-{n}"
    marker = tree / ".generated"
    if not marker.exists():
        if tree.exists():
            shutil.rmtree(tree)
        tree.mkdir(parents=True)
        t = time.perf_counter()
        info = generate(tree, n)
        marker.write_text(json.dumps({"cwd": str(info["home_project_dir"])}))
        log(f"  {n:,} files generated in {time.perf_counter() - t:.0f} s")
    cwd = json.loads(marker.read_text())["cwd"]
    box_root = Path(tempfile.mkdtemp(prefix=f"httpb-{n}-", dir=workdir))
    port = free_port()
    out: dict[str, Any] = {"files": n}
    with FakeAnthropicAPI() as api:
        box = Sandbox(root=box_root, api=api, claude_bin=claude)
        # The generated tree is the sandbox's HOME: its config and state under tree/.claude.
        box.home = tree
        box.project = Path(cwd)
        env = bench_env(tree, MEMORY_TOOL_SERVER_PORT=str(port))
        env.pop("MEMORY_TOOL_NO_BACKGROUND", None)  # the shipped default: hooks start the server
        env["PYTHONPATH"] = str(src)
        settings = tree / ".claude" / "settings.json"
        settings.unlink(missing_ok=True)
        (tree / ".claude" / "memory-tool" / "run" / "sessions.json").unlink(missing_ok=True)
        t = time.perf_counter()
        memory_tool(src, env, "index", "--cwd", cwd)
        out["index_s"] = time.perf_counter() - t
        memory_tool(src, env, "install")
        installed = json.loads(settings.read_text())
        kinds = {h["type"] for gs in installed["hooks"].values() for g in gs for h in g["hooks"]}
        if "http" not in kinds:  # before issue 24: the tool events as command hooks
            installed["hooks"].update(tool_hook_commands(src))
            settings.write_text(json.dumps(installed, indent=2))
        out["hooks"] = sorted(installed["hooks"])
        out["hook_kinds"] = sorted(kinds)
        out["server_start"] = memory_tool(src, env, "server", "start").strip()
        claude_env = {k: v for k, v in env.items() if k.startswith("MEMORY_TOOL_")}
        claude_env.update(PYTHONPATH=str(src), HOME=str(tree))
        claude_env["MEMORY_TOOL_NO_BACKGROUND"] = None  # type: ignore[assignment]
        try:
            # per-hook figures: a session with a room prompt and `calls` tool calls
            times: dict[str, list[float]] = {}
            walls = []
            session(box, claude_env, ROOM_PROMPT, 4, None)  # warm-up: caches, the brief
            for r in range(runs):
                debug = box_root / f"debug-{r}.log"
                wall, _ = session(box, claude_env, ROOM_PROMPT, calls, debug)
                walls.append(wall)
                for event, ms in hook_times(debug).items():
                    times.setdefault(event, []).extend(ms)
            out["per_hook_ms"] = {e: summary(v) for e, v in sorted(times.items())}
            # the same session with no hooks at all
            saved = settings.read_text()
            bare = json.loads(saved)
            bare.pop("hooks", None)
            settings.write_text(json.dumps(bare))
            bare_walls = [
                session(box, claude_env, ROOM_PROMPT, calls, None)[0] for _ in range(runs)
            ]
            settings.write_text(saved)
            out["session_s"] = {
                "tool_calls": calls,
                "with_hooks": summary(walls),
                "no_hooks": summary(bare_walls),
                "added": statistics.median(walls) - statistics.median(bare_walls),
            }
            out["server_status"] = memory_tool(src, env, "server", "status").strip()
            if "http" in kinds:
                secret = installed["env"]["MEMORY_TOOL_HOOK_SECRET"]
                out["direct_ms"] = {
                    e: direct_http(port, secret, cwd, e, 40)
                    for e in ("UserPromptSubmit", "PostToolUse", "PreToolUse")
                }
                out["server_status_after_direct"] = memory_tool(
                    src, env, "server", "status"
                ).strip()
            out["session_start"] = session_start_process(src, env, cwd, max(10, runs * 5))
            if "http" in kinds:  # a dead server: what its HTTP hooks cost (nothing may start one)
                memory_tool(src, env, "server", "stop")
                debug = box_root / "debug-dead.log"
                dead_env = {**claude_env, "MEMORY_TOOL_NO_BACKGROUND": "1"}
                wall, _ = session(box, dead_env, ROOM_PROMPT, 20, debug)
                out["dead_server"] = {
                    "tool_calls": 20,
                    "session_s": wall,
                    "per_hook_ms": {e: summary(v) for e, v in sorted(hook_times(debug).items())},
                }
        finally:
            memory_tool(src, env, "server", "stop")
            box.close()
            shutil.rmtree(box_root, ignore_errors=True)
    return out


def _ms(fig: dict[str, float] | None) -> str:
    return f"{fig['median']:.0f} ({fig['p95']:.0f})" if fig else "-"


def markdown(results: list[dict[str, Any]]) -> str:
    """One row per size and source: per-hook medians (p95) from the debug log, what a session
    of TOOL_CALLS tool calls adds, SessionStart as a process, the server's RSS."""
    head = (
        "| source @ files | hooks | UserPromptSubmit | PostToolUse | PreToolUse | Stop | "
        "SessionStart | session of N tool calls: added | SessionStart process / python -S | "
        "server RSS |\n|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for r in results:
        per = r.get("per_hook_ms", {})
        ss = r.get("session_start", {})
        base = ss.get("python -S -c pass_ms") or ss.get("python3 -S -c pass_ms") or {}
        rss = re.search(r"rss_mb=([\d.]+)", r.get("server_status", ""))
        sess = r.get("session_s", {})
        rows.append(
            f"| {r['label']} @ {r['files']:,} | {'/'.join(r.get('hook_kinds', []))} | "
            f"{_ms(per.get('UserPromptSubmit'))} | {_ms(per.get('PostToolUse'))} | "
            f"{_ms(per.get('PreToolUse'))} | {_ms(per.get('Stop'))} | "
            f"{_ms(per.get('SessionStart'))} | "
            f"{sess.get('added', 0):+.1f} s ({sess.get('tool_calls')} calls: "
            f"{sess.get('with_hooks', {}).get('median', 0):.1f} s vs "
            f"{sess.get('no_hooks', {}).get('median', 0):.1f} s) | "
            f"{ss.get('hook_ms', {}).get('median', 0):.0f} / {base.get('median', 0):.0f} ms = "
            f"{ss.get('ratio', 0):.2f}x | {rss.group(1) + ' MB' if rss else '-'} |"
        )
    return head + "\n".join(rows) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--src", type=Path, default=REPO)
    ap.add_argument("--label", default="now")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tool-calls", type=int, default=TOOL_CALLS)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "http-bench")
    args = ap.parse_args()
    claude = find_claude_bin()
    if claude is None:
        print("the claude binary is not installed: .ci/install_claude.sh", file=sys.stderr)
        return 1
    args.workdir.mkdir(parents=True, exist_ok=True)
    results = []
    for n in [int(s) for s in args.sizes.split(",")]:
        log(f"{args.label}: {n:,} files")
        res = measure(n, args.src.resolve(), args.workdir, args.runs, args.tool_calls, claude)
        res["label"] = args.label
        print(json.dumps(res), flush=True)
        results.append(res)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"http-{args.label}.json").write_text(json.dumps(results, indent=2))
    print("\nMilliseconds, median (p95), as Claude Code's debug log reports each hook:\n")
    print(markdown(results))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "")
    sys.exit(main())
