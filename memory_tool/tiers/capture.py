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
from .changes import ALTERNATIVE_OF
from .signals import EXPLICIT_KINDS, MAX_FACT_CHARS, SAID_BEFORE, USER_KINDS

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
# "switch from Y to X", "replace Y with X", "move from Y to X", "Y -> X".
_SWITCH = re.compile(
    r"(?:(?:switch|switched|move|moved|migrate|migrated|go|went)\s+from\s+`?(?P<old>[\w.\-/]+)`?"
    r"\s+to\s+`?(?P<new>[\w.\-/]+)`?)"
    r"|(?:replace[ds]?\s+`?(?P<old2>[\w.\-/]+)`?\s+(?:with|by)\s+`?(?P<new2>[\w.\-/]+)`?)"
    r"|(?:`?(?P<old3>[\w.\-/]+)`?\s*(?:->|\u2192)\s*`?(?P<new3>[\w.\-/]+)`?)",
    re.IGNORECASE,
)
# What a fact says to use: "use pandas for dataframes" -> (pandas, "for dataframes").
_USES = re.compile(
    r"\b(?:use|uses|using|prefer|prefers|choose|chose|pick|go with|stick with|switch to|"
    r"we use|is done with|are done with)\s+`?(?P<tool>[\w.\-/]+)`?(?P<rest>[^.;]*)",
    re.IGNORECASE,
)
# A fact that changed: "the bucket moved to eu-central-1", "the API is now at /v2".
_CHANGED = re.compile(
    r"^(?P<subject>.+?)\s+(?:has\s+|have\s+|was\s+|were\s+)?"
    r"(?:moved|migrated|changed|switched|renamed|is\s+now|are\s+now|now\s+lives|now\s+runs|"
    r"now\s+uses|now\s+points)\b\s*(?:to|in|on|at|from\s+\S+\s+to)?\s*(?P<value>.+)$",
    re.IGNORECASE,
)


# A word that names a value exactly: a region, a version, a path, a host.
_VALUE_WORD = re.compile(r"[\d_./:@\-]")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _tool(word: str | None) -> str:
    return (word or "").lower().strip("`").rstrip(".-/,")


def _key_words(text: str) -> set[str]:
    """The words that say what a fact is about; a number always counts ("service 1" is not
    "service 2")."""
    return {w for w in _words(text) if w not in _HOW_WORDS and (len(w) > 1 or w.isdigit())}


def choice(text: str) -> tuple[str, str] | None:
    """(chosen, rejected) for "use X instead of Y", "switch from Y to X" and the like."""
    m = _SWITCH.search(text)
    if m:
        old = m.group("old") or m.group("old2") or m.group("old3")
        new = m.group("new") or m.group("new2") or m.group("new3")
        return _tool(new), _tool(old)
    m = _CHOICE.search(text)
    if not m:
        return None
    return _tool(m.group("new")), _tool(m.group("old"))


def uses(text: str) -> tuple[str, set[str]] | None:
    """(the tool a fact says to use, the content words of what for), else None."""
    m = _USES.search(text)
    if not m:
        return None
    rest = {w for w in _words(m.group("rest")) if w not in _HOW_WORDS and len(w) > 2}
    return _tool(m.group("tool")), rest


# What a fact says is used, without "use": "goes through X", "is done with X", "runs on X".
_GOES_THROUGH = re.compile(
    r"\b(?:(?:goes|go|runs?|is\s+done|are\s+done|is\s+handled|are\s+handled|is\s+built|"
    r"are\s+built)\s+(?:through|via|with|on|by)|(?:lives?|sits?|is\s+stored|are\s+stored|"
    r"is\s+kept|are\s+kept)\s+(?:in|on|under)"
    # "Proofs taken offline are queued as JSON in SharedPreferences": any passive verb.
    r"|(?:is|are)\s+\w+ed\b[^.;]{0,30}?\s(?:in|on|under|through|via|with|by))\s",
    re.IGNORECASE,
)


