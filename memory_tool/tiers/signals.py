"""What a session says that is worth keeping, as clean one-fact lines: the signals capture reads.

Two sources. The person's own prompts: a rule ("never …", "always …", "don't …", "remember:
…"), a correction ("no, use X", "use X instead of Y", "switch to polars for the event loads"),
a fact of the project's setup that changed ("the bucket moved to eu-central-1"), a statement
about themselves ("I prefer terse answers", "I'm Dana, backend") or about how they want answers
("Keep answers terse."), and weaker hints (the rest of what looks like a correction, a change
heard of) that only go to the inbox. A question, a hypothetical or a hedge is none of these.
Claude's text: the tags ``[DECISION]``, ``[GOTCHA]``, ``[REUSE]``,
``[DEFER]``, and nothing else (what Claude writes is never taken for a rule of the person's).

Each signal is one fact: conversational lead-ins stripped ("no,", "also", "actually", "ok so",
"remember:"), cut at the end of its sentence (a tag does not swallow the rest of the line or a
trailing "done"), two facts on one line split in two. Text inside a fenced code block, a quoted
line (``> …``) or a log line is not prose anyone said: it is never a signal. ``<private>`` spans
are removed and secrets redacted before the text is split, so nothing private reaches a signal.

Hook path (the prompt and Stop hooks fold signals into the session state): stdlib ``re`` only.
"""

from __future__ import annotations

import re

from ..base.privacy import LazyPattern, sanitize, strip_injected
from .changes import ALTERNATIVE_OF, ONE_OFF, PREAMBLE_MAX_WORDS, change_said
from .person import TRAIT_SAID, identity, preference
from .said import (
    BULLET,
    MIN_FACT_CHARS,
    RULE_OPENER,
    SAID_BEFORE,
    Signal,
    clauses,
    prose,
    sentences,
    strip_lead_in,
    tidy,
)
from .standing import IMPERATIVE as _IMPERATIVE
from .standing import REPORT as _REPORT
from .standing import STANDING_ORDER as _STANDING_ORDER
from .standing import said_for_good as _said_for_good
from .standing import standing as _standing

_WS = re.compile(r"\s+")

# A prompt whose prose (code blocks and quoted lines aside) is longer than this is a task
# description or a paste, not a rule: rules are said in a sentence or two.
PROSE_MAX_CHARS = 600
# A long task may still carry a standing rule in passing ("… every override needs an audit row
# too. oh and never put a buyer's name or email in console.log, log the order id only. the
# tablets …": a held-out week lost it, in a 774-character prompt). Up to this length only its
# plainest rules are kept, a sentence that opens with never/always/don't (after a lead-in);
# longer is a paste.
LONG_PROSE_MAX_CHARS = 2_400
# A prompt longer than this is not scanned at all (a pasted log or file): the code-block
# stripping alone would cost the prompt hook time for nothing.
SCAN_MAX_CHARS = 20_000
# A rule needs a verb and an object: "never again" is no rule.
MIN_RULE_WORDS = 3
# A rule this short that leans on a pronoun ("Never use tabs in them.") needs the conversation
# around it to mean anything: it goes to the inbox, where a person can reword it.
PRONOUN_RULE_MAX_WORDS = 6


# "switch": something switched to something else ("switch the loss to dice + focal"), kept only
# where it retires a fact memory holds (capture); a task otherwise.
# "statement": said for good in no shape signals knows, by the statement model's word.
USER_KINDS = (
    "correction",
    "rule",
    "change",
    "switch",
    "identity",
    "preference",
    "heuristic",
    "statement",
)
TAG_KINDS = ("decision", "gotcha", "reuse", "defer")
# Explicit signals: captured as live memories in `capture.mode: auto`. A heuristic goes to the
# inbox, for a person to accept.
EXPLICIT_KINDS = (
    "correction",
    "rule",
    "change",
    "identity",
    "preference",
    "statement",
    *TAG_KINDS,
)

# --- the person's signals ----------------------------------------------------------------------

# "Don't know why", "never mind", "always happy to": words of a rule that make no rule.
_NOT_A_RULE = LazyPattern(
    r"^(?:don'?t|do\s+not)\s+(?:know|think|understand|see|get|care|remember|worry|mind|bother|"
    r"have|need\s+to\s+(?:ask|worry))\b|^never\s*mind\b|^always\s+(?:happy|glad|the\s+same)\b"
    # Pleasantries that open with "no": a week's "ok, no problem, thanks" became an inbox
    # candidate "No problem." that every later brief then announced.
    r"|^no\s+(?:problem|problems|worries|thanks|thank\s+you|need|rush|hurry|idea)\b"
    # "no task, just wanted to say 0.3 got 40 stars" (blind20): a hello, which as a hint made
    # the session one of substance, the latest for "where were we?".
    r"|^no\s+(?:task|tasks|question|questions|request|agenda)\b"
    # "leave me a note so i can pick this up next time" asks for a handoff (blind22).
    r"|^(?:leave|write|drop)\s+(?:me\s+|us\s+)?(?:a\s+)?(?:short\s+)?(?:note|handoff|summary)\b"
    r"|^write\s+(?:it\s+)?down\s+where\b",
    re.IGNORECASE,
)
_RULE = LazyPattern(
    r"""^(?:
        never|always|don'?t|do\s+not|from\s+now\s+on|going\s+forward|make\s+sure\s+(?:to\s+)?always
      # "there has to be at least 11 hours between the end of one shift and the next" (blind23)
      | there\s+(?:(?:has|have)\s+to|must)\s+(?:always\s+)?be\s+(?:at\s+least|at\s+most
        |no\s+more\s+than|no\s+fewer\s+than|(?:less|more|fewer)\s+than|exactly|a\s+minimum
        |a\s+maximum|one\s+\w+\s+per)
      | in\s+this\s+(?:project|repo(?:sitory)?|codebase)\b.*\b(?:always|never|don'?t|use|prefer)
      | we\s+(?:always|never|don'?t|do\s+not)
      | (?:you|we)\s+(?:should|must)\s+(?:always|never|not)
      | prefer\s+\S+.*\b(?:over|to|instead\s+of|rather\s+than)\b
      | (?:(?:every|all|any|each)\s+|anything\s+|everything\s+|whatever\s+)(?:[\w\-.']+\s+){1,5}?
        (?:has\s+to|have\s+to|must|needs?\s+to)
    )\b""",
    re.IGNORECASE | re.VERBOSE,
)
# "use X instead of Y", "use X, not Y", "use the factory, don't build them by hand": an order
# that says what it replaces ("…, don't push yet" is today's).
_INSTEAD = LazyPattern(
    r"\b(?:instead\s+of|rather\s+than)\b"
    r"|^(?:use|prefer|stick\s+with|go\s+with|pick|call|import|install|target|pin)\b[^,]*,\s*"
    r"(?:not|never|don'?t|do\s+not)\s+(?!just\b|only\b|yet\b)(?!.*\b(?:yet|now|today)\b)",
    re.IGNORECASE,
)
# The old heuristic for a correction, kept for what the explicit patterns do not take: hints
# for the inbox.
_WEAK = LazyPattern(
    r"^(?:no\b|nope\b|wrong\b|not like that\b|don'?t\b|do not\b|never\b|always\b|stop\b|avoid\b)"
    r"|\binstead\b|\b(?:you|we) (?:should|must) (?:always|never|not)\b",
    re.IGNORECASE,
)
_PRONOUN_OBJECT = LazyPattern(
    r"^(?:always\s+|never\s+|don'?t\s+)?\w+\s+(?:(?:it|them)\b|(?:this|that|those|these)\s*(?:[,.;!]|$))",
    re.IGNORECASE,
)
_THIS_PLACE = re.compile(
    r"\b(?:in\s+)?this\s+(?:project|repo|repository|codebase|team|service|app)\b|\bhere\.?$",
    re.IGNORECASE,
)
_PRONOUN = re.compile(r"\b(?:it|them|this|that|these|those|there|here)\b", re.IGNORECASE)


