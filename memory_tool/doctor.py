"""Memory hygiene: what has gone stale or wrong in the memory tree, before it misleads the agent.

Checks (each a function returning ``Finding`` objects; a ``Report`` collects them):
- age: stale by type or past ``expires:`` (the rules live in ``layers``: ``is_stale``,
  ``is_expired``); created dates that were inferred (from ``modified:`` or the file's mtime);
- files: broken or missing frontmatter, unreadable or oversized files (``entry.error``);
- drift: absolute, ``~/`` and repo-relative paths named in a memory that no longer exist;
  ``[[links]]`` to memories not written yet (notes, not problems: Claude Code's convention);
  ``MEMORY.md`` lines pointing at missing files, memory files missing from ``MEMORY.md``;
- duplicates and contradictions (rapidfuzz; CLI path only);
- always-load discipline: more than ``always_load_max`` entries in L1+L2, with a triage list
  ranked by the irreversible-consequence rule.

Three entry points: ``diagnose`` (everything, for ``memory-tool doctor``), ``wake_warning`` (the
one line SessionStart adds: only what this session loads, cached by index state so an unchanged
tree costs one meta read) and ``fix`` (safe, reversible repairs after a backup).

Hook path: this module is imported by SessionStart, so rapidfuzz, YAML and frontmatter are
imported only inside the functions that need them (duplicates, fix).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import sqlite3
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from . import paths, tree
from .config import ALWAYS_LOAD_MAX, load_config, today
from .entry import IRREVERSIBLE_RE, Entry
from .index import Index
from .layers import (
    Unit,
    age_days,
    dedupe,
    is_expired,
    is_stale,
    l1_candidates,
    l2_candidates,
    rank,
    weight,
)

PROBLEM = "problem"  # counts toward the exit code and the SessionStart line
NOTE = "note"  # worth knowing, nothing to repair by force

# Claude Code loads the first 200 lines / 25 KB of MEMORY.md at session start; the rest is unseen.
MEMORY_INDEX_LOADED_LINES = 200
MEMORY_INDEX_LOADED_BYTES = 25 * 1024
# A memory naming more paths than this is a log, not a fact: check the first ones only, so one
# pasted listing cannot make the SessionStart check stat thousands of files.
MAX_PATHS_PER_ENTRY = 40
# Near-duplicates: rapidfuzz token-sort ratio (0-100) at or above this. 90 keeps rewordings of the
# same sentence ("tests run with pytest -q" / "... -q.") and drops merely related facts.
DUPLICATE_MIN_SCORE = 90
# Contradiction candidates: this similar *and* disagreeing (a negation on one side only, or
# different numbers/quoted values). 70 pairs "always/never run migrations before deploy" (81).
CONTRADICTION_MIN_SCORE = 70
# Compare the first this-many characters of each memory: a fact's gist is at its start, and the
# scorer's cost grows with length.
COMPARE_CHARS = 600
# Candidate pairs share one of each memory's few rarest words (blocking): without it a 10,000-file
# tree needs 50M comparisons; near-duplicates share their rare words almost always.
RARE_KEYS_PER_ENTRY = 4
# A rare-word bucket bigger than this is not rare: skip it rather than compare it pairwise
# (150 members = 11K comparisons, a few ms in rapidfuzz's C loop).
MAX_BUCKET = 150
# Each memory appears in at most this many pairs (its closest): templated memories ("Sprint 12
# goals", "Sprint 13 goals"…) would otherwise list every pair among them.
MAX_MATCHES_PER_ENTRY = 2
# Roots of projects found in Claude Code transcripts: read at most this many lines per file and
# this many files per project (the cwd is on the first lines).
TRANSCRIPT_HEAD_LINES = 20
TRANSCRIPT_FILES_PER_PROJECT = 3

ROOT_META_PREFIX = "project_root:"
WAKE_META_PREFIX = "hygiene:"
WAKE_PREFIX = "Memory hygiene: "
WAKE_SUFFIX = ": memory-tool doctor"

# Problem kinds in the order the summary line names them, with singular and plural labels.
LABELS: dict[str, tuple[str, str]] = {
    "expired": ("expired", "expired"),
    "stale": ("stale", "stale"),
    "broken_path": ("broken path", "broken paths"),
    "frontmatter": ("bad frontmatter", "bad frontmatter"),
    "file": ("unreadable file", "unreadable files"),
    "index_missing_file": ("dead MEMORY.md line", "dead MEMORY.md lines"),
    "index_unlisted": ("not in MEMORY.md", "not in MEMORY.md"),
    "index_truncated": ("MEMORY.md over 200 lines", "MEMORY.md files over 200 lines"),
    "contradiction": ("contradiction", "contradictions"),
    "duplicate": ("duplicate", "duplicates"),
    "always_load": ("always-load overflow", "always-load overflows"),
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
            if check == "always_load" and n == 1:
                f = next(f for f in self.problems if f.check == "always_load")
                parts.append(f"{f.data['count']} always-loaded (max {f.data['max']})")
                continue
            parts.append(f"{n} {one if n == 1 else many}")
        return ", ".join(parts)

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


def _sorted(findings: list[Finding]) -> list[Finding]:
    order = {c: i for i, c in enumerate(CHECK_ORDER)}
    return sorted(findings, key=lambda f: (order.get(f.check, 99), f.path, f.message))


def _label(e: Entry) -> str:
    text = e.name or e.description or e.id
    return " ".join(text.split())[:60]


# --- age ---------------------------------------------------------------------------------------


@dataclass
class StaleItem:
    entry: Entry
    age: int
    rule: str
    expired: bool


def stale_items(entries: Iterable[Entry], day: dt.date, cfg: dict[str, Any]) -> list[StaleItem]:
    """Stale and expired memories, oldest first, each with its age and the rule that applies."""
    out = []
    for e in entries:
        if not is_stale(e, day, cfg):
            continue
        age = age_days(e, day)
        if is_expired(e, day):
            out.append(StaleItem(e, age, f"expires: {e.expires}", True))
        else:
            limit = cfg.get("stale_days", {}).get(e.type)
            out.append(StaleItem(e, age, f"{e.type}: stale after {limit} days", False))
    return sorted(out, key=lambda s: (-s.age, s.entry.id))


def _inferred_from(e: Entry) -> str:
    if e.updated and e.updated == e.created:
        return "its modified/updated date"
    return "the file's modification time"


def age_findings(entries: Sequence[Entry], day: dt.date, cfg: dict[str, Any]) -> list[Finding]:
    out = []
    for s in stale_items(entries, day, cfg):
        e = s.entry
        inferred = " (created date inferred)" if e.created_inferred else ""
        if s.expired:
            msg = f"expired on {e.expires}; {_label(e)}"
        else:
            msg = f"{s.age} days old{inferred}, {s.rule}; {_label(e)}"
        data = {"age_days": s.age, "rule": s.rule, "created": e.created}
        data["created_inferred"] = e.created_inferred
        out.append(Finding("expired" if s.expired else "stale", PROBLEM, msg, e.id, e.path, data))
    for e in entries:
        # CONTEXT.md is the project's own document, not a memory file: its date is its mtime.
        if e.created_inferred and e.source != "context" and e.created:
            src = _inferred_from(e)
            fixable = not e.error
            out.append(
                Finding(
                    "inferred_date",
                    NOTE,
                    f"no created date: {e.created} inferred from {src}",
                    e.id,
                    e.path,
                    {"created": e.created, "inferred_from": src, "fixable": fixable},
                )
            )
    return out


# --- files -------------------------------------------------------------------------------------


def _lacks_frontmatter(e: Entry) -> bool:
    # A file with any frontmatter has a description or a name other than its stem; only the rest
    # are worth opening (so this is cheap on a healthy tree).
    if e.description or e.name != Path(e.path).stem:
        return False
    try:
        with open(e.path, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return False
    return not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"---")


def file_findings(entries: Sequence[Entry]) -> list[Finding]:
    out = []
    for e in entries:
        if e.source == "context":
            continue
        if e.error:
            check = "frontmatter" if e.error.startswith("broken frontmatter") else "file"
            out.append(Finding(check, PROBLEM, e.error, e.id, e.path))
        elif _lacks_frontmatter(e):
            # Claude Code's own memory needs name/description/type; a palace note may be plain.
            level = PROBLEM if e.source == "claude" else NOTE
            msg = "no frontmatter: add name, description and type (Claude Code reads them)"
            out.append(Finding("frontmatter", level, msg, e.id, e.path))
    return out


# --- paths -------------------------------------------------------------------------------------

_TOKEN_SPLIT = re.compile(r"[\s`'\"()\[\]<>{}|,;=]+")
_LINE_SUFFIX = re.compile(r":\d+(?::\d+)?$")
_PATH_CHARS = re.compile(r"^[\w.@+~/%-]+$")
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
_DOMAIN = re.compile(r"^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n")
# A sentence saying the path is gone on purpose is history, not drift.
_HISTORY = re.compile(
    r"\b(deleted|removed|renamed|moved|dropped|no longer|used to|formerly|was at)\b", re.I
)
# Pseudo-filesystems and device paths are not facts about a project.
_SKIP_TOP = frozenset({"proc", "sys", "dev", "run"})


@dataclass(frozen=True)
class PathRef:
    # abs | home | rel (./x, or has an extension) | rel_weak (checked when its top folder exists)
    kind: str
    text: str


def path_refs(text: str) -> list[PathRef]:
    """Paths a memory names, in order, without repeats. URLs, globs, placeholders, routes
    (``/api/users``: no such top-level folder here), fractions and ``and/or`` are not paths."""
    out: list[PathRef] = []
    seen: set[str] = set()
    for sentence in _SENTENCE.split(text):
        if "/" not in sentence:
            continue
        found = []
        for raw in _TOKEN_SPLIT.split(sentence):
            if "/" not in raw or "://" in raw or "..." in raw:
                continue
            tok = _LINE_SUFFIX.sub("", raw.lstrip("*_").rstrip(".:!?*_"))
            if not tok or tok in seen or not _PATH_CHARS.match(tok) or tok.startswith("//"):
                continue
            ref = _classify(tok)
            if ref is not None:
                seen.add(tok)
                found.append(ref)
        if found and not _HISTORY.search(sentence):
            out += found
    return out


def _classify(tok: str) -> PathRef | None:
    if tok.startswith("~/"):
        return PathRef("home", tok) if len(tok) > 2 else None
    if tok.startswith("~"):
        return None
    parts = [p for p in tok.split("/") if p]
    if not parts:
        return None
    if tok.startswith("/"):
        if len(parts) < 2 or parts[0] in _SKIP_TOP or not os.path.isdir("/" + parts[0]):
            return None
        return PathRef("abs", tok)
    first = parts[0]
    if first not in (".", ".."):
        if _DOMAIN.match(first) or all(p.replace(".", "").isdigit() for p in parts):
            return None
        if len(parts) < 2:
            return None
    if first in (".", "..") or _EXT.search(parts[-1]):
        return PathRef("rel", tok)
    return PathRef("rel_weak", tok)


def _root_for(e: Entry, roots: dict[str, str | None]) -> str | None:
    return roots.get(e.project) if e.project else None


def path_findings(entries: Sequence[Entry], roots: dict[str, str | None]) -> list[Finding]:
    out: list[Finding] = []
    exists_cache: dict[str, bool] = {}
    unchecked: dict[str, set[str]] = defaultdict(set)
    home = str(Path.home())

    def exists(p: str) -> bool:
        if p not in exists_cache:
            exists_cache[p] = os.path.exists(p)
        return exists_cache[p]

    for e in entries:
        if e.source == "context" or "/" not in e.body:
            continue
        root = _root_for(e, roots)
        for ref in path_refs(e.body)[:MAX_PATHS_PER_ENTRY]:
            if ref.kind == "abs":
                target = ref.text
            elif ref.kind == "home":
                target = os.path.join(home, ref.text[2:])
            elif root is None:
                if ref.kind == "rel":
                    unchecked[e.project].add(e.id)
                continue
            else:
                target = os.path.normpath(os.path.join(root, ref.text))
                if ref.kind == "rel_weak":
                    top = ref.text.split("/", 1)[0]
                    if not exists(os.path.join(root, top)):
                        continue
            if not exists(target):
                where = f" under {root}" if ref.kind.startswith("rel") else ""
                out.append(
                    Finding(
                        "broken_path",
                        PROBLEM,
                        f"names {ref.text}, which does not exist{where}; {_label(e)}",
                        e.id,
                        e.path,
                        {"named": ref.text, "resolved": target},
                    )
                )
    for project, ids in sorted(unchecked.items()):
        if project:
            msg = (
                f"relative paths in {len(ids)} memories of {project} not checked: its project "
                "root is unknown (run `memory-tool doctor` once from inside the project)"
            )
        else:
            msg = f"relative paths in {len(ids)} palace notes not checked: they have no project"
        out.append(
            Finding("root_unknown", NOTE, msg, data={"project": project, "ids": sorted(ids)})
        )
    return out


# --- [[links]] -----------------------------------------------------------------------------------

_LINK_RE = re.compile(r"\[\[([^\[\]|#\n]+)(?:[|#][^\[\]\n]*)?\]\]")
_TYPE_PREFIX = re.compile(r"^(user|feedback|project|reference)[_-]")


def _norm_name(text: str) -> str:
    name = text.strip().lower().removesuffix(".md")
    return re.sub(r"[\s_]+", "-", name.rsplit("/", 1)[-1])


def link_findings(entries: Sequence[Entry], known: Sequence[Entry]) -> list[Finding]:
    names: set[str] = set()
    for e in known:
        stem = Path(e.path).stem
        names.update({_norm_name(e.name), _norm_name(stem), _norm_name(_TYPE_PREFIX.sub("", stem))})
        names.add(e.id)
    out = []
    for e in entries:
        if "[[" not in e.body:
            continue
        for target in dict.fromkeys(m.group(1).strip() for m in _LINK_RE.finditer(e.body)):
            if target and _norm_name(target) not in names:
                msg = f"[[{target}]] names a memory that does not exist yet: to write"
                out.append(Finding("to_write", NOTE, msg, e.id, e.path, {"link": target}))
    return out


# --- MEMORY.md -----------------------------------------------------------------------------------

_MD_LINK_RE = re.compile(r"\]\(\s*(<[^>\n]+>|[^)\s]+)")


@dataclass
class IndexFolder:
    path: Path
    required: bool  # Claude Code memory folders must have a MEMORY.md; palace folders may


def _memory_files(folder: Path) -> list[str]:
    """The memory files directly in ``folder`` (as ``tree.scan`` counts them), as strings."""
    try:
        with os.scandir(folder) as it:
            return sorted(e.path for e in it if tree.is_memory_file(e.name) and e.is_file())
    except OSError:
        return []


def memory_index_findings(
    folders: Sequence[IndexFolder], by_path: dict[str, Entry] | None = None
) -> list[Finding]:
    out: list[Finding] = []
    by_path = by_path or {}
    for folder in folders:
        index_path = folder.path / tree.MEMORY_INDEX_NAME
        try:
            raw = index_path.read_bytes()
        except OSError:
            raw = None
        if raw is None and not folder.required:
            continue
        files = _memory_files(folder.path)
        if raw is None and not files:
            continue
        present = set(files)
        text = (raw or b"").decode("utf-8", errors="replace")
        listed: set[str] = set()
        lines = text.splitlines()
        for n, line in enumerate(lines, 1):
            for m in _MD_LINK_RE.finditer(line):
                target = m.group(1).strip("<>").split("#", 1)[0].strip()
                if not target or "://" in target or target.startswith("mailto:"):
                    continue
                resolved = os.path.normpath(os.path.join(folder.path, unquote(target)))
                if resolved in present or os.path.exists(resolved):
                    listed.add(resolved)
                    continue
                out.append(
                    Finding(
                        "index_missing_file",
                        PROBLEM,
                        f"MEMORY.md line {n} points to {target}, which does not exist",
                        path=str(index_path),
                        data={"line": n, "target": target},
                    )
                )
        for p in files:
            if p in listed:
                continue
            e = by_path.get(p)
            name = os.path.basename(p)
            msg = f"{name} is not listed in MEMORY.md"
            if raw is None:
                msg = f"{name} is not listed: there is no MEMORY.md"
            data = {"index": str(index_path), "fixable": True}
            out.append(Finding("index_unlisted", PROBLEM, msg, e.id if e else "", p, data))
        if len(lines) > MEMORY_INDEX_LOADED_LINES or len(raw or b"") > MEMORY_INDEX_LOADED_BYTES:
            msg = (
                f"{index_path} has {len(lines)} lines / {len(raw or b'')} bytes: Claude Code "
                f"loads only the first {MEMORY_INDEX_LOADED_LINES} lines / "
                f"{MEMORY_INDEX_LOADED_BYTES // 1024} KB"
            )
            out.append(Finding("index_truncated", PROBLEM, msg, path=str(index_path)))
    return out


# --- duplicates and contradictions ---------------------------------------------------------------

_WORDS = re.compile(r"[a-z][a-z0-9_-]{2,}")
_TOKENS = re.compile(r"[a-z']+")
_NUMBERS = re.compile(r"(?<![\w.])\d+(?:[.:]\d+)*(?![\w])")
_QUOTED = re.compile(r"`([^`\n]{1,60})`")
_NEGATIONS = frozenset(
    ("not", "no", "never", "dont", "don't", "doesn't", "isn't", "aren't", "won't", "can't")
    + ("cannot", "shouldn't", "mustn't", "without", "avoid", "disable", "disabled", "false")
    + ("off", "deny", "forbidden", "nor")
)
_STOP = frozenset(
    ("the", "and", "for", "with", "that", "this", "from", "are", "was", "were", "have", "has")
    + ("not", "but", "you", "your", "use", "using", "when", "into", "than", "then", "them")
    + ("they", "its", "our", "can", "all", "any", "per", "via", "also", "only", "should", "must")
)


def _compare_text(e: Entry) -> str:
    text = f"{e.description} {e.body}" if e.description not in e.body else e.body
    return " ".join(text.lower().split())[:COMPARE_CHARS]


def _bucket(e: Entry) -> str:
    # Compare memories that can meet in one layer or room: the user's facts across projects
    # (L1 loads them together), otherwise one folder's worth.
    if e.type == "user":
        return "user"
    if e.source == "claude":
        return f"claude:{e.project}"
    if e.source == "room":
        return f"room:{e.room}"
    return f"{e.source}:{e.project}"


@dataclass
class _Text:
    """One memory's text as the comparison sees it, worked out once (not once per pair)."""

    words: set[str]  # for rare-word blocking and the "differ in" hint
    sorted_text: str  # tokens sorted: ratio() of these is token_sort_ratio, minus the re-sorting
    negation: str  # the first negation word, '' for none
    numbers: set[str]
    quoted: set[str]

    @classmethod
    def of(cls, text: str) -> _Text:
        neg = next((t for t in _TOKENS.findall(text) if t in _NEGATIONS or t.endswith("n't")), "")
        return cls(
            set(_WORDS.findall(text)) - _STOP,
            " ".join(sorted(text.split())),
            neg,
            set(_NUMBERS.findall(text)),
            set(_QUOTED.findall(text)),
        )


