"""Standing instructions: the shapes in which a person says a rule for every later time with
the marker inside the sentence ("migrations should always be reversible", "use tabs going
forward", "every new packet type bumps kProtocolVersion, otherwise …"), and the reports and
today's tasks that look like them ("it always crashes when I save", "we need to …").
``signals`` asks :func:`standing` of each clause of what the person typed."""

from __future__ import annotations

import re

from ..base.privacy import LazyPattern
from .changes import ONE_OFF

# The verbs a correction's remainder opens with: "no, use X" tells Claude how to work; "no, the
# file is in src" states a fact about this moment (a heuristic, for a person to judge).
IMPERATIVE = LazyPattern(
    r"""^(?:use|run|call|put|keep|write|add|remove|make|set|prefer|switch|go\s+with|pick|pin|
        import|install|name|return|raise|log|store|read|send|wrap|check|test|commit|push|
        deploy|move|rename|split|merge|avoid|skip|stop|leave|stick\s+with|target|build|start|
        place|follow|handle|mock|format|lint|document|ask|let|stay|only|open|create|file|
        ping|tell|request)\b""",
    re.IGNORECASE | re.VERBOSE,
)


# An order with "whenever" stands for every later time: "bump FIRMWARE_VERSION in main/version.h
# whenever anything under main/ changes". Not a statement ("the build breaks whenever …").
STANDING_ORDER = LazyPattern(
    r"""^(?:bump|update|regenerate|rebuild|restart|rerun|re-run|notify|tag|clear|flush|
        increment|reset|refresh|sync|rotate|delete|drop|open|create|file|ping|tell|run|add|
        remove|write|check|test|commit|push|deploy|call|log|send|keep|use|set|make|put|back\s+up)\b
        .*\b(?:whenever|every\s+time|each\s+time|any\s+time)\b""",
    re.IGNORECASE | re.VERBOSE,
)
# A rule said with its marker inside the sentence rather than first: "migrations should always
# be reversible", "we deploy with fly, never with the heroku scripts", "use tabs going forward",
# "moment.js is off limits". Three held-out weeks each found rules the opening words above did
# not take; these are the shapes people use for a standing instruction, each with a speaker who
# sets how work is done (an order, "we", a modal, a general subject), never a report of what
# happened ("it always crashes when I save", "the login doesn't work anymore").
#
# Markers that hold for every later time whoever says them.
_FOR_GOOD = LazyPattern(
    # "going forward" said of the time after today, not of a thing going forward ("the clocks
    # going forward last march made a mess", blind18): first, or last before a stop or comma.
    r"""(?:^|(?<=,\s))(?:going|moving)\s+forward\b|\b(?:going|moving)\s+forward(?=\s*(?:[,.;!]|$))
        |\b(?:from\s+now\s+on|from\s+here\s+on(?:\s+out)?
        |for\s+future\s+reference|as\s+a\s+(?:general\s+)?rule|rule\s+of\s+thumb
        |under\s+no\s+circumstances?|at\s+all\s+times|without\s+exception
        |nowhere\s+else|off[\s-]limits|only\s+(?:through|via)|in\s+(?:the\s+)?future,
        |only\s+in\s+this\s+(?:repo|repository|project|codebase)
        |(?:is|are)\s+(?:banned|forbidden|not\s+allowed|deprecated)
        |(?:the|our)\s+(?:convention|policy|rule|house\s+style|style\s*guide|standard)\s+
          (?:here\s+|in\s+this\s+\w+\s+)?(?:is|says|:))""",
    re.IGNORECASE | re.VERBOSE,
)
# Markers that need an order or a modal to be a rule: "next time you add a route, …" and "X
# must always …" are orders, "the build breaks whenever I push" and "our tokens never expire"
# are reports. Looked for before the first comma: in "add a section, people always hit the port
# conflict" the order is today's and the "always" someone else's.
_EVERY_TIME = LazyPattern(
    r"""\b(?:next\s+time|every\s+time|each\s+time|whenever|any\s*time|anymore|any\s+more
        |no\s+longer|in\s+(?:the\s+)?future|always|never|ever|only\s+ever)\b""",
    re.IGNORECASE | re.VERBOSE,
)
_SETS_HOW = LazyPattern(
    r"""^(?:please\s+)?(?:let'?s|let\s+us)\b
      | \b(?:must|mustn'?t|should|shouldn'?t|shall|ought\s+to|will|to)\s+
        (?:always|never|only\s+ever)\b
      # "speakers are only ever identified by their pseudonym codes" (blind22)
      | \b(?:are|is)\s+(?:always|never|only\s+ever)\s+\w+ed\b
      # "Juvenile cards can never check out anything flagged adult_media." (blind31): a thing
      # that may never; a person who can never ("we can never reproduce it") reports.
      | ^(?!(?:we|you|i|it|they|he|she|this|that)\b)[\w\-]+(?:\s+[\w\-]+){0,3}\s+
        (?:can|may)\s+never\s+(?!seem\b|get\s+it\b|remember\b|tell\b|find\b)\w
      # "examples always get glossed leipzig style" (blind22); "… never gets cancelled" is a
      # report of what happens
      | \balways\s+get\s+\w+ed\b""",
    re.IGNORECASE | re.VERBOSE,
)
# A report of what happened, a plan of the speaker's, a question without its mark, an error
# message or something of today: never a rule, marker or not.
REPORT = LazyPattern(
    r"""^(?:i|i'?m|i'?ve|i'?ll|i'?d|ill|it|it'?s|its|this|that|there|he|she|they|something
        |someone|nothing|everything\s+(?:is|was|went)(?!\s+(?:stored|kept|saved|persisted)\s)|see\s+you|talk\s+(?:to\s+you\s+)?(?:later|soon)
        |now|how|what|which|why|where|who|whom|whose|when(?!ever|\s+you|\s+we)|do|does|did|is|are
        |was|were|can(?!\s+you\s+(?:not|stop|quit)\b)|could(?!\s+you\s+(?:not|stop|quit)\b)
        |should|would|will|shall|am|have|has|any\s+idea|unrelated|different\s+thing|same)\b
      | \b(?:crash\w*|fail\w*|break\w*|broke|hang\w*|flak\w*|time[sd]?\s+out|stopped|doesn'?t\s+work
        |isn'?t\s+working|won'?t\s+(?:start|build|compile|load|run)|can'?t|cannot|exception
        # "error" of a report, not the noun of a rule ("every error body is {error: …}").
        |(?<!\{)(?<!\{")error(?!s?\s+(?:body|bodies|codes?|messages?|handl\w+|responses?|pages?|types?|shapes?
          |formats?|envelopes?|classes?|boundar\w+))
        |getting|blocked|log\s+says)\b
      | \b(?:might|maybe|perhaps|would\s+be\s+nice|could|what'?s|whats|how\s+(?:do|can|should|would)
        |should\s+(?:i|we)|do\s+i|can\s+i|is\s+it|right\s+now|rn|today|tonight|this\s+(?:week|morning
        |afternoon|sprint)|lol|when\s+you\s+(?:get\s+a\s+chance|can|have\s+time|'?re\s+done))\b
      | ,\s*(?:is|are|does|do|can|should|would)\s+(?:my|this|that|it|i|we)\b
        # "the old excel sheet had five formats and I want one scheme from now on": what was.
      | ^(?:the|our)\s+(?:[\w\-]+\s+){0,3}?(?:had|was|were|used\s+to)\b
      # a question mark, not a query string ("… across the ?lang versions"; blind21)
      | \?(?![\w=])|\w+(?:Error|Exception)\b
      | (?<!\w)['"`](?:(?!['"`](?!\w)).)*\b(?:must|never|always|not\s+allowed)\b""",
    re.IGNORECASE | re.VERBOSE,
)
# A general subject with a modal of obligation: "logs must be json in production", "generated
# files must not be edited by hand". Not "the function must return None" (today's spec), not
# "we need to rename the column" (today's task), not "X should …" (a spec as often as a rule).
_GENERAL_MUST = LazyPattern(
    r"""^(?:(?:all|every|each|any|new)\s+)?(?!the\b|this\b|that\b|these\b|those\b|it\b|i\b
        |you\b|we\b|our\b|users?\b|customers?\b|people\b|some\w*\b|most\b|both\b|old\b)
        [\w.\-/`]+(?:\s+[\w.\-/`]+){0,3}?\s+(?:must|mustn'?t|shall|may\s+not)\s+(?!be\s+able\b)""",
    re.IGNORECASE | re.VERBOSE,
)
# Where a kind of thing goes, said in the present: "tests go in tests/unit", "feature flags live
# in config/flags.yaml", "all outbound http calls go through our ApiClient wrapper", "commit
# messages follow conventional commits". A plural or quantified subject: "the file is in src"
# says where one thing is today.
_KIND_GOES = LazyPattern(
    r"""^(?:(?:all|every|each|new|our)\s+(?:the\s+)?)?(?!the\b|these\b|those\b|they\b|we\b|you\b)
        (?:[\w.\-/`]+\s+){0,2}(?!(?:is|was|has|does|this|its|yes|us)\s)[\w.\-`]{2,}s\s+
        (?:(?:go|live|belong)\s+(?:in|under|inside|into|through|via|on)\b|follow\s+\w)
      | ^(?:all\s+|our\s+)?(?!the\b|this\b|that\b|it\b|everything\b|nothing\b)
        (?:[\w.\-/`]+\s+){0,2}[\w.\-`]+\s+(?:goes|lives|belongs)\s+(?:through|via|in|under)\b
        # "everything the user sees goes in the ARB files" (blind19): a kind, by who sees it
      | ^(?:everything|anything)\s+(?:that\s+)?(?:the\s+)?(?:users?|customers?|members?|visitors?
          |people|we|you)\s+(?:\w+\s+){0,2}?(?:goes|lives|belongs)\s+(?:through|via|in|into|under)\b""",
    re.IGNORECASE | re.VERBOSE,
)
# How every thing of a kind is kept: "everything gets stored in UTC, timestamptz columns",
# "all amounts are stored as integer cents", "timestamps are kept in UTC" (blind18). Not "the
# file is stored in S3" (where one thing is today).
_KIND_STORED = LazyPattern(
    r"""^(?:everything|all\s+(?:the\s+|our\s+)?[\w\-]+(?:\s+[\w\-]+)?|every\s+[\w\-]+(?:\s+[\w\-]+)?
        |(?!the\b|these\b|those\b|they\b|its\b|this\b)[\w\-]+s)\s+
        (?:gets?|is|are)\s+(?:always\s+)?(?:stored|kept|saved|persisted)\s+(?:in|as)\s+\S""",
    re.IGNORECASE | re.VERBOSE,
)
# What a thing is everywhere: "money is integer pence everywhere, in the db and in the code, no
# floats" (blind19). Not "it's broken everywhere" (a report).
_EVERYWHERE = LazyPattern(
    r"^(?:[\w.\-/`']+\s+){1,3}(?:is|are)\s+(?!not\b)[^,;]{1,40}?\s+(?:everywhere|throughout)\b",
    re.IGNORECASE,
)
# Where a thing never goes or always comes from: "the price never goes in storyblok", "rates
# always come live from the booking engine" (blind21). Not "the build never finishes".
_NEVER_GOES = LazyPattern(
    r"""^(?:the\s+|our\s+|all\s+)?[\w\-.`]+(?:\s+[\w\-.`]+){0,2}?\s+
        (?:(?:never|always|only)\s+(?:goes|go|lives?|belongs?|gets?\s+(?:stored|written|put|saved))
          \s+(?:in|into|on|under|to|through|via)\b
        |(?:always|only)\s+comes?\s+(?:live\s+)?from\b)""",
    re.IGNORECASE | re.VERBOSE,
)
# Who may do something: "only ward managers get to see personal mobile numbers" (blind23).
_ONLY_WHO = LazyPattern(
    r"^only\s+(?:the\s+)?[\w\-]+(?:\s+[\w\-]+){0,3}?\s+(?:get\s+to|can|may|are\s+allowed\s+to)\s+\w+",
    re.IGNORECASE,
)
# What a kind of thing always is: "times are always 24h in this app" (blind23). Not "the tests
# are always failing" (a report) nor "it's always broken".
_ARE_ALWAYS = LazyPattern(
    r"^(?!the\b|these\b|those\b|they\b|we\b|you\b|things\b|people\b)(?:[\w\-]+\s+){0,2}[\w\-]+s\s+"
    r"are\s+always\s+(?!\w+ing\b)\w",
    re.IGNORECASE,
)
# What every new thing of a kind uses, against what it does not: "new components use Svelte 5
# runes, not export let", "all endpoints use zod, never joi".
_KIND_USES = LazyPattern(
    r"""^(?:new|all|every|each)\s+(?:[\w\-]+\s+){0,2}[\w\-]+\s+(?:use|uses)\s+.+?,?\s+
        (?:not|never)\s+\S""",
    re.IGNORECASE | re.VERBOSE,
)
# A decision said by the person: "we've decided to go with postgres for the queue", "let's go
# with zod for validation", "we settled on trunk-based development".
_DECIDED = LazyPattern(
    r"""^(?:we(?:'ve|\s+have)?\s+decided\s+(?:to|on|that)|we\s+settled\s+on|the\s+decision\s+is
        |we'?re\s+(?:going|sticking)\s+with|let'?s\s+(?:standardi[sz]e\s+on|settle\s+on)
        |let'?s\s+go\s+with\s+\S+\s+(?:for|over|instead|rather)\b)""",
    re.IGNORECASE | re.VERBOSE,
)
# "we use pnpm in this repo, not npm", "we use yarn here": how this team works, said of "we".
_WE_DO = LazyPattern(
    r"""^we\s+(?:use|run|deploy|ship|build|host|write|test|name|keep|store|prefer|do|pin|tag
        |squash|rebase|merge|release|version|format|lint)\b.*(?:\bhere$|\bin\s+this\s+
        (?:project|repo|repository|codebase|team)\b|,\s*not\s+\S|\binstead\s+of\b
        |\brather\s+than\b|\bonly\b|\bfor\s+(?:all|every|each|any)\b|,\s*never\b
        |,\s*always[.!]*$)""",
    re.IGNORECASE | re.VERBOSE,
)
# "make sure every endpoint checks the tenant id", "be sure to use UTC everywhere": an order
# about every case (an order about this case, "make sure the tests pass", is today's).
_SURE_EVERY = LazyPattern(
    r"""^(?:make|be)\s+sure\s+(?:to\s+|that\s+|you\s+)?(?!it\b|its\b|it's\b|this\b|that\b)
        .*\b(?:every|each|all|any|always|never
        |everywhere|nothing|no\s+one|whenever)\b""",
    re.IGNORECASE | re.VERBOSE,
)


