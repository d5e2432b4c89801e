"""Codex CLI and Gemini CLI: their hook payloads and answers at the boundary, their transcripts,
and installing into their config (merge, trust block, byte-for-byte uninstall, bad config).

Payloads and transcripts are the ones the real binaries produced (tests/data/agents, recorded
with Codex 0.171.0 and Gemini CLI 0.61.0 against the stand-ins in tests/e2e/fake_agents.py);
the end-to-end runs with the binaries are in tests/e2e/test_agents_e2e.py.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memory_tool.base.errors import SettingsError
from memory_tool.cli.main import main
from memory_tool.runtime import agent_install, agents
from memory_tool.store import transcript
from tests.helpers import REPO, log_text, write_memory

DATA = REPO / "tests" / "data" / "agents"


def _payloads(agent: str) -> dict[str, dict[str, object]]:
    lines = (DATA / f"{agent}_hooks.jsonl").read_text().splitlines()
    return {p["hook_event_name"]: p for p in map(json.loads, filter(None, lines))}


def _with_cwd(payload: dict[str, object], cwd: Path) -> dict[str, object]:
    return {**payload, "cwd": str(cwd), "transcript_path": "/nonexistent.jsonl"}


def _rule(project: Path) -> None:
    from memory_tool.base import paths

    write_memory(
        paths.project_memory_dir(project),
        "feedback_httpx.md",
        "Always use httpx instead of requests for HTTP calls.",
        type_="feedback",
    )


def _agent_hook(agent: str, event: str, payload: object | bytes) -> tuple[int, str]:
    import subprocess

    from memory_tool.base.resources import hook_script

    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    proc = subprocess.run(
        [sys.executable, str(hook_script()), "--agent", agent, event],
        input=data,
        capture_output=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert proc.stderr == b""
    return proc.returncode, proc.stdout.decode()


# ---------------------------------------------------------------------------------------------
# Hooks: the same memory, each agent's format
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("agent", "start"), [("codex", "SessionStart"), ("gemini", "SessionStart")]
)
def test_session_start_brief_in_the_agents_format(agent: str, start: str, project: Path) -> None:
    _rule(project)
    code, out = _agent_hook(agent, start, _with_cwd(_payloads(agent)[start], project))
    assert code == 0
    answer = json.loads(out)
    # Codex fails a hook whose JSON has a field it does not know: only these keys.
    assert set(answer) == {"hookSpecificOutput"}
    assert set(answer["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert answer["hookSpecificOutput"]["hookEventName"] == start
    assert (
        "Always use httpx instead of requests" in answer["hookSpecificOutput"]["additionalContext"]
    )


def test_gemini_before_agent_is_the_prompt_event(project: Path) -> None:
    """BeforeAgent is Gemini's UserPromptSubmit: room recall answers it, named BeforeAgent."""
    from memory_tool.base import paths
    from memory_tool.store.index import open_index
    from memory_tool.store.palace import init_palace

    init_palace()
    write_memory(
        paths.state_root() / "rooms" / "authentication",
        "jwt.md",
        "Login uses RS256 JWTs with the advisory key rotation.",
    )
    with open_index() as idx:
        idx.refresh(project)
    payload = {**_payloads("gemini")["BeforeAgent"], "prompt": "the login token is broken"}
    code, out = _agent_hook("gemini", "BeforeAgent", _with_cwd(payload, project))
    assert code == 0
    answer = json.loads(out)
    assert answer["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert "RS256" in answer["hookSpecificOutput"]["additionalContext"]


def test_gemini_prompt_without_our_own_hook_context() -> None:
    """`gemini -p` prepends SessionStart's context to the prompt: it is not the person's."""
    payload = {
        "prompt": "<hook_context>&lt;memory-context&gt;\nold facts\n&lt;/memory-context&gt;\n"
        "</hook_context>\n\nhow do we store events?",
        "prompt_response": "as parquet",
    }
    out = agents.payload_for("gemini", payload)
    assert out["prompt"] == "how do we store events?"
    assert out["last_assistant_message"] == "as parquet"


def test_stop_block_in_each_agents_form() -> None:
    block = {"decision": "block", "reason": "write the handoff"}
    assert agents.answer_for("codex", "Stop", block) == block
    assert agents.answer_for("gemini", "AfterAgent", block) == {
        "decision": "deny",
        "reason": "write the handoff",
    }
    # A reminder shown to the person: Gemini has systemMessage, Codex would fail on it.
    assert agents.answer_for("codex", "Stop", {"systemMessage": "x"}) is None
    assert agents.answer_for("gemini", "AfterAgent", {"systemMessage": "x"}) == {
        "systemMessage": "x"
    }


def test_events_an_agent_lacks_are_not_answered() -> None:
    assert agents.our_event("gemini", "BeforeTool") == ""
    assert agents.our_event("gemini", "AfterAgent") == "Stop"
    assert agents.our_event("codex", "UserPromptSubmit") == "UserPromptSubmit"


@pytest.mark.parametrize("agent", ["codex", "gemini"])
@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1,2]", b"\xff\xfe garbage", b'{"cwd": 5}'])
def test_garbage_stdin_fails_open(agent: str, stdin: bytes) -> None:
    code, out = _agent_hook(agent, "SessionStart", stdin)
    assert code == 0
    assert out == "" or "hookSpecificOutput" in json.loads(out)