def _disagreement(a: _Text, b: _Text) -> str:
    if bool(a.negation) != bool(b.negation):
        return f"only one says {(a.negation or b.negation)!r}"
    for va, vb, what in ((a.numbers, b.numbers, "numbers"), (a.quoted, b.quoted, "quoted values")):
        if va - vb and vb - va:  # each says a value the other does not: 5432 vs 5433
            return f"different {what}: {', '.join(sorted(va - vb))} vs {', '.join(sorted(vb - va))}"
    return ""


def duplicate_findings(entries: Sequence[Entry]) -> list[Finding]:
    from rapidfuzz import fuzz, process

    pool = [e for e in entries if e.source not in ("context", "session") and not e.error]
    texts = [_Text.of(_compare_text(e)) for e in pool]
    df: Counter[tuple[str, str]] = Counter()
    for e, t in zip(pool, texts, strict=True):
        df.update((_bucket(e), w) for w in t.words)
    postings: dict[tuple[str, str], list[int]] = defaultdict(list)
    names: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, (e, t) in enumerate(zip(pool, texts, strict=True)):
        bucket = _bucket(e)
        for w in sorted(t.words, key=lambda w: (df[(bucket, w)], w))[:RARE_KEYS_PER_ENTRY]:
            postings[(bucket, w)].append(i)
        names[(bucket, _norm_name(e.name))].append(i)
    scores: dict[tuple[int, int], float] = {}
    for members in postings.values():
        if not 1 < len(members) <= MAX_BUCKET:
            continue
        choices = [texts[m].sorted_text for m in members]
        for k, i in enumerate(members[:-1]):
            # C-level scan of the rest of the bucket; only pairs above the cut come back.
            for _, score, pos in process.extract(
                texts[i].sorted_text,
                choices[k + 1 :],
                scorer=fuzz.ratio,
                score_cutoff=CONTRADICTION_MIN_SCORE,
                limit=None,
            ):
                j = members[k + 1 + pos]
                scores[(min(i, j), max(i, j))] = score
    for members in names.values():  # same name in one folder: always worth a look
        for k, i in enumerate(members):
            for j in members[k + 1 :]:
                pair = (min(i, j), max(i, j))
                scores.setdefault(pair, fuzz.ratio(texts[i].sorted_text, texts[j].sorted_text))

    out = []
    shown: Counter[int] = Counter()
    for (i, j), score in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])):
        if shown[i] >= MAX_MATCHES_PER_ENTRY or shown[j] >= MAX_MATCHES_PER_ENTRY:
            continue
        a, b = pool[i], pool[j]
        if a.dedupe_key == b.dedupe_key and a.project != b.project and a.type == "user":
            continue  # the same fact saved in two projects: L1 already loads it once
        same_name = _norm_name(a.name) == _norm_name(b.name)
        why = _disagreement(texts[i], texts[j])
        data: dict[str, Any] = {"ids": [a.id, b.id], "paths": [a.path, b.path]}
        data["score"] = round(score)
        if why:
            check, msg = "contradiction", f"{a.id} and {b.id} disagree ({why})"
        elif score >= DUPLICATE_MIN_SCORE or same_name:
            check = "duplicate"
            reason = f"{round(score)}% alike" if score >= DUPLICATE_MIN_SCORE else "same name"
            only_a = sorted(texts[i].words - texts[j].words)[:4]
            only_b = sorted(texts[j].words - texts[i].words)[:4]
            diff = f"; differ in {' '.join(only_a) or '-'} / {' '.join(only_b) or '-'}"
            msg = f"{a.id} and {b.id}: {reason}{diff if (only_a or only_b) else ''}"
        else:
            continue
        shown[i] += 1
        shown[j] += 1
        out.append(Finding(check, PROBLEM, f"{msg}: merge candidates", a.id, a.path, data))
    return out


