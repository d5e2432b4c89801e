"""One memory: parsing a Markdown file with frontmatter into an ``Entry``, its id, and the text
forms the layers emit (brief line, depth-2 summary).

Parsing imports YAML and the tokenizer, so it runs only when a file is new or changed; hooks read
the parsed, rendered and counted result from the index.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path
from typing import Any

from ..base import tokens
from ..base.config import CONTEXT_LINE_MAX_TOKENS, ENTRY_LINE_MAX_TOKENS
from ..base.privacy import LazyPattern, escape_fence, sanitize
from ..base.record import field, record

TYPE_LETTERS = {
    "user": "u",
    "feedback": "f",
    "project": "p",
    "reference": "r",
    "wiki": "w",
    "cold": "c",
    "session": "s",
    "note": "n",
    "hot": "h",
}
CLAUDE_TYPES = ("user", "feedback", "project", "reference")
# Depth 2 shows this many characters of the memory (the design's "first 80 chars" preview).
PREVIEW_CHARS = 80
# Files larger than this are not read at all (marked TOO_LARGE): a memory is a fact, not a dump,
# a 50 MB file must not stall a hook, and its first lines alone would pass for the whole memory.
MAX_FILE_BYTES = 256 * 1024

# A file is "not text" (a binary dropped into a memory folder, random bytes) when more than this
# share of its characters are control characters, NUL bytes or bytes that are not UTF-8. Text
# stays well below it: a Latin-1 file has one bad byte per accented letter (1-4% of French or
# German prose), a log with colour codes one ESC per coloured word; random bytes score ~60%.
NOT_TEXT_MAX_SHARE = 0.10
# How a file that is not text is marked (``Entry.error`` starts with it): the index keeps such
# entries out of every layer and every search; the doctor names them.
NOT_TEXT = "not text"
# How a file that cannot be read (permissions, an I/O error) or is over MAX_FILE_BYTES is marked:
# kept out of every layer and search the same way (no name without its text, no first part
# passing for the whole), and named by the doctor.
UNREADABLE = "unreadable"
TOO_LARGE = "too large"
UNUSABLE = (NOT_TEXT, UNREADABLE, TOO_LARGE)
# Characters that are not text: C0 controls other than tab, newline, form feed and carriage
# return, DEL, and U+FFFD (what a byte that is not UTF-8 decodes to).
# (Patterns as strings: ``re`` compiles them on first use, which is parsing, not a hook.)
_NOT_TEXT_CHARS = r"[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]"
# Terminal colour and cursor codes, removed whole (their ESC alone would leave "[32m" behind).
_ANSI_CODE = r"\x1b\[[0-9;?]*[A-Za-z]"
# Control characters are dropped from the text of a memory: a brief carries none.
_CONTROL = r"[\x00-\x08\x0b\x0e-\x1f\x7f]"

ID_RE = re.compile(r"^[a-z]-[0-9a-f]{6,12}$")
USER_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

# Irreversible consequences (data loss, lost money, downtime, a security breach): a rule that
# names one is a critical rule. Domain words alone ("billing", "payment", "migration", "backup")
# are no consequence: "migrations use alembic" is a fact, and "never run migrations against
# production by hand" is critical for its "production".
IRREVERSIBLE_RE = LazyPattern(
    r"\b(data loss|los[et] (the )?data|irreversib\w*|destroy\w*|"
    r"drop(s|ped|ping)? (the )?(\w+ )?(table|database|schema|column)s?|truncat\w*|rm -rf|"
    r"force[- ]push\w*|delet\w*|wip(e|es|ed|ing)|overwrit\w*|corrupt\w*|"
    # "a production build is slow", "tesseract is only in the production image": a kind of
    # build or image, no consequence.
    r"(?:production|prod)(?!\s+(?:builds?|bundles?|mode|dependenc\w*|images?|containers?)\b)|"
    r"outages?|downtime|"
    r"double[- ]charg\w*|charg\w+ (the )?(cards?|customers?)|charged twice|money|"
    r"secrets?|credentials?|api keys?|passwords?|breach\w*|leak\w*|pii|gdpr)\b",
    re.IGNORECASE,
)
# Rules: obligations and prohibitions. A feedback memory is a rule whatever its wording.
CONSTRAINT_RE = LazyPattern(
    r"\b(never|always|must|must not|do not|don't|dont|forbidden|required|only use|"
    r"hard constraint|constraint|under no circumstances)\b",
    re.IGNORECASE,
)
_WS = re.compile(r"\s+")
_BOLD = re.compile(r"\*\*|__")
_WORD = re.compile(r"[a-z0-9]+")
_WHOLE = re.compile(r"[+-]?[0-9]+")

# ``importance:`` runs from 1 (low) to 5 (high); a memory without one counts as 3, the middle.
IMPORTANCE_MIN = 1
IMPORTANCE_MAX = 5
IMPORTANCE_DEFAULT = 3
# An invalid frontmatter value is quoted in the doctor's report up to this many characters.
INVALID_VALUE_MAX_CHARS = 40

PRIORITY_PINNED = 0
PRIORITY_IRREVERSIBLE = 1
PRIORITY_RULE = 2
PRIORITY_OTHER = 3


@record
class Entry:
    id: str
    path: str
    source: str  # claude | identity | room | wiki | cold | context
    project: str = ""
    type: str = "reference"
    name: str = ""
    description: str = ""
    body: str = ""
    room: str = ""
    room_origin: str = ""  # frontmatter | folder | classified | ""
    tags: list[str] = field(default_factory=list)
    created: str = ""
    created_inferred: bool = False
    updated: str = ""
    importance: int = 3
    always: bool = False
    expires: str = ""
    priority: int = PRIORITY_OTHER
    dedupe_key: str = ""
    line: str = ""
    line_tokens: int = 0
    summary: str = ""
    summary_tokens: int = 0
    full_tokens: int = 0
    mtime_ns: int = 0
    size: int = 0
    error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # Versioning (store/lifecycle.py): the days a fact holds, what replaced it or what it
    # replaced, and when a person retired it. A memory that is not live loads in no layer but
    # stays searchable as history.
    valid_from: str = ""
    valid_to: str = ""
    superseded_by: str = ""
    supersedes: str = ""
    forgotten: str = ""

    @property
    def letter(self) -> str:
        return TYPE_LETTERS.get(self.type, "n")

    @property
    def client_written(self) -> bool:
        """A file Claude Code wrote in its auto-memory folder: memory-tool stamps ``created:`` on
        every file it writes there, Claude Code's own format has no such field."""
        return self.source == "claude" and self.created_inferred