# Off what they used: "we're off the council relay", "we moved off Heroku".
_OFF = re.compile(
    r"\b(?:we'?re|we\s+are|we(?:'ve|\s+have)?\s+(?:moved|switched|migrated)|we\s+got)\s+off\s+"
    r"(?:of\s+)?(?:the\s+|our\s+)?(?P<what>[\w\-' ]{3,40}?)\s*(?:[,;.]|$|\s+(?:and|now|so)\b)",
    re.IGNORECASE,
)


def replaces(new: str, old: str) -> bool:
    """Whether the fact ``new`` replaces the memory text ``old``: it chooses something else for
    what ``old`` chose ("use ruff instead of flake8" after "use flake8 for linting"; "use
    polars" after "use pandas"), it says the opposite of the same words ("never use requests"
    after "use requests for HTTP calls"), or it says a fact changed ("the bucket moved to
    eu-central-1" after "the events bucket is in us-east-1")."""
    picked = choice(new)
    old_uses = uses(old)
    old_pick = choice(old)
    old_tool = old_pick[0] if old_pick else (old_uses[0] if old_uses else "")
    if picked and old_tool:
        chosen, rejected = picked
        return old_tool == rejected and chosen != old_tool
    if picked and _GOES_THROUGH.search(old):
        # "Logging goes through env_logger; …" after "use tracing instead of env_logger for
        # logging", "Probe calibration lives in /spiffs/calib.json on the SPIFFS partition"
        # after "use NVS instead of SPIFFS for probe calibration": a fact that says what is
        # used, or where a thing lives, by another verb.
        chosen, rejected = picked
        names = {_tool(w) for w in re.findall(r"[\w.\-/]+", old.lower())}
        words = names | set(_words(old))
        return rejected in words and chosen not in words
    off = _OFF.search(new)
    if off and not _NEGATION.match(old.strip()):  # "Never log via the relay" is no use of it
        # "we're off the council relay, overdue mails go through Postmark now" after "Outgoing
        # mail goes through the council's SMTP relay": what they are off, the old fact used.
        left = {w[:5] for w in _words(off.group("what")) if w not in _HOW_WORDS and len(w) > 2}
        return bool(left) and left <= {w[:5] for w in _words(old)}
    new_uses = uses(new)
    if new_uses and old_tool and new_uses[0] == old_tool and _NEGATION.search(new):
        # "never use requests" after "use requests for HTTP calls"; not "don't use requests in
        # tests", which narrows the old rule rather than retiring it.
        return not new_uses[1] or (old_uses is not None and new_uses[1] == old_uses[1])
    if new_uses and old_tool and new_uses[0] != old_tool and not _NEGATION.search(new):
        tool, what = new_uses
        if old_uses and what and what == old_uses[1]:
            return True  # the same job, another tool
        # Tools that stand in for one another (signals.ALTERNATIVES): "use polars" after "use
        # pandas" replaces it even when neither says what for.
        return old_tool in ALTERNATIVE_OF.get(tool, frozenset())
    new_key, old_key = _key_words(new), _key_words(old)
    if new_key and new_key == old_key:
        return bool(_NEGATION.search(new)) != bool(_NEGATION.search(old))
    changed = _CHANGED.match(new.rstrip("."))
    if changed:
        subject = {
            w for w in _words(changed.group("subject")) if w not in _HOW_WORDS and len(w) > 2
        }
        value = {w for w in _words(changed.group("value")) if w not in _HOW_WORDS}
        words = set(_words(old))
        # The old memory must state a value the change replaces ("us-east-1"): "Never make the
        # bucket public." is about the bucket too, and no fact that moved.
        stated = {w for w in words - set(_words(new)) if _VALUE_WORD.search(w)}
        if bool(subject) and subject <= words and not value <= words and bool(stated):
            return True
        return _same_measure_changed(changed.group("subject"), changed.group("value"), old)
    return False


