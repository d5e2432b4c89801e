"""Personal sync on real git: two sandboxed HOMEs as two machines and a bare repository as the
remote. Memories added on both arrive on both, both versions of a file edited on both survive,
an edit beats a delete, concurrent syncs lose nothing, secrets never reach the remote, a remote
that is down or a run that was killed costs nothing."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from machines import Machine, bare_repo, clean_git_env, git, memory_file


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return bare_repo(tmp_path / "remote.git")


@pytest.fixture
def a(tmp_path: Path) -> Machine:
    m = Machine(tmp_path, "laptop")
    m.run("init")
    return m


@pytest.fixture
def b(tmp_path: Path) -> Machine:
    m = Machine(tmp_path, "desktop")
    m.run("init")
    return m


def indexed_paths(m: Machine) -> set[str]:
    """What the machine's index holds, read straight from the database (no refresh)."""
    with sqlite3.connect(m.state / "index.db") as conn:
        return {row[0] for row in conn.execute("SELECT path FROM entries")}


def remote_history(remote: Path) -> str:
    return git("log", "-p", "--all", cwd=remote)


def test_memories_added_on_both_machines_arrive_on_both(
    a: Machine, b: Machine, remote: Path
) -> None:
    a.run("add", "--room", "database", "Reports read from the replica, never the primary.")
    a.run("sync", "init", str(remote))
    b.run("add", "--room", "database", "The connection pool holds 20 per worker.")
    b.run("add", "--tier", "wiki", "We chose Postgres over MySQL for its JSONB support.")
    b.run("sync", "init", str(remote))
    a.run("sync")
    for m in (a, b):
        rooms = m.texts("rooms/database")
        bodies = "\n".join(rooms.values())
        assert "Reports read from the replica" in bodies
        assert "connection pool holds 20" in bodies
        assert "JSONB" in "\n".join(m.texts("wiki").values())
        # MEMORY.md gained both lines (merged line by line, no conflict copy).
        index_lines = rooms["MEMORY.md"].splitlines()
        assert len([line for line in index_lines if line.startswith("- [")]) == 2
        assert not [name for name in rooms if ".conflict-" in name]
    # The index refreshed after the pull: the memory that arrived is searchable at once.
    folder = a.state / "rooms" / "database"
    arrived = next(p for p in folder.glob("*.md") if "pool holds 20" in p.read_text())
    assert str(arrived) in indexed_paths(a)
    hits = a.json("search", "connection pool")
    assert hits and hits[0]["room"] == "database"
    assert "pool holds 20" in a.run("get", hits[0]["id"]).stdout


def test_the_same_file_edited_on_both_keeps_both_versions(
    a: Machine, b: Machine, remote: Path
) -> None:
    rel = "rooms/deployment/rollback.md"
    a.write(rel, memory_file("rollback", "Roll back with the deploy tool's undo."))
    a.run("sync", "init", str(remote))
    b.run("sync", "init", str(remote))
    assert (b.state / rel).exists()
    a.write(rel, memory_file("rollback", "Roll back by redeploying the previous tag."))
    b.write(rel, memory_file("rollback", "Roll back through the blue-green switch."))
    a.run("sync")
    out = b.run("sync").stdout
    assert "both versions kept" in out
    a.run("sync")
    for m in (a, b):
        texts = "\n".join(m.texts("rooms/deployment").values())
        assert "redeploying the previous tag" in texts
        assert "blue-green switch" in texts
        copies = [p for p in m.texts("rooms/deployment") if ".conflict-laptop-" in p]
        assert copies, f"{m.name}: no conflict copy named after the other machine"
    # B merged, so B's version stays in place and A's is the copy, on both machines.
    assert "blue-green" in (a.state / rel).read_text()
    status = b.run("sync", "status").stdout
    assert "conflicts (1)" in status
    doctor = b.run("doctor", "--json", ok=False)
    assert doctor.returncode == 1
    assert '"check": "conflict"' in doctor.stdout
    # Resolve on A: keep the copy (A's own text); the choice reaches B with the next syncs.
    copy = next((a.state / "rooms" / "deployment").glob("rollback.conflict-*.md"))
    a.run("sync", "resolve", str(copy), "--keep", "theirs")
    a.run("sync")
    b.run("sync")
    for m in (a, b):
        names = list(m.texts("rooms/deployment"))
        assert names == ["rollback.md"], f"{m.name}: {names}"
        assert "redeploying the previous tag" in (m.state / rel).read_text()
    assert b.run("doctor", "--json", ok=False).stdout.count('"check": "conflict"') == 0


