"""Candidate memories from a session, waiting for a person: the inbox.

The Scribe collects lines tagged ``[DECISION]``, ``[GOTCHA]``, ``[REUSE]``, ``[DEFER]`` and the
user's corrections ("no, use X", "don't …", "always …", "never …") into
``<state>/inbox/<id>.md``, one candidate per file with a proposed type and its source session.
The inbox is not indexed: nothing in it is recalled, let alone always-loaded, until a person runs
``memory-tool inbox accept ID``, which writes a proper memory through ``palace.add_memory``.

The extraction functions run on the hook path (stdlib ``re`` only); writing and accepting import
the heavier modules inside the functions that need them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.errors import MemoryToolError
from ..base.privacy import LazyPattern, sanitize, strip_injected
from ..base.record import record

# kind -> (proposed memory type, proposed tier). A decision is project state; a gotcha is durable
# knowledge for the wiki (or a room, with --room); a correction is a feedback rule.
KINDS: dict[str, tuple[str, str | None]] = {
    "decision": ("project", None),
    "gotcha": ("reference", "wiki"),
    "reuse": ("reference", None),
    "defer": ("project", None),
    "correction": ("feedback", None),
    "identity": ("user", None),
}

# `[DECISION] text`, `**[GOTCHA]:** text`, `- [defer] — text`: the tag anywhere in a line, the
# rest of that line the candidate, up to the next tag: `[DECISION] a. [GOTCHA] b.` is two lessons.
_TAGS = "DECISION|GOTCHA|REUSE|DEFER"
# A tag with the marks around it: `**[GOTCHA]:** `.
_TAG_MARK = rf"\[({_TAGS})\]\**\s*[:\-\u2013\u2014]?\s*\**\s*"
TAG_RE = LazyPattern(
    rf"{_TAG_MARK}(?P<text>\S(?:(?!\[(?:{_TAGS})\]).)*)",
    re.IGNORECASE,
)
TAG_MARK_RE = LazyPattern(rf"\**{_TAG_MARK}", re.IGNORECASE)
# A tagged lesson in a text: its mark, its sentence, and a bullet before it ("- **[DEFER]**
# Moving the photos is deferred."), as ``signals.tag_signals`` reads one.
TAGGED_LESSON_RE = LazyPattern(
    rf"(?:^[ \t>*+\-\u2022]*)?\**{_TAG_MARK}[^\n]*?(?:[.!?](?=\s|$)|$)",
    re.IGNORECASE | re.MULTILINE,
)
# What a line may hold between one tagged lesson and the next tag ("a. - **[GOTCHA]** b").
_BETWEEN_TAGS = " \t*_|;,-\u2013\u2014"
# A sentence the person typed that corrects or constrains how Claude works.
CORRECTION_RE = LazyPattern(
    r"^(?:please\s+|and\s+|but\s+|also\s+)?(?:no\b[,.!:]?|nope\b|wrong\b|not like that\b|"
    r"don'?t\b|do not\b|never\b|always\b|stop\b|avoid\b)"
    r"|\binstead\b"
    r"|\b(?:you|we) (?:should|must) (?:always|never|not)\b",
    re.IGNORECASE,
)
_SENTENCE_SPLIT = LazyPattern(r"(?<=[.!?])\s+|\n+")
# A rule can open a later clause: "Create a.py; never use tabs in it."
_CLAUSE_SPLIT = LazyPattern(r"[;:\u2014]\s*|,\s+(?=(?:but|and|so)\b)|\s+-\s+")
_BULLET = LazyPattern(r"^\s*(?:[-*+]|\d+[.)])\s+")
_WS = re.compile(r"\s+")
# A prompt longer than this is a task description or a paste, not a correction.
CORRECTION_PROMPT_MAX_CHARS = 600
# A candidate shorter than this carries no fact ("[DECISION] yes"); longer is cut.
MIN_CANDIDATE_CHARS = 8
MAX_CANDIDATE_CHARS = 400
MIN_CORRECTION_WORDS = 3

CANDIDATE_ID_RE = re.compile(r"^i-[0-9a-f]{6,12}$")
# Ids of candidates a person accepted or rejected: extraction never offers them again.
DECIDED_FILE = ".decided"


def _clean(text: str) -> str:
    text = _BULLET.sub("", text)
    text = text.replace("**", "").replace("__", "")
    return _WS.sub(" ", text).strip()[:MAX_CANDIDATE_CHARS]


def tagged_lines(text: str) -> list[tuple[str, str]]:
    """(kind, text) for each tagged line of ``text``; our own injected memory is skipped."""
    if "[" not in text:
        return []
    out = []
    for m in TAG_RE.finditer(strip_injected(text)):
        body = _clean(m.group("text").rstrip(_BETWEEN_TAGS))
        if len(body) >= MIN_CANDIDATE_CHARS:
            out.append((m.group(1).lower(), body))
    return out


def corrections(prompt: str) -> list[str]:
    """Sentences of a (short) prompt that correct or constrain Claude's way of working."""
    prompt = strip_injected(prompt).strip()
    if not prompt or len(prompt) > CORRECTION_PROMPT_MAX_CHARS:
        return []
    out = []
    for sentence in _SENTENCE_SPLIT.split(prompt):
        s = _clean(sentence)
        if s.endswith("?") or len(s.split()) < MIN_CORRECTION_WORDS:
            continue
        if any(CORRECTION_RE.search(c.strip()) for c in _CLAUSE_SPLIT.split(s)):
            out.append(s)
    return out


