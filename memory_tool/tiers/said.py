"""What a person said, as text: what counts as prose (not code, logs or quotes), cut into
sentences and clauses, lead-ins stripped, cleaned into one fact line; and ``Signal``, one fact a
session said. ``signals`` (the shapes of rules and corrections) and ``statements`` (the model
for what no shape knows) both read text through these.

Hook path (the Stop hook folds signals into the session state): stdlib ``re`` only.
"""

from __future__ import annotations

import re

from ..base.privacy import LazyPattern
from ..base.record import record

# A fact shorter than this carries nothing ("[DECISION] yes"); one longer is cut.
MIN_FACT_CHARS = 8
MAX_FACT_CHARS = 400


@record(frozen=True)
class Signal:
    """One fact a session said. ``kind``: correction, rule, change (a fact that changed),
    identity, preference or heuristic (the person);
    decision, gotcha, reuse or defer (a tag). ``line``: the source line as said (sanitised),
    for the memory's ``captured_from``."""

    kind: str
    text: str
    line: str


# --- what is not prose -------------------------------------------------------------------------

_FENCED = LazyPattern(r"(?ms)^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)")
# A quoted line, an indented code line, a log or traceback line.
_NOT_PROSE_LINE = LazyPattern(
    r"""(?mx)^(?:
        [ \t]*>                                  # > quoted
      | (?:\t|[ ]{4})                            # indented code
      | [ \t]*\d{4}-\d\d-\d\d[T ]\d\d:\d\d       # 2026-11-29 12:00 log stamp
      | [ \t]*\[?(?:DEBUG|INFO|WARN(?:ING)?|ERROR|FATAL|TRACE|CRITICAL)\b[\]:]?  # log level
      | [ \t]*Traceback\ \(most\ recent
      | [ \t]*File\ "[^"]+",\ line\ \d
      | [ \t]*at\ [\w.$<>]+\(
      | [ \t]*[$\#]\ \S                           # a shell prompt line
      | [ \t]*E\s{2,}                            # pytest's E   lines
    ).*$"""
)


def prose(text: str) -> str:
    """``text`` without fenced code blocks, quoted lines, indented code and log lines."""
    if "```" in text or "~~~" in text:
        text = _FENCED.sub("", text)
    return _NOT_PROSE_LINE.sub("", text)


# --- sentences and clauses ---------------------------------------------------------------------

# A sentence ends at . ! ? (closing quotes and brackets after it) before a word, a digit, a
# quote, a tag or a code span; not after a common abbreviation ("e.g. Redis"). A lower-case
# word after the full stop starts a sentence too: people type rules in lower case ("always use
# snake_case column names. never commit notebooks with outputs." is two rules, not one).
_ABBREV = ("e.g", "i.e", "etc", "vs", "cf", "approx", "incl", "resp", "mr", "ms", "dr", "no")
_TITLES = ("mr", "ms", "dr")
_SENTENCE_END = LazyPattern(r"""[.!?]+["')\]]*\s+(?=[A-Za-z0-9"'`\[(*_<])|\n+""")
# Two facts on one line: "; " always, ", and" / " and" / ", but" only before a rule's opener.
RULE_OPENER = (
    r"(?:always|never|don'?t|do\s+not|also\s+(?:always|never|don'?t|use)|remember|"
    r"make\s+sure|prefer|use)\b"
)
_CLAUSE_BREAK = LazyPattern(
    rf";\s+|\s*[\u2014\u2013]\s+|\s+-\s+(?={RULE_OPENER})|,?\s+(?:and|but|also|then)\s+(?={RULE_OPENER})"
    # "a table of the 6 clearest examples - and examples always get glossed leipzig style" (blind22)
    r"|\s+-\s+(?=and\s+[\w\-]+(?:\s+[\w\-]+)?\s+(?:always|never)\s)",
    re.IGNORECASE,
)