def test_an_edit_on_one_machine_beats_a_delete_on_the_other(
    a: Machine, b: Machine, remote: Path
) -> None:
    rel = "rooms/testing/flaky.md"
    a.write(rel, memory_file("flaky", "The payment test is flaky on Mondays."))
    a.run("sync", "init", str(remote))
    b.run("sync", "init", str(remote))
    (a.state / rel).unlink()
    b.write(rel, memory_file("flaky", "The payment test is flaky when the sandbox is slow."))
    a.run("sync")
    b.run("sync")
    a.run("sync")
    for m in (a, b):
        assert "sandbox is slow" in (m.state / rel).read_text(), m.name
    # The other way round: deleted where it was not edited, it goes everywhere.
    (b.state / rel).unlink()
    b.run("sync")
    a.run("sync")
    assert not (a.state / rel).exists()


def test_concurrent_syncs_in_many_rounds_lose_nothing(
    a: Machine, b: Machine, tmp_path: Path, remote: Path
) -> None:
    c = Machine(tmp_path, "tablet")
    c.run("init")
    machines = [a, b, c]
    for m in machines:
        m.run("sync", "init", str(remote))
    expected: set[str] = set()
    rounds = 6
    for n in range(rounds):
        for m in machines:
            rel = f"rooms/general-programming/{m.name}-{n}.md"
            m.write(rel, memory_file(f"{m.name}-{n}", f"Fact {n} written on the {m.name}."))
            expected.add(rel)
            # Every machine also appends to one shared MEMORY.md: merged line by line.
            index = m.state / "rooms" / "general-programming" / "MEMORY.md"
            with open(index, "a", encoding="utf-8") as fh:
                fh.write(f"- [{m.name}-{n}]({m.name}-{n}.md) — fact {n}\n")
        procs = [m.popen("sync") for m in machines]  # all at the same moment
        for m, proc in zip(machines, procs, strict=True):
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, f"{m.name} round {n}: {out}\n{err}"
    for _ in range(2):  # settle: every machine sees everyone's last round
        for m in machines:
            m.run("sync")
    for m in machines:
        have = {f"rooms/general-programming/{p}" for p in m.texts("rooms/general-programming")}
        assert expected <= have, f"{m.name} lacks {sorted(expected - have)}"
        assert not [p for p in have if ".conflict-" in p]
        index = (m.state / "rooms" / "general-programming" / "MEMORY.md").read_text()
        assert index.count("- [") == 3 * rounds
        for path in (m.state / "rooms").rglob("*"):
            if path.is_file():
                assert "<<<<<<<" not in path.read_text(), path
    tree = git("ls-tree", "-r", "--name-only", "HEAD", cwd=remote).split()
    assert expected <= set(tree)


def test_two_syncs_on_one_machine_wait_for_each_other(a: Machine, remote: Path) -> None:
    a.run("sync", "init", str(remote))
    for n in range(20):
        a.write(f"rooms/api/endpoint-{n}.md", memory_file(f"endpoint-{n}", f"Endpoint {n}."))
    procs = [a.popen("sync") for _ in range(3)]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, out + err
    tree = git("ls-tree", "-r", "--name-only", "HEAD", cwd=remote).split()
    assert {f"rooms/api/endpoint-{n}.md" for n in range(20)} <= set(tree)


def test_a_secret_in_a_room_file_never_reaches_the_remote(
    a: Machine, b: Machine, remote: Path
) -> None:
    secret = "sk_live_51HqLyjWDarjtT1zdp7dcXhGbNpxsVbZq"
    a.write(
        "rooms/security/stripe.md",
        memory_file("stripe", f"The Stripe key is api_key = '{secret}' until the rotation."),
    )
    a.write(
        "rooms/security/vpn.md",
        memory_file("vpn", "VPN is on 10.0.0.1. <private>My PIN is 4711.</private> Ask ops."),
    )
    (a.state / "rooms" / "security" / "blob.md").write_bytes(b"\xff\xfe\x00binary\x00junk")
    out = a.run("sync", "init", str(remote)).stdout
    assert "redacted rooms/security/stripe.md" in out
    assert "redacted rooms/security/vpn.md" in out
    assert "held back rooms/security/blob.md: not UTF-8 text" in out
    history = remote_history(remote)
    assert secret not in history
    assert "4711" not in history
    assert "binary" not in history
    assert "[REDACTED" in history and "until the rotation" in history
    # The other machine gets the memory without the secret; this one keeps its own file.
    b.run("sync", "init", str(remote))
    arrived = (b.state / "rooms" / "security" / "stripe.md").read_text()
    assert secret not in arrived and "until the rotation" in arrived
    assert secret in (a.state / "rooms" / "security" / "stripe.md").read_text()
    # A later sync neither sends it again nor takes the redacted copy for a change of A's.
    again = a.run("sync").stdout
    assert "nothing new to send" in again
    assert secret in (a.state / "rooms" / "security" / "stripe.md").read_text()
    assert secret not in remote_history(remote)


