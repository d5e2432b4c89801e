"""What the brief calls a critical rule: a rule (a feedback memory, or never/must/always/do not)
whose consequence is irreversible. A fact that only mentions billing, payments or migrations is
not one; the recap names rules by name or description, never by file name."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import write_memory

from memory_tool.base import paths
from memory_tool.recall.wake import L2_CRITICAL_HEADING, L2_HEADING, build_brief
from memory_tool.store.index import open_index


def brief_text(project: Path) -> str:
    with open_index() as idx:
        idx.refresh(project)
        return build_brief(idx, project).text


def critical_section(text: str) -> str:
    """The lines under "Critical rules" ("" when the brief has none)."""
    if L2_CRITICAL_HEADING not in text:
        return ""
    rest = text.split(L2_CRITICAL_HEADING, 1)[1]
    return rest.split("\n## ", 1)[0]


def recap(text: str) -> str:
    return next((line for line in text.splitlines() if line.startswith("Recap")), "")


def test_plain_facts_about_billing_and_migrations_are_not_critical_rules(project: Path) -> None:
    d = paths.project_memory_dir(project)
    write_memory(d, "project_what.md",
                 "RepoA is the billing service: it charges customers monthly and sends invoices.",
                 type_="project")  # fmt: skip
    write_memory(d, "project_alembic.md", "Database migrations use alembic.", type_="project")
    write_memory(d, "project_backup.md", "Nightly backups go to the s3 bucket acme-bak.",
                 type_="project")  # fmt: skip
    (project / "thoughts").mkdir()
    (project / "thoughts" / "CONTEXT.md").write_text(
        "# Context\n\nA monorepo for billing: payments, invoices and refunds.\n"
    )
    text = brief_text(project)
    for fact in ("billing service", "alembic", "acme-bak", "monorepo for billing"):
        assert fact in text
    assert critical_section(text) == ""
    assert recap(text) == ""  # no rule at all: nothing to recap


def test_a_rule_is_critical_only_when_its_consequence_is_irreversible(project: Path) -> None:
    d = paths.project_memory_dir(project)
    write_memory(d, "feedback_prod.md",
                 "Never run database migrations against production by hand.",
                 type_="feedback", description="No manual prod migrations")  # fmt: skip
    write_memory(d, "project_push.md", "Never force-push to main: others have pulled it.",
                 type_="project", description="No force-push to main")  # fmt: skip
    write_memory(d, "feedback_alembic.md", "Always write migrations with alembic.",
                 type_="feedback", description="Migrations with alembic")  # fmt: skip
    write_memory(d, "project_pay.md", "Payments must go through the PayCo sandbox in tests.",
                 type_="project", description="PayCo sandbox in tests")  # fmt: skip
    # blind9: "production" naming a kind of build is no consequence.
    write_memory(d, "feedback_typecheck.md",
                 "Run pnpm typecheck, don't run next build: a production build takes 4 minutes.",
                 type_="feedback", description="Typecheck over next build")  # fmt: skip
    # blind12: nor does one naming a kind of image.
    write_memory(d, "feedback_ocr.md",
                 "Run pytest -m 'not slow_ocr': tesseract is only in the production image.",
                 type_="feedback", description="Skip slow OCR tests")  # fmt: skip
    text = brief_text(project)
    crit = critical_section(text)
    assert "production by hand" in crit and "force-push" in crit
    # Rules all the same, but nothing irreversible follows from breaking them.
    assert "alembic" not in crit and "PayCo" not in crit and "typecheck" not in crit
    assert "slow_ocr" not in crit
    rest = text.split(L2_HEADING, 1)[1]
    assert "alembic" in rest and "PayCo" in rest
    assert "No manual prod migrations" in recap(text)


def test_a_pinned_fact_is_pinned_not_a_critical_rule(project: Path) -> None:
    room = paths.state_root() / "rooms" / "deployment"
    write_memory(room, "cluster.md", "The staging cluster is kube-stg-2.", always=True)
    write_memory(room, "freeze.md", "Never deploy to production on Fridays: outages hit the "
                 "weekend on-call.", always=True)  # fmt: skip
    text = brief_text(project)
    crit = critical_section(text)
    assert "Never deploy to production" in crit
    assert "kube-stg-2" in text and "kube-stg-2" not in crit
    assert "kube-stg-2" not in recap(text)  # a fact, not a rule


def test_the_recap_names_rules_by_name_or_description_not_by_file(project: Path) -> None:
    d = paths.project_memory_dir(project)
    d.mkdir(parents=True)
    # Written without frontmatter: the name falls back to the file name.
    (d / "feedback_backups.md").write_text(
        "Never delete the production backups by hand.\nWhy: they are the only copy.\n"
    )
    (project / "thoughts").mkdir()
    (project / "thoughts" / "CONTEXT.md").write_text(
        "# Context\n\nWe must never drop the customers table: it has no backup.\n"
    )
    text = brief_text(project)
    line = recap(text)
    assert line, "both are rules"
    assert "feedback_backups" not in line and "CONTEXT" not in line
    # Their only names are their own words, said in full above: the recap names them by id
    # and does not say them a second time.
    ids = re.findall(r"\[([a-z]-[0-9a-f]{6})\]", line)
    assert len(ids) == 2
    for i in ids:
        assert f"[{i}]" in critical_section(text)
    assert text.count("Never delete the production backups by hand") == 1
    assert text.count("never drop the customers table") == 1


def test_the_recap_names_a_rule_by_its_own_short_name(project: Path) -> None:
    d = paths.project_memory_dir(project)
    write_memory(d, "feedback_prod.md",
                 "Never run database migrations against production by hand.",
                 type_="feedback", description="No manual prod migrations")  # fmt: skip
    text = brief_text(project)
    m = re.search(r"No manual prod migrations \[([a-z]-[0-9a-f]{6})\]", recap(text))
    assert m and f"- [{m.group(1)}] Never run database migrations" in critical_section(text)
    assert text.count("against production by hand") == 1