# An emoji, a smiley or an aside that holds one ends what was said before it: "no idioms :)
# ok so first thing: …", "product changed their mind (again 😅) max length is 10000 now".
_EMOJI = "\U0001f300-\U0001faff\u2600-\u27bf\ufe0f"
_ASIDE_END = LazyPattern(
    rf"\s*(?:\([^()]*[{_EMOJI}][^()]*\)|[{_EMOJI}]+|(?<![\w:]):-?[()DPp](?![\w(])|\bxD\b)(?=\s|$)"
)


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, each with its closing punctuation."""
    text = _ASIDE_END.sub(lambda m: "." if text[: m.start()].rstrip()[-1:].isalnum() else "", text)
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        end = m.start() + len(m.group(0).rstrip())
        piece = text[start:end]
        word = re.search(r"(\w+(?:\.\w+)*)\.+$", piece.rstrip("\"')]"))
        # "e.g. Redis": one sentence; "no." only before a number ("No. 5"): "ugh, no. never
        # allocate in processBlock" is two.
        abbrev = word is not None and word.group(1).lower() in _ABBREV
        if abbrev and word is not None and word.group(1).lower() in _TITLES:
            abbrev = text[m.end() : m.end() + 1].isupper()  # "Ms. Lee", not "invuln ms. every"
        if (
            m.group(0).strip()
            and abbrev
            and word is not None
            and (word.group(1).lower() != "no" or text[m.end() : m.end() + 1].isdigit())
        ):
            continue
        last = word.group(1).split(".")[-1] if word is not None else ""
        initial = len(last) == 1 and last.isupper()
        if initial and text[m.end() : m.end() + 1].islower():
            continue  # an initial or "U.S. customers": a lower-case word goes on the sentence
        out.append(piece)
        start = m.end()
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]


def clauses(sentence: str) -> list[str]:
    """A sentence cut where a second fact starts ("use httpx; never log bodies")."""
    parts = [p.strip() for p in _CLAUSE_BREAK.split(sentence) if p and p.strip()]
    return parts or [sentence]


# --- cleaning ----------------------------------------------------------------------------------

BULLET = LazyPattern(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
_WS = re.compile(r"\s+")
# Words that open a sentence without saying anything ("no, use X": the fact is "use X"). The
# correction ones are remembered: "no, use X" is a correction, "use X" alone a task.
_LEAD_IN = LazyPattern(
    r"""^(?:
        (?P<no>(?:no+(?:\ no+)*|nope|nah|wrong|not\ like\ that|that'?s\ (?:wrong|not\ right)
            |not\ quite)
            (?=\s*[,:;.!\-\u2013\u2014])|(?:nah|nope)(?=\s)
            # "close, but the convention here is …": almost right, so a correction follows.
            |(?:close|almost|nearly)(?=\s*,\s*but\b))
      | (?P<remember>remember(?:\ that)?|note\ that|note(?=\s*[:\-\u2013\u2014,])|important|fyi
            |for\ the\ record
            |keep\ in\ mind(?:\ that)?|bear\ in\ mind(?:\ that)?|for\ future\ reference
            |just\ so\ you\ know|worth\ knowing|make\ it\ a\ habit\ to
            |make\ a\ habit\ of|don'?t\ forget(?:\ that)?|heads\ up|quick\ note)
      | ok(?:ay)?\ so|so|ok(?:ay)?|also|actually|and|but|oh|well|hm+|btw|by\ the\ way|please|pls
      # "First, class times should always show in the gym's time zone" (blind19)
      | (?:first|second|third|secondly|thirdly|finally|lastly)(?=\s*,)
      | ugh|argh|meh|sigh|hej|hiya|yo|a+h+|uh+|um+|erm|eh
      | fwiw|tbh|imo|honestly|to\ be\ honest
      | wait|right|yes|yeah|yep|sure|great|thanks|thank\ you|cool|alright|one\ more\ thing
      | hey|hi|hello|morning|good\ morning
      | one\ thing\ up\ front|up\ front|first\ of\ all|first\ things\ first|before\ we\ start
      | one\ thing
      | in\ general|generally|just
      | i\ (?:want|need)\ you\ to|i(?:'d|\ would)\ like\ you\ to
      | it'?s\ (?:important|crucial|critical|key)\ (?:that|to)
      | it\ is\ (?:important|crucial|critical|essential|vital)\ (?:that|to)
    )(?:\s*[,:;.!\-\u2013\u2014]+\s*|\s+)""",
    re.IGNORECASE | re.VERBOSE,
)
_TRAILING_FILLER = LazyPattern(
    r"[\s,;:\-\u2013\u2014(]+(?:done|ok(?:ay)?|fixed|that'?s it|all set|thanks|please)[.!)]*$"
    # ", fix" after a rule asks for today's fix ("every rule must have log:, fix"); "the bug
    # fix" is a noun.
    r"|\s*[,;\-\u2013\u2014]\s*(?:pls\s+|please\s+)?fix(?:\s+it|\s+that|\s+this)?[.!)]*$",
    re.IGNORECASE,
)


# "before you say you're done": "done" that finishes the sentence is no filler.
_DONE_SAID_OF = LazyPattern(
    r"(?:'re|\bare|\bis|\bbe|\bbeen|\bwere|\bwas|\bget|\bgets|\bgot|'m|'s"
    r"|\banything|\bsomething|\beverything|\bit|\bthat|\bthis|\bthem)$",
    re.IGNORECASE,
)


def strip_lead_in(text: str) -> tuple[str, set[str]]:
    """``text`` without its conversational lead-ins, and which kinds were stripped ("no",
    "remember")."""
    seen: set[str] = set()
    for _ in range(5):  # "ok so actually no, …"
        m = _LEAD_IN.match(text)
        if not m or m.end() >= len(text):
            break
        seen.update(k for k in ("no", "remember") if m.group(k))
        text = text[m.end() :]
        if m.group("remember") and text.lower().startswith("to "):
            text = text[3:]  # "remember to run X": the rule is "run X"
    return text, seen


# The person saying they said it before: no part of the rule ("…, I said it on wednesday and
# I'll say it again - …", "…, as I said", "I'll keep banging on about it").
SAID_BEFORE = LazyPattern(
    r"""(?:,\s*|\s+[-\u2013\u2014]\s+|^)(?:(?:as|like)\s+i\s+(?:said|mentioned|told\s+you)
          (?:\s+(?:before|earlier|yesterday|last\s+(?:time|week)|on\s+\w+day))?
        |you\s+know\s+(?:this|that)|for\s+the\s+(?:second|third|fourth|fifth|\w+th|last|hundredth)\s+time
        |i\s+(?:said|mentioned|told\s+you)\s+(?:it|this|that)?[^,;:.\-\u2013\u2014]*?
          (?:\s+and\s+i'?ll\s+say\s+it\s+again)?
        |i'?(?:ll\s+)?keep\s+(?:banging\s+on|saying\s+(?:it|this|that)|going\s+on)
          (?:\s+about\s+it)?)
        (?=\s*(?:[,;:.]|\s[-\u2013\u2014]\s|$))""",
    re.IGNORECASE | re.VERBOSE,
)


def tidy(text: str) -> str:
    """One line: bullets, bold marks and extra spaces gone, a capital first letter, a full
    stop at the end, at most MAX_FACT_CHARS."""
    text = BULLET.sub("", text).replace("**", "").replace("__", "")
    text = SAID_BEFORE.sub("", text).lstrip(" ,;:-\u2013\u2014")
    text = _WS.sub(" ", text).strip().strip("\"'").strip()
    filler = _TRAILING_FILLER.search(text)
    # Set off by a comma or a dash it is filler ("ship it, done"); after "you're" or "anything"
    # with a space only, it ends the sentence ("before you call anything done").
    said = filler is not None and filler.group(0)[:1] == " " and filler.group(0)[1:2].isalpha()
    if filler and not (said and _DONE_SAID_OF.search(text[: filler.start()])):
        text = text[: filler.start()]
    text = text.rstrip(" ,;:-\u2013\u2014")
    if not text:
        return ""
    if len(text) > MAX_FACT_CHARS:
        text = text[: MAX_FACT_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    first = text.split(" ", 1)[0]
    # A sentence starts with a capital; a name from code ("with_retry(fn)", "minSdk") stays.
    if text[0].islower() and not re.search(r"[_./()`\d-]|^https?:|[a-z][A-Z]", first):
        text = text[0].upper() + text[1:]
    if text[-1] not in ".!?…`)":
        text += "."
    return text
