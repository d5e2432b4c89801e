"""Project memory follows the repository: Claude Code keys a project's memory folder by its
absolute path, sync keys it by the repository's normalised origin URL (or an id the user sets),
so one repository cloned at two paths on two machines shares its memory. And a network remote
on 127.0.0.1 (git daemon), so a URL is proven, not only file paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from machines import Machine, bare_repo, git, git_daemon, memory_file

from memory_tool.sync.projects import folder_name, id_of_folder, normalise_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("git@github.com:Acme/Shop.git", "github.com/acme/shop"),
        ("https://github.com/acme/shop", "github.com/acme/shop"),
        ("https://dana:ghp_secret123@github.com/acme/shop.git/", "github.com/acme/shop"),
        ("ssh://git@github.com:22/acme/shop.git", "github.com/acme/shop"),
        ("git://127.0.0.1:9418/team/palace.git", "127.0.0.1/team/palace"),
        ("file:///srv/git/shop.git", "local/srv/git/shop"),
        ("/srv/git/shop.git", "local/srv/git/shop"),
        ("https://[::1]:8443/acme/shop", "[::1]/acme/shop"),
    ],
)
def test_every_spelling_of_a_remote_gives_one_id(url: str, expected: str) -> None:
    assert normalise_url(url) == expected
    assert id_of_folder(folder_name(expected)) == expected
    assert "/" not in folder_name(expected)


def test_a_relative_path_remote_is_resolved_against_its_repository(tmp_path: Path) -> None:
    assert normalise_url("../shop.git", tmp_path / "src" / "x") == f"local{tmp_path}/src/shop"


def clone_at(remote: Path, where: Path, url: str) -> Path:
    where.parent.mkdir(parents=True, exist_ok=True)
    git("clone", "-q", url, str(where))
    return where


def transcript(m: Machine, project: Path, session: str) -> None:
    """A Claude Code session in ``project`` (what tells memory-tool which folder a key is)."""
    from memory_tool.base.paths import sanitize_path

    folder = m.claude / "projects" / sanitize_path(str(project.resolve()))
    folder.mkdir(parents=True, exist_ok=True)
    line = {"type": "user", "cwd": str(project), "sessionId": session, "message": {}}
    (folder / f"{session}.jsonl").write_text(json.dumps(line) + "\n")


def test_one_repository_cloned_at_two_paths_shares_its_project_memory(tmp_path: Path) -> None:
    code = bare_repo(tmp_path / "code" / "shop.git")
    a, b = Machine(tmp_path, "laptop"), Machine(tmp_path, "desktop")
    # Two spellings of the origin, two absolute paths: two different Claude Code keys.
    clone_a = clone_at(code, a.home / "src" / "shop", f"file://{code}")
    clone_b = clone_at(code, b.home / "work" / "shop-checkout", str(code))
    memory = bare_repo(tmp_path / "memory.git")
    a.run("add", "--cwd", str(clone_a), "--type", "feedback", "Never deploy the shop on Fridays.")
    a.write(
        "cold/" + _key(clone_a) + "/2026-11-28-s1.md",
        memory_file("session", "Moved checkout to the new payment API."),
    )
    a.run("sync", "init", str(memory), cwd=clone_a)  # run inside the project
    transcript(b, clone_b, "b-session")  # B has used Claude Code in its clone
    b.run("sync", "init", str(memory))
    key_a, key_b = _key(clone_a), _key(clone_b)
    assert key_a != key_b
    arrived = b.claude / "projects" / key_b / "memory"
    texts = "\n".join(p.read_text() for p in arrived.glob("*.md"))
    assert "Never deploy the shop on Fridays" in texts
    assert (arrived / "MEMORY.md").exists()
    cold = b.state / "cold" / key_b / "2026-11-28-s1.md"
    assert "new payment API" in cold.read_text()
    # Claude Code's brief in B's clone has A's rule.
    assert "Never deploy the shop on Fridays" in b.run("wake", "--cwd", str(clone_b)).stdout
    # And back: B's rule reaches A's folder for the same repository.
    b.run("add", "--cwd", str(clone_b), "--type", "project", "The shop's cutover is 2026-12-15.")
    b.run("sync")
    a.run("sync", cwd=clone_a)
    mine = a.claude / "projects" / key_a / "memory"
    assert "cutover is 2026-12-15" in "\n".join(p.read_text() for p in mine.glob("*.md"))
    tree = git("ls-tree", "-r", "--name-only", "HEAD", cwd=memory)
    assert f"projects/{folder_name(normalise_url(str(code)))}/memory/" in tree
    assert key_a not in tree and key_b not in tree  # no machine's path in the repository


def test_a_project_without_an_origin_syncs_under_the_id_set_for_it(tmp_path: Path) -> None:
    a, b = Machine(tmp_path, "laptop"), Machine(tmp_path, "desktop")
    notes_a, notes_b = a.home / "notes", b.home / "Documents" / "notes"
    for folder in (notes_a, notes_b):
        folder.mkdir(parents=True)
        git("init", "-q", str(folder))  # a repository with no remote at all
    memory = bare_repo(tmp_path / "memory.git")
    a.run("add", "--cwd", str(notes_a), "The notes repo uses one file per week.")
    a.run("sync", "init", str(memory), cwd=notes_a)
    status = a.run("sync", "status").stdout
    assert "stay here" in status and _key(notes_a) in status
    for m, folder in ((a, notes_a), (b, notes_b)):
        assert "syncs as 'weekly-notes'" in m.run("sync", "link", "weekly-notes", cwd=folder).stdout
    a.run("sync", cwd=notes_a)
    b.run("sync", "init", str(memory), cwd=notes_b)
    arrived = b.claude / "projects" / _key(notes_b) / "memory"
    assert "one file per week" in "\n".join(p.read_text() for p in arrived.glob("*.md"))


def test_sync_over_a_git_daemon_on_localhost(tmp_path: Path) -> None:
    served = tmp_path / "served"
    bare_repo(served / "palace.git")
    a, b = Machine(tmp_path, "laptop"), Machine(tmp_path, "desktop")
    for m in (a, b):
        m.run("init")
    with git_daemon(served) as base:
        url = f"{base}/palace.git"
        a.run("add", "--room", "authentication", "Refresh tokens rotate on every use.")
        a.run("sync", "init", url)
        b.run("sync", "init", url)
        assert "rotate on every use" in "\n".join(b.texts("rooms/authentication").values())
        b.run("add", "--room", "authentication", "Access tokens live 15 minutes.")
        b.run("sync")
        a.run("sync")
        assert "15 minutes" in "\n".join(a.texts("rooms/authentication").values())
    # The daemon is gone: a clear message, the change kept for the next sync.
    a.run("add", "--room", "authentication", "MFA is mandatory for staff.")
    failed = a.run("sync", ok=False)
    assert failed.returncode == 1
    assert f"could not reach the remote {url}" in failed.stderr
    assert "ahead 1" in a.run("sync", "status").stdout


def _key(folder: Path) -> str:
    from memory_tool.base.paths import sanitize_path

    return sanitize_path(str(folder.resolve()))


def test_memory_waiting_for_a_folder_arrives_once_the_project_is_known_here(
    tmp_path: Path,
) -> None:
    code = bare_repo(tmp_path / "code" / "api.git")
    a, b = Machine(tmp_path, "laptop"), Machine(tmp_path, "desktop")
    clone_a = clone_at(code, a.home / "api", str(code))
    clone_b = clone_at(code, b.home / "projects" / "api", str(code))
    memory = bare_repo(tmp_path / "memory.git")
    a.run("add", "--cwd", str(clone_a), "--type", "project", "The API freezes on 2026-12-20.")
    a.run("sync", "init", str(memory), cwd=clone_a)
    out = b.run("sync", "init", str(memory)).stdout  # B has never opened its clone
    assert "not on this machine yet" in out
    assert "waiting for a folder here" in b.run("sync", "status").stdout
    assert not (b.claude / "projects" / _key(clone_b)).exists()
    # A sync started inside the clone (as the session-start pull is) maps it; the remote has
    # nothing new, yet what was waiting arrives.
    b.run("sync", cwd=clone_b)
    arrived = b.claude / "projects" / _key(clone_b) / "memory"
    assert "freezes on 2026-12-20" in "\n".join(p.read_text() for p in arrived.glob("*.md"))
    assert "waiting for a folder here" not in b.run("sync", "status").stdout


def test_a_password_in_the_remote_url_is_never_shown(tmp_path: Path) -> None:
    from machines import free_port

    m = Machine(tmp_path, "laptop")
    m.run("add", "--room", "api", "Pagination is cursor-based.")
    url = f"http://dana:hunter2-pw@127.0.0.1:{free_port()}/memory.git"  # nothing listens
    failed = m.run("sync", "init", url, ok=False)
    assert failed.returncode == 1 and "could not reach the remote" in failed.stderr
    assert "hunter2" not in failed.stderr + failed.stdout
    status = m.run("sync", "status").stdout
    assert "dana:***@127.0.0.1" in status and "hunter2" not in status
    assert "hunter2" not in (m.state / "sync" / "personal.json").read_text()
