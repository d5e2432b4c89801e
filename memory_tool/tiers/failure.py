"""What a failed command brings (PostToolUseFailure on Bash): the gotchas, rules and past fixes
that name the error it printed, and the lines of earlier sessions' cold summaries that do
("`pytest tests/db`: failed 2x (psycopg.errors.DeadlockDetected ...), passed later as ...").

Only the error's distinctive words count: an exception or error class (``DeadlockDetected``,
``ModuleNotFoundError``), an error code (``E0425``, ``ENOENT``), a dotted or snake_case name
(``psycopg.errors``, ``orders_pkey``), a quoted name. A memory is given only when it holds one
of them as a word; ``error``, ``failed`` or ``Exit code 1`` alone match nothing, so a failure
no memory knows brings nothing. The hook event already holds only the head and tail of a long
output (``base.event``).

Hook path: stdlib plus our light modules; counts come from the index (stored line counts, the
token cache the Scribe warms for cold summary lines).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..base import paths
from ..base.privacy import LazyPattern
from ..store.search import search
from .inject import COLD_HIT_LINES, cold_body_lines

if TYPE_CHECKING:
    from ..recall.layers import Unit
    from ..store.entry import Entry
    from ..store.index import Index

MEMORY_HEADING = "## Memories about this error (tool recall)\n"
COLD_HEADING = "## Earlier sessions that hit this error (cold memory)\n"
# Memories (gotchas, rules, wiki records) and cold summaries per failure: a failure is about one
# thing; the best two of each say what is known about it.
MAX_MEMORY_HITS = 2
MAX_COLD_HITS = 2
# Distinctive words taken from one error: the first ones name it (the exception, the command's
# own error line), later ones are mostly the traceback's file and function names.
MAX_TERMS = 12
# A word this short is no identifier anyone remembers an error by.
MIN_TERM_CHARS = 4

# Error and exception classes so common that they name no particular failure.
_GENERIC = frozenset(
    (
        "error errors exception exceptions traceback failed failure fatal warning exit code "
        "assertionerror runtimeerror valueerror typeerror keyerror indexerror attributeerror "
        "oserror ioerror nameerror notimplementederror systemexit keyboardinterrupt "
        "stopiteration calledprocesserror subprocesserror filenotfounderror permissionerror "
        "syntaxerror importerror exceptiongroup baseexception "
        "true false none null undefined most recent call last line file info debug stderr stdout"
    ).split()
)
# Identifier-like words: CamelCase, snake_case, dotted names, codes with digits, ALL-CAPS codes.
_IDENT = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_QUOTED = LazyPattern(r"""['"`]([A-Za-z_][A-Za-z0-9_.\-/]{3,80})['"`]""")
# Lines of the output that name the failure, read first.
_ERROR_LINE = LazyPattern(
    r"\b(\w*Error|\w*Exception|\w*Detected|\w*Violation|FAILED|fatal|error|panic|denied)\b",
    re.IGNORECASE,
)
_EXIT_LINE = LazyPattern(r"^Exit code \d+\s*$")


def _distinctive(word: str) -> bool:
    core = word.strip("._")
    if len(core) < MIN_TERM_CHARS or core.lower() in _GENERIC:
        return False
    camel = any(c.isupper() for c in core[1:]) and any(c.islower() for c in core)
    coded = any(c.isdigit() for c in core) and any(c.isalpha() for c in core)
    caps = core.isupper() and len(core) >= 5  # ENOENT, EADDRINUSE
    joined = "_" in core or "." in core
    return camel or coded or caps or joined


def error_terms(error: str, command: str = "") -> list[str]:
    """The distinctive words of a failed command's output, the lines that name the failure
    first, lower-cased (a dotted name gives itself and its parts)."""
    lines = [x for x in error.splitlines() if x.strip() and not _EXIT_LINE.match(x.strip())]
    named = [x for x in lines if _ERROR_LINE.search(x)]
    ordered = named + [x for x in lines if x not in named]
    found: list[str] = []

    def add(word: str) -> None:
        low = word.lower().strip("._")
        if low and low not in found and len(found) < MAX_TERMS:
            found.append(low)

    for line in ordered:
        for quoted in _QUOTED.findall(line):
            if _distinctive(quoted) or "/" not in quoted and len(quoted) >= 6:
                add(quoted)
        for word in _IDENT.findall(line):
            if not _distinctive(word):
                continue
            add(word)
            for part in word.split("."):
                if _distinctive(part):
                    add(part)
        if len(found) >= MAX_TERMS:
            break
    del command  # the command names what was run, not what went wrong
    return found