def candidate_id(kind: str, text: str) -> str:
    """Stable across sessions: the same lesson found twice is one candidate."""
    words = " ".join(re.findall(r"[a-z0-9]+", text.lower()))
    import hashlib  # lazily: 3 ms of import a hook rarely needs

    return "i-" + hashlib.sha1(f"{kind}:{words}".encode()).hexdigest()[:6]


# --- the inbox folder ----------------------------------------------------------------------------


@record
class Candidate:
    id: str
    kind: str
    text: str
    type: str
    tier: str
    session: str
    project: str
    cwd: str
    created: str
    path: Path


def inbox_dir() -> Path:
    return paths.palace_dir("inbox")


def _decided() -> set[str]:
    try:
        text = (inbox_dir() / DECIDED_FILE).read_text(encoding="utf-8")
    except OSError:
        return set()
    return {line.strip() for line in text.splitlines() if line.strip()}


def _mark_decided(cid: str, verdict: str) -> None:
    from ..base.fsutil import append_line_locked

    append_line_locked(inbox_dir() / DECIDED_FILE, f"{cid} {verdict}")


def _render(c: dict[str, str]) -> str:
    import json

    # JSON strings are valid YAML scalars: no YAML library needed to write safely.
    head = "".join(
        f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in c.items() if k != "text"
    )
    return f"---\n{head}---\n\n{c['text']}\n"


def write_candidates(
    found: Iterable[tuple[str, str]], *, session: str, project: str, cwd: str, day: str
) -> list[str]:
    """Write each new (kind, text) as a candidate file; returns the ids written. A candidate
    already waiting, accepted or rejected is not written again."""
    from ..base.fsutil import create_exclusive

    decided = {line.split()[0] for line in _decided()}
    written = []
    for kind, raw in found:
        if kind not in KINDS:
            continue
        text = sanitize(raw).strip()
        if len(text) < MIN_CANDIDATE_CHARS:
            continue
        cid = candidate_id(kind, text)
        if cid in decided:
            continue
        type_, tier = KINDS[kind]
        data = {
            "id": cid,
            "kind": kind,
            "type": type_,
            "tier": tier or "",
            "session": session,
            "project": project,
            "cwd": cwd,
            "created": day,
            "text": text,
        }
        if create_exclusive(inbox_dir() / f"{cid}.md", _render(data)):
            written.append(cid)
    return written


def _parse(path: Path) -> Candidate | None:
    import json

    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    if not text.startswith("---\n"):
        return None
    head, _, body = text[4:].partition("\n---\n")
    fields: dict[str, str] = {}
    for line in head.splitlines():
        key, sep, value = line.partition(": ")
        if not sep:
            continue
        try:
            parsed: Any = json.loads(value)
        except ValueError:
            parsed = value
        fields[key.strip()] = str(parsed)
    cid = fields.get("id", path.stem)
    kind = fields.get("kind", "")
    if kind not in KINDS or not CANDIDATE_ID_RE.match(cid):
        return None
    return Candidate(
        id=cid,
        kind=kind,
        text=body.strip(),
        type=fields.get("type") or KINDS[kind][0],
        tier=fields.get("tier", ""),
        session=fields.get("session", ""),
        project=fields.get("project", ""),
        cwd=fields.get("cwd", ""),
        created=fields.get("created", ""),
        path=path,
    )


def list_candidates() -> list[Candidate]:
    folder = inbox_dir()
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".md"))
    except OSError:
        return []
    out = [c for c in (_parse(folder / n) for n in names) if c is not None]
    return sorted(out, key=lambda c: (c.created, c.kind, c.id))