def make_id(type_: str, stable_key: str, salt: int = 0) -> str:
    """``<type letter>-<6 hex>``: a hash of where the file lives, so re-indexing keeps it."""
    material = stable_key if salt == 0 else f"{stable_key}#{salt}"
    import hashlib  # lazily: 3 ms of import a hook rarely needs

    digest = hashlib.sha1(material.encode("utf-8")).hexdigest()
    return f"{TYPE_LETTERS.get(type_, 'n')}-{digest[:6]}"


def type_from_filename(name: str) -> str | None:
    for prefix in CLAUDE_TYPES:
        if name.startswith(prefix + "_"):
            return prefix
    return None


def _iso_date(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        match = re.match(r"\s*(\d{4}-\d{2}-\d{2})", value)
        if match:
            try:  # '2026-02-30' has the shape of a date but is none
                return dt.date.fromisoformat(match.group(1)).isoformat()
            except ValueError:
                return ""
    return ""


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1", "on")
    return bool(value)


def _as_importance(value: Any) -> int:
    try:
        return min(IMPORTANCE_MAX, max(IMPORTANCE_MIN, int(value)))
    except (TypeError, ValueError):
        return IMPORTANCE_DEFAULT


def _shown(value: Any) -> str:
    text = str(value) if isinstance(value, _SCALAR_TYPES) else f"a {type(value).__name__}"
    text = one_line(text)
    if len(text) > INVALID_VALUE_MAX_CHARS:
        text = text[:INVALID_VALUE_MAX_CHARS] + "…"
    return text


# Frontmatter keys whose value must be a date (YYYY-MM-DD).
DATE_KEYS = ("created", "expires", "valid_from", "valid_to")


def invalid_values(meta: dict[str, Any]) -> dict[str, str]:
    """Frontmatter values that were given but cannot be used as written (the doctor reports
    them; parsing falls back to an inferred date, no expiry, or a clamped importance)."""
    out: dict[str, str] = {}
    for key in DATE_KEYS:
        value = meta.get(key)
        if value not in (None, "") and not _iso_date(value):
            out[key] = _shown(value)
    value = meta.get("importance")
    if value is not None:
        whole = isinstance(value, int) and not isinstance(value, bool)
        whole = whole or (isinstance(value, str) and _WHOLE.fullmatch(value.strip()) is not None)
        try:
            valid = whole and IMPORTANCE_MIN <= int(value) <= IMPORTANCE_MAX
        except ValueError:  # more digits than int() reads
            valid = False
        if not valid:
            out["importance"] = _shown(value)
    return out


# A frontmatter fence: a line of three or more dashes (python-frontmatter's boundary).
_FENCE = re.compile(r"-{3,}[ \t]*\r?")
# A top-level ``key:`` line of YAML frontmatter.
_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]|\r?$)")
# Keys a memory's frontmatter holds (Claude Code's and ours). In a block whose closing '---' is
# missing, the leading lines with these keys are frontmatter and the first other line starts the
# memory's text ("Note: ..." is prose, not a key).
FRONTMATTER_KEYS = frozenset(
    (
        "name description type metadata created updated modified tags room importance always "
        "expires id originSessionId paths valid_from valid_to superseded_by supersedes forgotten "
        "origin captured_from confirmed project"
    ).split()
)
_YAML_HOW = (
    "fix the YAML between the --- lines "
    "(quote a value that holds ': ' or starts with [ { & * ! | > ' \" % @ or `)"
)
_UNCLOSED_HOW = "add a line holding only --- after the last frontmatter line"


