"""Follow-up prompts: "now do the same for the refund cases" names no topic, yet it is about the
room of the prompt before it. When the classifier finds no room, a prompt that reads as a
continuation, in a session whose last room was chosen a few minutes ago, recalls that room again
(entries the session already has stay out, so it brings only what the new words match or what
is left).

Deliberately narrow: a continuation needs a marker word ("same", "also", "again", "what about",
a leading "now"/"and"...); short acknowledgements never carry ("thanks, works too"), and a long
prompt with no room word is taken to be about something else. A bare "it" is no marker: it
closes a task as often as it continues one ("that fixed it", "push it"); measured on the first
follow-up set, it found 3 more continuations and carried into 6 closings. Stdlib only: this
runs on the UserPromptSubmit hook path.
"""

from __future__ import annotations

import re
from typing import Any

from .privacy import LazyPattern

# A continuation comes within minutes of the prompt it continues. After a longer pause the
# person has usually moved on (or a new topic prompt would name itself), so the room lapses.
CARRY_MAX_AGE_S = 20 * 60

# The previous room's head start on a prompt that gives it some evidence of its own: half a
# keyword, one weak word ("table", "page"). Enough to keep a conversation on its topic against
# an equally weak new reading; not enough against a prompt that names another room outright.
STICKY_BONUS = 0.5

# A prompt with this many words or more that names no room is about something else: a real
# continuation is a short instruction ("also the admin page", "same for staging"), while the
# long ones that name no room are explanations, git questions or refactors.
CARRY_MAX_WORDS = 20

# An acknowledgement up to this many words closes a task rather than continuing it ("thanks,
# that works too", "great, works again").
ACK_MAX_WORDS = 5

# Words and openings that make a prompt lean on the one before it. Every alternative holds one
# of FOLLOW_HINTS, so most prompts are ruled out by substring tests before the regex compiles.
# "too" counts at the end ("the admin page too"), not as a degree ("too strict"); "the other"
# not before a time word ("the other day", "the other session" ask about the past, not the task).
FOLLOW_RE = LazyPattern(
    r"\b(the\s+same|same\s+(for|with|thing|here|there|fix|change|way)|also|as\s+well|again"
    r"|another|the\s+rest|(the\s+)?others?\s+ones?|remaining|similarly|likewise"
    r"|the\s+others?\b(?!\s+(day|days|week|time|session|sessions|conversation|chat|night))"
    r"|what\s+about|how\s+about|and\s+(for|the|what|now|then)|still)\b"
    r"|\btoo\W*$"
    r"|^\W*(?:(?:ok(?:ay)?|great|good|cool|nice|perfect|thanks|thx|right|alright|yes|yep|hmm+"
    r"|oh|wait|so|alright)\W+)?(now|next|then|and)\b",
    re.IGNORECASE,
)
FOLLOW_HINTS = (
    "same", "also", "too", "as well", "again", "another", "rest", "other", "remaining",
    "similarly", "likewise", "what about", "how about", "and", "still", "now", "next", "then",
)  # fmt: skip

# Words that announce a new topic: neither carry nor stickiness applies after them.
SWITCH_RE = LazyPattern(
    r"\b(separately|unrelated|btw|by\s+the\s+way|different\s+(question|topic|thing)"
    r"|another\s+(question|thing|topic)|switching\s+gears|change\s+of\s+(topic|subject)"
    r"|new\s+topic|side\s+note|off\s+topic|while\s+(that's|that\s+is|it's|its|that)\s+"
    r"(runs|running|builds|building|deploys))\b",
    re.IGNORECASE,
)

ACK_RE = LazyPattern(
    r"^\W*(thanks?|thank\s+you|thx|ty|great|perfect|nice|cool|awesome|lgtm|ok(ay)?|sweet"
    r"|got\s+it|works|worked|that\s+works|that\s+worked|yay|lol|nvm|never\s*mind)\b",
    re.IGNORECASE,
)

_WORD = re.compile(r"[A-Za-z0-9']+")


def is_follow_up(prompt: str) -> bool:
    """True when ``prompt`` reads as a continuation of the previous one."""
    words = _WORD.findall(prompt)
    if not words or len(words) >= CARRY_MAX_WORDS:
        return False
    low = prompt.lower()
    if not any(hint in low for hint in FOLLOW_HINTS):
        return False
    if is_ack(prompt) and not TASK_AFTER_ACK.search(prompt) or SWITCH_RE.search(prompt):
        return False
    return bool(FOLLOW_RE.search(prompt))


# An acknowledgement that goes on to ask for more ("ok now staging") is a follow-up after all.
TASK_AFTER_ACK = LazyPattern(r"\b(now|next|then|and|also|same|what\s+about|how\s+about)\b", re.I)


def is_ack(prompt: str) -> bool:
    """A short acknowledgement or closing ("thanks!", "ok that works", "nvm")."""
    return len(_WORD.findall(prompt)) <= ACK_MAX_WORDS and bool(ACK_RE.search(prompt))


def choose_rooms(
    detail: list[Any],
    prompt: str,
    previous: tuple[str, float] | None,
    now: float,
    max_rooms: int,
) -> tuple[list[tuple[str, float]], bool]:
    """The rooms to recall given the classifier's ``detail`` (classify_detail: every room with
    a score, best first) and the session's ``previous`` (room, time). Returns (rooms, carried):
    ``carried`` when the previous room stands in for a prompt that named none.

    A conversation stays on its topic more often than not, so the previous room, when recent,
    gets STICKY_BONUS on this prompt if the prompt itself gives it any evidence: "that table is
    40M rows, run it in batches" stays database although "batches" alone says data-pipeline."""
    from .classify import ROOM_THRESHOLD

    above = [(m.room, m.score) for m in detail if m.score >= ROOM_THRESHOLD][:max_rooms]
    if previous is None or not previous[0] or not 0 <= now - previous[1] <= CARRY_MAX_AGE_S:
        return above, False
    if SWITCH_RE.search(prompt):
        return above, False
    room = previous[0]
    own = next((m.score for m in detail if m.room == room), 0.0)
    if above:
        if above[0][0] == room or own <= 0 or own + STICKY_BONUS < above[0][1]:
            return above, False
        rest = [(r, s) for r, s in above if r != room]
        return ([(room, own)] + rest)[:max_rooms], False
    if own > 0 or is_follow_up(prompt):
        return [(room, own)], True
    return [], False
