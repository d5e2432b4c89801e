"""Time in a query: "yesterday", "last week", "two weeks ago", "in March", "on Friday", "since the
release", "the first time", "most recent", "before/after X", turned into a date window or an
ordering relative to *now*, for the one ranking (``store.search``) to rank inside.

Standard library only (``re``, ``datetime``, both loaded on the prompt path already), and cheap:
a query with none of HINTS is ruled out by substring tests before any regex compiles or runs,
and a query with no time expression gets ``None``, so it ranks exactly as it did without this.

Windows are calendar spans, inclusive: "last week" is last Monday to Sunday, "in March" the most
recent March that has begun, "two weeks ago" the Monday-to-Sunday week holding the day 14 days
back. A date word after since/after/before/until makes the window open on one side. An event
("since the release", "before the image was slimmed down") is kept as ``anchor`` words: the
search finds the event's date and opens the window there.
"""

from __future__ import annotations

import datetime as dt
import re

from ..base.record import field, record

# A time expression holds one of these (lower-cased substrings). Most prompts hold one of the
# short ones too ("day" in "today", "this"), so this only spares the regexes a share of prompts;
# what bounds the cost is that the patterns compile once per process and run on one query.
HINTS = (
    "day", "night", "ago", "last", "past", "previous", "this ", "week", "month", "year",
    "since", "before", "after", "until", "till", "prior", "first", "earliest", "latest",
    "recent", "newest", "lately", "original", "initial", "jan", "feb", "mar", "apr",
    "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", "summer", "winter", "spring",
    "autumn", "fall", "20", "19", "earlier", "morning", "evening", "afternoon",
)  # fmt: skip

# "The past few days", "in recent days" look back this many days: two weeks holds a sprint.
RECENT_DAYS = 14
# "The other day" is one to this many days back.
OTHER_DAY_DAYS = 7
# An event anchor is at most this many words ("since the release", "before we moved to uv").
ANCHOR_MAX_WORDS = 6

_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_MONTH_ABBR = {m[:3]: i for i, m in enumerate(_MONTHS, 1)} | {"sept": 9}
_MONTH_NUM = {m: i for i, m in enumerate(_MONTHS, 1)} | _MONTH_ABBR
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "few": 3,
    "a few": 3, "couple": 2, "a couple": 2, "a couple of": 2, "couple of": 2, "several": 4,
}  # fmt: skip
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11)}

_M = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
_MA = r"(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?"
_ANY_M = rf"(?:{_M}|{_MA})"
_WD = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_N = (
    r"(?:\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"(?:a\s+)?few|(?:a\s+)?couple(?:\s+of)?|several)"
)
_U = r"(?:day|week|month|year)s?"
_Y = r"(?:19|20)\d\d"
_ORD = r"(?:st|nd|rd|th)?"
# Words before a date that open the window on one side.
_PREP = r"(?:since|after|before|until|till|prior\s+to|by|from|in|on|during|of|over|throughout)"

