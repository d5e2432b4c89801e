"""Team palaces on real git: two members of one team, one bare repository. What one adds with
``--team`` the other's next prompt about that room recalls, labelled with the team, under the
same budgets; a team's pinned rules count against each member's always-load cap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from machines import Machine, bare_repo, git, memory_file, wait_for


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return bare_repo(tmp_path / "acme-palace.git")


@pytest.fixture
def members(tmp_path: Path, remote: Path) -> tuple[Machine, Machine]:
    a, b = Machine(tmp_path, "dana"), Machine(tmp_path, "lee")
    for m in (a, b):
        m.run("init")
        m.run("team", "add", "acme", str(remote))
    return a, b


def project(m: Machine) -> Path:
    folder = m.home / "work" / "shop"
    if not folder.exists():
        folder.mkdir(parents=True)
        git("init", "-q", str(folder))
    return folder


def prompt(m: Machine, text: str, **env: str) -> str:
    """The real UserPromptSubmit hook, in a separate process; the context it adds."""
    payload = {
        "session_id": "s-prompt",
        "transcript_path": "/nonexistent.jsonl",
        "cwd": str(project(m)),
        "hook_event_name": "UserPromptSubmit",
        "prompt": text,
    }
    proc = m.hook("UserPromptSubmit", payload, MEMORY_TOOL_SERVER="0", **env)
    assert proc.returncode == 0
    if not proc.stdout.strip():
        return ""
    out: dict[str, Any] = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    return str(out["hookSpecificOutput"]["additionalContext"])


def test_joining_an_empty_remote_gives_it_the_palace_layout(
    members: tuple[Machine, Machine], remote: Path
) -> None:
    a, b = members
    tree = git("ls-tree", "-r", "--name-only", "HEAD", cwd=remote).split()
    assert tree == ["README.md"]
    for m in (a, b):
        assert (m.state / "teams" / "acme" / "rooms").is_dir()
    listed = b.json("team", "list")
    assert [row["name"] for row in listed] == ["acme"]


def test_a_teammates_memory_is_recalled_on_the_others_next_prompt(
    members: tuple[Machine, Machine], remote: Path
) -> None:
    a, b = members
    text = "Staff sign in through the Okta SSO login; local passwords are disabled."
    out = a.run("add", "--team", "acme", "--room", "authentication", text)
    assert "saved" in out.stdout and not out.stderr
    assert "Okta SSO" in git("log", "-p", "HEAD", cwd=remote)  # pushed at once
    assert "Okta" not in prompt(b, "how does the login flow authenticate staff users?")
    b.run("team", "sync", "acme")
    context = prompt(b, "how does the login flow authenticate staff users?")
    assert "Okta SSO login" in context
    assert "(team acme)" in context
    # Deep search finds it too, labelled.
    hits = b.json("search", "Okta SSO")
    assert hits and hits[0]["room"] == "authentication"
    assert "(team acme)" in b.run("get", hits[0]["id"]).stdout


def test_a_teams_pinned_rule_loads_for_every_member_and_counts_against_the_cap(
    members: tuple[Machine, Machine],
) -> None:
    a, b = members
    for n in range(15):  # B's own pins fill the cap
        b.write(
            f"rooms/general-programming/rule-{n}.md",
            memory_file(f"rule-{n}", f"Own rule number {n}: keep it.", always=True),
        )
    b.run("index")
    assert b.run("doctor", "--json", cwd=project(b), ok=False).stdout.count("always_load") == 0
    a.run(
        "add", "--team", "acme", "--room", "deployment", "--always",
        "Never deploy on Fridays without the on-call's approval.",
    )  # fmt: skip
    b.run("team", "sync")
    brief = b.run("wake", "--cwd", str(project(b))).stdout
    assert "(team acme) Never deploy on Fridays" in brief
    doctor = json.loads(b.run("doctor", "--json", cwd=project(b), ok=False).stdout)
    overflow = [f for f in doctor["findings"] if f["check"] == "always_load"]
    assert overflow and overflow[0]["count"] == 16 and overflow[0]["max"] == 15


def test_a_secret_written_into_the_team_palace_is_redacted_before_it_is_pushed(
    members: tuple[Machine, Machine], remote: Path
) -> None:
    a, b = members
    secret = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s0nly"
    a.write(
        "teams/acme/rooms/ci/deploy-token.md",
        memory_file("deploy token", f"The CI deploy uses GITHUB_TOKEN={secret} for releases."),
    )
    out = a.run("team", "sync", "acme").stdout
    assert "redacted rooms/ci/deploy-token.md" in out
    history = git("log", "-p", "--all", cwd=remote)
    assert secret not in history and "for releases" in history
    # Only what travels is redacted: the file here keeps its text.
    assert secret in (a.state / "teams/acme/rooms/ci/deploy-token.md").read_text()
    b.run("team", "sync")
    arrived = (b.state / "teams/acme/rooms/ci/deploy-token.md").read_text()
    assert "for releases" in arrived and secret not in arrived


def test_two_members_editing_one_team_memory_keep_both_versions(
    members: tuple[Machine, Machine],
) -> None:
    a, b = members
    a.run("add", "--team", "acme", "--room", "api", "--name", "rate limit", "Rate limit is 100/s.")
    b.run("team", "sync")
    rel = "teams/acme/rooms/api/rate-limit.md"
    a.write(rel, memory_file("rate limit", "Rate limit is 200/s since the upgrade."))
    b.write(rel, memory_file("rate limit", "Rate limit is 100/s per tenant."))
    a.run("team", "sync")
    assert "both versions kept" in b.run("team", "sync").stdout
    a.run("team", "sync")
    for m in (a, b):
        texts = "\n".join(m.texts("teams/acme/rooms/api").values())
        assert "200/s since the upgrade" in texts and "per tenant" in texts


def test_an_inbox_candidate_accepted_into_the_team_reaches_the_teammate(
    members: tuple[Machine, Machine],
) -> None:
    a, b = members
    a.write(
        "inbox/i-0a1b2c.md",
        '---\nid: "i-0a1b2c"\nkind: "gotcha"\ntype: "reference"\ntier: "wiki"\n'
        'session: "s1"\nproject: ""\ncwd: "/nowhere"\ncreated: "2026-11-28"\n---\n\n'
        "The staging database is reset every Sunday night.\n",
    )
    out = a.run("inbox", "accept", "i-0a1b2c", "--team", "acme", "--room", "database")
    assert "teams/acme/rooms/database" in out.stdout
    b.run("team", "sync")
    assert "reset every Sunday" in "\n".join(b.texts("teams/acme/rooms/database").values())


def test_a_team_remote_that_is_down_keeps_the_memory_for_the_next_sync(
    members: tuple[Machine, Machine], remote: Path, tmp_path: Path
) -> None:
    a, b = members
    away = tmp_path / "away.git"
    remote.rename(away)
    out = a.run("add", "--team", "acme", "--room", "frontend", "Icons come from the sprite only.")
    assert "saved" in out.stdout
    assert "not pushed to team acme yet" in out.stderr and "could not reach" in out.stderr
    assert a.json("team", "list")[0]["ahead"] == 1
    refused = a.run("team", "remove", "acme", ok=False)
    assert refused.returncode == 1 and "not pushed yet" in refused.stderr
    away.rename(remote)
    assert "sent your changes" in a.run("team", "sync").stdout
    b.run("team", "sync")
    assert "sprite only" in "\n".join(b.texts("teams/acme/rooms/frontend").values())
    a.run("team", "remove", "acme")
    assert not (a.state / "teams" / "acme").exists()
    assert a.json("team", "list") == []
    assert "sprite only" not in a.run("search", "sprite icons").stdout


def test_session_end_pushes_and_session_start_pulls_by_themselves(
    members: tuple[Machine, Machine], remote: Path
) -> None:
    """The detached runs: no command typed. A's session ends (the Scribe, then a push of what
    A wrote into the team palace by hand); B's next session start pulls it before B asks."""
    a, b = members
    a.write(
        "teams/acme/rooms/testing/fixtures.md",
        memory_file("fixtures", "Integration tests load fixtures from tests/fixtures/shop only."),
    )
    end = {"session_id": "a-1", "transcript_path": "/nonexistent.jsonl", "cwd": str(project(a)),
           "hook_event_name": "SessionEnd", "reason": "exit"}  # fmt: skip
    ended = a.hook("SessionEnd", end, MEMORY_TOOL_NO_BACKGROUND="", MEMORY_TOOL_SERVER="0")
    assert ended.returncode == 0 and not ended.stdout
    wait_for(
        lambda: "fixtures/shop" in git("log", "-p", "HEAD", cwd=remote),
        what="the detached sync after SessionEnd to push",
    )
    wait_for(lambda: _last(a).startswith("sent your changes"), what="A's detached run to end")
    start = {"session_id": "b-1", "transcript_path": "/nonexistent.jsonl", "cwd": str(project(b)),
             "hook_event_name": "SessionStart", "source": "startup"}  # fmt: skip
    proc = b.hook("SessionStart", start, MEMORY_TOOL_NO_BACKGROUND="", MEMORY_TOOL_SERVER="0")
    assert proc.returncode == 0 and b'"hookEventName": "SessionStart"' in proc.stdout
    arrived = b.state / "teams/acme/rooms/testing/fixtures.md"
    wait_for(arrived.exists, what="the detached pull after SessionStart")
    wait_for(lambda: _last(b).startswith("nothing to send"), what="B's detached pull to end")
    assert "fixtures/shop only" in prompt(b, "where do the integration tests load fixtures from?")


