"""Changing a memory through the library (store/edit.py), as the web UI does: the file is the
truth (written atomically, then indexed again), what a person types is redacted, untouched text
stays byte for byte, bad input is refused with a message and changes nothing, and only files in
the memory folders are touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_tool.base import paths
from memory_tool.base.errors import MemoryToolError
from memory_tool.recall.wake import build_brief
from memory_tool.store import edit
from memory_tool.store.index import open_index
from memory_tool.store.palace import add_memory, init_palace

FAKE_KEY = "sk-ant-api03-" + "A" * 40  # shaped like an Anthropic key: redacted on the way in


@pytest.fixture
def palace(project: Path) -> Path:
    init_palace()
    return project


def _add(project: Path, text: str, **kw: object) -> str:
    with open_index() as idx:
        return add_memory(idx, text, cwd=project, **kw).id  # type: ignore[arg-type]


def test_saving_new_text_rewrites_the_file_redacts_it_and_reindexes(palace: Path) -> None:
    mid = _add(palace, "The deploy script lives in ops/deploy.sh.", type_="project")
    with open_index() as idx:
        before = edit.open_memory(idx, mid)
        path = Path(before.entry.path)
        head_before = before.frontmatter
        new = f"Deploys run through the pipeline. <private>my pager pin 4242</private> {FAKE_KEY}"
        entry = edit.save_memory(idx, mid, body=new, version=before.version)
        text = path.read_text()
        assert "Deploys run through the pipeline." in text
        assert "4242" not in text and FAKE_KEY not in text  # private span dropped, key redacted
        assert "[REDACTED" in text
        assert text.startswith(f"---\n{head_before}\n---\n")  # frontmatter untouched
        assert entry.id == mid and "pipeline" in entry.body
        assert "pipeline" in idx.get(mid).body  # the index followed the file
        assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_file_changed_since_it_was_opened_is_not_overwritten(palace: Path) -> None:
    mid = _add(palace, "Staging is at staging.internal.", type_="project")
    with open_index() as idx:
        opened = edit.open_memory(idx, mid)
        path = Path(opened.entry.path)
        path.write_text(path.read_text().replace("staging.internal", "stage.example"))
        with pytest.raises(MemoryToolError, match="changed on disk since it was opened"):
            edit.save_memory(idx, mid, body="Something else entirely.", version=opened.version)
    assert "stage.example" in path.read_text()


@pytest.mark.parametrize(
    ("frontmatter", "message"),
    [
        ("name: x\ndescription: [unclosed", "not valid YAML"),
        ("- just\n- a list", "must be a mapping"),
        ("name: x\ncreated: last tuesday", "cannot be used"),
        ("name: x\nimportance: 11", "cannot be used"),
    ],
)
def test_bad_frontmatter_is_refused_and_the_file_is_kept(
    palace: Path, frontmatter: str, message: str
) -> None:
    mid = _add(palace, "Run the linters before pushing.", type_="feedback")
    with open_index() as idx:
        path = Path(idx.get(mid).path)
        original = path.read_bytes()
        with pytest.raises(MemoryToolError, match=message):
            edit.save_memory(idx, mid, frontmatter=frontmatter)
    assert path.read_bytes() == original


def test_valid_frontmatter_changes_what_the_index_knows(palace: Path) -> None:
    mid = _add(palace, "Use ruff for linting.", type_="project")
    with open_index() as idx:
        mf = edit.open_memory(idx, mid)
        entry = edit.save_memory(idx, mid, frontmatter=mf.frontmatter + "\nimportance: 5")
        assert entry.importance == 5
        assert mf.body == edit.open_memory(idx, mid).body


def test_empty_text_and_a_copy_of_another_memory_are_refused(palace: Path) -> None:
    a = _add(palace, "Tests run with pytest -q.", type_="project")
    _add(palace, "Docs are built with mkdocs.", type_="project")
    with open_index() as idx:
        with pytest.raises(MemoryToolError, match="nothing left to save"):
            edit.save_memory(idx, a, body="<private>only this</private>")
        with pytest.raises(MemoryToolError, match="already saved as"):
            edit.save_memory(idx, a, body="Docs are built with mkdocs.")
        assert "pytest" in Path(idx.get(a).path).read_text()


def test_pin_and_unpin_change_one_line_and_the_brief(palace: Path) -> None:
    # A note: a project's reference would load as L2's background unpinned too.
    mid = _add(palace, "Release notes go in CHANGES.md.", type_="note", room="documentation")
    with open_index() as idx:
        path = Path(idx.get(mid).path)
        before = path.read_text()
        assert mid not in build_brief(idx, palace).text
        assert edit.set_pinned(idx, mid, True).always
        assert path.read_text().count("\n") == before.count("\n") + 1
        assert "always: true" in path.read_text()
        assert mid in build_brief(idx, palace).text  # a pin is loaded at every session start
        assert not edit.set_pinned(idx, mid, False).always
        assert path.read_text() == before
        assert mid not in build_brief(idx, palace).text


def test_a_room_memory_moves_to_its_new_rooms_folder_with_its_memory_md_line(
    palace: Path,
) -> None:
    mid = _add(palace, "Login tokens are stored hashed.", type_="note", room="database")
    with open_index() as idx:
        old = Path(idx.get(mid).path)
        moved = edit.move_to_room(idx, mid, "authentication")
    new = Path(moved.path)
    assert not old.exists() and new.exists()
    assert new.parent == paths.palace_dir("rooms") / "authentication"
    assert moved.room == "authentication" and "room: authentication" in new.read_text()
    assert old.name not in (old.parent / "MEMORY.md").read_text()
    assert f"]({new.name})" in (new.parent / "MEMORY.md").read_text()
    with open_index() as idx:
        assert idx.entries(path=str(old)) == []
        assert idx.get(moved.id).room == "authentication"


def test_a_project_memory_stays_in_its_project_and_only_its_room_changes(palace: Path) -> None:
    mid = _add(palace, "Use alembic for every schema change.", type_="project")
    with open_index() as idx:
        path = Path(idx.get(mid).path)
        moved = edit.move_to_room(idx, mid, "database")
        assert moved.id == mid and moved.path == str(path) and moved.room == "database"
        assert moved.room_origin == "frontmatter"
        with pytest.raises(MemoryToolError, match="background room"):
            edit.move_to_room(idx, mid, "general-programming")
        with pytest.raises(MemoryToolError, match="did you mean 'database'"):
            edit.move_to_room(idx, mid, "databse")
        with pytest.raises(MemoryToolError, match="not a room name"):
            edit.move_to_room(idx, mid, "../../etc")


def test_archive_moves_the_file_out_of_every_loaded_folder(palace: Path) -> None:
    mid = _add(palace, "The old VPN config is in vpn/legacy.ovpn.", type_="project")
    with open_index() as idx:
        src = Path(idx.get(mid).path)
        dest = edit.archive_memory(idx, mid)
        assert dest.is_file() and not src.exists()
        assert dest.is_relative_to(edit.archive_dir())
        assert "legacy.ovpn" in dest.read_text()
        assert src.name not in (src.parent / "MEMORY.md").read_text()
        idx.refresh(palace)
        assert idx.entries(path=str(src)) == [] and idx.entries(path=str(dest)) == []


def test_only_files_inside_the_memory_folders_can_be_changed(palace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: outside\n---\n\nNot a memory of ours.\n")
    link = paths.palace_dir("rooms") / "database" / "sneaky.md"
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, link)  # a link in a room folder that points out of the palace
    (palace / "thoughts").mkdir()
    (palace / "thoughts" / "CONTEXT.md").write_text("Project context.\n")
    with open_index() as idx:
        idx.refresh(palace)
        sneaky = idx.entries(path=str(link))
        context = idx.entries(source="context")
        assert sneaky and context
        with pytest.raises(MemoryToolError, match="not inside the memory folders"):
            edit.save_memory(idx, sneaky[0].id, body="overwritten")
        with pytest.raises(MemoryToolError, match="not a memory file"):
            edit.archive_memory(idx, context[0].id)
        with pytest.raises(MemoryToolError, match="not a memory id"):
            edit.open_memory(idx, "../../../etc/passwd")
    assert outside.read_text().endswith("Not a memory of ours.\n")
    (paths.projects_dir() / "k" / "memory").mkdir(parents=True)
    assert edit.within_roots(paths.palace_dir("wiki") / "x.md")
    assert edit.within_roots(paths.projects_dir() / "k" / "memory" / "x.md")
    assert not edit.within_roots(paths.projects_dir() / "k" / "session.jsonl")
    assert not edit.within_roots(paths.palace_dir("wiki") / ".." / "config.yaml")
    assert not edit.within_roots(paths.palace_dir("inbox") / "i-123456.md")


def test_a_frontmatter_that_never_closes_is_not_rewritten(palace: Path) -> None:
    folder = paths.palace_dir("rooms") / "testing"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "broken.md"
    path.write_text("---\nname: broken\ndescription: flaky tests\n\nRetry flaky tests once.\n")
    with open_index() as idx:
        idx.refresh(palace)
        (entry,) = idx.entries(path=str(path))
        with pytest.raises(MemoryToolError, match="never closes"):
            edit.set_pinned(idx, entry.id, True)
    assert "always" not in path.read_text()


def test_a_memory_in_a_folder_autoMemoryDirectory_names_can_be_changed_and_archived(
    palace: Path, tmp_path: Path
) -> None:
    """Claude Code may keep a project's memory elsewhere (autoMemoryDirectory): that folder is
    a memory folder like any other, for editing as for reading."""
    moved = tmp_path / "team-memory"
    (palace / ".claude").mkdir()
    (palace / ".claude" / "settings.json").write_text(
        '{"autoMemoryDirectory": "%s"}' % moved  # noqa: UP031 - JSON braces
    )
    mid = _add(palace, "Releases are cut on Mondays.", type_="project")
    with open_index() as idx:
        idx.refresh_for_wake(palace)  # a session there registers the folder
        path = Path(idx.get(mid).path)
        assert path.parent == moved
        assert edit.set_pinned(idx, mid, True).always
        dest = edit.archive_memory(idx, mid)
    assert not path.exists() and dest.is_file()
    assert dest.is_relative_to(edit.archive_dir() / "elsewhere")
