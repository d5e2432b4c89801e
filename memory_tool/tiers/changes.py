"""A change said without "use", "never" or "always": a switch to another tool ("switch to polars
for the event loads", "let's move logging off env_logger and onto tracing", "swap Glide out for
Coil for image loading"), a fact of the project's setup that changed ("the bucket moved to
eu-central-1", "minSdk is 26 now"), a setting switched to an exact value. ``signals`` asks
``change_said`` of each clause that is no rule or preference; ``capture`` reads
``ALTERNATIVE_OF`` (a switch between tools that stand in for one another retires the old one).

A wrong fact stored and then trusted costs more than a fact missed: only plain, exact forms are
kept; the same said as hearsay, for now, or about something else is a hint for the inbox
("heuristic"), and a question, a hypothetical or a hedge is nothing.

Hook path: stdlib ``re`` only.
"""

from __future__ import annotations

import re

from ..base.privacy import LazyPattern

_WS = re.compile(r"\s+")
# Words before a colon that only lead up to what follows ("one preference before we start: …",
# "sales renegotiated the contracts: the first-reply promise is 4 hours now"): at most this many.
PREAMBLE_MAX_WORDS = 9

# Words that make an instruction today's only: "answer in German this time", "switch to polars
# for now". Such a switch or change waits in the inbox; such a preference is none.
ONE_OFF = LazyPattern(
    r"\b(?:this\s+time|this\s+once|just\s+once|for\s+now|for\s+the\s+moment|temporarily|"
    r"for\s+this\s+(?:one|answer|file|test|task|question|pr|branch|run))\b",
    re.IGNORECASE,
)


# Tools that stand in for one another: "switch to polars" names a tool, where "switch to the main
# branch" or "move to the next step" name nothing to keep. A short list of the common cases
# (capture also reads it: "use polars" after "use pandas" retires it).
ALTERNATIVES = (
    "pandas polars dask pyspark modin",
    "requests httpx aiohttp urllib3 urllib",
    "flake8 ruff pylint pyflakes pycodestyle",
    "black ruff yapf autopep8",
    "isort ruff",
    "pip uv poetry pipenv pdm conda",
    "npm yarn pnpm bun",
    "jest vitest mocha jasmine",
    "pytest unittest nose nose2",
    "mypy pyright pyre pytype",
    "postgres postgresql mysql mariadb sqlite",
    "flask fastapi django starlette",
    "webpack vite esbuild rollup parcel",
    "eslint biome tslint",
    "prettier biome",
    "docker podman",
    "celery rq dramatiq huey",
    # What runs a queue, what caches: "move the queues to redis", "switch the cache to valkey".
    "redis rabbitmq sqs kafka nats beanstalkd",
    "redis valkey memcached",
    "logging loguru structlog",
    "moment dayjs date-fns luxon",
    "setuptools hatch hatchling flit poetry",
    "unittest.mock pytest-mock",
    "pydantic attrs dataclasses marshmallow",
)
ALTERNATIVE_OF: dict[str, frozenset[str]] = {}
for _group in ALTERNATIVES:
    for _name in _group.split():
        ALTERNATIVE_OF[_name] = ALTERNATIVE_OF.get(_name, frozenset()) | frozenset(_group.split())