# --- always-load discipline ----------------------------------------------------------------------

_CONSEQUENCE_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("money loss", ("billing", "money", "charg", "payment")),
    ("downtime", ("production", "prod", "outage", "downtime")),
    ("security", ("secret", "credential", "api key", "password", "breach", "leak", "pii", "gdpr")),
)
CONSEQUENCES = ("data loss", "money loss", "downtime", "security")


def consequence(e: Entry) -> str:
    """Which irreversible consequence forgetting this memory risks ('' for none), from the same
    ``IRREVERSIBLE_RE`` that orders the brief."""
    m = IRREVERSIBLE_RE.search(f"{e.name} {e.description} {e.body}")
    if m is None:
        return ""
    word = m.group(0).lower()
    for name, stems in _CONSEQUENCE_WORDS:
        if word.startswith(stems):
            return name
    return "data loss"


VERDICTS = ("keep", "profile", "on-demand")


def triage(
    l1: Sequence[Entry], l2: Sequence[Entry], day: dt.date, cfg: dict[str, Any]
) -> list[dict[str, Any]]:
    """The always-load set ordered for a person to cut, by the irreversible-consequence rule:
    what can cause data loss, money loss, downtime or a security breach stays ("keep", by
    consequence); the user's profile facts (L1) are next ("profile": keep those that shape
    every session); the rest can move to on-demand. Within a verdict, the brief's own order."""
    rows = []
    for pos, (layer, e) in enumerate([("L1", e) for e in l1] + [("L2", e) for e in l2]):
        cons = consequence(e)
        verdict = "keep" if cons else ("profile" if e.type == "user" else "on-demand")
        row: dict[str, Any] = {
            "id": e.id,
            "layer": layer,
            "verdict": verdict,
            "why": cons or ("user profile" if verdict == "profile" else "no irreversible risk"),
            "name": _label(e),
            "pinned": e.always,
            "stale": is_stale(e, day, cfg),
            "weight": round(weight(e, day, cfg), 3),
            "path": e.path,
        }
        if e.always and not cons:
            row["how"] = "remove `always: true`"
        elif verdict == "profile":
            row["how"] = "keep if it shapes every session, else delete or move to rooms/<room>/"
        elif verdict == "on-demand":
            row["how"] = "move the file to rooms/<room>/ (it then loads with its topic)"
        order = CONSEQUENCES.index(cons) if cons else 0
        rows.append((VERDICTS.index(verdict), order, pos, row))
    return [r[3] for r in sorted(rows, key=lambda r: r[:3])]


