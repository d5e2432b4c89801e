"""Time words in a query (store/when.py): windows and orderings relative to a fixed now."""

from __future__ import annotations

import datetime as dt

import pytest

from memory_tool.store.when import parse

# A Friday.
NOW = dt.date(2026, 11, 20)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("what did we fix today?", "2026-11-20", "2026-11-20"),
        ("what broke this morning", "2026-11-20", "2026-11-20"),
        ("what did we fix yesterday?", "2026-11-19", "2026-11-19"),
        ("the deploy last night", "2026-11-19", "2026-11-19"),
        ("the day before yesterday", "2026-11-18", "2026-11-18"),
        ("what did we change in the release script on Monday?", "2026-11-16", "2026-11-16"),
        ("last Tuesday's outage", "2026-11-17", "2026-11-17"),
        # Asked on a Friday, "on Friday" is last week's.
        ("the migration on Friday", "2026-11-13", "2026-11-13"),
        ("what did we do about caching this week?", "2026-11-16", "2026-11-20"),
        ("the order export work last week", "2026-11-09", "2026-11-15"),
        ("the week before last", "2026-11-02", "2026-11-08"),
        ("what did we do to the docker image two weeks ago?", "2026-11-02", "2026-11-08"),
        ("3 weeks ago", "2026-10-26", "2026-11-01"),
        ("a couple of days ago", "2026-11-18", "2026-11-18"),
        ("five days ago", "2026-11-15", "2026-11-15"),
        ("a month ago", "2026-10-01", "2026-10-31"),
        ("what was wrong with the login test last month?", "2026-10-01", "2026-10-31"),
        ("earlier this month", "2026-11-01", "2026-11-20"),
        ("this year", "2026-01-01", "2026-11-20"),
        ("last year", "2025-01-01", "2025-12-31"),
        ("in the last 3 days", "2026-11-17", "2026-11-20"),
        ("over the past two weeks", "2026-11-06", "2026-11-20"),
        ("the past week", "2026-11-13", "2026-11-20"),
        ("what happened with the database over the weekend?", "2026-11-14", "2026-11-15"),
        ("last weekend", "2026-11-14", "2026-11-15"),
        ("in recent days", "2026-11-06", "2026-11-20"),
        ("the other day", "2026-11-13", "2026-11-19"),
        # A month without a year: the most recent one that has begun.
        ("the order export in September", "2026-09-01", "2026-09-30"),
        ("in November", "2026-11-01", "2026-11-30"),
        ("in December", "2025-12-01", "2025-12-31"),
        ("in may", "2026-05-01", "2026-05-31"),
        ("last March", "2026-03-01", "2026-03-31"),
        ("in July 2022", "2022-07-01", "2022-07-31"),
        ("during March 2023", "2023-03-01", "2023-03-31"),
        ("October 2023", "2023-10-01", "2023-10-31"),
        ("in 2022", "2022-01-01", "2022-12-31"),
        ("early August", "2026-08-01", "2026-08-10"),
        ("mid-August 2023", "2023-08-10", "2023-08-20"),
        ("the end of June", "2026-06-21", "2026-06-30"),
        ("the last week of August 2023", "2023-08-25", "2023-08-31"),
        ("the first week of April, 2023", "2023-04-01", "2023-04-07"),
        ("the last two weeks of August 2023", "2023-08-18", "2023-08-31"),
        # The 1st a Sunday: read both ways.
        ("the first weekend of October 2023", "2023-10-01", "2023-10-08"),
        ("the last weekend of May 2026", "2026-05-30", "2026-05-31"),
        ("summer 2022", "2022-06-01", "2022-08-31"),
        ("last summer", "2026-06-01", "2026-08-31"),
        ("winter 2022", "2022-12-01", "2023-02-28"),
        ("on 9 July, 2022", "2022-07-09", "2022-07-09"),
        ("9th December 2023", "2023-12-09", "2023-12-09"),
        ("December 4, 2023", "2023-12-04", "2023-12-04"),
        ("on March 3rd", "2026-03-03", "2026-03-03"),
        ("on Dec 24", "2025-12-24", "2025-12-24"),
        ("2026-10-14", "2026-10-14", "2026-10-14"),
        # A date after since/after/before/until opens the window on one side.
        ("what changed since Monday", "2026-11-16", "2026-11-20"),
        ("since yesterday afternoon", "2026-11-19", "2026-11-20"),
        ("after 2026-11-01", "2026-11-02", "2026-11-20"),
        ("before October", "", "2026-09-30"),
        ("until 3 October 2026", "", "2026-10-03"),
        # A duration before a date: from then to the date (told on the day named).
        ("the puppy she got two weeks before August 11, 2023", "2023-07-28", "2023-08-11"),
        # A written date wins over one counted from now.
        ("last weekend before April 10, 2023", "2023-04-03", "2023-04-10"),
        ("from 2021", "2021-01-01", "2026-11-20"),
    ],
)
def test_windows(query: str, start: str, end: str) -> None:
    when = parse(query, NOW)
    assert when is not None, query
    assert (when.start, when.end) == (start, end)