# "switch to polars for the event loads", "we moved from pip to uv": a switch, said as an order
# or as done. Anchored at the clause's start: "should we switch", "maybe switch", "what if we
# switched", "if we move to" never match.
_SWITCH_SAID = LazyPattern(
    r"""^(?:let'?s\s+|(?:we|i)(?:'ve|\s+have)?\s+)?
        (?:switch(?:ed)?|mov(?:e|ed)|migrat(?:e|ed))\s+(?:over\s+)?
        (?:(?:everything|it\s+all|all\s+of\s+it|the\s+data)\s+)?
        (?:from\s+`?(?P<old>[\w.\-/]+)`?\s+)?(?:to|into|onto)\s+
        # "i moved everything into the shared postgres": the tool, not its article
        (?:(?:the|our|a|an)\s+(?=(?:shared|new|managed|hosted|central|main|company)\s))?
        (?:(?:shared|new|managed|hosted|central|main|company)\s+)?`?(?P<new>[\w.\-/]+)`?
        (?P<rest>(?:[\s,;:].*)?)$""",
    re.IGNORECASE | re.VERBOSE,
)
# A fact that changed: "the bucket moved to eu-central-1", "our API is now at /v2". The subject
# is a definite noun phrase of at most six words (not "it", not "we"); no modal, no negation,
# no "if" before it (anchored at the clause's start).
_CHANGE_SAID = LazyPattern(
    r"""^(?P<subject>(?:the|our)\s+(?:[\w\-./`']+\s+){1,6}?)
        (?P<verb>(?:has\s+|have\s+|was\s+|were\s+)?(?:been\s+)?(?:moved|migrated|renamed|relocated)
          |(?:is|are)\s+now|now\s+(?:lives?|runs?|points?|sits?))\s+
        (?P<prep>(?:to|in|on|at|into|under|from\s+\S+\s+to)\s+)?
        (?P<value>[^,;]+?)(?P<tail>\s*[,;].*)?$""",
    re.IGNORECASE | re.VERBOSE,
)
# The same said with "now" (or "from now on", "from today") last, or of a setting named as in the
# code or an environment:
# "minSdk is 26 now", "the node version is 22 now", "`MAX_RETRIES` is now 5", "staging is in the
# supply-stg namespace now".
_CHANGE_NOW = LazyPattern(
    r"""^(?P<subject>(?:the|our)\s+(?:[\w\-./`']+\s+){1,6}?|(?P<code>`?[\w.]*(?:[a-z][A-Z]|[_.])[\w.]*`?)\s+
        |(?P<env>staging|prod|production|preprod|dev|qa|ci|sandbox)\s+
        |(?P<limit>(?:[Mm]ax|[Mm]aximum|[Mm]in|[Mm]inimum|[Dd]efault)\s+(?:[\w\-]+\s+){1,3}?))
        (?P<verb>(?:is|are)\s+now|(?:is|are)(?=\s+[^,;]+?\s+(?:now|from\s+now\s+on|from\s+today
          |going\s+forward|as\s+of\s+today)$))\s+
        (?P<prep>)(?P<value>[^,;]+?)(?:\s+(?:now|from\s+now\s+on|from\s+today|going\s+forward
          |as\s+of\s+today))?(?P<tail>)$""",
    re.VERBOSE,
)
# A setting that goes to a new value from a day on: "tick rate goes to 60 Hz from today", "the
# session timeout changes to 15 min from now on". The day it starts is what makes it a change
# for good (without it, "the count goes to 3" tells of a moment).
_CHANGE_TO = LazyPattern(
    r"""^(?P<subject>(?:(?:the|our)\s+)?(?!(?:it|this|that|we|i|you|they|he|she)\b)
          [\w\-./`']+(?:\s+[\w\-./`']+){0,4}?)\s+
        (?:goes|changes|moves|drops|rises|is\s+going|gets\s+(?:raised|lowered|bumped|changed)
          |(?:is|was)\s+(?:raised|lowered|bumped|changed|increased|reduced|set))\s+
        (?:up\s+|down\s+)?to\s+(?P<value>[^,;]+?)\s+
        (?P<when>from\s+today|from\s+now\s+on|as\s+of\s+today|starting\s+(?:today|now)
          |going\s+forward|now\b)
        (?:\s*[,;].*|\s+.*)?$""",
    re.IGNORECASE | re.VERBOSE,
)
# A value said to go from one number to another: "from Monday it goes up from £120 to £150 a year
# for all new quotes" (blind30), "the retention drops from 90 to 30 days". Both values hold a
# digit; what it applies to after them ("for all new quotes") is left out.
_FROM_TO = LazyPattern(
    r"""^(?:from\s+(?:next\s+)?\w+\s*,?\s+)?(?P<subject>[\w\-./`'£$€ ]+?)\s+
        (?:goes|went|is\s+going|will\s+go|gets|rises|drops|increases|decreases|changes|moves
          |(?:is|was)\s+(?:raised|lowered|increased|reduced|changed|bumped|cut))\s+
        (?:up\s+|down\s+)?from\s+(?P<old>\S*\d\S*)\s+to\s+(?P<value>\S*\d[^,;]*?)
        (?:\s+(?:for|from|on|as\s+of|starting|in|per)\b[^,;]*)?\s*(?:[,;].*)?$""",
    re.IGNORECASE | re.VERBOSE,
)