def _split_frontmatter(text: str) -> tuple[dict[str, Any], str, str]:
    """(metadata, body, error). Broken frontmatter is never part of the body: the body is the text
    after the block, the metadata what can be salvaged from it, the error says where and how."""
    import frontmatter
    import yaml

    try:
        post = frontmatter.loads(text)
    except (yaml.YAMLError, ValueError, TypeError) as exc:
        return _broken_frontmatter(text, exc)
    meta = post.metadata if isinstance(post.metadata, dict) else {}
    if not meta and text.lstrip().startswith("---"):
        # python-frontmatter reads a block that never closes as no frontmatter at all.
        fences = _fences(text.split("\n"))
        if fences is not None and fences[1] is None:
            return _broken_frontmatter(text, None)
    return dict(meta), post.content, ""


def _fences(lines: list[str]) -> tuple[int, int | None] | None:
    """(opening, closing or None) line indexes of a YAML frontmatter block; None without one."""
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None or not _FENCE.fullmatch(lines[start]):
        return None
    close = next((i for i in range(start + 1, len(lines)) if _FENCE.fullmatch(lines[i])), None)
    return start, close


def _broken_frontmatter(text: str, exc: Exception | None) -> tuple[dict[str, Any], str, str]:
    lines = text.split("\n")
    fences = _fences(lines)
    if fences is None:  # not a YAML block (another format python-frontmatter reads)
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return {}, text, f"broken frontmatter: {first}"
    start, close = fences
    if close is None:
        end = _header_end(lines, start + 1)
        meta, _ = _salvage(lines[start + 1 : end], start + 2)
        body = "\n".join(lines[end:]).strip()
        error = f"opened with --- on line {start + 1} but never closed: {_UNCLOSED_HOW}"
        return meta, body, f"broken frontmatter: {error}"
    block = lines[start + 1 : close]
    meta, first_bad = _salvage(block, start + 2)
    body = "\n".join(lines[close + 1 :]).strip()
    where = _yaml_error(block, start + 2) or first_bad
    if not where:
        where = str(exc).splitlines()[0] if exc is not None and str(exc) else "unreadable YAML"
    return meta, body, f"broken frontmatter: {where}: {_YAML_HOW}"


def _header_end(lines: list[str], first: int) -> int:
    """Where the text starts in a block that never closes: after the leading frontmatter keys
    (and the indented or '- ' lines under a key without a value, like ``metadata:``)."""
    n, nested = first, False
    while n < len(lines):
        line = lines[n]
        match = _KEY_LINE.match(line)
        if match and match.group(1) in FRONTMATTER_KEYS:
            nested = not line[match.end() :].strip()
        elif not (nested and line.strip() and (line[0] in " \t" or line.startswith("- "))):
            break
        n += 1
    return n


