"""The README is part of the product: every command is documented there and has help text, and
the two commands it promises exist and are what CI runs."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from helpers import REPO, run_hook, start_payload
from test_tiers_support import LONG_SID, hook_json, install_transcript, payload

from memory_tool.cli.main import main
from memory_tool.tiers.handoff import marker_path

README = (REPO / "README.md").read_text()


def all_commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name, cmd in sorted(group.commands.items()):
        full = f"{prefix}{name}"
        out.append((full, cmd))
        if isinstance(cmd, click.Group):
            out += all_commands(cmd, full + " ")
    return out


@pytest.mark.parametrize(("name", "cmd"), all_commands(main))
def test_every_command_has_help_and_is_in_the_readme(name: str, cmd: click.Command) -> None:
    assert (cmd.help or "").strip(), f"{name} has no help text"
    assert f"memory-tool {name}" in README, f"`memory-tool {name}` is not in the README"


def test_the_readme_gives_the_install_and_test_commands_ci_runs() -> None:
    assert "```sh\n./install.sh\n```" in README
    assert "```sh\n./test.sh\n```" in README
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^\./install\.sh$", ci, re.M) and re.search(r"^\./test\.sh$", ci, re.M)


def test_config_template_documents_every_default() -> None:
    import yaml

    from memory_tool.base.config import DEFAULTS

    template = yaml.safe_load((REPO / "templates" / "config.yaml").read_text())
    assert set(template) == set(DEFAULTS)


def test_the_readme_describes_each_hooks_output_as_the_real_hooks_print_it(
    project: Path, state: Path
) -> None:
    start = hook_json(run_hook("SessionStart", start_payload(project)).stdout)
    assert start is not None and start["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    # Claude Code's Stop format has no hookSpecificOutput, so no hookEventName: a block is a
    # decision and a reason; handoff.mode remind is a systemMessage.
    transcript = install_transcript("tiers_long", project)
    stop = payload("Stop", "tiers_long", project, transcript)
    block = hook_json(run_hook("Stop", stop).stdout)
    assert block is not None and sorted(block) == ["decision", "reason"]
    marker_path(LONG_SID).unlink()  # asked once per session: ask again, in the other mode
    (state / "config.yaml").write_text("handoff:\n  mode: remind\n")
    remind = hook_json(run_hook("Stop", stop).stdout)
    assert remind is not None and sorted(remind) == ["systemMessage"]
    reliability = " ".join(README.split("## Reliability\n")[1].split("\n## ")[0].split())
    claims = [c for c in re.split(r"(?<=\.) |\|", reliability) if "hookEventName" in c]
    assert claims and '`{"systemMessage": …}`' in claims[0]
    for claim in claims:  # wherever hookEventName is promised, Stop's format is stated too
        assert "`decision`" in claim or '"decision"' in claim, claim
