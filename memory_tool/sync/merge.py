"""A version of a memory that arrived, brought onto the local file without losing what only
this machine holds.

What travels is redacted (``layout.outgoing``): a secret in a local file reaches the repository
as ``[REDACTED:kind]`` and a ``<private>`` span not at all, so every version that comes back
holds the marker, not the secret. Written over the local file as it is, such a version would
replace the secret with its marker for good. So an incoming version is merged onto the local
text instead: a three-way merge, line by line, whose base is the local file's outgoing form,
"ours" the local text (it differs from the base exactly where something was redacted) and
"theirs" what arrived. The result is kept only when sending it again gives exactly what
arrived: it is then that version, with this machine's secrets in it. When the incoming change
touched the very lines that hold a secret, there is no such text: the caller keeps the local
file and writes the incoming version beside it.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from ..base.privacy import sanitize
from . import layout

# A change to a base: lines [start, end) of the base replaced by ``lines``.
_Change = tuple[int, int, list[str]]


def onto_local(local: bytes, incoming: bytes) -> bytes | None:
    """``incoming`` with the local text's secrets and ``<private>`` spans put back where its
    lines are still there; ``incoming`` itself when the local file holds none; None when the
    incoming change touched those lines (keep both: the local file in place, ``incoming``
    beside it)."""
    base = layout.outgoing(local).data
    if base == local:
        return incoming
    if base is None:  # a file that never travels (too large, not text): nothing to merge onto
        return None
    try:
        texts = [d.decode("utf-8") for d in (base, local, incoming)]
    except UnicodeDecodeError:
        return None
    # A last line without its newline would differ from the same line with one added after it
    # (a line appended there): every text ends with one for the merge.
    merged = merge3(*(_ended(t).splitlines(keepends=True) for t in texts))
    if merged is None:
        return None
    text = "".join(merged)
    if not texts[2].endswith("\n"):
        text = text[:-1]
    data = text.encode("utf-8")
    # The merge stands only if it is the incoming version with local text put back.
    sent = layout.outgoing(incoming).data
    if sent is None or layout.outgoing(data).data != sent:
        return None
    return data


def merge3(base: list[str], ours: list[str], theirs: list[str]) -> list[str] | None:
    """Both sides' changes to ``base`` applied, or None when they overlap. Unlike a text
    merge tool's, changes that only touch (a line added right after a changed one) do not
    conflict: here one side's changes are redactions undone, which say nothing about the lines
    around them."""
    mine, other = _changes(base, ours), _changes(base, theirs)
    taken: list[_Change] = list(mine)
    for change in other:
        clash = [m for m in mine if _overlap(m, change)]
        if not clash:
            taken.append(change)
        elif clash != [change]:  # the same change made on both sides is taken once
            return None
    out: list[str] = []
    pos = 0
    # Insertions at a point come before a change that starts there (sorted by end too).
    for start, end, lines in sorted(taken, key=lambda c: (c[0], c[1])):
        out += base[pos:start]
        out += lines
        pos = end
    return out + base[pos:]


def _ended(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _changes(base: list[str], other: list[str]) -> list[_Change]:
    """The changes that make ``other`` from ``base``. A block of lines replaced one for one
    (redacting does that: each line keeps its place) is a change per line, so that a line
    added between two of them touches neither."""
    matcher = SequenceMatcher(None, base, other, autojunk=False)
    out: list[_Change] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            out += [(i1 + k, i1 + k + 1, [other[j1 + k]]) for k in range(i2 - i1)]
        else:
            out.append((i1, i2, other[j1:j2]))
    return out


def _overlap(a: _Change, b: _Change) -> bool:
    """Whether two changes touch the same base lines, or both add lines at one point."""
    if a[0] == a[1] and b[0] == b[1]:
        return a[0] == b[0]
    return a[0] < b[1] and b[0] < a[1]


def union(ours: bytes, theirs: bytes) -> bytes:
    """Every line of ours, then the lines of theirs that ours lacks (MEMORY.md, .decided); a
    line of ours that went out redacted is not taken a second time in its redacted form."""
    lines = ours.decode("utf-8", "replace").splitlines()
    have = set(lines) | {sanitize(line) for line in lines}
    extra = [line for line in theirs.decode("utf-8", "replace").splitlines() if line not in have]
    return ("\n".join(lines + extra) + "\n").encode("utf-8")
