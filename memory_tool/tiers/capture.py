"""Auto-capture: what a session said explicitly becomes memory, with no step by the user.

The Scribe (detached, after Stop and SessionEnd) hands each new signal of the session
(``signals``: the person's rules, corrections and statements about themselves; Claude's
``[DECISION]``/``[GOTCHA]``/``[REUSE]``/``[DEFER]`` tags) to :func:`capture_session`, which
writes it as a live memory where it would have been filed by hand:

=============  ===============  ==============================================================
signal         type             where
=============  ===============  ==============================================================
correction     feedback         the project's memory folder (L2), ``room:`` the classifier's
rule           feedback         the project's memory folder (L2)
change         project          the project's memory folder (L2): a fact that changed
identity       user             the project's memory folder (L1 reads users of every project)
preference     user             the same: how the person wants answers, in every project
decision       project          the project's memory folder (L2)
defer          project          the project's memory folder (L2), as "Open item: …"
reuse          reference        the project's memory folder (L3 through its room, L4)
gotcha         reference        the classifier's room, as this project's (``project:``);
                                without a room, the project's memory folder as a project fact
heuristic      (inbox)          ``<state>/inbox/``, waiting for a person
=============  ===============  ==============================================================

No model call, nothing on the prompt path: regular expressions, one classifier call and an
index search per signal. ``capture.mode`` (config): ``auto`` (default) as above, ``inbox``
(every signal to the inbox, as before auto-capture), ``off`` (nothing).

Before a memory is written it is compared with every memory the session could be given (the
project's memory folder, Claude's own auto-memory files and ``MEMORY.md`` lines among them, the
palace's rooms, identity and wiki, team palaces): a repeat refreshes the memory that holds it
(``confirmed:`` today, importance one up) instead of writing a second. Each captured signal is
recorded in a ledger keyed by its session and a hash of its source line, so the same
transcript read twice (Stop, then SessionEnd; a second Scribe run) never writes twice, and a
memory someone forgot (``memory-tool forget``) is never captured again from the same source.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.config import today
from ..base.errors import MemoryToolError, NearDuplicateError
from ..base.fsutil import append_line_locked, file_lock
from ..base.record import field, record
from ..recall.layers import Unit
from ..store import tree
from ..store.entry import Entry
from ..store.index import Index
from .said import MAX_FACT_CHARS, SAID_BEFORE
from .sameness import (
    CHANGED,
    HOW_WORDS,
    choice,
    replaces,
    same_fact,
    same_measure_changed,
    same_rule,
    word_list,
    word_parts,
)
from .signals import EXPLICIT_KINDS, USER_KINDS

CAPTURE_MODES = ("auto", "inbox", "off")
DEFAULT_MODE = "auto"
CAPTURE_DIR = "capture"
LEDGER_FILE = "ledger.jsonl"
# The source line kept in a memory's ``captured_from``: enough to recognise where it came from.
CAPTURED_FROM_MAX_CHARS = 300
# A repeat raises a captured memory's importance by one, up to this: 5 ("critical") is a
# person's word, never earned by being said again.
REPEAT_IMPORTANCE_MAX = 4
# Repeats are looked for among this many search matches of the new fact (memories holding its
# rare words rank first).
SAME_CANDIDATES = 20

# signal -> memory type
TYPES = {
    "correction": "feedback",
    "rule": "feedback",
    "statement": "feedback",
    "change": "project",
    "identity": "user",
    "preference": "user",
    "decision": "project",
    "defer": "project",
    "reuse": "reference",
    "gotcha": "reference",
}
# What a captured memory is called in the brief's "Learned" line, by signal.
NOUNS = {
    "correction": ("rule", "rules"),
    "rule": ("rule", "rules"),
    "statement": ("statement", "statements"),
    "change": ("changed fact", "changed facts"),
    "identity": ("fact about you", "facts about you"),
    "preference": ("preference", "preferences"),
    "decision": ("decision", "decisions"),
    "defer": ("open item", "open items"),
    "reuse": ("reference", "references"),
    "gotcha": ("gotcha", "gotchas"),
}
# signal -> the inbox's kind (inbox.KINDS), for what waits for a person.
INBOX_KINDS = {
    "rule": "correction",
    "statement": "correction",
    "heuristic": "correction",
    "preference": "identity",
    "change": "decision",  # proposed as a project fact
}
OPEN_ITEM_PREFIX = "Open item: "
# What was captured and not yet announced: one file per project, emptied by the first brief that
# says so (SessionStart).
LEARNED_DIR = "learned"
# The brief's "Learned" line names at most this many ids: a pointer to the Learned view
# (`memory-tool ui`) and to `forget`, not a list of everything a busy week captured.
LEARNED_MAX_IDS = 6


def mode_of(cfg: dict[str, Any]) -> str:
    value = str(cfg.get("capture", {}).get("mode", DEFAULT_MODE)).strip().lower()
    if value in ("false", "no", "none", "0"):  # YAML reads a bare `off` as false
        return "off"
    return value if value in CAPTURE_MODES else DEFAULT_MODE


@record
class Captured:
    """What became of one signal: ``verdict`` written, repeat, forgotten, inbox, skipped."""

    signal: str
    text: str
    verdict: str
    entry: Entry | None = None
    replaced: list[str] = field(default_factory=list)  # ids it superseded


@record
class CaptureReport:
    done: list[Captured] = field(default_factory=list)

    def of(self, verdict: str) -> list[Captured]:
        return [c for c in self.done if c.verdict == verdict]


def capture_dir() -> Path:
    return paths.palace_dir(CAPTURE_DIR)


# --- the ledger: every signal handled, by source ------------------------------------------------


def source_key(session: str, line: str, text: str) -> str:
    """``<session>:<hash>`` of one fact of one source line: the same line of the same session
    is the same capture, whichever run reads it."""
    digest = hashlib.sha1(f"{line}\n{text}".encode("utf-8", "replace")).hexdigest()[:16]
    return f"{session}:{digest}"


def ledger_path() -> Path:
    return capture_dir() / LEDGER_FILE


def ledger() -> dict[str, dict[str, Any]]:
    """Source key -> what was done with it (``verdict``, ``id``)."""
    out: dict[str, dict[str, Any]] = {}
    try:
        text = ledger_path().read_text(encoding="utf-8")
    except OSError:
        return out
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("key"), str):
            out[row["key"]] = row
    return out


def _record(key: str, done: Captured, project: str, day: str) -> None:
    row = {
        "key": key,
        "verdict": done.verdict,
        "signal": done.signal,
        "id": done.entry.id if done.entry else "",
        "project": project,
        "day": day,
    }
    append_line_locked(ledger_path(), json.dumps(row, ensure_ascii=False))


# --- where a fact goes --------------------------------------------------------------------------


def pick_room(text: str) -> str | None:
    """The room the classifier picks for ``text`` (as for a prompt), or None."""
    from ..store.classify import classify
    from ..store.rooms import compiled_rooms

    try:
        rooms = classify(text, compiled_rooms())
    except MemoryToolError:
        return None  # a broken rooms.yaml: filed without a room
    return rooms[0][0] if rooms else None


def body_of(signal: str, text: str) -> str:
    return OPEN_ITEM_PREFIX + text if signal == "defer" else text


# --- repeats ------------------------------------------------------------------------------------


def visible(e: Entry, project: str) -> bool:
    """Whether a session in ``project`` could be given ``e``: its own memory folder and
    CONTEXT.md, anyone's facts about the user, the palace (its rooms' memories of this project
    or of every project), the wiki, team palaces."""
    if e.source in ("claude", "context", "agent"):
        return e.project == project or e.type == "user"
    if e.source == "room":
        return e.project in ("", project)
    return e.source in ("identity", "wiki")


# Claude saving the person's rule in its own words in the same session: the two share this many
# words of four letters or more, and this share of the rule's.
SAVED_BY_CLAUDE_MIN_WORDS = 4
SAVED_BY_CLAUDE_SHARE = 0.5


def _long_words(text: str) -> set[str]:
    return {w for w in word_list(text) if len(w) >= 4 and w not in HOW_WORDS}


def saved_by_claude(e: Entry, text: str, since: float | None) -> bool:
    """Whether ``e`` is a memory Claude Code wrote during this session (its file changed since
    ``since``, the session's start) about the rule ``text``: the same reason in other words
    ("Run the specs with --tag ~js; the js system specs need headless Chrome, which this
    machine doesn't have" for "don't run the whole suite - the js system specs drive headless
    Chrome and there's no Chrome on this machine")."""
    if since is None or not e.client_written:
        return False
    try:
        if os.path.getmtime(e.path) < since:
            return False
    except OSError:
        return False
    mine, theirs = _long_words(text), _long_words(e.body or e.description)
    shared = len(mine & theirs)
    return shared >= SAVED_BY_CLAUDE_MIN_WORDS and shared >= SAVED_BY_CLAUDE_SHARE * len(mine)


def find_same(idx: Index, text: str, project: str, since: float | None = None) -> Entry | None:
    """The memory a session in ``project`` could be given that already says ``text``; a
    forgotten one counts (it is not captured again), a superseded one does not (saying the
    old fact again is news). ``since``: the session's start, for what Claude saved in it."""
    from ..store.search import search

    hits = search(
        idx,
        text,
        limit=SAME_CANDIDATES,
        sessions=False,
        cold=False,
        fuzzy=False,
        home_project=project,
    )
    same = []
    for hit in hits:
        e = hit.entry
        if not visible(e, project) or not os.path.exists(e.path):
            continue
        said = e.body or e.description
        if same_fact(text, said) or same_rule(text, said) or saved_by_claude(e, text, since):
            if e.superseded_by and not e.forgotten:
                continue
            same.append(e)
    # Of several that say it, the one memory-tool wrote is the one to refresh: Claude Code's own
    # file is read, never rewritten (and which of equal hits ranks first is not stable).
    return next((e for e in same if not e.client_written), same[0] if same else None)


# A rule said again ("…, you know this", "as I said"): the person says memory holds it, in
# whatever words; this project's best matching rule that shares this many of its key words (a
# name from code counts by its parts: "strings.csv" is "string" and "csv") is the one said
# before, and is refreshed instead of kept twice.
SAID_AGAIN_MIN_WORDS = 2


# A statement's words are compared by their first letters ("render" is "rendered").
STEM_CHARS = 5


def said_again(
    idx: Index, text: str, project: str, types: tuple[str, ...] = ("feedback",), stem: bool = False
) -> Entry | None:
    """The rule of ``project`` that ``text``, said as a reminder, repeats; or None. ``types``:
    the memory types it may be (a statement is looked for among facts too); ``stem``: words
    compared by their first STEM_CHARS letters."""
    from ..store.entry import is_live
    from ..store.search import search

    def parts(said: str) -> set[str]:
        words = word_parts(said)
        return {w[:STEM_CHARS] for w in words} if stem else words

    mine = parts(text)
    hits = search(
        idx, text, limit=SAME_CANDIDATES, sessions=False, cold=False, fuzzy=False,
        home_project=project,
    )  # fmt: skip
    for hit in hits:
        e = hit.entry
        if e.type not in types or e.project != project or e.forgotten or not is_live(e):
            continue
        if len(mine & parts(e.body or e.description)) >= SAID_AGAIN_MIN_WORDS:
            return e
    return None


# Signals that can replace an older memory: what the person says now (a rule, a correction, a
# fact that changed), what was decided now, a gotcha that corrects an older one. An open item
# or a reference never retires anything.
REPLACING = ("correction", "rule", "change", "decision", "gotcha")
# Replaceable memories: this project's own rules and facts (a rule of every project, a team's, or
# a fact about the user is not this session's to retire).
REPLACEABLE_TYPES = ("feedback", "project", "reference")
# A fact that changed retires a fact, never a rule ("Never make the bucket public.").
FACT_TYPES = ("project", "reference")


# What makes a memory a rule that a changed fact does not retire ("Never make the bucket public.").
_RULE_WORD = re.compile(
    r"\b(?:never|always|don'?t|do\s+not|must|mustn'?t|should|shouldn'?t|only|no\s+\w+\s+ever)\b",
    re.IGNORECASE,
)


def find_replaced(
    idx: Index, text: str, project: str, types: tuple[str, ...] = REPLACEABLE_TYPES
) -> Entry | None:
    """The live memory of this project that the fact ``text`` replaces (``replaces``), or
    None: among the project's L2 rules and facts and the best search matches of the fact
    with the tool it rejects. ``types``: the memory types it may retire."""
    from ..store.entry import is_live
    from ..store.search import search

    picked = choice(text)
    query = f"{text} {picked[1]}" if picked else text
    hits = [
        h.entry
        for h in search(
            idx,
            query,
            limit=SAME_CANDIDATES,
            sessions=False,
            cold=False,
            fuzzy=False,
            home_project=project,
        )
    ]
    changed = CHANGED.match(text.rstrip("."))
    seen: set[str] = set()
    references: list[Entry] = []
    for e in [*hits, *idx.project_facts(project)]:
        if e.id in seen:
            continue
        seen.add(e.id)
        own = e.project == project and e.source in ("claude", "room")
        if not own or e.always or not is_live(e):
            continue
        # A fact that changed retires a rule only when the rule gave the same quantity another
        # number ("patients can cancel online up to 24h before …", said as "the clinics' rule:
        # …", then "the late-cancel cutoff is 48h before the appt now").
        if e.type not in types and not (
            e.type in REPLACEABLE_TYPES
            and changed
            and (
                same_measure_changed(changed["subject"], changed["value"], e.body)
                # The change names its old value in a fact kept as a rule with no word of a
                # rule in it ("The SHT40 is on I2C1 (PB6/PB7) on the rev B boards",
                # blind34), or a statement (a guess: "Underwriting's minimum is £120 a year,
                # nobody should pay less", blind30).
                or (
                    (
                        not _RULE_WORD.search(e.body or "")
                        or e.extra.get("origin") == "capture:statement"
                    )
                    and replaces(text, e.body or "")
                )
            )
        ):
            continue
        if e.extra.get("team") or not os.path.exists(e.path):
            continue
        if replaces(text, e.body or e.description):
            if e.type != "reference":
                return e
            references.append(e)
    # A reference (how code does something) only when no fact or rule says the old value: a
    # change of the minimum premium retired the note on PremiumCalculator that named it
    # (blind30), and the fact that stated it stayed.
    return references[0] if references else None


_INDEX_LINE = re.compile(r"^\s*[-*]\s*(?:\[[^\]]*\]\([^)]*\)\s*(?:[\u2014\u2013:-]+\s*)?)?(.*)$")


def memory_md_lines(cwd: str | Path) -> list[str]:
    """The text of each line of the project's ``MEMORY.md`` (Claude Code's auto-memory index,
    where Claude sometimes writes a fact with no file behind it)."""
    path = tree.claude_folder_of(cwd).path / tree.MEMORY_INDEX_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    out = []
    for line in text.splitlines():
        m = _INDEX_LINE.match(line)
        if m and m.group(1).strip():
            out.append(m.group(1).strip())
    return out


def refresh(idx: Index, e: Entry, day: str) -> Entry:
    """A repeat: ``confirmed:`` today and, at most once a day, importance one up (to
    REPEAT_IMPORTANCE_MAX). A team's memory is shared and Claude Code's own file is Claude
    Code's: both are left as they are."""
    from ..store.edit import set_fields

    if e.extra.get("team") or e.client_written or str(e.extra.get("confirmed") or "") == day:
        return e
    fields: dict[str, str | None] = {"confirmed": day}
    if e.importance < REPEAT_IMPORTANCE_MAX:
        fields["importance"] = str(e.importance + 1)
    try:
        return set_fields(idx, e.id, fields)
    except MemoryToolError as exc:
        from ..base.log import log_error

        log_error("capture", f"could not refresh {e.id}: {exc}")
        return e


# --- writing ------------------------------------------------------------------------------------


def _write(
    idx: Index, signal: str, text: str, line: str, state: dict[str, Any], day: str
) -> Captured:
    from ..store.palace import add_memory

    type_ = TYPES[signal]
    cwd = state["cwd"]
    project = state["project"]
    # A fact about the person is theirs in every project: no room of this one.
    room = pick_room(text) if TYPES[signal] != "user" else None
    in_room = signal == "gotcha" and room is not None
    if signal == "gotcha" and room is None:
        type_ = "project"  # a gotcha of the whole project: one of its facts
    extra: dict[str, object] = {
        "origin": f"capture:{signal}",
        "originSessionId": state["session_id"],
        "project": project,
        "captured_from": line[:CAPTURED_FROM_MAX_CHARS],
    }
    if room and not in_room:
        extra["room"] = room
    if signal == "gotcha":
        extra["tags"] = ["gotcha"]
    body = body_of(signal, text)
    try:
        entry = add_memory(
            idx,
            body,
            type_=type_,
            cwd=cwd,
            room=room if in_room else None,
            name=text,
            extra=extra,
            # Claude Code loads MEMORY.md itself: its line points at the memory without
            # repeating it (the brief gives the text; the fact reaches the model once).
            index_hook=f"{NOUNS[signal][0]} captured {day} (memory-tool)",
        )
    except NearDuplicateError as exc:  # said in other words in the same folder
        return Captured(signal, text, "repeat", refresh(idx, exc.entry, day))
    return Captured(signal, text, "written", entry)


def capture_one(
    idx: Index, signal: str, text: str, line: str, state: dict[str, Any], day: dt.date
) -> Captured:
    """One explicit signal: a repeat refreshes what holds it, a new one is written. A forgotten
    fact stays forgotten when Claude repeats it, and comes back when the person says it again
    (from the same source line it is never handled twice: the ledger)."""
    project = state["project"]
    switched: Entry | None = None
    if signal == "switch":
        # "switch the loss to dice + focal": a task ("switch the tab to dark mode"), unless
        # memory holds what it changes ("The loss is plain cross-entropy …", or said as a rule:
        # "The parser is hand-written recursive descent in lib/parser.ml, just add to it"):
        # then it is that fact changed, and retires it.
        switched = find_replaced(idx, text, project, REPLACEABLE_TYPES)
        if switched is None:
            return Captured(signal, text, "skipped")
        signal = "change"
    # When memory-tool first saw the session, by the clock file times use (a transcript's
    # timestamps may come from another clock); a minute of slack.
    started = state.get("created_at")
    since = float(started) - 60 if isinstance(started, (int, float)) else None
    same = find_same(idx, text, project, since)
    if same is None and signal in ("rule", "correction") and SAID_BEFORE.search(line):
        same = said_again(idx, text, project)
    elif same is None and signal == "statement":
        # A guess that shares two key words with what memory holds is taken as said before in
        # other words ("we render them with puppeteer" beside the decision "Payslip PDFs are
        # rendered from templates/payslip.hbs with puppeteer", blind19), not kept twice.
        same = said_again(idx, text, project, REPLACEABLE_TYPES, stem=True)
    if same is not None:
        if same.forgotten and signal not in USER_KINDS:
            # Claude repeating what a person retired is no reason to bring it back.
            return Captured(signal, text, "forgotten", same)
        if same.forgotten:  # the person says it again: they want it back
            from ..store.lifecycle import unforget

            same = unforget(idx, same.id)
        return Captured(signal, text, "repeat", refresh(idx, same, day.isoformat()))
    if any(same_fact(text, known) for known in memory_md_lines(state["cwd"])):
        return Captured(signal, text, "repeat")  # Claude noted it in MEMORY.md itself
    types = FACT_TYPES if signal == "change" else REPLACEABLE_TYPES
    older = switched or (find_replaced(idx, text, project, types) if signal in REPLACING else None)
    if older is None and signal in USER_KINDS and signal != "statement":
        # The person says plainly what a statement only guessed ("usual rule: every change
        # writes an audit_log row" after "every change to a pay run … has to write an
        # audit_log row"): the plain rule replaces the guess.
        near = said_again(idx, text, project, REPLACEABLE_TYPES, stem=True)
        if near is not None and near.extra.get("origin") == "capture:statement":
            older = near
    done = _write(idx, signal, text, line, state, day.isoformat())
    if older is not None and done.verdict == "written" and done.entry is not None:
        from ..store.lifecycle import supersede

        try:
            _, done.entry = supersede(idx, older.id, done.entry.id, day=day)
            done.replaced.append(older.id)
        except MemoryToolError as exc:  # e.g. superseded meanwhile: the new one stays
            from ..base.log import log_error

            log_error("capture", f"{done.entry.id} could not supersede {older.id}: {exc}")
    return done


# --- what the next brief says was learned -------------------------------------------------------


def learned_path(project: str) -> Path:
    return capture_dir() / LEARNED_DIR / f"{project}.jsonl"


def _note_learned(idx: Index, report: CaptureReport, state: dict[str, Any]) -> None:
    """Record the memories written for the next brief's "Learned" line, and count the line the
    brief will show (so SessionStart finds its tokens cached)."""
    written = [c for c in report.done if c.verdict == "written" and c.entry is not None]
    if not written:
        return
    path = learned_path(state["project"])
    for c in written:
        assert c.entry is not None
        row = {"id": c.entry.id, "signal": c.signal, "session": state["session_id"]}
        append_line_locked(path, json.dumps(row))
    line = learned_line(pending_learned(state["project"]))
    if line:
        idx.count_cached(line)


def _rows(text: str) -> list[dict[str, str]]:
    out = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("id"), str):
            out.append({k: str(v) for k, v in row.items()})
    return out


def pending_learned(project: str) -> list[dict[str, str]]:
    """What was captured for ``project`` and not yet announced (oldest first)."""
    try:
        return _rows(learned_path(project).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return []


def learned_line(rows: list[dict[str, str]]) -> str:
    """``Learned in the last session: 3 rules, 1 decision (f-…, p-…); undo: `memory-tool
    forget ID```, or "" for nothing learned."""
    if not rows:
        return ""
    counts: dict[tuple[str, str], int] = {}
    for row in rows:
        noun = NOUNS.get(row.get("signal", ""), ("memory", "memories"))
        counts[noun] = counts.get(noun, 0) + 1
    parts = [f"{n} {one if n == 1 else many}" for (one, many), n in counts.items()]
    ids = [row["id"] for row in rows]
    shown = ", ".join(ids[:LEARNED_MAX_IDS]) + (", …" if len(ids) > LEARNED_MAX_IDS else "")
    sessions = len({row.get("session", "") for row in rows})
    when = "the last session" if sessions == 1 else f"the last {sessions} sessions"
    # The ids in parentheses, not [brackets]: a bracketed id counts as given to the session
    # (recall.seen), and a room memory named here must still come with its room's prompts.
    return f"Learned in {when}: {', '.join(parts)} ({shown}); undo: `memory-tool forget ID`\n"


def take_learned(project: str, announced: Iterable[str]) -> None:
    """The brief said what was learned: those rows go; what was captured meanwhile, after the
    brief was built, stays for the next one."""
    from ..base.fsutil import rewrite_locked

    said = set(announced)

    def remaining(text: str) -> str:
        return "".join(json.dumps(r) + "\n" for r in _rows(text) if r["id"] not in said)

    rewrite_locked(learned_path(project), remaining)


def learned_units(idx: Index, project: str) -> tuple[list[Unit], list[str]]:
    """The brief's "Learned" line (what is still live of what was captured since the last
    brief) and the ids it accounts for, forgotten or superseded ones included."""
    from ..store.entry import is_live

    rows = pending_learned(project)
    if not rows:
        return [], []
    ids = [r["id"] for r in rows]
    live = {e.id for e in idx.get_many(ids) if is_live(e)}
    line = learned_line([r for r in rows if r["id"] in live])
    return ([Unit(line, idx.count_cached(line))] if line else []), ids


def _notes(state: dict[str, Any]) -> Iterable[tuple[str, str, str]]:
    """(signal, text, source line) of each note; a state saved before signals were kept says
    only the note's kind (a person's correction then counts as a hint)."""
    for n in state.get("notes") or []:
        text = str(n.get("text") or "")[: MAX_FACT_CHARS + 1]
        signal = str(n.get("signal") or "")
        if not signal:
            signal = "heuristic" if n.get("kind") == "correction" else str(n.get("kind") or "")
        yield signal, text, str(n.get("line") or text)


def capture_session(
    idx: Index, state: dict[str, Any], cfg: dict[str, Any], day: dt.date | None = None
) -> CaptureReport:
    """Capture the session's signals not handled before (``capture.mode``); returns what
    became of each. Runs under one lock for all sessions: two Scribes finishing at once must
    not both write the same fact."""
    from .inbox import write_candidates

    report = CaptureReport()
    mode = mode_of(cfg)
    if mode == "off":
        return report
    day = day or today()
    session = state["session_id"]
    project = state["project"]
    with file_lock(capture_dir() / ".lock"):
        # Files are the truth: what Claude or a person saved since the last refresh counts.
        if idx.meta("last_full_refresh"):
            idx.refresh_for_wake(state["cwd"])
            idx.refresh_changed_folders(state["cwd"])
        else:
            idx.refresh(state["cwd"], sessions=False)
        handled = ledger()
        hints: list[tuple[str, str]] = []
        # A statement (the model's guess) last: what the session said plainly, or Claude
        # decided, is what a guess of the same fact then repeats.
        for signal, text, line in sorted(_notes(state), key=lambda n: n[0] == "statement"):
            key = source_key(session, line, text)
            if key in handled or not text:
                continue
            if signal == "switch" and mode != "auto":
                done = Captured(signal, text, "skipped")  # kept only where it retires a fact
            elif mode == "inbox" or signal not in (*EXPLICIT_KINDS, "switch"):
                kind = INBOX_KINDS.get(signal, signal)
                hints.append((kind, text))
                done = Captured(signal, text, "inbox")
            else:
                try:
                    done = capture_one(idx, signal, text, line, state, day)
                except MemoryToolError as exc:  # one bad fact must not cost the others
                    from ..base.log import log_error

                    log_error("capture", exc)
                    done = Captured(signal, text, "skipped")
            _record(key, done, project, day.isoformat())
            handled[key] = {"verdict": done.verdict}
            report.done.append(done)
        if hints:
            write_candidates(
                hints, session=session, project=project, cwd=state["cwd"], day=day.isoformat()
            )
        _note_learned(idx, report, state)
    return report
