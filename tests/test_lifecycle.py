"""Versioning (store/lifecycle.py): a superseded, forgotten or ended memory loads in no layer
and counts toward no cap, but search and deep recall still find it, labelled as history with its
dates; the files carry the keys (the index is derived), ``show`` prints the chain and the doctor
names a broken one. Real files in a sandboxed HOME, the real index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from memory_tool.base import paths
from memory_tool.base.errors import MemoryToolError, UnknownIdError
from memory_tool.cli.main import main
from memory_tool.hygiene.doctor import diagnose
from memory_tool.recall.deep import deep_recall
from memory_tool.recall.room import room_recall
from memory_tool.recall.wake import build_brief
from memory_tool.store import lifecycle
from memory_tool.store.index import PARSER_VERSION, open_index
from memory_tool.store.palace import add_memory, init_palace
from memory_tool.store.search import search
from memory_tool.store.tree import claude_folder_of

TODAY = "2026-11-29"  # conftest pins MEMORY_TOOL_TODAY


@pytest.fixture
def palace(project: Path) -> Path:
    init_palace()
    return project


def _add(project: Path, text: str, **kw: object) -> str:
    with open_index() as idx:
        return add_memory(idx, text, cwd=project, **kw).id  # type: ignore[arg-type]


def _front(path: str | Path) -> dict[str, object]:
    text = Path(path).read_text()
    return yaml.safe_load(text.split("---\n")[1])  # type: ignore[no-any-return]


def _brief(project: Path) -> str:
    with open_index() as idx:
        idx.refresh(project)
        return build_brief(idx, project).text


def test_supersede_writes_both_files_and_only_the_new_fact_loads(palace: Path) -> None:
    old_id = _add(palace, "Use pandas for dataframes in the fraud service.", type_="feedback")
    new_id = _add(palace, "Use polars for dataframes in the fraud service.", type_="feedback")
    assert "pandas" in _brief(palace)
    with open_index() as idx:
        old, new = lifecycle.supersede(idx, old_id, new_id)
    assert (old.id, new.id) == (old_id, new_id)
    assert _front(old.path)["superseded_by"] == new_id
    assert str(_front(old.path)["valid_to"]) == TODAY
    assert _front(new.path)["supersedes"] == old_id
    assert str(_front(new.path)["valid_from"]) == TODAY
    # Claude Code loads MEMORY.md itself: the retired memory's line is gone, the new one's stays.
    index_text = (Path(old.path).parent / "MEMORY.md").read_text()
    assert Path(old.path).name not in index_text and Path(new.path).name in index_text
    brief = _brief(palace)
    assert "polars" in brief and "pandas" not in brief
    # Still found as history, with its dates, by search and by deep recall (L4).
    with open_index() as idx:
        hits = [h.entry for h in search(idx, "pandas dataframes fraud")]
        assert old_id in [e.id for e in hits]
        retired = next(e for e in hits if e.id == old_id)
        assert f"(history: superseded {TODAY} by {new_id})" in retired.summary
        deep = deep_recall(idx, "what did we use for dataframes, pandas?", budget=3000)
        assert f"history: superseded {TODAY} by {new_id}" in deep.text
        # Running it again changes nothing.
        before = Path(old.path).read_bytes(), Path(new.path).read_bytes()
        lifecycle.supersede(idx, old_id, new_id)
        assert (Path(old.path).read_bytes(), Path(new.path).read_bytes()) == before


def test_supersede_by_path_indexes_the_new_file_first(palace: Path) -> None:
    old_id = _add(palace, "The events bucket is in us-east-1.", type_="project")
    folder = claude_folder_of(palace).path
    new_file = folder / "project_bucket_moved.md"
    new_file.write_text(
        "---\nname: bucket moved\ndescription: events bucket region\n"
        "metadata:\n  type: project\n---\n\nThe events bucket moved to eu-central-1.\n"
    )
    with open_index() as idx:
        old, new = lifecycle.supersede(idx, old_id, new_file)
    assert new.path == str(new_file) and old.superseded_by == new.id
    brief = _brief(palace)
    assert "eu-central-1" in brief and "us-east-1" not in brief


def test_the_files_are_the_truth_a_rebuilt_index_keeps_the_chain(palace: Path) -> None:
    old_id = _add(palace, "Lint with flake8 before committing.", type_="feedback")
    new_id = _add(palace, "Lint with ruff instead of flake8 before committing.", type_="feedback")
    with open_index() as idx:
        lifecycle.supersede(idx, old_id, new_id)
    paths.index_file().unlink()
    brief = _brief(palace)
    assert "ruff" in brief and "Lint with flake8 before" not in brief
    with open_index() as idx:
        assert idx.get(old_id).superseded_by == new_id
        # An index written by the parser before versioning is re-read in full.
        idx.conn.execute("UPDATE entries SET superseded_by = '', supersedes = ''")
        idx.set_meta("parser_version", str(int(PARSER_VERSION) - 1))
        idx.refresh(palace)
        assert idx.get(old_id).superseded_by == new_id
        assert idx.get(new_id).supersedes == old_id


def test_valid_to_in_the_past_stops_loading_a_future_one_does_not(palace: Path) -> None:
    folder = claude_folder_of(palace).path
    from tests.helpers import write_memory

    write_memory(folder, "project_freeze.md", "Code freeze for the audit: no deploys.",
                 type_="project", valid_to="2026-11-28")  # fmt: skip
    write_memory(folder, "project_oncall.md", "Dana is on call for payments this month.",
                 type_="project", valid_to="2026-11-30")  # fmt: skip
    write_memory(folder, "project_newapi.md", "The v3 API is the default for new clients.",
                 type_="project", valid_from="2026-12-01")  # fmt: skip
    brief = _brief(palace)
    assert "Dana is on call" in brief
    assert "Code freeze" not in brief and "v3 API" not in brief
    with open_index() as idx:
        hit = search(idx, "code freeze audit deploys")[0].entry
        assert "(valid to 2026-11-28)" in hit.summary
        assert lifecycle.status(hit) == "ended"


def test_forgotten_and_superseded_memories_count_toward_no_cap(palace: Path) -> None:
    ids = [
        _add(palace, f"Service {n} listens on port {9000 + n} in staging.", type_="project")
        for n in range(16)
    ]
    with open_index() as idx:
        idx.refresh(palace)
        assert any(f.check == "always_load" for f in diagnose(idx, palace).findings)
        lifecycle.forget(idx, ids[0])
        report = diagnose(idx, palace)
    assert not any(f.check == "always_load" for f in report.findings)
    assert not any(f.check == "index_unlisted" for f in report.findings)
    brief = _brief(palace)
    assert "port 9000 " not in brief and "port 9015" in brief


def test_a_retired_room_memory_leaves_room_recall_but_stays_searchable(palace: Path) -> None:
    live_id = _add(palace, "OAuth tokens refresh through the auth gateway.", room="authentication")
    gone_id = _add(palace, "OAuth login tokens are stored in the legacy session table.",
                   room="authentication")  # fmt: skip
    with open_index() as idx:
        idx.refresh(palace)
        before = room_recall(idx, "oauth login token bug", str(palace), budget=1500)
        assert gone_id in [e.id for e in before.picked]
        lifecycle.forget(idx, gone_id)
        after = room_recall(idx, "oauth login token bug", str(palace), budget=1500)
        assert gone_id not in [e.id for e in after.picked]
        assert live_id in [e.id for e in after.picked]
        found = {h.entry.id: h.entry for h in search(idx, "legacy session table oauth")}
        assert f"(history: forgotten {TODAY})" in found[gone_id].summary


def test_refusals_say_why_and_change_nothing(palace: Path) -> None:
    a = _add(palace, "Deploy with make deploy.", type_="project")
    b = _add(palace, "Deploy with the release pipeline.", type_="project")
    c = _add(palace, "Deploy with argo rollouts.", type_="project")
    with open_index() as idx:
        with pytest.raises(MemoryToolError, match="cannot supersede itself"):
            lifecycle.supersede(idx, a, a)
        with pytest.raises(UnknownIdError):
            lifecycle.supersede(idx, a, "p-ffffff")
        lifecycle.supersede(idx, a, b)
        with pytest.raises(MemoryToolError, match=f"already superseded by {b}"):
            lifecycle.supersede(idx, a, c)
        with pytest.raises(MemoryToolError, match="superseded by"):
            lifecycle.supersede(idx, c, a)  # a is retired: it cannot replace anything
        lifecycle.supersede(idx, b, c)
        versions = lifecycle.chain(idx, idx.get(b))
        assert [e.id for e in versions.older] == [a] and [e.id for e in versions.newer] == [c]


def test_show_prints_the_chain_with_dates(palace: Path) -> None:
    a = _add(palace, "Events load with pandas.read_csv.", type_="project")
    b = _add(palace, "Events load with polars.scan_parquet.", type_="project")
    with open_index() as idx:
        lifecycle.supersede(idx, a, b)
    runner = CliRunner()
    old = runner.invoke(main, ["show", a])
    assert old.exit_code == 0, old.output
    assert f"history: superseded {TODAY} by {b}" in old.output
    assert "status: superseded" in old.output
    assert f"newer: {b} (live, from {TODAY})" in old.output
    new = runner.invoke(main, ["show", b])
    assert f"older: {a} (superseded, to {TODAY})" in new.output
    listed = runner.invoke(main, ["list", "--type", "project"]).output.splitlines()
    assert next(x for x in listed if x.startswith(a)).endswith("(superseded)")
    assert not next(x for x in listed if x.startswith(b)).endswith(")")
    rows = json.loads(runner.invoke(main, ["list", "--json"]).output)
    assert {r["id"]: r["status"] for r in rows if r["id"] in (a, b)} == {
        a: "superseded", b: "live"
    }  # fmt: skip


def test_doctor_names_broken_chains(palace: Path) -> None:
    folder = claude_folder_of(palace).path
    from tests.helpers import write_memory

    write_memory(folder, "project_orphan.md", "Reports export as CSV.", type_="project",
                 superseded_by="p-abcdef")  # fmt: skip
    write_memory(folder, "project_loop_a.md", "Queue is SQS.", type_="project", id="loop-a",
                 superseded_by="loop-b", supersedes="loop-b")  # fmt: skip
    write_memory(folder, "project_loop_b.md", "Queue is Kafka.", type_="project", id="loop-b",
                 superseded_by="loop-a", supersedes="loop-a")  # fmt: skip
    with open_index() as idx:
        idx.refresh(palace)
        report = diagnose(idx, palace)
    chains = [f for f in report.findings if f.check == "chain"]
    kinds = sorted(f.data["kind"] for f in chains)
    assert kinds == ["loop", "missing"], [f.message for f in chains]
    missing = next(f for f in chains if f.data["kind"] == "missing")
    assert "p-abcdef" in missing.message and missing.level == "problem"
    result = CliRunner().invoke(main, ["doctor", "--cwd", str(palace), "--json"])
    assert "chain" in {f["check"] for f in json.loads(result.output)["findings"]}


def test_saving_the_text_of_a_forgotten_memory_again_makes_a_live_one(palace: Path) -> None:
    first = _add(palace, "Always run the migration dry-run first.", type_="feedback")
    with open_index() as idx:
        lifecycle.forget(idx, first)
    again = _add(palace, "Always run the migration dry-run first.", type_="feedback")
    assert again != first
    assert "migration dry-run" in _brief(palace)


def test_forget_and_undo_from_the_command_line(palace: Path) -> None:
    keep = _add(palace, "Webhook bodies are never logged.", type_="feedback")
    gone = _add(palace, "Use requests for HTTP calls in the fraud-check service.", type_="feedback")
    runner = CliRunner()
    assert "requests" in _brief(palace)
    with open_index() as idx:
        index_file = Path(idx.get(gone).path).parent / "MEMORY.md"
    line = next(x for x in index_file.read_text().splitlines() if "requests" in x)
    result = runner.invoke(main, ["forget", gone])
    assert result.exit_code == 0, result.output
    assert f"{gone} forgotten" in result.output and f"forget --undo {gone}" in result.output
    with open_index() as idx:
        path = Path(idx.get(gone).path)
        keep_path = Path(idx.get(keep).path)
    assert str(_front(path)["forgotten"]) == TODAY  # the file is kept, the key says why
    assert path.name not in (path.parent / "MEMORY.md").read_text()
    brief = _brief(palace)
    assert "requests" not in brief and "Webhook bodies" in brief
    peeked = runner.invoke(main, ["peek", gone])
    assert f"history: forgotten {TODAY}" in peeked.output
    searched = runner.invoke(main, ["search", "requests HTTP fraud-check"])
    assert f"{gone} api (history: forgotten {TODAY})" in searched.output  # room: classified
    hits = json.loads(runner.invoke(main, ["search", "--json", "requests HTTP"]).output)
    assert {"id": gone, "history": f"history: forgotten {TODAY}"}.items() <= hits[0].items()
    # Undo: the key goes, the MEMORY.md line and the brief line come back.
    back = runner.invoke(main, ["forget", "--undo", gone])
    assert back.exit_code == 0 and "is back" in back.output
    assert "forgotten" not in _front(path)
    assert line in index_file.read_text().splitlines()  # the very line it had
    assert "requests" in _brief(palace)
    again = runner.invoke(main, ["forget", "--undo", gone])
    assert again.exit_code == 1 and "not forgotten" in again.output
    # Unknown and malformed ids: a clear error, and nothing changes (not even the known one).
    unknown = runner.invoke(main, ["forget", keep, "f-abcdef"])
    assert unknown.exit_code == 1 and "no memory with id 'f-abcdef'" in unknown.output
    assert "forgotten" not in _front(keep_path)
    bad = runner.invoke(main, ["forget", "../etc/passwd"])
    assert bad.exit_code == 1 and "is not a memory id" in bad.output
    as_json = runner.invoke(main, ["forget", "--json", keep])
    assert json.loads(as_json.output)[0] == {
        "id": keep, "path": str(keep_path), "forgotten": TODAY
    }  # fmt: skip


def test_supersede_from_the_command_line(palace: Path) -> None:
    old = _add(palace, "Format with black.", type_="feedback")
    new = _add(palace, "Format with ruff format.", type_="feedback")
    result = CliRunner().invoke(main, ["supersede", old, new])
    assert result.exit_code == 0, result.output
    assert f"{old} superseded by {new} on {TODAY}" in result.output
    brief = _brief(palace)
    assert "ruff format" in brief and "black" not in brief