# "I think", "apparently": a change heard of is a hint for the inbox, not a fact.
_HEDGE = LazyPattern(
    r"^(?:i\s+think|i\s+believe|i\s+heard|i\s+guess|apparently|it\s+seems|seems\s+like|"
    r"probably|maybe|perhaps)\s+(?:that\s+)?",
    re.IGNORECASE,
)
# What a changed fact is about, for it to be kept with no step by anyone: something of the
# project's setup (where it lives, what it is called), not a meeting or a ticket ("the standup
# moved to 10:30" waits in the inbox).
_SETUP_NOUN = LazyPattern(
    r"\b(?:buckets?|regions?|repo(?:sitory|sitories|s)?|hosts?|servers?|databases?|db|dbs|"
    r"endpoints?|apis?|urls?|base\s+url|services?|queues?|topics?|tables?|clusters?|packages?|"
    r"modules?|files?|folders?|directory|directories|config|configs|settings|ports?|domains?|"
    r"registry|image|images|jobs?|cron|dashboards?|warehouse|schemas?|secrets?|vault|docs|"
    r"wiki|channel|branch|pipelines?|workers?|cache|store|storage|cdn|dns|vpc|"
    r"versions?|sdk|runtime"
    # A limit the code enforces: "the upload limit is 50 MB now", "max message length is …".
    r"|limits?|max|maximum|min|minimum|timeouts?|ttl|quotas?|thresholds?|retries"
    r"|cutoffs?|deadlines?|intervals?|rates?|deployment\s+targets?|caps?"
    # A scheduled job: "the nightly load now runs at 04:30" (blind20).
    r"|loads?|imports?|exports?|syncs?|backups?|timers?|schedules?)\b",
    re.IGNORECASE,
)
# A value that names something exact: a region, a path, a version, a host, a `name`.
_EXACT_VALUE = LazyPattern(r"[\d_./:@`]|\w-\w|\b[A-Z]{2,}\b|\b[A-Z][a-z]+[A-Z]")
# When, relative to today: true the day it is said, wrong in a memory ("last night").
_WHEN = LazyPattern(
    r"\s*\b(?:last\s+(?:night|week|month|friday|monday)|yesterday|this\s+(?:morning|week)|"
    r"today|earlier(?:\s+today)?|recently|over\s+the\s+weekend|just\s+now)\b",
    re.IGNORECASE,
)
# A subject that holds one of these says the change did not (or may not) happen.
_NOT_SO = LazyPattern(
    r"\b(?:not|never|no|\w+n't|will|would|might|may|could|should|must|can|shall|if)\b",
    re.IGNORECASE,
)
# The value it had before, said after the change: "…, down from 8", "…, was 24".
_OLD_VALUE = LazyPattern(
    r",?\s+(?:down|up)\s+from\s+[^,;]+$|,\s*(?:was|previously|used\s+to\s+be)\s+[^,;]+$"
    # "quotes are valid for 14 days now, not 30" (blind15)
    r"|(?<=now),\s*not\s+[^,;]+(?=$|,\s*and\s+(?P<more>\S.*)$)",
    re.IGNORECASE,
)
# A number of a thing now, and the old number: "5 free lessons a day now, not 3" (blind25).
_COUNT_NOW = LazyPattern(
    r"^(?P<value>\d+(?:\.\d+)?\s+[\w\-]+(?:\s+[\w\-]+){0,4}?)\s+now,\s*not\s+(?P<old>\d+(?:\.\d+)?)\b",
    re.IGNORECASE,
)
# With the old value said, a plain plural subject is enough: "quotes are valid for 14 days now".
_PLURAL_NOW = LazyPattern(
    r"""^(?P<subject>(?!(?:we|they|you|these|those|things|people)\b)[\w\-]+s
          (?:\s+[\w\-]+s)?)\s+
        (?P<verb>are)\s+(?P<prep>)(?P<value>[^,;]+?)\s+now$""",
    re.IGNORECASE | re.VERBOSE,
)
# Words before a change that make it a condition or a question, not a fact.
_CONDITION = LazyPattern(
    r"\b(?:if|when|unless|once|whether|maybe|might|should|would|could)\b", re.IGNORECASE
)
# A changed value longer than this is a sentence, not a name.
CHANGE_VALUE_MAX_WORDS = 6


def _switch(clause: str) -> tuple[str, str] | None:
    """("correction", "Use polars instead of pandas for the event loads (pandas is too slow on
    the full export).") for a switch to a known tool (``ALTERNATIVES``); ("heuristic", the
    clause) for a switch to something else that says what for or what from; else None."""
    said = clause.strip().rstrip(".!")
    m = _SWITCH_SAID.match(said)
    if not m or said.endswith("?"):
        return None
    new, old = m.group("new").rstrip(".,"), (m.group("old") or "").rstrip(".,")
    rest = _WHEN.sub("", m.group("rest")).strip()
    purpose, _, tail = rest.partition(",")
    purpose, tail = purpose.strip(), tail.strip()
    mates = ALTERNATIVE_OF.get(new.lower(), frozenset())
    if not old:
        # "…, pandas is too slow": the tool it replaces, named in the same sentence.
        old = next(
            (w for w in re.findall(r"[\w.\-]+", rest) if w.lower() in mates - {new.lower()}), ""
        )
    known = new.lower() in ALTERNATIVE_OF or old.lower() in ALTERNATIVE_OF
    if known and ONE_OFF.search(said):
        return "heuristic", said.split(",")[0]  # "switch to polars for now"
    done = re.match(r"we(?:'ve|\s+have)?\s+(?:switched|moved|migrated)\b", said, re.IGNORECASE)
    if not known and done and _CODE_LIKE.search(new) and rest.startswith(":"):
        # "we moved to carrier-b: api.carrier-b.example": done, named as in code, with the
        # value that changed.
        value = rest[1:].split(",")[0].strip()
        if value and _EXACT_VALUE.search(value):
            return "change", f"We moved to {new}: {value}."
    if not known:
        # "switch from main to develop": explicit, but maybe today's task; "switch to the
        # main branch" names no old thing at all.
        return ("heuristic", said.split(",")[0]) if m.group("old") else None
    text = f"Use {new}"
    if old and not re.search(r"\b(?:instead\s+of|rather\s+than|over)\b", purpose):
        text += f" instead of {old}"
    if purpose:
        text += f" {purpose}"
    # A reason that names what was replaced ("pandas is too slow") stays; a task does not.
    if tail and (
        (old and tail.lower().startswith(old.lower()))
        or re.match(r"(?:because|since|as|it'?s|they'?re)\b", tail, re.IGNORECASE)
    ):
        text += f" ({tail.rstrip('.')})"
    return "correction", text + "."


