"""The index is derived from the files: incremental, id-stable, and rebuilt when corrupt."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import write_memory

from memory_tool.base import paths
from memory_tool.store.index import open_index


def mem_dir(project: Path) -> Path:
    return paths.project_memory_dir(project)


def test_both_frontmatter_layouts_and_filename_prefix(project: Path) -> None:
    d = mem_dir(project)
    write_memory(d, "a.md", "Nested type layout.", type_="feedback", layout="metadata")
    write_memory(d, "b.md", "Top-level type layout.", type_="project", layout="top")
    write_memory(d, "user_role.md", "Type from the file-name prefix.", layout="none")
    (d / "MEMORY.md").write_text("- [a](a.md) — index, not a memory\n")
    with open_index() as idx:
        idx.refresh(project)
        types = {Path(e.path).name: e.type for e in idx.query()}
    assert types == {"a.md": "feedback", "b.md": "project", "user_role.md": "user"}


def test_broken_frontmatter_is_indexed_with_its_error(project: Path) -> None:
    d = mem_dir(project)
    d.mkdir(parents=True)
    (d / "feedback_x.md").write_text("---\nname: [unclosed\n---\nStill a rule worth keeping.\n")
    with open_index() as idx:
        idx.refresh(project)
        (e,) = idx.query()
    assert e.type == "feedback"
    assert "broken frontmatter" in e.error
    assert "Still a rule" in e.body


def test_ids_are_stable_across_rebuild_and_deletion_of_the_index(project: Path) -> None:
    d = mem_dir(project)
    for i in range(20):
        write_memory(d, f"project_{i}.md", f"Fact number {i}.", type_="project")
    with open_index() as idx:
        idx.refresh(project)
        before = {e.path: e.id for e in idx.query()}
        idx.rebuild(project)
        after_rebuild = {e.path: e.id for e in idx.query()}
    for suffix in ("", "-wal", "-shm"):
        Path(str(paths.index_file()) + suffix).unlink(missing_ok=True)
    with open_index() as idx:
        idx.refresh(project)
        after_delete = {e.path: e.id for e in idx.query()}
    assert before == after_rebuild == after_delete
    assert all(len(i) == 8 and i.startswith("p-") for i in before.values())


def test_frontmatter_id_wins(project: Path) -> None:
    write_memory(
        mem_dir(project), "project_x.md", "Has its own id.", type_="project", id="deploy-rule"
    )
    with open_index() as idx:
        idx.refresh(project)
        assert idx.get("deploy-rule").body.strip() == "Has its own id."


def test_a_second_file_claiming_a_taken_id_gets_its_own_everywhere(project: Path) -> None:
    """The id is settled inside the write, after the entry was rendered: the line, summary and
    error the index stores name the id the entry ends up with, not the one it asked for."""
    write_memory(mem_dir(project), "project_a.md", "First ZFIRSTQ.", type_="project", id="rule")
    with open_index() as idx:
        idx.refresh(project)
        write_memory(mem_dir(project), "project_b.md", "Second ZSECONDQ.", type_="project",
                     id="rule")  # fmt: skip
        idx.refresh(project)
        second = idx.get_by_path(str(mem_dir(project) / "project_b.md"))
        assert second.id != "rule" and idx.get("rule").body.strip() == "First ZFIRSTQ."
        assert second.line.startswith(f"- [{second.id}] ")
        assert second.summary.startswith(f"{second.id} ")
        assert "already used by" in second.error


def test_refresh_reads_only_new_and_changed_files(project: Path) -> None:
    d = mem_dir(project)
    keep = write_memory(d, "project_keep.md", "Original text.", type_="project")
    change = write_memory(d, "project_change.md", "Will change.", type_="project")
    gone = write_memory(d, "project_gone.md", "Will be deleted.", type_="project")
    with open_index() as idx:
        idx.refresh(project)
        # Same size and mtime, different bytes: a refresh that re-read contents would notice.
        st = keep.stat()
        keep.write_text(keep.read_text().replace("Original", "Sneakily"))
        os.utime(keep, ns=(st.st_atime_ns, st.st_mtime_ns))
        change.write_text(change.read_text().replace("Will change.", "Has changed now."))
        gone.unlink()
        write_memory(d, "project_new.md", "Brand new.", type_="project")
        stats = idx.refresh(project)
        bodies = {Path(e.path).name: e.body.strip() for e in idx.query()}
    assert [Path(p).name for p in stats.added] == ["project_new.md"]
    assert [Path(p).name for p in stats.changed] == ["project_change.md"]
    assert [Path(p).name for p in stats.removed] == ["project_gone.md"]
    assert bodies == {
        "project_keep.md": "Original text.",
        "project_change.md": "Has changed now.",
        "project_new.md": "Brand new.",
    }


def test_rows_of_an_older_parser_are_read_again_once(project: Path) -> None:
    # An upgrade that parses files differently must not keep old rows until each file changes.
    keep = write_memory(mem_dir(project), "project_keep.md", "Original text.", type_="project")
    with open_index() as idx:
        idx.refresh(project)
        (entry,) = idx.query()
        st = keep.stat()  # same size and mtime, different bytes: only a re-read notices
        keep.write_text(keep.read_text().replace("Original", "Reparsed"))
        os.utime(keep, ns=(st.st_atime_ns, st.st_mtime_ns))
        idx.set_meta("parser_version", "1")  # as an older release left it
        stats = idx.refresh(project)
        assert [Path(p).name for p in stats.changed] == ["project_keep.md"]
        assert [e.body.strip() for e in idx.query()] == ["Reparsed text."]
        assert idx.query()[0].id == entry.id  # ids are kept
        assert not idx.refresh(project).touched  # once


def test_corrupt_index_is_moved_aside_and_rebuilt(project: Path) -> None:
    write_memory(mem_dir(project), "project_a.md", "Survives corruption.", type_="project")
    with open_index() as idx:
        idx.refresh(project)
    db = paths.index_file()
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    with open_index() as idx:
        idx.refresh(project)
        assert [e.body.strip() for e in idx.query()] == ["Survives corruption."]
    assert list(db.parent.glob("index.db.corrupt-*"))


def test_index_and_memory_files_are_private(project: Path) -> None:
    from memory_tool.store.palace import add_memory

    with open_index() as idx:
        e = add_memory(idx, "A private fact.", type_="user", cwd=project)
    assert paths.index_file().stat().st_mode & 0o777 == 0o600
    assert Path(e.path).stat().st_mode & 0o777 == 0o600
    assert Path(e.path).parent.stat().st_mode & 0o777 == 0o700


def test_palace_sources_get_their_types_and_rooms(project: Path) -> None:
    root = paths.state_root()
    write_memory(root / "identity", "me.md", "I maintain the billing stack.")
    write_memory(root / "rooms" / "database", "pool.md", "Pool size is 20 per worker.")
    write_memory(root / "wiki", "adr-1.md", "We chose Postgres over MySQL.")
    with open_index() as idx:
        idx.refresh(project)
        got = {Path(e.path).name: (e.type, e.room, e.room_origin) for e in idx.query()}
    assert got["me.md"][0] == "user"
    assert got["pool.md"] == ("note", "database", "folder")
    assert got["adr-1.md"][0] == "wiki"


def test_prefix_range_holds_exactly_the_paths_under_a_folder() -> None:
    from memory_tool.store.index import prefix_range

    low, high = prefix_range("/a/mem/")
    inside = ["/a/mem/x.md", "/a/mem/sub/y.md", "/a/mem/\U0010ffff.md"]
    outside = ["/a/mem", "/a/mem0/x.md", "/a/mem-b/x.md", "/a/me/x.md", "/b/mem/x.md"]
    assert all(low <= p < high for p in inside)
    assert not any(low <= p < high for p in outside)


def test_lone_surrogates_in_frontmatter_values_do_not_stop_the_index(project: Path) -> None:
    # YAML's "\ud800" escape makes a lone surrogate, which SQLite cannot store (found by the
    # fuzzing in test_faults.py once a wiki record's project: was read).
    wiki = paths.state_root() / "wiki"
    wiki.mkdir(parents=True)
    (wiki / "odd.md").write_text(
        '---\nname: odd\nproject: "p\\ud800x"\nroom: "r\\udfffy"\nid: "\\ud800"\n---\nOdd text.\n'
    )
    with open_index() as idx:
        idx.refresh(project)
        (entry,) = idx.query("source = 'wiki'")
    assert (entry.project, entry.room, entry.body.strip()) == ("p?x", "r?y", "Odd text.")


def test_the_index_and_sync_walk_a_room_alike(project: Path, tmp_path: Path) -> None:
    """One walk (``tree.walk``) for both: neither enters a dot folder or a linked folder; a
    linked file is a memory kept elsewhere for the index, but never travels."""
    from memory_tool.sync.layout import local_files
    from memory_tool.sync.projects import Projects

    room = paths.palace_dir("rooms") / "deploy"
    write_memory(room, "plain.md", "Plain ZPLAINQ.", type_="note")
    write_memory(room / "nested" / "deeper", "nested.md", "Nested ZNESTQ.", type_="note")
    write_memory(room / ".hidden", "hidden.md", "Hidden ZHIDQ.", type_="note")
    elsewhere = write_memory(tmp_path / "elsewhere", "kept.md", "Kept ZKEPTQ.", type_="note")
    (room / "linked.md").symlink_to(elsewhere)
    (room / "linked-folder").symlink_to(elsewhere.parent)

    with open_index() as idx:
        idx.refresh(project)
        indexed = {Path(p).relative_to(room).as_posix() for p in idx.paths_under(str(room))}
    travelling = {rel for rel in local_files(Projects()) if rel.startswith("rooms/deploy/")}

    assert indexed == {"plain.md", "nested/deeper/nested.md", "linked.md"}
    assert travelling == {"rooms/deploy/plain.md", "rooms/deploy/nested/deeper/nested.md"}


def test_the_write_ahead_log_is_cut_back_after_a_checkpoint(project: Path) -> None:
    """A connection kept open (the hook server's) used to leave the log at its largest size:
    about 4 MB after a week of use, as large as the index."""
    from memory_tool.store.index import WAL_SIZE_LIMIT_BYTES

    d = mem_dir(project)
    for n in range(400):  # a first index of a few hundred memories: a log of several MB
        write_memory(d, f"m{n:03}.md", f"Fact {n}: " + "words of a longer memory " * 60)
    wal = paths.index_file().with_name("index.db-wal")
    with open_index() as idx:
        idx.conn.execute("PRAGMA wal_autocheckpoint=0")  # the log only grows
        idx.refresh(project)
        grown = wal.stat().st_size
        idx.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        idx.conn.execute("CREATE TABLE IF NOT EXISTS t_probe(x)")  # the next write restarts it
        assert grown > 2 * WAL_SIZE_LIMIT_BYTES
        assert wal.stat().st_size <= WAL_SIZE_LIMIT_BYTES