def test_unknown_agent_event_is_ignored(project: Path) -> None:
    code, out = _agent_hook("gemini", "BeforeModel", {"cwd": str(project)})
    assert (code, out) == (0, "")
    assert log_text() == ""


# ---------------------------------------------------------------------------------------------
# Transcripts
# ---------------------------------------------------------------------------------------------


def test_codex_rollout_reads_as_events() -> None:
    events = transcript.parse_lines((DATA / "codex_rollout.jsonl").read_bytes())
    assert transcript.person_text(events) == ["add an http client"]
    assert transcript.assistant_text(events) == [
        "[DECISION] We store events as parquet files partitioned by day (MARKER-PARQUET)."
    ]
    # Codex's own instructions and our context (developer messages) are not the person.
    assert not any("memory-context" in e.text for e in events if e.kind == "user")


def test_codex_tool_calls_and_patches() -> None:
    lines = [
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell",
         "arguments": json.dumps({"command": ["bash", "-lc", "pytest -q"]}), "call_id": "c1"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
         "output": "1 failed"}},
        {"type": "response_item", "payload": {"type": "custom_tool_call", "name": "apply_patch",
         "call_id": "c2", "input": "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n"
         "*** Add File: src/new.py\n+x\n*** End Patch"}},
    ]  # fmt: skip
    events = transcript.parse_lines("\n".join(map(json.dumps, lines)).encode() + b"\n")
    assert transcript.commands_run(events) == ["bash -lc pytest -q"]
    assert transcript.files_edited(events) == ["src/app.py", "src/new.py"]
    assert [e.text for e in events if e.kind == "tool_result"] == ["1 failed"]


def test_gemini_chat_log_reads_as_events() -> None:
    events = transcript.parse_lines((DATA / "gemini_chat.jsonl").read_bytes())
    # The first user line holds our SessionStart context, escaped inside <hook_context>.
    assert transcript.person_text(events) == ["how do we store events?"]
    assert transcript.assistant_text(events) == ["ok"]


def test_gemini_tool_calls() -> None:
    line = {
        "type": "gemini",
        "content": "running it",
        "toolCalls": [
            {"id": "t1", "name": "run_shell_command", "args": {"command": "make test"},
             "status": "error", "result": [{"text": "Exit code 2"}]},
            {"id": "t2", "name": "write_file", "args": {"file_path": "a.py", "content": "x"},
             "status": "success"},
        ],
    }  # fmt: skip
    events = transcript.parse_line(json.dumps(line))
    assert transcript.commands_run(events) == ["make test"]
    assert transcript.files_edited(events) == ["a.py"]
    assert [(e.text, e.is_error) for e in events if e.kind == "tool_result"] == [
        ("Exit code 2", True)
    ]