# A preamble before a colon that says a rule or a preference comes: "one thing I want to get
# ahead of: don't pass email bodies …", "one preference before we start: when you explain
# something, show the code first" (at most PREAMBLE_MAX_WORDS before the colon).
_PREAMBLE = LazyPattern(r"^(?P<pre>[^:.!?]{2,80}):\s+(?P<rest>\S.*)$")
# The same before a spaced dash, when a rule follows: "while you're in there - every narration
# clip has to ship with subtitles", "timestamps - everything gets stored in UTC" (blind18).
_DASH_PREAMBLE = LazyPattern(
    r"^(?P<pre>[^:.!?\-\u2013\u2014]{2,60}?)\s+[-\u2013\u2014]\s+(?P<rest>\S.*)$"
)
_OPENS_A_RULE = LazyPattern(RULE_OPENER, re.IGNORECASE)
_PREFERENCE_WORD = LazyPattern(
    r"\bpreference\b|\bprefer\b|\bhow i like\b|\b(?:about|abt)\s+me\b"
    # "one thing about answers: put the full file path … on the first line" (blind19)
    r"|\b(?:about|abt|for)\s+(?:your\s+|the\s+)?(?:answers|replies|responses)\b"
    # "one thing on style: when you give me commands put them in one block" (blind20)
    r"|\b(?:on|about|abt|re)\s+style\b",
    re.IGNORECASE,
)
# A preamble that names what follows a rule: "house style: early returns over nested ifs",
# "rule of thumb: one migration per PR", "convention here: …".
_RULE_WORD = LazyPattern(
    r"\b(?:rules?|conventions?|polic(?:y|ies)|house\s+style|style\s*guide|standards?|guidelines?|"
    r"principles?|ground\s+rules?|reminder|gotcha|news|psa|heads\s+up|fyi)\b",
    re.IGNORECASE,
)

_NTH_RULE = LazyPattern(
    r"\b(?:first|second|third|next|last|new|another|one\s+more|a|the)\s+rules?\b", re.IGNORECASE
)
# A label names what follows; a clause with a verb says something itself: "every rule needs a
# log: directive …" is one sentence about Snakemake rules, not a label and a rule.
_SAYS_SOMETHING = LazyPattern(
    r"\b(?:must|should|needs?|has|have|had|is|are|was|were|does|do|did|can|will|gets?|got)\b",
    re.IGNORECASE,
)
# A preamble that names a rule may say more about it ("reminder from the data-protection side,
# since this is new code: …"): at most this many words.
LABELLED_PREAMBLE_MAX_WORDS = 14


# "and the version thing, any change to what goes over the wire means a new protocol version":
# what the person comes back to, before the rule.
_THING_PREAMBLE = LazyPattern(
    r"^(?:(?:and|also|oh|re)\s+)*(?:about\s+)?the\s+(?:[\w\-]+\s+){1,3}?thing,\s+(?=\S)",
    re.IGNORECASE,
)


# "no cobra, no urfave/cli, no cli framework at all": what is never used, listed (blind20).
_NO_LIST = LazyPattern(
    r"^no\s+(?!problem|worries|need|idea|thanks)[\w./\-]+(?:\s+[\w./\-]+){0,3}?"
    r"(?:,\s*(?:and\s+|or\s+)?no\s+[\w./\-]+(?:\s+[\w./\-]+){0,4}?)+\s*(?:[.!]|$|\s[-\u2013\u2014]\s)",
    re.IGNORECASE,
)
_NAME_THEN = LazyPattern(
    r"^(?P<who>[A-Za-z\u00c0-\u00ff][a-z\u00df-\u00ff]+\s+here(?:\s*\([^()]{2,40}\))?)\s*[\u2014\u2013]\s+"
    r"(?P<rest>\S.{8,})$",
)
# A preamble that says the rule after it was said before (blind17).
_SAME_AS_BEFORE = LazyPattern(
    r"\bsame\s+(?:deal|thing|rule|story|as\s+(?:before|always|ever|last\s+time|yesterday))\b"
    r"|\blike\s+(?:before|last\s+time|yesterday|i\s+said)\b",
    re.IGNORECASE,
)