def _salvage(block: list[str], first_line: int) -> tuple[dict[str, Any], str]:
    """The keys of a broken block that parse on their own (each top-level key with the lines
    under it), and where the first one that does not is (``line N: problem``)."""
    import yaml

    chunks: list[tuple[int, list[str]]] = []
    for i, line in enumerate(block):
        if _KEY_LINE.match(line):
            chunks.append((i, [line]))
        elif chunks:
            chunks[-1][1].append(line)
    meta: dict[str, Any] = {}
    first_bad = ""
    for i, chunk in chunks:
        try:
            value = yaml.safe_load("\n".join(chunk))
        except (yaml.YAMLError, ValueError, TypeError) as exc:
            if not first_bad:
                first_bad = f"line {first_line + i}: {str(exc).splitlines()[0]}"
            continue
        if isinstance(value, dict):
            meta.update(value)
    return meta, first_bad


def _yaml_error(block: list[str], first_line: int) -> str:
    """``line N: <context>, <problem> on line M`` for the YAML error in ``block`` (whose first
    line is file line ``first_line``), or "" when YAML gives no position."""
    import yaml

    try:
        yaml.safe_load("\n".join(block))
    except yaml.MarkedYAMLError as exc:
        mark, problem = exc.problem_mark, exc.problem or ""
        if mark is None:
            return ""
        at = first_line + mark.line
        if exc.context and exc.context_mark is not None:
            ctx = first_line + exc.context_mark.line
            return f"line {ctx}: {exc.context}, {problem} on line {at}"
        return f"line {at}: {problem}"
    except (yaml.YAMLError, ValueError, TypeError):
        return ""
    return ""


# Frontmatter values that can stand for text. A list or mapping where text belongs is malformed,
# and turning one into a string can take forever: YAML aliases nest a few hundred bytes into
# billions of items (a "billion laughs" file would hang every hook that indexes it).
_SCALAR_TYPES = (str, int, float, dt.date)


def _text_of(value: Any) -> str:
    if not isinstance(value, _SCALAR_TYPES):
        return ""
    # YAML's "\ud800" escapes make lone surrogates, which no UTF-8 database or file can hold.
    return str(value).encode("utf-8", "replace").decode("utf-8").strip()


# A captured memory's quoted source line is kept (in ``extra``) up to this many characters: the
# Learned view shows it; the file holds the whole line.
CAPTURED_FROM_MAX_CHARS = 300
# Where a memory came from, when something captured it (frontmatter -> ``extra`` key).
_PROVENANCE_KEYS = (
    ("origin", "origin"),
    ("originSessionId", "origin_session"),
    ("captured_from", "captured_from"),
    ("confirmed", "confirmed"),
)


def _provenance(entry: Entry, meta: dict[str, Any]) -> None:
    """Copy a captured memory's provenance (``origin: capture:<signal>``, the session, the
    quoted line, the day it was last seen again) into ``entry.extra`` for the Learned view."""
    for key, name in _PROVENANCE_KEYS:
        value = meta.get(key)
        if value in (None, ""):
            continue
        text = _iso_date(value) if key == "confirmed" else sanitize(one_line(_text_of(value)))
        if text:
            entry.extra[name] = text[:CAPTURED_FROM_MAX_CHARS]


def _id_text(value: Any) -> str:
    """A memory id named in frontmatter (``superseded_by:``), as written (one line, capped): one
    that names no memory still retires it, and the doctor reports the broken chain."""
    text = one_line(_text_of(value))
    return text[:INVALID_VALUE_MAX_CHARS]


# ``forgotten: true`` (written by hand, no date) still retires the memory.
FORGOTTEN_UNDATED = "yes"


def _forgotten(value: Any) -> str:
    if value in (None, "", False):
        return ""
    return _iso_date(value) or (FORGOTTEN_UNDATED if _as_bool(value) else "")


def not_text_share(text: str) -> float:
    """The share of ``text`` that is control characters, NUL bytes or undecodable bytes."""
    if not text:
        return 0.0
    return len(re.findall(_NOT_TEXT_CHARS, text)) / len(text)


def is_text(entry: Entry) -> bool:
    """False for a file whose text memory does not have (``UNUSABLE``: not text, unreadable,
    too large): never injected, never searched."""
    return not entry.error.startswith(UNUSABLE)


