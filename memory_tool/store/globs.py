"""The files a memory is tied to: its frontmatter ``paths:`` globs, read, checked and matched.

A glob is matched against a file's path relative to the working tree the session runs in
(forward slashes), gitignore-style:

- ``*`` and ``?`` stay inside one folder name, ``**`` spans any number of folders
  (``db/**/*.sql``), ``[abc]`` is a character class;
- a glob without a ``/`` matches the file name at any depth (``*.generated.ts``, ``schema.prisma``);
- a glob ending in ``/`` matches everything under that folder (``db/migrations/``);
- a glob starting with ``/`` or ``~`` matches the absolute path (``~/infra/*.tf``).

Hook path: stdlib only; each glob is compiled once per process.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any

# A memory tied to more files than this is about a topic, not about files: its first globs are
# kept (the doctor can say so) and the room recall covers the rest.
MAX_GLOBS = 20
# A longer glob is no path anyone writes; it is dropped rather than compiled.
MAX_GLOB_CHARS = 300


def read_globs(value: Any) -> list[str]:
    """The usable globs of a ``paths:`` value (one string, or a list of strings); others dropped."""
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        glob = item.strip().replace("\\", "/")
        if glob.startswith("./"):
            glob = glob[2:]
        if glob and len(glob) <= MAX_GLOB_CHARS and "\n" not in glob and glob not in out:
            out.append(glob)
        if len(out) >= MAX_GLOBS:
            break
    return out


def _translate(glob: str) -> str:
    """A glob as a regular expression over a whole relative (or absolute) path."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                i += 2
                if i < n and glob[i] == "/":  # "**/": zero or more folders
                    i += 1
                    out.append("(?:[^/]*/)*")
                else:  # a trailing or inner "**": anything, folders included
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 2 if glob.startswith("[!", i) else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@lru_cache(maxsize=4096)
def compile_glob(glob: str) -> tuple[re.Pattern[str], bool]:
    """(pattern, absolute): the pattern matches a relative path, or an absolute one when the glob
    is absolute."""
    absolute = glob.startswith(("/", "~"))
    text = os.path.expanduser(glob) if glob.startswith("~") else glob
    if text.endswith("/"):
        text += "**"
    body = _translate(text.lstrip("/") if not absolute else text)
    if not absolute and "/" not in glob.rstrip("/"):
        body = "(?:.*/)?" + body  # a bare name: at any depth
    return re.compile(body + r"\Z", re.DOTALL), absolute


def literal_tail(glob: str) -> str:
    """What every path the glob matches ends with: the text after its last wildcard ("" for a
    folder glob ending in ``/``, which matches whatever lies under it). A cheap test that rules
    most globs out before their pattern runs."""
    if glob.endswith("/"):
        return ""
    cut = max(glob.rfind(c) for c in "*?]")
    tail = glob[cut + 1 :]
    return os.path.expanduser(tail) if cut < 0 and tail.startswith("~") else tail


def matches(glob: str, relative: str | None, absolute: str) -> bool:
    """Whether ``glob`` names a file at ``absolute`` (``relative``: its path inside the working
    tree, None when it lies outside)."""
    try:
        pattern, is_absolute = compile_glob(glob)
    except re.error:
        return False
    if is_absolute:
        return pattern.match(absolute) is not None
    return relative is not None and pattern.match(relative) is not None
