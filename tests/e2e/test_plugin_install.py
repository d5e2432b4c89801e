"""The plugin route with the real binary: `claude plugin marketplace add <this checkout>`, then
`claude plugin install memory-tool@memory-tool`, in a sandbox HOME.

Building the plugin's private environment (a venv, pip install of the package) takes tens of
seconds, so one sandbox serves the whole module: the first session (the environment is built
meanwhile), then the sessions after it, both installs at once, a new plugin version, and last the
uninstall. The tests run in file order.
"""

from __future__ import annotations

import hashlib
import http.server
import importlib.util
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from claude_sandbox import (
    FENCE_OPEN_TAG,
    MEMORY_TOOL_ENV,
    REPO_ROOT,
    Sandbox,
    hooks_log,
    injected_by,
    memory_tool,
    run_claude_with_memory,
    state_dir,
)
from fake_api import FakeAnthropicAPI

from memory_tool.base.config import HOOK_SERVER_PORT
from memory_tool.runtime import plugin, plugin_env

pytestmark = pytest.mark.e2e

PLUGIN_ID = f"{plugin.PLUGIN_NAME}@{plugin.MARKETPLACE_NAME}"
# Claude Code's data folder of a plugin: <config>/plugins/data/<plugin>-<marketplace>.
PLUGIN_DATA_NAME = f"{plugin.PLUGIN_NAME}-{plugin.MARKETPLACE_NAME}"
# A build measured 25-60 s on a loaded 2-core machine; past this it is broken, not slow.
BUILD_DEADLINE_S = 600
# Said in a session before the plugin was installed: the first build's backfill captures it.
PRE_PLUGIN_CORRECTION = "no, use httpx instead of requests for the ZPREPLUGINQ client"
# Claude Code's SessionStart timeout for our hook (hooks.json): the first session must end well
# within it, not wait for the build.
FIRST_SESSION_LIMIT_S = 15


@dataclass
class Installed:
    box: Sandbox
    data: Path
    first_session_s: float
    first_request: object
    build_s: float