def _always_load(
    l1: list[Entry],
    l2: list[Entry],
    project: str,
    day: dt.date,
    cfg: dict[str, Any],
    with_triage: bool,
) -> Finding | None:
    """``l1``/``l2``: the layers' ranked, de-duplicated candidates (as the brief sees them)."""
    cap = int(cfg.get("always_load_max", ALWAYS_LOAD_MAX))
    n = len(l1) + len(l2)
    if n <= cap:
        return None
    rows = triage(l1, l2, day, cfg) if with_triage else []
    keep = sum(bool(consequence(e)) for e in [*l1, *l2])
    profile = sum(1 for e in l1 if e.type == "user" and not consequence(e))
    msg = (
        f"{n} always-loaded entries for {project} (L1 {len(l1)} + L2 {len(l2)}; max {cap}): "
        f"{n - cap} never reach the brief; keep {keep} with irreversible consequences, review "
        f"{profile} profile facts, move {n - keep - profile} to on-demand"
    )
    data = {"project": project, "count": n, "max": cap, "keep": keep, "triage": rows}
    return Finding("always_load", PROBLEM, msg, data=data)


def always_load_findings(
    idx: Index, projects: Iterable[str], day: dt.date, cfg: dict[str, Any]
) -> list[Finding]:
    l1 = dedupe(rank(l1_candidates(idx), day, cfg))
    out = []
    for project in projects:
        l2 = dedupe(rank(l2_candidates(idx, project), day, cfg))
        found = _always_load(l1, l2, project, day, cfg, with_triage=True)
        if found is not None:
            out.append(found)
    return out