def too_large_message(size: int) -> str:
    mb = size / (1024 * 1024)
    amount = f"{mb:.0f} MB" if mb >= 1 else f"{size // 1024} KB"
    return (
        f"{TOO_LARGE}: {amount}, over the {MAX_FILE_BYTES // 1024} KB a memory may hold, so "
        "it is not read, injected or searched: split it into smaller memories or move it out "
        "of the memory folder"
    )


def one_line(text: str) -> str:
    return _WS.sub(" ", _BOLD.sub("", text)).strip()


def dedupe_key(text: str) -> str:
    words = _WORD.findall(text.lower())
    import hashlib  # lazily: 3 ms of import a hook rarely needs

    return hashlib.sha1(" ".join(words).encode("utf-8")).hexdigest()[:16]


def states_rule(entry: Entry) -> bool:
    """A feedback memory, or one that says never/must/always/do not."""
    return entry.type == "feedback" or CONSTRAINT_RE.search(_rule_text(entry)) is not None


def _rule_text(entry: Entry) -> str:
    return f"{entry.name} {entry.description} {entry.body}"


def classify_priority(entry: Entry) -> int:
    """Pinned first, then critical rules (a rule whose consequence is irreversible), then other
    rules, then the rest. Whether a pinned entry is a (critical) rule is kept in ``extra``:
    the brief's "Critical rules" hold only those (``is_critical``)."""
    rule = states_rule(entry)
    critical = rule and IRREVERSIBLE_RE.search(_rule_text(entry)) is not None
    entry.extra.pop("rule", None)
    entry.extra.pop("critical", None)
    if rule:
        entry.extra["rule"] = True
    if critical:
        entry.extra["critical"] = True
    if entry.always:
        return PRIORITY_PINNED
    if critical:
        return PRIORITY_IRREVERSIBLE
    if rule:
        return PRIORITY_RULE
    return PRIORITY_OTHER


def is_critical(entry: Entry) -> bool:
    """A rule whose consequence is irreversible, pinned or not."""
    return entry.priority == PRIORITY_IRREVERSIBLE or bool(entry.extra.get("critical"))


def is_rule(entry: Entry) -> bool:
    """A rule, critical or not, pinned or not."""
    return entry.priority in (PRIORITY_IRREVERSIBLE, PRIORITY_RULE) or bool(
        entry.extra.get("rule") or entry.extra.get("critical")
    )


def render(entry: Entry) -> None:
    """Fill the emitted forms and their exact token counts.

    A brief line is one line that starts with '-' and ends with '\\n': at such boundaries cl100k's
    pre-tokenizer splits the same way alone and in a concatenation, so the count of a brief is the
    sum of its lines' counts (``tests/test_tokens.py`` checks this on random text).
    """
    label = entry.name if entry.name and not entry.body.strip() else ""
    text = one_line(entry.body) or one_line(entry.description) or one_line(entry.name)
    if label and text != one_line(label):
        text = f"{one_line(label)}: {text}"
    text = escape_fence(text) or "(empty)"
    team = team_label(entry)
    head = f"- [{entry.id}] {team}"
    cap = CONTEXT_LINE_MAX_TOKENS if entry.source == "context" else ENTRY_LINE_MAX_TOKENS
    body = tokens.truncate(text, max(1, cap - tokens.count(head)))
    entry.line = f"{head}{body}\n"
    entry.line_tokens = tokens.count(entry.line)
    preview_src = one_line(entry.description) or one_line(entry.body) or one_line(entry.name)
    if entry.source == "session":
        # A transcript chunk's description only says who spoke when: the peek that decides
        # whether to fetch it needs what was said.
        role = str(entry.extra.get("role") or "")
        preview_src = (f"{role}: " if role else "") + one_line(entry.body)
    preview = escape_fence(preview_src[:PREVIEW_CHARS])
    if len(preview_src) > PREVIEW_CHARS:
        preview += "…"
    room = f"{team}{entry.room or '-'}"
    history = history_label(entry)
    history = f"({history}) " if history else ""
    entry.summary = f"{entry.id} {room} {entry.type} {entry.created or '?'} {history}{preview}\n"
    entry.summary_tokens = tokens.count(entry.summary)
    entry.full_tokens = tokens.count(full_text(entry))


def _today(day: dt.date | None) -> dt.date:
    if day is not None:
        return day
    from ..base.config import today

    return today()


