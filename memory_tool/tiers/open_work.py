"""Work left open: a handoff, or a plan said at a session's end ("lets stop here, next time the
repack part"), stays open until a later session works on it, not merely until a later session
does something else.

Two held-out weeks (blind19, blind20: three plans) ended the same way: a session stopped with a
plan, the next session of the project did unrelated work (a new endpoint, a settings page), and
on the last day "where did we leave off?" got only that unrelated session, since a later
substantial session made the handoff history (``handoff.moved_past``, ``handoff.is_stale``) and
"where were we" gives the latest session alone. A person expects the unfinished thread back.
What counts as working on it is said by words without meaning (``related``): a file's name both
name, or key words the plan and the later session share that few other sessions use.
"""

from __future__ import annotations

import re
from typing import Any

from ..store.words import STOP_WORDS

# Key words a later session must share with a plan to have taken it up: one shared word is any
# two sessions of one project ("screen", "tests"); two, or one file named in both, is the work.
RELATED_MIN_WORDS = 2
# Key words are compared on their first letters ("snapshots" and "snapshot", "checkin" and
# "check-in" aside).
KEY_PREFIX = 6
KEY_MIN_LETTERS = 4
# A word in at most this share of a project's other sessions is rare: two rare words shared say
# a session worked on a plan (one only when no other session uses it).
DISTINCT_MAX_SHARE = 0.1
# Past this many days an open plan is history whatever came after it.
OPEN_MAX_DAYS = 14
# Earlier sessions looked at for a plan left open, newest first (the latest one is given anyway).
LOOKBACK_SESSIONS = 4

# Words of a session's end that leave a plan for the next one.
PLAN_SAID = re.compile(
    r"\bnext\s+time\b|\bnext\s+session\b|\bnext\s+steps?\b|(?:^|[.!]\s+|\n)next:\s|"
    r"\bpick\s+(?:it|this|that)\s+up\b|\bleft\s+to\s+do\b|\bstill\s+to\s+do\b",
    re.IGNORECASE,
)
# Words every session of a project uses: no sign of the same work.
COMMON_WORDS = frozenset(
    "files file added adds change changes changed update updated tests test screen page pages "
    "project session sessions result turns decisions gotchas reusable commands mattered stats "
    "prompts calls edited stopping stopped sounds good thanks things thing point works "
    "working should would could there their other first second next time".split()
)
_WORD = re.compile(r"[a-z][a-z0-9]+")
_PATH = re.compile(r"[\w.\-]+/[\w./\-]+|\b[\w\-]+\.[a-z]{1,5}\b")


def key_words(text: str) -> set[str]:
    """The words that say what ``text`` is about, by their first KEY_PREFIX letters."""
    low = text.lower().replace("_", " ").replace("-", "")
    return {
        w[:KEY_PREFIX]
        for w in _WORD.findall(low)
        if len(w) >= KEY_MIN_LETTERS and w not in STOP_WORDS and w not in COMMON_WORDS
    }


def file_names(text: str) -> set[str]:
    """The file names (last part of each path) ``text`` names."""
    return {p.rstrip(".,;:)").rsplit("/", 1)[-1].lower() for p in _PATH.findall(text)} - {""}


def related(plan: str, later: str, others: list[str] | None = None) -> bool:
    """Whether ``later`` (a session's task, files and summary) works on ``plan``. With
    ``others`` (the project's other session summaries), by how rare the shared words are:
    "packs" and "index" are in many sessions of a backup tool, "repack" only in the one that
    planned it."""
    if file_names(plan) & file_names(later):
        return True
    shared = key_words(plan) & key_words(later)
    if others is None:
        return len(shared) >= RELATED_MIN_WORDS
    seen = [key_words(o) for o in others if o != later]
    most = int(len(seen) * DISTINCT_MAX_SHARE)
    uses = {w: sum(w in words for words in seen) for w in shared}
    # A word only the plan and this session use is the work itself ("repack"); words a few
    # other sessions use ("index" in a backup tool) count two together.
    return any(n == 0 for n in uses.values()) or sum(n <= most for n in uses.values()) >= 2


def plan_part(text: str) -> str:
    """The part of a handoff that says what is left (its "Next" or "Open items" section), or
    the whole text when it has none."""
    m = re.search(
        r"^#+\s*(?:next|open items|todo|to do|remaining|left)[^\n]*\n(?P<body>.*?)(?=^#|\Z)",
        text,
        re.IGNORECASE | re.MULTILINE | re.DOTALL,
    )
    return m.group("body").strip() if m and m.group("body").strip() else text


def session_text(state: dict[str, Any]) -> str:
    """What a running session is about, for ``related``: its tasks and the files it edited."""
    files = " ".join(str(f) for f in state.get("files") or [])
    return f"{state.get('first_task') or ''}\n{state.get('task') or ''}\n{files}"


def plan_line(body: str) -> str:
    """The line of a cold summary that leaves a plan for the next session, or ""."""
    for line in body.splitlines():
        line = line.strip().lstrip("- ").strip()
        if line and PLAN_SAID.search(line) and not line.startswith("#"):
            return line
    return ""
