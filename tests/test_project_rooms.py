"""Room memories belong to a project: one added from inside a project is recalled only there;
one added with --global (or written by hand without `project:`) everywhere. L3 says which is
which; L4 puts this project's past sessions first and labels other projects' hits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from helpers import write_memory

from memory_tool.base import paths
from memory_tool.base.errors import MemoryToolError
from memory_tool.cli.main import main
from memory_tool.recall.deep import deep_recall
from memory_tool.recall.room import GLOBAL_HEADING, PROJECT_HEADING, room_recall
from memory_tool.recall.wake import build_brief
from memory_tool.store.index import open_index
from memory_tool.store.palace import add_memory

ARGO = "Deploys go through ArgoCD; the staging cluster is kube-stg-2."
PROMPT = "the deploy to staging failed, what now?"


def repo(tmp_path: Path, name: str) -> Path:
    root = tmp_path / "work" / name
    (root / ".git").mkdir(parents=True)
    return root


def add(*args: str) -> dict[str, str]:
    result = CliRunner().invoke(main, ["add", "--json", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    row: dict[str, str] = json.loads(result.output)
    return row


def frontmatter(path: str) -> dict[str, object]:
    text = Path(path).read_text(encoding="utf-8")
    meta: dict[str, object] = yaml.safe_load(text.split("---\n")[1])
    return meta


def l3(project: Path, prompt: str = PROMPT) -> str:
    with open_index() as idx:
        idx.refresh(project)
        return room_recall(idx, prompt, str(project), budget=1500).text


def test_a_room_memory_added_in_a_project_is_recalled_only_there(tmp_path: Path) -> None:
    a, b = repo(tmp_path, "repoA"), repo(tmp_path, "repoB")
    row = add("--room", "deployment", "--cwd", str(a), ARGO)
    assert frontmatter(row["path"])["project"] == paths.project_key(a)
    assert row["project"] == paths.project_key(a)
    assert "kube-stg-2" in l3(a)
    assert "kube-stg-2" not in l3(b)


def test_global_and_hand_written_room_memories_are_recalled_everywhere(tmp_path: Path) -> None:
    a, b = repo(tmp_path, "repoA"), repo(tmp_path, "repoB")
    row = add("--room", "deployment", "--global", "--cwd", str(a),
              "Rollbacks use argo rollouts undo on the staging cluster.")  # fmt: skip
    assert "project" not in frontmatter(row["path"])
    write_memory(paths.state_root() / "rooms" / "deployment", "canary.md",
                 "Staging deploys go canary first, 10% of pods.")  # fmt: skip
    for where in (a, b):
        text = l3(where)
        assert "argo rollouts undo" in text and "canary first" in text


def test_l3_says_which_memories_are_this_projects_and_which_everyones(tmp_path: Path) -> None:
    a = repo(tmp_path, "repoA")
    add("--room", "deployment", "--cwd", str(a), ARGO)
    add("--room", "deployment", "--global", "--cwd", str(a),
        "Staging deploys need a green CI run on main first.")  # fmt: skip
    text = l3(a)
    assert PROJECT_HEADING in text and GLOBAL_HEADING in text
    mine, everyone = text.split(PROJECT_HEADING)[1].split(GLOBAL_HEADING)
    assert "kube-stg-2" in mine and "green CI run" not in mine
    assert "green CI run" in everyone
    # Only memories for every project (as every room was before): no sub-headings at all.
    b = repo(tmp_path, "repoB")
    other = l3(b)
    assert "green CI run" in other and PROJECT_HEADING not in other
    assert GLOBAL_HEADING not in other


def test_global_applies_to_room_memories_only(project: Path) -> None:
    with open_index() as idx, pytest.raises(MemoryToolError, match="global"):
        add_memory(idx, "Pool size is 20.", type_="project", cwd=project, global_=True)
    result = CliRunner().invoke(main, ["add", "--global", "--cwd", str(project), "Pool size 20."])
    assert result.exit_code == 1 and "--global" in result.output
    assert not paths.project_memory_dir(project).exists()


def test_a_pinned_project_room_memory_is_pinned_in_its_project_only(tmp_path: Path) -> None:
    a, b = repo(tmp_path, "repoA"), repo(tmp_path, "repoB")
    add("--room", "deployment", "--always", "--cwd", str(a), ARGO)
    with open_index() as idx:
        idx.refresh(a)
        assert "kube-stg-2" in build_brief(idx, a).text
        assert "kube-stg-2" not in build_brief(idx, b).text


def test_search_from_another_project_does_not_see_it_in_l3_but_l4_labels_it(
    tmp_path: Path,
) -> None:
    a, b = repo(tmp_path, "repoA"), repo(tmp_path, "repoB")
    add("--room", "deployment", "--cwd", str(a), ARGO)
    with open_index() as idx:
        idx.refresh(b)
        layer = deep_recall(idx, "have we set up kube-stg-2 before?", budget=3000,
                            home_project=paths.project_key(b))  # fmt: skip
    assert "kube-stg-2" in layer.text or layer.picked  # L4 is everything, labelled
    assert "### From other projects" in layer.text


def transcript(folder: Path, session: str, lines: list[tuple[str, str]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for n, (role, text) in enumerate(lines):
        msg = (
            {"role": "user", "content": text}
            if role == "user"
            else {"role": "assistant", "content": [{"type": "text", "text": text}]}
        )
        out.append(json.dumps({"type": role, "uuid": f"{session}-{n}", "sessionId": session,
                               "timestamp": "2026-11-20T10:00:00Z", "message": msg}))  # fmt: skip
    (folder / f"{session}.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")


def test_last_time_questions_rank_this_projects_sessions_first(tmp_path: Path) -> None:
    a, b = repo(tmp_path, "repoA"), repo(tmp_path, "repoB")
    # repoB's session matches the question better, word for word.
    transcript(paths.projects_dir() / paths.project_key(b), "sess-b", [
        ("user", "last time the invoices export broke, the invoices export timed out on the "
                 "invoices export worker; we fixed the invoices export retry"),
    ])  # fmt: skip
    transcript(paths.projects_dir() / paths.project_key(a), "sess-a", [
        ("user", "what did we do about the invoices export in this repo?"),
        ("assistant", "We paged the invoices export by customer id."),
    ])  # fmt: skip
    question = "what did we decide last time about the invoices export?"
    with open_index() as idx:
        idx.refresh(a)
        layer = deep_recall(idx, question, budget=3000, home_project=paths.project_key(a))
    projects = [e.project for e in layer.picked]
    assert projects[0] == paths.project_key(a)
    assert paths.project_key(b) in projects  # still there, after this project's, labelled
    first_b = projects.index(paths.project_key(b))
    assert all(p == paths.project_key(a) for p in projects[:first_b])
    head, others = layer.text.split("### From other projects")
    assert "paged the invoices export" in head or "in this repo" in head
    assert "timed out" in others