def test_a_remote_that_is_down_costs_nothing_and_the_next_sync_catches_up(
    a: Machine, b: Machine, remote: Path, tmp_path: Path
) -> None:
    a.run("sync", "init", str(remote))
    b.run("sync", "init", str(remote))
    moved = tmp_path / "remote-away.git"
    remote.rename(moved)  # the server is down
    a.run("add", "--room", "ci", "The nightly build runs at 02:00 UTC.")
    failed = a.run("sync", ok=False)
    assert failed.returncode == 1
    assert "could not reach the remote" in failed.stderr
    assert "Nothing was lost" in failed.stderr
    status = a.run("sync", "status").stdout
    assert "ahead 1" in status and "FAILED" in status
    doctor = a.run("doctor", "--json", ok=False).stdout
    assert '"check": "sync"' in doctor and "could not reach the remote" in doctor
    moved.rename(remote)  # back up
    assert "pushed" in a.run("sync").stdout
    b.run("sync")
    assert "nightly build runs at 02:00" in "\n".join(b.texts("rooms/ci").values())
    assert '"check": "sync"' not in a.run("doctor", "--json", ok=False).stdout


def test_a_killed_sync_loses_nothing(a: Machine, b: Machine, remote: Path) -> None:
    a.run("sync", "init", str(remote))
    b.run("sync", "init", str(remote))
    rng = random.Random(17)
    for n in range(300):
        a.write(f"rooms/data-pipeline/step-{n}.md", memory_file(f"step-{n}", f"Pipeline step {n}."))
    for _ in range(6):  # killed at random moments: mid-export, mid-commit, mid-push...
        proc = a.popen("sync", new_session=True)
        time.sleep(rng.uniform(0.2, 1.5))
        if proc.poll() is None:  # the whole process group, git included (a power cut)
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    a.run("sync")
    b.run("sync")
    for m in (a, b):
        names = set(m.texts("rooms/data-pipeline"))
        assert {f"step-{n}.md" for n in range(300)} <= names, m.name
        assert "Pipeline step 299." in (m.state / "rooms/data-pipeline/step-299.md").read_text()


def test_a_run_stopped_after_its_merge_brings_the_merged_files_next_time(
    a: Machine, b: Machine, remote: Path
) -> None:
    """What a run killed between merging and copying back leaves: the sync tree merged, the
    machine's own folders not yet, a stale git index lock. The next sync finishes the job."""
    a.run("sync", "init", str(remote))
    b.run("sync", "init", str(remote))
    a.run("add", "--room", "frontend", "Buttons use the design-system primitives only.")
    a.run("sync")
    tree = b.state / "sync" / "repo"
    git("fetch", "-q", "origin", cwd=tree)
    branch = git("config", "--get", "memorytool.branch", cwd=tree).strip()
    git("merge", "-q", "--ff-only", f"origin/{branch}", cwd=tree)
    lock = tree / ".git" / "index.lock"
    lock.write_text("")
    os.utime(lock, (time.time() - 3600, time.time() - 3600))  # from before the crash
    assert not (b.state / "rooms" / "frontend").exists()
    b.run("sync")
    assert "design-system primitives" in "\n".join(b.texts("rooms/frontend").values())


