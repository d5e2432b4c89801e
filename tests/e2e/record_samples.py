"""Re-record tests/e2e/samples/*.json: the stdin JSON real Claude Code hooks receive.

    .venv/bin/python tests/e2e/record_samples.py

Runs the installed binary (see .ci/install_claude.sh) offline through one session: startup,
a Stop hook that blocks once, --resume, /compact, --resume --fork-session, a subagent (the
Agent tool). Every hook records its
input; the first input per (event, variant) is saved with the sandbox paths replaced by
/home/user/... so the samples read like a normal machine. Re-run after bumping the pinned version
and review the diff: other code parses these shapes.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from claude_sandbox import SAMPLES_DIR, Sandbox, find_claude_bin, project_key
from fake_api import FakeAnthropicAPI

FAKE_HOME = "/home/user"
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "Stop",
    "SessionEnd",
    "PreCompact",
    "PostCompact",
    "SubagentStart",
)


def _variant(event: str, data: dict[str, Any]) -> str:
    if event == "SessionStart":
        return f"session_start_{data.get('source')}"
    if event == "Stop":
        return "stop_hook_active" if data.get("stop_hook_active") else "stop"
    return {
        "UserPromptSubmit": "user_prompt_submit",
        "SessionEnd": "session_end",
        "PreCompact": "pre_compact",
        "PostCompact": "post_compact",
        "SubagentStart": "subagent_start",
    }[event]


def _normalize(value: Any, real_home: str) -> Any:
    """Swap the sandbox paths (plain and as a project key) for /home/user ones."""
    text = json.dumps(value, ensure_ascii=False)
    text = text.replace(project_key(real_home), project_key(FAKE_HOME))
    text = text.replace(real_home, FAKE_HOME)
    return json.loads(text)


def main() -> int:
    claude_bin = find_claude_bin()
    if claude_bin is None:
        print("claude is not installed: run .ci/install_claude.sh first", file=sys.stderr)
        return 1
    root = Path(tempfile.mkdtemp(prefix="cc-samples-"))
    try:
        with FakeAnthropicAPI() as api:
            box = Sandbox(root=root, api=api, claude_bin=claude_bin)
            box.project = box.home / "proj"
            box.project.mkdir()
            for event in EVENTS:
                if event == "Stop":
                    box.add_recording_hook(
                        event, {"decision": "block", "reason": "Check the tests."}, once=True
                    )
                else:
                    box.add_recording_hook(event)
            steps = [
                ("Fix the failing test in parser.py", ()),
                ("/compact", ("--resume", "{sid}")),
                ("What did we change?", ("--resume", "{sid}")),
                ("Try another approach", ("--resume", "{sid}", "--fork-session")),
                ("Have a subagent review the parser", ("--resume", "{sid}")),
            ]
            sid = ""
            for prompt, args in steps:
                if not sid:  # first turn, then the turn after the Stop hook's block
                    api.add_text("I fixed the off-by-one in parser.py.")
                    api.add_text("All tests pass now.")
                if prompt == "/compact":
                    api.add_text("<summary>We fixed the failing parser test.</summary>")
                if "subagent" in prompt:
                    task = {"description": "review", "prompt": "Review parser.py."}
                    api.add_tool_use("Agent", {**task, "subagent_type": "general-purpose"})
                    api.add_text("The parser looks right.")  # the subagent's answer
                    api.add_text("The review found nothing.")
                res = box.run_claude(prompt, extra_args=[a.format(sid=sid) for a in args])
                if res.returncode != 0:
                    print(f"claude failed on {prompt!r}: {res.stderr}", file=sys.stderr)
                    return 1
                sid = sid or box.hook_inputs("SessionStart")[0]["session_id"]
            box.close()
            SAMPLES_DIR.mkdir(exist_ok=True)
            written = []
            for event in EVENTS:
                seen: set[str] = set()
                for data in box.hook_inputs(event):
                    name = _variant(event, data)
                    if name in seen:
                        continue
                    seen.add(name)
                    out = SAMPLES_DIR / f"{name}.json"
                    sample = _normalize(data, str(box.home))
                    out.write_text(json.dumps(sample, indent=2, ensure_ascii=False) + "\n")
                    written.append(out.name)
            print("wrote", ", ".join(sorted(written)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