# What makes a value going from one number to another a change for good, not a report ("the page
# load went from 2s to 9s after the deploy"): a day it starts from, or a setting's name.
_FOR_GOOD_FROM = LazyPattern(
    r"^from\s+(?:next\s+)?\w+\b|\b(?:from\s+(?:next\s+)?(?:monday|tuesday|wednesday|thursday"
    r"|friday|saturday|sunday|today|tomorrow|now\s+on|next\s+\w+)|as\s+of|starting|going\s+forward)\b",
    re.IGNORECASE,
)


def _from_to(s: str, head: str = "") -> tuple[str, str] | None:
    """("change", "The minimum premium is now £150 a year, changed from £120.") for "from Monday
    it goes up from £120 to £150 a year for all new quotes" after a preamble (``head``) that
    named it; None for a report of a number that moved ("the page load went from 2s to 9s")."""
    m = _FROM_TO.match(s)
    if not m or _NOT_SO.search(m.group("subject")) or ONE_OFF.search(s):
        return None
    said_for_good = _FOR_GOOD_FROM.search(s) or (
        _SETUP_NOUN.search(m.group("subject")) and not re.search(r"\b(?:went|was)\b", s)
    )
    if not said_for_good:
        return None
    value = m.group("value").strip()
    if len(value.split()) > CHANGE_VALUE_MAX_WORDS:
        return None
    subject = m.group("subject").strip()
    named = _NAMED_IN_HEAD.search(head) if head else None
    if subject.lower() == "it" and named:
        subject = named.group(1)  # "the minimum premium: from Monday it goes up …"
    subject = subject[:1].upper() + subject[1:]
    return "change", _WS.sub(" ", f"{subject} is now {value}, changed from {m.group('old')}.")


def _change(clause: str) -> tuple[str, str] | None:
    """("change", "The bucket moved to eu-central-1.") for a fact of the project's setup that
    changed, said plainly and naming its new value exactly; ("heuristic", …) for the same said
    with "I think" or about something else; else None."""
    s = clause.strip().rstrip(".!")
    if s.endswith("?"):
        return None
    count = _COUNT_NOW.match(s.rpartition(": ")[2])
    if count:
        return "change", f"{count.group('value')} now, not {count.group('old')}."
    hedge = _HEDGE.match(s)
    if hedge:
        s = s[hedge.end() :]
    head, _, tail = s.rpartition(": ")
    moved = None if hedge else _from_to(tail, head)
    if moved:
        return moved
    # "…, down from 8": the old value said too, so it is a change whatever it is about.
    was = _OLD_VALUE.search(s)
    # "…, -60°C now, not -70, and it only pages after 10 minutes above it": what else changed
    # with it goes on the memory (blind18).
    more = (was.group("more") or "") if was else ""
    if was:
        s = s[: was.start()]
    if not hedge and ": " in s:
        # "sales renegotiated the contracts: the first-reply promise is 4 hours now".
        head, _, tail = s.partition(": ")
        if len(head.split()) <= PREAMBLE_MAX_WORDS and not _CONDITION.search(head):
            s = tail.strip()
    to = None if hedge else _CHANGE_TO.match(s)
    if to and to.group("when").lower() == "now" and not _SETUP_NOUN.search(to.group("subject")):
        to = None  # "the count goes to 3 now": a moment, unless it is a setting
    if to and _EXACT_VALUE.search(to.group("value")) and not _NOT_SO.search(to.group("subject")):
        value = to.group("value").strip()
        if len(value.split()) <= CHANGE_VALUE_MAX_WORDS and not ONE_OFF.search(s):
            return "change", _WS.sub(" ", f"{to.group('subject')} is now {value}.")
    m = _CHANGE_SAID.match(s) or _CHANGE_NOW.match(s) or (was and _PLURAL_NOW.match(s))
    if not m and not hedge and "," in s:
        # "product signed off, we're dropping Android 7, minSdk is 26 now": the change is a
        # later part, after words that set no condition on it ("if we ship, the bucket is …");
        # "the synology package is dead, min go is 1.23 now, so …" (blind20): not the last.
        parts = s.split(",")
        for i in range(len(parts) - 1, 0, -1):
            head, part = ",".join(parts[:i]), parts[i].strip()
            if _CONDITION.search(head):
                continue
            m = _CHANGE_SAID.match(part) or _CHANGE_NOW.match(part)
            if m:
                s = part
                break
    if not m and not hedge and " and the " in s:
        # "rev C boards arrived and the SHT40 moved from I2C1 to I2C2 (PB10/PB11)" (blind34):
        # the change after what brought it.
        head, _, part = s.partition(" and ")
        if not _CONDITION.search(head):
            m = _CHANGE_SAID.match(part)
            s = part if m else s
    if not m:
        return None
    code = m.groupdict().get("code") or m.groupdict().get("env") or m.groupdict().get("limit")
    value = _WHEN.sub("", m.group("value")).strip()
    if not value or len(value.split()) > CHANGE_VALUE_MAX_WORDS:
        return None
    subject = _WHEN.sub("", m.group("subject")).strip()
    if _NOT_SO.search(subject):
        return None  # "the bucket hasn't moved", "the bucket will have moved"
    if not _EXACT_VALUE.search(value):
        return None  # "the ticket moved to done": nothing exact to keep
    prep = m.group("prep") or ""
    verb = _WS.sub(" ", m.group("verb"))
    if verb in ("is", "are"):
        verb += " now"  # "minSdk is 26 now": the memory says "minSdk is now 26."
    text = f"{subject} {verb} {prep}{value}" + (f", and {more.rstrip('.')}." if more else ".")
    settled = not hedge and not ONE_OFF.search(s)  # not "temporarily moved", "for now"
    # A setting named as in the code ("minSdk", "max_retries") is of the project's setup.
    # "… moved from I2C1 to I2C2": the old value said too.
    setup = bool(code) or bool(was) or prep.startswith("from ") or bool(_SETUP_NOUN.search(subject))
    kind = "change" if settled and setup else "heuristic"
    return kind, _WS.sub(" ", text)