# ---------------------------------------------------------------------------------------------
# Install and uninstall
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def configs(sandbox: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    codex = sandbox / ".codex"
    gemini = sandbox / ".gemini"
    codex.mkdir()
    gemini.mkdir()
    # No codex binary: trust cannot be asked, and install says so (tests/e2e asks the real one).
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("MEMORY_TOOL_CODEX_BIN", raising=False)
    return codex, gemini


def test_install_merges_and_uninstall_restores_byte_for_byte(configs: tuple[Path, Path]) -> None:
    codex, gemini = configs
    hooks = codex / "hooks.json"
    hooks.write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}')
    toml = codex / "config.toml"
    toml.write_text('model = "o4"\n\n[tui]\ntheme = "dark"\n')
    settings = gemini / "settings.json"
    settings.write_text('{\n  "theme": "GitHub",\n  "mcpServers": {"other": {"command": "x"}}\n}')
    for f in (hooks, toml, settings):
        f.chmod(0o640)
    originals = {f: f.read_bytes() for f in (hooks, toml, settings)}

    result = CliRunner().invoke(main, ["install", "--agent", "codex", "--agent", "gemini"])
    assert result.exit_code == 0, result.output
    assert "Codex skips hooks it has not trusted" in result.output
    data = json.loads(hooks.read_text())
    assert data["hooks"]["Stop"][0]["hooks"][0]["command"] == "mine"  # theirs first, kept
    assert "--agent codex Stop" in data["hooks"]["Stop"][1]["hooks"][0]["command"]
    assert set(data["hooks"]) == set(agent_install.AGENT_HOOKS["codex"])
    import tomllib

    parsed = tomllib.loads(toml.read_text())
    assert parsed["tui"] == {"theme": "dark"}
    assert parsed["mcp_servers"]["memory-tool"]["args"] == ["-m", "memory_tool.mcp"]
    gem = json.loads(settings.read_text())
    assert gem["theme"] == "GitHub" and "other" in gem["mcpServers"]
    assert "--agent gemini BeforeAgent" in gem["hooks"]["BeforeAgent"][0]["hooks"][0]["command"]
    for f in (hooks, toml, settings):
        assert stat.S_IMODE(f.stat().st_mode) == 0o640

    again = CliRunner().invoke(main, ["install", "--agent", "all"])
    assert again.exit_code == 0, again.output
    assert "config.toml: already up to date (codex)" in again.output
    assert "settings.json: already up to date (gemini)" in again.output

    result = CliRunner().invoke(main, ["uninstall", "--agent", "codex", "--agent", "gemini"])
    assert result.exit_code == 0, result.output
    for f, before in originals.items():
        assert f.read_bytes() == before
        assert stat.S_IMODE(f.stat().st_mode) == 0o640
        assert not f.with_name(f.name + ".memory-tool.bak").exists()


def test_uninstall_after_the_user_changed_the_file(configs: tuple[Path, Path]) -> None:
    codex, gemini = configs
    agent_install.install("codex", mcp=True)
    agent_install.install("gemini", mcp=True)
    toml = codex / "config.toml"
    toml.write_text(toml.read_text() + '\n[profiles.fast]\nmodel = "o4-mini"\n')
    settings = gemini / "settings.json"
    data = json.loads(settings.read_text())
    data["theme"] = "Dracula"
    settings.write_text(json.dumps(data))
    agent_install.uninstall("codex")
    agent_install.uninstall("gemini")
    assert "memory-tool" not in toml.read_text() and "o4-mini" in toml.read_text()
    assert json.loads(settings.read_text()) == {"theme": "Dracula"}
    assert not (codex / "hooks.json").exists()  # we created it and nobody changed it


