"""Situations: which row of the when-to-load table a prompt belongs to, and what each row loads.

When to load (the design's table, as behaviour; ``tiers.prompt_context`` applies it):
    situation   hot                      cold                         wiki
    new         (in the conversation)    -                            -
    resume      this session's hot file  latest summary, this project -
    debug       (in the conversation)    search this project's        -
    spec        (in the conversation)    -                            matching records
    onboard     (in the conversation)    -                            matching records
    incident    (in the conversation)    search this project's        matching records
During a live session the hot state *is* the conversation, so it is re-sent only when the
conversation lost it: after compaction and on resume (``tiers.resume_units``, SessionStart) and
when the person asks to pick up where things were ("continue", "where were we"), and never while
the conversation still holds one (``tiers.inject.holds_hot``).

Hook path: runs on every prompt, stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..base.privacy import strip_injected

SITUATIONS = ("new", "resume", "debug", "spec", "onboard", "incident")
# situation -> (hot, cold, wiki); cold "latest" | "search" | ""
LOAD_TABLE: dict[str, tuple[bool, str, bool]] = {
    "new": (False, "", False),
    "resume": (True, "latest", False),
    "debug": (False, "search", False),
    "spec": (False, "", True),
    "onboard": (False, "", True),
    "incident": (False, "search", True),
}

_WORD = re.compile(r"[A-Za-z0-9_]+")

# Word sets and phrases, not regular expressions: this runs on every prompt, and compiling a
# dozen large patterns in each hook process costs more than the matching.
_RESUME_PHRASES = (
    "where were we", "where was i", "where are we at", "where did we leave off",
    "where did i leave off", "where we left off", "where i left off", "pick up where",
    "pick it up where", "pick this up where", "pick things up where", "what were we doing",
    "what were we working on", "remind me what we were doing", "remind me what we did",
    "resume the", "resume our", "resume where", "continue where",
    "what was left over", "what s left over", "what is left over", "what was left",
    "left over from yesterday", "left over from last time", "remind me what s next",
    "remind me what is next", "what s next here", "what is next here", "what were the next steps",
    "what are the next steps", "what was i in the middle of", "what were we in the middle of",
    "what was i doing", "where did i leave things", "where did we leave things",
    "where i left things", "where we left things",
    # "where did we leave this app?" (blind19): the project named, no topic in it.
    "where did we leave", "where did i leave",
)  # fmt: skip
# A question about what the last session left: "was anything left half-built last time?",
# "remind me what's still open in here from last time?". Both halves, in a question: "last
# time the deploy failed" is a report, "what's still open" alone may be a pull request.
_LAST_TIME_PHRASES = (
    "last time", "last session", "yesterday", "before i left", "the other day", "earlier on",
)  # fmt: skip
_LEFT_WORDS = frozenset(
    "open unfinished pending outstanding undone todo todos leftover leftovers".split()
)
_LEFT_PHRASES = (
    "anything left", "what s left", "whats left", "what is left", "still left", "left half",
    "left open", "left undone", "left unfinished", "left to do", "half built", "half done",
    "half finished", "loose ends",
)  # fmt: skip
_ASKING = frozenset("what was is are anything any remind tell which where did".split())


def _asks_what_was_left(text: str, padded: str, words: list[str]) -> bool:
    asking = text.rstrip().endswith("?") or (bool(words) and words[0] in _ASKING)
    left = bool(_LEFT_WORDS & set(words)) or _has(padded, _LEFT_PHRASES)
    return asking and left and _has(padded, _LAST_TIME_PHRASES)


# Alone or nearly ("continue", "ok, carry on"): a long prompt that says "continue" is a task.
_RESUME_WEAK_PHRASES = ("continue", "carry on", "keep going", "go on", "resume", "proceed")
RESUME_WEAK_MAX_WORDS = 6
# A continuation that names its topic ("let's continue with the chargeback work", "pick up the
# attribution work from yesterday", "where did we leave the parser?"). It brings the open
# handoff, or the latest session, only when that is about the topic (``is_about``): "continue
# with the docs" after a day on chargebacks brings nothing stale.
_CONTINUE_CUES = (
    "continue with", "continue on", "continue the", "continue our", "continue working on",
    "continue from", "pick up the", "pick up on", "pick up with", "pick up our", "pick up from",
    "pick back up", "keep going on", "keep going with", "keep working on",
    "carry on with", "resume the", "resume our", "resume work", "resume working",
    "get back to", "getting back to", "back to the", "back on the", "return to the",
    "wrap up the", "where did we leave", "where did i leave",
    "where were we with", "where were we on", "where are we with", "where are we on",
    # "let's sort out the belgian fixtures problem from yesterday" (blind25)
    "problem from yesterday", "issue from yesterday", "bug from yesterday",
    "problem from last time", "issue from last time", "thing from yesterday",
)  # fmt: skip
# "let's finish moving the DNS zones", "let's get the whole-cart reservation call finished": to
# finish is to go on with something.
_FINISH_WORDS = frozenset("finish finished finishing".split())
# "back to the" that puts a thing back, not the person back to work.
_BACK_TO_A_STATE = (
    "roll back", "rolled back", "revert back", "go back to", "switch back", "change back",
    "change it back", "set back", "set it back", "move back", "put back", "put it back",
    "send back", "send it back", "send them back", "sent back", "give it back", "give back",
    "bring it back", "bring back", "write back", "reply back", "fall back", "falls back",
)  # fmt: skip
# A cue in a longer prompt starts a task ("continue the refactor of the payments module and
# add tests for every new path"), not a return to one: 12 words hold a cue and a topic of a few
# words ("let's pick up the attribution backfill work from yesterday afternoon": 11).
CONTINUE_MAX_WORDS = 12
# Words of a continuation that name no topic: the cue's own, and what any continuation says
# about the work ("the chargeback work from yesterday": the topic is "chargeback").
_CONTINUE_FILLER = frozenset(
    "continue continuing pick picking back keep going carry resume resuming get getting leave "
    "left off where were are was we us let lets work working stuff task tasks thing things job "
    "bit part step steps plan rest remaining project repo yesterday today tonight earlier "
    "morning afternoon evening last time session day days week before ago again from on with "
    "the our my back return finish finished finishing wrap up off get done remind next here over "
    "what middle doing before making still open unfinished pending outstanding undone half "
    "built anything todo todos leftover loose ends in "
    # What names the whole project, not a topic in it: "where did we leave this app?", "where
    # did we leave off in the warehouse?" (blind19, blind20: no topic, so the latest session).
    "app application codebase site website warehouse tool library package "
    # "let's sort out the belgian fixtures problem from yesterday": what is done to it (blind25)
    "sort sorting fix fixing deal dealing problem problems issue issues bug bugs".split()
)
# A topic word is found in a text when a word there starts with its first letters
# ("chargeback" in "chargebacks"), as search.Coverage matches a query word.
TOPIC_PREFIX = 5


def continuation_topic(prompt: str) -> list[str]:
    """The topic words of a prompt that asks to go on with earlier work and names what ([]
    when it names nothing: "where were we?", "continue", or when it is no continuation)."""
    from ..store.words import STOP_WORDS  # stdlib-only module, as this one

    text = strip_injected(prompt or "").strip()
    if not text:
        return []
    padded, word_list = _normal(text.replace("-", " "))
    strong = _asks_where(text, padded, word_list)
    cue = _has(padded, _CONTINUE_CUES) or bool(_FINISH_WORDS & set(word_list))
    opening = [w for w in word_list if w not in _ACK_WORDS and w not in ("right", "so", "alright")]
    cue = cue or opening[:2] == ["back", "to"]  # "right, back to making the updates survivable"
    if not strong and not (len(word_list) <= CONTINUE_MAX_WORDS and cue):
        return []
    if not strong and _has(padded, _BACK_TO_A_STATE):
        return []  # "roll back to the old config": a task, not a return to earlier work
    topic = [
        w
        for w in word_list
        if len(w) >= 3
        and not w.isdigit()
        and w not in STOP_WORDS
        and w not in _CONTINUE_FILLER
        and w not in _ACK_WORDS
    ]
    return list(dict.fromkeys(topic))


def asks_where_we_were(prompt: str) -> bool:
    """Whether the prompt plainly asks where the work was left ("what was I doing on the shop
    yesterday?", "where did I leave the game?"), whatever else it names."""
    text = strip_injected(prompt or "").strip()
    if not text:
        return False
    return _asks_where(text, *_normal(text.replace("-", " ")))


def _asks_where(text: str, padded: str, words: list[str]) -> bool:
    return _has(padded, _RESUME_PHRASES) or _asks_what_was_left(text, padded, words)


def is_about(text: str, topic: list[str]) -> bool:
    """Whether ``text`` is about ``topic``: at least half of the topic words are in it (a word
    of the text that starts with the topic word's first TOPIC_PREFIX letters; a shorter topic
    word must be whole)."""
    if not topic:
        return True
    words = set(_WORD.findall(text.lower().replace("_", " ")))
    starts = {w[:TOPIC_PREFIX] for w in words if len(w) >= TOPIC_PREFIX}
    found = sum(
        (w[:TOPIC_PREFIX] in starts) if len(w) >= TOPIC_PREFIX else (w in words) for w in topic
    )
    return found > 0 and 2 * found >= len(topic)


_INCIDENT_WORDS = frozenset(
    "postmortem incident incidents outage outages rca retro retrospective downtime sev0 sev1 "
    "sev2 sev3".split()
)
_INCIDENT_PHRASES = ("post mortem", "post incident", "root cause", "what went wrong", "sev 1")
_RECUR_WORDS = frozenset(
    "again still keeps kept recurring recurs flaky intermittent intermittently regression "
    "regressed regresses".split()
)
_RECUR_PHRASES = (
    "came back", "comes back", "keep failing", "keep crashing", "seen this before",
    "seen that before", "seen it before", "had this before", "hit this before", "same error",
    "same bug", "same issue", "same failure", "same problem", "tried before",
    "what have we tried", "last time",
)  # fmt: skip
_FAILURE_WORDS = frozenset(
    "error errors bug bugs broken exception exceptions issue issues problem problems traceback "
    "timeout timeouts crash crashes crashed crashing wrong flaky".split()
)
_FAILURE_PREFIXES = ("fail", "break", "regress")
_SPEC_WORDS = frozenset("spec specs specification adr adrs rfc requirement requirements".split())
_SPEC_PHRASES = (
    "decision record", "design doc", "as decided", "we decided", "according to the spec",
    "according to the design", "according to the decision", "according to the contract",
    "per the spec", "per the design", "per the adr", "per the contract", "api contract",
)  # fmt: skip
_ONBOARD_WORDS = frozenset("onboard onboarding unfamiliar".split())
_ONBOARD_PHRASES = (
    "walk me through", "overview of", "new to this", "new to the", "get familiar",
    "architecture of", "explain how", "explain the", "explain what",
)  # fmt: skip
# A reply that carries no task of its own; it never replaces the current task.
_ACK_WORDS = frozenset(
    "y yes yep yeah ok okay sure thanks thank you thx go ahead on continue proceed do it lgtm "
    "sounds good great perfect nice carry keep going please".split()
)


def _normal(text: str) -> tuple[str, list[str]]:
    """Lower-case words, and the text as ' w1 w2 … ' for whole-phrase matching."""
    words = _WORD.findall(text.lower().replace("_", " "))
    return " " + " ".join(words) + " ", words


def _has(padded: str, phrases: Iterable[str]) -> bool:
    return any(f" {p} " in padded for p in phrases)


def _is_onboarding(padded: str, words: set[str]) -> bool:
    if words & _ONBOARD_WORDS or _has(padded, _ONBOARD_PHRASES):
        return True
    if (" how does " in padded or " how do " in padded) and words & {"work", "works"}:
        return True
    if " what is the " in padded and words & {"module", "subsystem", "component", "service"}:
        return True
    return " where is " in padded and bool(words & {"defined", "implemented", "handled"})


def situation_of(prompt: str) -> str:
    """The row of the when-to-load table a prompt belongs to."""
    text = strip_injected(prompt or "").strip()
    if not text:
        return "new"
    padded, word_list = _normal(text.replace("-", " "))
    words = set(word_list)
    if words & _INCIDENT_WORDS or _has(padded, _INCIDENT_PHRASES):
        return "incident"
    if (
        _has(padded, _RESUME_PHRASES)
        or _asks_what_was_left(text, padded, word_list)
        or (len(word_list) <= RESUME_WEAK_MAX_WORDS and _has(padded, _RESUME_WEAK_PHRASES))
    ):
        return "resume"
    recurs = words & _RECUR_WORDS or _has(padded, _RECUR_PHRASES)
    fails = words & _FAILURE_WORDS or any(w.startswith(_FAILURE_PREFIXES) for w in words)
    if recurs and fails:
        return "debug"
    if words & _SPEC_WORDS or _has(padded, _SPEC_PHRASES):
        return "spec"
    if _is_onboarding(padded, words):
        return "onboard"
    return "new"


def situation_and_topic(prompt: str) -> tuple[str, list[str]]:
    """The prompt's row of the when-to-load table, and the topic a continuation names ("let's
    continue with the chargeback work": a resume about chargebacks only)."""
    situation = situation_of(prompt)
    topic = continuation_topic(prompt) if situation in ("new", "resume") else []
    return ("resume" if topic else situation), topic


def is_ack(prompt: str) -> bool:
    words = _normal(prompt)[1]
    return bool(words) and all(w in _ACK_WORDS for w in words)
