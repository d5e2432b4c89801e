"""What the person says about themselves: who they are ("I'm Dana, I work on the payments
backend"), how they see or read ("I'm red-green colourblind"), and how they want to be answered
("Keep answers terse.", "give me the commands first"). ``signals`` asks these of each sentence
and clause before it looks for a rule; capture keeps them as ``user`` memories, for every
project (L1).

Hook path: stdlib ``re`` only.
"""

from __future__ import annotations

import re

from ..base.privacy import LazyPattern
from .changes import ONE_OFF

# A statement about the person that keeps fewer words than this says nothing.
MIN_STATEMENT_WORDS = 3

# How the person sees, hears or reads, which every answer and anything visual must allow for:
# "I'm red-green colourblind" (blind11: said mid-sentence, in passing, and lost).
_TRAIT = r"(?:[\w\-]+[- ])?colou?r[- ]?blind|dyslexic|deaf|hard\s+of\s+hearing|visually\s+impaired"
TRAIT_SAID = LazyPattern(
    r"(?:^|[,;:]\s*|\s-\s|\s+and\s+)(?:i'?m|i\s+am)\s+(?P<t>" + _TRAIT + r")\b", re.IGNORECASE
)
_IDENTITY = LazyPattern(
    r"""^(?:
        (?P<prefer>i\s+(?:always\s+|really\s+|generally\s+)?prefer)\s+(?P<p>.+)
      | i'?d\s+rather\s+(?P<r>.+)
      | my\s+name\s+is\s+(?P<n>.+)
      | call\s+me\s+(?P<c>[A-Z]\w+.*)
      | i\s+(?:mostly\s+|mainly\s+|usually\s+)?work\s+
        (?P<w>(?:as|at|for|in)\s+.+|on\s+the\s+.+\s+team\b.*)
      | i\s+(?P<lv2>lead|run|manage|own)\s+(?P<ld>the\s+(?:.+\s+)?(?:team|group|squad)\b.*)
      | i\s+(?:really\s+|much\s+)?(?P<lv>like|want|need)\s+(?P<l>(?:my\s+|your\s+)?
        (?:answers|replies|responses|explanations|summaries)\s+
        (?:as|in|to\s+be|kept|that|with|without)\b.+)
      | (?:i'?m|i\s+am)\s+
        # "im Jurre, freelance php/unity dev" (blind26): "im" is "I'm" typed fast
        (?P<a>(?:an?\s+(?!bit\b|little\b|lot\b|few\b)\w.+)
          |(?:the\s+(?:only|lead|main|sole|senior|principal|staff|new|one)\s+\w.+)
          |(?:[A-Z\u00c0-\u00de][a-z\u00df-\u00ff]+)(?:[,\s].*)?
          |(?:"""
    + _TRAIT
    + r"""))
    )$""",
    re.VERBOSE,
)
_I_HINTS = ("i prefer", "i always prefer", "i really prefer", "i generally prefer", "i'd rather",
            "my name", "call me", "i work", "i mostly work", "i mainly work", "i usually work",
            "i like", "i really like", "i want", "i need", "i lead", "i run", "i manage",
            "i own", "i'm", "i am", "im ")  # fmt: skip
# A second statement about the person in the same sentence starts at "I", "I'm", "my" after a
# comma or "and": "I'm Dana, I work on the payments backend" is two, said in the third person
# as one ("The user is Dana and works on the payments backend.").
_ME_CLAUSE = LazyPattern(r"(?:,\s*(?:and\s+)?|\s+and\s+)(?=(?:i(?:'m|'d)?|my)\b)", re.IGNORECASE)
# What a later clause may say about the person besides what opens a statement: "…, I work on
# the payments backend" (alone, "I work on the parser" is more likely today's task).
_WORK_ON = LazyPattern(
    r"^i\s+(?:mostly\s+|mainly\s+|usually\s+)?"
    r"(?P<v>work\s+on|do(?=\s+(?:mostly|mainly|most\s+of|all\s+of|the)\b))\s+(?P<o>\S.+)$",
    re.IGNORECASE,
)
# The first person left in a statement about the person: never stored (the measure of a week
# of use: "The user is Dana, I work on the payments backend." reads as two speakers).
_FIRST_PERSON = LazyPattern(r"\b(?:I|I'm|I'd|I've|I'll|me|my|mine|myself)\b", re.IGNORECASE)


# A short wish about "this" or "it" leans on the conversation (blind17's "I'd rather not say
# this every single time" became "The user would rather not say this every single time.").
_LEANS = LazyPattern(r"\b(?:this|that|it|them|these|those)\b", re.IGNORECASE)
LEANS_MAX_WORDS = 8