@pytest.mark.parametrize(
    ("query", "order"),
    [
        ("when did the login test first fail?", "first"),
        ("the first time we touched the release script", "first"),
        ("what was the first caching we added?", "first"),
        ("the earliest mention of the rate limiter", "first"),
        ("how did we originally set up CI", "first"),
        ("the latest decision about rate limits", "last"),
        ("the most recent change to the docker setup", "last"),
        ("what was the last problem with the login test?", "last"),
        ("the last time the deploy failed", "last"),
        ("the newest note on billing", "last"),
        # How recent is recent depends on who asks: an order, not a window.
        ("what did we change in the parser recently", "last"),
        ("what has been slow lately", "last"),
    ],
)
def test_orderings(query: str, order: str) -> None:
    when = parse(query, NOW)
    assert when is not None and when.order == order
    assert not when.window
    # The order words stay among the words: "when did we first..." is told as "we first...".
    assert when.rest == query


@pytest.mark.parametrize(
    ("query", "side", "anchor", "rest"),
    [
        ("what changed in checkout since the rounding fix?", "since", "the rounding fix",
         "what changed in checkout ?"),
        ("which docker problem did we have before the image was slimmed down?", "before",
         "the image was slimmed down", "which docker problem did we have ?"),
        # After and until keep the event's words: what followed is told with it.
        ("how did she feel after the accident?", "after", "the accident",
         "how did she feel the accident?"),
        ("what did we ship until the freeze", "until", "the freeze",
         "what did we ship the freeze"),
    ],
)  # fmt: skip
def test_event_anchors(query: str, side: str, anchor: str, rest: str) -> None:
    when = parse(query, NOW)
    assert when is not None
    assert (when.side, when.anchor, when.rest) == (side, anchor, rest)
    assert not when.window  # the search dates the event


def test_time_words_leave_the_rest_of_the_query() -> None:
    when = parse("what did we change in the release script on Monday?", NOW)
    assert when is not None
    assert when.rest == "what did we change in the release script ?"
    assert when.found == ["on Monday"]
    # A written date stays among the words: a memory may say "9 July" in its text.
    when = parse("how did John relax on 9 July, 2022?", NOW)
    assert when is not None and when.rest == "how did John relax on 9 July, 2022?"


@pytest.mark.parametrize(
    "query",
    [
        "how do we deploy to staging?",
        "set up my terminal the way I like it",
        "fix the refresh token flow",
        "may I ask about the cache",  # "may" alone is no month
        "the march to microservices",
        "Spring Boot config for the tests",  # a framework, not a season
        "add a remember me checkbox, the cookie should last 30 days",  # "last" as a verb
        "Total size of serialized results of 2043 tasks",  # a number, not a year
        "run the tests before pushing",  # no event: an -ing form
        "keep the original order when deduping",
        "open new tmux panes in the current directory",
        "what should I look at first",
        "when did Nate get his first two turtles?",  # "first" as a number
        "python 2024 release notes",
        "",
    ],
)
def test_no_time_words_no_time(query: str) -> None:
    assert parse(query, NOW) is None


def test_a_date_after_now_rolls_back_a_year() -> None:
    when = parse("the outage on 30 December", NOW)
    assert when is not None and when.start == "2025-12-30"
