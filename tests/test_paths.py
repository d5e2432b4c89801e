"""Project folder naming must match Claude Code's, or we read the wrong memory folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_tool.base import paths


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/home/user/work/my-repo", "-home-user-work-my-repo"),
        ("/r/My Repo.v2", "-r-My-Repo-v2"),
        ("/tmp/a_b/c.d e", "-tmp-a-b-c-d-e"),
        ("/srv/ünï", "-srv--n-"),
    ],
)
def test_sanitize_path_matches_claude_code(path: str, key: str) -> None:
    assert paths.sanitize_path(path) == key


def test_long_paths_are_cut_and_hashed() -> None:
    long = "/x" * 150
    key = paths.sanitize_path(long)
    assert key.startswith("-x-x")
    assert len(key) > paths.MAX_PROJECT_KEY_CHARS
    assert key[: paths.MAX_PROJECT_KEY_CHARS] == paths.sanitize_path(long)[:200]
    assert paths.sanitize_path(long + "y") != key


def test_subfolder_maps_to_git_root(tmp_path: Path) -> None:
    repo = tmp_path / "My Repo.v2"
    (repo / ".git").mkdir(parents=True)
    sub = repo / "sub dir"
    sub.mkdir()
    assert paths.project_root(sub) == repo
    assert paths.project_key(sub) == paths.sanitize_path(str(repo))


def test_linked_worktree_maps_to_main_repository(tmp_path: Path) -> None:
    main = tmp_path / "main"
    gitdir = main / ".git" / "worktrees" / "feature"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    wt = tmp_path / "feature-wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {gitdir}\n")
    (wt / "pkg").mkdir()
    assert paths.project_root(wt / "pkg") == main
    assert paths.project_key(wt) == paths.project_key(main)


def test_outside_git_uses_the_directory(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    assert paths.project_root(plain) == plain


def test_roots_follow_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert paths.config_dir() == tmp_path / "cfg"
    assert paths.state_root() == tmp_path / "cfg" / "memory-tool"
    monkeypatch.setenv("MEMORY_TOOL_HOME", str(tmp_path / "state"))
    assert paths.state_root() == tmp_path / "state"
    assert paths.index_file() == tmp_path / "state" / "index.db"


def test_long_path_hash_matches_the_binary() -> None:
    # Worked example read from Claude Code 2.1.332 (tests/e2e checks the rule against the binary).
    path = "/home/user/" + "projects/" * 25 + "my-app"
    key = paths.sanitize_path(path)
    assert key == paths.sanitize_path(path)[:200] + "-9uid66"
    assert len(key) == 207


def test_characters_outside_the_bmp_take_two_dashes() -> None:
    assert paths.sanitize_path("/a/😀b") == "-a---b"


def test_cut_keys_find_a_folder_an_older_version_named(tmp_path: Path) -> None:
    path = "/home/user/" + "projects/" * 25 + "my-app"
    key = paths.sanitize_path(path)
    older = paths.projects_dir() / (key[:200] + "-oldhash")
    (older / "memory").mkdir(parents=True)
    assert paths.project_folder_name(key) == older.name


def test_a_project_root_is_kept_for_one_call_only(tmp_path: Path) -> None:
    # A hook call asks for its folder's root several times and pays for the walk once; the next
    # call sees what changed on disk (here: `git init` in a parent folder).
    sub = tmp_path / "repo" / "src"
    sub.mkdir(parents=True)
    with paths.one_call():
        assert paths.project_root(sub) == sub.resolve()
        (tmp_path / "repo" / ".git").mkdir()
        assert paths.project_root(sub) == sub.resolve()  # the same call: the same answer
    assert paths.project_root(sub) == (tmp_path / "repo").resolve()


def test_roots_follow_environment_changes_between_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("MEMORY_TOOL_HOME", raising=False)
    for home in ("a", "b", "a"):
        monkeypatch.setenv("HOME", str(tmp_path / home))
        assert paths.config_dir() == tmp_path / home / ".claude"
        assert paths.state_root() == tmp_path / home / ".claude" / "memory-tool"