def _predicate(clause: str, first: bool) -> tuple[str, str]:
    """(what kind of statement, what it says of the user in the third person: "is Dana",
    "prefers terse answers") for one clause about the person, or ("", "")."""
    s = clause.strip().rstrip(".!,;")
    if not first:
        m = _WORK_ON.match(s)
        if m:
            # "I'm Kasia, I do mostly the backend here": "does mostly the backend here".
            verb = "works on" if m.group("v").lower() != "do" else "does"
            return "work", f"{verb} {m.group('o')}"
    if not s.lower().startswith(_I_HINTS):
        return "", ""
    m = _IDENTITY.match(s[0].lower() + s[1:])
    if not m:
        return "", ""
    if m.group("p"):
        return "prefer", f"prefers {m.group('p')}"
    if m.group("r"):
        if _LEANS.search(m.group("r")) and len(m.group("r").split()) <= LEANS_MAX_WORDS:
            return "", ""  # "I'd rather not say this every single time": means nothing alone
        return "rather", f"would rather {m.group('r')}"
    if m.group("n"):
        return "name", f"is named {m.group('n')}"
    if m.group("c"):
        return "call", f"goes by {m.group('c')}"
    if m.group("w"):
        return "work", f"works {m.group('w')}"
    if m.group("ld"):
        return "work", f"{m.group('lv2')}s {m.group('ld')}"
    if m.group("l"):
        # "I like answers as bullet points": how they want to be answered, in every project.
        return "prefer", f"{m.group('lv')}s {m.group('l')}"
    rest = m.group("a")
    if not rest or rest.split()[0].lower() in ("i", "not", "sure", "done", "going", "trying"):
        return "", ""
    if rest[0].isupper() and rest.split()[0].endswith("ing"):
        return "", ""
    return "is", f"is {rest}"


# "Rosa here." on its own: the person says who they are.
# "dara here (dokafor on gh)." in lower case too (blind21), not "same here" or "nothing here".
_NAME_HERE = LazyPattern(
    r"^(?!(?:same|nothing|everyone|everybody|everything|all|me|us|you|we|anyone|someone|"
    r"somebody|nobody|noone|who|what|stuck|new|right|back|still|almost|done|ok|okay|not|"
    r"just|also|more|less|help|problem|issue|error|one|two|more)\b)"
    r"(?P<n>[A-Za-z\u00c0-\u00de][a-z\u00df-\u00ff]+)\s+here(?P<aka>\s*\([^()]{2,40}\))?"
    # "mireille here — i maintain keelback …" (blind20): the name, whatever follows the dash.
    r"(?:[.!]?$|\s*[\u2014\u2013]\s|\s+-\s)",
    re.IGNORECASE,
)


def identity(sentence: str) -> str:
    """The person's statement about themselves, in the third person ("The user prefers terse
    answers.", "The user is Dana and works on the payments backend."), or "". A later clause
    that says something else ("I'm Dana, I need the logs") is left out, and a statement that
    would keep a first-person word is not one: never "The user is Dana, I work on …"."""
    named = _NAME_HERE.match(sentence.strip())
    if named:
        name = named.group("n")
        return f"The user's name is {name[:1].upper()}{name[1:]}{named.group('aka') or ''}."
    s = sentence.strip().rstrip(".!")
    if not s.lower().startswith(_I_HINTS) or s.endswith("?"):
        return ""
    parts = [p for p in _ME_CLAUSE.split(s) if p.strip()]
    said: list[tuple[str, str]] = []
    for n, part in enumerate(parts):
        kind, pred = _predicate(part, first=n == 0)
        if not pred:
            break
        said.append((kind, pred))
    if not said:
        return ""
    if len(said) == 1 and said[0][0] == "name":
        text = "The user's name is " + said[0][1].removeprefix("is named ")
    else:
        preds = [pred for _, pred in said]
        text = "The user " + (
            preds[0] if len(preds) == 1 else ", ".join(preds[:-1]) + " and " + preds[-1]
        )
    me = _FIRST_PERSON.search(text)
    if me:
        # "The user is Dana, as I said": the part before the first person, if it says anything.
        text = text[: me.start()].rsplit(",", 1)[0].strip() if "," in text[: me.start()] else ""
        if len(text.split()) < MIN_STATEMENT_WORDS:
            return ""
    if text.count("(") > text.count(")"):
        # "The user is Tomás, basically the whole platform team (14 people, I also do IT …)":
        # a parenthesis the cut left open goes (blind24).
        text = text[: text.rfind("(")].rstrip(" ,;")
    return text