# A topic named before a colon ("texts: …", "timestamps: …"): at most this many words, no verb,
# and not a plan ("plan: each rule gets its own conda env" is today's plan).
TOPIC_PREAMBLE_MAX_WORDS = 3
_PLAN_WORD = LazyPattern(
    r"\b(?:plan|todo|to-do|idea|task|step|goal|proposal|question|option|thought|draft|next)s?\b",
    re.IGNORECASE,
)


# A preamble that says a request follows (blind20).
_REQUEST_WORD = LazyPattern(r"\b(?:request|favou?r|ask|one\s+thing|small\s+thing)\b", re.IGNORECASE)


def _drop_preamble(sentence: str) -> tuple[str, str]:
    """``sentence`` without a short preamble before a colon when what follows is a rule or a
    labelled preference or rule; and the label the preamble gave ("preference", "rule", "")."""
    thing = _THING_PREAMBLE.match(sentence)
    if thing:
        sentence = sentence[thing.end() :]
    m = _PREAMBLE.match(sentence)
    labelled = m is not None and bool(_RULE_WORD.search(m.group("pre")))
    if labelled and m is not None and _NTH_RULE.search(m.group("pre")):
        labelled = False  # "first rule: fastqc on all raw fastqs": a pipeline's rule, a task
    most = LABELLED_PREAMBLE_MAX_WORDS if labelled else PREAMBLE_MAX_WORDS
    if m and _NO_LIST.match(strip_lead_in(m.group("rest"))[0]):
        most = LABELLED_PREAMBLE_MAX_WORDS  # "…, and its a hill i will die on: no cobra, no …"
    if not m or len(m.group("pre").split()) > most:
        return sentence, ""
    rest = m.group("rest")
    if _PREFERENCE_WORD.search(m.group("pre")):
        return rest, "preference"
    if labelled and not _REPORT.search(sentence) and not _SAYS_SOMETHING.search(m.group("pre")):
        return rest, "rule"
    bare, _ = strip_lead_in(rest)
    if _RULE.match(bare) or _OPENS_A_RULE.match(bare) or _NO_LIST.match(bare):
        return rest, ""
    if identity(bare):
        return rest, ""  # "quick intro since you havent seen this one: I'm Tomás, …" (blind24)
    if _SAME_AS_BEFORE.search(m.group("pre")) and _standing(bare):
        return rest, ""  # "same deal as the ajax thing yesterday: nothing goes live without …"
    if _said_for_good(bare) and not _ERROR_SAID.search(m.group("pre")):
        # "While you are in there: quantities are always in base units, never cases"; not
        # "plan: each rule gets its own conda env" (a plan), nor "… -> ValueError: mutable
        # default … is not allowed" (an error message).
        return rest, ""
    if bare.rstrip().endswith("?") and _POLITE_RULE.match(bare):
        return rest, ""  # "one small request, if I may: could every column …?"
    if preference(bare):
        return rest, ""  # "ok general thing, for both repos: … give me the commands first …"
    if _REQUEST_WORD.search(m.group("pre")) and (
        _standing(bare) or (_IMPERATIVE.match(bare) and _INSTEAD.search(bare))
    ):
        return rest, ""  # "and a small request: please call every geometry column geom - not …"
    topic = m.group("pre")
    if (
        len(topic.split()) <= TOPIC_PREAMBLE_MAX_WORDS
        and not _SAYS_SOMETHING.search(topic)
        and not _PLAN_WORD.search(topic)
        and _standing(bare)
    ):
        return rest, ""  # "texts: everything the user sees goes in the ARB files" (blind19)
    if ": " in rest:
        # "also the Book and Coach: texts: everything …"; not a linter's "gosec: G404: Use of
        # weak random number generator (…)".
        inner, label = _drop_preamble(rest)
        if inner != rest and _standing(strip_lead_in(inner)[0]):
            return inner, label
    return sentence, ""


def _drop_dash_preamble(sentence: str) -> str:
    """``sentence`` without a few words and a spaced dash before a rule said as a standing
    instruction ("while you're in there - every clip has to ship with subtitles"); a task
    before the dash stays (the rule after it is cut off as a clause of its own)."""
    m = _DASH_PREAMBLE.match(sentence)
    if not m or len(m.group("pre").split()) > PREAMBLE_MAX_WORDS:
        return sentence
    bare, _ = strip_lead_in(m.group("rest"))
    if _RULE.match(bare) or _standing(bare):
        return m.group("rest")
    return sentence


# "no mysql ENUM columns, use a string column + a backed enum cast": what not to use, then what
# to use instead.
_NO_X_USE_Y = LazyPattern(
    r"^no\s+(?!problem|worries|need|idea|thanks)[^,;]{2,60}?,\s*(?:use|prefer|go\s+with|stick\s+with|pick)\s",
    re.IGNORECASE,
)
# "not next-auth, clerk - auth() from @clerk/nextjs": what not to use, then what to use.
_NOT_X_Y = LazyPattern(
    r"^not\s+(?!now\b|yet\b|really\b|sure\b|bad\b|quite\b|exactly\b|that\b|this\b|it\b)"
    r"[\w@./`()\-]+(?:\s+[\w@./`()\-]+){0,2},\s+"
    r"(?!thanks\b|later\b|please\b|pls\b|just\b|it\b|that\b|this\b|i\b|we\b|you\b|but\b)[\w@./`\-]+",
    re.IGNORECASE,
)
# "can we stop using ObservableObject.": an order said as a question, without its "?".
_STOP_DOING = LazyPattern(
    r"^(?:can|could)\s+(?:we|you)\s+(?:please\s+)?(?:stop|quit)\s+(?:\w+ing|with)\b[^?]*$",
    re.IGNORECASE,
)
_USE_INSTEAD = LazyPattern(r"^(?:use|switch\s+to|go\s+with|move\s+to)\b", re.IGNORECASE)
# "X, not Y" said after a "no"/"wrong": with a name from code it corrects how things are done.
_BUT_NOT = LazyPattern(r",\s*not\s+\S", re.IGNORECASE)
_CODE_WORD = LazyPattern(r"\b\w+_\w+\b|\b\w*[a-z][A-Z]\w*\b|\w\(\)|`[^`]+`")
# "content-defined chunking, fastcdc, not fixed-size blocks": what to use and what not, with
# no verb, after a "no".
_THIS_NOT_THAT = LazyPattern(
    r"^(?!(?:i|we|you|it|they|this|that|there)\b)"
    r"(?!.*\b(?:is|are|was|were|has|have|had|does|did|goes|went|'s)\b)[\w\-./`]+(?:\s+[\w\-./`]+){0,4}"
    r"(?:,\s*[\w\-./`]+(?:\s+[\w\-./`]+){0,3})?,\s*not\s+[\w\-./`]+(?:\s+[\w\-./`]+){0,3}[.!]?$",
    re.IGNORECASE,
)
# After a "no": a name alone, then why ("bcrypt — vapor ships it").
_NAME_THEN_WHY = LazyPattern(r"^[\w.\-/]+\s+[\u2014\u2013]\s+(?=\S)", re.IGNORECASE)
# "no, steady_clock for anything timing": a correction that leaves out its "use".
_FOR_ANYTHING = LazyPattern(
    r"^`?[\w.:/<>\-]+(?:\(\))?`?\s+for\s+(?:anything|everything|all|any|every|each)\b",
    re.IGNORECASE,
)


