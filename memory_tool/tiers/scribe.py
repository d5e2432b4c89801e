"""The Scribe: compresses a session into a dated cold summary; rolls old summaries into the wiki.

Cold tier: ``<state>/cold/<project>/<date>-<session8>.md``, one per session, rewritten as the
session goes on. Extractive (no model call, no cost): the task, the result, the decisions, the
gotchas, the files changed, the commands that mattered, what was left open, at about a tenth of the
session's text (never under COLD_MIN_CHARS, never over COLD_MAX_CHARS, the design's 8-12 KB cold
size). Everything written goes through ``privacy.sanitize``; our own injected ``<memory-context>``
text was already dropped when the transcript was read (``tiers``).

Rolling window: a summary not updated for ``cold.retention_days`` has its decisions and gotchas
promoted to the wiki as ADR-style records (decision, context, consequences, date), then is removed.

Optional model summary (``cold.model_summary: true``, off by default): at session end, ``claude -p``
in ``--bare`` mode (no hooks, no CLAUDE.md, no auto memory) with ``--no-session-persistence`` (no
transcript, so not in the session list) and no tools, with ``MEMORY_TOOL_NESTED=1`` so that even
if hooks did run, ours would do nothing; its output is capped at
``cold.model_summary_max_chars``.

Runs off the hook path: the Stop and SessionEnd hooks start ``python -m memory_tool.tiers.scribe``
in the background (``runtime.stop.spawn_scribe``; inline when ``MEMORY_TOOL_NO_BACKGROUND`` is set).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.config import load_config, today
from ..base.errors import MemoryToolError
from ..base.fsutil import atomic_write_text, file_lock
from ..base.privacy import sanitize, strip_injected
from ..store import tree
from ..store.entry import Entry
from ..store.index import Index, open_index, with_recovery
from . import digest
from . import inject as tiers
from .hot import (
    has_substance,
    hot_dir,
    load_state,
    read_handoff_section,
    save_state,
    session_key,
    session_lock,
    write_hot_file,
)
from .inbox import TAGGED_LESSON_RE

# --- the cold summary's size ---------------------------------------------------------------------
# "Compress Hot -> Cold summary (target: ~10% of session verbosity)" (tiered-memory design).
COLD_RATIO = 0.10
# A short session still deserves its task, result and files: below this the ratio is not applied.
COLD_MIN_CHARS = 600
# The design's cold tier is "~8-12 KB typical": a summary never exceeds the top of that.
COLD_MAX_CHARS = 12_000
TASK_LINE_MAX_CHARS = 300
RESULT_LINE_MAX_CHARS = 500
ITEM_MAX_CHARS = 300
# Lists in a summary: enough to find the rest (`get` / the transcript), not a copy of it.
MAX_SUMMARY_FILES = 30
MAX_SUMMARY_COMMANDS = 10
# Hot files of sessions idle this long are deleted: their content lives on in the cold summary.
HOT_RETENTION_DAYS = 14
# The optional model summary: the session text handed to `claude -p` is cut to this many
# characters (head and tail), and the call may take this long before we give up.
MODEL_INPUT_MAX_CHARS = 30_000
MODEL_TIMEOUT_S = 180
MODEL_PROMPT = (
    "Summarise this Claude Code session for the engineer who continues it tomorrow, in at most "
    "{max_chars} characters of plain Markdown: the task, what was done, decisions and why, "
    "problems hit and how they were solved, and what is still open. Facts only.\n\n"
)

# Commands that usually matter to the next session: tests, builds, migrations, deploys, commits.
IMPORTANT_COMMAND_RE = re.compile(
    r"\b(pytest|tox|nox|unittest|test|tests|make|cargo|go (test|build)|npm (run|test|ci)|yarn|"
    r"pnpm|build|deploy\w*|migrat\w*|alembic|git (commit|push|merge|rebase|tag|revert)|"
    r"docker|kubectl|terraform|helm|pip install|uv (sync|add|pip)|poetry|mypy|ruff|eslint)\b"
)
SECTION_ORDER = (
    "Decisions",
    "Gotchas",
    "Open items",
    "Reusable",
    "Files changed",
    "Commands that mattered",
    "Turns",
)
PROMOTED_SECTIONS = {"Decisions": "decision", "Gotchas": "gotcha"}


def _cut(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _session_day(state: dict[str, Any], key: str) -> str:
    stamp = digest.epoch(state.get(key) or "")
    if stamp is None:
        return today().isoformat()
    return dt.datetime.fromtimestamp(stamp).date().isoformat()


def cold_folder(project: str) -> tree.Folder:
    path = paths.palace_dir("cold") / project
    return tree.Folder(path, "cold", project=project, recursive=True, default_type="cold")


def summary_name(state: dict[str, Any]) -> str:
    return f"session-{_session_day(state, 'first_ts')}-{session_key(state['session_id'])[:8]}"


def summary_path(state: dict[str, Any]) -> Path:
    if state.get("cold_path"):
        return Path(state["cold_path"])
    folder = cold_folder(state["project"]).path
    return folder / f"{summary_name(state).removeprefix('session-')}.md"


def _commands(state: dict[str, Any]) -> list[str]:
    mattered = [
        c for c in state["commands"] if c["failed"] or IMPORTANT_COMMAND_RE.search(c["cmd"])
    ]
    mattered.sort(key=lambda c: (-c["failed"], -c["runs"]))
    out = []
    for c in mattered[:MAX_SUMMARY_COMMANDS]:
        cmd = _cut(c["cmd"], 160)
        if c["failed"] and c["ok"]:
            note = f"failed {c['failed']}x ({_cut(c['error'], 120)}), passes now"
        elif c["failed"] and c.get("fixed_by"):
            fix = _cut(c["fixed_by"], 120)
            note = f"failed {c['failed']}x ({_cut(c['error'], 120)}), passed later as `{fix}`"
        elif c["failed"]:
            note = f"still failing: {_cut(c['error'], 160)}"
        else:
            note = f"ok, {c['runs']}x" if c["runs"] > 1 else "ok"
        out.append(f"`{cmd}`: {note}")
    return out


def summary_items(state: dict[str, Any]) -> list[tuple[str, str]]:
    """(section, line) candidates in the order they are worth keeping."""
    notes: dict[str, list[str]] = {}
    for n in state["notes"]:
        notes.setdefault(n["kind"], []).append(n["text"])
    task = state["first_task"] or state["task"] or "(no task stated)"
    lessons = [str(n.get("text") or "") for n in state["notes"]]
    shown_task = _without_lessons(task, lessons) or task
    items: list[tuple[str, str]] = [("", f"Task: {_cut(shown_task, TASK_LINE_MAX_CHARS)}")]
    if state["final"]:
        # A tagged lesson ("[DEFER] ...") goes to the Decisions or Open items list, not the
        # result: there it put the same fact into a request twice, glued to the line before.
        final = TAGGED_LESSON_RE.sub("", state["final"]).strip()
        if final:
            items.append(("", f"Result: {_cut(final, RESULT_LINE_MAX_CHARS)}"))
    if state["task"] and state["task"] != task:
        last = _without_lessons(state["task"], lessons)
        if last:
            items.append(("", f"Last request: {_cut(last, TASK_LINE_MAX_CHARS)}"))
    items += [("Decisions", _cut(t, ITEM_MAX_CHARS)) for t in notes.get("decision", [])]
    corrections = notes.get("correction", [])
    items += [("Decisions", "User: " + _cut(t, ITEM_MAX_CHARS)) for t in corrections]
    open_items = [_cut(t, ITEM_MAX_CHARS) for t in notes.get("defer", [])]
    for cmd, err in state["blockers"].items():
        open_items.append(_cut(f"`{cmd}` still fails: {err}", ITEM_MAX_CHARS))
    items += [("Open items", t) for t in open_items]
    items += [("Gotchas", _cut(t, ITEM_MAX_CHARS)) for t in notes.get("gotcha", [])]
    roots = (state["cwd"], state.get("event_cwd") or "")
    files = [digest.short_path(f, *roots) for f in state["files"]]
    items += [("Files changed", f) for f in files[:MAX_SUMMARY_FILES]]
    if len(files) > MAX_SUMMARY_FILES:
        items.append(("Files changed", f"… and {len(files) - MAX_SUMMARY_FILES} more"))
    items += [("Commands that mattered", c) for c in _commands(state)]
    items += [("Reusable", _cut(t, ITEM_MAX_CHARS)) for t in notes.get("reuse", [])]
    turns = list(state.get("turns") or [])
    if turns and state["final"].startswith(turns[-1]["answer"].rstrip("…")):
        turns[-1] = {**turns[-1], "answer": "(the result above)"}
    # The first turn asked the task the summary opens with: said once (a resumed session's
    # request carried it twice, as "Task:" and as the first turn).
    if turns and _same_text(turns[0]["ask"], task):
        turns[0] = {**turns[0], "ask": "(the task above)"}
    for turn in turns:
        answer = f" → {turn['answer']}" if turn["answer"] else ""
        items.append(("Turns", f"{turn['ask']}{answer}"))
    return items


def _without_lessons(text: str, lessons: list[str]) -> str:
    """``text`` without the sentences that became a lesson of this session (a rule, a
    correction, a decision: they are memories of their own, and the summary's task line gave
    each a second time in the same request)."""
    from ..store.similar import either_repeats, gist
    from .said import sentences, strip_lead_in, tidy

    wanted = [g for g in (gist(x) for x in lessons if x) if g]
    if not wanted:
        return text
    kept = []
    for sentence in sentences(" ".join(text.split())):
        said = gist(tidy(strip_lead_in(sentence)[0]))
        if said and any(said == g or either_repeats(said, g) for g in wanted):
            continue
        kept.append(sentence)
    return " ".join(kept).strip()


def _same_text(a: str, b: str) -> bool:
    """One text, maybe cut short in one place ("…"), spaces aside."""
    a, b = " ".join(a.split()).rstrip("…"), " ".join(b.split()).rstrip("…")
    return bool(a and b) and (a.startswith(b) or b.startswith(a))


def target_chars(state: dict[str, Any]) -> int:
    return int(min(COLD_MAX_CHARS, max(COLD_MIN_CHARS, state["text_chars"] * COLD_RATIO)))


def build_summary(state: dict[str, Any]) -> str:
    """The summary body: items taken in worth order while they fit the target size, then laid
    out in reading order. The first line (the task) is always kept."""
    budget = target_chars(state)
    kept: dict[str, list[str]] = {}
    used = 0
    for i, (section, line) in enumerate(summary_items(state)):
        cost = len(line) + 3 + (len(section) + 5 if section not in kept else 0)
        if i > 0 and used + cost > budget:
            continue
        kept.setdefault(section, []).append(line)
        used += cost
    out = [f"{line}\n" for line in kept.get("", [])]
    for section in SECTION_ORDER:
        lines = kept.get(section)
        if not lines:
            continue
        title = f"{section} ({len(state['files'])})" if section == "Files changed" else section
        out.append(f"\n## {title}\n")
        out += [f"- {line}\n" for line in lines]
    if state.get("compact_summary"):  # what compaction replaced, in Claude Code's own words
        out.append(f"\n## Compaction summary\n{state['compact_summary'].strip()}\n")
    if state.get("model_summary"):
        out.append(f"\n## Model summary\n{state['model_summary'].strip()}\n")
    return sanitize("".join(out))


def _yaml_scalar(value: object) -> str:
    # JSON strings and numbers are valid YAML scalars: no YAML library needed.
    return json.dumps(value, ensure_ascii=False)


# A search result lists a summary by its description: a line, not a paragraph.
DESCRIPTION_MAX_CHARS = 140


def _description(state: dict[str, Any]) -> str:
    """What the session was about, without the sentences that became memories: a search result
    listed "heads up, the courier moved collection to 2pm, …" under the memory that says it."""
    task = state["first_task"] or state["task"] or ""
    lessons = [str(n.get("text") or "") for n in state["notes"]]
    shown = _without_lessons(task, lessons) if task else ""
    if shown:
        return shown
    final = TAGGED_LESSON_RE.sub("", state["final"] or "").strip()
    return (_without_lessons(final, lessons) if final else "") or "session"


def render_cold(state: dict[str, Any], body: str) -> str:
    text_chars = max(1, int(state["text_chars"]))
    ratio = round(len(body) / text_chars, 3)
    meta = {
        "name": summary_name(state),
        "description": _cut(sanitize(_description(state)), DESCRIPTION_MAX_CHARS),
        "type": "cold",
        "created": _session_day(state, "first_ts"),
        "updated": _session_day(state, "last_ts"),
        "session": state["session_id"],
        "project": state["project"],
        "cwd": state["cwd"],
        "prompts": state["prompt_count"],
        "tool_calls": state["tool_calls"],
        "files_edited": len(state["files"]),
        "session_chars": state["text_chars"],
        "ratio": ratio,
    }
    head = "".join(f"{k}: {_yaml_scalar(v)}\n" for k, v in meta.items())
    if text_chars * COLD_RATIO >= COLD_MIN_CHARS:
        size = f"this summary is {ratio:.0%} of the session's {text_chars:,} characters of text"
    else:  # below the floor the ratio says nothing
        size = f"a short session ({text_chars:,} characters of text), kept whole"
    stats = (
        f"\n## Stats\n{state['prompt_count']} prompts, {state['tool_calls']} tool calls, "
        f"{len(state['files'])} files edited; {size}.\n"
    )
    return f"---\n{head}---\n\n{body}{stats}"


def warm_tokens(idx: Index, texts: list[str]) -> None:
    """Count (and cache) the exact lines the hooks may inject later, so that hooks never load the
    tokenizer for them."""
    for text in texts:
        if text:
            idx.count_cached(text)


def write_cold(idx: Index, state: dict[str, Any]) -> Entry:
    """Write or rewrite the session's cold summary and index it."""
    path = summary_path(state)
    atomic_write_text(path, render_cold(state, build_summary(state)))
    entry = idx.index_file(path, cold_folder(state["project"]))
    warm_tokens(
        idx,
        [tiers.cold_latest_heading(entry.id), tiers.COLD_SEARCH_HEADING, tiers.WIKI_HEADING]
        + [tiers.cold_pointer(entry)]
        + tiers.cold_body_lines(entry.body),
    )
    return entry