# How the person wants to be answered, in any project: "Keep answers terse.", "Be concise.",
# "Answer in German.", "No emojis.". Only words about Claude's answers: "keep the responses
# small" may be an API's, so "responses" counts only as "your responses"; and only answers in
# the plural: "make the answer shorter" is about the answer just given. Matched on the clause
# with its first letter lowered, so "in German" keeps its capital.
_PREFERENCE = LazyPattern(
    r"""^(?:always\s+|please\s+|pls\s+)?(?:dont\s+end\s+(?:with|w/)\s+(?:a\s+)?(?:summary|recap)|
        (?:keep\s+(?:your\s+|the\s+|all\s+|my\s+)?|make\s+(?:your\s+|all\s+)?)
          (?:answers|replies|explanations|your\s+(?:responses|explanations|summaries|messages))\s+
          (?:\w+\s+)?(?:short|shorter|terse|brief|concise|succinct|to\s+the\s+point|simple|plain)
      | be\s+(?:more\s+|very\s+|extra\s+)?(?:terse|concise|brief|succinct|direct|blunt)
      # "when theres stuff for me to run, put all the commands in one copy-pasteable block at
      # the very end of your answer" (blind26)
      | (?:when\s+[^,]{3,60},\s*)?(?:put|give\s+me|keep)\s+[^,]{3,80}?\s+at\s+the\s+(?:very\s+)?
        (?:end|top|start|bottom|beginning)\s+of\s+(?:your|every|each)\s+(?:answers?|replies|reply
        |responses?|messages?)
      # "for anything longer than a few lines put a one-line tl;dr at the top" (blind24)
      | (?:for\s+(?:anything|everything|any\s+answer)\s+(?:longer|bigger|more)\s+than
          \s+[^,]{1,40}?,?\s+)?
        (?:put|give\s+me|start\s+with|add|include)\s+(?:a\s+)?(?:one[- ]line\s+|short\s+)?
        (?:tl;?dr|summary)\s+(?:at\s+the\s+(?:top|start|beginning))
      | (?:answer|reply|respond|write\s+to\s+me|talk\s+to\s+me|explain\s+(?:things\s+)?)\s*
          (?:in\s+[A-Z][a-z]+|tersely|briefly|concisely|simply|in\s+bullet\s+points
            |in\s+(?:plain|simple)\s+(?:english|language|words|terms))
      | (?:use|stick\s+to)\s+(?:plain|simple)\s+(?:english|language|words)(?=\s*[.!]?$)
      | (?:no|skip\s+the|drop\s+the|without)\s+
          (?:preambles?|emojis?|apologies|pleasantries|idioms|jargon|slang)
      | (?:no|skip\s+the|drop\s+the|without|avoid)\s+(?:[\w\-]+\s+){1,3}?in\s+
        (?:your\s+|the\s+|my\s+)?(?:answers|replies|responses)
      | (?:don't|do\s+not|never)\s+(?:apologi[sz]e|use\s+emojis?|repeat\s+(?:the\s+|my\s+)?question
        |end\s+(?:with|w/)\s+(?:a\s+)?(?:summary|recap))
      # "when I ask how to do something, give me the commands first and the explanation after"
      # "when you answer give me the code first" (blind22)
      | (?:when\s+[iI]\s+ask\b[^,]{0,60},\s*|when\s+you\s+(?:answer|reply|respond)\b,?\s*)?
        (?:always\s+)?(?:give|show)\s+me\s+(?:the\s+)?
        [\w\-]+(?:\s+[\w\-]+)?\s+(?:first|up\s*front|at\s+the\s+top)
      # How answers show code and lists (blind28-31, each a held-out week's miss): "when you
      # change code just show me the diff, not the whole file", "answers as short bullet points
      # please", "skip explaining C++ or React basics", "pls no tables, my terminal turns them
      # into soup".
      | (?:when\s+you\s+[^,]{3,50},?\s*)?(?:just\s+|only\s+)?(?:show|give|send)\s+me\s+
        (?:a\s+|the\s+|just\s+the\s+)?diffs?\b(?=\s*(?:,|$|\.|not\b|instead\b|please|pls))
      | (?:your\s+)?(?:answers|replies|responses)\s+(?:as|in)\s+(?:short\s+|plain\s+)?
        (?:bullet(?:\s+points)?|bullets|bulleted\s+lists?)\b
      | (?:skip|don't|dont|do\s+not|no\s+need\s+to)\s+(?:explain(?:ing)?|go(?:ing)?\s+over)\s+
        (?:[\w+#.\-]+\s+){0,4}?(?:basics|fundamentals|the\s+basics)\b
      | no\s+(?:markdown\s+)?tables\b(?=\s*(?:please|pls|in\s+(?:your\s+)?answers)
        |[^.]*\b(?:terminal|answers?|replies|screen|phone|read)\b)
      # "don't put a 'next steps' list at the end of every answer": what every answer lacks.
      | (?:don't|dont|do\s+not|never|no)\s+(?:[\w\-'"]+\s+){0,5}?
        (?:at\s+the\s+(?:end|start|top|bottom)\s+of|in|to|after|before)\s+
        (?:every|each|all|all\s+of\s+your|your|my)\s+(?:answers?|replies|reply|responses?)
    )\b""",
    re.VERBOSE,
)


def preference(clause: str) -> bool:
    """Whether ``clause`` says how the person wants to be answered (a preference of theirs,
    for every project), not how this project's work is done."""
    s = clause.strip()
    if not s or s.endswith("?") or ONE_OFF.search(s):
        return False
    return bool(_PREFERENCE.match(s[0].lower() + s[1:]))