def get_candidate(cid: str) -> Candidate:
    if not CANDIDATE_ID_RE.match(cid):
        raise MemoryToolError(
            f"{cid!r} is not an inbox id: they look like i-3fa9c1 (`memory-tool inbox` lists them)."
        )
    c = _parse(inbox_dir() / f"{cid}.md")
    if c is None:
        raise MemoryToolError(
            f"no inbox candidate {cid!r}: it may have been accepted or rejected already "
            "(`memory-tool inbox` lists what is waiting)."
        )
    return c


# Where ``accept`` files a candidate besides a room: as proposed, the wiki, or the project's
# own memory folder (a gotcha is proposed for the wiki; a person may keep it with the project).
PLACES = ("", "wiki", "project")


def accept(
    idx: Any,
    cid: str,
    room: str | None = None,
    cwd: str | None = None,
    place: str = "",
    team: str | None = None,
) -> Any:
    """Write the candidate as a real memory (Claude Code format, ``created`` date, a
    ``MEMORY.md`` line) and drop it from the inbox. Returns the new Entry. ``room`` files it
    in a palace room; otherwise ``place`` (PLACES) says where, "" meaning as proposed.
    ``team``: into that team palace (``room`` there, else its wiki)."""
    from ..store.palace import add_memory

    if place not in PLACES:
        raise MemoryToolError(
            f"place must be one of {', '.join(p or '(as proposed)' for p in PLACES)}."
        )
    c = get_candidate(cid)
    target_cwd = cwd or c.cwd or os.getcwd()
    if not team and not os.path.isdir(target_cwd):
        raise MemoryToolError(
            f"the session's project folder {target_cwd} is gone: pass --cwd to say which "
            "project the memory belongs to."
        )
    if room:
        tier = None
    elif team:
        tier = "wiki"  # a team palace holds rooms and a wiki, no project folders
    elif place:
        tier = "wiki" if place == "wiki" else None
    else:
        tier = c.tier or None
    extra: dict[str, object] = {"origin": f"inbox:{c.kind}"}
    if c.session:
        extra["originSessionId"] = c.session
    if tier == "wiki" and not team:
        # The lesson was learnt in that project: in another one it is recalled as another
        # project's (L4's "From other projects"), as the Scribe's promoted wiki records are.
        extra["project"] = paths.project_key(target_cwd)
    # A person read the candidate and chose to keep it: saved even beside a similar memory.
    type_ = "wiki" if tier == "wiki" else c.type  # a wiki page has no other type
    entry = add_memory(
        idx,
        c.text,
        type_=type_,
        cwd=target_cwd,
        room=room,
        tier=tier,
        extra=extra,
        team=team,
        force=True,
    )
    _mark_decided(c.id, "accepted")
    c.path.unlink(missing_ok=True)
    return entry


def settle(kind: str, text: str, verdict: str) -> None:
    """A lesson saved by other means (the Scribe promoted it to the wiki): its candidate, if
    one waits, leaves the inbox and is not offered again (accepting it would save a copy)."""
    cid = candidate_id(kind, text)
    path = inbox_dir() / f"{cid}.md"
    if path.exists() or cid not in {line.split()[0] for line in _decided()}:
        _mark_decided(cid, verdict)
        path.unlink(missing_ok=True)


def revise(cid: str, text: str) -> Candidate:
    """Change a waiting candidate's text (before accepting it), redacted as every write is;
    its id and the rest of its fields stay."""
    from ..base.fsutil import atomic_write_text

    c = get_candidate(cid)
    new = sanitize(text).strip()
    if len(new) < MIN_CANDIDATE_CHARS:
        raise MemoryToolError(
            f"a candidate needs at least {MIN_CANDIDATE_CHARS} characters of text once private "
            "parts are removed; reject it instead to drop it."
        )
    if len(new) > MAX_CANDIDATE_CHARS:
        raise MemoryToolError(
            f"a candidate holds one lesson, at most {MAX_CANDIDATE_CHARS} characters (this is "
            f"{len(new)}): shorten it, or accept it and edit the memory it becomes."
        )
    data = {
        "id": c.id,
        "kind": c.kind,
        "type": c.type,
        "tier": c.tier,
        "session": c.session,
        "project": c.project,
        "cwd": c.cwd,
        "created": c.created,
        "text": new,
    }
    atomic_write_text(c.path, _render(data))
    c.text = new
    return c


def reject(cid: str) -> Candidate:
    c = get_candidate(cid)
    _mark_decided(c.id, "rejected")
    c.path.unlink(missing_ok=True)
    return c
