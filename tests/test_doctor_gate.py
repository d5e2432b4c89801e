"""`memory-tool doctor` as a CI gate: exit 1 only for what a person should fix. What the tool
wrote itself (cold summaries) is not compared as hand-written memory, and thousands of findings
of one kind are summarised in a line, not listed one per line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from click.testing import CliRunner, Result
from helpers import write_memory

from memory_tool.base import paths
from memory_tool.cli.hygiene import EXAMPLES_SHOWN
from memory_tool.cli.main import main


def transcript(project: Path, session: str, prompt: str, answer: str) -> Path:
    folder = paths.projects_dir() / paths.project_key(project)
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for n, (kind, message) in enumerate(
        [
            ("user", {"role": "user", "content": prompt}),
            # An edit: a session with no tool run and nothing decided gets no cold summary.
            (
                "assistant",
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"t{session[:4]}",
                            "name": "Edit",
                            "input": {"file_path": str(project / "tests" / "test_checkout.py")},
                        },
                        {"type": "text", "text": answer},
                    ],
                },
            ),  # fmt: skip
        ]
    ):
        lines.append(json.dumps({"type": kind, "uuid": f"{session}-{n}", "sessionId": session,
                                 "cwd": str(project), "timestamp": "2026-11-28T10:00:00Z",
                                 "message": message}))  # fmt: skip
    path = folder / f"{session}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def doctor(project: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["doctor", "--cwd", str(project), *args])


def test_similar_sessions_summaries_are_no_duplicates_or_contradictions(project: Path) -> None:
    # A few short sessions with similar prompts: the Scribe writes a cold summary of each.
    for n, retries in enumerate((3, 3, 5)):
        path = transcript(
            project,
            f"0000000{n}-aaaa-bbbb-cccc-dddddddddddd",
            f"Fix the flaky checkout test in tests/test_checkout.py: retry it {retries} times.",
            f"Done: tests/test_checkout.py retries {retries} times now.",
        )
        scribed = CliRunner().invoke(main, ["scribe", str(path)])
        assert scribed.exit_code == 0, scribed.output
    assert len(list((paths.state_root() / "cold").rglob("*.md"))) == 3
    result = doctor(project, "--json")
    report = json.loads(result.output)
    generated = [f for f in report["findings"] if f.get("id", "").startswith("c-")]
    assert not [f for f in generated if f["level"] == "problem"], generated
    assert not [f for f in report["findings"] if f["check"] in ("duplicate", "contradiction")]
    assert result.exit_code == 0, result.output


def test_hand_written_duplicates_still_fail_the_gate(project: Path) -> None:
    d = paths.project_memory_dir(project)
    write_memory(d, "feedback_a.md", "Run the linters before every push to main.",
                 type_="feedback")  # fmt: skip
    write_memory(d, "feedback_b.md", "Run the linters before every push to main!",
                 type_="feedback")  # fmt: skip
    (d / "MEMORY.md").write_text("- [a](feedback_a.md) — a\n- [b](feedback_b.md) — b\n")
    result = doctor(project)
    assert result.exit_code == 1 and "merge candidates" in result.output


def test_a_huge_room_is_summarised_and_passes_the_gate(project: Path) -> None:
    room = paths.state_root() / "rooms" / "logs"
    room.mkdir(parents=True)
    for n in range(2_000):  # hand-written notes; MEMORY.md (from `add`) lists only a few
        words = " ".join(hashlib.sha1(f"{n}{k}".encode()).hexdigest()[:8] for k in range(4))
        (room / f"note-{n:04}.md").write_text(f"Export run marker {words}.\n")
    (room / "MEMORY.md").write_text("- [n0](note-0000.md) — first\n")
    result = doctor(project)
    lines = result.output.splitlines()
    assert len(lines) < 60, f"{len(lines)} lines"
    more = f"  … and {1_999 - EXAMPLES_SHOWN:,} more like these"
    assert any(line.startswith(more) for line in lines), result.output[-2000:]
    # Claude Code never reads a palace MEMORY.md, and inferred dates are notes: nothing here
    # is a problem a person must fix before a commit.
    assert result.exit_code == 0, result.output[-2000:]
    assert "repairs" not in result.output  # no offer to "repair 2,000 problems"
    data = json.loads(doctor(project, "--json").output)
    assert data["ok"] and data["problems"] == 0
    assert len([f for f in data["findings"] if f["check"] == "index_unlisted"]) == 1_999
