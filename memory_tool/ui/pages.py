"""The web UI's pages (GET: they change nothing). Each reads through the library, as the CLI
does: the brief and its reasons (recall.explain), the rooms and the classifier (store.rooms,
recall.explain.preview_prompt), one memory (store.edit, store.links, hygiene.doctor), the inbox
(tiers.inbox), cold summaries and the wiki, search (store.search), the doctor's report."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..base import paths
from ..base.config import load_config, today
from ..base.errors import MemoryToolError
from ..store.entry import history_label
from ..store.entry import status as status_of
from ..store.lifecycle import chain
from .render import by_key, facts, fresh, index, open_project, projects, render, settings_of

# Search shows this many hits: a page of ids, as `memory-tool search --limit 20`.
SEARCH_LIMIT = 20
# Types in the order a room's table lists them: rules first, the past last.
TYPE_ORDER = ("feedback", "project", "reference", "note", "wiki", "user", "cold")


def _not_found(request: Any, message: str) -> Any:
    return render(request, "error.html", status=404, message=message)


def home(request: Any) -> Any:
    from starlette.responses import RedirectResponse

    return RedirectResponse("/brief", status_code=303)


# --- next session -------------------------------------------------------------------------------


def brief(request: Any) -> Any:
    """The brief a session in the chosen project would get, each entry with its reason."""
    from ..hygiene.wake_line import wake_units
    from ..recall.explain import explain_brief

    s = settings_of(request)
    with index() as idx:
        found, project = open_project(idx, s.cwd, request.query_params.get("project"))
        if project is None:
            return _not_found(request, "no such project: pick one from the list")
        explanation = None
        if project.root:
            idx.refresh_for_wake(project.root)  # exactly what SessionStart refreshes
            explanation = explain_brief(idx, project.root, extra=wake_units(idx, project.root))
        day, cfg = today(), load_config()
        facts_by_id: dict[str, Any] = {}
        if explanation is not None:
            rows = [r for rs in explanation.rows.values() for r in rs] + explanation.dropped
            facts_by_id = {r.entry.id: facts(r.entry, day, cfg) for r in rows}
    return render(
        request,
        "brief.html",
        projects=found,
        project=project,
        explanation=explanation,
        facts=facts_by_id,
    )


# --- rooms --------------------------------------------------------------------------------------


def rooms(request: Any) -> Any:
    """Memories per room and type, a room's words, and the prompt box: which room a prompt
    picks and what L3 would inject for it."""
    from ..recall.explain import preview_prompt
    from ..recall.wake import build_brief
    from ..store.classify import injects
    from ..store.rooms import compiled_rooms, room_vocabulary

    s = settings_of(request)
    q = request.query_params
    room, prompt = q.get("room", ""), q.get("prompt", "").strip()
    with index() as idx:
        found, project = open_project(idx, s.cwd, q.get("project"))
        if project is None:
            return _not_found(request, "no such project: pick one from the list")
        compiled = compiled_rooms()
        vocabulary = room_vocabulary()
        day, cfg = today(), load_config()
        every = idx.memories()
        if "room" in q:  # the listed room's memories as their files are now
            listed = {e.id for e in idx.current(e for e in every if e.room == room)}
            every = [e for e in every if e.room != room] + idx.get_many(sorted(listed))
        members: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in every:
            members[e.room or ""].append(facts(e, day, cfg))
        preview = None
        if prompt:
            cwd = project.root or s.cwd
            idx.refresh_for_wake(cwd)  # the brief the prompt would follow
            loaded = build_brief(idx, cwd)
            exclude = {e.id for layer in loaded.layers.values() for e in layer.picked}
            preview = preview_prompt(idx, prompt, cwd, exclude)
    names = sorted(set(compiled.names) | {r for r in members if r})
    summary = [
        {
            "name": name,
            "count": len(members.get(name, [])),
            "stale": sum(1 for f in members.get(name, []) if f["stale"] or f["expired"]),
            "description": vocabulary.get(name, {}).get("description", ""),
            "background": not injects(name, compiled),
        }
        for name in names
    ]
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if room or "room" in q:
        for f in members.get(room, []):
            by_type[f["entry"].type].append(f)
        for rows in by_type.values():
            rows.sort(key=lambda f: (-f["entry"].importance, f["age"], f["entry"].id))
    ordered = sorted(by_type.items(), key=lambda kv: _type_rank(kv[0]))
    return render(
        request,
        "rooms.html",
        rooms=summary,
        unfiled=len(members.get("", [])),
        room=room,
        selected="room" in q,
        words=vocabulary.get(room),
        by_type=ordered,
        prompt=prompt,
        preview=preview,
        projects=found,
        project=project,
        owners=by_key(found),
    )


def _type_rank(type_: str) -> tuple[int, str]:
    return (TYPE_ORDER.index(type_) if type_ in TYPE_ORDER else len(TYPE_ORDER), type_)


# --- one memory ---------------------------------------------------------------------------------


def memory(request: Any) -> Any:
    return memory_view(request, request.path_params["entry_id"])


def memory_view(
    request: Any,
    entry_id: str,
    *,
    error: str = "",
    draft: dict[str, str] | None = None,
    status: int = 200,
) -> Any:
    """One memory: its file, frontmatter, links both ways, the doctor's findings about it, and
    the forms that change it. ``draft``: what a person typed into a save that failed, shown
    again so nothing typed is lost."""
    from ..hygiene.doctor import diagnose_entry
    from ..store.classify import injects
    from ..store.edit import open_memory
    from ..store.links import backlinks, outgoing
    from ..store.rooms import compiled_rooms

    s = settings_of(request)
    with index() as idx:
        fresh(idx, s.cwd)
        try:
            e = idx.get_current(entry_id)
        except MemoryToolError as exc:  # no such id, or not an id at all
            return _not_found(request, str(exc))
        try:
            file = open_memory(idx, entry_id)
            readonly = ""
        except MemoryToolError as exc:
            file, readonly = None, str(exc)
        links = outgoing(idx, e)
        back = backlinks(idx, e)
        findings = diagnose_entry(idx, e.id, s.cwd)
        compiled = compiled_rooms()
        room_names = [r for r in compiled.names if injects(r, compiled)]
        info = facts(e)
        versions = chain(idx, e)
    return render(
        request,
        "memory.html",
        status=status,
        e=e,
        info=info,
        file=file,
        readonly=readonly,
        links=links,
        backlinks=back,
        findings=findings,
        rooms=room_names,
        form_error=error,
        draft=draft or {},
        state=status_of(e),
        history=history_label(e),
        versions=versions,
        version_state={v.id: status_of(v) for v in versions.older + versions.newer},
    )


# --- learned ------------------------------------------------------------------------------------

# The Learned view lists at most this many captures (newest first): a page, not a dump.
LEARNED_LIMIT = 300


def learned(request: Any) -> Any:
    """What auto-capture saved (``origin: capture:<signal>``), newest first, grouped by the
    session it came from: the signal, the quoted source line, where it stands (live, superseded,
    forgotten), and a Forget (or Undo) button each."""
    s = settings_of(request)
    with index() as idx:
        fresh(idx, s.cwd)
        entries = idx.current(idx.captured(LEARNED_LIMIT))
        owners = by_key(projects(idx, s.cwd))
    sessions: dict[str, list[Any]] = defaultdict(list)
    for e in entries:
        sessions[str(e.extra.get("origin_session") or "")].append(e)
    groups = sorted(sessions.items(), key=lambda kv: max(e.created for e in kv[1]), reverse=True)
    return render(
        request,
        "learned.html",
        groups=groups,
        total=len(entries),
        states={e.id: status_of(e) for e in entries},
        history={e.id: history_label(e) for e in entries},
        owners=owners,
    )


# --- inbox --------------------------------------------------------------------------------------


def inbox(request: Any) -> Any:
    return inbox_view(request)


def inbox_view(
    request: Any, *, error: str = "", draft: dict[str, str] | None = None, status: int = 200
) -> Any:
    """The Scribe's candidates, grouped by project (this one first), each with accept (as
    proposed, the wiki, the project's memory, or a room), edit and reject."""
    from ..store.classify import injects
    from ..store.rooms import compiled_rooms
    from ..tiers.inbox import list_candidates

    s = settings_of(request)
    here = paths.project_key(s.cwd)
    waiting = list_candidates()
    with index() as idx:
        owners = by_key(projects(idx, s.cwd))
    groups: dict[str, list[Any]] = defaultdict(list)
    for c in waiting:  # a worktree's candidates under its repository
        groups[owners[c.project].key if c.project in owners else c.project].append(c)

    def order(key: str) -> tuple[bool, str]:
        return key != here, owners[key].name.lower() if key in owners else key

    ordered = sorted(groups.items(), key=lambda kv: order(kv[0]))
    compiled = compiled_rooms()
    return render(
        request,
        "inbox.html",
        status=status,
        groups=ordered,
        here=here,
        owners=owners,
        rooms=[r for r in compiled.names if injects(r, compiled)],
        form_error=error,
        draft=draft or {},
    )


