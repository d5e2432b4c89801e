"""The core commands, through click as a person runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memory_tool.base import paths, tokens
from memory_tool.cli.main import main


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_init_creates_the_palace_and_never_overwrites() -> None:
    cli("init")
    root = paths.state_root()
    for name in ("identity", "rooms", "wiki", "cold", "hot", "config.yaml", "rooms.yaml"):
        assert (root / name).exists()
    (root / "config.yaml").write_text("always_load_max: 9\n")
    out = cli("init")
    assert "kept" in out
    assert (root / "config.yaml").read_text() == "always_load_max: 9\n"


def test_an_unedited_copy_of_an_older_template_is_upgraded_an_edited_one_kept() -> None:
    """What dpkg does with conffiles: `init` (run by install.sh on every upgrade) brings the
    room vocabulary up to date for users who never touched rooms.yaml, and only for them."""
    import hashlib

    from memory_tool.base.resources import templates_dir
    from memory_tool.store.palace import SHIPPED_RECORD

    cli("init")
    root = paths.state_root()
    old = "rooms:\n  authentication:\n    keywords: [login]\n"  # as an older release shipped it
    (root / "rooms.yaml").write_text(old)
    record = json.loads((root / SHIPPED_RECORD).read_text())
    record["rooms.yaml"] = hashlib.sha256(old.encode()).hexdigest()
    (root / SHIPPED_RECORD).write_text(json.dumps(record))
    mine = "always_load_max: 9\n"
    (root / "config.yaml").write_text(mine)

    out = cli("init")
    assert (root / "rooms.yaml").read_text() == (templates_dir() / "rooms.yaml").read_text()
    assert f"updated  {root / 'rooms.yaml'}" in out
    assert (root / "config.yaml").read_text() == mine  # edited: never touched
    assert "edited by you" not in out  # the config template did not change since init

    record = json.loads((root / SHIPPED_RECORD).read_text())
    record["config.yaml"] = "0" * 64  # as if config.yaml had been copied from an older template
    (root / SHIPPED_RECORD).write_text(json.dumps(record))
    out = cli("init")
    assert (root / "config.yaml").read_text() == mine
    assert "edited by you" in out and "updated" not in out


def test_a_palace_file_from_before_the_record_is_left_alone() -> None:
    from memory_tool.store.palace import SHIPPED_RECORD

    cli("init")
    root = paths.state_root()
    (root / SHIPPED_RECORD).unlink()
    (root / "rooms.yaml").write_text("rooms: {}\n")
    cli("init")
    assert (root / "rooms.yaml").read_text() == "rooms: {}\n"


def test_add_writes_a_claude_code_memory_and_its_index_line(project: Path) -> None:
    out = cli(
        "add",
        "--type",
        "feedback",
        "--importance",
        "5",
        "--cwd",
        str(project),
        "Never force-push to main. Use --force-with-lease.",
    )
    entry_id = out.split()[1]
    folder = paths.project_memory_dir(project)
    (path,) = folder.glob("feedback_*.md")
    text = path.read_text()
    assert text.startswith("---\nname: never-force-push-to-main")
    assert (
        "metadata:\n  type: feedback" in text
        and "created: '2026-11-29'" in text
        or "created: 2026-11-29" in text
    )
    assert f"]({path.name}) — Never force-push to main." in (folder / "MEMORY.md").read_text()
    shown = cli("show", entry_id)
    assert "Never force-push to main." in shown and str(path) in shown


def test_add_redacts_secrets_and_drops_private_text(project: Path) -> None:
    cli(
        "add",
        "--type",
        "reference",
        "--cwd",
        str(project),
        "Staging key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 "
        "<private>my diary</private> ok",
    )
    (path,) = paths.project_memory_dir(project).glob("reference_*.md")
    text = path.read_text()
    assert "sk-ant-api03-abcdefghijklmnop" not in text and "REDACTED" in text
    assert "my diary" not in text


def test_add_to_a_room_and_to_the_wiki(project: Path) -> None:
    cli("add", "--room", "database", "--cwd", str(project), "Pool size is 20.")
    cli("add", "--tier", "wiki", "--type", "wiki", "--cwd", str(project), "ADR: we chose Postgres.")
    assert list((paths.state_root() / "rooms" / "database").glob("*.md"))
    assert list((paths.state_root() / "wiki").glob("*.md"))
    listed = json.loads(cli("list", "--json"))
    assert {r["room"] for r in listed} >= {"database"}
    assert {r["type"] for r in listed} == {"note", "wiki"}


def test_wake_reports_each_layer_against_its_budget(project: Path) -> None:
    cli("add", "--type", "user", "--cwd", str(project), "The user is Sam, a data engineer.")
    cli("add", "--type", "project", "--cwd", str(project), "The ETL runs nightly at 02:00 UTC.")
    out = cli("wake", "--cwd", str(project))
    assert "The user is Sam" in out and "ETL runs nightly" in out
    assert "L1: " in out and "/200 tokens" in out and "/500 tokens" in out
    data = json.loads(cli("wake", "--cwd", str(project), "--json"))
    assert data["verified_tokens"] == data["tokens"] == tokens.count(data["text"])
    assert data["layers"]["L1"]["tokens"] <= data["layers"]["L1"]["budget"]


def test_list_layer_marks_what_the_brief_holds(project: Path) -> None:
    for i in range(20):
        cli("add", "--type", "feedback", "--cwd", str(project), f"Rule number {i} is important.")
    out = cli("list", "--layer", "L2", "--cwd", str(project))
    lines = out.strip().splitlines()
    assert len(lines) == 20
    assert sum(line.startswith("* ") for line in lines) == 15


def test_unknown_and_malformed_ids_are_clear_errors() -> None:
    runner = CliRunner()
    bad = runner.invoke(main, ["show", "p-000000"])
    assert bad.exit_code == 1 and "no memory with id" in bad.output
    evil = runner.invoke(main, ["show", "../../etc/passwd"])
    assert evil.exit_code == 1 and "is not a memory id" in evil.output


def test_index_command_reports_counts(project: Path) -> None:
    cli("add", "--type", "project", "--cwd", str(project), "Fact.")
    out = cli("index", "--rebuild", "--cwd", str(project))
    assert "1 entries" in out


def test_an_invalid_config_falls_back_to_defaults_and_says_so(project: Path) -> None:
    cli("init")
    (paths.state_root() / "config.yaml").write_text("budgets: [l1_tokens: : {\n")
    cli("add", "--type", "project", "--cwd", str(project), "Still loaded.")
    result = CliRunner().invoke(main, ["wake", "--cwd", str(project)])
    assert result.exit_code == 0 and "Still loaded." in result.output
    assert "config.yaml" in paths.log_file().read_text()


def test_get_peek_and_show_read_the_file_as_it_is_now(project: Path) -> None:
    cli("index")  # as after install
    entry_id = cli(
        "add", "--room", "database", "Use bigserial for primary keys in Postgres."
    ).split()[1]
    path = Path(json.loads(cli("get", entry_id, "--json"))[0]["path"])
    path.write_text(path.read_text().replace("bigserial", "UUIDv7"))
    assert "UUIDv7" in cli("get", entry_id) and "bigserial" not in cli("get", entry_id)
    assert "UUIDv7" in cli("show", entry_id)
    text = path.read_text()
    for command in ("get", "peek", "show"):
        path.unlink()
        result = CliRunner().invoke(main, [command, entry_id])
        assert result.exit_code == 1
        assert "was deleted" in result.output and str(path) in result.output
        assert entry_id not in cli("list")  # the index forgot it
        path.write_text(text)
        cli("index")


def test_a_deleted_index_is_rebuilt_not_read_as_empty(project: Path) -> None:
    entry_id = cli(
        "add", "--room", "database", "Use bigserial for primary keys in Postgres."
    ).split()[1]
    for db in paths.state_root().glob("index.db*"):
        db.unlink()
    assert entry_id in cli("list")
    for db in paths.state_root().glob("index.db*"):
        db.unlink()
    result = CliRunner().invoke(main, ["get", entry_id])
    assert result.exit_code == 0 and "bigserial" in result.output
    assert "built it from the memory files" in result.output  # (stderr, mixed in by CliRunner)


@pytest.mark.parametrize(
    "args",
    [
        ["--type", "user", "--room", "database"],  # a user fact is no topic's memory
        ["--type", "feedback", "--tier", "wiki"],  # a wiki page is not feedback
        ["--tier", "wiki", "--room", "testing"],  # two places at once
        ["--room", ""],  # no room at all
    ],
)
def test_add_refuses_options_that_contradict_each_other(project: Path, args: list[str]) -> None:
    before = sorted(p for p in paths.state_root().rglob("*.md"))
    result = CliRunner().invoke(main, ["add", *args, "--cwd", str(project), "Pool size is 20."])
    assert result.exit_code == 1 and "Error:" in result.output
    assert sorted(p for p in paths.state_root().rglob("*.md")) == before
    assert not list(paths.project_memory_dir(project).glob("*.md"))


def test_file_names_keep_the_words_of_any_language(project: Path) -> None:
    cli("add", "--room", "database", "Die Verbindung über PgBouncer läuft im Transaktionsmodus.")
    cli("add", "--room", "database", "数据库连接池 的大小是 20")
    names = sorted(p.name for p in (paths.state_root() / "rooms" / "database").glob("*.md"))
    names.remove("MEMORY.md")
    assert names == ["die-verbindung-uber-pgbouncer-lauft-im.md", "数据库连接池-的大小是-20.md"]


def test_an_empty_answer_names_the_filter_nothing_has(project: Path) -> None:
    cli("add", "--room", "database", "--cwd", str(project), "Pool size is 20.")
    result = CliRunner().invoke(main, ["search", "pool", "--room", "databse"])
    assert "no matches" in result.output
    assert "no memory has room 'databse'; rooms in use: database" in result.output
    result = CliRunner().invoke(main, ["list", "--type", "feedbak"])
    assert "no memory has type 'feedbak'" in result.output and "note" in result.output
    # A filter that exists but matches nothing here says nothing more.
    result = CliRunner().invoke(main, ["search", "kubernetes", "--room", "database"])
    assert "no memory has" not in result.output


def test_adding_the_same_text_twice_saves_it_once(project: Path) -> None:
    first = cli("add", "--room", "database", "--cwd", str(project), "Pool size is 20.")
    again = cli("add", "--room", "database", "--cwd", str(project), "Pool size is 20.")
    entry_id = first.split()[1]
    assert again.startswith(f"already saved {entry_id}")
    files = [p for p in (paths.state_root() / "rooms" / "database").glob("*.md")]
    assert [p.name for p in files if p.name != "MEMORY.md"] == ["pool-size-is-20.md"]
    # The same text elsewhere (a project memory) is another memory.
    other = cli("add", "--cwd", str(project), "Pool size is 20.")
    assert other.startswith("saved ")


def test_a_room_name_one_typo_from_a_room_is_refused(project: Path) -> None:
    result = CliRunner().invoke(main, ["add", "--room", "databse", "--cwd", str(project), "x"])
    assert result.exit_code == 1 and "did you mean 'database'" in result.output
    assert not (paths.state_root() / "rooms" / "databse").exists()
    # A new room on purpose: its folder first, or a name like no other room's.
    (paths.state_root() / "rooms" / "databse").mkdir(parents=True)
    assert cli("add", "--room", "databse", "--cwd", str(project), "x").startswith("saved")
    assert cli("add", "--room", "billing", "--cwd", str(project), "Stripe is the PSP.").startswith(
        "saved"
    )


def test_get_and_peek_print_the_ids_that_exist_and_name_the_missing(project: Path) -> None:
    # An id from an old search may be gone: the rest of the fetch still comes back.
    entry_id = cli("add", "--room", "database", "--cwd", str(project), "Pool size is 20.").split()[
        1
    ]
    for command in ("get", "peek"):
        result = CliRunner().invoke(main, [command, entry_id, "n-000000"])
        assert result.exit_code == 1
        assert "Pool size is 20" in result.output
        assert "no memory with id 'n-000000'" in result.output


def test_search_takes_a_project_by_its_folder(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry_id = cli("add", "--cwd", str(project), "The billing API listens on port 8765.").split()[1]
    for name in (str(project), paths.project_key(project)):
        assert cli("search", "billing port", "--project", name).startswith(entry_id)
    monkeypatch.chdir(project)
    assert cli("search", "billing port", "--project", ".").startswith(entry_id)