# "switch state locking to the S3 native lockfile (use_lockfile = true)": a setting of the
# project switched to a new value, said as an order or as done; the rest after "and" is the
# task ("and drop the DynamoDB table").
_SWITCH_SETTING = LazyPattern(
    r"""^(?P<ask>(?:can|could)\s+(?:we|you)\s+)?(?:pls\s+|please\s+)?
        (?:let'?s\s+|we(?:'ve|\s+have|'re|\s+are)?\s+)?
        (?:switch(?:ed|ing)?|chang(?:e|ed|ing)|mov(?:e|ed|ing)
          # "bump the rate loop to 4 kHz": a setting given a new value (blind15)
          |(?P<set>bump(?:ed|ing)?|rais(?:e|ed|ing)|lower(?:ed|ing)?|increas(?:e|ed|ing)
            |decreas(?:e|ed|ing)|reduc(?:e|ed|ing)))\s+
        (?P<what>(?:the\s+|our\s+)?(?!(?:it|this|that|them|these|those|everything|over|from|to
          |us|me|you)\b)
          [\w\-.]+(?:\s+(?!to\b|from\b|off\b|out\b|away\b)[\w\-.]+){0,5}?)\s+
        (?:over\s+)?to\s+(?P<value>[^,;?]+?)(?:\s+and\s+.*|\s*,\s*(?:it|they|that)\b.*)?
        (?P<question>\?)?$""",
    re.IGNORECASE | re.VERBOSE,
)


# "let's move logging off env_logger and onto tracing", "we migrated the tests from nose to
# pytest": what moved, from what, to what. Kept when one end is a known tool
# (``ALTERNATIVES``) or a name from code (env_logger, date-fns); "move the button from left to
# right" names neither.
_MOVE_OFF = LazyPattern(
    r"""^(?:let'?s\s+|we(?:'ve|\s+have)?\s+)?
        (?:mov(?:e|ed)|switch(?:ed)?|migrat(?:e|ed)|port(?:ed)?)\s+
        (?P<what>(?:the\s+|our\s+)?(?!(?:it|this|that|them|everything)\b)[\w\-]+(?:\s+[\w\-]+){0,2}?)\s+
        (?:off(?:\s+of)?|away\s+from|from|out\s+of)\s+(?:the\s+)?`?(?P<old>[\w.\-/]+)`?
        (?P<old_more>(?:\s+(?!and\b|onto\b|to\b|into\b)[\w.\-/]+){0,2})\s*,?\s+
        (?:and\s+)?(?:(?:onto|to|over\s+to)\s+(?:the\s+)?|into\s+(?P<art>the\s+|an?\s+)?)`?(?P<new>[\w.\-/]+)`?
        (?P<new_more>\s+(?!(?:and|or|for|with|via|using|so|because|but|to|in|on|now)\b)[\w\-]+(?=\s*(?:[,;.]|$)))?
        (?P<rest>(?:[\s,].*)?)$""",
    re.IGNORECASE | re.VERBOSE,
)
# A name from code, or an acronym that names a technology (NVS, SPIFFS, S3).
_CODE_LIKE = LazyPattern(r"[_.\-/]|^[A-Z][A-Z0-9]{2,}$|[a-z][A-Z]|^[A-Z][a-z]+\d")
# Words that name no tool: "… into their own package", "move us off …".
_NOT_A_TOOL = LazyPattern(
    r"^(?:their|its|our|your|my|his|her|a|an|the|own|us|it|them|me|this|that)$", re.IGNORECASE
)
# A file or a folder: moving code between files is a task, not a choice of tool.
_FILE_LIKE = LazyPattern(r"\.[A-Za-z]{1,5}$|/")
# A setting switched to a value of at most this many words: a name and a note in parentheses
# ("the S3 native lockfile (use_lockfile = true)"); longer is a sentence.
SWITCH_VALUE_MAX_WORDS = CHANGE_VALUE_MAX_WORDS + 4