# Each pattern's groups are read by name in ``_window``; ``pre`` is the word before the date.
_PATTERNS: list[tuple[str, str]] = [
    ("iso", r"(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})"),
    ("dmy", rf"(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<mon>{_ANY_M}),?\s*(?P<y>{_Y})?"),
    ("mdy", rf"(?P<mon>{_ANY_M})\s+(?P<d>\d{{1,2}}){_ORD}(?![\d:])(?:,?\s*(?P<y>{_Y}))?"),
    (
        "part",
        rf"(?:the\s+)?(?P<which>first|second|third|fourth|last|final)\s+(?P<n>two\s+|2\s+)?"
        rf"(?P<unit>weeks?|weekend)\s+(?:of|in)\s+(?P<mon>{_ANY_M})(?:,?\s*(?P<y>{_Y}))?",
    ),
    (
        "edge",
        rf"(?:(?P<pos>early|mid|late)[\s-]*|the\s+(?P<pos2>beginning|start|middle|end)\s+of\s+)"
        rf"(?P<mon>{_M}|{_MA})(?:,?\s*(?P<y>{_Y}))?",
    ),
    ("my", rf"(?P<mon>{_ANY_M}),?\s+(?P<y>{_Y})"),
    ("season", rf"(?:(?P<rel>last|this|past)\s+)?(?P<season>summer|winter|spring|autumn|fall)"
               rf"(?:\s+(?:of\s+)?(?P<y>{_Y}))?"),
    ("lastmon", rf"(?P<rel>last|this|past)\s+(?P<mon>{_M})"),
    ("mon", rf"(?P<mon>{_M})"),
    ("year", rf"(?P<y>{_Y})(?![\d-])"),
    ("dby", r"(?:the\s+)?day\s+before\s+yesterday"),
    ("today", r"today|tonight|this\s+(?:morning|afternoon|evening)|earlier\s+today"),
    ("yesterday", r"yesterday|last\s+night"),
    ("ago", rf"(?P<n>{_N})\s+(?P<unit>{_U})\s+ago"),
    (
        "span",
        # "in the last 3 days", not "the cookie should last 30 days"
        rf"(?:(?:in|over|during|for|within)\s+(?:the\s+)?|the\s+)(?P<rel>last|past|previous)\s+"
        rf"(?P<n>{_N})\s+(?P<unit>{_U})",
    ),
    ("wlb", r"(?:the\s+)?week\s+before\s+last"),
    ("unit", r"(?P<rel>last|this|past|previous)\s+(?P<unit>week|month|year|weekend)"),
    ("earlier", r"earlier\s+(?:this|in\s+the)\s+(?P<unit>week|month|year)"),
    ("weekend", r"(?:over\s+|on\s+|at\s+)?the\s+weekend"),
    ("wd", rf"(?:(?P<rel>last|this|this\s+past|past)\s+)?(?P<wd>{_WD})"
           r"(?:\s+(?:morning|afternoon|evening|night))?"),
    ("recent", r"the\s+past\s+few\s+days|in\s+recent\s+days"),
    ("otherday", r"the\s+other\s+day"),
]  # fmt: skip

# "Current", "original", "initial" and "at first" are left out: in a task they describe code
# ("the current directory", "keep the original order", "what should I look at first").
_FIRST = (
    r"\b(?:the\s+)?first\s+time\b|\b(?:earliest|originally|initially)\b|"
    r"\bfirst\s+(?:ever|mention\w*|report\w*|occurrence|appear\w*|seen|noticed)\b|"
    # "when did the test first fail", not "when did Nate get his first two turtles"
    r"\b(?:when|did|was|were)\b[^?.!;]{0,60}\bfirst\b(?!\s+(?:\d|one|two|three|four|few)\b)"
)
# "Recently" and "lately" order rather than cut: how recent is recent depends on who asks.
_LAST = (
    r"\b(?:the\s+)?last\s+time\b|\b(?:most\s+)?recent(?:ly)?\b|\b(?:latest|newest|lately|nowadays|"
    r"these\s+days)\b|\bthe\s+last\s+(?!\d|two|three|few|couple|several|element|item|one\b|"
    r"line|char|row|column|entry|index|i\b)[a-z]+"
)
# An event the window is relative to: since/after/before/until and a noun phrase or a clause
# that starts like one ("since the release", "after we moved to uv").
_ANCHOR = (
    r"\b(?P<side>since|after|before|until|prior\s+to)\s+(?P<ev>(?:the|our|my|we|i|you|they|"
    r"their|his|her|that|this)\b[^?.!;,]*)"
)


# Kinds of date expression that name a date rather than count from now.
ABSOLUTE = frozenset(
    ("iso", "dmy", "mdy", "part", "edge", "my", "lastmon", "mon", "year", "season")
)
# A duration right before "before <date>" / "after <date>": "two weeks before August 11".
_DURATION_BEFORE = re.compile(
    rf"\b(?:(?P<n>{_N})\s+|the\s+)?(?P<unit>days?|weeks?|weekends?|months?)\s*$", re.IGNORECASE
)


