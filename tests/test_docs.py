"""The docs are part of the product: every command has help text and is documented in
docs/commands.md (generated, so it cannot drift), the README stays a five-minute read that names
the main commands and the two commands CI runs, every link between the docs resolves, and what
the docs promise about the hooks' output is what the hooks print."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import click
import pytest
from helpers import REPO, run_hook, start_payload
from test_tiers_support import LONG_SID, hook_json, install_transcript, payload

from memory_tool.cli.main import main
from memory_tool.tiers.handoff import marker_path

README = (REPO / "README.md").read_text()
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]

# The README is read top to bottom in five minutes; everything else lives in docs/.
README_MAX_BYTES = 15_360
DOC_PAGES = {
    "README.md",
    "install.md",
    "recall.md",
    "tiers.md",
    "memory-files.md",
    "hygiene.md",
    "configuration.md",
    "hook-server.md",
    "sync.md",
    "reliability.md",
    "commands.md",
    "mcp.md",
    "benchmarks.md",
    "architecture.md",
    "ui.md",
}
# What a newcomer runs first: the README names these; docs/commands.md has all of them.
MAIN_COMMANDS = [
    "wake", "list", "show", "search", "peek", "get", "add", "classify", "doctor", "inbox",
    "index", "install", "uninstall", "ui",
]  # fmt: skip


def all_commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name, cmd in sorted(group.commands.items()):
        full = f"{prefix}{name}"
        out.append((full, cmd))
        if isinstance(cmd, click.Group):
            out += all_commands(cmd, full + " ")
    return out


def load_generator() -> ModuleType:
    path = REPO / "scripts" / "gen_commands_doc.py"
    spec = importlib.util.spec_from_file_location("gen_commands_doc", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_commands_doc_is_what_the_script_generates_now() -> None:
    generated = load_generator().render()
    assert (DOCS / "commands.md").read_text() == generated, (
        "docs/commands.md is out of date: run .venv/bin/python scripts/gen_commands_doc.py"
    )


def test_the_readmes_example_brief_is_what_wake_gives_on_the_demo_palace() -> None:
    import subprocess
    import sys

    script = REPO / "scripts" / "readme_brief.py"
    generated = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert generated.startswith("```text\n<memory-context>\n")
    assert generated in README, (
        "README.md's example brief is out of date: run .venv/bin/python scripts/readme_brief.py "
        "--write"
    )


@pytest.mark.parametrize(("name", "cmd"), all_commands(main))
def test_every_command_has_help_and_is_in_the_commands_doc(name: str, cmd: click.Command) -> None:
    assert (cmd.help or "").strip(), f"{name} has no help text"
    doc = (DOCS / "commands.md").read_text()
    section = doc.split(f"\n## memory-tool {name}\n", 1)
    assert len(section) == 2, f"`memory-tool {name}` has no section in docs/commands.md"
    first_line = " ".join((cmd.help or "").split("\n\n")[0].split())
    assert first_line in " ".join(section[1].split("\n## ")[0].split())


@pytest.mark.parametrize("name", MAIN_COMMANDS)
def test_the_readme_names_the_main_commands(name: str) -> None:
    assert name in main.commands, f"{name} is no command any more"
    assert f"memory-tool {name}" in README, f"`memory-tool {name}` is not in the README"


def test_the_readme_gives_the_install_and_test_commands_ci_runs() -> None:
    assert "```sh\n./install.sh\n```" in README
    assert "```sh\n./test.sh\n```" in README
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^\./install\.sh$", ci, re.M) and re.search(r"^\./test\.sh$", ci, re.M)


def test_config_template_documents_every_default() -> None:
    import yaml

    from memory_tool.base.config import DEFAULTS

    template = yaml.safe_load((REPO / "memory_tool" / "templates" / "config.yaml").read_text())
    assert set(template) == set(DEFAULTS)


def test_the_readme_is_a_five_minute_read() -> None:
    size = len(README.encode("utf-8"))
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes: move detail into docs/"


def test_docs_has_a_page_for_each_subject() -> None:
    missing = DOC_PAGES - {p.name for p in DOCS.glob("*.md")}
    assert not missing, f"docs/ lacks {sorted(missing)}"


def without_code(text: str) -> str:
    """The text outside fenced blocks, with inline code blanked (a `## x` in an example brief is
    no heading, a `[x](y)` in code no link)."""
    text = re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "``", text)


def anchors(text: str) -> set[str]:
    """The heading anchors GitHub makes: lower case, punctuation dropped, spaces to hyphens,
    a repeated heading numbered -1, -2, ..."""
    seen: dict[str, int] = {}
    out = set()
    for title in re.findall(r"^#{1,6} +(.+?)[ #]*$", without_code(text), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return out


def relative_links(text: str) -> list[str]:
    targets = re.findall(r"\]\(([^)\s]+)\)", without_code(text))
    return [t for t in targets if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    text = page.read_text()
    for link in relative_links(text):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        assert target.exists(), f"{page.name}: {link} points at nothing"
        if anchor:
            assert target.suffix == ".md", f"{page.name}: {link}: an anchor outside Markdown"
            assert anchor in anchors(target.read_text()), f"{page.name}: {link}: no such heading"


def test_the_docs_describe_each_hooks_output_as_the_real_hooks_print_it(
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

    def claims(text: str) -> list[str]:
        return [c for c in re.split(r"(?<=\.) |\|", " ".join(text.split())) if "hookEventName" in c]

    reliability = claims((DOCS / "reliability.md").read_text())
    assert reliability and '`{"systemMessage": …}`' in reliability[0]
    for page in PAGES:  # wherever hookEventName is promised, Stop's format is stated too
        for claim in claims(page.read_text()):
            assert "`decision`" in claim or '"decision"' in claim, f"{page.name}: {claim}"


def test_the_architecture_page_names_every_module_under_its_layer() -> None:
    """docs/architecture.md: the layer map of tests/test_architecture.py, one line per module."""
    from test_architecture import LAYERS

    page = (DOCS / "architecture.md").read_text()
    sections = {s.split("/", 1)[0]: s for s in page.split("\n### ")[1:]}
    layers = [name for names in LAYERS for name in names]
    assert list(sections) == layers
    for layer in layers:
        for module in sorted((REPO / "memory_tool" / layer).glob("*.py")):
            if module.name != "__init__.py":
                assert f"| `{module.name}` |" in sections[layer], f"{layer}/{module.name}"
    diagram = page.split("```")[1]
    assert [line.split("/")[0] for line in diagram.strip().splitlines()] == layers[::-1]
