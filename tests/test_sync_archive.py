"""Export and import: a move without a remote. What a sync would send goes into one .tar.gz,
redacted the same way; import never overwrites and says what it skipped."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

from machines import Machine, git, memory_file

from memory_tool.base.paths import sanitize_path


def test_a_move_by_archive_brings_everything_and_overwrites_nothing(tmp_path: Path) -> None:
    old, new = Machine(tmp_path, "old"), Machine(tmp_path, "new")
    repo = tmp_path / "code" / "shop"
    repo.mkdir(parents=True)
    git("init", "-q", str(repo))
    git("remote", "add", "origin", "git@github.com:acme/shop.git", cwd=repo)
    secret = "sk_live_51HqLyjWDarjtT1zdp7dcXhGbNpxsVbZq"
    old.run("add", "--room", "database", "Backups run at 03:00 and are kept 30 days.")
    old.run("add", "--cwd", str(repo), "--type", "feedback", "Run the linter before committing.")
    old.write("identity/me.md", memory_file("me", "Dana prefers terse answers."))
    old.write("rooms/security/key.md", memory_file("key", f"stripe api_key = '{secret}' here."))
    old.write("hot/s1.md", "this session's hot state: never exported\n")
    archive = tmp_path / "move.tar.gz"
    out = old.run("export", str(archive), cwd=repo).stdout
    assert "exported" in out and "redacted rooms/security/key.md" in out
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        blob = b"".join(
            tar.extractfile(m).read()
            for m in tar.getmembers()
            if m.isfile()  # type: ignore[union-attr]
        )
    assert secret.encode() not in blob
    assert not [n for n in names if n.startswith(("hot/", "sync/", "logs/")) or n.endswith(".db")]
    assert "projects/github.com%2Facme%2Fshop/memory/MEMORY.md" in names

    # The new machine already has its own version of one file: it is kept, and the archive's
    # version written beside it (a conflict copy named after the old machine).
    new.write("identity/me.md", memory_file("me", "Dana works on the shop team."))
    repo_new = new.home / "src" / "shop"  # the same repository at another path
    repo_new.mkdir(parents=True)
    git("init", "-q", str(repo_new))
    git("remote", "add", "origin", "https://github.com/acme/shop", cwd=repo_new)
    first = new.json("import", str(archive), cwd=repo_new)
    assert first["skipped"] == []
    [(kept, copy)] = first["beside"]
    assert kept == str(new.state / "identity" / "me.md")
    assert Path(copy).name == "me.conflict-old-2026-11-29.md"
    assert "works on the shop team" in (new.state / "identity" / "me.md").read_text()
    assert "prefers terse answers" in Path(copy).read_text()
    assert "Backups run at 03:00" in "\n".join(new.texts("rooms/database").values())
    key = sanitize_path(str(repo_new.resolve()))
    mine = new.claude / "projects" / key / "memory"
    assert "Run the linter" in "\n".join(p.read_text() for p in mine.glob("*.md"))
    assert "Run the linter" in new.run("wake", "--cwd", str(repo_new)).stdout
    # Again: everything is there already, nothing is written twice.
    again = new.json("import", str(archive), cwd=repo_new)
    assert again["written"] == [] and again["beside"] == []
    assert again["same"] == len(first["written"]) + 1


def test_an_archive_that_is_not_an_export_or_escapes_its_folders_is_refused(
    tmp_path: Path,
) -> None:
    m = Machine(tmp_path, "m")
    m.run("init")
    plain = tmp_path / "plain.tar.gz"
    with tarfile.open(plain, "w:gz") as tar:
        _add(tar, "rooms/x/a.md", b"hello")
    refused = m.run("import", str(plain), ok=False)
    assert refused.returncode == 1 and "is not a memory-tool export" in refused.stderr
    garbage = tmp_path / "garbage.tar.gz"
    garbage.write_bytes(b"\x00not an archive" * 100)
    refused = m.run("import", str(garbage), ok=False)
    assert refused.returncode == 1 and "is not a memory-tool export" in refused.stderr
    assert "ReadError" not in refused.stderr  # one sentence, not every decompressor's complaint

    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        _add(tar, "memory-tool-export.json", json.dumps({"format": 1}).encode())
        _add(tar, "rooms/../../../escaped.md", b"out of the palace")
        _add(tar, "/etc/absolute.md", b"absolute")
        _add(tar, "projects/path:..%2F..%2Fx/memory/a.md", b"a key that climbs")
        link = tarfile.TarInfo("rooms/x/link.md")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
        _add(tar, "rooms/x/fine.md", b"a fine memory")
    report = m.json("import", str(evil))
    assert [Path(p).name for p in report["written"]] == ["fine.md"]
    assert len(report["skipped"]) == 4
    assert not list(tmp_path.rglob("escaped.md")) and not list(tmp_path.rglob("absolute.md"))


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
