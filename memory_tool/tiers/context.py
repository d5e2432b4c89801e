"""What the when-to-load table gives for a situation, asked for by hand: the CLI's ``context``
command and the MCP ``context`` tool. The prompt hook applies the same table on its own
(``inject.prompt_context``); this is the look-up a person or an agent makes on purpose.
"""

from __future__ import annotations

from typing import Any

from ..base.config import budget as config_budget
from ..base.config import load_config
from ..base.errors import MemoryToolError
from ..base.record import record
from ..store.index import Index
from . import inject
from .hot import latest_state, load_state
from .situations import LOAD_TABLE, SITUATIONS, situation_and_topic


def state_for(session: str | None, cwd: str) -> dict[str, Any] | None:
    """A session's hot state: the one named, or this project's latest (None: there is none)."""
    if session:
        state = load_state(session)
        if state is None:
            raise MemoryToolError(
                f"no hot memory for session {session!r}: the hooks have not seen it "
                "(leave the session out for this project's latest)."
            )
        return state
    return latest_state(cwd)


@record
class Context:
    situation: str
    hot: bool
    cold: str  # "latest" | "search" | ""
    wiki: bool
    session: str | None
    text: str
    tokens: int
    budget: int


def situation_context(
    idx: Index,
    *,
    situation: str | None,
    prompt: str,
    session: str | None,
    budget: int | None,
    cwd: str,
    max_chars: int = inject.PROMPT_CONTEXT_MAX_CHARS,
) -> Context:
    """What the hot, cold and wiki tiers load for ``situation`` (detected from ``prompt`` when
    not given), searched with ``prompt`` (else the session's task), within ``budget`` tokens
    (default: ``budgets.l4_tokens``) and ``max_chars``."""
    if situation is not None and situation not in SITUATIONS:
        raise MemoryToolError(
            f"situation must be one of {', '.join(SITUATIONS)}; got {situation!r}."
        )
    if budget is not None and budget < 0:
        raise MemoryToolError(f"a budget is a number of tokens, 0 or more; got {budget}.")
    state = state_for(session, cwd)
    chosen, topic = (situation, []) if situation else situation_and_topic(prompt)
    query = prompt or (state["task"] if state else "")
    tokens_budget = budget if budget is not None else config_budget(load_config(), "l4")
    units = inject.units_for(
        idx,
        chosen,
        prompt=query,
        cwd=cwd,
        state=state,
        budget=tokens_budget,
        max_chars=max_chars,
        topic=topic,
    )
    hot, cold, wiki = LOAD_TABLE[chosen]
    return Context(
        situation=chosen,
        hot=hot,
        cold=cold,
        wiki=wiki,
        session=state["session_id"] if state else None,
        text="".join(u.text for u in units),
        tokens=sum(u.tokens for u in units),
        budget=tokens_budget,
    )


def context_heading(ctx: Context) -> str:
    """One line: the situation and what its row of the table loads."""
    return (
        f"situation: {ctx.situation}  (hot: {'yes' if ctx.hot else 'in the conversation'}, "
        f"cold: {ctx.cold or 'no'}, wiki: {'matching records' if ctx.wiki else 'no'})"
    )
