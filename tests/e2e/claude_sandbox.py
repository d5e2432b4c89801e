"""Run the real `claude` binary offline in a throw-away HOME, against the stand-in API.

Used by conftest.py (pytest fixtures) and by record_samples.py (a plain script). Everything here was
checked against claude-code 2.1.332 (the version .ci/install_claude.sh pins); see README.md.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_api import FakeAnthropicAPI

E2E_DIR = Path(__file__).resolve().parent
REPO_ROOT = E2E_DIR.parents[1]
INSTALL_SCRIPT = REPO_ROOT / ".ci" / "install_claude.sh"
DEFAULT_CLAUDE_BIN = REPO_ROOT / ".cache" / "claude" / "node_modules" / ".bin" / "claude"
# Lets a developer point the harness at another build without editing anything.
CLAUDE_BIN_ENV = "MEMORY_TOOL_E2E_CLAUDE_BIN"
HOOK_RECORDER = E2E_DIR / "hook_recorder.py"
SAMPLES_DIR = E2E_DIR / "samples"

# Claude Code cuts a sanitized project folder name at this many characters and appends a hash.
PROJECT_KEY_MAX = 200
# Variables copied from the caller's environment; everything else (CLAUDE_*, ANTHROPIC_*,
# proxies, a real CLAUDE_CONFIG_DIR...) stays out so a run never touches the developer's setup.
PASSTHROUGH_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "USER", "LOGNAME", "TZ")


def find_claude_bin() -> Path | None:
    """The installed `claude` binary, or None (then the e2e tests skip)."""
    override = os.environ.get(CLAUDE_BIN_ENV)
    candidate = Path(override) if override else DEFAULT_CLAUDE_BIN
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return candidate
    return None


def _js_string_hash(text: str) -> int:
    """Claude Code's `h = (h << 5) - h + charCode | 0` over UTF-16 code units (a signed int32)."""
    h = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (h * 31 + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def project_key(path: str) -> str:
    """The folder name Claude Code uses under `<config>/projects/` for an absolute path.

    JS `path.replace(/[^a-zA-Z0-9]/g, "-")` works on UTF-16 code units, so a character outside
    the BMP (an emoji) becomes "--". Over 200 characters: the first 200, "-", then
    base36(abs(hash(original path))). Give it the real path (symlinks resolved), as Claude does.
    """
    key = "".join(
        ch if ch.isascii() and ch.isalnum() else ("--" if ord(ch) > 0xFFFF else "-") for ch in path
    )
    if len(key) <= PROJECT_KEY_MAX:
        return key
    return f"{key[:PROJECT_KEY_MAX]}-{_base36(abs(_js_string_hash(path)))}"


@dataclass
class Sandbox:
    """A fresh HOME (config in HOME/.claude, CLAUDE_CONFIG_DIR unset) plus a project folder."""

    root: Path
    api: FakeAnthropicAPI
    claude_bin: Path
    home: Path = field(init=False)
    project: Path = field(init=False)
    hook_log_dir: Path = field(init=False)
    tmpdir: Path = field(init=False)
    # The loopback port of this sandbox's hook server: its own, so sandboxes side by side (and
    # a real install on the default port) never answer each other's HTTP hooks.
    server_port: int = field(init=False)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.hook_log_dir = self.root / "hook-log"
        for d in (self.home, self.config_dir, self.project, self.hook_log_dir):
            d.mkdir(parents=True, exist_ok=True)
        # Claude puts a unix socket under $TMPDIR; pytest's tmp_path can exceed the 108-byte
        # socket path limit, so use a short private folder in the system temp dir instead.
        self.tmpdir = Path(tempfile.mkdtemp(prefix="cc-e2e-"))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.server_port = s.getsockname()[1]

    def close(self) -> None:
        stop_server(self)
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    # ---- paths -------------------------------------------------------------------------------
    @property
    def config_dir(self) -> Path:
        return self.home / ".claude"

    @property
    def settings_path(self) -> Path:
        return self.config_dir / "settings.json"

    def project_dir(self, cwd: Path | str | None = None) -> Path:
        """`<config>/projects/<key>` for a launch folder (where its transcripts go)."""
        real = os.path.realpath(cwd if cwd is not None else self.project)
        return self.config_dir / "projects" / project_key(real)

    def transcripts(self, cwd: Path | str | None = None) -> list[Path]:
        """Session transcripts of a launch folder, oldest first."""
        d = self.project_dir(cwd)
        return sorted(d.glob("*.jsonl"), key=lambda p: p.stat().st_mtime) if d.is_dir() else []

    # ---- settings and hooks ------------------------------------------------------------------
    def read_settings(self) -> dict[str, Any]:
        if not self.settings_path.exists():
            return {}
        data: dict[str, Any] = json.loads(self.settings_path.read_text(encoding="utf-8"))
        return data

    def write_settings(self, settings: Mapping[str, Any]) -> None:
        self.settings_path.write_text(json.dumps(settings, indent=2), encoding="utf-8")

    def add_hook(
        self, event: str, command: str, matcher: str | None = None, timeout: int | None = None
    ) -> None:
        """Append a command hook to HOME/.claude/settings.json."""
        settings = self.read_settings()
        handler: dict[str, Any] = {"type": "command", "command": command}
        if timeout is not None:
            handler["timeout"] = timeout
        group: dict[str, Any] = {"hooks": [handler]}
        if matcher is not None:
            group["matcher"] = matcher
        settings.setdefault("hooks", {}).setdefault(event, []).append(group)
        self.write_settings(settings)

    def add_recording_hook(
        self,
        event: str,
        output: Mapping[str, Any] | str | None = None,
        *,
        matcher: str | None = None,
        once: bool = False,
    ) -> None:
        """A hook that records its stdin (see `hook_inputs`) and prints `output` (dict -> JSON).

        once=True: print nothing when the input has stop_hook_active (a Stop hook blocks once).
        """
        cmd = [sys.executable, str(HOOK_RECORDER), "--log-dir", str(self.hook_log_dir)]
        if output is not None:
            n = len(list(self.root.glob(f"hook-output-{event}-*.txt")))
            out_file = self.root / f"hook-output-{event}-{n}.txt"
            text = output if isinstance(output, str) else json.dumps(output)
            out_file.write_text(text, encoding="utf-8")
            cmd += ["--output-file", str(out_file)]
        if once:
            cmd.append("--skip-when-stop-hook-active")
        self.add_hook(event, shlex.join(cmd), matcher=matcher)

    def hook_inputs(self, event: str) -> list[dict[str, Any]]:
        """Every stdin JSON a recording hook got for `event`, in order."""
        path = self.hook_log_dir / f"{event}.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    # ---- running -----------------------------------------------------------------------------
    def env(self, extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
        """The environment for one `claude` run; a None value in `extra` removes a variable."""
        env = {k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ}
        # ~/.local/bin first, as most login profiles have it: `install` links memory-tool there.
        env["PATH"] = os.pathsep.join([str(self.home / ".local" / "bin"), env.get("PATH", "")])
        env.update(
            {
                "HOME": str(self.home),
                "SHELL": "/bin/bash" if Path("/bin/bash").exists() else "/bin/sh",
                "TERM": "dumb",
                "TMPDIR": str(self.tmpdir),
                "ANTHROPIC_BASE_URL": self.api.base_url,
                "ANTHROPIC_API_KEY": "test",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_AUTOUPDATER": "1",
                # Without it the client also sends HEAD /api/hello and other probes.
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "NO_PROXY": "127.0.0.1,localhost",
            }
        )
        if hasattr(os, "getuid") and os.getuid() == 0:
            # As root, bypassPermissions is refused unless IS_SANDBOX=1 says this is a sandbox.
            env["IS_SANDBOX"] = "1"
        for k, v in (extra or {}).items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def run_claude(
        self,
        prompt: str,
        cwd: Path | str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str | None] | None = None,
        timeout: float = 120,
        *,
        skip_permissions: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """`claude -p PROMPT [extra_args]` in `cwd` (default: the sandbox project folder).

        skip_permissions: tool calls run without asking (bypassPermissions); without it, -p mode
        denies Write and file-changing Bash calls.
        """
        # The prompt goes right after -p: an option with an optional value (--resume [id])
        # placed before it would swallow it.
        args = [str(self.claude_bin), "-p", prompt, *extra_args]
        if skip_permissions:
            args += ["--permission-mode", "bypassPermissions"]
        return subprocess.run(
            args,
            cwd=str(cwd if cwd is not None else self.project),
            env=self.env(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """A transcript's lines (skips blank or half-written lines)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


# ---- memory-tool in the sandbox (helpers for tests/e2e/test_memory_*.py) ----------------------
# Added for the memory-tool end-to-end tests: run our CLI against the sandbox's HOME, and find
# what our hooks injected in a recorded request.

# Every memory-tool process in a sandbox (the CLI, and the hooks claude starts, which inherit
# claude's environment): a pinned day so output is reproducible, and no detached background
# refresh that could outlive the test.
MEMORY_TOOL_ENV: dict[str, str | None] = {
    "MEMORY_TOOL_NO_BACKGROUND": "1",
    "MEMORY_TOOL_SEMANTIC": "0",  # words only: with the extra installed, `index` runs a model
    "MEMORY_TOOL_TODAY": "2026-11-29",
    "MEMORY_TOOL_HOME": None,
    "CLAUDE_CONFIG_DIR": None,
}
# The CLI as a module call: works from whichever environment runs pytest (no console script
# needed), and `memory-tool install` then writes hook commands for this same interpreter.
_MEMORY_TOOL_CALL = (
    "import sys; from memory_tool.cli.main import main; sys.argv[0] = 'memory-tool'; main()"
)
FENCE_OPEN_TAG = "<memory-context>"
FENCE_CLOSE_TAG = "</memory-context>\n"


def server_env(box: Sandbox) -> dict[str, str | None]:
    """The hook server of memory-tool in the sandbox: allowed (the HTTP hooks need it) despite
    MEMORY_TOOL_NO_BACKGROUND, on the sandbox's own port; `stop_server` ends it."""
    return {"MEMORY_TOOL_SERVER": "1", "MEMORY_TOOL_SERVER_PORT": str(box.server_port)}


def stop_server(box: Sandbox) -> None:
    """Ask the sandbox's hook server (if one runs) to exit, so no test leaves one behind."""
    from memory_tool.runtime.client import socket_path

    sock_path = socket_path(str(box.config_dir / "memory-tool"))
    if not os.path.exists(sock_path):
        return
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(sock_path)
            s.sendall(b"MT2 !stop 0 0 0 0\n")
            s.shutdown(socket.SHUT_WR)
            s.recv(100)
    except OSError:
        pass


def memory_tool(
    box: Sandbox,
    *args: str,
    cwd: Path | str | None = None,
    check: bool = True,
    env: Mapping[str, str | None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`memory-tool ARGS` with the sandbox's HOME (config in HOME/.claude, state under it)."""
    res = subprocess.run(
        [sys.executable, "-c", _MEMORY_TOOL_CALL, *args],
        cwd=str(cwd if cwd is not None else box.project),
        env=box.env({**MEMORY_TOOL_ENV, **server_env(box), **(env or {})}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if check and res.returncode != 0:
        raise AssertionError(
            f"memory-tool {shlex.join(args)} exited {res.returncode}\n{res.stdout}\n{res.stderr}"
        )
    return res


def state_dir(box: Sandbox) -> Path:
    """memory-tool's state root in the sandbox (<config>/memory-tool)."""
    return box.config_dir / "memory-tool"


def hooks_log(box: Sandbox) -> str:
    path = state_dir(box) / "logs" / "hooks.log"
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def run_claude_with_memory(
    box: Sandbox, prompt: str, extra_args: Sequence[str] = (), **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """`run_claude` with MEMORY_TOOL_ENV, which the hooks inherit."""
    env = {**MEMORY_TOOL_ENV, **server_env(box), **(kwargs.pop("env", None) or {})}
    return box.run_claude(prompt, extra_args=extra_args, env=env, **kwargs)


def fenced_blocks(text: str) -> list[str]:
    """Every `<memory-context>…</memory-context>\\n` block in `text`, tags included."""
    out = []
    start = text.find(FENCE_OPEN_TAG)
    while start != -1:
        end = text.find(FENCE_CLOSE_TAG, start)
        if end == -1:
            out.append(text[start:])
            break
        out.append(text[start : end + len(FENCE_CLOSE_TAG)])
        start = text.find(FENCE_OPEN_TAG, end)
    return out


def _text_blocks(req: Any) -> list[str]:
    """Each text block of a recorded request's messages, in order."""
    out: list[str] = []
    body = req.body if isinstance(req.body, dict) else {}
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in [content] if isinstance(content, str) else content or []:
            text = block if isinstance(block, str) else block.get("text")
            if isinstance(text, str):
                out.append(text)
    return out


def injected_by(req: Any, event: str) -> list[str]:
    """The `<memory-context>` blocks a hook for `event` put into one recorded request.

    Claude Code 2.1.332 puts the additionalContext of an event's hooks into one text block,
    after "<Event> hook additional context: " (several hooks' outputs joined by newlines).
    """
    marker = f"{event} hook additional context: "
    out: list[str] = []
    for text in _text_blocks(req):
        at = text.find(marker)
        while at != -1:
            segment = text[at + len(marker) :]
            nxt = segment.find(" hook additional context: ")
            out += fenced_blocks(segment if nxt == -1 else segment[:nxt])
            at = text.find(marker, at + len(marker))
    return out