# --- project roots -------------------------------------------------------------------------------


def remember_root(idx: Index, cwd: str | Path) -> None:
    """Record which folder a project key stands for (keys are lossy), for relative-path checks."""
    key, root = paths.project_key(cwd), str(paths.project_root(cwd))
    if idx.meta(ROOT_META_PREFIX + key) != root:
        with contextlib.suppress(sqlite3.OperationalError):  # locked or read-only: next time
            idx.set_meta(ROOT_META_PREFIX + key, root)


def known_roots(idx: Index) -> dict[str, str]:
    rows = idx.conn.execute(
        "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ?",
        (len(ROOT_META_PREFIX), ROOT_META_PREFIX),
    )
    return {str(k)[len(ROOT_META_PREFIX) :]: str(v) for k, v in rows}


def _root_from_transcripts(key: str) -> str | None:
    """Claude Code's transcripts record the session's cwd; sessions started in a subfolder are
    filed under a longer key that starts with this one."""
    base = paths.projects_dir()
    try:
        dirs = [d for d in base.iterdir() if d.name == key or d.name.startswith(key + "-")]
    except OSError:
        return None
    for d in sorted(dirs, key=lambda d: len(d.name)):
        try:
            files = sorted(d.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            continue
        for f in files[:TRANSCRIPT_FILES_PER_PROJECT]:
            try:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    for n, line in enumerate(fh):
                        if n >= TRANSCRIPT_HEAD_LINES:
                            break
                        cwd = _json_cwd(line)
                        if cwd and os.path.isdir(cwd) and paths.project_key(cwd) == key:
                            return str(paths.project_root(cwd))
            except OSError:
                continue
    return None


def _json_cwd(line: str) -> str | None:
    if '"cwd"' not in line:
        return None
    try:
        value = json.loads(line).get("cwd")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def _root_from_key(key: str) -> str | None:
    """Undo the sanitising where it is unambiguous: '-' back to '/' gives a folder whose key is
    this key (true for paths of letters, digits and '/')."""
    guess = key.replace("-", "/")
    if guess.startswith("/") and os.path.isdir(guess) and paths.project_key(guess) == key:
        return str(paths.project_root(guess))
    return None


def discover_roots(idx: Index, keys: Iterable[str]) -> dict[str, str | None]:
    stored = known_roots(idx)
    out: dict[str, str | None] = {}
    for key in keys:
        root: str | None = stored.get(key)
        if root is None or not os.path.isdir(root):
            root = _root_from_transcripts(key) or _root_from_key(key)
            if root is not None:
                with contextlib.suppress(sqlite3.OperationalError):
                    idx.set_meta(ROOT_META_PREFIX + key, root)
        out[key] = root
    return out


# --- whole reports -------------------------------------------------------------------------------


def diagnose(
    idx: Index,
    cwd: str | Path | None = None,
    *,
    duplicates: bool = True,
    cfg: dict[str, Any] | None = None,
    day: dt.date | None = None,
) -> Report:
    """Every check over every memory (the caller refreshes the index first)."""
    cfg = cfg or load_config()
    day = day or today()
    project = paths.project_key(cwd) if cwd is not None else ""
    if cwd is not None:
        remember_root(idx, cwd)
    entries = idx.query("source != 'session'")
    claude = tree.claude_folders()
    keys = {e.project for e in entries if e.project} | {f.project for f in claude}
    if project:
        keys.add(project)
    roots = discover_roots(idx, sorted(keys))
    folders = [IndexFolder(f.path, True) for f in claude]
    folders += [IndexFolder(f.path, False) for f in tree.palace_folders()]
    by_path = {e.path: e for e in entries}
    findings = age_findings(entries, day, cfg)
    findings += file_findings(entries)
    findings += path_findings(entries, roots)
    findings += link_findings(entries, entries)
    findings += memory_index_findings(folders, by_path)
    if duplicates:
        findings += duplicate_findings(entries)
    projects = sorted({f.project for f in claude} | ({project} if project else set()))
    findings += _always_load_all(idx, projects, day, cfg)
    return Report(_sorted(findings), len(entries), project, roots)


def _always_load_all(
    idx: Index, projects: list[str], day: dt.date, cfg: dict[str, Any]
) -> list[Finding]:
    cap = int(cfg.get("always_load_max", ALWAYS_LOAD_MAX))
    l1 = dedupe(rank(l1_candidates(idx), day, cfg))
    if len(l1) > cap:
        # L1 alone is over: every project overflows for the same reason; say it once.
        found = _always_load(l1, [], "*", day, cfg, with_triage=True)
        if found is not None:
            found.message = (
                f"L1 alone holds {len(l1)} always-loaded entries (max {cap}): "
                + (found.message.split(": ", 1)[1])
            )
        return [found] if found else []
    return always_load_findings(idx, projects, day, cfg)


def wake_scope(idx: Index, project: str) -> tuple[list[Entry], list[Entry], list[Entry]]:
    """What a session in ``project`` loads, as (L1 candidates, L2 candidates, the rest of its
    Claude memory folder): each row is read once, and the layers' own queries decide L1/L2."""
    l1 = l1_candidates(idx)
    l2 = l2_candidates(idx, project)
    have = {e.id for e in l1} | {e.id for e in l2}
    own = idx.conn.execute(
        "SELECT id FROM entries WHERE project = ? AND source IN ('claude', 'context')", (project,)
    )
    missing = [r[0] for r in own if r[0] not in have]
    rest = idx.query("id IN (SELECT value FROM json_each(?))", (json.dumps(missing),))
    return l1, l2, rest


def wake_report(
    idx: Index, cwd: str | Path, cfg: dict[str, Any] | None = None, day: dt.date | None = None
) -> Report:
    """The checks that need no rapidfuzz, over what this session loads."""
    cfg = cfg or load_config()
    day = day or today()
    project = paths.project_key(cwd)
    l1, l2, rest = wake_scope(idx, project)
    entries = list({e.id: e for e in [*l1, *l2, *rest]}.values())
    roots: dict[str, str | None] = dict(known_roots(idx))
    roots[project] = str(paths.project_root(cwd))
    by_path = {e.path: e for e in entries}
    folder = tree.claude_folder_for(project).path
    findings = age_findings(entries, day, cfg)
    findings += file_findings(entries)
    findings += path_findings(entries, roots)
    findings += memory_index_findings([IndexFolder(folder, True)], by_path)
    overflow = _always_load(
        dedupe(rank(l1, day, cfg)), dedupe(rank(l2, day, cfg)), project, day, cfg, False
    )
    findings += [overflow] if overflow else []
    return Report(_sorted(findings), len(entries), project, {project: roots[project]})


def _stat_sig(path: Path) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_mtime_ns}:{st.st_size}"