def is_live(entry: Entry, today: dt.date | None = None) -> bool:
    """Whether ``entry`` may load (L1/L2/L3): not superseded, not forgotten, and ``today``
    within its valid_from..valid_to days (both inclusive). The same rule as ``index.LIVE_SQL``;
    ``store.lifecycle`` writes these keys."""
    if entry.superseded_by or entry.forgotten:
        return False
    if not (entry.valid_to or entry.valid_from):
        return True
    day = _today(today).isoformat()
    if entry.valid_to and entry.valid_to < day:
        return False
    return not (entry.valid_from and entry.valid_from > day)


def status(entry: Entry, today: dt.date | None = None) -> str:
    """One word for where a memory is in its life: live, superseded, forgotten, ended (past its
    valid_to) or pending (before its valid_from)."""
    if entry.forgotten:
        return "forgotten"
    if entry.superseded_by:
        return "superseded"
    day = _today(today).isoformat()
    if entry.valid_to and entry.valid_to < day:
        return "ended"
    if entry.valid_from and entry.valid_from > day:
        return "pending"
    return "live"


def history_label(entry: Entry) -> str:
    """How a retired memory is labelled where it is still found (search, deep recall, show):
    "history: superseded 2026-11-30 by p-1a2b3c", "history: forgotten 2026-11-30", or for a
    fact with an end date "valid to 2026-12-31" (history once the day has passed); "" for the
    rest. Dates are written into the label so it holds whatever day it is read."""
    if entry.forgotten:
        day = "" if entry.forgotten == FORGOTTEN_UNDATED else f" {entry.forgotten}"
        return f"history: forgotten{day}"
    if entry.superseded_by:
        day = f" {entry.valid_to}" if entry.valid_to else ""
        return f"history: superseded{day} by {escape_fence(entry.superseded_by)}"
    parts = []
    if entry.valid_from:
        parts.append(f"valid from {entry.valid_from}")
    if entry.valid_to:
        parts.append(f"valid to {entry.valid_to}")
    return ", ".join(parts)


def team_label(entry: Entry) -> str:
    """``(team acme) `` before a team palace's memory in every form the layers emit, so the
    model knows whose it is; "" for the user's own."""
    team = entry.extra.get("team")
    return f"(team {escape_fence(str(team))}) " if team else ""


def full_text(entry: Entry) -> str:
    """Depth 3: the whole memory as stored in the index (sanitised)."""
    head = entry.name or entry.id
    team = team_label(entry).strip()
    parts = [f"# {head} [{entry.id}]" + (f" {team}" if team else "")]
    # A description that is the body's start (cut short with "…", as capture writes it) would
    # give the fact twice.
    said = one_line(entry.description).rstrip("…").rstrip()
    if said and not one_line(entry.body).startswith(said):
        parts.append(entry.description)
    meta = f"type: {entry.type}; room: {entry.room or '-'}; created: {entry.created or '?'}"
    history = history_label(entry)
    if history:
        meta += f"; {history}"
    parts.append(meta)
    parts.append(entry.body.strip())
    return escape_fence("\n".join(p for p in parts if p)) + "\n"


