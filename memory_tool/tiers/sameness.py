"""Whether two texts say the same fact, and whether a new fact replaces an old one: the
text-only tests auto-capture (``capture``) runs before it writes a memory ("use ruff instead
of flake8" after "use flake8 for linting"; "Never log PII" said again in other words). No
index, no files: regular expressions and word sets.

Hook path: none (the Scribe and the Stop handler run capture).
"""

from __future__ import annotations

import re

from .changes import ALTERNATIVE_OF

# A memory this many times longer (in words) than the new fact is a page about many things,
# not the same fact said at more length.
SAME_MAX_LENGTH_FACTOR = 4

_WORD = re.compile(r"[^\W_]+(?:[.\-][^\W_]+)*")
# Words that say how, not what: a repeat is judged on the rest ("Use httpx instead of
# requests." and "Prefer httpx over requests for HTTP calls." share httpx and requests).
HOW_WORDS = frozenset(
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
CHANGED = re.compile(
    r"^(?P<subject>.+?)\s+(?:has\s+|have\s+|was\s+|were\s+)?"
    r"(?:moved|migrated|changed|switched|renamed|is\s+now|are\s+now|now\s+lives|now\s+runs|"
    r"now\s+uses|now\s+points)\b\s*(?:to|in|on|at|from\s+\S+\s+to)?\s*(?P<value>.+)$",
    re.IGNORECASE,
)


# A word that names a value exactly: a region, a version, a path, a host.
_VALUE_WORD = re.compile(r"[\d_./:@\-]")


def word_list(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _tool(word: str | None) -> str:
    return (word or "").lower().strip("`").rstrip(".-/,")


def _key_words(text: str) -> set[str]:
    """The words that say what a fact is about; a number always counts ("service 1" is not
    "service 2")."""
    return {w for w in word_list(text) if w not in HOW_WORDS and (len(w) > 1 or w.isdigit())}


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
    rest = {w for w in word_list(m.group("rest")) if w not in HOW_WORDS and len(w) > 2}
    return _tool(m.group("tool")), rest


# What a fact says is used, without "use": "goes through X", "is done with X", "runs on X".
_GOES_THROUGH = re.compile(
    r"\b(?:(?:goes|go|runs?|is\s+done|are\s+done|is\s+handled|are\s+handled|is\s+built|"
    r"are\s+built)\s+(?:through|via|with|on|by)|(?:lives?|sits?|is\s+stored|are\s+stored|"
    r"is\s+kept|are\s+kept)\s+(?:in|on|under)"
    # "Proofs taken offline are queued as JSON in SharedPreferences": any passive verb.
    r"|(?:is|are)\s+\w+ed\b[^.;]{0,30}?\s(?:in|on|under|through|via|with|by)"
    # "We send mail through Mailgun via the Swoosh adapter" (a statement, blind24): what "we"
    # do through or with a tool.
    r"|\bwe\s+\w+\s+(?:\w+\s+){0,2}?(?:through|via|with))\s",
    re.IGNORECASE,
)


# Off what they used: "we're off the council relay", "we moved off Heroku".
_OFF = re.compile(
    r"\b(?:(?:we'?re|we\s+are|we(?:'ve|\s+have)?\s+(?:moved|switched|migrated)|we\s+got)\s+off"
    # "the practice dropped twilio as of this morning - we're on esendex now" (blind27)
    r"|(?:dropped|ditched|dumped|got\s+rid\s+of|(?:is|are|we'?re|we\s+are)\s+dropping))\s+"
    r"(?:of\s+)?(?:the\s+|our\s+)?(?P<what>[\w\-' ]{3,40}?)\s*"
    r"(?:[,;.]|$|\s+(?:and|now|so|as\s+of|from|today|this)\b|\s+[-\u2013\u2014]\s)",
    re.IGNORECASE,
)


# The value a change says it replaced: "…, changed from £120.", "…, down from 8".
_WAS_VALUE = re.compile(r"\b(?:changed|up|down)\s+from\s+(\S*\d[^\s,.;]*)", re.IGNORECASE)


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
        words = names | set(word_list(old))
        return rejected in words and chosen not in words
    if _named_instead(new, old):
        return True
    off = _OFF.search(new)
    if off and not _NEGATION.match(old.strip()):  # "Never log via the relay" is no use of it
        # "we're off the council relay, overdue mails go through Postmark now" after "Outgoing
        # mail goes through the council's SMTP relay": what they are off, the old fact used.
        left = {w[:5] for w in word_list(off.group("what")) if w not in HOW_WORDS and len(w) > 2}
        return bool(left) and left <= {w[:5] for w in word_list(old)}
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
    changed = CHANGED.match(new.rstrip("."))
    if changed:
        subject = {
            w for w in word_list(changed.group("subject")) if w not in HOW_WORDS and len(w) > 2
        }
        was = _WAS_VALUE.search(new)
        # "The minimum premium is now £150 a year, changed from £120." after "Underwriting's
        # minimum is £120 a year, …": the old value, said of the same subject.
        if (
            was
            and re.search(rf"(?<![\w.]){re.escape(was.group(1))}(?![\w])", old, re.I)
            and {w[:5] for w in subject} & {w[:5] for w in word_list(old)}
        ):
            return True
        value = {w for w in word_list(changed.group("value")) if w not in HOW_WORDS}
        words = set(word_list(old))
        # The old memory must state a value the change replaces ("us-east-1"): "Never make the
        # bucket public." is about the bucket too, and no fact that moved.
        stated = {w for w in words - set(word_list(new)) if _VALUE_WORD.search(w)}
        if bool(subject) and subject <= words and not value <= words and bool(stated):
            return True
        return same_measure_changed(changed.group("subject"), changed.group("value"), old)
    return False


# "switch the processed output to one Zarr store per variable instead of the per-year NetCDF
# files": what changes, to what, instead of what, each a phrase (blind17).
_SWITCH_INSTEAD = re.compile(
    r"^(?:let'?s\s+)?switch\s+(?P<what>.+?)\s+to\s+(?P<new>.+?)\s+"
    r"(?:instead\s+of|rather\s+than)\s+(?P<old>[^,;]+?)\.?$",
    re.IGNORECASE,
)
# A word that names something in a phrase: a capital after its first letter or a first capital
# inside the sentence ("NetCDF", "Zarr"), a digit or a name from code.
_NAME_WORD = re.compile(r"\b\w*[A-Z]\w*|\b\w*\d\w*\b|\b\w+[._]\w+\b")


def _named_instead(new: str, old: str) -> bool:
    """Whether ``new`` switches a thing ``old`` is about away from a name ``old`` states, to a
    name it does not: "switch the processed output to one Zarr store per variable instead of the
    per-year NetCDF files" after "Processed output is written as NetCDF, one file per …"."""
    m = _SWITCH_INSTEAD.match(new.strip())
    if not m:
        return False
    names_new = {w.lower() for w in _NAME_WORD.findall(m.group("new"))}
    names_old = {w.lower() for w in _NAME_WORD.findall(m.group("old"))}
    what = {w[:5] for w in word_list(m.group("what")) if w not in HOW_WORDS and len(w) > 2}
    words = set(word_list(old))
    if not names_new or not names_old or not what:
        return False
    return names_old <= words and not names_new & words and what <= {w[:5] for w in words}


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


def same_measure_changed(subject: str, value: str, old: str) -> bool:
    """ "The late-cancel cutoff is now 48h before the appt." after "Patients can cancel online up
    to 24h before the appointment, …": the same unit with another number, in a memory that
    shares a word of the subject (its first five letters)."""
    new_m, old_m = _measures(value), _measures(old)
    units = set(new_m) & set(old_m)
    if not units or any(new_m[u] & old_m[u] for u in units):
        return False

    def parts(text: str) -> set[str]:  # "late-cancel" is "late" and "cancel"
        words = re.findall(r"[a-z0-9]+", text.lower())
        return {w[:5] for w in words if len(w) > 3 and w not in HOW_WORDS}

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
    new_words, old_words = word_list(new), word_list(old)
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
LIGHT_WORDS = frozenset(
    "every each all any gets get got set sets goes go through has have make makes need needs "
    "want wants pls please plz".split()
)
# Words that say the same thing: a direction, and the words on a screen ("all user-facing text
# goes in strings.xml" and "every user-facing string goes in strings.xml" are one rule).
SAME_WORD = {"outbound": "outgoing", "inbound": "incoming", "text": "string", "texts": "string"}


def _normal(w: str) -> str:
    """A word as rules are compared: the word it stands for, a plural's "s" off."""
    w = SAME_WORD.get(w, w)
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def rule_words(text: str) -> set[str]:
    """A rule's key words, light words out, a plural's "s" off ("calls" is "call")."""
    return {_normal(w) for w in _key_words(text) if w not in LIGHT_WORDS}


def word_parts(text: str) -> set[str]:
    """A rule's key words with a name from code taken by its parts ("strings.csv" is
    "string" and "csv")."""
    parts = (_normal(p) for w in rule_words(text) for p in re.split(r"[.\-]", w))
    return {p for p in parts if len(p) > 1 and p not in HOW_WORDS and p not in LIGHT_WORDS}


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
        if picked and c_new != c_old and picked[0] not in set(word_list(other)):
            return False  # "use tracing instead of env_logger" is news to "… via env_logger"
    a, b = gist(core_new), gist(core_old)
    if a and b and (a == b or either_repeats(a, b)):
        return True
    names_new = {n.strip("`").lower() for n in _CODE_NAME.findall(core_new)}
    names_old = {n.strip("`").lower() for n in _CODE_NAME.findall(core_old)}
    if not names_new & names_old:
        return False
    key_new, key_old = rule_words(core_new) | names_new, rule_words(core_old) | names_old
    shared = len(key_new & key_old)
    return shared >= CORE_MIN_WORDS and shared >= CORE_SHARE_MIN * min(len(key_new), len(key_old))