def _settled_match(pattern: LazyPattern, clause: str) -> re.Match[str] | None:
    """``pattern`` matched on ``clause`` said as settled: not a question, not for now."""
    s = clause.strip().rstrip(".!")
    if s.endswith("?") or ONE_OFF.search(s):
        return None
    return pattern.match(s)


def _move_off(clause: str) -> tuple[str, str] | None:
    """("correction", "Use tracing instead of env_logger for logging.") for a part of the
    project moved from one tool to another; else None."""
    m = _settled_match(_MOVE_OFF, clause)
    if not m:
        return None
    old, new = m.group("old").rstrip(".,"), m.group("new").rstrip(".,")
    what = m.group("what").strip()
    if _NOT_A_TOOL.match(new) or _NOT_A_TOOL.match(what.split()[-1]):
        return None  # "… into their own package", "move us off …": no tool named
    if _FILE_LIKE.search(old) or _FILE_LIKE.search(new):
        return None  # "move the enums out of helpers.py into enums.py": a refactoring task
    known = old.lower() in ALTERNATIVE_OF or new.lower() in ALTERNATIVE_OF
    # "we moved email from Mailgun to Postmark" (blind24): done, between two named services.
    done = re.match(
        r"we(?:'ve|\s+have)?\s+(?:moved|switched|migrated|ported)\b", clause.strip(), re.I
    )
    named = bool(done) and old[:1].isupper() and new[:1].isupper()
    if not (known or named or _CODE_LIKE.search(old) or _CODE_LIKE.search(new)):
        return None
    what = re.sub(r"^(?:the|our)\s+", "", what, flags=re.IGNORECASE)
    # "into a Room table": the thing, not only its name (the old fact's words are the measure
    # of what was retired: "Room" alone reads as a room of the palace).
    more = m.group("new_more") or ""
    new = f"{(m.group('art') or '').strip()} {new}{more}".strip() if more else new
    text = f"Use {new} instead of {old} for {what}"
    rest = _WHEN.sub("", m.group("rest")).strip()
    how = re.match(r"(?:with|via|through|using)\s+[^,;.]+", rest, re.IGNORECASE)
    if how:
        text += f" ({how.group(0)})"  # "with tracing-subscriber"
    return "correction", text + "."


# "swap Glide out for Coil for image loading", "replace moment with dayjs across the app": one
# named thing for another, for a purpose or everywhere ("replace the loop with a comprehension"
# names no tool, "replace foo with bar in utils.py" is an edit).
_SWAP = LazyPattern(
    r"""^(?:let'?s\s+)?(?:swap|replace|trade)\s+(?!(?:the|a|an|this|that|it|these|those|our|my)\b)
        `?(?P<old>[\w.\-/]+)`?\s+(?:out\s+)?(?:for|with)\s+`?(?P<new>[\w.\-/]+)`?
        \s+(?P<why>for\s+(?!now\b|the\s+moment\b)[\w\s\-']{3,40}?|everywhere|across\s+the\s+\w+)
        \s*(?:[,;.].*)?$""",
    re.IGNORECASE | re.VERBOSE,
)


def _swap(clause: str) -> tuple[str, str] | None:
    """("correction", "Use Coil instead of Glide for image loading.") for one named tool swapped
    for another; else None."""
    m = _settled_match(_SWAP, clause)
    if not m or _NOT_A_TOOL.match(m.group("new")) or _FILE_LIKE.search(m.group("new")):
        return None
    why = m.group("why").strip()
    return "correction", f"Use {m.group('new')} instead of {m.group('old')} {why}."


# A version alone: "5.80", "v2.3.1".
_BARE_VERSION = LazyPattern(r"^v?\d+(?:\.\d+)*$", re.IGNORECASE)
# A value with a name of its own: "Cloudflare Pages", "Fly.io".
_NAMED_VALUE = LazyPattern(r"^(?:the\s+)?[A-Z][\w.\-]+")
# A place in the code, not a value: "move the constants to the top of the file".
_A_PLACE = LazyPattern(
    r"^(?:the\s+)?(?:top|bottom|end|start|beginning|left|right|front|back|middle|next|previous"
    r"|other|same)\b",
    re.IGNORECASE,
)
# "switch saves to something binary": the value without the word that only says it is one.
_VAGUE_VALUE = LazyPattern(r"^(?:something|sth|smth|some)\s+(?=\w)", re.IGNORECASE)
# A value that only points back: "change the red warning to match" (blind23) sets nothing.
_POINTS_BACK = LazyPattern(
    r"^(?:match|fit|suit|it|this|that|them|the\s+same|whatever|the\s+new\s+one)\b", re.IGNORECASE
)


