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
identity       user             the project's memory folder (L1 reads users of every project)
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
from ..store import tree
from ..store.entry import Entry
from ..store.index import Index
from .signals import EXPLICIT_KINDS, MAX_FACT_CHARS

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
# A memory this many times longer (in words) than the new fact is a page about many things,
# not the same fact said at more length.
SAME_MAX_LENGTH_FACTOR = 4

# signal -> memory type
TYPES = {
    "correction": "feedback",
    "rule": "feedback",
    "identity": "user",
    "decision": "project",
    "defer": "project",
    "reuse": "reference",
    "gotcha": "reference",
}
# What a captured memory is called in the brief's "Learned" line, by signal.
NOUNS = {
    "correction": ("rule", "rules"),
    "rule": ("rule", "rules"),
    "identity": ("fact about you", "facts about you"),
    "decision": ("decision", "decisions"),
    "defer": ("open item", "open items"),
    "reuse": ("reference", "references"),
    "gotcha": ("gotcha", "gotchas"),
}
OPEN_ITEM_PREFIX = "Open item: "


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

_WORD = re.compile(r"[^\W_]+(?:[.\-][^\W_]+)*")
# Words that say how, not what: a repeat is judged on the rest ("Use httpx instead of
# requests." and "Prefer httpx over requests for HTTP calls." share httpx and requests).
_HOW_WORDS = frozenset(
    "use uses using used prefer prefers preferred over instead rather than always never "
    "don't dont do not should must please the a an of for to in on with and or is are be by "
    "we you it this that our your at as from all any when via only user".split()
)
_NEGATION = re.compile(r"\b(?:never|not|no|don'?t|do not|avoid|stop)\b", re.IGNORECASE)
# "X instead of Y", "X over Y", "X rather than Y", "X, not Y": the choice a fact makes.
_CHOICE = re.compile(
    r"(?:use|prefer|choose|pick|go with|switch to|move to)?\s*`?(?P<new>[\w.\-/]+)`?\s*"
    r"(?:,\s*)?(?:instead of|over|rather than|not)\s+`?(?P<old>[\w.\-/]+)`?",
    re.IGNORECASE,
)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def choice(text: str) -> tuple[str, str] | None:
    """(chosen, rejected) for "use X instead of Y" and the like, else None."""
    m = _CHOICE.search(text)
    if not m:
        return None
    return m.group("new").lower(), m.group("old").lower()


def same_fact(new: str, old: str) -> bool:
    """Whether the memory text ``old`` already says the fact ``new``: one nearly repeats the
    other (``similar``), or every distinctive word of the fact (two at least) is in the memory,
    which is not much longer, says it the same way round (both or neither negated) and makes
    no other choice ("use requests instead of httpx" is not "use httpx instead of requests")."""
    from ..store.similar import either_repeats, gist

    a, b = gist(new), gist(old)
    if a and either_repeats(a, b):
        return True
    new_words, old_words = _words(new), _words(old)
    key = {w for w in new_words if w not in _HOW_WORDS and len(w) > 1}
    if len(key) < 2 or not key <= set(old_words):
        return False
    if len(old_words) > SAME_MAX_LENGTH_FACTOR * max(len(new_words), 5):
        return False
    if bool(_NEGATION.search(new)) != bool(_NEGATION.search(old)):
        return False
    c_new, c_old = choice(new), choice(old)
    return not (c_new and c_old and c_new != c_old)


def visible(e: Entry, project: str) -> bool:
    """Whether a session in ``project`` could be given ``e``: its own memory folder and
    CONTEXT.md, anyone's facts about the user, the palace (its rooms' memories of this project
    or of every project), the wiki, team palaces."""
    if e.source in ("claude", "context", "agent"):
        return e.project == project or e.type == "user"
    if e.source == "room":
        return e.project in ("", project)
    return e.source in ("identity", "wiki")


def lifecycle_of(e: Entry) -> dict[str, Any]:
    """The memory's versioning keys as its file holds them now (forgotten, superseded_by,
    valid_to), read from the file: the index does not keep them."""
    from ..store.edit import parse_frontmatter, split_frontmatter

    try:
        head, _ = split_frontmatter(Path(e.path).read_text(encoding="utf-8"))
        meta = parse_frontmatter(head)
    except (OSError, UnicodeDecodeError, MemoryToolError):
        return {}
    keys = ("forgotten", "superseded_by", "valid_to", "supersedes", "valid_from", "confirmed")
    return {k: meta[k] for k in keys if meta.get(k) not in (None, "")}


def is_retired(meta: dict[str, Any], day: dt.date) -> bool:
    if meta.get("forgotten") or meta.get("superseded_by"):
        return True
    until = str(meta.get("valid_to") or "")
    return bool(until) and until < day.isoformat()


def find_same(idx: Index, text: str, project: str) -> Entry | None:
    """The memory a session in ``project`` could be given that already says ``text``; a
    forgotten one counts (it is not captured again), a superseded one does not (saying the
    old fact again is news)."""
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
    for hit in hits:
        e = hit.entry
        if not visible(e, project) or not os.path.exists(e.path):
            continue
        if same_fact(text, e.body or e.description):
            meta = lifecycle_of(e)
            if meta.get("superseded_by") and not meta.get("forgotten"):
                continue
            return e
    return None


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
    REPEAT_IMPORTANCE_MAX). A team's memory is shared and left as it is."""
    from ..store.edit import set_fields

    if e.extra.get("team") or "/teams/" in e.path:
        return e
    meta = lifecycle_of(e)
    if str(meta.get("confirmed") or "") == day:
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
    room = pick_room(text) if signal != "identity" else None
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
        )
    except NearDuplicateError as exc:  # said in other words in the same folder
        return Captured(signal, text, "repeat", refresh(idx, exc.entry, day))
    return Captured(signal, text, "written", entry)


def capture_one(
    idx: Index, signal: str, text: str, line: str, state: dict[str, Any], day: dt.date
) -> Captured:
    """One explicit signal: a repeat refreshes what holds it, a forgotten fact stays
    forgotten, a new one is written."""
    project = state["project"]
    same = find_same(idx, text, project)
    if same is not None:
        if lifecycle_of(same).get("forgotten"):
            return Captured(signal, text, "forgotten", same)
        return Captured(signal, text, "repeat", refresh(idx, same, day.isoformat()))
    if any(same_fact(text, known) for known in memory_md_lines(state["cwd"])):
        return Captured(signal, text, "repeat")  # Claude noted it in MEMORY.md itself
    return _write(idx, signal, text, line, state, day.isoformat())


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
        handled = ledger()
        hints: list[tuple[str, str]] = []
        for signal, text, line in _notes(state):
            key = source_key(session, line, text)
            if key in handled or not text:
                continue
            if mode == "inbox" or signal not in EXPLICIT_KINDS:
                kind = "correction" if signal in ("rule", "heuristic") else signal
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
    return report