def claude(box: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(
        [str(box.claude_bin), *args],
        cwd=box.project,
        env=box.env(MEMORY_TOOL_ENV),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert res.returncode == 0, f"claude {' '.join(args)}: {res.stdout}\n{res.stderr}"
    return res


def session(box: Sandbox, prompt: str) -> object:
    """One `claude -p` run; its first request as the stand-in API recorded it."""
    box.api.reset()
    res = run_claude_with_memory(box, prompt)
    assert res.returncode == 0, res.stdout + res.stderr
    return box.api.main_requests()[0]


def add(box: Sandbox, *args: str) -> str:
    return str(json.loads(memory_tool(box, "add", "--json", *args).stdout)["id"])


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, claude_bin: Path) -> Iterator[Installed]:
    with FakeAnthropicAPI() as api:
        box = Sandbox(
            root=tmp_path_factory.mktemp("plugin") / "box", api=api, claude_bin=claude_bin
        )
        # The plugin's hooks.json names the default port (one static file for everyone).
        box.server_port = HOOK_SERVER_PORT
        try:
            # A session before the plugin: only the client's transcript keeps it.
            api.add_tool_use("Bash", {"command": "ls", "description": "list files"})
            api.add_text("Switched the client.")
            before = box.run_claude(PRE_PLUGIN_CORRECTION, env=MEMORY_TOOL_ENV)
            assert before.returncode == 0, before.stdout + before.stderr
            claude(box, "plugin", "marketplace", "add", str(REPO_ROOT))
            claude(box, "plugin", "install", PLUGIN_ID)
            data = (
                box.config_dir
                / "plugins"
                / "data"
                / f"{plugin.PLUGIN_NAME}-{plugin.MARKETPLACE_NAME}"
            )
            add(box, "--type", "feedback", "Never deploy on Fridays ZPLUGRULEQ.")
            start = time.monotonic()
            first = session(box, "hello")
            took = time.monotonic() - start
            deadline = time.monotonic() + BUILD_DEADLINE_S
            while plugin_env.read_stamp(str(data)) is None and time.monotonic() < deadline:
                time.sleep(0.5)
            stamp = plugin_env.read_stamp(str(data))
            log = (data / plugin_env.LOG).read_text() if (data / plugin_env.LOG).exists() else ""
            assert stamp is not None, f"the environment was not built:\n{log[-3000:]}"
            # The first build then backfills the sessions before the plugin (its ledger is
            # written as each transcript is done; the build lock is released at the end).
            while plugin_env.building(str(data)) and time.monotonic() < deadline:
                time.sleep(0.5)
            yield Installed(box, data, took, first, float(stamp["BUILD_S"]))
        finally:
            box.close()


def test_the_marketplace_and_the_plugin_validate_with_no_errors(claude_bin: Path) -> None:
    for target in (REPO_ROOT, REPO_ROOT / plugin.PLUGIN_DIR):
        res = subprocess.run(
            [str(claude_bin), "plugin", "validate", "--json", str(target)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        report = json.loads(res.stdout)
        assert res.returncode == 0 and report["success"], res.stdout
        assert report["manifest"]["errors"] == []
    provides = report["provides"]
    assert [h["event"] for h in provides["hooks"]] == list(json.loads(
        (REPO_ROOT / plugin.PLUGIN_DIR / "hooks" / "hooks.json").read_text())["hooks"])  # fmt: skip
    assert provides["skills"] == ["memory-tool:memory-recall"]
    assert provides["bin"] == ["memory-tool"]
    assert [s["name"] for s in provides["mcpServers"]] == [plugin.MCP_SERVER_NAME]


def test_the_first_session_gets_one_line_and_the_next_the_brief_and_room_recall(
    installed: Installed,
) -> None:
    box = installed.box
    # First session: no environment yet. It ends at once with one line, no brief.
    assert installed.first_session_s < FIRST_SESSION_LIMIT_S
    (line,) = [
        t.split("SessionStart hook additional context: ", 1)[1].split("\n")[0]
        for t in [installed.first_request.text()]  # type: ignore[attr-defined]
        if "SessionStart hook additional context: " in t
    ]
    assert "setting up its Python environment" in line and "next session" in line
    assert FENCE_OPEN_TAG not in installed.first_request.messages_text()  # type: ignore[attr-defined]

    # The next sessions: the brief, and the room of a prompt about one.
    auth = add(box, "--room", "authentication", "Refresh tokens rotate every 15 minutes ZAUTHQ.")
    req = session(box, "How does the login token refresh work?")
    (brief,) = injected_by(req, "SessionStart")
    assert "ZPLUGRULEQ" in brief
    assert "ZPREPLUGINQ" in brief, (installed.data / plugin_env.LOG).read_text()[-3000:]
    (recall,) = injected_by(req, "UserPromptSubmit")
    assert "ZAUTHQ" in recall and f"[{auth}]" in recall
    assert hooks_log(box) == ""
    # The environment is the plugin's own, under its data folder, and the hooks run it with -S.
    stamp = plugin_env.read_stamp(str(installed.data))
    assert stamp is not None and stamp["FLAGS"] == "-S"
    assert Path(stamp["PYTHON"]).is_relative_to(installed.data)
    assert str(REPO_ROOT) not in stamp["HOOK"]


def test_the_agent_runs_memory_tool_from_the_plugins_bin(installed: Installed) -> None:
    box = installed.box
    entry = add(box, "--type", "reference", "The flamingo runbook lives in ops/flamingo ZBINQ.")
    box.api.reset()
    box.api.add_tool_use("Bash", {"command": "memory-tool search flamingo", "description": "s"})
    box.api.add_text("done")
    res = run_claude_with_memory(box, "find the runbook")
    assert res.returncode == 0, res.stderr
    follow_up = box.api.main_requests()[1]
    results = [
        block
        for message in follow_up.body["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert results and entry in json.dumps(results[-1]), results


def test_installed_both_ways_each_event_injects_once(installed: Installed) -> None:
    """The plugin plus settings.json hooks from `memory-tool install`: both hear every event,
    one answers it."""
    box = installed.box
    memory_tool(box, "install")
    try:
        settings = json.loads(box.settings_path.read_text())
        assert settings["enabledPlugins"][PLUGIN_ID] is True
        assert len(settings["hooks"]["UserPromptSubmit"]) == 1
        req = session(box, "How does the login token refresh work?")
        assert len(injected_by(req, "SessionStart")) == 1
        assert len(injected_by(req, "UserPromptSubmit")) == 1
        assert req.messages_text().count(FENCE_OPEN_TAG) == 2  # type: ignore[attr-defined]
        # The command hooks (SessionStart, SessionEnd) are twins that claim; the HTTP hooks are
        # the same handler in both, which Claude Code sends once.
        claims = os.listdir(state_dir(box) / "run" / "claims")
        for event in ("SessionStart", "SessionEnd"):
            assert any(f"-{event}-" in name for name in claims), (event, claims)
        plugin_hooks = plugin.hooks_json()["hooks"]
        assert settings["hooks"]["UserPromptSubmit"] == plugin_hooks["UserPromptSubmit"]
    finally:
        memory_tool(box, "uninstall")
    assert "hooks" not in json.loads(box.settings_path.read_text())


@pytest.mark.skipif(
    importlib.util.find_spec("memory_tool.mcp") is None,
    reason="the MCP server (memory_tool.mcp, issue 16 part 3) is not in this tree yet",
)
def test_the_plugins_mcp_server_runs_from_the_private_environment(installed: Installed) -> None:
    out = claude(installed.box, "mcp", "list").stdout
    name = f"plugin:{plugin.PLUGIN_NAME}:{plugin.MCP_SERVER_NAME}"
    (line,) = [x for x in out.splitlines() if x.startswith(name)]
    assert "Connected" in line, out


def test_a_new_plugin_version_is_built_while_the_old_environment_answers(
    installed: Installed,
) -> None:
    """What an update does: the hooks name a version the environment is not; SessionStart
    still gets the brief (from the old environment) and a new one is built beside it, which
    then replaces it."""
    box, data = installed.box, installed.data
    old = plugin_env.read_stamp(str(data))
    assert old is not None
    env = box.env({**MEMORY_TOOL_ENV, "CLAUDE_PLUGIN_DATA": str(data),
                   "CLAUDE_PLUGIN_ROOT": str(REPO_ROOT / plugin.PLUGIN_DIR)})  # fmt: skip
    payload = {"session_id": "up", "cwd": str(box.project), "hook_event_name": "SessionStart",
               "source": "startup", "transcript_path": "/nonexistent.jsonl"}  # fmt: skip
    proc = subprocess.run(
        [str(REPO_ROOT / plugin.PLUGIN_DIR / "scripts" / "hook"), "SessionStart", "0.1.99"],
        input=json.dumps(payload).encode(), capture_output=True, env=env, cwd=box.project,
        timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0
    assert "ZPLUGRULEQ" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    deadline = time.monotonic() + BUILD_DEADLINE_S
    while plugin_env.building(str(data)) and time.monotonic() < deadline:
        time.sleep(0.5)
    new = plugin_env.read_stamp(str(data))
    assert new is not None and new["VERSION"] == "0.1.99", (data / plugin_env.LOG).read_text()
    assert not Path(old["PYTHON"]).exists()  # the old environment is gone
    envs = [p.name for p in data.iterdir() if p.name.startswith(plugin_env.ENV_PREFIX)]
    assert len(envs) == 1
    # Back to the version hooks.json names, for the test after this one.
    plugin_env.write_stamp(str(data), {**new, "VERSION": old["VERSION"]})


def memory_files(box: Sandbox) -> dict[str, str]:
    """Every memory file (the palace and Claude Code's auto memory), by content hash."""
    out = {}
    for root in (state_dir(box), box.config_dir / "projects"):
        for path in root.rglob("*.md"):
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def test_uninstall_leaves_every_memory_file_in_place(installed: Installed) -> None:
    box = installed.box
    before = memory_files(box)
    assert any("ZAUTHQ" in Path(p).read_text() for p in before)
    claude(box, "plugin", "uninstall", PLUGIN_ID)
    assert memory_files(box) == before
    assert (state_dir(box) / "config.yaml").exists()
    assert not installed.data.exists()  # only the plugin's environment went
    req = session(box, "How does the login token refresh work?")
    assert FENCE_OPEN_TAG not in req.text()  # type: ignore[attr-defined]


# --- from a git URL, as from GitHub ---------------------------------------------------------


class GitHTTP(http.server.BaseHTTPRequestHandler):
    """`git http-backend` (smart HTTP) for the repositories under ``root``: what a git host
    serves. Claude Code clones a marketplace shallowly, which git's dumb HTTP cannot serve."""

    root = ""

    def do_GET(self) -> None:
        self._backend()

    def do_POST(self) -> None:
        self._backend()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _backend(self) -> None:
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = {
            "PATH": os.environ["PATH"],
            "GIT_PROJECT_ROOT": self.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "REMOTE_ADDR": "127.0.0.1",
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
        }
        out = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, timeout=120
        ).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(": ")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)


def test_from_a_git_url_the_installed_copy_holds_the_whole_package_source(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """`marketplace add owner/repo` clones the repository and copies the plugin folder into the
    plugin cache. plugin/src/ links to the package outside that folder: the copy must hold real
    files, or the private environment would have nothing to install."""
    repos = tmp_path / "repos"
    repos.mkdir()
    subprocess.run(["git", "clone", "-q", "--bare", str(REPO_ROOT), str(repos / "mt.git")],
                   check=True, timeout=120)  # fmt: skip
    GitHTTP.root = str(repos)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), GitHTTP)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/mt.git"
        claude(sandbox, "plugin", "marketplace", "add", url)
        claude(sandbox, "plugin", "install", PLUGIN_ID)
    finally:
        server.shutdown()
    installed = json.loads((sandbox.config_dir / "plugins" / "installed_plugins.json").read_text())
    (entry,) = installed["plugins"][PLUGIN_ID]
    copy = Path(entry["installPath"])
    assert copy.is_relative_to(sandbox.config_dir / "plugins" / "cache")
    src = copy / "src"
    for rel in ("pyproject.toml", "README.md", "memory_tool/runtime/plugin_env.py",
                "memory_tool/runtime/hook.py", "memory_tool/templates/rooms.yaml"):  # fmt: skip
        assert (src / rel).is_file() and not (src / rel).is_symlink(), rel
    assert not (src / "memory_tool").is_symlink()
    assert json.loads((copy / "hooks" / "hooks.json").read_text()) == plugin.hooks_json()
