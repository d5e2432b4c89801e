"""A broken memory tree, index, config or state folder never costs the person their session.

Each test breaks something on disk, runs a real `claude -p` session with memory-tool installed
(SessionStart, UserPromptSubmit, Stop and SessionEnd all fire), and checks that the session ends
normally (exit 0, the model's answer printed), that what is healthy still reaches the model,
that the problem is reported (in the brief's hygiene line or in <state>/logs/hooks.log), and
that no memory file was changed or lost.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from claude_sandbox import (
    FENCE_OPEN_TAG,
    MEMORY_TOOL_ENV,
    Sandbox,
    hooks_log,
    injected_by,
    memory_tool,
    run_claude_with_memory,
    state_dir,
)
from helpers import write_memory

pytestmark = pytest.mark.e2e

# Size of the oversized memory file: far past the 256 KB the index reads of one file.
BIG_FILE_BYTES = 50 * 1024 * 1024
SETPRIV = shutil.which("setpriv")


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, f"claude exited {res.returncode}\n{res.stdout}\n{res.stderr}"
    assert res.stdout.strip() == "ok"


def snapshot(root: Path) -> dict[str, str]:
    """sha256 of every regular file under root (symlinks and special files by their target)."""
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                out[str(path)] = f"link:{os.readlink(path)}" if path.is_symlink() else "special"
                continue
            try:
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            except PermissionError:
                out[str(path)] = "unreadable"
    return out


def no_dac_prefix() -> list[str]:
    """A command prefix that takes away root's right to read any file, so that chmod 000 really
    makes a folder unreadable; [] when setpriv is missing or we are not root."""
    if SETPRIV is None or os.getuid() != 0:
        return []
    return [SETPRIV, "--bounding-set=-dac_override,-dac_read_search"]


def without_dac_override(box: Sandbox) -> bool:
    """Run claude (and so its hooks) under no_dac_prefix(); False when that is not possible."""
    prefix = no_dac_prefix()
    if not prefix:
        return False
    wrapper = box.root / "claude-no-dac"
    wrapper.write_text(
        f'#!/bin/sh\nexec {" ".join(prefix)} "{box.claude_bin}" "$@"\n', encoding="utf-8"
    )
    wrapper.chmod(0o755)
    box.claude_bin = wrapper
    return True


def background_refresh(box: Sandbox) -> None:
    """The full index refresh a SessionStart starts in the background (disabled in tests), run
    in the foreground and with the same rights as the hooks."""
    res = subprocess.run(
        [
            *no_dac_prefix(),
            sys.executable,
            "-m",
            "memory_tool.runtime.background",
        ],
        cwd=box.project,
        env=box.env(MEMORY_TOOL_ENV),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0 and res.stdout == "", res.stderr


def test_broken_memory_tree_still_lets_the_session_finish(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    memory_tool(sandbox, "init")
    d = sandbox.project_dir() / "memory"
    write_memory(d, "project_ok.md", "A healthy fact ZOKQ.", type_="project")
    (d / "feedback_yaml.md").write_text("---\nname: [unclosed\n---\nRule ZYAMLQ, broken YAML.\n")
    (d / "project_binary.md").write_bytes(bytes(range(256)) * 64)
    (d / "project_nul.md").write_bytes(b"---\nname: nul\n---\nNUL\x00 fact ZNULQ.\n")
    (d / "project_latin1.md").write_bytes("Café fact ZLATINQ.\n".encode("latin-1"))
    (d / "project_utf16.md").write_bytes("UTF-16 fact ZUTF16Q.\n".encode("utf-16"))
    with open(d / "project_big.md", "wb") as fh:
        fh.write(b"---\nname: big\n---\nBig fact ZBIGQ.\n")
        fh.truncate(BIG_FILE_BYTES)
    (d / "dir.md").mkdir()
    os.mkfifo(d / "project_fifo.md")
    os.symlink(d / "nowhere.md", d / "project_dangling.md")
    os.symlink(d / "loop_b.md", d / "loop_a.md")
    os.symlink(d / "loop_a.md", d / "loop_b.md")
    os.symlink(d, d / "subfolder_loop")
    os.symlink("/proc/self/mem", d / "project_procmem.md")  # is a file, reading it fails
    rooms = state_dir(sandbox) / "rooms"
    write_memory(rooms / "authentication", "login.md", "Logins use passkeys ZROOMQ.")
    os.symlink(rooms, rooms / "authentication" / "loop")
    os.symlink(rooms / "gone", rooms / "dangling-room")
    locked_room = rooms / "database"
    write_memory(locked_room, "locked.md", "Hidden database fact ZLOCKEDQ.")
    locked_file = d / "project_locked.md"
    write_memory(d, locked_file.name, "Unreadable fact ZUNREADQ.", type_="project")
    unreadable = without_dac_override(sandbox)
    if unreadable:
        locked_room.chmod(0)
        locked_file.chmod(0)
    before = snapshot(sandbox.config_dir / "projects") | snapshot(rooms)
    # The room memories are found by the full refresh a start-up launches in the background.
    background_refresh(sandbox)

    try:
        res = run_claude_with_memory(sandbox, "How does the login work?")
    finally:
        locked_room.chmod(0o700)
        locked_file.chmod(0o600)

    _ok(res)
    req = sandbox.api.main_requests()[0]
    (brief,) = injected_by(req, "SessionStart")
    for marker in ("ZYAMLQ", "ZNULQ", "ZLATINQ", "ZUTF16Q"):
        assert marker in brief
    # The healthy fact's MEMORY.md line states it, and Claude Code loads that line itself: it
    # reaches the model once, not a second time in the brief (docs/recall.md).
    assert req.text().count("A healthy fact ZOKQ") == 1
    assert "ZBIGQ" not in req.text()  # a 50 MB file is no memory: not even its first lines
    assert "Memory hygiene:" in brief  # the problems are reported where the agent looks
    assert "bad frontmatter" in brief and "unreadable" in brief
    (recalled,) = injected_by(req, "UserPromptSubmit")
    assert "ZROOMQ" in recalled
    if unreadable:
        assert "ZUNREADQ" not in req.text() and "ZLOCKEDQ" not in req.text()
    assert len(brief) < 10_000 and len(recalled) < 10_000
    after = snapshot(sandbox.config_dir / "projects") | snapshot(rooms)
    assert {p: after.get(p) for p in before} == before  # nothing changed or lost


def installed_index_with(sandbox: Sandbox, fact: str) -> Path:
    """Install, save one project fact, and return index.db with its WAL files gone, so that
    damage done to the file is all the next session sees."""
    memory_tool(sandbox, "install")
    memory_tool(sandbox, "add", "--type", "project", fact)
    db = state_dir(sandbox) / "index.db"
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return db


def test_corrupt_index_is_rebuilt_and_the_error_logged(sandbox: Sandbox) -> None:
    db = installed_index_with(sandbox, "The queue is called ZQUEUEQ.")
    db.write_bytes(b"this is not a database" * 500)

    _ok(run_claude_with_memory(sandbox, "hello"))

    assert "ZQUEUEQ" in "".join(injected_by(sandbox.api.main_requests()[0], "SessionStart"))
    assert "could not be read" in hooks_log(sandbox)
    assert list(db.parent.glob("index.db.corrupt-*"))
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_truncated_index_is_rebuilt(sandbox: Sandbox) -> None:
    db = installed_index_with(sandbox, "The cron runs at ZCRONQ.")
    with open(db, "r+b") as fh:
        fh.truncate(db.stat().st_size // 3)

    _ok(run_claude_with_memory(sandbox, "hello"))

    assert "ZCRONQ" in "".join(injected_by(sandbox.api.main_requests()[0], "SessionStart"))


def test_invalid_config_yaml_is_logged_and_fixing_it_brings_memory_back(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    memory_tool(sandbox, "add", "--type", "project", "Tabs, not spaces ZTABSQ.")
    config = state_dir(sandbox) / "config.yaml"
    good = config.read_text(encoding="utf-8") if config.exists() else ""
    config.write_text("budgets: [l1_tokens: : {\n", encoding="utf-8")

    _ok(run_claude_with_memory(sandbox, "hello"))

    assert "config.yaml" in hooks_log(sandbox)
    config.write_text(good, encoding="utf-8")
    sandbox.api.reset()
    _ok(run_claude_with_memory(sandbox, "hello again"))
    assert "ZTABSQ" in "".join(injected_by(sandbox.api.main_requests()[0], "SessionStart"))


def test_state_root_that_is_not_a_folder_leaves_the_session_alone(sandbox: Sandbox) -> None:
    memory_tool(sandbox, "install")
    memory_tool(sandbox, "add", "--type", "project", "Ports are fixed ZPORTQ.")
    root = state_dir(sandbox)
    shutil.rmtree(root)
    root.write_text("a file where memory-tool's folder should be\n", encoding="utf-8")

    _ok(run_claude_with_memory(sandbox, "hello"))

    assert FENCE_OPEN_TAG not in sandbox.api.main_requests()[0].text()
    # Claude Code's own memory folder was left as it was.
    assert (sandbox.project_dir() / "memory" / "MEMORY.md").is_file()