def _switch_setting(clause: str) -> tuple[str, str] | None:
    """("change", "State locking switched to the S3 native lockfile (use_lockfile = true).")
    for a setting of the project switched to an exact new value; ("switch", "The loss
    switched to dice + focal.") for anything else switched to something, asked politely too
    ("can we switch saves to something binary?"): capture keeps that only where it retires a
    fact memory holds about the same thing (a task otherwise: "switch the tab to dark mode");
    else None."""
    s = clause.strip().rstrip(".!")
    if ONE_OFF.search(s):
        return None
    m = _SWITCH_SETTING.match(s)
    if not m or (m.group("question") and not m.group("ask")):
        return None
    what = m.group("what").strip()
    value = _VAGUE_VALUE.sub("", _WHEN.sub("", m.group("value")).strip())
    if not value or len(value.split()) > SWITCH_VALUE_MAX_WORDS or _POINTS_BACK.match(value):
        return None
    # Something exact to keep (a name from code, a version, an acronym), and a thing of the
    # setup: "switch the tab to dark mode" is neither.
    # "move the queues to redis": a known tool is as exact as a version.
    known = value.lower() in ALTERNATIVE_OF and bool(_SETUP_NOUN.search(what))
    exact = known or (
        bool(_EXACT_VALUE.search(value))
        and bool(_SETUP_NOUN.search(what) or _EXACT_VALUE.search(value.split()[-1]) or "(" in value)
    )
    if m.group("set"):
        # "bump the rate loop to 4 kHz" is kept; "bump the aws provider to 5.80" is a version
        # bump, out of date by the next one, and "bump the font size to larger" keeps nothing.
        if exact and not _BARE_VERSION.match(value) and not m.group("question"):
            return "change", f"{what} is now {value}."
        return None
    if exact and not (m.group("ask") or m.group("question")):
        return "change", f"{what} switched to {value}."
    done = re.match(r"we(?:'ve|\s+have)?\s+(?:switched|moved|migrated)\b", s, re.IGNORECASE)
    if done and _NAMED_VALUE.search(value) and not _A_PLACE.match(value):
        # "we moved hosting to Cloudflare Pages yesterday": said as done, to something named.
        return "change", f"{what} switched to {value}."
    if _A_PLACE.match(value) or _FILE_LIKE.search(value):
        return None  # a refactoring: "move the enums to enums.py", "… to the top of the file"
    return "switch", f"{what} switched to {value}."


def _instead_of(text: str, before: str) -> str:
    """ "Use postgres …" with " instead of sqlite" when ``before`` names a tool it stands in
    for (``ALTERNATIVES``)."""
    m = re.match(r"Use (\S+)", text)
    if not m:
        return text
    mates = ALTERNATIVE_OF.get(m.group(1).lower(), frozenset()) - {m.group(1).lower()}
    old = next((w for w in re.findall(r"[\w.\-]+", before) if w.lower() in mates), "")
    return f"{text[: m.end()]} instead of {old}{text[m.end() :]}" if old else text


# "we're dropping onesignal (they doubled the price), push goes through firebase cloud
# messaging now" (blind19): what is dropped, then what is used now.
_DROPPING = LazyPattern(
    r"""^(?:we'?re|we\s+are|we(?:'ve|\s+have)?)\s+(?:dropping|dropped|ditching|ditched|off)\s+
        (?P<old>(?:the\s+|our\s+)?[\w.\-]+(?:\s+[\w.\-]+){0,2}?)\s*(?:\([^()]*\))?\s*,\s*
        (?P<now>(?!(?:it|this|that|they|we|i|you)\b)[\w\-]+(?:\s+[\w\-]+){0,2}?\s+
          (?:goes|go|runs?|is|are|lives?|uses?)\s+(?:through|via|on|in|with)?\s*[^,;]+?\s+now)\s*[.!]?$""",
    re.IGNORECASE | re.VERBOSE,
)


# "marketing moved the newsletter off mailchimp, it's brevo now" (blind21): moved off one thing,
# then what it is now.
_MOVED_OFF_NOW = LazyPattern(
    r"""^(?:(?:we|they|[a-z]+)\s+)?(?:moved|switched|migrated)\s+
        (?P<what>(?:the\s+|our\s+)?[\w\-]+(?:\s+[\w\-]+)?)\s+(?:off(?:\s+of)?|away\s+from|from)\s+
        (?P<old>[\w.\-]+)\s*,\s*(?:it'?s|it\s+is|they'?re|it'?s\s+on)\s+(?:on\s+)?(?P<new>[\w.\-]+)
        \s+now\b""",
    re.IGNORECASE | re.VERBOSE,
)
# "postgres is on pg-02 now, 10.40.2.27" (blind21): a tool of the setup and where it is now.
_TOOL_NOW = LazyPattern(
    r"""^(?P<subject>[\w\-]+)\s+(?P<verb>(?:is|runs|lives)\s+(?:on|at|in))\s+(?P<value>[\w.\-:/]+)
        \s+now(?:\s*,\s*(?P<more>[\w.\-:/]+)(?=\s*(?:,|$)))?""",
    re.IGNORECASE | re.VERBOSE,
)


