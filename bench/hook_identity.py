"""Is every hook's output unchanged? For a change that only makes the hooks cheaper: the same
hooks over the same tree, under two source trees, compared.

Records, in-process as the hook server runs them (one kept index connection): UserPromptSubmit
for the first 100 prompts of tests/data/prompts.jsonl in fresh sessions; then 10 sessions of
SessionStart and 10 prompts each, every prompt followed by two Reads and an Edit (PostToolUse,
and PreToolUse for the Edit), a failed Bash every fourth prompt (PostToolUseFailure), and Stop.
Also the session files they leave (``sessions/``, ``hot/``; their times masked) and the names of
the lock files.

Run in a sandboxed HOME holding a copy of an indexed tree (bench/recall_identity.py --reuse
keeps one; each run needs a fresh copy, as the hooks write into it), with PYTHONPATH pointing at
the source under test, from the tree's home project folder:

    python bench/hook_identity.py > A.json
    python bench/hook_identity.py --compare A.json B.json
"""

from __future__ import annotations

import argparse
import glob
import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

PROMPTS = Path(__file__).resolve().parent.parent / "tests" / "data" / "prompts.jsonl"
FILES = [
    "src/auth/login.py", "src/billing/invoice.py", "migrations/0001_init.sql",
    ".github/workflows/ci.yml", "docs/README.md", "src/api/routes.py", "tests/test_db.py",
    "frontend/src/App.tsx",
]  # fmt: skip
STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d")
TIME_KEYS = ("updated", "created_at", "started", "room_at", "at")


def record() -> dict[str, Any]:
    from memory_tool.base import paths
    from memory_tool.runtime import dispatch
    from memory_tool.store import index as index_module

    with open(PROMPTS, encoding="utf-8") as fh:
        prompts = [json.loads(line)["prompt"] for line in fh if line.strip()][:100]
    cwd = os.getcwd()
    index_module.keep_open()
    out: list[list[Any]] = []

    def hook(event: str, sid: str, **extra: Any) -> None:
        payload = {"session_id": sid, "cwd": cwd, "hook_event_name": event, **extra}
        buf = io.StringIO()
        dispatch.run(event, stdin=io.BytesIO(json.dumps(payload).encode()), stdout=buf)
        index_module.release_kept()
        out.append([event, sid, extra.get("prompt", extra.get("tool_input", "")), buf.getvalue()])

    for i, p in enumerate(prompts):
        hook("UserPromptSubmit", f"fresh-{i}", prompt=p, transcript_path="")
    for s in range(10):
        sid = f"sess-{s}"
        hook("SessionStart", sid, source="startup", transcript_path="")
        for j, p in enumerate(prompts[s * 10 : (s + 1) * 10]):
            hook("UserPromptSubmit", sid, prompt=p, transcript_path="")
            for k, tool in enumerate(["Read", "Read", "Edit"]):
                path = os.path.join(cwd, FILES[(s + j + k) % len(FILES)])
                edit = {"old_string": "a", "new_string": "b"} if tool == "Edit" else {}
                ti = {"file_path": path, **edit}
                if tool == "Edit":
                    hook("PreToolUse", sid, tool_name=tool, tool_input=ti, tool_use_id=f"t{s}-{j}p")
                hook(
                    "PostToolUse", sid, tool_name=tool, tool_input=ti,
                    tool_response={"type": "text"}, tool_use_id=f"t{s}-{j}-{k}",
                )  # fmt: skip
            if j % 4 == 3:
                hook(
                    "PostToolUseFailure", sid, tool_name="Bash",
                    tool_input={"command": "pytest -q"}, tool_use_id=f"b{s}-{j}",
                    error="E   ImportError: cannot import name 'refresh_token' from auth.tokens",
                )  # fmt: skip
        hook("Stop", sid, last_assistant_message="Done: fixed the token refresh.")
    root = str(paths.state_root())
    files: dict[str, Any] = {}
    for path in sorted(glob.glob(f"{root}/sessions/*.json") + glob.glob(f"{root}/hot/*.*")):
        if path.endswith(".json"):
            with open(path, encoding="utf-8") as fh:
                files[path[len(root) :]] = _masked(json.load(fh))
        elif path.endswith(".md"):
            with open(path, encoding="utf-8") as fh:
                files[path[len(root) :]] = STAMP.sub("T", fh.read())
    locks = sorted(
        os.path.relpath(p, root) for p in glob.glob(f"{root}/*/*.lock") + glob.glob(f"{root}/*/.*")
    )
    return {"hooks": out, "files": files, "locks": locks}


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items() if k not in TIME_KEYS}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 1e9:
        return "T"  # a time
    return value


def compare(a: Path, b: Path) -> int:
    left, right = json.loads(a.read_text()), json.loads(b.read_text())
    pairs = zip(left["hooks"], right["hooks"], strict=False)
    hooks = [i for i, (x, y) in enumerate(pairs) if x != y]
    hooks += [-1] if len(left["hooks"]) != len(right["hooks"]) else []
    names = set(left["files"]) | set(right["files"])
    files = sorted(n for n in names if left["files"].get(n) != right["files"].get(n))
    given = sum(1 for h in left["hooks"] if h[3])
    print(
        f"{len(left['hooks'])} hooks ({given} with output), {len(names)} files: "
        f"{len(hooks)} hooks differ, {len(files)} files differ, "
        f"lock files {'the same' if left['locks'] == right['locks'] else 'differ'}"
    )
    for i in hooks[:5]:
        print(f"  hook {i}: {left['hooks'][i][:3] if i >= 0 else 'counts differ'}")
    for name in files[:5]:
        print(f"  file {name}")
    return 1 if hooks or files or left["locks"] != right["locks"] else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compare", nargs=2, type=Path)
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    json.dump(record(), sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