@record
class When:
    """What the time words of a query ask for. ``start``/``end``: ISO dates, inclusive, ""
    when open; ``order``: "first", "last" or ""; ``anchor``: event words whose date opens the
    window on ``side`` (since/after: from it on; before/until: up to it); ``rest``: the query
    without its time words, for the word ranking; ``found``: the expressions recognised."""

    start: str = ""
    end: str = ""
    order: str = ""
    anchor: str = ""
    side: str = ""
    rest: str = ""
    found: list[str] = field(default_factory=list)

    @property
    def window(self) -> bool:
        return bool(self.start or self.end)


_compiled: dict[str, re.Pattern[str]] = {}


def _rx(key: str, source: str) -> re.Pattern[str]:
    rx = _compiled.get(key)
    if rx is None:
        rx = _compiled[key] = re.compile(source, re.IGNORECASE)
    return rx


def _dates() -> re.Pattern[str]:
    # One alternative per pattern, named k_<kind>; a group name may appear once in a regex, so
    # each alternative's groups get its number (``_group`` reads them back by their base name).
    n = 0

    def rename(m: re.Match[str]) -> str:
        nonlocal n
        return m.group(0) if m.group(1).startswith("k_") else f"(?P<{m.group(1)}_{n}>"

    parts = []
    for k, src in _PATTERNS:
        n += 1
        parts.append(f"(?P<k_{k}>" + re.sub(r"\(\?P<(\w+)>", rename, src) + ")")
    return _rx("dates", rf"\b(?:(?P<pre>{_PREP})\s+)?(?:{'|'.join(parts)})\b")


def _group(m: re.Match[str], name: str) -> str:
    for k, v in m.groupdict().items():
        if v is not None and (k == name or k.rsplit("_", 1)[0] == name) and not k.startswith("k_"):
            return v
    return ""


def _month_start(y: int, mo: int) -> dt.date:
    return dt.date(y, mo, 1)


def _month_end(y: int, mo: int) -> dt.date:
    nxt = dt.date(y + (mo == 12), mo % 12 + 1, 1)
    return nxt - dt.timedelta(days=1)


def _add_months(d: dt.date, k: int) -> tuple[int, int]:
    total = d.year * 12 + d.month - 1 + k
    return total // 12, total % 12 + 1


def _num(text: str) -> int:
    t = " ".join(text.lower().split())
    return int(t) if t.isdigit() else _NUMBERS.get(t, 1)


def _last_month_named(mo: int, now: dt.date, strict: bool = False) -> int:
    """The year of the most recent month ``mo`` that has begun (``strict``: before this one)."""
    if mo < now.month or (mo == now.month and not strict):
        return now.year
    return now.year - 1


def _day_of(m: re.Match[str], now: dt.date) -> dt.date | None:
    try:
        d = int(_group(m, "d"))
        mon = _group(m, "mon") or _group(m, "m")
        mo = int(mon) if mon.isdigit() else _month_no(mon)
        y_text = _group(m, "y")
        if y_text:
            return dt.date(int(y_text), mo, d)
        day = dt.date(now.year, mo, d)
        return day if day <= now else dt.date(now.year - 1, mo, d)
    except (ValueError, KeyError):
        return None


def _month_no(text: str) -> int:
    t = text.lower().rstrip(".")
    return _MONTH_NUM.get(t) or _MONTH_NUM.get(t[:3], 0)


