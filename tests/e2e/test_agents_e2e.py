"""One memory for every coding agent, with the real binaries: Claude Code, Codex CLI and Gemini
CLI run offline in one sandbox HOME against stand-ins of their own provider's API on 127.0.0.1
(fake_api.py, fake_agents.py), on the same repository, with memory-tool installed for all three
by `memory-tool install --agent all`.

What reached each model is read from the requests the stand-ins recorded.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_sandbox import (
    MEMORY_TOOL_ENV,
    Sandbox,
    hooks_log,
    memory_tool,
    run_claude_with_memory,
    state_dir,
)
from fake_agents import FakeGemini, FakeOpenAI

pytestmark = [pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]
AGENT_BIN = REPO / ".cache" / "agents" / "node_modules" / ".bin"


def _bin(name: str) -> Path:
    path = AGENT_BIN / name
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} missing: .ci/install_agents.sh (run by ./test.sh) installs it")
        pytest.skip(f"{name} is not installed: run .ci/install_agents.sh (needs node + npm)")
    return path


@pytest.fixture
def agents(sandbox: Sandbox) -> Iterator[tuple[FakeOpenAI, FakeGemini]]:
    codex, gemini = _bin("codex"), _bin("gemini")
    with FakeOpenAI() as openai, FakeGemini() as google:
        (sandbox.home / ".codex").mkdir()
        (sandbox.home / ".codex" / "config.toml").write_text(
            'model = "gpt-5"\nmodel_provider = "standin"\n\n[model_providers.standin]\n'
            f'name = "standin"\nbase_url = "{openai.url}/v1"\nwire_api = "responses"\n'
            'env_key = "OPENAI_API_KEY"\n'
        )
        (sandbox.home / ".gemini").mkdir()
        (sandbox.home / ".gemini" / "settings.json").write_text(
            json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}})
        )
        res = memory_tool(
            sandbox, "install", "--agent", "all", env={"MEMORY_TOOL_CODEX_BIN": str(codex)}
        )
        # Codex runs only hooks it trusts: install asked it for their hashes.
        assert "trusted memory-tool's 6 hooks in Codex" in res.stdout, res.stdout
        sandbox.codex_bin = codex  # type: ignore[attr-defined]
        sandbox.gemini_bin = gemini  # type: ignore[attr-defined]
        yield openai, google


def _env(box: Sandbox, **extra: str) -> dict[str, str]:
    return box.env({**MEMORY_TOOL_ENV, **extra})


def run_codex(box: Sandbox, api: FakeOpenAI, prompt: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(box.codex_bin), "exec", "--skip-git-repo-check", prompt],  # type: ignore[attr-defined]
        cwd=box.project,
        env=_env(box, OPENAI_API_KEY="test"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_gemini(
    box: Sandbox, api: FakeGemini, prompt: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(box.gemini_bin), "-p", prompt],  # type: ignore[attr-defined]
        cwd=cwd or box.project,
        env=_env(
            box,
            GEMINI_API_KEY="test",
            GOOGLE_GEMINI_BASE_URL=api.url,
            GEMINI_CLI_TRUST_WORKSPACE="true",
        ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _known(box: Sandbox, marker: str) -> bool:
    """The fact is memory now: a live memory or, in inbox mode, an inbox candidate."""
    found = memory_tool(box, "search", marker).stdout + memory_tool(box, "inbox").stdout
    return marker.lower() in found.lower() or _in_memory_files(box, marker)


def _in_memory_files(box: Sandbox, marker: str) -> bool:
    roots = [state_dir(box), box.config_dir / "projects"]
    return any(
        marker in p.read_text(errors="replace")
        for root in roots
        for p in root.rglob("*.md")
        if "cold" not in p.parts and "hot" not in p.parts
    )


def test_a_rule_reaches_codex_and_gemini_and_their_decisions_are_captured(
    sandbox: Sandbox, agents: tuple[FakeOpenAI, FakeGemini]
) -> None:
    openai, google = agents
    memory_tool(
        sandbox, "add", "--type", "feedback", "Always use httpx, never requests (RULE-HTTPX)."
    )

    openai.add_text("[DECISION] Events are stored as parquet partitioned by day (DEC-PARQUET).")
    res = run_codex(sandbox, openai, "add an http client to the fraud check")
    assert res.returncode == 0, res.stderr
    assert any("RULE-HTTPX" in t for t in openai.texts())

    google.add_text("[DECISION] Retries use exponential backoff capped at 30 s (DEC-BACKOFF).")
    res = run_gemini(sandbox, google, "how should the client retry?")
    assert res.returncode == 0, res.stderr
    texts = google.texts()
    assert texts and "RULE-HTTPX" in texts[0]
    # Each agent's transcript went through the Scribe: both decisions are memory now.
    assert _known(sandbox, "DEC-PARQUET")
    assert _known(sandbox, "DEC-BACKOFF")
    # Our own context, handed back by Gemini inside its prompt, was not captured as the user's.
    assert not _in_memory_files(sandbox, "Recap of the rules")
    assert "Traceback" not in hooks_log(sandbox)


def test_the_same_repository_is_one_project_for_every_agent(
    sandbox: Sandbox, agents: tuple[FakeOpenAI, FakeGemini]
) -> None:
    """A memory saved from a Claude Code session's folder reaches Codex and Gemini there, and
    nothing leaks into another repository."""
    openai, google = agents
    sandbox.api.add_text("ok")
    res = run_claude_with_memory(sandbox, "hello")
    assert res.returncode == 0, res.stderr
    memory_tool(sandbox, "add", "--type", "project", "Deploys go through Argo CD (FACT-ARGO).")
    other = sandbox.root / "other-repo"
    (other / ".git").mkdir(parents=True)

    run_codex(sandbox, openai, "how do we deploy?")
    run_gemini(sandbox, google, "how do we deploy?")
    assert any("FACT-ARGO" in t for t in openai.texts())
    assert any("FACT-ARGO" in t for t in google.texts())

    before = len(google.texts())
    assert run_gemini(sandbox, google, "how do we deploy?", cwd=other).returncode == 0
    assert not any("FACT-ARGO" in t for t in google.texts()[before:])


def test_uninstall_leaves_their_configs_as_they_were(
    sandbox: Sandbox, agents: tuple[FakeOpenAI, FakeGemini]
) -> None:
    config = sandbox.home / ".codex" / "config.toml"
    settings = sandbox.home / ".gemini" / "settings.json"
    memory_tool(sandbox, "uninstall", "--agent", "codex", "--agent", "gemini")
    assert "memory-tool" not in config.read_text()
    assert json.loads(settings.read_text()) == {
        "security": {"auth": {"selectedType": "gemini-api-key"}}
    }
    assert not (sandbox.home / ".codex" / "hooks.json").exists()


def test_the_handoff_is_asked_for_once_in_each_agent(
    sandbox: Sandbox, agents: tuple[FakeOpenAI, FakeGemini]
) -> None:
    """A substantial session (here: any, min_file_edits 0) is asked for a handoff once at its
    stop, in each agent's own form (Codex: Stop block; Gemini: AfterAgent deny, a retry), and
    then ends: the reason reaches the model exactly once."""
    openai, google = agents
    config = state_dir(sandbox) / "config.yaml"
    config.write_text(config.read_text().replace("min_file_edits: 5", "min_file_edits: 0"))
    marker = "this session did substantial work"

    res = run_codex(sandbox, openai, "refactor the client")
    assert res.returncode == 0, res.stderr
    assert sum(marker in t for t in openai.texts()) == 1
    assert len(openai.texts()) == 2  # the turn, then the one continuation the block asked for

    res = run_gemini(sandbox, google, "refactor the client")
    assert res.returncode == 0, res.stderr
    assert sum(marker in t.split('"role": "model"')[-1] for t in google.texts()) == 1
    assert len(google.texts()) == 2


def test_a_decision_made_with_one_agent_reaches_the_others(
    sandbox: Sandbox, agents: tuple[FakeOpenAI, FakeGemini]
) -> None:
    """Captured with no step by the user: a decision in a Claude Code session reaches the next
    Codex and Gemini sessions in the same repository, and one made in Codex reaches Claude Code."""
    openai, google = agents
    sandbox.api.add_text("[DECISION] Webhooks are verified with the HMAC header (DEC-HMAC).")
    res = run_claude_with_memory(sandbox, "how do we verify webhooks?")
    assert res.returncode == 0, res.stderr

    run_codex(sandbox, openai, "add the stripe webhook endpoint")
    assert any("DEC-HMAC" in t for t in openai.texts())
    run_gemini(sandbox, google, "add the paypal webhook endpoint")
    assert any("DEC-HMAC" in t for t in google.texts())

    openai.add_text("[DECISION] Payouts run nightly at 02:00 UTC (DEC-PAYOUT).")
    run_codex(sandbox, openai, "when do payouts run?")
    before = len(sandbox.api.messages_requests())
    res = run_claude_with_memory(sandbox, "schedule the payout report")
    assert res.returncode == 0, res.stderr
    assert any("DEC-PAYOUT" in r.text() for r in sandbox.api.messages_requests()[before:])