# A quantity with its unit: "48h", "30 Hz", "10000 characters", "15 min".
_MEASURE = re.compile(
    r"\b(\d+(?:\.\d+)?)\s*(h|hrs?|hours?|min|mins|minutes?|s|secs?|seconds?|ms|days?|weeks?|"
    r"months?|kb|mb|gb|tb|%|hz|chars?|characters?|rows?|items?|requests?|retries)\b",
    re.IGNORECASE,
)
_UNIT = {"hrs": "h", "hr": "h", "hour": "h", "hours": "h", "mins": "min", "minute": "min",
         "minutes": "min", "sec": "s", "secs": "s", "second": "s", "seconds": "s", "day": "days",
         "week": "weeks", "month": "months", "char": "characters", "chars": "characters",
         "character": "characters", "row": "rows", "item": "items",
         "request": "requests"}  # fmt: skip


_AFTER_MEASURE = re.compile(_MEASURE.pattern + r"\s+([a-z]{4,})", re.IGNORECASE)


def _measures(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for number, unit in _MEASURE.findall(text):
        unit = unit.lower()
        out.setdefault(_UNIT.get(unit, unit), set()).add(number)
    return out


def _same_measure_changed(subject: str, value: str, old: str) -> bool:
    """ "The late-cancel cutoff is now 48h before the appt." after "Patients can cancel online up
    to 24h before the appointment, …": the same unit with another number, in a memory that
    shares a word of the subject (its first five letters)."""
    new_m, old_m = _measures(value), _measures(old)
    units = set(new_m) & set(old_m)
    if not units or any(new_m[u] & old_m[u] for u in units):
        return False

    def parts(text: str) -> set[str]:  # "late-cancel" is "late" and "cancel"
        words = re.findall(r"[a-z0-9]+", text.lower())
        return {w[:5] for w in words if len(w) > 3 and w not in _HOW_WORDS}

    def after(text: str) -> set[str]:  # the word after each quantity: "48h before"
        return {m.group(3)[:5].lower() for m in _AFTER_MEASURE.finditer(text)}

    shared = parts(subject) & parts(old)
    # One shared word is not enough alone: "the upload limit is now 50 MB" does not retire
    # "images are resized to 2 MB before upload"; said of the same word after it, it does.
    return len(shared) >= 2 or bool(shared and after(value) & after(old))


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
    key = _key_words(new)
    if len(key) < 2 or not key <= set(old_words):
        return False
    if len(old_words) > SAME_MAX_LENGTH_FACTOR * max(len(new_words), 5):
        return False
    if bool(_NEGATION.search(new)) != bool(_NEGATION.search(old)):
        return False
    c_new, c_old = choice(new), choice(old)
    return not (c_new and c_old and c_new != c_old)


# Where a rule's reason or example starts: "Always pin provider versions in versions.tf, no >=
# ranges" and "…, we got burned when aws 6.0 came out" are one rule said twice.
_REASON_BREAK = re.compile(
    r",\s|;\s|:\s|\s[\u2013\u2014-]\s|\s\(|\s+(?:because|since|so that|as we|as they)\s",
    re.IGNORECASE,
)
# Names from code ("t()", "versions.tf", "use_lockfile", "minSdk"): two wordings of a rule that
# share one name the same way are about the same thing; plain words are not enough ("always run
# tests before pushing" and "always run lint before pushing" share three of four).
_CODE_NAME = re.compile(r"`[^`]+`|\b\w+\(\)|\b\w*[a-z][A-Z]\w*|\b\w+(?:[._/]\w+)+")
# Of the smaller rule's words (light words out, plurals folded), this share is in the other's: a
# reworded repeat ("user-facing strings always go through t()" after "Always wrap user-facing
# strings in t()"). All of them: one word apart is another rule ("incoming" for "outgoing").
CORE_SHARE_MIN = 1.0
CORE_MIN_WORDS = 3


# Words that say how often or how much, not what: "Every outbound gRPC call gets a deadline"
# and "Always set a deadline on outgoing gRPC calls" are one rule.
_LIGHT_WORDS = frozenset(
    "every each all any gets get got set sets goes go through has have make makes need needs "
    "want wants pls please plz".split()
)
# Words that say the same thing: a direction, and the words on a screen ("all user-facing text
# goes in strings.xml" and "every user-facing string goes in strings.xml" are one rule).
_SAME_WORD = {"outbound": "outgoing", "inbound": "incoming", "text": "string", "texts": "string"}


def _rule_words(text: str) -> set[str]:
    """A rule's key words, light words out, a plural's "s" off ("calls" is "call")."""
    out = set()
    for w in _key_words(text):
        if w in _LIGHT_WORDS:
            continue
        w = _SAME_WORD.get(w, w)
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def _core(text: str) -> str:
    """A rule without its reason or example: the words before the first break."""
    return _REASON_BREAK.split(text.strip().rstrip("."), maxsplit=1)[0]


def same_rule(new: str, old: str) -> bool:
    """Whether ``new`` says the rule ``old`` says, with another reason or in other words: the
    same rule before their reasons (``_core``), or rules that share a name from code and nearly
    all their words, said the same way round and making no other choice."""
    from ..store.similar import either_repeats, gist

    core_new, core_old = _core(new), _core(old)
    if bool(_NEGATION.search(core_new)) != bool(_NEGATION.search(core_old)):
        return False
    c_new, c_old = choice(new), choice(old)
    if c_new and c_old and c_new != c_old:
        return False
    for picked, other in ((c_new, old), (c_old, new)):
        if picked and c_new != c_old and picked[0] not in set(_words(other)):
            return False  # "use tracing instead of env_logger" is news to "… via env_logger"
    a, b = gist(core_new), gist(core_old)
    if a and b and (a == b or either_repeats(a, b)):
        return True
    names_new = {n.strip("`").lower() for n in _CODE_NAME.findall(core_new)}
    names_old = {n.strip("`").lower() for n in _CODE_NAME.findall(core_old)}
    if not names_new & names_old:
        return False
    key_new, key_old = _rule_words(core_new) | names_new, _rule_words(core_old) | names_old
    shared = len(key_new & key_old)
    return shared >= CORE_MIN_WORDS and shared >= CORE_SHARE_MIN * min(len(key_new), len(key_old))


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
    return {w for w in _words(text) if len(w) >= 4 and w not in _HOW_WORDS}


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


def _word_parts(text: str) -> set[str]:
    out = set()
    for w in _rule_words(text):
        for part in re.split(r"[.\-]", w):
            part = _SAME_WORD.get(part, part)
            if len(part) > 3 and part.endswith("s") and not part.endswith("ss"):
                part = part[:-1]
            if len(part) > 1 and part not in _HOW_WORDS and part not in _LIGHT_WORDS:
                out.add(part)
    return out


def said_again(idx: Index, text: str, project: str) -> Entry | None:
    """The rule of ``project`` that ``text``, said as a reminder, repeats; or None."""
    from ..store.entry import is_live
    from ..store.search import search

    mine = _word_parts(text)
    hits = search(
        idx, text, limit=SAME_CANDIDATES, sessions=False, cold=False, fuzzy=False,
        home_project=project,
    )  # fmt: skip
    for hit in hits:
        e = hit.entry
        if e.type != "feedback" or e.project != project or e.forgotten or not is_live(e):
            continue
        if len(mine & _word_parts(e.body or e.description)) >= SAID_AGAIN_MIN_WORDS:
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
    changed = _CHANGED.match(text.rstrip("."))
    seen: set[str] = set()
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
            and _same_measure_changed(changed["subject"], changed["value"], e.body)
        ):
            continue
        if e.extra.get("team") or not os.path.exists(e.path):
            continue
        if replaces(text, e.body or e.description):
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
        for signal, text, line in _notes(state):
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
