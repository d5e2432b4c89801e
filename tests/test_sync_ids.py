"""A synced memory has one id on every machine: a project's memory files and cold summaries are
seeded with the project's machine-independent id (the one sync keys them by), not with this
machine's path key for the project. The id a machine gave a file before that id was known keeps
finding it (`get`, `show`), also after the index is rebuilt."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from machines import Machine, bare_repo, memory_file
from test_sync_projects import _key, clone_at, transcript


def ids_by_name(m: Machine) -> dict[str, str]:
    """File name -> id of every memory file and cold summary the machine's index holds."""
    m.run("index")
    with sqlite3.connect(m.state / "index.db") as conn:
        rows = conn.execute(
            "SELECT path, id FROM entries WHERE source IN ('claude', 'cold', 'room')"
        ).fetchall()
    return {Path(path).name: entry_id for path, entry_id in rows}


def test_a_synced_memory_has_the_same_id_on_both_machines(tmp_path: Path) -> None:
    code = bare_repo(tmp_path / "code" / "shop.git")
    laptop, desktop = Machine(tmp_path, "laptop"), Machine(tmp_path, "desktop")
    clone_a = clone_at(code, laptop.home / "src" / "shop", str(code))
    clone_b = clone_at(code, desktop.home / "work" / "shop", str(code))
    remote = bare_repo(tmp_path / "memory.git")
    laptop.run("add", "--cwd", str(clone_a), "--type", "feedback", "Never deploy on Fridays.")
    laptop.write(
        f"cold/{_key(clone_a)}/2026-11-28-s1.md",
        memory_file("session", "Moved checkout to the new payment API."),
    )
    laptop.run("add", "--room", "database", "Reports read from the replica.")
    laptop.run("sync", "init", str(remote), cwd=clone_a)
    transcript(desktop, clone_b, "desktop-session")
    desktop.run("sync", "init", str(remote), cwd=clone_b)
    desktop.run("add", "--cwd", str(clone_b), "--type", "project", "The cutover is 2026-12-15.")
    desktop.run("sync")
    laptop.run("sync")
    on_a, on_b = ids_by_name(laptop), ids_by_name(desktop)
    shared = sorted((set(on_a) & set(on_b)) - {"MEMORY.md"})
    assert len(shared) == 4  # two project memories, a cold summary, a room memory
    assert {name: on_a[name] for name in shared} == {name: on_b[name] for name in shared}
    # An id the desktop hands out (an MCP answer, a handoff) names the memory on the laptop.
    hit = desktop.json("search", "cutover", cwd=clone_b)[0]
    assert "cutover is 2026-12-15" in laptop.run("get", hit["id"]).stdout
    cold_id = on_b["2026-11-28-s1.md"]
    assert cold_id.startswith("c-") and "payment API" in laptop.run("show", cold_id).stdout


def test_an_id_given_before_the_project_id_was_known_still_finds_its_memory(
    tmp_path: Path,
) -> None:
    code = bare_repo(tmp_path / "code" / "api.git")
    laptop = Machine(tmp_path, "laptop")
    clone = clone_at(code, laptop.home / "api", str(code))
    laptop.run("add", "--cwd", str(clone), "--type", "feedback", "Version every endpoint.")
    [hit] = laptop.json("search", "version endpoint", cwd=clone)
    before = hit["id"]  # what a handoff or cold summary written today names
    laptop.run("sync", "init", str(bare_repo(tmp_path / "memory.git")), cwd=clone)
    [hit] = laptop.json("search", "version endpoint", cwd=clone)
    after = hit["id"]
    assert after != before and after[0] == before[0] == "f"
    for command in ("get", "show"):
        out = laptop.run(command, before).stdout
        assert "Version every endpoint" in out and f"[{after}]" in out
    # Derived from where the file lives, so a rebuilt (or deleted) index still knows it.
    laptop.run("index", "--rebuild")
    assert "Version every endpoint" in laptop.run("get", before).stdout
    (laptop.state / "index.db").unlink()
    assert "Version every endpoint" in laptop.run("get", before).stdout
    assert json.loads(laptop.run("get", after, "--json").stdout)[0]["id"] == after