# Orders that are standing by their verb: "no more print debugging", "stop using var", "quit
# adding type: ignore", "default to async handlers", "every new table needs a created_at
# column". ("stop the server" is today's.)
_STANDING_VERB = LazyPattern(
    r"""^(?:no\s+more\s+\w|(?:stop|quit)\s+\w+ing\b|default\s+to\s+\w
        |no\s+(?=[\w.\-]*(?-i:[A-Z0-9._]))[\w.\-]+(?:\s+[\w.\-]+){0,2}\s+(?:please|pls|thanks)\s*[.!]?$
        # "no LINQ in anything that runs per frame please, …" (blind26)
        |no\s+(?=[\w.\-]*(?-i:[A-Z0-9._]))[\w.\-]+\s+in\s+(?:anything|any|every|all)\b[^,]{0,50}?
          \s+(?:please|pls)\b
        |(?:can|could|would)\s+you\s+(?:not\s+|stop\s+\w+ing\b|quit\s+\w+ing\b)
        |(?:always\s+)?(?:ask|check\s+with)\s+(?:me|us)\s+(?:first\s+)?before\b
        |(?:all|every|each|any)\s+(?:new\s+)?[\w.\-/`]+(?:\s+[\w.\-/`]+){0,2}?\s+
          (?:needs?|requires?|gets?|must|should|uses?|goes|go)\b)""",
    re.IGNORECASE | re.VERBOSE,
)
# An order after a clause that says when: "next time you add a dependency, pin the exact
# version", "before you commit, always run make check", "when you write tests, use factories".
_WHEN_YOU = LazyPattern(
    r"""^(?:next\s+time|each\s+time|every\s+time|whenever|any\s*time|when|before|after)\s+
        (?:you|we|adding|writing|touching|changing|committing|pushing|merging|deploying|releasing)
        \b(?:(?!\b(?:this|that|it|these|those|done|finished)\b)[^,]){0,80},\s*(?P<order>\S.*)$""",
    re.IGNORECASE | re.VERBOSE,
)