# --- rolling window: promote to the wiki, then remove --------------------------------------------


@dataclass
class RollReport:
    removed: list[str] = field(default_factory=list)
    promoted: list[Entry] = field(default_factory=list)


def sections(body: str) -> dict[str, list[str]]:
    """Bullet items under each '## Heading' of a summary (heading counts like '(3)' dropped)."""
    out: dict[str, list[str]] = {}
    current = ""
    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith("## "):
            current = re.sub(r"\s*\(\d+\)$", "", line[3:]).strip()
        elif current and line.startswith("- "):
            out.setdefault(current, []).append(line[2:].strip())
    return out


def _top_line(body: str, prefix: str) -> str:
    for line in body.splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    return ""


def adr_text(kind: str, text: str, entry: Entry, files: list[str]) -> str:
    task = _top_line(entry.body, "Task:") or entry.description or "not recorded"
    label = "Decision" if kind == "decision" else "Gotcha"
    if files:
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        consequences = f"The code changed under it then: {shown}."
    else:
        consequences = "Not recorded; check the code and later sessions before relying on it."
    session = entry.name.removeprefix("session-")
    return (
        f"**{label}:** {text}\n\n"
        f"**Context:** {task} (session {session}, project {entry.project}).\n\n"
        f"**Consequences:** {consequences}\n\n"
        f"**Date:** {entry.created}\n"
    )