# A preamble that quotes a failure: what follows its colon is the message, not a rule.
_ERROR_SAID = LazyPattern(r"error|exception|traceback|warning|failed|->|=>", re.IGNORECASE)


# What an order is for, said before it: "for who is online use Phoenix.Presence, not own
# counter", "to parse dates, call parse_iso". The order after it is judged as if said alone.
_PURPOSE = LazyPattern(
    # "because the sites sit in different time zones, we store every timestamp in UTC"
    r"^because\s+[^,;]{3,160},\s+(?=we\s|you\s|always\b|never\b|don'?t\b|please\b|use\b)|"
    # "once its on prod dont run indexer:reindex by hand" (blind26)
    r"^once\s+(?:it'?s|its|it\s+is|we'?re|this\s+is)\s+[^,;]{1,40}?,?\s+(?=don'?t\b|dont\b|never\b|always\b)|"
    # "whatever the downlink says, never go under 15 minutes between uplinks" (blind23)
    r"^(?:whatever|no\s+matter\s+(?:what|how))\s+[^,;]{2,80},\s+(?=never\b|always\b|don'?t\b|do\s+not\b)|"
    r"^(?:for|to)\s+(?!(?:this|that|these|those|now|today|the\s+moment)\b)"
    r"(?:[\w\-.'/`]+\s+){0,5}?[\w\-.'/`]+,?\s+(?=(?:use|call|go\s+with|stick\s+with|pick|we\s+use)\b)",
    re.IGNORECASE,
)


# "could every column that holds a quantity end in its unit, like consumption_kwh?": a rule
# asked for politely.
# "would you mind always launching training with CUDA_VISIBLE_DEVICES=1 from now on?" too.
_POLITE_RULE = LazyPattern(
    r"^(?:could|can|would|will)\s+(?:you\s+)?(?:mind\s+)?(?:please\s+)?"
    r"(?:(?:always|never)\s|mak(?:e|ing)\s+sure\s+(?:that\s+)?(?:every|each|all|any)\s"
    r"|(?:every|each|all)\s)",
    re.IGNORECASE,
)


# "week() is wrong, reporting weeks are ISO weeks: isoweek() with isoyear()": a name from code
# said to be wrong, then what is right (blind16).
_CODE_IS_WRONG = LazyPattern(
    r"^(?P<code>`[^`]+`|[\w.:$]+\(\)|\w+_\w+|\w*[a-z][A-Z]\w*)\s+is\s+(?:wrong|incorrect|not\s+right)"
    r"\s*[,;:\-\u2013\u2014]\s*(?P<rest>\S.*)$",
    re.IGNORECASE,
)


# "we're EU868, not US915", "it's pnpm in this repo, not npm" (blind23): what the project is on,
# against what it is not, with a name on one side (a digit, a capital, a known tool): "it's a
# bug, not a feature" is no correction.
_WE_ARE_X_NOT_Y = LazyPattern(
    r"^(?:we'?re|we\s+are|it'?s|this\s+is)\s+(?:on\s+|using\s+)?(?P<x>[\w.\-/]+(?:\s+[\w.\-/]+){0,4}?)"
    r",\s*not\s+(?P<y>[\w.\-/]+)",
    re.IGNORECASE,
)


def _on_x_not_y(fact: str) -> bool:
    m = _WE_ARE_X_NOT_Y.match(fact)
    if not m:
        return False
    named = re.compile(r"[A-Z0-9_./]")
    x, y = m.group("x").split()[0], m.group("y")
    return any(named.search(w) or w.lower() in ALTERNATIVE_OF for w in (x, y))


def _says_instead(fact: str, after_no: bool) -> bool:
    """Whether ``fact`` says what to use or do instead, in the shapes without a leading verb:
    "no X, use Y", "not X, Y", "can we stop using X", and after a "no"/"wrong": "steady_clock
    for anything timing", "raw tables are partitioned on reading_date, not ingestion time"."""
    if _NO_X_USE_Y.match(fact) or _NOT_X_Y.match(fact) or _STOP_DOING.match(fact):
        return True
    if _on_x_not_y(fact):
        return True
    wrong = _CODE_IS_WRONG.match(fact)
    if wrong and _CODE_WORD.search(wrong.group("rest")):
        return True
    if not after_no:
        return False
    if _FOR_ANYTHING.match(fact):
        return True
    if _THIS_NOT_THAT.match(fact) and not _REPORT.search(fact):
        return True  # "nah — content-defined chunking, fastcdc, not fixed-size blocks" (blind20)
    return bool(_BUT_NOT.search(fact) and _CODE_WORD.search(fact))


_POLITE_HEAD = LazyPattern(
    r"^(?:could|can|would|will)\s+(?:you\s+)?(?:mind\s+)?(?:please\s+)?", re.IGNORECASE
)