# --- sessions, wiki, search ---------------------------------------------------------------------


def sessions(request: Any) -> Any:
    """Cold summaries as a timeline per project, and the wiki."""
    s = settings_of(request)
    with index() as idx:
        found, project = open_project(idx, s.cwd, request.query_params.get("project"))
        if project is None:
            return _not_found(request, "no such project: pick one from the list")
        cold = idx.current(e for k in project.keys for e in idx.entries(source="cold", project=k))
        wiki = idx.current(idx.entries(source="wiki"))
        owners = by_key(found)
        counts = {p.key: 0 for p in found}
        for e in idx.entries(source="cold"):
            key = owners[e.project].key if e.project in owners else e.project
            counts[key] = counts.get(key, 0) + 1
    cold.sort(key=lambda e: (e.created, e.path), reverse=True)
    days: dict[str, list[Any]] = defaultdict(list)
    for e in cold:
        days[e.created or "?"].append(e)
    wiki.sort(key=lambda e: (e.project != project.key, e.name.lower()))
    return render(
        request,
        "sessions.html",
        projects=found,
        project=project,
        days=list(days.items()),
        wiki=wiki,
        counts=counts,
    )


def search_page(request: Any) -> Any:
    """The CLI's search (recall.depth, as the CLI and the MCP server answer): ids first, a peek
    at each, the full text one click on."""
    from ..recall import depth

    q = request.query_params
    text = q.get("q", "").strip()
    room, type_, project = q.get("room") or None, q.get("type") or None, q.get("project") or None
    hits: list[Any] = []
    notes: list[str] = []
    values: dict[str, list[str]] = {}
    with index() as idx:
        idx.refresh()  # as `memory-tool search` does: past sessions included
        for column in ("room", "type", "project"):
            values[column] = idx.distinct_values(column)
        if text:
            hits = depth.find(
                idx, text, limit=SEARCH_LIMIT, room=room, type_=type_, project=project
            )
            if not hits:
                notes = depth.unknown_filters(idx, room=room, type=type_, project=project)
        peeks = {h.entry.id: depth.peek_text(h.entry) for h in hits}
    return render(
        request,
        "search.html",
        q=text,
        room=room or "",
        type_=type_ or "",
        project=project or "",
        values=values,
        hits=hits,
        peeks=peeks,
        notes=notes,
        searched=bool(text),
    )


# --- health -------------------------------------------------------------------------------------


def health(request: Any) -> Any:
    """The doctor's report, grouped by check, and the repairs `doctor --fix` can make."""
    from ..hygiene.doctor import diagnose
    from ..hygiene.report import NOTE, PROBLEM, TITLES

    s = settings_of(request)
    with index() as idx:
        idx.refresh(s.cwd)  # as `memory-tool doctor` does: every file checked
        report = diagnose(idx, s.cwd)
    groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for f in report.findings:
        groups[(f.level, f.check)].append(f)
    ordered = [
        (level, check, TITLES.get(check, check), items) for (level, check), items in groups.items()
    ]
    ordered.sort(key=lambda g: g[0] != PROBLEM)  # problems first, each check in report order
    fixable = sum(1 for f in report.findings if f.data.get("fixable"))
    return render(
        request,
        "health.html",
        report=report,
        groups=ordered,
        problem=PROBLEM,
        note_level=NOTE,
        fixable=fixable,
    )
