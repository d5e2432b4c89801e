"""The hygiene report: findings, their levels, and the summary line that names the problems."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..store.entry import Entry

PROBLEM = "problem"  # counts toward the exit code and the SessionStart line
NOTE = "note"  # worth knowing, nothing to repair by force

# Problem kinds in the order the summary line names them, with singular and plural labels.
LABELS: dict[str, tuple[str, str]] = {
    "sync": ("failed sync", "failed syncs"),
    "hook_server": ("hook server unreachable", "hook server unreachable"),
    "conflict": ("sync conflict", "sync conflicts"),
    "config": ("config.yaml problem", "config.yaml problems"),
    "rooms": ("broken rooms file", "broken rooms files"),
    "expired": ("expired", "expired"),
    "stale": ("stale", "stale"),
    "broken_path": ("broken path", "broken paths"),
    "dead_glob": ("`paths:` glob matching nothing", "`paths:` globs matching nothing"),
    "frontmatter": ("bad frontmatter", "bad frontmatter"),
    "file": ("unreadable file", "unreadable files"),
    "folder": ("unreadable folder", "unreadable folders"),
    "too_large": ("file too large", "files too large"),
    "not_text": ("file that is not text", "files that are not text"),
    "index_missing_file": ("dead MEMORY.md line", "dead MEMORY.md lines"),
    "index_unlisted": ("not in MEMORY.md", "not in MEMORY.md"),
    "index_truncated": ("MEMORY.md over 200 lines", "MEMORY.md files over 200 lines"),
    "chain": ("broken version chain", "broken version chains"),
    "contradiction": ("contradiction", "contradictions"),
    "duplicate": ("duplicate", "duplicates"),
    "always_load": ("always-load overflow", "always-load overflows"),
}
# Each check's heading in a report, for people (the CLI and the UI print these).
TITLES = {
    "sync": "syncs that failed (they retry by themselves)",
    "hook_server": "HTTP hooks that cannot reach the hook server (the session gets no memory)",
    "conflict": "sync conflicts: two versions kept, keep one",
    "config": "config.yaml settings that are not valid",
    "rooms": "rooms files that do not parse or compile",
    "expired": "expired (past their `expires:` date)",
    "stale": "stale (older than their type's staleness age)",
    "broken_path": "broken paths (named in a memory, gone from disk)",
    "dead_glob": "`paths:` globs that match no file of the working tree (never recalled by them)",
    "frontmatter": "frontmatter broken, missing or invalid",
    "file": "unreadable files (never injected or searched)",
    "folder": "unreadable folders (the memories in them are never injected or searched)",
    "too_large": "files too large for a memory (never injected or searched)",
    "not_text": "files that are not text (never injected or searched)",
    "index_missing_file": "MEMORY.md lines pointing at missing files",
    "index_unlisted": "memory files missing from MEMORY.md",
    "index_truncated": "MEMORY.md longer than Claude Code loads",
    "chain": "broken version chains (supersedes / superseded_by)",
    "contradiction": "contradictions (merge candidates)",
    "duplicate": "near-duplicates (merge candidates)",
    "always_load": "always-load discipline",
    "inferred_date": "created dates inferred",
    "root_unknown": "relative paths not checked",
    "globs_unchecked": "`paths:` globs not checked",
    "to_write": "links to memories not written yet (to write)",
}
CHECK_ORDER = [
    *LABELS,
    "inferred_date",
    "root_unknown",
    "to_write",
]


@dataclass
class Finding:
    check: str
    level: str
    message: str
    entry_id: str = ""
    path: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.check, "level": self.level, "message": self.message}
        if self.entry_id:
            out["id"] = self.entry_id
        if self.path:
            out["path"] = self.path
        out.update(self.data)
        return out


@dataclass
class Report:
    findings: list[Finding]
    checked: int
    project: str = ""
    roots: dict[str, str | None] = field(default_factory=dict)

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.level == PROBLEM]

    @property
    def notes(self) -> list[Finding]:
        return [f for f in self.findings if f.level == NOTE]

    @property
    def ok(self) -> bool:
        return not self.problems

    def counts(self) -> dict[str, int]:
        return dict(Counter(f.check for f in self.problems))

    def summary(self) -> str:
        """``2 stale, 1 broken path`` (empty when there is no problem)."""
        counts = self.counts()
        parts = []
        for check, (one, many) in LABELS.items():
            n = counts.get(check, 0)
            if not n:
                continue
            if check == "config":
                parts.append(_config_summary([f for f in self.problems if f.check == check]))
                continue
            if check == "rooms":  # "rooms.yaml not valid (shipped rooms in use)"
                parts += [str(f.data["brief"]) for f in self.problems if f.check == check]
                continue
            if check == "always_load" and n == 1:
                f = next(f for f in self.problems if f.check == "always_load")
                parts.append(f"{f.data['count']} always-loaded (max {f.data['max']})")
                continue
            parts.append(f"{n} {one if n == 1 else many}")
        return ", ".join(parts)

    def about(self, entry_id: str, path: str) -> list[Finding]:
        """The findings that concern one memory: its own, and the pairs and groups it is in."""
        out = []
        for f in self.findings:
            pair = f.data.get("paths")
            group = f.data.get("ids")
            triage = f.data.get("triage")
            if (
                f.entry_id == entry_id
                or (path and f.path == path)
                or (isinstance(pair, list) and path in pair)
                or (isinstance(group, list) and entry_id in group)
                or (isinstance(triage, list) and any(r.get("id") == entry_id for r in triage))
            ):
                out.append(f)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "checked": self.checked,
            "project": self.project,
            "problems": len(self.problems),
            "notes": len(self.notes),
            "summary": self.summary(),
            "counts": self.counts(),
            "roots": self.roots,
            "findings": [f.to_json() for f in self.findings],
        }


def _config_summary(found: list[Finding]) -> str:
    """Which setting is wrong and why, in brief (doctor has the rest); several: their keys."""
    if len(found) == 1:
        key, brief = found[0].data.get("key", ""), found[0].data.get("brief", "")
        return f"config.yaml {key}: {brief}" if key else f"config.yaml {brief}"
    keys = [str(f.data.get("key") or "file") for f in found]
    return f"{len(found)} config.yaml problems ({', '.join(keys)})"


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    """In the order the report prints them: by check, then by path."""
    order = {c: i for i, c in enumerate(CHECK_ORDER)}
    return sorted(findings, key=lambda f: (order.get(f.check, 99), f.path, f.message))


def is_generated(e: Entry) -> bool:
    """Written by the tool, not by a person: a cold summary of a session, or a wiki record the
    Scribe promoted from one. Such files record what happened; they are not compared as
    hand-written memories, nor held to what a person must fix."""
    return e.source == "cold" or (e.source == "wiki" and "promoted" in e.tags)


def label(e: Entry) -> str:
    """How a finding names a memory: its name, else its description, else its id."""
    text = e.name or e.description or e.id
    return " ".join(text.split())[:60]