def wake_warning(idx: Index, cwd: str | Path) -> str | None:
    """``2 stale, 1 broken path: memory-tool doctor`` when what this session loads needs
    attention, else None. Cached in the index's meta by (generation, day, project, MEMORY.md
    state): an unchanged tree costs one meta read. Paths that vanish without any memory changing
    show up the next day (or at the next change)."""
    cfg = load_config()
    if not cfg.get("hygiene", {}).get("enabled", True):
        return None
    project = paths.project_key(cwd)
    remember_root(idx, cwd)
    memory_md = tree.claude_folder_for(project).path / tree.MEMORY_INDEX_NAME
    key = [idx.generation, today().isoformat(), project, _stat_sig(memory_md)]
    meta_key = WAKE_META_PREFIX + project
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        stored = json.loads(idx.meta(meta_key) or "null")
        if stored and stored.get("key") == key:
            line = stored.get("line")
            return line if isinstance(line, str) else None
    report = wake_report(idx, cwd, cfg)
    line = None if report.ok else f"{report.summary()}{WAKE_SUFFIX}"
    with contextlib.suppress(sqlite3.OperationalError):
        idx.set_meta(meta_key, json.dumps({"key": key, "line": line}))
    return line


_DIGIT_RUN = re.compile(r"[0-9]+")