def _user_kind(fact: str, lead: set[str]) -> str:
    """correction, rule, heuristic or "" for a person's clause (lead-ins already stripped)."""
    asked = fact.rstrip().endswith("?")
    polite = asked and bool(_POLITE_RULE.match(fact)) and not ONE_OFF.search(fact)
    if len(fact.split()) < MIN_RULE_WORDS or (asked and not polite):
        return ""
    if _NOT_A_RULE.match(fact):
        return ""
    purpose = _PURPOSE.match(fact)
    order = fact[purpose.end() :] if purpose and not ONE_OFF.search(fact) else fact
    said_for_good = _RULE.match(fact) or _STANDING_ORDER.match(fact) or _NO_LIST.match(fact)
    if "remember" in lead or polite or said_for_good:
        kind = "rule"
    elif _IMPERATIVE.match(order) and ("no" in lead or _INSTEAD.search(order)):
        kind = "correction"
    elif _standing(fact) or (order != fact and (_standing(order) or _RULE.match(order))):
        kind = "rule"
    elif _says_instead(fact, "no" in lead):
        kind = "correction"
    elif "no" in lead:
        return _NO_HINT
    elif _WEAK.search(fact):
        return "heuristic"
    else:
        return ""
    if polite:
        fact = _POLITE_HEAD.sub("", fact)  # "could you always add a test for it?"
    if _PRONOUN_OBJECT.match(fact):
        return "heuristic"  # "use it whenever …": what "it" is, the conversation knew
    words = fact.split()
    # Only the words before a reason count, and "this project" names nothing said before.
    said = _THIS_PLACE.sub("", fact.split(",", 1)[0])
    if len(words) <= PRONOUN_RULE_MAX_WORDS and _PRONOUN.search(said):
        return "heuristic"  # "Never do that again": means nothing without the conversation
    return kind


_SO = LazyPattern(r",?\s+so\s+(?=\S)", re.IGNORECASE)
_SO_THAT = LazyPattern(r"(?:that|we|you|i|it|they|he|she|the|this|there)\b", re.IGNORECASE)


def _after_so(clause: str, fact: str) -> tuple[str, str]:
    """(kind, text) of a rule or a preference said after its reason: "english is not my first
    language so pls keep explanations in simple english" (the preference alone: how to answer
    is the person's order), "the cluster is shared so never scale it down" (the rule with its
    reason). ("", fact) when the part after "so" is neither."""
    parts = _SO.compiled.split(clause, maxsplit=1)
    if len(parts) < 2 or len(parts[0].split()) < 2:
        return "", fact
    after, lead = strip_lead_in(parts[1])
    if _IMPERATIVE.match(parts[0]):
        return "", fact  # "mock the client so we don't hit the api": "so that", a task's aim
    said = change_said(after)  # "clinics complained so the late-cancel cutoff is 48h now"
    if said and said[0] == "change":
        return "change", tidy(said[1])
    if _SO_THAT.match(after):
        return "", fact
    if preference(after):
        return "preference", tidy(after)
    kind = _user_kind(after, lead)
    return (kind, fact) if kind in ("rule", "correction") else ("", fact)


# Words before a comma that only set the scene for a rule after it: "this is svelte 5, new
# components use runes, not export let" (at most this many; not a condition).
ASIDE_MAX_WORDS = 5


def _after_aside(clause: str, fact: str) -> tuple[str, str]:
    """("rule", the rule) for a standing rule after a short aside and a comma; else
    ("", fact)."""
    head, sep, tail = clause.partition(", ")
    if not sep or len(head.split()) > ASIDE_MAX_WORDS or not _SETS_THE_SCENE.match(head):
        return "", fact
    tail, _ = strip_lead_in(tail)
    return ("rule", tidy(tail)) if _standing(tail) else ("", fact)


# "this is svelte 5", "it's a monorepo", "we're on node 22": what the project is (not "ok
# shipped", a report, nor "add POST /v1/refunds", a task).
_SETS_THE_SCENE = LazyPattern(
    r"^(?:this|it)(?:\s+is|'s)\s+(?!\w+ed\b)|^(?:we'?re|we\s+are)\s+(?:on|using)\s", re.IGNORECASE
)


def user_signals(prompt: str, statements: bool = True) -> list[Signal]:
    """The rules, corrections and statements about themselves in what the person typed; with
    ``statements``, also what the statement model takes for said for good that no shape here
    knows (``tiers.statements``; ``capture.statements`` in config.yaml)."""
    if len(prompt) > SCAN_MAX_CHARS:
        return []
    text = prose(strip_injected(prompt).replace("\u2019", "'")).strip()
    if not text or len(text) > LONG_PROSE_MAX_CHARS:
        return []
    if len(text) > PROSE_MAX_CHARS:
        # A long task: only what is said plainly for good, a plain rule anywhere, who the person
        # is and how they want answers ("hi! quick intro … I'm Niamh, … when you answer give
        # me the code first …" opened a 774-character first prompt; blind22).
        found = [
            s
            for s in _signals(text)
            if (s.kind == "rule" and (_PLAIN_RULE.match(s.text) or _RULE.match(s.text)))
            or s.kind in ("identity", "preference")
        ]
    else:
        found = _signals(text)
    found = _settle_no_hints(found, statements)
    if statements and (
        len(text) > PROSE_MAX_CHARS or not any(s.kind in EXPLICIT_KINDS for s in found)
    ):
        # In a short message only where no shape took anything: beside a rule, its other
        # sentences are its reasons and context ("flutter_riverpod 2 + the @riverpod generator,
        # it's all in pubspec already."), the same fact again in other words (blind19, blind24).
        # A long task holds facts of its own ("… sms goes through twilio - … reminders never
        # go out between 9pm and 8am btw, …": blind27 lost the second to the first).
        from .statements import statement_signals

        found += statement_signals(sanitize(text), found)
    return found


# What follows a "no" that no shape makes a correction of ("hm, no. it's hilt in this project
# - …", "no - broker is rabbitmq, we already run it …", "csv? nah - parquet please, …"): a hint
# for the inbox, unless the statement model gives it at least this probability, and then the
# correction it is. Over the 31 weeks (read, and the model trained on them: an optimistic
# count) 0.2 takes 18 planted facts and 7 other sentences (some of them true: "Station ids
# stay strings."); tests/data's task prompts hold 3 such hints, none at 0.2.
NO_HINT_MIN_PROB = 0.2
_NO_HINT = "heuristic-no"  # inside this module only: user_signals settles it


