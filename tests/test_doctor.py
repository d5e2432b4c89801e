"""Memory hygiene checks, each on a crafted tree: staleness, drift, MEMORY.md, duplicates,
always-load discipline, the cached SessionStart line, and --fix with its backup."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from pathlib import Path

import pytest
from helpers import write_memory

from memory_tool.base import paths
from memory_tool.hygiene.doctor import diagnose
from memory_tool.hygiene.fix import fix, insert_created
from memory_tool.hygiene.report import LABELS, NOTE, PROBLEM, Finding, Report
from memory_tool.hygiene.wake_line import (
    WAKE_PREFIX,
    WAKE_SUFFIX,
    line_tokens,
    wake_units,
    wake_warning,
)
from memory_tool.store.index import open_index

TODAY = dt.date(2026, 11, 29)  # conftest pins MEMORY_TOOL_TODAY


def days_ago(n: int) -> str:
    return (TODAY - dt.timedelta(days=n)).isoformat()


def mem(
    folder: Path,
    name: str,
    body: str,
    *,
    type_: str = "project",
    created: str | None = "2026-11-01",
    listed: bool = True,
    **fields: object,
) -> Path:
    """A memory as our writes leave it: a created date and its MEMORY.md line."""
    if created:
        fields["created"] = created
    path = write_memory(folder, name, body, type_=type_, **fields)
    if listed:
        with open(folder / "MEMORY.md", "a", encoding="utf-8") as fh:
            fh.write(f"- [{name.removesuffix('.md')}]({name}) — {body[:30]}\n")
    return path


def report_for(cwd: Path, **kw: bool) -> Report:
    with open_index() as idx:
        idx.refresh(cwd)
        return diagnose(idx, cwd, **kw)


def checks(report: Report, check: str) -> list[Finding]:
    return [f for f in report.findings if f.check == check]


def set_mtime(path: Path, day: str) -> None:
    stamp = dt.datetime.fromisoformat(day + "T12:00:00+00:00").timestamp()
    os.utime(path, (stamp, stamp))


@pytest.fixture
def mdir(project: Path) -> Path:
    return paths.project_memory_dir(project)


def test_a_healthy_tree_is_clean(project: Path, mdir: Path) -> None:
    mem(mdir, "project_db.md", "The API uses Postgres 16.")
    mem(mdir, "feedback_tests.md", "Run the tests with pytest -q.", type_="feedback")
    mem(mdir, "user_role.md", "The user is a staff engineer.", type_="user")
    report = report_for(project)
    assert report.ok, [f.message for f in report.findings]
    assert report.summary() == ""
    assert report.checked == 3


# --- age --------------------------------------------------------------------------------------


def test_staleness_follows_each_types_age(project: Path, mdir: Path) -> None:
    mem(mdir, "project_old.md", "Sprint goal: ship search.", created=days_ago(120))
    mem(mdir, "project_new.md", "Sprint goal: ship login.", created=days_ago(60))
    mem(mdir, "reference_mid.md", "Dashboards: grafana.", type_="reference", created=days_ago(100))
    mem(mdir, "reference_old.md", "Runbook: wiki.", type_="reference", created=days_ago(200))
    mem(mdir, "feedback_old.md", "Keep diffs small.", type_="feedback", created=days_ago(900))
    mem(mdir, "user_old.md", "The user likes tea.", type_="user", created=days_ago(2000))
    report = report_for(project)
    stale = {Path(f.path).name: f for f in checks(report, "stale")}
    assert set(stale) == {"project_old.md", "reference_old.md"}
    assert stale["project_old.md"].data["age_days"] == 120
    assert stale["project_old.md"].data["rule"] == "project: stale after 90 days"
    assert stale["reference_old.md"].data["rule"] == "reference: stale after 180 days"
    assert report.summary() == "2 stale"


def test_stale_days_come_from_config(project: Path, mdir: Path, state: Path) -> None:
    mem(mdir, "project_a.md", "Sprint goal: ship search.", created=days_ago(40))
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text("stale_days:\n  project: 30\n")
    [finding] = checks(report_for(project), "stale")
    assert finding.data["rule"] == "project: stale after 30 days"


def test_expires_wins_over_the_types_age(project: Path, mdir: Path) -> None:
    mem(mdir, "project_gone.md", "Freeze until the launch.", expires=days_ago(1))
    mem(
        mdir,
        "project_kept.md",
        "Reviewed: still true.",
        created=days_ago(400),
        expires="2027-06-01",
    )
    report = report_for(project)
    [expired] = checks(report, "expired")
    assert Path(expired.path).name == "project_gone.md"
    assert expired.data["rule"] == f"expires: {days_ago(1)}"
    assert not checks(report, "stale")


def test_inferred_created_dates_are_reported_as_inferred(project: Path, mdir: Path) -> None:
    mem(mdir, "project_mod.md", "From Claude.", created=None, modified="2026-10-02T08:00:00Z")
    old = mem(mdir, "project_mtime.md", "Untouched for months.", created=None)
    set_mtime(old, days_ago(150))
    report = report_for(project)
    inferred = {Path(f.path).name: f for f in checks(report, "inferred_date")}
    assert inferred["project_mod.md"].data["created"] == "2026-10-02"
    assert "modified" in inferred["project_mod.md"].data["inferred_from"]
    assert inferred["project_mtime.md"].data["created"] == days_ago(150)
    assert "modification time" in inferred["project_mtime.md"].data["inferred_from"]
    assert all(f.level == NOTE for f in inferred.values())
    [stale] = checks(report, "stale")
    assert Path(stale.path).name == "project_mtime.md"
    assert "inferred" in stale.message and stale.data["created_inferred"] is True


# --- files ------------------------------------------------------------------------------------


def test_broken_and_missing_frontmatter(project: Path, mdir: Path) -> None:
    mdir.mkdir(parents=True)
    (mdir / "project_broken.md").write_text("---\nname: [unclosed\n---\nBody.\n")
    (mdir / "project_bare.md").write_text("Just a note without any frontmatter.\n")
    (mdir / "MEMORY.md").write_text(
        "- [broken](project_broken.md) — x\n- [bare](project_bare.md) — y\n"
    )
    report = report_for(project)
    found = {Path(f.path).name: f for f in checks(report, "frontmatter")}
    assert set(found) == {"project_broken.md", "project_bare.md"}
    assert found["project_broken.md"].message.startswith("broken frontmatter")
    assert found["project_bare.md"].message.startswith("no frontmatter")
    assert report.counts()["frontmatter"] == 2


def test_broken_frontmatter_says_where_and_how_to_fix_it(project: Path, mdir: Path) -> None:
    mdir.mkdir(parents=True)
    broken = mdir / "feedback_broken.md"
    broken.write_text(
        "---\nname: broken\ndescription: [unclosed\nmetadata:\n  type: feedback\n---\n"
        "Always use the staging database for migrations.\n"
    )
    noclose = mdir / "project_noclose.md"
    noclose.write_text("---\nname: noclose\ntype: project\nThe deploy freeze starts Friday.\n")
    before = {p: p.read_bytes() for p in (broken, noclose)}
    report = report_for(project)
    found = {Path(f.path).name: f for f in checks(report, "frontmatter")}
    assert set(found) == {"feedback_broken.md", "project_noclose.md"}
    assert all(f.level == PROBLEM for f in found.values())
    yaml_error = found["feedback_broken.md"].message
    # The YAML error, the line it is on (line 3 holds the unclosed '['), and how to fix it.
    assert yaml_error.startswith("broken frontmatter: line 3: while parsing a flow sequence")
    assert "line 4" in yaml_error and "quote" in yaml_error
    unclosed = found["project_noclose.md"].message
    assert "opened with --- on line 1 but never closed" in unclosed
    assert "add a line holding only ---" in unclosed
    with open_index() as idx:
        entries = {Path(e.path).name: e for e in idx.query()}
    assert entries["feedback_broken.md"].body == "Always use the staging database for migrations."
    assert entries["project_noclose.md"].body == "The deploy freeze starts Friday."
    assert (entries["project_noclose.md"].name, entries["project_noclose.md"].type) == (
        "noclose",
        "project",
    )
    # Files are the truth: doctor reads them, never rewrites them.
    assert {p: p.read_bytes() for p in before} == before


def test_invalid_dates_and_importance_are_reported_not_silently_replaced(
    project: Path, mdir: Path
) -> None:
    bad = mem(
        mdir,
        "project_bad_values.md",
        "The release train leaves on Tuesdays.",
        created="not-a-date",
        expires="2026-02-30",
        importance=9,
    )
    set_mtime(bad, "2026-09-15")
    mem(mdir, "project_vague.md", "Ask the team first.", importance="high")
    report = report_for(project)
    found = {
        (Path(f.path).name, f.data.get("field")): f.message for f in checks(report, "frontmatter")
    }
    assert found == {
        ("project_bad_values.md", "created"): (
            "created: not-a-date is not a valid date: write it as YYYY-MM-DD "
            "(until then it is taken from the file's modification time, 2026-09-15)"
        ),
        ("project_bad_values.md", "expires"): (
            "expires: 2026-02-30 is not a valid date: write it as YYYY-MM-DD "
            "(until then the memory never expires)"
        ),
        ("project_bad_values.md", "importance"): (
            "importance: 9 is out of range: write a whole number from 1 to 5 (read as 5)"
        ),
        ("project_vague.md", "importance"): (
            "importance: high is not a whole number: write one from 1 to 5 (read as 3)"
        ),
    }
    assert all(f.level == PROBLEM for f in checks(report, "frontmatter"))
    # An invalid date is not a missing one: no "no created date" note for it.
    inferred = {Path(f.path).name for f in checks(report, "inferred_date")}
    assert "project_bad_values.md" not in inferred


def test_a_plain_palace_note_without_frontmatter_is_only_a_note(project: Path) -> None:
    room = paths.palace_dir("rooms") / "testing"
    room.mkdir(parents=True)
    (room / "flaky.md").write_text("The e2e suite is flaky on Mondays.\n")
    report = report_for(project)
    [finding] = checks(report, "frontmatter")
    assert finding.level == NOTE


# --- drift: paths -----------------------------------------------------------------------------


def test_dead_absolute_and_home_paths(project: Path, mdir: Path, tmp_path: Path) -> None:
    live = tmp_path / "live.conf"
    live.write_text("x")
    (Path.home() / "notes").mkdir()
    body = (
        f"Config at {live} and `{tmp_path}/gone.conf`; notes in ~/notes and ~/old-notes/todo.md. "
        "The route /api/users and https://example.com/a/b.md are not files."
    )
    mem(mdir, "reference_paths.md", body, type_="reference")
    named = sorted(f.data["named"] for f in checks(report_for(project), "broken_path"))
    assert named == sorted([f"{tmp_path}/gone.conf", "~/old-notes/todo.md"])


def test_dead_relative_paths_resolve_against_the_project_root(project: Path, mdir: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("")
    body = (
        "Entry point src/app.py; the old loader src/loader.py; see ./scripts/deploy.sh. "
        "Fractions like 3/4 and and/or are words. We renamed lib/old.py last year."
    )
    mem(mdir, "project_layout.md", body)
    report = report_for(project)
    found = checks(report, "broken_path")
    assert sorted(f.data["named"] for f in found) == ["./scripts/deploy.sh", "src/loader.py"]
    assert all(f.data["resolved"].startswith(str(project)) for f in found)


def test_relative_paths_of_a_project_with_unknown_root_are_skipped_and_said(
    project: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "work" / "other-proj"  # '-' in the name: the key cannot be undone
    (elsewhere / ".git").mkdir(parents=True)
    mem(paths.project_memory_dir(elsewhere), "project_x.md", "Code lives in src/gone.py.")
    report = report_for(project)
    assert not checks(report, "broken_path")
    [note] = checks(report, "root_unknown")
    assert note.level == NOTE and paths.project_key(elsewhere) in note.message
    # Once a session (or doctor) has run inside it, the root is known and the path is checked.
    report = report_for(elsewhere)
    assert [f.data["named"] for f in checks(report, "broken_path")] == ["src/gone.py"]
    assert report_for(project).roots[paths.project_key(elsewhere)] == str(elsewhere)


def test_project_root_is_found_from_claude_code_transcripts(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "work" / "other-proj"
    (elsewhere / ".git").mkdir(parents=True)
    (elsewhere / "sub").mkdir()
    mem(paths.project_memory_dir(elsewhere), "project_x.md", "Code lives in src/gone.py.")
    launch = paths.projects_dir() / paths.sanitize_path(str(elsewhere / "sub"))
    launch.mkdir(parents=True)
    line = {"type": "user", "cwd": str(elsewhere / "sub"), "sessionId": "s1"}
    (launch / "s1.jsonl").write_text(json.dumps(line) + "\n")
    report = report_for(project)
    assert [f.data["named"] for f in checks(report, "broken_path")] == ["src/gone.py"]


# --- drift: `paths:` globs -----------------------------------------------------------------------


def tree_of(root: Path, *files: str) -> None:
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("x\n")


def test_a_paths_glob_that_matches_no_file_is_named_with_its_memory(
    project: Path, mdir: Path
) -> None:
    tree_of(project, "src/app.py", "db/migrations/0042_users.py", "web/ui/button.tsx")
    globs = [
        "db/migrations/*.py",  # matches
        "src/app.py",  # matches
        "button.tsx",  # a bare name: at any depth
        "web/",  # a folder
        "schema.prisma",  # nothing
        "src/**/*.ts",  # nothing (.tsx is not .ts)
        "db/migration/",  # a typo
    ]
    path = mem(mdir, "project_db.md", "Migrations are generated.", paths=globs)
    found = checks(report_for(project), "dead_glob")
    dead = sorted(f.data["glob"] for f in found)
    assert dead == ["db/migration/", "schema.prisma", "src/**/*.ts"]
    assert all(f.level == PROBLEM and f.path == str(path) and f.entry_id for f in found)
    assert all("project_db" in f.message and f.data["glob"] in f.message for f in found)


def test_a_palace_memorys_globs_are_checked_in_the_tree_doctor_runs_in(project: Path) -> None:
    tree_of(project, "infra/main.tf")
    room = paths.state_root() / "rooms" / "infrastructure"
    mem(room, "tf.md", "Terraform state is remote.", listed=False, paths=["*.tf", "*.tfvars"])
    found = checks(report_for(project), "dead_glob")
    assert [f.data["glob"] for f in found] == ["*.tfvars"]
    assert found[0].data["root"] == str(project)


def test_globs_follow_git_ignored_and_untracked_files(project: Path, mdir: Path) -> None:
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    shutil.rmtree(project / ".git")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    tree_of(project, "src/app.py", "build/out.js", ".env", "node_modules/x/index.js")
    (project / ".gitignore").write_text("build/\n.env\nnode_modules/\n")
    globs = ["src/*.py", ".env", "build/*.js", "node_modules/"]
    mem(mdir, "project_env.md", "Secrets live in .env.", paths=globs)
    found = checks(report_for(project), "dead_glob")
    # An untracked file counts, a file named outright counts even when ignored; what only
    # ignored files would match is not listed (the finding says ignored files are aside).
    assert sorted(f.data["glob"] for f in found) == ["build/*.js", "node_modules/"]


def test_the_globs_of_a_project_whose_root_is_unknown_are_not_checked(
    project: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "work" / "other-proj"
    (elsewhere / ".git").mkdir(parents=True)
    mem(paths.project_memory_dir(elsewhere), "project_x.md", "Tied.", paths=["nothing/*.py"])
    report = report_for(project)
    assert not checks(report, "dead_glob")
    [note] = checks(report, "globs_unchecked")
    assert note.level == NOTE


# --- drift: links and MEMORY.md ---------------------------------------------------------------


def test_links_to_unwritten_memories_are_to_write_notes(project: Path, mdir: Path) -> None:
    mem(mdir, "project_db.md", "Postgres 16. See [[deploy-runbook]] and [[feedback_tests]].")
    mem(mdir, "feedback_tests.md", "Run pytest -q.", type_="feedback")
    report = report_for(project)
    [note] = checks(report, "to_write")
    assert note.data["link"] == "deploy-runbook" and note.level == NOTE
    assert "to write" in note.message
    assert report.ok


def test_memory_index_mismatches(project: Path, mdir: Path) -> None:
    mem(mdir, "project_a.md", "Fact A.")
    mem(mdir, "project_b.md", "Fact B.", listed=False)
    with open(mdir / "MEMORY.md", "a") as fh:
        fh.write("- [Gone](project_gone.md) — deleted by hand\n- [Site](https://example.com)\n")
    report = report_for(project)
    [dead] = checks(report, "index_missing_file")
    assert dead.data == {"line": 2, "target": "project_gone.md"}
    [unlisted] = checks(report, "index_unlisted")
    assert Path(unlisted.path).name == "project_b.md"
    assert report.summary() == "1 dead MEMORY.md line, 1 not in MEMORY.md"


def test_a_claude_folder_without_memory_md_lists_every_file(project: Path, mdir: Path) -> None:
    mem(mdir, "project_a.md", "Fact A.", listed=False)
    mem(mdir, "project_b.md", "Fact B.", listed=False)
    room = paths.palace_dir("rooms") / "testing"
    mem(room, "flaky.md", "Flaky on Mondays.", type_="note", listed=False)  # palace: optional
    found = checks(report_for(project), "index_unlisted")
    assert sorted(Path(f.path).name for f in found) == ["project_a.md", "project_b.md"]


def test_memory_md_longer_than_claude_code_loads(project: Path, mdir: Path) -> None:
    mem(mdir, "project_a.md", "Fact A.")
    with open(mdir / "MEMORY.md", "a") as fh:
        fh.writelines(f"- note {n}\n" for n in range(210))
    [finding] = checks(report_for(project), "index_truncated")
    assert "first 200 lines" in finding.message


# --- duplicates and contradictions ------------------------------------------------------------


def test_near_duplicates_and_contradictions(project: Path, mdir: Path) -> None:
    mem(mdir, "project_port_a.md", "Use port 5432 for the dev database.")
    mem(mdir, "project_port_b.md", "Use port 5433 for the dev database.")
    mem(mdir, "feedback_mig_a.md", "Always run migrations before deploy.", type_="feedback")
    mem(mdir, "feedback_mig_b.md", "Never run migrations before deploy.", type_="feedback")
    mem(mdir, "feedback_t_a.md", "Tests run with pytest -q in the venv.", type_="feedback")
    mem(mdir, "feedback_t_b.md", "Tests run with pytest -q inside the venv.", type_="feedback")
    mem(mdir, "project_other.md", "The frontend is built with Vite and React.")
    report = report_for(project)
    pairs = {
        f.check: sorted(Path(p).name for p in f.data["paths"])
        for f in checks(report, "duplicate") + checks(report, "contradiction")
    }
    contradictions = sorted(
        sorted(Path(p).name for p in f.data["paths"]) for f in checks(report, "contradiction")
    )
    assert contradictions == [
        ["feedback_mig_a.md", "feedback_mig_b.md"],
        ["project_port_a.md", "project_port_b.md"],
    ]
    assert pairs["duplicate"] == ["feedback_t_a.md", "feedback_t_b.md"]
    port = next(f.message for f in checks(report, "contradiction") if "numbers" in f.message)
    assert "5432" in port and "5433" in port
    assert not any("project_other.md" in str(f.data) for f in report.findings)


def test_numbered_rules_are_not_contradictions(project: Path, mdir: Path) -> None:
    # "Rule 10" and "Rule 18" label two memories; they are no values that disagree.
    mem(mdir, "feedback_r10.md", "Rule 10: review every migration before merging it.",
        type_="feedback")  # fmt: skip
    mem(mdir, "feedback_r18.md", "Rule 18: review every migration before deploying it.",
        type_="feedback")  # fmt: skip
    assert checks(report_for(project), "contradiction") == []


def test_same_name_with_different_content_is_a_merge_candidate(project: Path, mdir: Path) -> None:
    mem(mdir, "project_ci_a.md", "CI runs on GitHub Actions.", title="ci-setup")
    mem(mdir, "project_ci_b.md", "Nightly builds are on the self-hosted runner.", title="ci-setup")
    [dup] = checks(report_for(project), "duplicate")
    assert "same name" in dup.message


def test_the_same_user_fact_in_two_projects_is_not_a_duplicate(
    project: Path, mdir: Path, tmp_path: Path
) -> None:
    other = tmp_path / "work" / "b"
    (other / ".git").mkdir(parents=True)
    fact = "The user is a staff engineer who prefers short answers."
    mem(mdir, "user_role.md", fact, type_="user")
    mem(paths.project_memory_dir(other), "user_role.md", fact, type_="user")
    report = report_for(project)
    assert not checks(report, "duplicate") and report.ok


def test_duplicates_can_be_skipped(project: Path, mdir: Path) -> None:
    mem(mdir, "project_a.md", "Use port 5432 for the dev database.")
    mem(mdir, "project_b.md", "Use port 5432 for the dev database!")
    assert checks(report_for(project), "duplicate")
    assert not checks(report_for(project, duplicates=False), "duplicate")


# --- always-load discipline -------------------------------------------------------------------


def always_load_tree(mdir: Path, n_plain: int) -> None:
    mem(mdir, "feedback_drop.md", "Never drop table users in prod.", type_="feedback")
    mem(
        mdir,
        "feedback_pay.md",
        "Do not charge the card twice on payment retries.",
        type_="feedback",
    )
    mem(mdir, "feedback_keys.md", "Keep the api key out of logs.", type_="feedback")
    for n in range(n_plain):
        mem(mdir, f"project_note{n}.md", f"Sprint note number {n} about the UI colours.")


def test_always_load_at_the_cap_is_fine(project: Path, mdir: Path) -> None:
    always_load_tree(mdir, 12)  # 3 + 12 = 15
    assert not checks(report_for(project, duplicates=False), "always_load")


def test_always_load_over_the_cap_gives_a_triage_list(project: Path, mdir: Path) -> None:
    always_load_tree(mdir, 13)  # 3 + 13 = 16
    mem(mdir, "user_role.md", "The user is a staff engineer.", type_="user")
    room = paths.palace_dir("rooms") / "ui"
    mem(room, "pinned.md", "The UI uses the teal palette.", type_="note", always=True, listed=False)
    report = report_for(project, duplicates=False)
    [finding] = checks(report, "always_load")
    assert finding.data["count"] == 18 and finding.data["max"] == 15
    assert report.summary() == "18 always-loaded (max 15)"
    assert "keep 3 with irreversible consequences, review 1 profile facts, move 14" in (
        finding.message
    )
    rows = finding.data["triage"]
    assert [r["verdict"] for r in rows[:4]] == ["keep", "keep", "keep", "profile"]
    assert [r["why"] for r in rows[:3]] == ["data loss", "money loss", "security"]
    assert {r["verdict"] for r in rows[4:]} == {"on-demand"}
    pinned = next(r for r in rows if r["pinned"])
    assert pinned["how"] == "remove `always: true`"


def test_always_load_max_is_configurable(project: Path, mdir: Path, state: Path) -> None:
    always_load_tree(mdir, 2)
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text("always_load_max: 4\n")
    [finding] = checks(report_for(project, duplicates=False), "always_load")
    assert finding.data["count"] == 5 and finding.data["keep"] == 3


# --- the SessionStart line --------------------------------------------------------------------


def warning(project: Path) -> str | None:
    with open_index() as idx:
        idx.refresh_for_wake(project)
        return wake_warning(idx, project)


def test_wake_warning_only_when_something_is_wrong(project: Path, mdir: Path) -> None:
    mem(mdir, "project_db.md", "The API uses Postgres 16.")
    assert warning(project) is None
    mem(mdir, "project_old.md", "Sprint goal: ship search.", created=days_ago(120))
    mem(mdir, "project_paths.md", "Loader in src/loader.py.")
    assert warning(project) == "1 stale, 1 broken path: memory-tool doctor"


def test_wake_warning_covers_only_what_the_session_loads(
    project: Path, mdir: Path, tmp_path: Path
) -> None:
    mem(mdir, "project_db.md", "The API uses Postgres 16.")
    other = tmp_path / "work" / "b"
    (other / ".git").mkdir(parents=True)
    mem(paths.project_memory_dir(other), "project_old.md", "Old plan.", created=days_ago(300))
    with open_index() as idx:
        idx.refresh()
        assert wake_warning(idx, project) is None
        assert wake_warning(idx, other) == "1 stale: memory-tool doctor"


def test_wake_warning_is_cached_until_the_index_or_the_day_changes(
    project: Path, mdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone.conf"
    mem(mdir, "reference_conf.md", f"Config at {gone}.", type_="reference")
    assert warning(project) == "1 broken path: memory-tool doctor"
    gone.write_text("back")  # the tree did not change: the cached answer stands today
    assert warning(project) == "1 broken path: memory-tool doctor"
    monkeypatch.setenv("MEMORY_TOOL_TODAY", "2026-11-30")
    assert warning(project) is None
    gone.unlink()
    mem(mdir, "project_new.md", "A new fact.")  # the index changed: checked again
    assert warning(project) == "1 broken path: memory-tool doctor"


def test_wake_warning_sees_memory_md_edits(project: Path, mdir: Path) -> None:
    mem(mdir, "project_a.md", "Fact A.")
    assert warning(project) is None
    with open(mdir / "MEMORY.md", "a") as fh:
        fh.write("- [Gone](project_gone.md) — x\n")
    assert warning(project) == "1 dead MEMORY.md line: memory-tool doctor"


def test_hygiene_can_be_switched_off(project: Path, mdir: Path, state: Path) -> None:
    mem(mdir, "project_old.md", "Sprint goal: ship search.", created=days_ago(120))
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text("hygiene:\n  enabled: false\n")
    assert warning(project) is None


def test_wake_units_is_one_line_that_fits_the_brief(project: Path, mdir: Path) -> None:
    for n in range(20):
        mem(mdir, f"project_old{n}.md", f"Old fact {n} in src/x{n}.py.", created=days_ago(200))
    with open(mdir / "MEMORY.md", "a") as fh:
        fh.write("- [Gone](project_gone.md) — x\n")
    with open_index() as idx:
        idx.refresh_for_wake(project)
        [unit] = wake_units(idx, project)
    assert unit.text.count("\n") == 1 and unit.text.endswith("\n")
    assert unit.text.startswith("Memory hygiene: 20 stale, 20 broken paths")
    assert unit.text.rstrip().endswith(": memory-tool doctor")


# --- fix --------------------------------------------------------------------------------------


def hashes(root: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_insert_created_changes_nothing_else() -> None:
    lf = b"---\nname: a\nmetadata:\n  type: project\n---\n\nBody.\n"
    assert insert_created(lf, "2026-01-02") == (
        b"---\nname: a\nmetadata:\n  type: project\ncreated: 2026-01-02\n---\n\nBody.\n"
    )
    crlf = b"\xef\xbb\xbf---\r\nname: a\r\n---\r\nBody.\r\n"
    assert insert_created(crlf, "2026-01-02") == (
        b"\xef\xbb\xbf---\r\nname: a\r\ncreated: 2026-01-02\r\n---\r\nBody.\r\n"
    )
    bare = b"Just text.\n"
    assert insert_created(bare, "2026-01-02") == b"---\ncreated: 2026-01-02\n---\nJust text.\n"
    assert insert_created(b"---\nname: a\nBody without end\n", "2026-01-02") is None
    assert insert_created(b"---\ncreated: someday\n---\nx\n", "2026-01-02") is None


def test_fix_touches_only_what_it_says_and_keeps_a_backup(
    project: Path, mdir: Path, state: Path, tmp_path: Path
) -> None:
    dated = mem(mdir, "project_dated.md", "Has a date.")
    undated = mem(mdir, "project_undated.md", "No date here.", created=None)
    set_mtime(undated, "2026-09-15")
    unlisted = mem(mdir, "project_unlisted.md", "Not in the index file.", listed=False)
    broken = mdir / "project_broken.md"
    broken.write_text("---\nname: [oops\n---\nBroken.\n")
    set_mtime(broken, "2026-09-15")
    with open(mdir / "MEMORY.md", "a") as fh:
        fh.write("- [broken](project_broken.md) — x\n")
    stale = mem(mdir, "project_stale.md", "Old plan in src/gone.py.", created=days_ago(200))
    memory_md_before = (mdir / "MEMORY.md").read_bytes()
    before = hashes(tmp_path / "home")
    undated_text = undated.read_text()
    undated_mtime = undated.stat().st_mtime_ns

    with open_index() as idx:
        idx.refresh(project)
        report = diagnose(idx, project)
        result = fix(idx, report)

    after = hashes(tmp_path / "home")
    changed = {p for p in before if before[p] != after.get(p)}
    assert changed == {str(undated), str(mdir / "MEMORY.md")}
    assert {a["path"] for a in result.actions} == changed
    # The date went in as the last frontmatter line; the file's bytes are otherwise the same.
    text = undated.read_text()
    assert "created: 2026-09-15\n---\n" in text
    assert text.replace("created: 2026-09-15\n", "") == undated_text
    assert undated.stat().st_mtime_ns == undated_mtime
    # MEMORY.md: appended to, never rewritten.
    new_index = (mdir / "MEMORY.md").read_bytes()
    assert new_index.startswith(memory_md_before)
    added = new_index[len(memory_md_before) :].decode().splitlines()
    assert added == ["- [project_unlisted](project_unlisted.md) — Not in the index file"]
    # The broken file and the stale one are left for a person.
    for p in (dated, unlisted, broken, stale):
        assert after[str(p)] == before[str(p)]
    # The backup holds the originals, byte for byte, and a manifest.
    assert result.backup is not None and result.backup.parent == state / "backups"
    manifest = json.loads((result.backup / "manifest.json").read_text())
    assert {m["path"] for m in manifest} == changed
    for m in manifest:
        assert hashlib.sha256(Path(m["backup"]).read_bytes()).hexdigest() == before[m["path"]]

    with open_index() as idx:
        idx.refresh(project)
        again = diagnose(idx, project)
    assert not [f for f in again.findings if f.data.get("fixable")]
    assert again.summary() == "1 stale, 1 broken path, 1 bad frontmatter"


def test_fix_with_nothing_to_do_makes_no_backup(project: Path, mdir: Path) -> None:
    mem(mdir, "project_a.md", "Fact A.")
    with open_index() as idx:
        idx.refresh(project)
        result = fix(idx, diagnose(idx, project))
    assert result.backup is None and not result.actions
    assert not (paths.state_root() / "backups").exists()


def test_fix_skips_a_file_changed_since_the_check(project: Path, mdir: Path) -> None:
    undated = mem(mdir, "project_undated.md", "No date here.", created=None)
    with open_index() as idx:
        idx.refresh(project)
        report = diagnose(idx, project)
        undated.write_text(undated.read_text() + "More.\n")
        result = fix(idx, report)
    assert not result.actions
    assert "changed since" in result.skipped[0]["reason"]
    assert "created:" not in undated.read_text()
    # Nothing changed, so no backup folder either.
    assert result.backup is None and not (paths.state_root() / "backups").exists()


def test_line_tokens_is_exact_without_counting_each_number(project: Path) -> None:
    import random

    from memory_tool.base import tokens

    assert all(tokens.count(f"{n:03d}") == 1 for n in range(1000))  # what line_tokens relies on
    rng = random.Random(5)
    labels = [one if rng.random() < 0.5 else many for one, many in LABELS.values()]
    labels.append("always-loaded (max 15)")
    with open_index() as idx:
        for _ in range(200):
            parts = [
                f"{rng.choice([1, 7, 42, 999, 1000, 4175, 10050, 1000500])} {label}"
                for label in rng.sample(labels, rng.randint(1, len(labels)))
            ]
            text = f"{WAKE_PREFIX}{', '.join(parts)}{WAKE_SUFFIX}\n"
            assert line_tokens(idx, text) == tokens.count(text), text


def test_l1_alone_over_the_cap_is_said_once(project: Path, mdir: Path, tmp_path: Path) -> None:
    other = tmp_path / "work" / "b"
    (other / ".git").mkdir(parents=True)
    mem(paths.project_memory_dir(other), "project_x.md", "Another project's fact.")
    for n in range(16):
        mem(
            mdir,
            f"user_fact{n}.md",
            f"The user fact number {n} is about tea brand {n}.",
            type_="user",
        )
    report = report_for(project, duplicates=False)
    [finding] = checks(report, "always_load")
    assert finding.message.startswith("L1 alone holds 16 always-loaded entries (max 15)")
    assert {r["verdict"] for r in finding.data["triage"]} == {"profile"}


def test_one_memorys_findings_are_the_full_reports_findings_about_it(
    sandbox: Path, project: Path
) -> None:
    """diagnose_entry (the web UI's memory page) checks one memory without checking all: for
    every memory of a palace with stale facts, broken paths, an unlisted file, links, duplicates
    and an always-load overflow, it finds exactly what the full report says about it."""
    from ui_support import demo_palace

    from memory_tool.hygiene.doctor import diagnose, diagnose_entry
    from memory_tool.store.palace import add_memory

    palace = demo_palace().build(sandbox, hostile=True)
    root = palace["root"]
    with open_index() as idx:
        original = idx.get(palace["ids"]["postgres-version"]).body
        # A near-duplicate on purpose (the duplicate check must find it): saved with force.
        add_memory(
            idx, original + " Still true.", type_="note", cwd=root, room="database", force=True
        )
        # A path gone from disk in a hand-written memory (a cold summary's file list is history).
        add_memory(idx, "The deploy script is scripts/deploy-legacy.sh.", type_="note", cwd=root,
                   room="deployment")  # fmt: skip
        idx.refresh(root)
        report = diagnose(idx, root)
        checks = set()
        for e in idx.memories():
            full = sorted(f.message for f in report.about(e.id, e.path))
            assert sorted(f.message for f in diagnose_entry(idx, e.id, root)) == full, e.path
            checks |= {f.check for f in report.about(e.id, e.path)}
    assert {"stale", "broken_path", "index_unlisted", "duplicate", "always_load"} <= checks