def line_tokens(idx: Index, text: str) -> int:
    """Exact cl100k tokens of a line whose numbers change (counts in the hygiene line) without
    loading the tokenizer for every new number: cl100k's pre-tokenizer cuts digit runs into
    groups of 1-3 digits, each one token, and never joins a digit to its neighbours; so the
    count is that of the line with every run replaced by "0" (cached once per wording) plus one
    per extra group. ``tests/test_doctor.py`` checks this against the tokenizer."""
    if idx.meta("token_method", "cl100k_base") != "cl100k_base":
        return idx.count_cached(text)  # the estimate has no tokenizer to spare
    runs = _DIGIT_RUN.findall(text)
    extra = sum((len(r) + 2) // 3 - 1 for r in runs)
    return idx.count_cached(_DIGIT_RUN.sub("0", text)) + extra


def wake_units(idx: Index, cwd: str | Path) -> list[Unit]:
    """The SessionStart line as a brief unit: exactly one line, only when something is wrong.
    Never raises: a hygiene bug must not cost the session its brief."""
    try:
        line = wake_warning(idx, cwd)
        if not line:
            return []
        text = f"{WAKE_PREFIX}{' '.join(line.split())}\n"
        return [Unit(text, line_tokens(idx, text))]
    except Exception as exc:  # noqa: BLE001 - fail open, and say so in the hook log
        from .hooks import log_error

        log_error("SessionStart", exc)
        return []


# --- fix -----------------------------------------------------------------------------------------


@dataclass
class FixResult:
    backup: Path | None
    actions: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "backup": str(self.backup) if self.backup else None,
            "actions": self.actions,
            "skipped": self.skipped,
        }


def backups_dir() -> Path:
    return paths.state_root() / "backups"