# "money is Decimal everywhere, never float", "dates are UTC, never local time": what a thing
# is, and the one thing it never is.
_IS_NEVER = LazyPattern(
    r"^(?:[\w.\-/`']+\s+){1,4}(?:is|are)\s+[^,;]{1,60},\s*(?:and\s+)?never\s+\w", re.IGNORECASE
)
# What an order covers when it covers later cases too: "add a CHANGELOG line for anything riders
# will notice", "write a test for every new endpoint".
_EVERY_LATER = LazyPattern(
    r"\b(?:every|each|any|all)\s+new\b"
    # "add a line to RELEASES.md for every build that goes onto the test iPads" (blind18): a
    # kind of thing that keeps happening, said in the present ("… that failed" is today's).
    r"|\bfor\s+(?:every|each)\s+[\w\-]+(?:\s+[\w\-]+)?\s+(?:that|which)\s+(?:\w+s|is|are)\b"
    r"|\bfor\s+(?:anything|everything|any\s+\w+|every\s+\w+)\b[^,.;]{0,40}\bwill\b",
    re.IGNORECASE,
)
# An order for before anything counts as done: "run pluginval at strictness 10 before you call
# anything done", "run the linter before saying it's finished".
_BEFORE_DONE = LazyPattern(
    r"\bbefore\s+(?:you\s+|we\s+)?"
    r"(?:call(?:ing)?|say(?:ing)?|mark(?:ing)?|tell(?:ing)?\s+me|consider(?:ing)?)\s+"
    r"(?:anything|something|it|that|a\s+\w+|the\s+\w+)?\s*(?:is\s+|'s\s+)?"
    r"(?:done|finished|complete|ready)\b",
    re.IGNORECASE,
)
# What an order after "when you …," opens with: "before we write any more calc code, some
# context" is no order (blind19).
_AN_ORDER = LazyPattern(
    r"""^(?:(?:always|please|pls|first|also|just)\s+)?(?:never|don'?t|do\s+not|make\s+sure|be\s+sure
        |remember|bump|update|regenerate|rebuild|restart|rerun|re-run|notify|tag|clear|flush
        |increment|reset|refresh|sync|rotate|delete|drop|use|run|call|put|keep|write|add|remove
        |make|set|prefer|switch|pick|pin|import|install|name|return|raise|log|store|read|send
        |wrap|check|test|commit|push|deploy|move|rename|split|merge|avoid|skip|stop|leave
        |target|build|start|place|follow|handle|mock|format|lint|document|ask|let|stay|only
        |open|create|file|ping|tell|request|include|mention|note|list|update|go|give|show
        |double-check|back\s+up|squash|rebase|open)\b""",
    re.IGNORECASE | re.VERBOSE,
)
# What a clause opens with when it states something rather than orders it.
_NOT_AN_ORDER = LazyPattern(
    r"^(?:i|you|we|it|they|he|she|the|this|that|these|those|there|a|an|my|your|our|its|their)\b",
    re.IGNORECASE,
)


