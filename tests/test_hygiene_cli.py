"""`memory-tool doctor`, `stale` and `budget` as a person runs them, and the one line the real
SessionStart hook adds when memory needs attention."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from helpers import as_event, run_hook, write_memory

from memory_tool.base import paths
from memory_tool.cli.main import main

OLD = (dt.date(2026, 11, 29) - dt.timedelta(days=120)).isoformat()


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def mem(folder: Path, name: str, body: str, type_: str = "project", **fields: object) -> Path:
    fields.setdefault("created", "2026-11-01")
    path = write_memory(folder, name, body, type_=type_, **fields)
    with open(folder / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write(f"- [{name}]({name}) — {body[:30]}\n")
    return path


@pytest.fixture
def mdir(project: Path) -> Path:
    return paths.project_memory_dir(project)


def test_doctor_exits_0_on_a_clean_tree(project: Path, mdir: Path) -> None:
    mem(mdir, "project_db.md", "The API uses Postgres 16.")
    result = run("doctor", "--cwd", str(project))
    assert result.exit_code == 0, result.output
    assert "clean: no problems" in result.output


def test_doctor_exits_1_with_problems_and_names_them(project: Path, mdir: Path) -> None:
    mem(mdir, "project_old.md", "Sprint goal: ship search.", created=OLD)
    mem(mdir, "project_paths.md", "The loader lives in src/loader.py.")
    result = run("doctor", "--cwd", str(project))
    assert result.exit_code == 1
    assert "120 days old, project: stale after 90 days" in result.output
    assert "names src/loader.py, which does not exist" in result.output
    assert result.output.rstrip().endswith("2 problems: 1 stale, 1 broken path")


def test_doctor_json(project: Path, mdir: Path) -> None:
    mem(mdir, "project_old.md", "Sprint goal: ship search. See [[roadmap]].", created=OLD)
    result = run("doctor", "--json", "--cwd", str(project))
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["ok"] is False and data["problems"] == 1 and data["summary"] == "1 stale"
    by_check = {f["check"]: f for f in data["findings"]}
    assert by_check["stale"]["age_days"] == 120
    assert by_check["to_write"]["level"] == "note" and by_check["to_write"]["link"] == "roadmap"
    assert data["roots"][paths.project_key(project)] == str(project)


def test_notes_alone_do_not_fail_the_run(project: Path, mdir: Path) -> None:
    mem(mdir, "project_a.md", "Sprint goal: ship search. See [[roadmap]].")
    assert run("doctor", "--cwd", str(project)).exit_code == 0


def test_doctor_fix_repairs_safely_then_passes(project: Path, mdir: Path, state: Path) -> None:
    undated = write_memory(
        mdir, "project_undated.md", "No date and no index line.", type_="project"
    )
    result = run("doctor", "--cwd", str(project))
    # The problem (no MEMORY.md line) is what the hint counts; the inferred date is a note.
    assert result.exit_code == 1 and "--fix` repairs 1 of them safely" in result.output
    result = run("doctor", "--fix", "--cwd", str(project))
    assert result.exit_code == 0, result.output
    assert "backup: " in result.output and "clean: no problems" in result.output
    assert "created: " in undated.read_text()
    assert "(project_undated.md)" in (mdir / "MEMORY.md").read_text()
    [backup] = (state / "backups").iterdir()
    manifest = json.loads((backup / "manifest.json").read_text())
    assert {Path(m["path"]).name for m in manifest} == {"project_undated.md", "MEMORY.md"}
    assert [m["backup"] for m in manifest if m["path"].endswith("MEMORY.md")] == [None]
    # Nothing left to repair: a second --fix makes no new backup.
    assert run("doctor", "--fix", "--cwd", str(project)).exit_code == 0
    assert len(list((state / "backups").iterdir())) == 1


def test_doctor_fix_json_reports_what_it_did(project: Path, mdir: Path) -> None:
    write_memory(mdir, "project_undated.md", "No date.", type_="project")
    result = run("doctor", "--fix", "--json", "--cwd", str(project))
    data = json.loads(result.output)
    assert data["ok"] is True and data["fix"]["backup"]
    assert sorted(Path(a["path"]).name for a in data["fix"]["actions"]) == [
        "MEMORY.md",
        "project_undated.md",
    ]


def test_stale_lists_age_and_rule(project: Path, mdir: Path) -> None:
    mem(mdir, "project_old.md", "Sprint goal: ship search.", created=OLD)
    mem(mdir, "project_gone.md", "Freeze until launch.", expires="2026-11-01")
    mem(mdir, "project_new.md", "Fresh fact.")
    result = run("stale")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert len(lines) == 2
    assert "120d" in lines[0] and "project: stale after 90 days" in lines[0]
    assert "expires: 2026-11-01" in lines[1]
    rows = json.loads(run("stale", "--json").output)
    assert [r["name"] for r in rows] == ["project_old", "project_gone"]
    assert rows[1]["expired"] is True


def test_stale_marks_inferred_dates(project: Path, mdir: Path) -> None:
    mem(mdir, "project_old.md", "Sprint goal.", created=None, modified=f"{OLD}T10:00:00Z")
    out = run("stale").output
    assert f"{OLD}~" in out and "inferred" in out


def test_stale_with_nothing_stale(project: Path, mdir: Path) -> None:
    mem(mdir, "project_new.md", "Fresh fact.")
    assert run("stale").output.strip() == "no stale memories"


# --- budget -----------------------------------------------------------------------------------


def test_budget_draws_each_layer_against_its_budget(project: Path, mdir: Path) -> None:
    mem(mdir, "user_role.md", "The user is a staff engineer.", type_="user")
    mem(mdir, "feedback_tests.md", "Never skip the tests.", type_="feedback")
    result = run("budget", "--cwd", str(project))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    l1 = next(line for line in lines if line.startswith("L1 "))
    l2 = next(line for line in lines if line.startswith("L2 "))
    assert "/200" in l1 and "1 entry" in l1 and "█" in l1
    assert "/500" in l2
    l3 = next(line for line in lines if line.startswith("L3 "))
    assert "-/1500" in l3 and "--prompt" in l3
    assert any(line.startswith("hot ") for line in lines)
    data = json.loads(run("budget", "--json", "--cwd", str(project)).output)
    layers = {row["layer"]: row for row in data["layers"]}
    assert layers["L1"]["budget"] == 200 and layers["L2"]["budget"] == 500
    assert (
        data["brief_tokens"]
        == layers["L1"]["tokens"] + layers["L2"]["tokens"] + data["frame_tokens"]
    )


def test_budget_lists_what_was_deferred(project: Path, mdir: Path, state: Path) -> None:
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text("budgets:\n  l2_tokens: 60\n")
    for n in range(6):
        mem(mdir, f"project_fact{n}.md", f"Project fact number {n} about the build system.")
    out = run("budget", "--cwd", str(project)).output
    l2 = next(line for line in out.splitlines() if line.startswith("L2 "))
    assert "deferred" in l2
    assert "deferred from L2: " in out and "project_fact" in out
    data = json.loads(run("budget", "--json", "--cwd", str(project)).output)
    assert data["deferred"]["L2"] and all(d["id"] for d in data["deferred"]["L2"])
    assert {row["layer"]: row for row in data["layers"]}["L2"]["tokens"] <= 60


def test_budget_for_a_room_and_a_prompt(project: Path) -> None:
    room = paths.palace_dir("rooms") / "database"
    write_memory(room, "pg.md", "The dev database runs Postgres 16 on port 5432.", type_="note")
    write_memory(room, "mig.md", "Database migrations need a backup first.", type_="note")
    for args in (["--room", "database"], ["--prompt", "the postgres database migration failed"]):
        data = json.loads(run("budget", "--json", "--cwd", str(project), *args).output)
        l3 = {row["layer"]: row for row in data["layers"]}["L3"]
        assert 0 < l3["tokens"] <= l3["budget"] == 1500
        assert l3["note"].startswith("database")


# --- the SessionStart line, through the real hook ---------------------------------------------


def hook_context(project: Path, source: str = "startup") -> str:
    payload = {
        "session_id": "s1",
        "transcript_path": "/nonexistent.jsonl",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": source,
    }
    proc = run_hook("SessionStart", payload)
    assert proc.returncode == 0, proc.stderr
    text: str = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    return text


def hygiene_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("Memory hygiene:")]


def test_session_start_line_appears_exactly_when_something_is_wrong(
    project: Path, mdir: Path
) -> None:
    mem(mdir, "feedback_tests.md", "Never skip the tests.", type_="feedback")
    assert hygiene_lines(hook_context(project)) == []
    mem(mdir, "project_old.md", "Sprint goal: ship search.", created=OLD)
    mem(mdir, "project_paths.md", "The loader lives in src/loader.py.")
    ctx = hook_context(project)
    assert hygiene_lines(ctx) == ["Memory hygiene: 1 stale, 1 broken path: memory-tool doctor"]
    assert ctx.index("Memory hygiene:") < ctx.index("</memory-context>")
    (project / "src").mkdir()
    (project / "src" / "loader.py").write_text("")
    (mdir / "project_old.md").unlink()
    (mdir / "MEMORY.md").write_text(
        "- [feedback_tests.md](feedback_tests.md) — x\n- [project_paths.md](project_paths.md) — y\n"
    )
    assert hygiene_lines(hook_context(project)) == []


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_session_start_adds_one_line_however_much_is_wrong(
    project: Path, mdir: Path, source: str
) -> None:
    for n in range(30):
        mem(mdir, f"project_old{n}.md", f"Old plan {n} in src/gone{n}.py.", created=OLD)
    (mdir / "project_broken.md").write_text("---\nname: [oops\n---\nBroken.\n")
    ctx = hook_context(project, source)
    [line] = hygiene_lines(ctx)
    assert line.endswith(": memory-tool doctor")
    assert "30 stale" in line and "30 broken paths" in line and "31 always-loaded" in line
    assert sum("doctor" in x for x in ctx.splitlines()) == 1


def test_session_start_line_off_when_hygiene_is_disabled(
    project: Path, mdir: Path, state: Path
) -> None:
    mem(mdir, "project_old.md", "Sprint goal: ship search.", created=OLD)
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text("hygiene:\n  enabled: false\n")
    assert hygiene_lines(hook_context(project)) == []


def test_budget_shows_the_hot_tier_of_the_latest_session(project: Path) -> None:
    from memory_tool.tiers import digest

    payload = {"session_id": "abc-123", "cwd": str(project), "transcript_path": "/none.jsonl"}
    digest.update_session(
        as_event(payload), prompt="Fix the login redirect bug in the auth middleware"
    )
    data = json.loads(run("budget", "--json", "--cwd", str(project)).output)
    hot = {row["layer"]: row for row in data["layers"]}["hot"]
    assert 0 < hot["tokens"] <= hot["budget"] and "abc-123" in hot["note"]
    out = run("budget", "--session", "nope", "--cwd", str(project)).output
    assert "no hot state for session nope" in out


def test_session_start_line_follows_memory_md_edits(project: Path, mdir: Path) -> None:
    write_memory(
        mdir, "feedback_tests.md", "Never skip the tests.", type_="feedback", created="2026-11-01"
    )
    assert hygiene_lines(hook_context(project)) == [
        "Memory hygiene: 1 not in MEMORY.md: memory-tool doctor"
    ]
    (mdir / "MEMORY.md").write_text("- [tests](feedback_tests.md) — Never skip the tests\n")
    assert hygiene_lines(hook_context(project)) == []


def test_doctor_fix_that_changes_nothing_leaves_no_backup(
    project: Path, mdir: Path, state: Path
) -> None:
    # Listed in MEMORY.md, and an empty `created:` that --fix cannot fill in by itself.
    path = mem(mdir, "project_empty_date.md", "The deploy freeze starts Friday.", created=None)
    before = path.read_bytes()
    for _ in range(2):
        result = run("doctor", "--fix", "--cwd", str(project))
        assert "backup: " not in result.output
    assert path.read_bytes() == before
    assert not (state / "backups").exists() or not list((state / "backups").iterdir())


def test_doctor_offers_to_fix_only_what_fix_can_fix(project: Path, mdir: Path) -> None:
    # `created: null`: the key is there without a value, which --fix leaves to a person.
    mem(mdir, "project_empty_date.md", "The release train leaves on Tuesdays.", created=None)
    noclose = mdir / "project_noclose.md"
    noclose.write_text("---\nname: noclose\ntype: project\nThe deploy freeze starts Friday.\n")
    with open(mdir / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write("- [noclose](project_noclose.md) — freeze\n")
    write_memory(mdir, "project_undated.md", "Fixable: frontmatter without a date.")

    first = run("doctor", "--fix", "--cwd", str(project))
    assert "added created: " in first.output
    assert "skipped" not in first.output  # nothing was offered that --fix cannot do
    after = run("doctor", "--json", "--cwd", str(project))
    findings = json.loads(after.output)["findings"]
    assert not [f for f in findings if f.get("fixable")]
    inferred = {Path(f["path"]).name: f for f in findings if f["check"] == "inferred_date"}
    assert {"project_empty_date.md", "project_noclose.md"} <= set(inferred)
    assert "add created: by hand" in inferred["project_empty_date.md"]["message"]
    text = run("doctor", "--cwd", str(project)).output
    assert "--fix` repairs" not in text
    again = run("doctor", "--fix", "--cwd", str(project)).output
    assert "skipped" not in again and "fix: nothing safe to repair" in again


def test_fix_adding_a_date_does_not_hide_missing_name_description_and_type(
    project: Path, mdir: Path
) -> None:
    mdir.mkdir(parents=True)
    plain = mdir / "project_plain.md"
    plain.write_text("The cache is warmed by a cron job at 05:00.\n")
    (mdir / "MEMORY.md").write_text("- [plain](project_plain.md) — cache warm-up\n")
    result = run("doctor", "--cwd", str(project))
    assert "no frontmatter: add name, description and type" in result.output
    result = run("doctor", "--fix", "--cwd", str(project))
    assert "added created: " in result.output
    assert plain.read_text().startswith("---\ncreated: ")
    # The date is in; the rest is still missing, and doctor keeps saying so.
    result = run("doctor", "--cwd", str(project))
    assert result.exit_code == 1
    assert "frontmatter lacks name, description and type: add them" in result.output
    assert result.output.rstrip().endswith("1 problem: 1 bad frontmatter")
    # Half done by hand: only what is still missing is named.
    plain.write_text(plain.read_text().replace("---\n", "---\nname: cache warm-up\n", 1))
    result = run("doctor", "--cwd", str(project))
    assert "frontmatter lacks description and type: add them" in result.output


@pytest.mark.parametrize(("bad", "shown"), [("-5", "-5"), ("lots", '"lots"')])
def test_a_bad_budget_costs_only_that_setting_and_every_place_names_it(
    project: Path, mdir: Path, state: Path, bad: str, shown: str
) -> None:
    mem(mdir, "feedback_tests.md", "Never skip the tests.", type_="feedback")
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text(f"budgets: {{l2_tokens: {bad}}}\n")
    # The brief still comes, under the default budget, with one line naming the bad key.
    ctx = hook_context(project)
    assert "Never skip the tests." in ctx
    [line] = hygiene_lines(ctx)
    assert "config.yaml budgets.l2_tokens" in line and "whole number >= 0" in line
    assert line.endswith(": memory-tool doctor")
    prompt = {"session_id": "s2", "cwd": str(project), "prompt": "where were we last time?"}
    answered = run_hook("UserPromptSubmit", prompt)
    assert answered.returncode == 0
    assert answered.stderr == b""  # a hook's output is its JSON: the problem goes to the log
    assert "Traceback" not in (paths.log_file().read_text() if paths.log_file().exists() else "")
    wake = CliRunner().invoke(main, ["wake", "--cwd", str(project)])
    assert wake.exit_code == 0 and "Never skip the tests." in wake.output
    assert "L2: " in wake.output and "/500 tokens" in wake.output  # the default budget
    assert "budgets.l2_tokens" in wake.stderr and "l2_tokens: 500" in wake.stderr
    doctor = run("doctor", "--cwd", str(project))
    assert doctor.exit_code == 1
    assert f"budgets.l2_tokens: {shown} is not a whole number >= 0" in doctor.output
    assert "e.g. `l2_tokens: 500`" in doctor.output


def test_unknown_keys_and_bad_modes_are_reported_not_ignored(
    project: Path, mdir: Path, state: Path
) -> None:
    mem(mdir, "feedback_tests.md", "Never skip the tests.", type_="feedback")
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.yaml").write_text("budgets:\n  l2_token: 60\nhandoff:\n  mode: nag\n")
    ctx = hook_context(project)
    assert "Never skip the tests." in ctx
    assert hygiene_lines(ctx) == [
        "Memory hygiene: 2 config.yaml problems (budgets.l2_token, handoff.mode): "
        "memory-tool doctor"
    ]
    doctor = run("doctor", "--cwd", str(project))
    assert doctor.exit_code == 1
    assert "budgets.l2_token is not a setting" in doctor.output
    assert "did you mean budgets.l2_tokens?" in doctor.output
    assert 'handoff.mode: "nag" is not one of off, remind, block' in doctor.output
    data = json.loads(run("doctor", "--json", "--cwd", str(project)).output)
    assert {f["key"] for f in data["findings"] if f["check"] == "config"} == {
        "budgets.l2_token",
        "handoff.mode",
    }
    # Fixed: the line goes away at the next session.
    (state / "config.yaml").write_text("budgets:\n  l2_tokens: 60\nhandoff:\n  mode: remind\n")
    assert hygiene_lines(hook_context(project)) == []
    assert run("doctor", "--cwd", str(project)).exit_code == 0