def _new_backup_dir() -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = backups_dir()
    for n in range(1, 1000):
        target = base / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            target.mkdir(parents=True, mode=0o700)
            return target
        except FileExistsError:
            continue
    raise OSError(f"no free backup folder under {base}")


def _mirror(path: Path) -> Path:
    for prefix, root in (("state", paths.state_root()), ("claude", paths.config_dir())):
        with contextlib.suppress(ValueError):
            return Path(prefix) / path.relative_to(root)
    return Path("other") / str(path).lstrip("/")


def _backup(path: Path, backup: Path, manifest: list[dict[str, Any]], action: str) -> None:
    entry: dict[str, Any] = {"path": str(path), "action": action}
    if path.exists():
        copy = backup / "files" / _mirror(path)
        copy.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copy2(path, copy)
        entry["backup"] = str(copy)
    else:
        entry["backup"] = None  # created by the fix: undo by deleting it
    manifest.append(entry)


def _replace_bytes(path: Path, data: bytes, st: os.stat_result) -> None:
    """Atomic rewrite keeping the file's mode and timestamps (its mtime is the evidence a date was
    inferred from, and a person's `ls -t` should not change because we added one line)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, st.st_mode & 0o7777)
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def insert_created(raw: bytes, date: str) -> bytes | None:
    """``raw`` with ``created: DATE`` added as the last frontmatter line (or a new frontmatter
    block holding only it), every other byte unchanged; None when that cannot be done safely."""
    bom = b"\xef\xbb\xbf" if raw.startswith(b"\xef\xbb\xbf") else b""
    text = raw[len(bom) :]
    lines = text.splitlines(keepends=True)
    nl = b"\r\n" if lines and lines[0].endswith(b"\r\n") else b"\n"
    line = b"created: " + date.encode("ascii") + nl
    if lines and lines[0].rstrip() == b"---":
        close = next((i for i in range(1, len(lines)) if lines[i].rstrip() == b"---"), None)
        if close is None:
            return None
        new = bom + b"".join(lines[:close]) + line + b"".join(lines[close:])
    elif not text.lstrip().startswith(b"---"):
        new = bom + b"---" + nl + line + b"---" + nl + text
    else:
        return None
    return new if _only_created_added(raw, new, date) else None


def _only_created_added(old: bytes, new: bytes, date: str) -> bool:
    import frontmatter
    import yaml

    try:
        a = frontmatter.loads(old.decode("utf-8").lstrip("\ufeff"))
        b = frontmatter.loads(new.decode("utf-8").lstrip("\ufeff"))
    except (UnicodeDecodeError, yaml.YAMLError, ValueError, TypeError):
        return False
    meta_a, meta_b = dict(a.metadata), dict(b.metadata)
    if "created" in meta_a:
        return False  # an unreadable created value: a person decides
    created = meta_b.pop("created", None)
    return str(created) == date and meta_a == meta_b and a.content == b.content


def fix(idx: Index, report: Report) -> FixResult:
    """Safe, reversible repairs, each file backed up first under ``<state>/backups/<time>/``:
    write inferred ``created`` dates into frontmatter, and append missing ``MEMORY.md`` lines.
    Nothing is deleted or reworded. The caller refreshes the index afterwards."""
    from .fsutil import append_line_locked
    from .palace import memory_index_line

    dates = [f for f in report.findings if f.check == "inferred_date" and f.data.get("fixable")]
    unlisted: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        if f.check == "index_unlisted":
            unlisted[str(f.data["index"])].append(f)
    result = FixResult(None)
    if not dates and not unlisted:
        return result
    backup = _new_backup_dir()
    result.backup = backup
    manifest: list[dict[str, Any]] = []
    try:
        for f in dates:
            path, date = Path(f.path), str(f.data["created"])
            try:
                st = os.stat(path)
                entry = idx.get_by_path(f.path)
                if (st.st_mtime_ns, st.st_size) != (entry.mtime_ns, entry.size):
                    raise ValueError("changed since it was checked: run doctor again")
                new = insert_created(path.read_bytes(), date)
                if new is None:
                    raise ValueError("frontmatter could not be extended safely: edit by hand")
            except (OSError, ValueError, LookupError) as exc:
                result.skipped.append({"path": f.path, "reason": str(exc)})
                continue
            _backup(path, backup, manifest, f"add created: {date}")
            _replace_bytes(path, new, st)
            result.actions.append({"path": f.path, "action": f"added created: {date}"})
        for index_name, items in sorted(unlisted.items()):
            index_path = Path(index_name)
            _backup(index_path, backup, manifest, f"append {len(items)} lines")
            for f in items:
                p = Path(f.path)
                e = next((x for x in idx.query("path = ?", (f.path,))), None)
                title = (e.name if e else "") or p.stem
                link = f"<{p.name}>" if re.search(r"[\s()<>]", p.name) else p.name
                hook = " ".join((e.description if e else "").split())
                line = memory_index_line(title, link, hook) if hook else f"- [{title}]({link})"
                append_line_locked(index_path, line)
            lines = f"{len(items)} line{'s' if len(items) != 1 else ''}"
            result.actions.append({"path": index_name, "action": f"appended {lines}"})
    finally:
        manifest_path = backup / "manifest.json"
        manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return result


__all__ = [
    "Finding",
    "FixResult",
    "Report",
    "diagnose",
    "fix",
    "stale_items",
    "wake_report",
    "wake_units",
    "wake_warning",
]