def promote(idx: Index, entry: Entry) -> list[Entry]:
    """Write each decision and gotcha of a cold summary as a wiki record (once per text)."""
    from ..store.palace import add_memory, first_sentence

    parts = sections(entry.body)
    files = [f for f in parts.get("Files changed", []) if not f.startswith("… and")]
    out = []
    from .inbox import settle

    for section, kind in PROMOTED_SECTIONS.items():
        for item in parts.get(section, []):
            text = item.removeprefix("User: ")
            # The same lesson waits in the inbox (a correction, if the user said it): settled.
            settle("correction" if item.startswith("User: ") else kind, text, "promoted")
            desc = first_sentence(sanitize(text))
            if not desc or idx.entries(source="wiki", description=desc):
                continue
            out.append(
                add_memory(
                    idx,
                    adr_text(kind, text, entry, files),
                    type_="wiki",
                    cwd=paths.state_root(),
                    force=True,  # one record per decision: the description check above
                    tier="wiki",
                    name=f"{kind} {text}",
                    description=desc,
                    extra={
                        "created": entry.created,
                        "tags": [kind, "promoted"],
                        "project": entry.project,
                        "promoted_from": entry.name,
                    },
                )
            )
    return out


def roll(
    idx: Index,
    cfg: dict[str, Any] | None = None,
    day: dt.date | None = None,
    keep: str = "",
) -> RollReport:
    """Promote and remove cold summaries not updated within ``cold.retention_days`` (``keep``:
    the path of the summary being written, which is live whatever its dates say)."""
    cfg = cfg or load_config()
    day = day or today()
    days = int(cfg.get("cold", {}).get("retention_days", 30))
    cutoff = (day - dt.timedelta(days=days)).isoformat()
    report = RollReport()
    for old in idx.entries(source="cold"):
        if old.path == keep:
            continue
        try:
            st = os.stat(old.path)
        except OSError:
            idx.remove_file(old.path)
            continue
        entry = old
        if st.st_mtime_ns != old.mtime_ns or st.st_size != old.size:  # edited since indexed
            entry = idx.index_file(Path(old.path), cold_folder(old.project))
        stamp = entry.updated or entry.created
        if not stamp or stamp >= cutoff:
            continue
        report.promoted += promote(idx, entry)
        os.unlink(entry.path)
        idx.remove_file(entry.path)
        report.removed.append(entry.path)
    return report