def _window(kind: str, m: re.Match[str], now: dt.date) -> tuple[dt.date, dt.date] | None:
    def g(name: str) -> str:
        return _group(m, name)

    week_start = now - dt.timedelta(days=now.weekday())
    if kind in ("iso", "dmy", "mdy"):
        day = _day_of(m, now)
        return (day, day) if day else None
    if kind in ("part", "edge", "my", "lastmon", "mon"):
        mo = _month_no(g("mon"))
        if not mo:
            return None
        rel = g("rel").lower()
        y = int(g("y")) if g("y") else _last_month_named(mo, now, strict=rel in ("last", "past"))
        if rel == "this":
            y = now.year
        first, last = _month_start(y, mo), _month_end(y, mo)
        if kind == "part":
            unit, which = g("unit").lower(), g("which").lower()
            if unit == "weekend":
                return _nth_weekend(first, last, which)
            span = 14 if g("n") else 7
            if which in ("last", "final"):
                return last - dt.timedelta(days=span - 1), last
            k = ("first", "second", "third", "fourth").index(which)
            s = first + dt.timedelta(days=7 * k)
            return s, min(last, s + dt.timedelta(days=span - 1))
        if kind == "edge":
            pos = (g("pos") or g("pos2")).lower()
            if pos in ("early", "beginning", "start"):
                return first, first + dt.timedelta(days=9)
            if pos in ("mid", "middle"):
                return first + dt.timedelta(days=9), first + dt.timedelta(days=19)
            return last - dt.timedelta(days=9), last
        return first, last
    if kind == "season":
        season, rel = g("season").lower(), g("rel").lower()
        if season != "winter" and season in _SEASONS:
            a, b = _SEASONS[season]
            if g("y"):
                y = int(g("y"))
            else:
                if not rel:
                    return None  # "spring" alone is a framework as often as a season
                begun = now.month > b or (rel == "this" and now.month >= a)
                y = now.year if begun else now.year - 1
            return _month_start(y, a), _month_end(y, b)
        if season == "winter":
            if g("y"):
                y = int(g("y"))
            elif rel:
                y = now.year if now.month >= 12 else now.year - 1
            else:
                return None
            return dt.date(y, 12, 1), _month_end(y + 1, 2)
        return None
    if kind == "year":
        y = int(g("y"))
        pre = (m.group("pre") or "").lower()
        if not pre or pre in ("of", "on", "over", "by"):
            # A bare 2024 is a version or a number as often as a year ("results of 2043 tasks")
            return None
        return dt.date(y, 1, 1), dt.date(y, 12, 31)
    if kind == "today":
        return now, now
    if kind == "yesterday":
        d = now - dt.timedelta(days=1)
        return d, d
    if kind == "dby":
        d = now - dt.timedelta(days=2)
        return d, d
    if kind == "ago":
        n, unit = _num(g("n")), g("unit").lower().rstrip("s")
        if unit == "day":
            d = now - dt.timedelta(days=n)
            return d, d
        if unit == "week":
            d = now - dt.timedelta(days=7 * n)
            s = d - dt.timedelta(days=d.weekday())
            return s, s + dt.timedelta(days=6)
        if unit == "month":
            y, mo = _add_months(now, -n)
            return _month_start(y, mo), _month_end(y, mo)
        return dt.date(now.year - n, 1, 1), dt.date(now.year - n, 12, 31)
    if kind == "span":
        n, unit = _num(g("n")), g("unit").lower().rstrip("s")
        days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit] * n
        return now - dt.timedelta(days=days), now
    if kind == "wlb":
        s = week_start - dt.timedelta(days=14)
        return s, s + dt.timedelta(days=6)
    if kind == "unit":
        rel, unit = g("rel").lower(), g("unit").lower()
        if unit == "weekend":
            return _weekend(now, this=rel == "this")
        if rel == "past":
            days = {"week": 7, "month": 30, "year": 365}[unit]
            return now - dt.timedelta(days=days), now
        if unit == "week":
            if rel == "this":
                return week_start, now
            s = week_start - dt.timedelta(days=7)
            return s, s + dt.timedelta(days=6)
        if unit == "month":
            if rel == "this":
                return _month_start(now.year, now.month), now
            y, mo = _add_months(now, -1)
            return _month_start(y, mo), _month_end(y, mo)
        if rel == "this":
            return dt.date(now.year, 1, 1), now
        return dt.date(now.year - 1, 1, 1), dt.date(now.year - 1, 12, 31)
    if kind == "earlier":
        unit = g("unit").lower()
        if unit == "week":
            s = week_start
        elif unit == "month":
            s = _month_start(now.year, now.month)
        else:
            s = dt.date(now.year, 1, 1)
        return s, now
    if kind == "weekend":
        return _weekend(now)
    if kind == "wd":
        target = _WEEKDAYS.index(g("wd").lower())
        back = (now.weekday() - target) % 7
        rel = " ".join(g("rel").lower().split())
        if back == 0 and rel != "this":
            back = 7  # "on Friday", asked on a Friday, is last week's
        d = now - dt.timedelta(days=back)
        return d, d
    if kind == "recent":
        return now - dt.timedelta(days=RECENT_DAYS), now
    if kind == "otherday":
        return now - dt.timedelta(days=OTHER_DAY_DAYS), now - dt.timedelta(days=1)
    return None