def _settle_no_hints(found: list[Signal], statements: bool) -> list[Signal]:
    """``found`` with each hint after a "no" settled: the one the statement model rates best
    (at least NO_HINT_MIN_PROB) is the correction, when no shape found one in the message;
    the rest stay hints. After a "no" come the correction and its reasons ("no, not sidekiq.
    there's no redis on the legacy boxes … the app already runs delayed_job …": a week kept
    each as a correction of its own, blind30)."""
    hints = [i for i, s in enumerate(found) if s.kind == _NO_HINT]
    if not hints:
        return found
    best, best_p = -1, NO_HINT_MIN_PROB
    if statements and not any(s.kind in EXPLICIT_KINDS for s in found):
        from .statements import plain, probability

        for i in hints:
            p = probability(found[i].text) if plain(found[i].text) else 0.0
            if p >= best_p:
                best, best_p = i, p
    return [
        Signal("correction" if i == best else "heuristic", s.text, s.line)
        if s.kind == _NO_HINT
        else s
        for i, s in enumerate(found)
    ]


# The plainest rule: "Never …", "Always …", "Don't …" (what a long task's rule must be).
_PLAIN_RULE = LazyPattern(r"^(?:never|always|don'?t|do\s+not)\s", re.IGNORECASE)


_SCRATCH_USE = LazyPattern(
    r"^(?:scratch|forget|ditch|drop|lose)\s+(?P<old>(?:the\s+)?[\w@./\-]+(?:\s+[\w@./\-]+){0,2}?)"
    r"\s*(?:\s[-\u2013\u2014]\s|[,;]\s*)(?:just\s+|and\s+)?use\s+(?P<new>[\w@./\-]+(?:\s+[\w@./\-]+){0,4}?)"
    r"\s*[.!]?$",
    re.IGNORECASE,
)
# "not Model.query - that's the legacy api": what a "no" refused, with why (blind18).
# "hm, not moment pls, it's basically in maintenance mode" (blind19): "pls" says it too.
_REFUSED = LazyPattern(
    r"^not\s+(?!(?:now|yet|really|sure|quite|exactly|that|this|it|bad|too|much|even)\b)"
    r"(?P<old>`?[\w@./()\-]+`?(?:\s+(?!pls\b|please\b)[\w@./()\-]+){0,2}?)"
    r"(?P<pls>\s+(?:pls|please|plz))?\s*(?:\s[-\u2013\u2014]\s|,\s|[.!]*$)"
    # "ugh, no statsmodels please." (blind22)
    r"|^no\s+(?!(?:problem|worries|need|idea|thanks|rush|hurry)\b)(?P<no_pls>[\w@./\-]+)"
    r"\s+(?:please|pls|plz)[.!]*$"
    # "InstallSchema?? thats the 2.2 way of doing it. use declarative schema: …" (blind26)
    r"|^(?P<asked>[\w@./\-]*[A-Z_.][\w@./\-]*)\?{2,}$",
    re.IGNORECASE,
)
_DASH = re.compile(r"\s[-\u2013\u2014]\s")
# "don't touch her row btw, an issued invoice is never edited, if …" (blind22): a rule said as
# one comma part of a clause about today.
_NEVER_DONE = LazyPattern(
    r"^(?:an?\s+|the\s+|every\s+|all\s+|our\s+)?[\w\-]+(?:\s+[\w\-]+){0,2}\s+(?:is|are)\s+"
    r"(?:never|always|only\s+ever)\s+\w+(?:ed|en)\b[^,;]*$"
    # "… get rid of those .unwrap()s too, we never unwrap in this firmware" (blind23)
    r"|^we\s+(?:never|always|don'?t|do\s+not)\s+\w+[^,;]*$",
    re.IGNORECASE,
)
# The same said as an order for every case, whatever comes before it: "…, don't ever create IAM
# users with access keys for humans, …", "same shape as the other buckets, and every resource
# gets owner and cost-center tags, …" (blind24).
_EVERY_CASE_PART = LazyPattern(
    r"^(?:don'?t|do\s+not|never)\s+ever\s+\w+[^,;]*$"
    r"|^(?:and\s+)?(?:every|each|all)\s+[\w\-]+(?:\s+[\w\-]+)?\s+(?:gets?|needs?|has\s+to|must)\s[^,;]*$",
    re.IGNORECASE,
)


def _never_done_part(clause: str) -> str:
    """The comma part of ``clause`` (not its first) that says how a kind of thing is always or
    never treated, or ""."""
    parts = clause.split(", ")
    for part in parts[1:]:
        part = part.strip().rstrip(".!")
        if _EVERY_CASE_PART.match(part) and not _REPORT.search(part):
            return re.sub(r"^and\s+", "", part, flags=re.IGNORECASE)
    if _REPORT.search(parts[0]):
        return ""  # "the tests failed, the build is never finished": a report goes on
    for part in parts[1:]:
        part = part.strip().rstrip(".!")
        if _NEVER_DONE.match(part) and not _REPORT.search(part):
            return part
    return ""


# What to use instead, right after "not X —": "we use date-fns", "use date-fns".
_INSTEAD_AFTER_DASH = LazyPattern(
    r"(?:we\s+(?:use|go\s+with|stick\s+with|write|run|have)|use|stick\s+with|go\s+with)\s+[^,;.]+",
    re.IGNORECASE,
)
# Sentences after a refusal that may say what to do instead.
REFUSAL_WINDOW_SENTENCES = 3
# How it is done, said as a fact: "lemmas come from our own lexicon", "the models get fitted in
# R with lme4".
_SAID_HOW = LazyPattern(
    r"^(?:the\s+|our\s+)?[\w\-]+(?:\s+[\w\-]+)?\s+(?:come|comes|go|goes|live|lives|get|gets|are|is)"
    r"\s+(?:\w+ed\s+)?(?:from|through|in|with|via|by)\s+\S",
    re.IGNORECASE,
)


def _instead_at(out: list[Signal], then: int) -> int:
    """Where among ``out`` from ``then`` the first correction or rule is, or -1."""
    return next((i for i in range(then, len(out)) if out[i].kind in ("correction", "rule")), -1)


