"""A scripted week of Claude Code sessions through the real `claude` binary, memory-tool installed
in the sandbox as a user installs it, then day-7 topic prompts; measures what reached the model.

    .venv/bin/python bench/week/week.py --scenario dev          # ~26 sessions + 22 topics
    .venv/bin/python bench/week/week.py --scenario blind        # held out, already run once
    .venv/bin/python bench/week/week.py --scenario blind3       # a scenario by name
    .venv/bin/python bench/week/week.py --scenario dev --days 2 # a short run

Offline: the stand-in API (tests/e2e/fake_api.py) answers with the scenario's scripted turns and
records every request. Nothing is done by hand between sessions: `memory-tool install` once, then
only `claude -p` runs. See bench/week/README.md for the scenario format and every figure.

The clock: memory-tool's own (MEMORY_TOOL_TODAY, the simulated day) for every hook, and, when
libfaketime is installed, the `claude` binary alone runs at the simulated time, so transcripts
(and the Scribe, which dates a session by its transcript) carry the simulated days. The hooks'
wall clock stays real: a week passes in minutes, so anything memory-tool ages by file time
(a handoff's 24 hours) does not age.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(HERE))

import measure  # noqa: E402
from claude_sandbox import (  # noqa: E402
    Sandbox,
    find_claude_bin,
    injected_by,
    memory_tool,
    project_key,
    server_env,
)
from fake_api import FakeAnthropicAPI, RecordedRequest  # noqa: E402

LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
# Sessions of one day start at 09:00 and are this far apart (simulated time).
SESSION_GAP_MIN = 40
DAY_START_HOUR = 9
# A `claude -p` run (hooks included) gets this long; a run near it is a harness problem.
RUN_TIMEOUT_S = 180
# After a run, detached memory-tool processes (the Scribe, a sync) get this long to finish.
QUIET_TIMEOUT_S = 60
QUIET_POLL_S = 0.2
# A user's environment, as far as the sandbox can: no pinned test switches. Semantic search
# stays as installed (words only here: the extra is not in the test environment).
USER_ENV: dict[str, str | None] = {
    "MEMORY_TOOL_NO_BACKGROUND": None,
    "MEMORY_TOOL_HOME": None,
    "CLAUDE_CONFIG_DIR": None,
}
HOOK_MS_RE = re.compile(r"Hooks: (\w+)(?::\w+)? \[(.*?)\] finished with status \d+ \((\d+)ms\)")
SESSION_END_RE = re.compile(r"SessionEnd:\w+ \[(.*?)\] completed with status")
# An HTTP hook has no "finished ... (Nms)" line: from the POST to its answer.
HTTP_POST_RE = re.compile(
    r"Hooks: HTTP hook POST to http://(?:127\.0\.0\.1|localhost):\d+/hook/(\w+)"
)
HTTP_DONE_RE = re.compile(r'"Hook (\w+) \(\w+\) (?:success|error)')
HOOK_ERROR_RE = re.compile(r"Hook \w+(?::\w+)? \(\w+\) error")
DEBUG_TS_RE = re.compile(r"^(\d{4}-\d\d-\d\dT[\d:.]+)Z ")


def load_scenario(name_or_path: str) -> dict[str, Any]:
    path = Path(name_or_path)
    if not path.suffix:
        path = HERE / f"{name_or_path}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _fill(value: Any, subs: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for k, v in subs.items():
            value = value.replace("{" + k + "}", v)
        return value
    if isinstance(value, list):
        return [_fill(v, subs) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, subs) for k, v in value.items()}
    return value


def _git(cwd: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Dana",
        "GIT_AUTHOR_EMAIL": "dana@example.com",
        "GIT_COMMITTER_NAME": "Dana",
        "GIT_COMMITTER_EMAIL": "dana@example.com",
    }
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def make_projects(root: Path, scenario: Mapping[str, Any]) -> dict[str, Path]:
    """Each project a git repository with its starting files, one commit."""
    out = {}
    for name, spec in scenario["projects"].items():
        d = root / "work" / spec["dir"]
        for rel, text in spec.get("files", {}).items():
            p = d / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        _git(d, "init", "-q", "-b", "main")
        _git(d, "add", "-A")
        _git(d, "commit", "-q", "-m", "start")
        out[name] = d.resolve()
    return out


class Week:
    """One scenario run: a sandbox, the stand-in API, the runs and what they recorded."""

    def __init__(self, scenario: dict[str, Any], out: Path, *, days: int | None = None) -> None:
        self.scenario = scenario
        self.out = out
        self.days = days
        claude = find_claude_bin()
        if claude is None:
            raise SystemExit("the claude binary is not installed: run .ci/install_claude.sh")
        self.claude = claude
        # Short: memory-tool's server socket lives under the sandbox HOME (108-byte limit).
        self.root = Path(tempfile.mkdtemp(prefix="wk-")).resolve()
        self.api = FakeAnthropicAPI().start()
        self.box = Sandbox(root=self.root / "box", api=self.api, claude_bin=claude)
        self.projects = make_projects(self.box.root, scenario)
        self.runs: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        self.sizes: list[dict[str, Any]] = []
        self.planted_at: dict[str, int] = {}
        self.faketime = LIBFAKETIME.is_file() and not os.environ.get("WEEK_NO_FAKETIME")
        self.start = dt.date.fromisoformat(scenario["start"])
        if self.faketime:
            # Only `claude` runs at the simulated time: the environment it gives its hooks (and
            # every process they start) preloads nothing. libfaketime's own way to limit itself
            # to one program (FAKETIME_ONLY_CMDS) makes claude 2.1.332 fail to start.
            self.box.write_settings({"env": {"LD_PRELOAD": ""}})

    # ---- the clock ---------------------------------------------------------------------------
    def day_date(self, day: int) -> dt.date:
        return self.start + dt.timedelta(days=day - 1)

    def clock_env(self, day: int, slot: int) -> dict[str, str | None]:
        env: dict[str, str | None] = {"MEMORY_TOOL_TODAY": self.day_date(day).isoformat()}
        if self.faketime:
            at = dt.datetime.combine(self.day_date(day), dt.time(DAY_START_HOUR)) + dt.timedelta(
                minutes=SESSION_GAP_MIN * slot
            )
            env.update(
                {
                    "LD_PRELOAD": str(LIBFAKETIME),
                    "FAKETIME": "@" + at.strftime("%Y-%m-%d %H:%M:%S"),
                    "FAKETIME_DONT_FAKE_MONOTONIC": "1",
                }
            )
        return env

    # ---- one run -----------------------------------------------------------------------------
    def subs(self, project: str) -> dict[str, str]:
        d = self.projects[project]
        return {
            "project": str(d),
            "automem": str(self.box.config_dir / "projects" / project_key(str(d)) / "memory"),
        }

    def run(
        self,
        prompt: str,
        *,
        project: str,
        day: int,
        slot: int,
        label: str,
        kind: str,
        assistant: list[dict[str, Any]],
        session_id: str,
        resume: bool,
        fact: str | None = None,
    ) -> dict[str, Any]:
        for turn in _fill(assistant, self.subs(project)):
            if "tool" in turn:
                self.api.add_tool_use(turn["tool"], turn["input"], turn.get("text"))
            else:
                self.api.add_text(turn["text"])
        first = len(self.api.requests)
        debug = self.out / "debug" / f"{len(self.runs):03d}-{label}.txt"
        debug.parent.mkdir(parents=True, exist_ok=True)
        args = ["--debug-file", str(debug)]
        args += ["--resume", session_id] if resume else ["--session-id", session_id]
        # The sandbox's own hook-server port, as `install` wrote it into the HTTP hooks (the
        # default port would reach another sandbox's server, or none).
        env = {**USER_ENV, **server_env(self.box), **self.clock_env(day, slot)}
        t = time.perf_counter()
        try:
            res = self.box.run_claude(
                prompt,
                cwd=self.projects[project],
                extra_args=args,
                env=env,
                timeout=RUN_TIMEOUT_S,
            )
            rc = res.returncode
            if rc != 0:
                self.warnings.append(f"{label}: claude exited {rc}: {res.stderr[-300:]}")
        except subprocess.TimeoutExpired:
            rc = -1
            self.warnings.append(f"{label}: claude timed out")
        wall = time.perf_counter() - t
        detached = self.wait_quiet()
        unused = self.api.drop_pending()
        if unused:
            self.warnings.append(f"{label}: {unused} scripted turns unused")
        main = [r for r in self.api.requests[first:] if r.is_messages and r.main]
        rec: dict[str, Any] = {
            "order": len(self.runs),
            "label": label,
            "kind": kind,
            "day": day,
            "project": project,
            "prompt": prompt,
            "session_id": session_id,
            "new_session": not resume,
            "rc": rc,
            "wall_s": round(wall, 2),
            "detached_ms": round(detached * 1000),
            "requests": len(main),
            "first_request": _request_text(main[0]) if main else "",
            "injected": _injected(main[0]) if main else "",
            "hook_ms": hook_times(debug),
            "hook_errors": hook_errors(debug),
        }
        if fact:
            rec["fact"] = fact
        self.runs.append(rec)
        return rec

    def wait_quiet(self) -> float:
        """Until no memory-tool process of this sandbox runs, but for the resident server; how
        long the detached work (the Scribe, a sync) went on after claude exited, in seconds
        (to within QUIET_POLL_S)."""
        home = f"HOME={self.box.home}".encode()
        start = time.monotonic()
        while time.monotonic() < start + QUIET_TIMEOUT_S:
            busy = [p for p in sandbox_pids(home) if not _is_server(p)]
            if not busy:
                return time.monotonic() - start
            time.sleep(QUIET_POLL_S)
        self.warnings.append("detached processes still running after the quiet timeout")
        return time.monotonic() - start

    # ---- the week ----------------------------------------------------------------------------
    def install(self) -> None:
        res = memory_tool(self.box, "install", env={**USER_ENV, "MEMORY_TOOL_TODAY": None})
        (self.out / "install.txt").write_text(res.stdout + res.stderr, encoding="utf-8")
        mode = os.environ.get("WEEK_CAPTURE")
        statements = os.environ.get("WEEK_STATEMENTS")
        if mode or statements:
            # Ablations (README): "inbox" keeps every capture out of the live memories, so what
            # still reaches a later session came without a capture shape; WEEK_STATEMENTS=false
            # runs the shapes without the statement model.
            config = self.box.config_dir / "memory-tool" / "config.yaml"
            config.parent.mkdir(parents=True, exist_ok=True)
            with config.open("a", encoding="utf-8") as f:
                f.write(f"capture:\n  mode: {mode or 'auto'}\n")
                if statements:
                    f.write(f"  statements: {statements}\n")

    def baseline(self) -> list[str]:
        """The lines Claude Code sends without memory-tool: a twin sandbox, one session a
        project, same layout (paths normalised away)."""
        api = FakeAnthropicAPI().start()
        twin_root = Path(tempfile.mkdtemp(prefix="wb-")).resolve()
        try:
            twin = Sandbox(root=twin_root / "box", api=api, claude_bin=self.claude)
            projects = make_projects(twin.root, self.scenario)
            lines: set[str] = set()
            for d in projects.values():
                api.reset()
                twin.run_claude("baseline", cwd=d, env=self.clock_env(1, 0), timeout=RUN_TIMEOUT_S)
                for r in api.main_requests()[:1]:
                    text = measure.normalize(_request_text(r), _roots(twin.root, twin_root))
                    lines |= {ln.strip() for ln in text.splitlines() if ln.strip()}
            twin.close()
            return sorted(lines)
        finally:
            api.stop()
            shutil.rmtree(twin_root, ignore_errors=True)

    def note_planted(self, order: int, texts: list[str]) -> None:
        blob = "\n".join(texts)
        for fid, fact in self.scenario["facts"].items():
            if fid not in self.planted_at and measure.fact_regex(fact).search(blob):
                self.planted_at[fid] = order
        privacy = self.scenario.get("privacy", {})
        for s in list(privacy.get("secrets", [])) + list(privacy.get("private", [])):
            key = f"secret:{s}"
            if key not in self.planted_at and s in blob:
                self.planted_at[key] = order

    def measure_sizes(self, day: int) -> None:
        state = self.box.config_dir / "memory-tool"
        index = sum(p.stat().st_size for p in state.glob("index.db*")) if state.is_dir() else 0
        md = list(state.rglob("*.md")) if state.is_dir() else []
        self.sizes.append(
            {
                "day": day,
                "index_bytes": index,
                "md_files": len(md),
                "md_bytes": sum(p.stat().st_size for p in md),
            }
        )

    def play(self) -> None:
        sessions = self.scenario["sessions"]
        last_day = max(s["day"] for s in sessions) if sessions else 1
        if self.days is not None:
            sessions = [s for s in sessions if s["day"] <= self.days]
            last_day = self.days
        slots: dict[int, int] = {}
        current = 0
        for n, s in enumerate(sessions, 1):
            if s["day"] != current and current:
                self.measure_sizes(current)
            current = s["day"]
            sid = str(uuid.uuid4())
            for i, turn in enumerate(s["turns"]):
                slot = slots.get(s["day"], 0)
                slots[s["day"]] = slot + 1
                order = len(self.runs)
                texts = [turn["user"]] + [
                    json.dumps(a, ensure_ascii=False) for a in turn.get("assistant", [])
                ]
                self.note_planted(order, texts)
                label = f"d{s['day']}-s{n:02d}-{s['project']}" + (f"-t{i + 1}" if i else "")
                self.run(
                    turn["user"],
                    project=s["project"],
                    day=s["day"],
                    slot=slot,
                    label=label,
                    kind="noise" if s.get("noise") else "work",
                    assistant=turn.get("assistant", []),
                    session_id=sid,
                    resume=i > 0,
                )
        if current:
            self.measure_sizes(current)
        topic_day = last_day
        for i, t in enumerate(self.scenario["topics"]):
            slot = slots.get(topic_day, 0)
            slots[topic_day] = slot + 1
            self.run(
                t["prompt"],
                project=t["project"],
                day=topic_day,
                slot=slot,
                label=f"d{topic_day}-topic{i + 1:02d}-{t['fact']}",
                kind="topic",
                assistant=[{"text": "ok"}],
                session_id=str(uuid.uuid4()),
                resume=False,
                fact=t["fact"],
            )
        self.measure_sizes(topic_day)

    def store_files(self) -> list[dict[str, str]]:
        """Every memory file on disk after the week, with the kind of place it is in."""
        out = []
        state = self.box.config_dir / "memory-tool"
        for p in sorted(state.rglob("*.md")) if state.is_dir() else []:
            rel = p.relative_to(state).as_posix()
            top = rel.split("/", 1)[0]
            kind = {"inbox": "inbox", "cold": "cold", "wiki": "wiki", "hot": "other"}.get(
                top, "live"
            )
            out.append(_file_record(p, rel, kind))
        for p in sorted((self.box.config_dir / "projects").glob("*/memory/*.md")):
            rel = p.relative_to(self.box.config_dir).as_posix()
            out.append(_file_record(p, rel, "auto-memory"))
        return out

    def close(self) -> None:
        # Best effort: whatever is left of this sandbox's processes is ended below anyway.
        with contextlib.suppress(Exception):
            memory_tool(self.box, "server", "stop", env=USER_ENV, check=False)
        home = f"HOME={self.box.home}".encode()
        for pid in sandbox_pids(home):
            with contextlib.suppress(OSError):
                os.kill(pid, 15)
        self.api.stop()
        self.box.close()


def _roots(*paths: Path) -> list[str]:
    """A sandbox's paths as they appear in a request: as paths, and as Claude Code's project
    folder names (a project key spells the path with dashes)."""
    return [str(p) for p in paths] + [project_key(str(p)) for p in paths]


def _file_record(path: Path, rel: str, kind: str) -> dict[str, str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    front, body = "", text
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            front, body = text[4:end], text[end + 4 :].lstrip("\n")
    return {"path": rel, "kind": kind, "frontmatter": front, "body": body}


def _request_text(req: RecordedRequest) -> str:
    return str(req.system_text()) + "\n" + str(req.messages_text())


def _injected(req: RecordedRequest) -> str:
    blocks: list[str] = []
    for ev in ("SessionStart", "UserPromptSubmit"):
        blocks += injected_by(req, ev)
    return "".join(blocks)


def sandbox_pids(home_env: bytes) -> list[int]:
    """Processes whose environment names this sandbox's HOME (all started by this run)."""
    out = []
    me = os.getpid()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == me:
            continue
        try:
            env = (d / "environ").read_bytes()
        except OSError:
            continue
        if home_env + b"\0" in env or env.endswith(home_env):
            out.append(int(d.name))
    return out


