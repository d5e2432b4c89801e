"""Helpers shared by the tier tests (test_tiers*, test_scribe, test_handoff, test_inbox); no tests.

The fixture transcripts (tests/data/transcripts/tiers_*.jsonl, Claude Code 2.1 JSONL) hold
``@@PLACEHOLDERS@@`` where a secret goes; the fake secrets are assembled here at run time so the
repository itself holds nothing a secret scanner would flag.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memory_tool.base import paths

DATA = Path(__file__).resolve().parent / "data" / "transcripts"

LONG_SID = "5f1c2a9e-7b3d-4e8f-a1c2-3d4e5f6a7b8c"
SMALL_SID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
SIDS = {"tiers_long": LONG_SID, "tiers_small": SMALL_SID}

DB_PASSWORD = "hunter2-" + "s3cret-pw"
ANTHROPIC_KEY = "sk-ant-api03-" + "Xy7_-" * 18
PRIVATE_NOTE = "the staging box is 10.0.0.7"
INJECTED_NOTE = "Old injected note that must never be captured"
SECRETS = (DB_PASSWORD, ANTHROPIC_KEY, PRIVATE_NOTE, INJECTED_NOTE)


def fixture_text(name: str) -> str:
    text = (DATA / f"{name}.jsonl").read_text(encoding="utf-8")
    return text.replace("@@DBPASS@@", DB_PASSWORD).replace("@@ANTHROPIC@@", ANTHROPIC_KEY)


def install_transcript(name: str, project: Path, lines: int | None = None) -> Path:
    """The fixture (or its first ``lines`` lines) where Claude Code keeps this project's
    transcripts: <config>/projects/<key>/<session>.jsonl."""
    folder = paths.projects_dir() / paths.sanitize_path(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SIDS[name]}.jsonl"
    text = fixture_text(name)
    if lines is not None:
        text = "".join(text.splitlines(keepends=True)[:lines])
    path.write_text(text, encoding="utf-8")
    return path


def append_rest(name: str, path: Path) -> None:
    """Grow a partly installed transcript to the whole fixture, as Claude Code appends."""
    full = fixture_text(name).splitlines(keepends=True)
    have = len(path.read_text(encoding="utf-8").splitlines())
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(full[have:]))


def fixture_lines(name: str) -> int:
    return len(fixture_text(name).splitlines())


def payload(event: str, name: str, project: Path, transcript: Path, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "session_id": SIDS[name],
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": event,
    }
    if event == "Stop":
        data["stop_hook_active"] = False
    data.update(extra)
    return data


def hook_json(stdout: bytes) -> dict[str, Any] | None:
    text = stdout.decode().strip()
    return json.loads(text) if text else None


def state_files(state_root: Path) -> list[Path]:
    """Every file memory-tool wrote under the state root (for privacy checks)."""
    return [p for p in state_root.rglob("*") if p.is_file() and p.suffix in (".md", ".json")]