# "every new packet type bumps kProtocolVersion, otherwise old clients parse garbage": what is
# done every time, with what happens if not.
_OR_ELSE = LazyPattern(
    r"^(?:every|each|any|all)\s+(?:[\w\-]+\s+){0,5}?[a-z]+s\s+\S.*?,\s*(?:otherwise|or\s+else)\b",
    re.IGNORECASE,
)
# "it always has to be ./vendor/bin/sail test", "the key must always be rotated".
_ALWAYS_HAS_TO = LazyPattern(
    r"\b(?:always\s+(?:has|have|needs?)\s+to\s+be|(?:has|have|needs?)\s+to\s+always\s+be"
    r"|must\s+always\s+be)\b",
    re.IGNORECASE,
)


# "nothing goes live without a nonce and a capability check", "nothing merges without a
# review": a gate every later change passes (blind17). Not a report ("nothing works").
_NOTHING_WITHOUT = LazyPattern(
    r"""^(?:nothing|no\s+(?:code|change|pr|release|build|deploy|migration)s?)\s+
        (?:goes|gets|ships|lands|merges|deploys|is\s+(?:merged|deployed|released|shipped))\s+
        (?:\w+\s+){0,2}?without\s+\S""",
    re.IGNORECASE | re.VERBOSE,
)