def test_a_push_refused_because_another_machine_pushed_first_is_merged_and_retried(
    a: Machine, remote: Path, tmp_path: Path
) -> None:
    """Deterministic: the first time A pushes, another machine's commit lands on the remote
    just before A's push is read (A's receive-pack is wrapped to do that), so the remote
    refuses A's push as not a fast-forward; A fetches, merges and pushes again."""
    a.run("sync", "init", str(remote))
    other = tmp_path / "other-machine"
    git("clone", "-q", str(remote), str(other))
    (other / "rooms" / "api").mkdir(parents=True)
    (other / "rooms" / "api" / "versioning.md").write_text(memory_file("v", "APIs are versioned."))
    git("add", "-A", cwd=other)
    git("-c", "user.name=o", "-c", "user.email=o@o", "commit", "-qm", "other", cwd=other)
    flag = tmp_path / "raced"
    wrapper = tmp_path / "receive-pack-racing"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ ! -e "{flag}" ]; then touch "{flag}"; '
        f'git -C "{other}" push -q origin HEAD >/dev/null 2>&1; fi\n'
        'exec git-receive-pack "$@"\n'
    )
    wrapper.chmod(0o755)
    git("config", "remote.origin.receivepack", str(wrapper), cwd=a.state / "sync" / "repo")
    a.run("add", "--room", "api", "Errors are RFC 7807 problem documents.")
    report = a.json("sync")
    assert flag.exists() and report["pushed"] and report["attempts"] == 2
    tree = git("ls-tree", "-r", "--name-only", "HEAD", cwd=remote)
    assert "rooms/api/versioning.md" in tree
    assert any("rfc-7807" in line for line in tree.splitlines())
    assert "APIs are versioned" in (a.state / "rooms" / "api" / "versioning.md").read_text()


def test_a_push_the_server_refuses_keeps_the_change_with_a_clear_message(
    a: Machine, remote: Path
) -> None:
    a.run("sync", "init", str(remote))
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'read-only until the audit ends' >&2\nexit 1\n")
    hook.chmod(0o755)
    a.run("add", "--room", "ci", "Release builds are signed in CI.")
    failed = a.run("sync", ok=False)
    assert failed.returncode == 1
    assert "refused the push" in failed.stderr and "read-only until the audit" in failed.stderr
    assert "ahead 1" in a.run("sync", "status").stdout
    hook.unlink()
    assert "pushed" in a.run("sync").stdout
    assert "signed in CI" in git("log", "-p", "HEAD", cwd=remote)


def clone_by_hand(remote: Path, where: Path) -> str:
    """`git clone` as a person runs it; its messages."""
    proc = subprocess.run(
        ["git", "clone", str(remote), str(where)],
        env=clean_git_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return proc.stderr


def test_a_remote_made_with_git_init_bare_gets_its_own_default_branch(
    a: Machine, b: Machine, remote: Path, tmp_path: Path
) -> None:
    # `git init --bare` with no init.defaultBranch set names master in HEAD.
    assert git("symbolic-ref", "HEAD", cwd=remote).strip() == "refs/heads/master"
    a.run("add", "--room", "operations", "The pager rotation changes on Mondays.")
    a.run("sync", "init", str(remote))
    b.run("sync", "init", str(remote))
    assert "rotation changes on Mondays" in "\n".join(b.texts("rooms/operations").values())
    assert git("for-each-ref", "--format=%(refname)", cwd=remote).split() == ["refs/heads/master"]
    said = clone_by_hand(remote, tmp_path / "by-hand")
    assert "nonexistent ref" not in said and "empty repository" not in said
    assert list((tmp_path / "by-hand" / "rooms" / "operations").glob("*.md"))


def test_a_remote_an_earlier_version_wrote_main_to_keeps_main_and_gets_its_head(
    a: Machine, remote: Path, tmp_path: Path
) -> None:
    seed = tmp_path / "earlier"
    git("init", "-q", "-b", "main", str(seed))
    seed.joinpath("rooms", "testing").mkdir(parents=True)
    seed.joinpath("rooms", "testing", "flaky.md").write_text(memory_file("f", "CI retries once."))
    git("add", "-A", cwd=seed)
    git("-c", "user.name=o", "-c", "user.email=o@o", "commit", "-qm", "earlier", cwd=seed)
    git("push", "-q", str(remote), "main", cwd=seed)
    a.run("sync", "init", str(remote))
    assert "CI retries once" in "\n".join(a.texts("rooms/testing").values())
    assert git("for-each-ref", "--format=%(refname)", cwd=remote).split() == ["refs/heads/main"]
    assert git("symbolic-ref", "HEAD", cwd=remote).strip() == "refs/heads/main"
    assert "nonexistent ref" not in clone_by_hand(remote, tmp_path / "by-hand")
    assert (tmp_path / "by-hand" / "rooms" / "testing" / "flaky.md").exists()