def _last(m: Machine) -> str:
    """How the machine's last sync of the team ended, as its record says."""
    record = json.loads((m.state / "sync" / "team-acme.json").read_text())
    return str(record["last"]["message"])


def test_a_link_in_the_team_repository_is_never_followed(
    members: tuple[Machine, Machine], tmp_path: Path
) -> None:
    """A teammate (with plain git) commits a link to a file outside the palace: the other
    member gets a plain file naming the target, and nothing of the target is indexed."""
    a, b = members
    private = b.home / ".ssh" / "id_rsa"
    private.parent.mkdir(parents=True)
    private.write_text("PRIVATE KEY MATERIAL do not share\n")
    clone = a.state / "teams" / "acme"
    (clone / "rooms" / "security").mkdir(parents=True, exist_ok=True)
    (clone / "rooms" / "security" / "keys.md").symlink_to(private)
    git("add", "-A", cwd=clone)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "a link", cwd=clone)
    branch = git("config", "--get", "memorytool.branch", cwd=clone).strip()
    git("push", "-q", "origin", f"HEAD:refs/heads/{branch}", cwd=clone)
    b.run("team", "sync")
    arrived = b.state / "teams" / "acme" / "rooms" / "security" / "keys.md"
    assert arrived.is_file() and not arrived.is_symlink()
    assert arrived.read_text() == str(private)
    assert "PRIVATE KEY MATERIAL" not in b.run("search", "private key material").stdout
    assert "PRIVATE KEY MATERIAL" not in prompt(b, "where are the security keys for the ssh login?")