def standing(clause: str) -> bool:
    """Whether ``clause`` (lead-ins stripped) is a standing instruction said in one of the
    shapes above."""
    s = clause.strip()
    if not s or ONE_OFF.search(s):
        return False
    if _NOTHING_WITHOUT.match(s) and "?" not in s:
        return True
    if REPORT.search(s):
        return False
    if _FOR_GOOD.search(s) or _DECIDED.match(s) or _WE_DO.match(s) or _SURE_EVERY.match(s):
        return True
    if _STANDING_VERB.match(s) or _GENERAL_MUST.match(s) or _KIND_GOES.match(s):
        return True
    if _KIND_USES.match(s) or _KIND_STORED.match(s) or _EVERYWHERE.match(s):
        return True
    if _NEVER_GOES.match(s) or _ONLY_WHO.match(s) or _ARE_ALWAYS.match(s):
        return True
    if _IS_NEVER.match(s) or _OR_ELSE.match(s) or _ALWAYS_HAS_TO.search(s):
        return True
    when = _WHEN_YOU.match(s)
    if (
        when
        and not _NOT_AN_ORDER.match(when.group("order"))
        and _AN_ORDER.match(when.group("order"))
    ):
        return True
    head = s.split(",", 1)[0]
    if IMPERATIVE.match(head) and (_EVERY_LATER.search(head) or _BEFORE_DONE.search(head)):
        return True
    return bool(_EVERY_TIME.search(head) and (_SETS_HOW.search(head) or IMPERATIVE.match(head)))


def said_for_good(text: str) -> bool:
    """The markers that make a clause a rule after any preamble: "…, never …", "always has to
    be", "from now on", "is not allowed"."""
    s = text.strip()
    if ONE_OFF.search(s) or REPORT.search(s):
        return False
    return bool(_IS_NEVER.match(s) or _ALWAYS_HAS_TO.search(s) or _FOR_GOOD.search(s))