def _is_server(pid: int) -> bool:
    try:
        return b"memory_tool.runtime.server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # gone


def hook_errors(debug: Path) -> list[str]:
    """The client's own reports of a hook of ours that failed (an HTTP hook nobody answered,
    a command that exited non-zero): the hook's work did not happen."""
    try:
        lines = debug.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    return [ln[:300] for ln in lines if "[ERROR]" in ln and HOOK_ERROR_RE.search(ln)]


def _ours(handler: str) -> bool:
    """A hook memory-tool installed: its command hook, or an HTTP hook to its local server."""
    return "memory_tool" in handler or "://127.0.0.1" in handler or "://localhost" in handler


def hook_times(debug: Path) -> dict[str, list[int]]:
    """memory-tool's hook durations in one run, from the client's debug log. SessionEnd's
    finish line carries no duration: from the line before it (an upper bound); an HTTP hook's
    from its POST line to its answer line."""
    out: dict[str, list[int]] = {}
    try:
        lines = debug.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return out
    prev_ts: dt.datetime | None = None
    posted: dict[str, dt.datetime] = {}  # HTTP hooks: event -> when the client sent it
    for line in lines:
        m = DEBUG_TS_RE.match(line)
        ts = dt.datetime.fromisoformat(m.group(1)) if m else None
        h = HOOK_MS_RE.search(line)
        if h and _ours(h.group(2)):
            out.setdefault(h.group(1), []).append(int(h.group(3)))
        post = HTTP_POST_RE.search(line)
        if post and ts:
            posted[post.group(1)] = ts
        done = HTTP_DONE_RE.search(line)
        if done and ts and done.group(1) in posted:
            sent = posted.pop(done.group(1))
            out.setdefault(done.group(1), []).append(int((ts - sent).total_seconds() * 1000))
        e = SESSION_END_RE.search(line)
        if e and _ours(e.group(1)) and ts and prev_ts:
            out.setdefault("SessionEnd", []).append(int((ts - prev_ts).total_seconds() * 1000))
        if ts:
            prev_ts = ts
    return out


