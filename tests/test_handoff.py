"""Handoff enforcement at Stop, through the real hook process: block once, never while
stop_hook_active, never in a subagent, never when a handoff was written; modes off/remind/block."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner
from helpers import as_event, run_hook
from test_tiers_support import LONG_SID, hook_json, install_transcript, payload

from memory_tool.cli.main import main
from memory_tool.tiers import digest
from memory_tool.tiers.handoff import marker_path
from memory_tool.tiers.hot import hot_path


def _stop(project: Path, transcript: Path, name: str = "tiers_long", **extra: object) -> object:
    out = run_hook("Stop", payload("Stop", name, project, transcript, **extra))
    assert out.returncode == 0, out.stderr
    return hook_json(out.stdout)


def _config(state: Path, text: str) -> None:
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text(text)


def test_substantial_session_is_blocked_once_with_what_to_write_and_where(project: Path) -> None:
    transcript = install_transcript("tiers_long", project)
    result = _stop(project, transcript)
    assert isinstance(result, dict)
    assert result["decision"] == "block"
    reason = result["reason"]
    assert f"{project}/thoughts/HANDOFF.md" in reason
    assert "6 files edited, 25 tool calls" in reason
    for section in ("## Goal", "## Done", "## Decisions", "## Open items and next steps"):
        assert section in reason  # the template itself
    assert f"Session {LONG_SID[:8]}" in reason
    assert len(reason) < 9000
    # Claude continues, Stop fires again with stop_hook_active: never block then.
    assert _stop(project, transcript, stop_hook_active=True) is None
    # And never a second time in this session, even if no handoff was written.
    assert _stop(project, transcript) is None


def test_stop_hook_active_does_not_use_up_the_one_block(project: Path) -> None:
    transcript = install_transcript("tiers_long", project)
    assert _stop(project, transcript, stop_hook_active=True) is None
    assert not marker_path(LONG_SID).exists()
    result = _stop(project, transcript)
    assert isinstance(result, dict) and result["decision"] == "block"


def test_never_inside_a_subagent(project: Path) -> None:
    transcript = install_transcript("tiers_long", project)
    assert _stop(project, transcript, agent_id="agent-1", agent_type="general-purpose") is None
    assert not marker_path(LONG_SID).exists()


def test_small_session_is_left_alone(project: Path) -> None:
    transcript = install_transcript("tiers_small", project)
    assert _stop(project, transcript, "tiers_small") is None


def test_thresholds_come_from_the_config(project: Path, state: Path) -> None:
    _config(state, "handoff:\n  min_file_edits: 2\n  min_tool_calls: 100\n")
    transcript = install_transcript("tiers_small", project)  # 2 edits, 3 tool calls
    result = _stop(project, transcript, "tiers_small")
    assert isinstance(result, dict) and result["decision"] == "block"


def test_a_handoff_written_during_the_session_is_enough(project: Path) -> None:
    transcript = install_transcript("tiers_long", project)
    handoff = project / "thoughts" / "HANDOFF.md"
    handoff.parent.mkdir()
    handoff.write_text("# Handoff\n\n## Goal\nIdempotency keys.\n")
    assert _stop(project, transcript) is None


def test_a_handoff_from_before_the_session_does_not_count(project: Path) -> None:
    transcript = install_transcript("tiers_long", project)
    handoff = project / "thoughts" / "HANDOFF.md"
    handoff.parent.mkdir()
    handoff.write_text("# Handoff from last week\n")
    week_ago = 1795910400 - 7 * 86400  # 2026-11-22, before the session's first event
    os.utime(handoff, (week_ago, week_ago))
    result = _stop(project, transcript)
    assert isinstance(result, dict) and result["decision"] == "block"


def test_the_hot_files_handoff_section_counts(project: Path) -> None:
    transcript = install_transcript("tiers_long", project)
    digest.update_session(as_event(payload("Stop", "tiers_long", project, transcript)))
    hot = hot_path(LONG_SID)
    hot.write_text(hot.read_text() + "Goal: idempotency keys. Next: refunds.\n")
    assert _stop(project, transcript) is None
    # The hooks keep what was written there when they rewrite the hot file.
    assert "Next: refunds." in hot.read_text()


def test_mode_off(project: Path, state: Path) -> None:
    _config(state, "handoff:\n  mode: off\n")
    transcript = install_transcript("tiers_long", project)
    assert _stop(project, transcript) is None


def test_mode_remind_only_tells_the_person(project: Path, state: Path) -> None:
    _config(state, "handoff:\n  mode: remind\n")
    transcript = install_transcript("tiers_long", project)
    result = _stop(project, transcript)
    assert isinstance(result, dict)
    assert set(result) == {"systemMessage"}
    assert (
        "HANDOFF.md" in result["systemMessage"] and "memory-tool handoff" in result["systemMessage"]
    )
    assert _stop(project, transcript) is None  # once per session


def test_mode_block_is_the_default(project: Path, state: Path) -> None:
    _config(state, "handoff:\n  mode: block\n")
    transcript = install_transcript("tiers_long", project)
    result = _stop(project, transcript)
    assert isinstance(result, dict) and result["decision"] == "block"


def test_handoff_command_prints_the_template_and_where(project: Path) -> None:
    result = CliRunner().invoke(main, ["handoff", "--cwd", str(project)])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"Write the handoff to {project}/thoughts/HANDOFF.md")
    # stdout is the template alone: `memory-tool handoff > thoughts/HANDOFF.md` works.
    assert result.stdout.startswith("# Handoff: 2026-11-29")
    assert "## Open items and next steps" in result.stdout


def test_brief_names_the_handoff_command(project: Path) -> None:
    from memory_tool.recall.wake import HANDOFF_RULE

    assert "memory-tool handoff" in HANDOFF_RULE
    result = CliRunner().invoke(main, ["--help"])
    assert " handoff " in result.output