@pytest.mark.parametrize(
    ("agent", "name", "text", "error"),
    [
        ("codex", "config.toml", "model = [unclosed\n", "not valid TOML"),
        ("codex", "hooks.json", "{not json", "not valid JSON"),
        ("gemini", "settings.json", "{'single': 'quotes'}", "not valid JSON"),
    ],
)
def test_broken_config_is_refused_and_left_alone(
    configs: tuple[Path, Path], agent: str, name: str, text: str, error: str
) -> None:
    folder = configs[0] if agent == "codex" else configs[1]
    path = folder / name
    path.write_text(text)
    result = CliRunner().invoke(main, ["install", "--agent", agent])
    assert result.exit_code != 0
    assert error in result.output and "nothing was changed" in result.output
    assert path.read_text() == text
    assert [p.name for p in folder.iterdir()] == [name]


def test_an_mcp_server_of_the_same_name_not_ours_is_refused(configs: tuple[Path, Path]) -> None:
    settings = configs[1] / "settings.json"
    settings.write_text('{"mcpServers": {"memory-tool": {"command": "someone-else"}}}')
    with pytest.raises(SettingsError, match="not ours"):
        agent_install.install("gemini", mcp=True)
    assert "someone-else" in settings.read_text()


def test_codex_trust_block_carries_codexs_hashes(
    configs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With Codex's hashes (asked of `codex app-server`; stubbed here, asked for real in
    tests/e2e), the trust tables land in our block and parse as Codex reads them."""
    import tomllib

    monkeypatch.setattr(agent_install, "find_binary", lambda agent: "/usr/bin/true")
    key = f"{configs[0]}/hooks.json:session_start:0:0"
    monkeypatch.setattr(agent_install, "codex_hook_hashes", lambda binary, cwd: {key: "sha256:abc"})
    report = agent_install.install("codex", mcp=False)
    assert any("trusted memory-tool's 1 hooks" in n for n in report.notes)
    parsed = tomllib.loads((configs[0] / "config.toml").read_text())
    assert parsed["hooks"]["state"][key] == {"trusted_hash": "sha256:abc"}


# ---------------------------------------------------------------------------------------------
# AGENTS.md / GEMINI.md for agents without hooks
# ---------------------------------------------------------------------------------------------


def test_export_agents_md_touches_only_its_block(project: Path) -> None:
    from memory_tool.base import paths
    from memory_tool.tiers import agents_md

    folder = paths.project_memory_dir(project)
    write_memory(folder, "feedback_push.md", "Never force-push to main.", type_="feedback")
    path = project / "AGENTS.md"
    head, tail = "# Shop\n\nHand-written rules.\n", "\n## Later section\nkept as is\n"
    path.write_text(head)
    runner = CliRunner()
    result = runner.invoke(main, ["export", "--agents-md", "--cwd", str(project)])
    assert result.exit_code == 0, result.output
    text = path.read_text()
    assert text.startswith(head) and "- Never force-push to main." in text
    assert "[f-" not in text  # ids mean nothing to an agent without memory-tool
    path.write_text(text + tail)  # the person adds text after our block

    write_memory(folder, "project_db.md", "Migrations use alembic.", type_="project")
    from memory_tool.store.index import open_index

    with open_index() as idx:
        idx.refresh(project)
    from memory_tool.tiers.scribe import _refresh_instructions

    _refresh_instructions(str(project))  # what the Scribe does after each session
    text = path.read_text()
    assert text.startswith(head) and text.endswith(tail)
    assert "- Migrations use alembic." in text
    assert text.count(agents_md.BEGIN) == 1 and text.count(agents_md.END) == 1


def test_the_scribe_never_creates_an_instructions_file(project: Path) -> None:
    from memory_tool.tiers.scribe import _refresh_instructions

    (project / "GEMINI.md").write_text("my own notes\n")
    _refresh_instructions(str(project))
    assert not (project / "AGENTS.md").exists()
    assert (project / "GEMINI.md").read_text() == "my own notes\n"


def test_export_needs_a_file_or_agents_md() -> None:
    result = CliRunner().invoke(main, ["export"])
    assert result.exit_code == 2 and "--agents-md" in result.output
