"""What memory cannot read, as a user who is not root (root reads everything): a file without
read permission, a room folder without it, a file far over the size of a memory. None of them
reaches the context half-read (a name without its text, a first part passing for the whole),
and `doctor` names each for what it is."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import HOOK_SCRIPT, write_memory

from memory_tool.base import paths
from memory_tool.store import entry, index

BIG_FILE_BYTES = 29 * 1024 * 1024


def as_user() -> list[str]:
    """The prefix that runs a command as a user who is not root (nothing when the tests already
    run as one)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("the tests run as root and setpriv (util-linux) is missing: permissions "
                    "cannot be tested as root, who reads every file")  # fmt: skip
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A HOME the unprivileged user owns (pytest's tmp_path is root's alone)."""
    as_user()  # skips when the tests cannot run anything as another user
    base = Path(tempfile.mkdtemp(prefix="memory-tool-user-"))
    base.chmod(0o755)
    monkeypatch.setenv("HOME", str(base / "home"))
    (base / "home").mkdir()
    try:
        yield base
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)


def run(args: list[str], base: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "nobody:nogroup", str(base)], check=True)
    return subprocess.run([*as_user(), *args], input=stdin, capture_output=True, timeout=120,
                          env=dict(os.environ), cwd=base)  # fmt: skip


def hook(event: str, base: Path, project: Path, prompt: str = "") -> str:
    # A session each: what one prompt gave, the next would not repeat.
    payload = {"session_id": f"u-{abs(hash(prompt))}", "cwd": str(project),
               "source": "startup", "prompt": prompt, "hook_event_name": event}  # fmt: skip
    proc = run([sys.executable, "-S", str(HOOK_SCRIPT), event], base, json.dumps(payload).encode())
    assert proc.returncode == 0
    if not proc.stdout.strip():
        return ""
    text: str = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    return text


def test_unreadable_and_oversized_memory_is_never_half_injected_and_doctor_names_it(
    home: Path,
) -> None:
    project = home / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    own = paths.project_memory_dir(project)
    write_memory(own, "project_deploys.md", "Deploys go out on Tuesdays ZOKQ.", type_="project")
    locked = write_memory(own, "project_vault.md", "The vault key rotates monthly ZLOCKQ.",
                          type_="project", title="vault rotation")  # fmt: skip
    big = own / "project_dump.md"
    with open(big, "wb") as fh:
        fh.write(b"---\nname: build dump\ndescription: Build dump ZBIGQ\nmetadata:\n"
                 b"  type: project\n---\nThe build dump starts here ZBIGQ.\n")  # fmt: skip
        fh.truncate(BIG_FILE_BYTES)
    rooms = paths.palace_dir("rooms")
    write_memory(rooms / "billing", "invoices.md", "Invoices are billed in cents ZBILLQ.")
    write_memory(rooms / "authentication", "tokens.md", "Login tokens rotate hourly ZAUTHQ.")
    run([sys.executable, "-c", "from memory_tool.cli.main import main; main()", "init"], home)
    locked.chmod(0)
    (rooms / "billing").chmod(0)
    cli = [sys.executable, "-c", "from memory_tool.cli.main import main; main()"]
    run([*cli, "index", "--cwd", str(project)], home)  # what the background refresh does

    brief = hook("SessionStart", home, project)
    assert "ZOKQ" in brief
    assert "vault" not in brief.lower() and "ZLOCKQ" not in brief  # no header without its text
    assert "ZBIGQ" not in brief and "dump" not in brief.lower()  # no first part passing for all
    for prompt in (
        "How does the login token refresh work, and how are invoices billed?",
        "What did we decide last time about the vault rotation and the build dump?",
    ):
        said = hook("UserPromptSubmit", home, project, prompt)
        assert "vault" not in said.lower() and "dump" not in said.lower(), said
    assert "ZAUTHQ" in hook("UserPromptSubmit", home, project, "How does the login token work?")

    proc = run([*cli, "doctor", "--json", "--no-duplicates", "--cwd", str(project)], home)
    findings = {f.get("path"): f for f in json.loads(proc.stdout)["findings"]}
    assert findings[str(locked)]["check"] == "file"
    assert findings[str(locked)]["message"].startswith("unreadable: permission denied")
    assert findings[str(rooms / "billing")]["check"] == "folder"
    assert findings[str(rooms / "billing")]["message"].startswith(
        "unreadable folder: permission denied"
    )
    assert findings[str(big)]["check"] == "too_large"
    assert findings[str(big)]["message"].startswith("too large: 29 MB, over the 256 KB")
    summary = json.loads(proc.stdout)["summary"]
    assert "unreadable file" in summary and "unreadable folder" in summary
    assert "file too large" in summary


def test_the_index_keeps_every_unusable_kind_out() -> None:
    assert index.UNUSABLE_ERRORS == entry.UNUSABLE
