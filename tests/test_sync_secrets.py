"""A secret in a local memory stays in it, whatever arrives: what travels is redacted, so every
version that comes back holds ``[REDACTED:kind]`` where this machine has the secret. Each path
that writes into the local folders (a sync's merge, its conflict copy, `sync resolve`, a team
sync, an import) merges the incoming version onto the local text or writes it beside it, and
never puts the redacted text in the secret's place. Two sandboxed HOMEs, real bare remotes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from machines import Machine, bare_repo, git
from test_sync_projects import _key, clone_at, transcript

# Built here, so no scanner takes this file for a leak; the shapes redaction knows.
STRIPE = "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
NAME = "reference_stripe_keys.md"
KEYS = f"""---
name: Stripe keys
description: Which keys the billing sandbox uses
metadata:
  type: reference
---

Stripe test key: {STRIPE}
AWS access key id: {AWS}
"""


def has_secrets(text: str) -> bool:
    return STRIPE in text and AWS in text and "[REDACTED" not in text


def assert_remote_clean(remote: Path) -> None:
    history = git("log", "-p", "--all", cwd=remote)
    assert STRIPE not in history and AWS not in history


@pytest.fixture
def project(tmp_path: Path) -> tuple[Machine, Path, Machine, Path, Path]:
    """The issue's set-up: a laptop whose project memory holds keys, a desktop with a clone of
    the same repository at another path, both syncing through one bare remote."""
    code = bare_repo(tmp_path / "code" / "billing.git")
    laptop, desktop = Machine(tmp_path, "laptop"), Machine(tmp_path, "desktop")
    clone_a = clone_at(code, laptop.home / "src" / "billing", str(code))
    clone_b = clone_at(code, desktop.home / "work" / "billing", str(code))
    remote = bare_repo(tmp_path / "memory.git")
    memory_a = laptop.claude / "projects" / _key(clone_a) / "memory"
    memory_a.mkdir(parents=True)
    (memory_a / NAME).write_text(KEYS)
    laptop.run("sync", "init", str(remote), cwd=clone_a)
    transcript(desktop, clone_b, "desktop-session")
    desktop.run("sync", "init", str(remote), cwd=clone_b)
    memory_b = desktop.claude / "projects" / _key(clone_b) / "memory"
    arrived = (memory_b / NAME).read_text()
    assert "[REDACTED:stripe_key]" in arrived and STRIPE not in arrived
    return laptop, memory_a, desktop, memory_b, remote


def test_a_line_added_on_the_other_machine_merges_onto_the_local_secrets(
    project: tuple[Machine, Path, Machine, Path, Path],
) -> None:
    laptop, memory_a, desktop, memory_b, remote = project
    with (memory_b / NAME).open("a") as fh:
        fh.write("Rotate it every 90 days.\n")
    desktop.run("sync")
    out = laptop.run("sync").stdout
    text = (memory_a / NAME).read_text()
    assert has_secrets(text), text
    assert text == KEYS + "Rotate it every 90 days.\n"
    assert "kept twice" not in out
    assert not list(memory_a.glob("*.conflict-*"))
    # What the laptop sends next is the desktop's text exactly: nothing to send, no conflict.
    status = laptop.json("sync", "status")
    assert status["pending"] == []
    desktop.run("sync")
    assert (memory_b / NAME).read_text().endswith("Rotate it every 90 days.\n")
    assert_remote_clean(remote)


def test_a_change_to_the_secrets_own_line_is_kept_beside_the_local_file(
    project: tuple[Machine, Path, Machine, Path, Path],
) -> None:
    laptop, memory_a, desktop, memory_b, remote = project
    arrived = (memory_b / NAME).read_text()
    (memory_b / NAME).write_text(arrived.replace("Stripe test key:", "Stripe key (sandbox):"))
    desktop.run("sync")
    out = laptop.run("sync").stdout
    assert "kept twice" in out
    assert (memory_a / NAME).read_text() == KEYS  # the secrets, in place
    copies = list(memory_a.glob("reference_stripe_keys.conflict-desktop-*.md"))
    assert len(copies) == 1 and "Stripe key (sandbox):" in copies[0].read_text()
    # Keeping the copy would put [REDACTED] where the key is: refused, nothing changed.
    refused = laptop.run("sync", "resolve", str(copies[0]), "--keep", "theirs", ok=False)
    assert refused.returncode == 1 and "would lose them" in refused.stderr
    assert (memory_a / NAME).read_text() == KEYS and copies[0].exists()
    laptop.run("sync")
    assert_remote_clean(remote)


def test_resolving_with_the_redacted_copy_keeps_the_local_secrets(
    project: tuple[Machine, Path, Machine, Path, Path],
) -> None:
    laptop, memory_a, desktop, memory_b, remote = project
    # Both machines change the same line (not the keys'): the desktop merges last, so its
    # version stays in place and the laptop's own comes back as a (redacted) conflict copy.
    (memory_a / NAME).write_text(KEYS + "Owner: billing team.\n")
    laptop.run("sync")
    desktop.run("sync")
    (memory_a / NAME).write_text(KEYS + "Owner: payments team.\n")
    text_b = (memory_b / NAME).read_text()
    (memory_b / NAME).write_text(text_b.replace("billing team", "platform team"))
    laptop.run("sync")
    desktop.run("sync")
    laptop.run("sync")
    text = (memory_a / NAME).read_text()
    assert has_secrets(text) and "Owner: platform team." in text
    copy = next(memory_a.glob("reference_stripe_keys.conflict-laptop-*.md"))
    assert "payments team" in copy.read_text() and STRIPE not in copy.read_text()
    laptop.run("sync", "resolve", str(copy), "--keep", "theirs")
    assert (memory_a / NAME).read_text() == KEYS + "Owner: payments team.\n"
    assert not copy.exists()
    laptop.run("sync")
    desktop.run("sync")
    assert "payments team" in (memory_b / NAME).read_text()
    assert not list(memory_b.glob("*.conflict-*"))
    assert_remote_clean(remote)


def test_both_machines_changing_one_line_each_with_its_own_secret_settle_in_one_round(
    project: tuple[Machine, Path, Machine, Path, Path],
) -> None:
    """Neither version can take the other's place without losing a secret: the machine that
    merges first keeps its own in place, the other takes it and keeps its own text in the
    conflict copy of its version; further syncs change nothing (no copy per sync)."""
    laptop, memory_a, desktop, memory_b, remote = project
    other = "ghp_" + "R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s0nly"
    (memory_a / NAME).write_text(KEYS.replace(f"AWS access key id: {AWS}", f"AWS: {AWS}"))
    arrived = (memory_b / NAME).read_text()
    mine_b = arrived.replace("AWS access key id: [REDACTED:aws_access_key]", f"GitHub: {other}")
    (memory_b / NAME).write_text(mine_b)
    for _ in range(3):
        laptop.run("sync")
        desktop.run("sync")
    files_a = {p.name: p.read_text() for p in memory_a.glob("reference_stripe_keys*.md")}
    files_b = {p.name: p.read_text() for p in memory_b.glob("reference_stripe_keys*.md")}
    assert len(files_a) == len(files_b) == 2, (sorted(files_a), sorted(files_b))
    assert sorted(files_a) == sorted(files_b)
    assert any(f"AWS: {AWS}" in t and STRIPE in t for t in files_a.values())
    assert any(f"GitHub: {other}" in t for t in files_b.values())
    for m in (laptop, desktop):
        assert m.json("sync", "status")["pending"] == []
    history = git("log", "-p", "--all", cwd=remote)
    assert other not in history
    assert_remote_clean(remote)


def test_keeping_this_machines_version_on_the_other_brings_back_its_secrets(
    project: tuple[Machine, Path, Machine, Path, Path],
) -> None:
    """Both change the key's own line at once; the desktop merges last, so the laptop takes
    the desktop's version in place and keeps its own text in the copy of its version. The
    desktop then keeps that copy: the laptop's file is its own text again, secrets and all."""
    laptop, memory_a, desktop, memory_b, remote = project
    mine = KEYS.replace("Stripe test key:", "Stripe key (billing sandbox):")
    (memory_a / NAME).write_text(mine)
    laptop.run("sync")
    arrived = (memory_b / NAME).read_text()
    (memory_b / NAME).write_text(arrived.replace("Stripe test key:", "Stripe key (old):"))
    desktop.run("sync")
    laptop.run("sync")
    copy_a = next(memory_a.glob("reference_stripe_keys.conflict-laptop-*.md"))
    assert copy_a.read_text() == mine  # its own text, beside the desktop's version
    assert "Stripe key (old):" in (memory_a / NAME).read_text()
    copy_b = memory_b / copy_a.name
    desktop.run("sync", "resolve", str(copy_b), "--keep", "theirs")
    desktop.run("sync")
    laptop.run("sync")
    assert (memory_a / NAME).read_text() == mine
    assert not list(memory_a.glob("*.conflict-*")) and not list(memory_b.glob("*.conflict-*"))
    assert laptop.json("sync", "status")["pending"] == []
    assert_remote_clean(remote)


