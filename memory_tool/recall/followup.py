"""Follow-up prompts: "now do the same for the refund cases" names no topic, yet it is about the
room of the prompt before it. When the classifier finds no room, a prompt that reads as a
continuation, in a session whose last room was chosen a few minutes ago, recalls that room again
(entries the session already has stay out, so it brings only what the new words match or what
is left).

A closing brings nothing at all: thanks, praise or "it works now" with nothing asked ("it
rolled out, thanks") ends the task, even when it names the task's room.

Carry-over is deliberately narrow: a continuation needs a marker word ("same", "also", "again",
"what about", a leading "now"/"and"...) or a clue of the room's own (one of its weak words);
short acknowledgements never carry ("thanks, works too"), and a long prompt with no room word
is taken to be about something else. A bare "it"
is no marker: it closes a task as often as it continues one ("that fixed it", "push it");
measured on the first follow-up set, it found 3 more continuations and carried into 6
closings. Stdlib only: this runs on the UserPromptSubmit hook path.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..base.privacy import LazyPattern
from .seen import UNCHANGED, Unchanged

if TYPE_CHECKING:  # for the annotations only: nothing is imported at run time
    from ..store.classify import CompiledRooms

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
# of FOLLOW_HINTS, so most prompts are ruled out by substring tests (LazyPattern.may_match).
# "too" counts at the end ("the admin page too"), not as a degree ("too strict"); "the other"
# not before a time word ("the other day", "the other session" ask about the past, not the task).
FOLLOW_HINTS = (
    "same", "also", "too", "as well", "again", "another", "rest", "other", "remaining",
    "similarly", "likewise", "what about", "how about", "and", "still", "now", "next", "then",
)  # fmt: skip
FOLLOW_RE = LazyPattern(
    r"\b(the\s+same|same\s+(for|with|thing|here|there|fix|change|way)|also|as\s+well|again"
    r"|another|the\s+rest|(the\s+)?others?\s+ones?|remaining|similarly|likewise"
    r"|the\s+others?\b(?!\s+(day|days|week|time|session|sessions|conversation|chat|night))"
    r"|what\s+about|how\s+about|and\s+(for|the|what|now|then)|still)\b"
    r"|\btoo\b\W*($|[.!;]\s)"
    r"|^\W*(?:(?:ok(?:ay)?|great|good|cool|nice|perfect|thanks|thx|right|alright|yes|yep|hmm+"
    r"|oh|wait|so|alright)\W+)?(now|next|then|and)\b",
    re.IGNORECASE,
    hints=FOLLOW_HINTS,
)


# "Do the same for X" repeats the last task somewhere else: the task's room leads, X's room
# (the reports viewset: api) only says where.
SAME_TASK_RE = LazyPattern(
    r"\b((do|does|did|apply|make)\s+(it\s+)?the\s+same|same\s+(thing|fix|change|treatment)"
    r"|the\s+same\s+for)\b",
    re.IGNORECASE,
    hints=("same",),
)

# A prompt that opens by reporting the last step done ("ok did that, still null in the route
# handler", "added cy.intercept, still flaky on the ci runner", "javax -> jakarta is done. now
# hibernate complains") goes on with the same task: its room leads, whatever room the new
# detail's words point to (that one comes second).
REPORT_OPENING_RE = LazyPattern(
    r"^\W*(ok(ay)?\W+)?(did\s+(that|it|this)|done\b|tried\s+(that|it|this)|(added|fixed|changed"
    r"|moved|switched|removed|updated|bumped|applied|renamed|set)\s[^.!?,;\n]{1,60}[.!?,;]"
    r"|(that|it|this)\s+(works|worked|helped)|[^.!?\n]{1,60}?\s(is|are)\s+done\b"
    r"|nice\W+the\s+\w+(\s+\w+)?\s+works)",
    re.IGNORECASE,
    hints=(
        "did ",
        "done",
        "tried",
        "added",
        "fixed",
        "changed",
        "moved",
        "switched",
        "removed",
        "updated",
        "bumped",
        "applied",
        "renamed",
        "set ",
        "works",
        "worked",
        "helped",
    ),
)

# After such a report, a next task announced ("done. now the django upgrade", "that worked, can
# you write a jest test for it") may be about anything: the report alone does not keep the
# room then, unless the problem persists ("still").
NEXT_TASK_RE = LazyPattern(
    r"\b(now|next|can\s+you|could\s+you|i\s+want|i'?d\s+like|let'?s)\b",
    re.IGNORECASE,
    hints=("now", "next", "can ", "could ", "want", "like", "let"),
)
STILL_RE = LazyPattern(r"\bstill\b", re.IGNORECASE, hints=("still",))


def _reports_and_goes_on(prompt: str) -> bool:
    """The prompt opens with the last step done and goes on with the same task."""
    if not REPORT_OPENING_RE.found(prompt):
        return False
    return STILL_RE.found(prompt) or not NEXT_TASK_RE.found(prompt)


# Words that announce a new topic: neither carry nor stickiness applies after them.
SWITCH_RE = LazyPattern(
    r"\b(separately|unrelated|btw|by\s+the\s+way|(different|separate|unrelated|quick)\s+"
    r"(question|topic|thing|q)|totally\s+different|moving\s+on|meanwhile"
    r"|another\s+(question|thing|topic)|switching\s+gears|change\s+of\s+(topic|subject)"
    r"|new\s+topic|side\s+note|off\s+topic|random\s+(q|question|thing|one|but)|also\s+random"
    r"|quick\s+one|while\s+(that's|that\s+is|it's|its|that)\s+"
    r"(runs|running|builds|building|deploys))\b"
    # "anyway" opening a sentence leaves what came before ("it was brew's postgres. anyway,
    # what is a monad"); inside one it means "regardless" ("ship it anyway")
    r"|(^|[.!?;,]\s*)anyways?\b",
    re.IGNORECASE,
    hints=(
        "separate", "unrelated", "btw", "way", "different", "quick", "moving", "meanwhile",
        "another", "switching", "change", "topic", "side", "random", "while", "anyway",
    ),
)  # fmt: skip

_WORD = re.compile(r"[A-Za-z0-9']+")

# An acknowledgement that goes on to ask for more ("ok now staging") is a follow-up after all.
TASK_AFTER_ACK = LazyPattern(r"\b(now|next|then|and|also|same|what\s+about|how\s+about)\b", re.I)

ACK_RE = LazyPattern(
    r"^\W*(thanks?|thank\s+you|thx|ty|great|perfect|nice|cool|awesome|lgtm|ok(ay)?|sweet"
    r"|got\s+it|works|worked|that\s+works|that\s+worked|yay|lol|nvm|never\s*mind)\b",
    re.IGNORECASE,
)

# A closing: thanks, praise or a report that it works, with nothing asked ("readiness probe
# path was wrong, it rolled out. thanks", "4x faster, amazing", "psycopg2-binary worked").
# The task is done; its room's remaining memories would only cost tokens. Any sign of a
# request (a question mark, "can you", "please", "also", "next", an imperative opening a
# sentence) or of a problem ("janky", "still", "doesn't") makes it a prompt like any other.
# A closing is short: thanks followed by a paragraph is a new request in polite form. 18 words
# lets a closing say what the fix was ("it was waiting on a sudo password prompt lol. fixed,
# thanks for pointing me there": 15); at 14, a fifth of the missed closings of the follow-up
# sets read were longer. Over every labeled classifier set, 18 reads no more prompts that have a
# room as closings than 14 did (tests/test_followup.py checks the sets we may read).
CLOSING_MAX_WORDS = 18
CLOSING_HINTS = (
    "thank", "thx", "ty", "cheers", "appreciate", "perfect", "awesome", "amazing", "brilliant",
    "excellent", "legend", "rock", "lgtm", "well done", "work", "job", "stuff", "one", "catch",
    "looks", "did it", "fixed it", "was it", "now", "ran ", "again", "live", "done", "good",
    "phew", "sense", "going", "calling", "clean", "know", "it is", "sorted", "tomorrow", "later",
    "lunch", "monday", "week", "bring", "run it", "check", "talk", "loop", "folks", "team",
    "people", "nice", "cool", "sweet", "great", "call", "merged", "shipped", "pushed", "deployed",
    "fixed", "agreed", "trick", "closing", "ship it", "enough", "switched", "removed", "reverted",
    "pinned", "dropped", "bumped", "disabled", "deleted",
    "\U0001F44D", "\U0001F64F", "\U0001F44C",
    "\U0001F389", "\u2705", "\U0001F680", "\U0001F4AF",
)  # fmt: skip
CLOSING_RE = LazyPattern(
    r"\b(thanks|thank\s+you|thx|tysm|ty|cheers|much\s+appreciated|appreciate\s+it|perfect"
    r"|awesome|amazing|brilliant|excellent|legend|you\s+rock|lgtm|well\s+done"
    r"|(great|nice|good)\s+(work|job|stuff|one|catch)"
    # not a comparison of places, which reports a bug ("overlaps on safari, looks fine in chrome")
    r"|looks\s+(good|great|right|fine)(?!\s+(in|on|locally|when|with|until|at)\b)"
    r"|(that|it|this)\s+(worked|works|did\s+it|fixed\s+it|was\s+it)|fixed\s+it|works\s+now"
    r"|(working|works)\s+(now|again)|(green|passing|passes|pass)\s+now|ran\s+(fine|clean|ok)"
    r"|is\s+live|done\s+here|all\s+good|phew|makes\s+sense|going\s+with|calling\s+it\s+a\s+day"
    r"|appreciate\s+(it|that|the\s+\w+)|looks\s+clean|good\s+call|(didn'?t|did\s+not)\s+know"
    r"|nice\s+trick|closing\s+(this|it)|ship\s+it\W*$|good\s+enough"
    # a report that the last step is done ("removed it", "switched it. ok")
    r"|(switched|removed|reverted|pinned|dropped|bumped|disabled|deleted)\s+it\W*(ok(ay)?\W*)?$"
    r"|\w+ it is\s*([,.!]|$)|(?<!not\s)(?<!n't\s)(?<!nt\s)\bsorted\W*$"
    # a decision or a deferral: the task is settled for now ("I'll do it tomorrow morning")
    r"|(i'?ll|i\s+will|we'?ll|we\s+will)\s+(\S+\s+){0,8}?(tomorrow|later|after\s+lunch|monday"
    r"|next\s+week)"
    r"|(i'?ll|i\s+will)\s+(bring\s+it\s+up|run\s+it\s+by|check\s+with|talk\s+to|loop\s+in"
    r"|get\s+the\s+\S+\s+(folks|team|people)))\b"
    # an opening word of praise, set off as such ("nice, just opened the PR"; not "great
    # expectations suite for ...")
    r"|^\W*(ok(ay)?\W+)?(nice|cool|sweet|great)\s*[,.!]+(?!\W*(now|next|then|but|so)\b)"
    r"|\b(nice|great|perfect|sweet|fixed)\W*$|^\W*fixed\b|\b(team|we)\s+agreed"
    # a report that the work landed ("merged, already caught one drift", "done, works")
    r"|^\W*(done|merged|shipped|pushed|deployed)\s*[,.!]"
    r"|[\U0001F44D\U0001F64F\U0001F389\u2705\U0001F680\U0001F4AF\U0001F44C]",
    re.IGNORECASE,
    hints=CLOSING_HINTS,
)
REQUEST_RE = LazyPattern(
    r"\?|\b((can|could|would|will)\s+(you|u|we)|please|pls|plz|let'?s|also|next|then"
    r"|but(?!\s+(it\s+)?works?\b)"
    # "still" reports a problem, unless it is "still works"
    r"|however|still(?!\s+(works?|working|pass(es|ing)?|imports?|runs?|builds?|fine|ok|good))"
    r"|instead|though|although|janky|laggy|flaky|broken|fails|failing|stuck"
    r"|(i|we)\s+(want|need|would\s+like)|i'?d\s+like"
    r"|crash\w*|doesn'?t|does\s+not|isn'?t|is\s+not|not\s+working)\b"
    r"|\bnow\s+(do|add|make|fix|change|update|let|can|try|write|use|move|we|i|the|for|run)\b"
    r"|(^|[.!;,:]\s*)(have|take)\s+a\s+look"
    r"|(^|[.!;,:]\s*|\band\s+)(add|make|fix|change|update|remove|delete|write|try|use|move"
    r"|rename|implement|refactor|run|create|show|explain|check|do|handle|set|put|give|find|can"
    r"|could"
    r"|look|investigate|debug|wire|convert|split|bump|upgrade|why|how|what|where|when|which"
    r"|should|is|are|does|do)\b",
    re.IGNORECASE,
)


def topic_of(prompt: str) -> str:
    """The part of ``prompt`` that says what it is about: after an announced switch, only what
    follows it ("ok I'll do the code splitting later. quick q, how do I undo a rebase" is about
    the rebase; the words before the switch still talk about the last task)."""
    if not SWITCH_RE.may_match(prompt.lower()):
        return prompt
    ends = [m.end() for m in SWITCH_RE.finditer(prompt)]
    if not ends:
        return prompt
    rest = prompt[ends[-1] :]
    return rest if _WORD.search(rest) else prompt


def is_closing(prompt: str) -> bool:
    """Thanks, praise or "it works" with nothing asked: the task is closed."""
    if not CLOSING_RE.may_match(prompt.lower()):
        return False
    if len(_WORD.findall(prompt)) > CLOSING_MAX_WORDS:
        return False  # "thanks. moving on, I want a status column on orders" asks for more
    return bool(CLOSING_RE.search(prompt)) and not REQUEST_RE.search(prompt)


def is_follow_up(prompt: str) -> bool:
    """True when ``prompt`` reads as a continuation of the previous one."""
    words = _WORD.findall(prompt)
    if not words or len(words) >= CARRY_MAX_WORDS:
        return False
    if not FOLLOW_RE.may_match(prompt.lower()):
        return False
    if is_ack(prompt) and not TASK_AFTER_ACK.search(prompt) or SWITCH_RE.found(prompt):
        return False
    return bool(FOLLOW_RE.search(prompt))


def is_ack(prompt: str) -> bool:
    """A short acknowledgement or closing ("thanks!", "ok that works", "nvm")."""
    return len(_WORD.findall(prompt)) <= ACK_MAX_WORDS and bool(ACK_RE.search(prompt))


def choose_rooms(
    prompt: str,
    previous: tuple[str, float] | None,
    now: float,
    max_rooms: int,
    rooms: CompiledRooms,
) -> tuple[list[tuple[str, float]], bool]:
    """The rooms to recall for ``prompt`` (classified with ``rooms`` on its topic_of) given the
    session's ``previous`` (room, time). Returns (rooms, carried):
    ``carried`` when the previous room stands in for a prompt that named none.

    A conversation stays on its topic more often than not, so the previous room, when recent,
    gets STICKY_BONUS on this prompt if the prompt itself gives it any evidence: "that table is
    40M rows, run it in batches" stays database although "batches" alone says data-pipeline."""
    from ..store.classify import ROOM_THRESHOLD, classify_detail, injectable, injects

    if is_closing(prompt):
        return [], False
    detail = classify_detail(topic_of(prompt), rooms)
    above = [(m.room, m.score) for m in injectable(detail, rooms)][:max_rooms]
    recent = bool(previous and previous[0] and 0 <= now - previous[1] <= CARRY_MAX_AGE_S)
    background = not above and any(m.score >= ROOM_THRESHOLD for m in detail)
    if background and not (recent and is_follow_up(prompt)):
        # General programming is no room's business, unless it continues the last prompt
        # ("what about people with one name? it puts an empty string in last_name").
        return [], False
    if previous is None or not recent or SWITCH_RE.found(prompt):
        return above, False
    room = previous[0]
    if not injects(room, rooms):
        return above, False
    own = next((m.score for m in detail if m.room == room), 0.0)
    if above:
        # The previous room leads when the prompt repeats its task somewhere else, or gives
        # it evidence within STICKY_BONUS of the best new reading.
        close_call = own > 0 and own + STICKY_BONUS >= above[0][1]
        same_task = SAME_TASK_RE.found(prompt) or _reports_and_goes_on(prompt)
        if above[0][0] == room or not (close_call or same_task):
            return above, False
        rest = [(r, s) for r, s in above if r != room]
        return ([(room, own)] + rest)[:max_rooms], False
    if own > 0 or is_follow_up(prompt) or _reports_and_goes_on(prompt):
        return [(room, own)], True
    return [], False


def room_to_keep(prompt: str, chosen: list[tuple[str, float]]) -> str | None | Unchanged:
    """What the session remembers as its room after ``prompt``: the room it recalled; nothing
    once the talk moved to a topic-less task; unchanged after an acknowledgement or a closing
    ("thanks!"), so that a follow-up after it still finds the task's room."""
    if chosen:
        return chosen[0][0]
    return UNCHANGED if is_ack(prompt) or is_closing(prompt) else None