def _nth_weekend(first: dt.date, last: dt.date, which: str) -> tuple[dt.date, dt.date]:
    """The Saturdays and Sundays among the eight days from a month's first (second...) week's
    start: "the first weekend of October 2023" (the 1st a Sunday) is read both ways, the 1st to
    the 8th. The last weekend: the month's last Saturday and the Sunday after it."""
    if which in ("last", "final"):  # the month's last Saturday and the day after
        sat = last - dt.timedelta(days=(last.weekday() - 5) % 7)
        return sat, sat + dt.timedelta(days=1)
    else:
        k = ("first", "second", "third", "fourth").index(which)
        s = first + dt.timedelta(days=7 * k)
        e = min(last, s + dt.timedelta(days=7))
    days = [s + dt.timedelta(days=i) for i in range((e - s).days + 1)]
    ends = [d for d in days if d.weekday() >= 5] or days
    return ends[0], ends[-1]


def _weekend(now: dt.date, this: bool = False) -> tuple[dt.date, dt.date]:
    """The most recent Saturday and Sunday that have begun (today's, asked on a weekend)."""
    back = (now.weekday() - 5) % 7
    sat = now - dt.timedelta(days=back)
    if this and now.weekday() < 5:
        sat = now + dt.timedelta(days=5 - now.weekday())
    return sat, sat + dt.timedelta(days=1)


def _bounded(pre: str, span: tuple[dt.date, dt.date], now: dt.date) -> tuple[str, str]:
    """The window a date expression gives, opened on one side by the word before it."""
    s, e = span
    pre = " ".join(pre.lower().split())
    if pre in ("since", "from"):
        return s.isoformat(), now.isoformat()
    if pre == "after":
        return (e + dt.timedelta(days=1)).isoformat(), now.isoformat()
    if pre in ("before", "prior to"):
        return "", (s - dt.timedelta(days=1)).isoformat()
    if pre in ("until", "till", "by"):
        return "", e.isoformat()
    return s.isoformat(), e.isoformat()


def may_hold_time(text: str) -> bool:
    low = text.lower()
    return any(h in low for h in HINTS)