def test_a_team_memory_keeps_its_secret_here_and_merges_a_teammates_line(
    tmp_path: Path,
) -> None:
    remote = bare_repo(tmp_path / "team.git")
    dana, kim = Machine(tmp_path, "dana"), Machine(tmp_path, "kim")
    for m in (dana, kim):
        m.run("init")
    dana.run("team", "add", "acme", str(remote))
    kim.run("team", "add", "acme", str(remote))
    rel = "teams/acme/rooms/billing/stripe.md"
    dana.write(rel, KEYS)
    out = dana.run("team", "sync", "acme").stdout
    assert "redacted rooms/billing/stripe.md" in out
    assert (dana.state / rel).read_text() == KEYS  # the file keeps its text
    assert_remote_clean(remote)
    kim.run("team", "sync", "acme")
    theirs = (kim.state / rel).read_text()
    assert "[REDACTED:stripe_key]" in theirs
    (kim.state / rel).write_text(theirs + "Rotate it every 90 days.\n")
    kim.run("team", "sync", "acme")
    dana.run("team", "sync", "acme")
    assert (dana.state / rel).read_text() == KEYS + "Rotate it every 90 days.\n"
    assert not list((dana.state / "teams/acme/rooms/billing").glob("*.conflict-*"))
    # Nothing of it counts as unsent: leaving the team is not refused for it.
    assert json.loads(dana.run("team", "list", "--json").stdout)[0]["ahead"] == 0
    dana.run("team", "remove", "acme")
    assert_remote_clean(remote)