_TODAYS_CLEANUP = LazyPattern(
    r"\s+and\s+(?=(?:take|rip|pull|remove|delete|drop|get\s+rid\s+of|uninstall)\b)", re.IGNORECASE
)


def _what_instead(out: list[Signal], old: str, start: int, then: int) -> None:
    """The rule said in the sentence after "no, not ``old`` - …" (its signals from ``then``)
    as the correction it is, naming what it replaces; the refusal's own hint (its signals from
    ``start``) goes, as the correction says it."""
    instead = _instead_at(out, then)
    if instead < 0:
        return
    said = out[instead]
    # "use dayjs with the isoWeek plugin and take moment back out": today's clean-up goes.
    text = _TODAYS_CLEANUP.compiled.split(said.text, maxsplit=1)[0]
    text = text if text.endswith((".", "!", ")")) else text + "."

    if old.lower() not in text.lower():
        text = f"{text.rstrip('.')}, not {old}."
    out[instead] = Signal("correction", text, said.line)
    # The hints said on the way (the refusal, its reason) go: the correction says them.
    # "No AutoMapper." said in the refusal itself goes too.
    out[start:instead] = [
        x
        for i, x in enumerate(out[start:instead], start)
        if x.kind not in ("heuristic", _NO_HINT)
        and not (i < then and old.lower() in x.text.lower())
    ]


def _signals(text: str) -> list[Signal]:
    # Private spans and secrets go before the text is cut in sentences: a span may cross a
    # sentence, and the redaction keeps the full stop after a secret ("password=x. Never …").
    text = sanitize(text)
    out: list[Signal] = []
    for raw_line in text.splitlines():
        line = _WS.sub(" ", BULLET.sub("", raw_line)).strip()
        if not line:
            continue
        carried: set[str] = set()
        # "can we stop using ObservableObject. use the @Observable macro": what to do instead,
        # said in the next sentence, belongs to the correction.
        stopped: Signal | None = None
        # "nope, not Model.query - that's the legacy api. write queries 2.0 style, …": what was
        # refused, where the signals of the sentence that refused it start, where those of the
        # next sentence start (-1 until it comes), and how many sentences more may say it.
        refused: tuple[str, int, int, int] | None = None
        opening = not out  # the prompt's first sentence: "not dayjs — …" refuses on its own
        for sentence in sentences(line):
            # "no. use httpx", "ugh, no. never allocate in processBlock": a sentence of lead-ins
            # alone lends them to the next one.
            alone, leads = strip_lead_in(f"{sentence} x")
            if alone == "x":
                carried = leads
                continue
            sentence, lead = strip_lead_in(sentence)
            lead, carried = lead | carried, set()
            if refused is not None:
                lead = lead | {"no"}  # what comes after a refusal answers it
            if refused is not None and refused[2] < 0:
                refused = (refused[0], refused[1], len(out), REFUSAL_WINDOW_SENTENCES)
            elif refused is not None:
                if _instead_at(out, refused[2]) >= 0 or refused[3] <= 1:
                    _what_instead(out, refused[0], refused[1], refused[2])
                    refused = None
                else:
                    refused = (refused[0], refused[1], refused[2], refused[3] - 1)
            if refused is not None and _SAID_HOW.match(sentence) and not _REPORT.search(sentence):
                # "hmm no, not stanza. it's trained on … lemmas come from our own lexicon, …"
                # (blind22): how it is done instead, said as a fact.
                out.append(Signal("rule", tidy(_DASH.split(sentence, maxsplit=1)[0]), line))
                continue
            no_to = _REFUSED.match(sentence)
            if no_to and not (
                "no" in lead
                or no_to.group("pls")
                or no_to.group("no_pls")
                or no_to.group("asked")
                or opening
            ):
                no_to = None
            opening = False
            instead = _INSTEAD_AFTER_DASH.match(sentence[no_to.end() :]) if no_to else None
            if no_to and instead and no_to.group("old"):
                # "ugh not dayjs — we use date-fns, it's already in package.json" (blind23)
                fact = tidy(f"{instead.group(0).rstrip(' ,;.')}, not {no_to.group('old')}")
                out.append(Signal("correction", fact, line))
                continue
            if no_to and not _NOT_X_Y.match(sentence):
                # What to do instead comes in the next sentences, said after this "no".
                was = no_to.group("old") or no_to.group("no_pls") or no_to.group("asked")
                was = was.rstrip(".!")
                refused, carried = (was, len(out), -1, 0), {"no"}
            name_why = _NAME_THEN_WHY.match(sentence) if "no" in lead else None
            if name_why:
                # "no no no. bcrypt — vapor ships it, req.password.async.hash / verify" (blind25)
                name, why = sentence.split()[0], sentence[name_why.end() :].rstrip(".!")
                out.append(Signal("correction", tidy(f"Use {name} ({why})"), line))
                continue
            scratch = _SCRATCH_USE.match(sentence)
            if scratch:
                # "scratch the aws sdk - use minio-go/v7" (blind20): one correction, whole.
                new, was = scratch.group("new").rstrip(".!"), scratch.group("old")
                out.append(Signal("correction", tidy(f"Use {new} instead of {was}"), line))
                continue
            rest, labelled = _drop_preamble(sentence)
            if rest == sentence:
                rest = _drop_dash_preamble(sentence)
            if rest != sentence:
                sentence, more = strip_lead_in(rest)
                lead |= more
            if labelled and not sentence.endswith("?") and len(sentence.split()) >= MIN_RULE_WORDS:
                # "one preference before we start: …": said to be how they want to be answered;
                # "house style: …": said to be a rule.
                out.append(Signal(labelled, tidy(sentence), line))
                continue
            named = _NAME_THEN.match(sentence)
            who_first = identity(named.group("who")) if named else ""
            if named and who_first:
                # "Bronagh here — change of plan, from monday it's 5 …": who, then what they say
                # ("nothing here — …" names nobody).
                out.append(Signal("identity", tidy(who_first), line))
                sentence = named.group("rest")
            who = identity(sentence)
            if who:
                out.append(Signal("identity", tidy(who), line))
                continue
            trait = TRAIT_SAID.search(sentence)
            if trait:  # "please not RdYlGn, I'm red-green colourblind, those maps are …"
                out.append(Signal("identity", f"The user is {trait.group('t')}.", line))
                # What follows in the sentence is what the trait means to them ("…, and names
                # like sel_hdl are painful for me to read"), not a rule of its own.
                continue
            last: Signal | None = stopped
            stopped_before, stopped = stopped, None
            for clause in clauses(sentence):
                clause, more = strip_lead_in(clause)
                # "use httpx for outbound calls, as I said": the rule without the reminder
                # (capture reads the reminder in the source line: a repeat, said again).
                said_before = SAID_BEFORE.sub("", clause).strip(" ,;:-\u2013\u2014")
                if SAID_BEFORE.search(clause) and len(said_before.split()) >= MIN_RULE_WORDS:
                    clause, more = strip_lead_in(said_before)
                    more |= {"no"}  # said again: Claude did otherwise, as after a "no"
                kind = "preference" if preference(clause) else _user_kind(clause, lead | more)
                fact = tidy(clause)
                if not kind:
                    kind, fact = _after_so(clause, fact)
                if not kind:
                    kind, fact = _after_aside(clause, fact)
                elif kind in ("heuristic", _NO_HINT):
                    # "it's GLS now instead of DHL, and GLS comes at 12:45, so the same-day
                    # cutoff is 12:00 from now on": a hint, then what it means for good.
                    settled, after = _after_so(clause, fact)
                    if settled:
                        kind, fact = settled, after
                # A switch or a changed fact said plainly, not as "use", "never" or "always".
                # "heads up, …: X is 4 hours now": a change said after a "remember" word is
                # kept as the change it states.
                told = kind == "rule" and not (_RULE.match(clause) or _standing(clause))
                said = (
                    None
                    if kind == "preference" or (kind == "rule" and not told)
                    else change_said(clause)
                )
                if said and told and said[0] != "change":
                    said = None
                if said and (not kind or said[0] != "heuristic"):
                    # "no, switch to polars" keeps its rewording; "no, switch to main" stays the
                    # correction it was.
                    kind, fact = (said[0] if kind != "correction" else kind), tidy(said[1])
                if not kind and _never_done_part(clause):
                    kind, fact = "rule", tidy(_never_done_part(clause))
                if (
                    not kind
                    and last is not None
                    and _IMPERATIVE.match(clause)
                    and (last is not stopped_before or _USE_INSTEAD.match(clause))
                ):
                    # "Don't mock the database; use the test container": how to follow the
                    # rule before it, not a fact of its own.
                    last = Signal(last.kind, tidy(f"{last.text.rstrip('.')}; {clause}"), line)
                    out[-1] = last
                    continue
                if kind == "preference" and last is not None and last.kind == "preference":
                    # "keep answers short - bullets, no intro paragraph, and dont end w/ a
                    # summary": one way of answering, said in one breath, is one memory.
                    joined = f"{last.text.rstrip('.')}; {fact[:1].lower()}{fact[1:]}"
                    last = Signal("preference", tidy(joined), line)
                    out[-1] = last
                    continue
                last = None
                if kind == "rule" and fact.endswith("?"):
                    fact = fact[:-1].rstrip() + "."  # a rule asked for politely
                if kind and len(fact) >= MIN_FACT_CHARS:
                    last = Signal(kind, fact, line)
                    out.append(last)
                    if _STOP_DOING.match(clause):
                        stopped = last
        if refused is not None and refused[2] >= 0:
            _what_instead(out, refused[0], refused[1], refused[2])
        _join_short_no(out, line)
    return out