def code_info() -> dict[str, str]:
    def git(*a: str) -> str:
        return subprocess.run(
            ["git", *a], cwd=REPO, capture_output=True, text=True, check=False
        ).stdout.strip()

    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "date": git("log", "-1", "--format=%cI"),
        "dirty": "yes" if git("status", "--porcelain", "--", "memory_tool") else "no",
    }


def run_week(scenario: dict[str, Any], out: Path, *, days: int | None = None) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    # The client appends to a --debug-file: an earlier run's logs would count twice.
    shutil.rmtree(out / "debug", ignore_errors=True)
    week = Week(scenario, out, days=days)
    try:
        baseline = week.baseline()
        week.install()
        week.play()
        files = week.store_files()
        record = {
            "scenario": scenario,
            "code": code_info(),
            "clock": "libfaketime (claude) + MEMORY_TOOL_TODAY"
            if week.faketime
            else "MEMORY_TOOL_TODAY only",
            "roots": _roots(week.box.root, week.root),
            "baseline_lines": baseline,
            "planted_at": week.planted_at,
            "runs": week.runs,
            "sizes": week.sizes,
            "store": {"files": files},
            "warnings": week.warnings,
        }
        (out / "run.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
        return record
    finally:
        week.close()
        if not os.environ.get("WEEK_KEEP_SANDBOX"):
            shutil.rmtree(week.root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="dev", help="dev, blind, blind2, blind3, or a JSON path")
    ap.add_argument("--out", type=Path, default=None, help="default bench/out/week-<scenario>")
    ap.add_argument("--days", type=int, default=None, help="only the first N days")
    a = ap.parse_args(argv)
    scenario = load_scenario(a.scenario)
    out = a.out or REPO / "bench" / "out" / f"week-{scenario['name']}"
    t = time.perf_counter()
    record = run_week(scenario, out, days=a.days)
    result = measure.analyze(record)
    result["wall_s"] = round(time.perf_counter() - t, 1)
    (out / "result.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    (out / "result.md").write_text(measure.markdown(result), encoding="utf-8")
    print(measure.markdown(result))
    print(f"wrote {out}/result.json, result.md, run.json ({result['wall_s']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