def parse(text: str, now: dt.date) -> When | None:
    """The time a query asks about, relative to ``now``; None when it names none (then the
    query ranks exactly as it would without this module)."""
    if not may_hold_time(text):
        return None
    when = When()
    spans: list[tuple[int, int]] = []  # what the time words cover
    drop: list[tuple[int, int]] = []  # what leaves the query's words
    dated = False  # the window comes from a date with its year
    for m in _dates().finditer(text):
        kind = next(k[2:] for k, v in m.groupdict().items() if k.startswith("k_") and v)
        if kind == "mon" and not _month_ok(m):
            continue
        span = _window(kind, m, now)
        if span is None:
            continue
        pre = " ".join((m.group("pre") or "").lower().split())
        full = bool(_group(m, "y")) and kind in ABSOLUTE
        if not when.window or (full and not dated):
            # A date with its year wins over a relative one: "last weekend before April 10,
            # 2023" is about the weekend before that date, not the one before now.
            when.start, when.end = _bounded(pre, span, now)
            dated = full
            lead = _DURATION_BEFORE.search(text, 0, m.start())
            if lead and pre in ("before", "after"):
                when.start, when.end = _around(lead, pre, span)
        when.found.append(m.group(0).strip())
        spans.append(m.span())
        if kind not in ABSOLUTE:
            # "yesterday", "last week": words no memory is found by. A written date stays:
            # a memory may say "9 July" in its text.
            drop.append(m.span())
    first = _rx("first", _FIRST).search(text)
    last = _rx("last", _LAST).search(text)
    hit_order = [
        (x, o) for x, o in ((first, "first"), (last, "last")) if x and not _inside(x, spans)
    ]
    if hit_order:
        x, when.order = min(hit_order, key=lambda p: p[0].start())
        when.found.append(x.group(0).strip())
        # The order words stay among the words: "when did Calvin first get interested in
        # cars?" is answered by "I first got into cars when...".
        spans.append(_order_span(x))
    if not when.window:
        a = _rx("anchor", _ANCHOR).search(text)
        if a and not _inside(a, spans):
            kept = list(re.finditer(r"\S+", a.group("ev")))[:ANCHOR_MAX_WORDS]
            words = [w.group(0) for w in kept]
            if words:
                when.anchor = " ".join(words)
                when.side = " ".join(a.group("side").lower().split())
                when.found.append(a.group(0).strip())
                end = a.start("ev") + kept[-1].end()
                spans.append((a.start(), end))
                # Since/before: the event's words name the anchor, not what is asked about
                # ("which docker problem did we have before the image was slimmed down?" asks
                # about docker). After/until: what followed is told with the event ("how did
                # she feel after the accident?"), so its words stay.
                drop.append(
                    (
                        a.start(),
                        end if when.side in ("since", "before", "prior to") else a.start("ev"),
                    )
                )
    if not when.found:
        return None
    rest = text
    for s, e in sorted(drop, reverse=True):
        rest = rest[:s] + " " + rest[e:]
    when.rest = " ".join(rest.split())
    return when


def _around(lead: re.Match[str], pre: str, span: tuple[dt.date, dt.date]) -> tuple[str, str]:
    """ "Two weeks before August 11": from that long before the date to the date itself (what
    happened then may be told on the day named)."""
    n = _num(lead.group("n") or "one")
    unit = lead.group("unit").lower()
    days = {"day": 1, "week": 7, "weekend": 7, "month": 30}[unit.rstrip("s")] * n
    s, e = span
    if pre == "before":
        return (s - dt.timedelta(days=days)).isoformat(), e.isoformat()
    return s.isoformat(), (e + dt.timedelta(days=days)).isoformat()


def _inside(m: re.Match[str], spans: list[tuple[int, int]]) -> bool:
    return any(s <= m.start() < e for s, e in spans)


_ORDER_WORDS = re.compile(
    r"\b(?:the\s+)?(?:first|last|(?:most\s+)?recent(?:ly)?|latest|newest|lately|nowadays|these\s+days|"
    r"earliest|originally|initially)(?:\s+time)?\b",
    re.IGNORECASE,
)


def _order_span(m: re.Match[str]) -> tuple[int, int]:
    inner = _ORDER_WORDS.search(m.group(0))
    if inner is None:
        return m.span()
    return m.start() + inner.start(), m.start() + inner.end()


def _month_ok(m: re.Match[str]) -> bool:
    """A month name alone is a month when a preposition comes first, or it is not one of the
    month names that are common words ("may", "march")."""
    word = _group(m, "mon").lower()
    pre = (m.group("pre") or "").lower()
    if word in ("may", "march"):
        return pre in ("in", "since", "during", "before", "after", "until", "till", "by", "of")
    return True