def parse_file(
    path: Path,
    source: str,
    *,
    stable_key: str,
    project: str = "",
    room: str = "",
    default_type: str = "reference",
    st_mtime_ns: int | None = None,
    st_size: int | None = None,
) -> Entry:
    """Read one memory file into an Entry. Never raises for bad content: problems land in
    ``entry.error`` so the doctor can report them and the rest of the tree still loads."""
    error = ""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
            if len(raw) > MAX_FILE_BYTES:
                size = max(os.fstat(fh.fileno()).st_size, len(raw))  # a device reports 0
                raw, error = b"", too_large_message(size)
        if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
            # A UTF-16 file with its BOM (Windows editors save these): its NUL bytes are
            # half of every character, not damage.
            raw = raw.decode("utf-16", errors="replace").encode("utf-8")
        # NUL padding at the end is what a crash or a preallocating writer leaves after intact
        # text: it is no part of the file's content, so it does not make the file binary.
        padded = raw.endswith(b"\x00")
        text = raw.rstrip(b"\x00").decode("utf-8", errors="replace")
        bad = not_text_share(text)
        if bad > NOT_TEXT_MAX_SHARE:
            text = ""
            error = (
                f"{NOT_TEXT}: {bad:.0%} of it is control characters or bytes that are not UTF-8 "
                "(a binary file?), so it is never injected or searched: delete it, or save it "
                "as UTF-8 text"
            )
        elif padded or "\x00" in text:
            error = error or "file holds NUL bytes: indexed without them"
        text = re.sub(_CONTROL, "", re.sub(_ANSI_CODE, "", text))
    except OSError as exc:
        text = ""
        why = (exc.strerror or str(exc)).lower()
        error = f"{UNREADABLE}: {why}: it is never injected or searched; make it readable"
    text = text.lstrip("\ufeff")
    meta, body, fm_error = _split_frontmatter(text) if text else ({}, "", "")
    error = error or fm_error
    nested_raw = meta.get("metadata")
    nested: dict[str, Any] = nested_raw if isinstance(nested_raw, dict) else {}
    raw_type = _text_of(nested.get("type") or meta.get("type")).lower()
    type_ = raw_type or type_from_filename(path.name) or default_type
    if source == "identity":
        type_ = "user"
    elif source == "cold":
        type_ = "cold"
    elif source == "wiki":
        type_ = "wiki"
    elif source == "context":
        type_ = "project"
    if type_ not in TYPE_LETTERS:
        type_ = default_type
    name = _text_of(meta.get("name")) or path.stem
    created = _iso_date(meta.get("created"))
    inferred = False
    if not created:
        inferred = True
        created = _iso_date(meta.get("modified")) or _iso_date(meta.get("updated"))
        if not created and st_mtime_ns is not None:
            stamp = dt.datetime.fromtimestamp(st_mtime_ns / 1e9, tz=dt.timezone.utc)
            created = stamp.date().isoformat()
    tags_raw = meta.get("tags") or []
    tags = [_text_of(t) for t in (tags_raw if isinstance(tags_raw, list) else [tags_raw])]
    tags = [t for t in tags if t]
    fm_room = _text_of(meta.get("room"))
    entry = Entry(
        id="",
        path=str(path),
        source=source,
        # A wiki record promoted from a session says which project's it is; a room memory
        # added from inside a project belongs to it (none: every project's).
        project=project or (_text_of(meta.get("project")) if source in ("wiki", "room") else ""),
        type=type_,
        name=sanitize(name),
        description=sanitize(_text_of(meta.get("description"))),
        body=sanitize(body),
        room=fm_room or room,
        room_origin="frontmatter" if fm_room else ("folder" if room else ""),
        tags=tags,
        created=created,
        created_inferred=inferred,
        updated=_iso_date(meta.get("updated") or meta.get("modified")),
        importance=_as_importance(meta.get("importance", IMPORTANCE_DEFAULT)),
        always=_as_bool(meta.get("always", False)),
        expires=_iso_date(meta.get("expires")),
        mtime_ns=st_mtime_ns or 0,
        size=st_size or 0,
        error=error,
        valid_from=_iso_date(meta.get("valid_from")),
        valid_to=_iso_date(meta.get("valid_to")),
        superseded_by=_id_text(meta.get("superseded_by")),
        supersedes=_id_text(meta.get("supersedes")),
        forgotten=_forgotten(meta.get("forgotten")),
    )
    own_id = _text_of(meta.get("id"))
    if own_id and USER_ID_RE.match(own_id):
        entry.id = own_id
        entry.extra["own_id"] = True
    else:
        entry.id = make_id(type_, stable_key)
    entry.extra["stable_key"] = stable_key
    if meta.get("paths"):
        from .globs import read_globs

        globs = read_globs(meta.get("paths"))
        if globs:  # the files this memory is tied to (tool-level recall)
            entry.extra["paths"] = globs
    _provenance(entry, meta)
    invalid = invalid_values(meta)
    if invalid:
        entry.extra["invalid"] = invalid
    if source == "claude" and not fm_error:
        # Claude Code reads these three from the frontmatter; the doctor names what is missing.
        given = {"name": meta.get("name"), "description": meta.get("description")}
        given["type"] = raw_type
        missing = [key for key, value in given.items() if not _text_of(value)]
        if missing:
            entry.extra["missing"] = missing
    entry.priority = classify_priority(entry)
    entry.dedupe_key = dedupe_key(entry.body or entry.description or entry.name)
    return entry