# "No ChangeNotifiers please." after "we're on riverpod in this app, not provider" in the same
# message: one choice said twice, kept as one memory (blind19: two lines in 25 requests).
_SHORT_NO = LazyPattern(r"^No\s+[\w.\-/@]+(?:\s+[\w.\-/@]+)?\.$")


def _join_short_no(out: list[Signal], line: str) -> None:
    """A bare "No X." rule of ``line`` joins the correction the same line made before it."""
    for i in range(len(out) - 1, 0, -1):
        said = out[i]
        if said.line != line or said.kind != "rule" or not _SHORT_NO.match(said.text):
            continue
        before = next(
            (
                j
                for j in range(i - 1, -1, -1)
                if out[j].line == line and out[j].kind == "correction"
            ),
            -1,
        )
        if before >= 0:
            joined = f"{out[before].text.rstrip('.')}; {said.text[:1].lower()}{said.text[1:]}"
            out[before] = Signal("correction", joined, line)
            del out[i]


# --- Claude's tags -----------------------------------------------------------------------------

_TAGS = "DECISION|GOTCHA|REUSE|DEFER"
_TAG_MARK = rf"\[({_TAGS})\]\**\s*[:\-\u2013\u2014]?\s*\**\s*"
# Lower-case text a tagged line holds: the hook path tests these before keeping Claude's text.
TAG_HINTS = ("[decision]", "[gotcha]", "[reuse]", "[defer]")
_TAG = LazyPattern(
    rf"{_TAG_MARK}(?P<text>\S(?:(?!\[(?:{_TAGS})\]).)*)",
    re.IGNORECASE,
    hints=TAG_HINTS,
)


def tag_signals(text: str) -> list[Signal]:
    """Each tagged lesson of Claude's text, one sentence each; tags in code blocks, quotes and
    our own injected memory are not lessons."""
    if "[" not in text or not _TAG.found(text):
        return []
    # Private spans go before the text is cut in lines: a span may cross lines.
    text = sanitize(prose(strip_injected(text)))
    out: list[Signal] = []
    for line in text.splitlines():
        if "[" not in line:
            continue
        shown = _WS.sub(" ", BULLET.sub("", line)).strip()
        for m in _TAG.finditer(line):
            body = m.group("text").rstrip(" \t*_|;,-\u2013\u2014")
            first = sentences(body)
            fact = tidy(strip_lead_in(first[0])[0]) if first else ""
            if len(fact) >= MIN_FACT_CHARS:
                out.append(Signal(m.group(1).lower(), fact, shown))
    return out