def prune_hot(keep: str = "") -> list[Path]:
    """Delete hot files (and their state) of sessions idle for HOT_RETENTION_DAYS."""
    limit = time.time() - HOT_RETENTION_DAYS * 86400
    removed: list[Path] = []
    folder = hot_dir()
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        path = folder / name
        stem = name.lstrip(".").split(".")[0]
        if keep and stem == session_key(keep):
            continue
        try:
            if path.is_file() and path.stat().st_mtime < limit:
                path.unlink()
                removed.append(path)
        except OSError:
            continue
    return removed


# --- optional model summary ----------------------------------------------------------------------


def claude_bin() -> str | None:
    return os.environ.get("MEMORY_TOOL_CLAUDE_BIN") or shutil.which("claude")


def nested_command(binary: str, prompt: str) -> list[str]:
    """``claude -p`` that runs none of the user's hooks, loads no CLAUDE.md or auto memory, saves
    no session (so it is not in the session list) and has no tools. Checked against the real
    binary in tests/e2e/test_harness.py (test_nested_bare_claude_from_a_hook_...)."""
    return [binary, "-p", prompt, "--bare", "--no-session-persistence", "--tools", ""]


def session_text(path: str, limit: int = MODEL_INPUT_MAX_CHARS) -> str:
    """What the person and Claude wrote, sanitised, cut to ``limit`` (a third head, the rest
    tail: the end of a session says where it landed)."""
    from ..store.transcript import read_from

    parts: list[str] = []
    offset = 0
    while True:
        result = read_from(path, offset)
        for e in result.events:
            if e.is_sidechain or e.is_meta or e.kind not in ("user", "assistant"):
                continue
            who = "User" if e.kind == "user" else "Claude"
            parts.append(f"{who}: {strip_injected(e.text).strip()}")
        if result.offset == offset or not result.events:
            break
        offset = result.offset
    text = sanitize("\n\n".join(p for p in parts if p.strip()))
    if len(text) <= limit:
        return text
    head = limit // 3
    return text[:head] + "\n\n[…]\n\n" + text[-(limit - head) :]