def test_two_members_changing_a_team_memorys_secret_line_lose_nothing(tmp_path: Path) -> None:
    """Both change the key's own line at once: kim merges last, so dana takes kim's version in
    place and keeps her own text in the copy of her version; when kim keeps that copy, dana's
    file is her own text again, secrets and all."""
    remote = bare_repo(tmp_path / "team.git")
    dana, kim = Machine(tmp_path, "dana"), Machine(tmp_path, "kim")
    for m in (dana, kim):
        m.run("init")
        m.run("team", "add", "acme", str(remote))
    rel = "teams/acme/rooms/billing/stripe.md"
    dana.write(rel, KEYS)
    dana.run("team", "sync", "acme")
    kim.run("team", "sync", "acme")
    mine = KEYS.replace("Stripe test key:", "Stripe key (billing sandbox):")
    dana.write(rel, mine)
    dana.run("team", "sync", "acme")
    theirs = (kim.state / rel).read_text().replace("Stripe test key:", "Stripe key (old):")
    kim.write(rel, theirs)
    kim.run("team", "sync", "acme")
    for _ in range(2):
        dana.run("team", "sync", "acme")
        kim.run("team", "sync", "acme")
    folder = dana.state / "teams/acme/rooms/billing"
    assert (dana.state / rel).read_text() == theirs
    [copy] = folder.glob("stripe.conflict-dana-*.md")
    assert copy.read_text() == mine
    assert len(list((kim.state / "teams/acme/rooms/billing").glob("*.conflict-*"))) == 1
    kim.run(
        "sync",
        "resolve",
        str(kim.state / "teams/acme/rooms/billing" / copy.name),
        "--keep",
        "theirs",
    )
    kim.run("team", "sync", "acme")
    dana.run("team", "sync", "acme")
    assert (dana.state / rel).read_text() == mine
    assert not list(folder.glob("*.conflict-*"))
    assert_remote_clean(remote)