def _moved_now(clause: str) -> tuple[str, str] | None:
    """("change", "The newsletter moved from mailchimp to brevo.") or ("change", "Postgres is
    now on pg-02 (10.40.2.27).") for a thing of the setup said to be elsewhere now, also after
    what happened first ("pg-01 lost its disk overnight … - postgres is on pg-02 now"); else
    None."""
    s = clause.strip().rstrip(".!")
    if s.endswith("?") or ONE_OFF.search(s):
        return None
    m = _MOVED_OFF_NOW.match(s)
    if m:
        what = re.sub(r"^(?:the|our)\s+", "", m.group("what"), flags=re.IGNORECASE)
        return "change", f"The {what} moved from {m.group('old')} to {m.group('new')}."
    for part in re.split(r"\s[-\u2013\u2014]\s", s)[::-1]:
        t = _TOOL_NOW.match(part.strip())
        if not t or not _EXACT_VALUE.search(t.group("value")):
            continue
        subject = t.group("subject")
        if subject.lower() not in ALTERNATIVE_OF and not _SETUP_NOUN.search(subject):
            continue
        more = (
            f" ({t.group('more')})"
            if t.group("more") and _EXACT_VALUE.search(t.group("more"))
            else ""
        )
        verb = t.group("verb").split()
        return (
            "change",
            f"{subject[:1].upper()}{subject[1:]} {verb[0]} now {verb[1]} {t.group('value')}{more}.",
        )
    return None


def _dropping(clause: str) -> tuple[str, str] | None:
    """("change", "Push goes through firebase cloud messaging now; we're off onesignal.") for
    a tool dropped and what replaces it, said in one breath; else None."""
    m = _settled_match(_DROPPING, clause)
    if not m:
        return None
    now = m.group("now").strip()
    # "we're off X" last: what it replaces, in the words capture retires the old fact by.
    return "change", f"{now[:1].upper()}{now[1:]}; we're off {m.group('old')}."


# "from monday it's 5 registered nurses on nights minimum" (blind23): a value that holds from a
# day on.
_FROM_DAY = LazyPattern(
    r"""^from\s+(?:(?:next\s+)?(?:monday|tuesday|wednesday|thursday
        |friday|saturday|sunday|week|month)|today|tomorrow|now\s+on|the\s+\d{1,2}(?:st|nd|rd|th)?)\s*,?\s+
        (?:it'?s|it\s+is|(?:the|our)\s+[\w\-]+(?:\s+[\w\-]+)?\s+(?:is|are))\s+(?P<value>[^,;]+?)\s*[.!]?$""",
    re.IGNORECASE | re.VERBOSE,
)


def _from_day(clause: str) -> tuple[str, str] | None:
    """("change", the clause) for a value said to hold from a day on, with a number in it."""
    s = re.sub(r"^change\s+of\s+plans?\s*[,:]?\s*", "", clause.strip(), flags=re.IGNORECASE)
    m = _FROM_DAY.match(s)
    if not m or not re.search(r"\d", m.group("value")) or s.endswith("?"):
        return None
    return "change", f"{s[:1].upper()}{s[1:].rstrip('.!')}."


def change_said(clause: str) -> tuple[str, str] | None:
    """(kind, text) for a switch or a change said plainly in ``clause``: "correction" (a switch
    between tools, kept as "Use X instead of Y …"), "change" (a fact that changed), "heuristic"
    (the same, for the inbox); None when it says none."""
    said = (
        _from_day(clause)
        or _dropping(clause)
        or _moved_now(clause)
        or _switch(clause)
        or _move_off(clause)
        or _swap(clause)
        or _change(clause)
        or _switch_setting(clause)
    )
    if said is None and ", " in clause:
        # "we got redis on the server now, move the queues to redis": the switch after what
        # made it possible (not after a condition: "if the load grows, move …").
        head, _, last = clause.rpartition(", ")
        if not _CONDITION.search(head):
            said = _switch(last) or _switch_setting(last)
            if said and said[0] == "correction" and " instead of " not in said[1]:
                # "sqlite is gone as of today, i moved everything into the shared postgres":
                # the tool it replaces, named before.
                said = ("correction", _instead_of(said[1], head))
    if said is None and ", " in clause:
        # "switching the logging to weights & biases, the group pays for a team account now":
        # the switch, then why.
        said = _switch_setting(clause.partition(", ")[0])
    if said is None and ": " in clause:
        # "update on email: we moved email from Mailgun to Postmark, …" (blind24)
        head, _, tail = clause.partition(": ")
        if len(head.split()) <= PREAMBLE_MAX_WORDS and not _CONDITION.search(head):
            said = change_said(tail)
    return said


# What a preamble names: its last "the …" phrase ("… reviewed the minimum premium").
_NAMED_IN_HEAD = LazyPattern(r"\b((?:the|our)\s+[\w\-]+(?:\s+[\w\-]+){0,2})\s*$", re.IGNORECASE)