def _holds(text: str, terms: list[str]) -> bool:
    """Whether ``text`` holds one of ``terms`` as a whole word (a dotted term: as written)."""
    low = text.lower()
    for term in terms:
        at = low.find(term)
        while at != -1:
            before = low[at - 1] if at > 0 else " "
            end = at + len(term)
            after = low[end] if end < len(low) else " "
            if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                return True
            at = low.find(term, at + 1)
    return False


def _query(terms: list[str]) -> str:
    """The search words: each term, a dotted name as its parts (``numpy.dtype``: numpy dtype,
    which alone would not count as distinctive; ``_holds`` then checks the whole name)."""
    words: list[str] = []
    for term in terms:
        for part in term.split("."):
            if part and part not in words:
                words.append(part)
    return " ".join(words)


def memory_hits(idx: Index, terms: list[str], project: str, exclude: set[str]) -> list[Entry]:
    """Memories and wiki records (no transcripts, no cold summaries) naming the error."""
    if not terms:
        return []
    found = search(
        idx, _query(terms), limit=MAX_MEMORY_HITS * 4, sessions=False, cold=False,
        exclude=exclude, fuzzy=False, home_project=project,
    )  # fmt: skip
    hits = [h.entry for h in found if h.entry.type != "user"]
    hits = [e for e in idx.current(hits) if _holds(f"{e.name} {e.description} {e.body}", terms)]
    return hits[:MAX_MEMORY_HITS]


def cold_hits(idx: Index, terms: list[str], project: str, exclude: set[str]) -> list[Entry]:
    """This project's cold summaries with a line naming the error."""
    if not terms:
        return []
    found = search(
        idx, _query(terms), limit=MAX_COLD_HITS * 3, project=project, sources=("cold",),
        exclude=exclude, fuzzy=False,
    )  # fmt: skip
    out = []
    for h in found:
        if any(_holds(line, terms) for line in cold_body_lines(h.entry.body)):
            out.append(h.entry)
    return out[:MAX_COLD_HITS]


def _cold_lines(entry: Entry, terms: list[str]) -> list[str]:
    lines = cold_body_lines(entry.body)
    return [x for x in lines if _holds(x, terms) and not x.startswith(("Task:", "Result:"))][
        :COLD_HIT_LINES
    ]


def failure_units(
    idx: Index,
    error: str,
    command: str,
    cwd: str,
    *,
    budget: int,
    max_chars: int,
    exclude: set[str],
) -> list[Unit]:
    """What memory knows about this failure, within ``budget`` exact tokens and ``max_chars``;
    [] when nothing names it."""
    from ..recall.layers import Fill, Unit

    terms = error_terms(error, command)
    if not terms or budget <= 0:
        return []
    project = paths.project_key(cwd)
    count = idx.count_cached
    fill = Fill(budget, max_chars)
    add, units = fill.add, fill.units

    first = True
    for e in memory_hits(idx, terms, project, exclude):
        line = Unit(e.line, e.line_tokens)
        if add([Unit(MEMORY_HEADING, count(MEMORY_HEADING)), line] if first else [line]):
            first = False
    first = True
    for e in cold_hits(idx, terms, project, exclude):
        # The summary's depth-2 form (id, date, how it began), not its brief line, which would
        # run through the whole summary; ``given`` records its id (the form has no brackets).
        head = Unit(e.summary, e.summary_tokens, e.id)
        group = [head] + [Unit(x, count(x)) for x in _cold_lines(e, terms)]
        if first:
            group.insert(0, Unit(COLD_HEADING, count(COLD_HEADING)))
        if add(group):
            first = False
    return units
