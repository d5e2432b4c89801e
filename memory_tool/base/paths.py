"""Every path memory-tool touches comes from here.

Two roots: Claude Code's config folder (``$CLAUDE_CONFIG_DIR``, else ``~/.claude``) and our state
root (``$MEMORY_TOOL_HOME``, else ``<config>/memory-tool``). Both are read from the environment on
every call so tests (and users) can point them anywhere.
"""

from __future__ import annotations

import _thread
import json
import os
import re
from pathlib import Path
from typing import Any

# Claude Code cuts sanitised project names at 200 characters and appends a hash of the full path.
MAX_PROJECT_KEY_CHARS = 200

_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")
# CLAUDE_CODE_PROJECT_DIR_NAME names the project folder only with CLAUDE_CONFIG_DIR set, and only
# when it has this shape and is no reserved device name [seen: claude 2.1.332].
_DIR_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_RESERVED_NAME_RE = re.compile(r"^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])$", re.IGNORECASE)


# The two roots by the environment values they are made of: a prompt asks for them about 30
# times, and building the same Path each time cost it 0.4 ms at 10,000 files
# (bench/probe_prompt.py).
_ROOTS: dict[tuple[str | None, str | None, str | None], tuple[Path, Path]] = {}


def _roots() -> tuple[Path, Path]:
    environ = os.environ
    key = (environ.get("CLAUDE_CONFIG_DIR"), environ.get("MEMORY_TOOL_HOME"), environ.get("HOME"))
    roots = _ROOTS.get(key)
    if roots is None:
        config = Path(key[0]).expanduser() if key[0] else Path.home() / ".claude"
        state = Path(key[1]).expanduser() if key[1] else config / "memory-tool"
        roots = _ROOTS[key] = (config, state)
    return roots


def config_dir() -> Path:
    return _roots()[0]


def state_root() -> Path:
    return _roots()[1]


def projects_dir() -> Path:
    return config_dir() / "projects"


def settings_file() -> Path:
    return config_dir() / "settings.json"


def claude_user_config() -> Path:
    """Claude Code's own state file, where ``claude mcp add --scope user`` puts MCP servers:
    ``~/.claude.json`` beside the config folder, or inside ``$CLAUDE_CONFIG_DIR`` when that is
    set (both seen with claude 2.1.332)."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    if env:
        return Path(env).expanduser() / ".claude.json"
    return Path.home() / ".claude.json"


def index_file() -> Path:
    return state_root() / "index.db"


def install_record() -> Path:
    """What `memory-tool install` put in place (hooks, files, the command the agent runs)."""
    return state_root() / "install.json"


# What the brief tells Claude to run through its shell (`memory-tool search QUERY`).
AGENT_COMMAND = "memory-tool"


def agent_command() -> str:
    """How the agent runs memory-tool here: ``AGENT_COMMAND`` when `install` found or put it on
    PATH, else the absolute path it recorded (runtime.command)."""
    recorded = _setting(install_record(), "agent_command")
    return recorded if isinstance(recorded, str) and recorded else AGENT_COMMAND


def log_file() -> Path:
    return state_root() / "logs" / "hooks.log"


def palace_dir(name: str) -> Path:
    """identity, rooms, wiki, cold, hot, inbox, sessions: the palace's folders."""
    return state_root() / name


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", errors="surrogatepass")
    return [data[i] | (data[i + 1] << 8) for i in range(0, len(data), 2)]


