"""The README is part of the product: every command is documented there and has help text, and
the two commands it promises exist and are what CI runs."""

from __future__ import annotations

import re

import click
import pytest
from helpers import REPO

from memory_tool.cli import main

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

    from memory_tool.config import DEFAULTS

    template = yaml.safe_load((REPO / "templates" / "config.yaml").read_text())
    assert set(template) == set(DEFAULTS)
