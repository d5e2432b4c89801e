"""L4, deep recall: when a prompt asks about the past, the ids and one-line summaries (depth 2)
of the best matches anywhere, past sessions included; the agent fetches full text with
``memory-tool get`` only for what it confirms.

Hook path: imports no YAML, tokenizer, click or rapidfuzz.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..base.privacy import LazyPattern, strip_injected
from ..store.search import QUERY_HEAD_CHARS, QUERY_TAIL_CHARS, search
from .layers import Layer, Unit, pack

if TYPE_CHECKING:
    from ..store.entry import Entry
    from ..store.index import Index

# Prompts that ask about the past trigger L4 from the hook. Compiled on first need: every
# alternative holds one of PAST_HINTS, so most prompts are ruled out by substring tests.
PAST_HINTS = (
    "have", "had", "did", "last", "remember", "discussed", "decided", "talked", "looked",
    "tried", "session", "conversation", "chat", "before",
)  # fmt: skip
PAST_RE = LazyPattern(
    r"\b(have|had|did)\s+(we|i|you)\b.{0,40}\b(before|ever|already|previously|last time|"
    r"decide|done|tried|try|fix|use|see|hit|discuss)\w*"
    r"|\b(did|have)\s+(we|i|you)\s+ever\b"
    r"|\blast\s+time\b"
    r"|\bremember\s+(when|how|what|why|that|the)\b"
    r"|\bwhat\s+did\s+(we|i|you)\s+(decide|choose|pick|agree|settle|conclude|do|say|use)\b"
    r"|\bwhy\s+did\s+(we|i|you)\b"
    r"|\b(we|i)\s+(discussed|decided|talked about|looked at|tried)\b.{0,30}\b(before|earlier|"
    r"last|previously|yesterday)\b"
    r"|\b(in|from)\s+(a|an|the)\s+(previous|earlier|past|last)\s+(session|conversation|chat)\b"
    r"|\bhave\s+we\s+(done|seen|solved|fixed|had)\s+(this|that|it)\b"
    r"|\b(been|come)\s+(here|across this)\s+before\b",
    re.IGNORECASE,
    hints=PAST_HINTS,
)


def is_past_question(prompt: str) -> bool:
    return PAST_RE.found(prompt[:QUERY_HEAD_CHARS] + " " + prompt[-QUERY_TAIL_CHARS:])


# Hits of other projects (their sessions, their own memories) come after this project's, under
# this heading: "last time" means this project's last time, and another project's answer must
# not pass for this one's.
OTHER_PROJECTS_HEADING = "### From other projects\n"


def deep_recall(
    idx: Index,
    prompt: str,
    *,
    budget: int,
    max_chars: int = 3_000,
    exclude: set[str] | None = None,
    limit: int = 10,
    home_project: str | None = None,
) -> Layer:
    """IDs and one-line summaries (depth 2) of the best matches anywhere, past sessions
    included; the agent fetches full text with ``memory-tool get`` only for what it confirms.
    With ``home_project`` (the session's project), that project's hits and everyone's come
    first and other projects' hits follow, labelled."""
    result = Layer("L4", budget)
    hits = search(idx, strip_injected(prompt), limit=limit, exclude=set(exclude or ()))
    if not hits:
        return result
    count = idx.count_cached
    head = "## Possibly related, from past sessions and all memory (L4; `memory-tool get ID`)\n"
    heading = Unit(head, count(head))

    def other(e: Entry) -> bool:
        return home_project is not None and e.project not in ("", home_project)

    def render(picked: list[Entry], n_omitted: int) -> list[Unit]:
        if not picked:
            return []
        units = [heading] + [Unit(e.summary, e.summary_tokens) for e in picked if not other(e)]
        theirs = [Unit(e.summary, e.summary_tokens) for e in picked if other(e)]
        if theirs:
            units += [Unit(OTHER_PROJECTS_HEADING, count(OTHER_PROJECTS_HEADING)), *theirs]
        return units

    entries = idx.current(h.entry for h in hits)  # no old version of an edited file
    entries = [e for e in entries if not other(e)] + [e for e in entries if other(e)]
    layer = pack("L4", entries, budget, limit, max_chars, render)
    result.units, result.picked, result.omitted = layer.units, layer.picked, layer.omitted
    return result