def model_summary(state: dict[str, Any], max_chars: int) -> str:
    """A summary written by ``claude -p`` (isolated, capped); "" when unavailable."""
    from ..base.log import log_error

    binary = claude_bin()
    if not binary:
        log_error("scribe", "cold.model_summary is on but no `claude` binary is on PATH")
        return ""
    text = session_text(state["transcript_path"])
    if not text:
        return ""
    prompt = MODEL_PROMPT.format(max_chars=max_chars) + text
    env = {**os.environ, "MEMORY_TOOL_NESTED": "1"}
    cwd = state["cwd"] if os.path.isdir(state["cwd"]) else str(paths.state_root())
    try:
        proc = subprocess.run(
            nested_command(binary, prompt),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=MODEL_TIMEOUT_S,
            env=env,
            cwd=cwd,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log_error("scribe", exc)
        return ""
    if proc.returncode != 0:
        log_error("scribe", f"claude -p exited {proc.returncode}: {proc.stderr.strip()[:300]}")
        return ""
    out = sanitize(strip_injected(proc.stdout)).strip()
    return out if len(out) <= max_chars else out[: max_chars - 1].rstrip() + "…"


# --- the job -------------------------------------------------------------------------------------


def _has_content(state: dict[str, Any]) -> bool:
    return bool(state["prompt_count"] or state["tool_calls"] or state["final"])


def _worth_a_summary(state: dict[str, Any]) -> bool:
    """A session that asked for something and did something. One that only said "thanks!", or
    asked a question or two and did nothing, gets no cold summary: it would clutter search and,
    as the project's latest summary, stand in for the session a "where were we" should bring
    back."""
    asked = state["first_task"] or state["task"] or state["tool_calls"] or state["files"]
    return bool(asked) and has_substance(state)


def run(session_id: str, *, final: bool = False, model: bool | None = None) -> Entry | None:
    """Bring the session's cold summary, inbox candidates and the rolling window up to date.
    ``final``: the session ended (SessionEnd), so the optional model summary may run."""
    from .capture import capture_session

    key = session_key(session_id)
    with file_lock(hot_dir() / f".{key}.scribe.lock"):
        with session_lock(session_id):
            state = load_state(session_id)
            if state is None:
                return None
            changed = digest.update_from_transcript(state)
            # The signals of what was said, read here rather than in the hooks (see digest).
            if digest.scan_signals(state) or changed:
                state["generation"] += 1
                write_hot_file(state)
                save_state(state)
        if not _has_content(state):
            return None
        cfg = load_config()
        if not _worth_a_summary(state):
            if state["notes"]:  # "I prefer terse answers." alone is no task, but worth keeping
                with open_index() as idx:
                    capture_session(idx, state, cfg)
            return None
        if model is None:
            model = final and bool(cfg.get("cold", {}).get("model_summary"))
        if model:
            max_chars = int(cfg.get("cold", {}).get("model_summary_max_chars", 4000))
            state["model_summary"] = model_summary(state, max_chars) or state.get(
                "model_summary", ""
            )

        def scribe(idx: Index) -> tuple[Entry, list[list[Any]]]:
            entry = write_cold(idx, state)
            handoff = read_handoff_section(session_id)
            hot = tiers.hot_lines(state, handoff)
            warm_tokens(idx, [tiers.HOT_HEADING])
            snapshot = [[text, idx.count_cached(text)] for text in hot]
            # What the session said explicitly becomes memory; hints go to the inbox.
            capture_session(idx, state, cfg)
            roll(idx, cfg, keep=entry.path)
            return entry, snapshot

        # A damaged index is set aside and rebuilt, and the summary written again (the same
        # file, the same inbox lines): the session end leaves one log line, not a traceback.
        done: tuple[Entry, list[list[Any]]] = with_recovery(scribe)
        entry, snapshot = done
        with session_lock(session_id):
            latest = load_state(session_id) or state
            latest["scribed_generation"] = state["generation"]
            latest["cold_path"] = entry.path
            latest["hot_snapshot"] = snapshot
            if state.get("model_summary"):
                latest["model_summary"] = state["model_summary"]
            save_state(latest)
        prune_hot(keep=session_id)
        _refresh_instructions(state["cwd"])
        return entry


def _refresh_instructions(cwd: str) -> None:
    """Keep the memory block of the project's AGENTS.md / GEMINI.md current (only where the
    person exported one: ``tiers.agents_md``)."""
    from ..base.log import log_error
    from . import agents_md

    try:
        with open_index() as idx:
            agents_md.refresh(idx, cwd)
    except Exception as exc:  # noqa: BLE001 - the summary is written; this is a courtesy
        log_error("scribe", f"AGENTS.md refresh: {exc}")


def state_from_transcript(path: Path, cwd: str | None = None) -> dict[str, Any]:
    """A session state built from a whole transcript file (for `memory-tool scribe PATH`).

    Writes nothing unless ``path`` is a Claude Code transcript with something in it to
    summarise: any other file would leave a fake session behind that then passes for the
    project's latest. A session the hooks already keep is returned as it is, never rewritten."""
    from ..store.transcript import read_from

    first = read_from(path, 0).events
    # Any JSON object line parses as an "other" event; a transcript has session lines.
    if not any(e.session_id or e.kind != "other" for e in first):
        raise MemoryToolError(
            f"{path} is not a Claude Code transcript (no session lines in it); nothing was "
            f"written. Transcripts are the .jsonl files under {paths.projects_dir()}."
        )
    sid = next((e.session_id for e in first if e.session_id), "") or path.stem
    event_cwd = next((e.cwd for e in first if e.cwd), "")
    existing = load_state(sid)
    if existing is not None:
        return existing
    state = digest.new_state(sid, cwd or event_cwd or os.getcwd(), str(path))
    while digest.update_from_transcript(state):
        pass
    if not _has_content(state):
        raise MemoryToolError(
            f"session {sid} ({path}) has nothing to summarise yet: no prompt, tool call or "
            "answer in it; nothing was written."
        )
    state["generation"] = 1
    with session_lock(sid):
        existing = load_state(sid)  # the hooks may have started keeping it meanwhile
        if existing is not None:
            return existing
        write_hot_file(state)
        save_state(state)
    return state


def find_transcript(session_id: str) -> Path | None:
    key = session_key(session_id)
    for folder in sorted(paths.projects_dir().glob("*")):
        candidate = folder / f"{key}.jsonl"
        if candidate.is_file():
            return candidate
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memory_tool.tiers.scribe")
    parser.add_argument("--session", required=True)
    parser.add_argument("--final", action="store_true")
    args = parser.parse_args(argv)
    try:
        run(args.session, final=args.final)
    except Exception as exc:  # noqa: BLE001 - a background job reports to the hook log
        from ..base.log import log_error

        log_error("scribe", exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