def test_an_import_never_takes_the_redacted_form_for_other_text(tmp_path: Path) -> None:
    laptop, desktop = Machine(tmp_path, "laptop"), Machine(tmp_path, "desktop")
    for m in (laptop, desktop):
        m.run("init")
    rel = "rooms/billing/stripe.md"
    laptop.write(rel, KEYS)
    own = tmp_path / "own.tar.gz"
    laptop.run("export", str(own))
    # Its own export back: the archive holds this file redacted, which is this file.
    report = laptop.json("import", str(own))
    assert report["same"] >= 1 and report["skipped"] == [] and report["beside"] == []
    assert (laptop.state / rel).read_text() == KEYS
    # A version changed elsewhere: written beside, the secrets stay in place.
    desktop.run("import", str(own))
    changed = (desktop.state / rel).read_text() + "Rotate it every 90 days.\n"
    (desktop.state / rel).write_text(changed)
    theirs = tmp_path / "theirs.tar.gz"
    desktop.run("export", str(theirs))
    report = laptop.json("import", str(theirs))
    assert (laptop.state / rel).read_text() == KEYS
    copies = list((laptop.state / "rooms/billing").glob("stripe.conflict-desktop-*.md"))
    assert len(copies) == 1 and copies[0].read_text() == changed
    assert report["beside"] == [[str(laptop.state / rel), str(copies[0])]]
    # Imported again: the copy is there already, no second one.
    again = laptop.json("import", str(theirs))
    assert again["beside"] == [] and again["written"] == []
    assert len(list((laptop.state / "rooms/billing").glob("stripe.conflict-*"))) == 1


def test_the_merge_puts_back_only_what_the_incoming_change_left_alone() -> None:
    from memory_tool.sync.merge import merge3, onto_local

    local = KEYS.encode()
    sent = KEYS.replace(STRIPE, "[REDACTED:stripe_key]").replace(AWS, "[REDACTED:aws_access_key]")
    # Lines added before, after and between the secrets' lines.
    for incoming in (
        "Top line\n" + sent,
        sent + "Last line\n",
        sent.replace("AWS access", "Note.\nAWS access"),
    ):
        merged = onto_local(local, incoming.encode())
        assert merged is not None and has_secrets(merged.decode())
        assert (
            merged.decode()
            .replace(STRIPE, "[REDACTED:stripe_key]")
            .replace(AWS, "[REDACTED:aws_access_key]")
            == incoming
        )
    # The secret's own line changed, or deleted: no merge (the caller keeps both).
    assert onto_local(local, sent.replace("Stripe test key", "Key").encode()) is None
    assert (
        onto_local(local, sent.replace("Stripe test key: [REDACTED:stripe_key]\n", "").encode())
        is None
    )
    # <private> text is local text too; a file without any takes what arrived.
    private = b"Keep this.\n<private>my pin is 1234</private>\n"
    merged = onto_local(private, b"Keep this.\n\nAnd this.\n")
    assert merged == b"Keep this.\n<private>my pin is 1234</private>\nAnd this.\n"
    assert onto_local(b"plain\n", b"other\n") == b"other\n"
    # Both sides adding at the same point is a clash; the same change on both is taken once.
    assert merge3(["a\n"], ["a\n", "x\n"], ["a\n", "y\n"]) is None
    assert merge3(["a\n"], ["b\n"], ["b\n"]) == ["b\n"]