def _js_hash36(text: str) -> str:
    """Claude Code's string hash over UTF-16 code units (``h = (h << 5) - h + c | 0``), absolute
    value in base 36; read from the 2.1.332 binary (tests/e2e checks it against the real thing)."""
    h = 0
    for unit in _utf16_units(text):
        h = (h * 31 + unit) & 0xFFFFFFFF
    if h >= 0x80000000:
        h -= 0x100000000
    h = abs(h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        h, r = divmod(h, 36)
        out = digits[r] + out
        if h == 0:
            return out


def sanitize_path(path: str) -> str:
    """Claude Code's folder name for a path: every non-alphanumeric UTF-16 code unit becomes '-'
    (so a character outside the BMP, such as an emoji, becomes '--'); names over 200 characters
    are cut and the hash of the whole path appended."""
    key = _NON_ALNUM.sub(lambda m: "--" if ord(m.group()) > 0xFFFF else "-", path)
    if len(key) <= MAX_PROJECT_KEY_CHARS:
        return key
    return f"{key[:MAX_PROJECT_KEY_CHARS]}-{_js_hash36(path)}"


def _read_gitdir(dot_git: Path) -> Path | None:
    """For a ``.git`` *file* (worktree or submodule), the git dir it points to."""
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("gitdir:"):
            target = Path(line[len("gitdir:") :].strip())
            return target if target.is_absolute() else (dot_git.parent / target)
    return None


def git_root(cwd: Path) -> Path | None:
    """The main repository's root for ``cwd``: linked worktrees map to the repository they belong
    to, as Claude Code keys its memory folder. Walks up the tree; runs no ``git`` process."""
    here = cwd
    for folder in (here, *here.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder
        if dot_git.is_file():
            gitdir = _read_gitdir(dot_git)
            if gitdir is None:
                return folder
            commondir = gitdir / "commondir"
            if commondir.is_file():  # a linked worktree: <main>/.git/worktrees/<name>
                try:
                    common = commondir.read_text(encoding="utf-8").strip()
                except OSError:
                    return folder
                common_path = Path(common)
                if not common_path.is_absolute():
                    common_path = gitdir / common_path
                return Path(os.path.normpath(common_path)).parent
            return folder  # a submodule: its own root
    return None


# Within one hook call the same folder's project root is asked for several times (7 a prompt,
# each resolving symlinks and walking up to the git root: 0.3 ms in all); ``one_call`` keeps
# the answers for that call only, so a `git init` between two calls is always seen. Per thread:
# a test runs hooks in threads.
_CALL = _thread._local()


class one_call:  # noqa: N801 - used as a function: `with paths.one_call():`
    """Within the block, ``project_root`` answers each folder once, and ``call_memo`` gives
    each name one dict."""

    def __enter__(self) -> None:
        self.saved = getattr(_CALL, "memos", None)
        _CALL.memos = {}

    def __exit__(self, *exc: object) -> None:
        _CALL.memos = self.saved


def call_memo(name: str) -> dict[Any, Any] | None:
    """A dict that lives as long as the current hook call (``one_call``), for answers that
    cannot change within it; None outside a call (the CLI, a test calling a function)."""
    memos: dict[str, dict[Any, Any]] | None = getattr(_CALL, "memos", None)
    if memos is None:
        return None
    memo = memos.get(name)
    if memo is None:
        memo = memos[name] = {}
    return memo


def project_root(cwd: str | Path) -> Path:
    """The folder Claude Code keys project memory to: the git root, else the directory itself.
    Symlinks are resolved, as Claude Code does."""
    key = os.fspath(cwd)
    memo = call_memo("project_root")
    if memo is not None:
        hit: Path | None = memo.get(key)
        if hit is not None:
            return hit
    path = Path(os.path.realpath(key))
    root = git_root(path)
    found = root if root is not None else path
    if memo is not None:
        memo[key] = found
    return found


def project_key(cwd: str | Path) -> str:
    """The name of the project's folder under ``<config>/projects``: the main repository root,
    sanitised, unless ``CLAUDE_CODE_PROJECT_DIR_NAME`` names it."""
    return project_dir_name_override() or project_folder_name(sanitize_path(str(project_root(cwd))))


def project_dir_name_override() -> str | None:
    """``CLAUDE_CODE_PROJECT_DIR_NAME``, where Claude Code honours it."""
    if not (os.environ.get("CLAUDE_CONFIG_DIR") or "").strip():
        return None
    name = (os.environ.get("CLAUDE_CODE_PROJECT_DIR_NAME") or "").strip()
    if _DIR_NAME_RE.match(name) and not _RESERVED_NAME_RE.match(name):
        return name
    return None


def project_memory_dir(cwd: str | Path) -> Path:
    """The project's auto-memory folder: ``autoMemoryDirectory`` when a settings file moves it,
    else ``<config>/projects/<project>/memory``."""
    return auto_memory_directory(cwd) or projects_dir() / project_key(cwd) / "memory"


def auto_memory_directory(cwd: str | Path) -> Path | None:
    """The ``autoMemoryDirectory`` setting that applies to a session in ``cwd``, as Claude Code
    reads it [seen: claude 2.1.332]: the project's ``.claude/settings.local.json``, then its
    ``.claude/settings.json``, then the user's ``settings.json``; an absolute or ``~/`` path
    only (a relative one is ignored)."""
    here = Path(os.path.realpath(os.fspath(cwd)))
    tree = work_root(here)
    folders = [here] if here == tree else [here, tree]
    files = [f / ".claude" / name for f in folders for name in _PROJECT_SETTINGS]
    for path in (*files, settings_file()):
        value = _setting(path, "autoMemoryDirectory")
        if not isinstance(value, str) or not value.strip():
            continue
        value = value.strip()
        if value == "~" or value.startswith("~/"):
            return Path(value).expanduser()
        if os.path.isabs(value):
            return Path(value)
    return None


_PROJECT_SETTINGS = ("settings.local.json", "settings.json")
# path -> ((mtime_ns, size), parsed JSON): the hook server reads the settings on every prompt.
_SETTINGS_CACHE: dict[str, tuple[tuple[int, int], object]] = {}


def _setting(path: Path, key: str) -> object:
    """One top-level value of a JSON settings file (None when absent, unreadable or not JSON)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size)
    cached = _SETTINGS_CACHE.get(str(path))
    if cached is None or cached[0] != stamp:
        try:
            data: object = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        cached = _SETTINGS_CACHE[str(path)] = (stamp, data)
    data = cached[1]
    return data.get(key) if isinstance(data, dict) else None


def project_folder_name(key: str) -> str:
    """The existing folder for a key. For cut (over-long) keys Claude Code accepts any folder
    with the same first 200 characters, since older versions hashed differently."""
    if len(key) <= MAX_PROJECT_KEY_CHARS or (projects_dir() / key).exists():
        return key
    prefix = key[:MAX_PROJECT_KEY_CHARS] + "-"
    try:
        with os.scandir(projects_dir()) as it:
            for item in it:
                if item.name.startswith(prefix) and item.is_dir():
                    return item.name
    except OSError:
        pass
    return key


def work_root(cwd: str | Path) -> Path:
    """The working tree a session runs in: the nearest folder holding a ``.git`` (a folder, or
    the file of a linked worktree or submodule), else the directory itself. Where project memory
    is shared by every worktree of a repository (``project_root``), ``thoughts/`` belongs to the
    working tree: another branch's handoff is not this one's."""
    path = Path(os.path.realpath(os.fspath(cwd)))
    for folder in (path, *path.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return path


def context_file(cwd: str | Path) -> Path:
    """The working tree's hand-written context document, part of L2 when present."""
    return work_root(cwd) / "thoughts" / "CONTEXT.md"


def handoff_file(cwd: str | Path) -> Path:
    """Where a session in ``cwd`` writes its handoff (and the next one reads it)."""
    return work_root(cwd) / "thoughts" / "HANDOFF.md"
