"""The web UI's changes (POST only, each form's CSRF value checked). Every write is the library
call the CLI makes: ``store.edit`` for a memory's text, frontmatter, pin, room and archive,
``tiers.inbox`` for accept / edit / reject, ``hygiene.fix`` for the doctor's repairs. A change
that fails comes back as a clear message, with anything the person typed kept in the form."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..base.errors import MemoryToolError
from .render import index, settings_of, url
from .security import CSRF_FIELD, csrf_ok

# The accept form's choice of place: "" (as proposed), "wiki", "project" or "room:<name>".
ROOM_CHOICE = "room:"
LEARNED_PATH = "/learned"
# One bulk inbox action handles at most this many candidates (a form can name any number).
BULK_MAX = 500


async def _form(request: Any) -> dict[str, str]:
    from starlette.exceptions import HTTPException

    form = await request.form()
    if not csrf_ok(form.get(CSRF_FIELD), settings_of(request).keys):
        raise HTTPException(403, "403 Forbidden: the form's CSRF value is missing or wrong.")
    return {k: v for k, v in form.items() if isinstance(v, str)}


def _back(path: str, *, note: str = "", error: str = "", **params: str) -> Any:
    from starlette.responses import RedirectResponse

    return RedirectResponse(url(path, note=note, error=error, **params), status_code=303)


async def _run(fn: Callable[[], Any]) -> Any:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn)


# --- one memory ---------------------------------------------------------------------------------


async def save_memory(request: Any) -> Any:
    from ..store.edit import save_memory as save
    from .pages import memory_view

    form = await _form(request)
    entry_id = request.path_params["entry_id"]

    def work() -> Any:
        with index() as idx:
            return save(
                idx,
                entry_id,
                body=form.get("body"),
                frontmatter=form.get("frontmatter"),
                version=form.get("version") or None,
            )

    try:
        entry = await _run(work)
    except MemoryToolError as exc:
        message = str(exc)
        return await _run(
            lambda: memory_view(request, entry_id, error=message, draft=form, status=400)
        )
    return _back(f"/memory/{entry.id}", note="saved")


def _memory_action(
    change: Callable[[Any, str, dict[str, str]], Any],
    done: Callable[[Any, dict[str, str]], tuple[str, str]],
) -> Callable[[Any], Any]:
    """A POST handler that runs ``change(idx, entry_id, form)`` and sends the person to the page
    and note ``done(result, form)`` names; an error goes back where the button was pressed."""

    async def handler(request: Any) -> Any:
        form = await _form(request)
        entry_id = request.path_params["entry_id"]

        def work() -> Any:
            with index() as idx:
                return change(idx, entry_id, form)

        try:
            result = await _run(work)
        except MemoryToolError as exc:
            return _back(_pressed_on(form, entry_id), error=str(exc))
        path, note = done(result, form)
        return _back(path, note=note)

    return handler


def _pin(idx: Any, entry_id: str, form: dict[str, str]) -> Any:
    from ..store.edit import set_pinned

    return set_pinned(idx, entry_id, True)


def _unpin(idx: Any, entry_id: str, form: dict[str, str]) -> Any:
    from ..store.edit import set_pinned

    return set_pinned(idx, entry_id, False)


def _move(idx: Any, entry_id: str, form: dict[str, str]) -> Any:
    from ..store.edit import move_to_room

    room = form.get("room", "").strip()
    if not room:
        raise MemoryToolError("choose the room to move it to.")
    return move_to_room(idx, entry_id, room)


def _archive(idx: Any, entry_id: str, form: dict[str, str]) -> Any:
    from ..store.edit import archive_memory

    return archive_memory(idx, entry_id)


def _forget(idx: Any, entry_id: str, form: dict[str, str]) -> Any:
    from ..store.lifecycle import forget

    return forget(idx, entry_id)


def _unforget(idx: Any, entry_id: str, form: dict[str, str]) -> Any:
    from ..store.lifecycle import unforget

    return unforget(idx, entry_id)


def _pressed_on(form: dict[str, str], entry_id: str) -> str:
    """Where the person goes back to: the Learned view when the button was pressed there (it
    has Forget and Undo too), else the memory's page (never a path the form names: no
    redirect elsewhere)."""
    return LEARNED_PATH if form.get("back") == LEARNED_PATH else f"/memory/{entry_id}"


def _on_page(note: Callable[[Any], str]) -> Callable[[Any, dict[str, str]], tuple[str, str]]:
    return lambda e, form: (f"/memory/{e.id}", note(e))


pin = _memory_action(_pin, _on_page(lambda e: "pinned: loaded at every session start"))
unpin = _memory_action(_unpin, _on_page(lambda e: "unpinned"))
move = _memory_action(_move, _on_page(lambda e: f"moved to room {e.room}"))
archive = _memory_action(_archive, lambda p, form: ("/rooms", f"archived to {p}"))
forget = _memory_action(
    _forget,
    lambda e, form: (
        _pressed_on(form, e.id),
        f"forgot {e.id}: it no longer loads (still in search as history)",
    ),
)
unforget = _memory_action(
    _unforget, lambda e, form: (_pressed_on(form, e.id), f"{e.id} is back: it loads again")
)


# --- inbox --------------------------------------------------------------------------------------


async def inbox_accept(request: Any) -> Any:
    from ..tiers import inbox

    form = await _form(request)
    cid = request.path_params["cid"]
    choice = form.get("to", "")
    room = choice[len(ROOM_CHOICE) :] if choice.startswith(ROOM_CHOICE) else None
    place = "" if room else choice

    def work() -> Any:
        with index() as idx:
            return inbox.accept(idx, cid, room=room, place=place)

    try:
        entry = await _run(work)
    except MemoryToolError as exc:
        return _back("/inbox", error=str(exc))
    return _back("/inbox", note=f"saved {entry.id} -> {entry.path}", saved=entry.id)


async def inbox_revise(request: Any) -> Any:
    from ..tiers import inbox
    from .pages import inbox_view

    form = await _form(request)
    cid = request.path_params["cid"]
    try:
        await _run(lambda: inbox.revise(cid, form.get("text", "")))
    except MemoryToolError as exc:
        message, draft = str(exc), {"cid": cid, "text": form.get("text", "")}
        return await _run(lambda: inbox_view(request, error=message, draft=draft, status=400))
    return _back("/inbox", note=f"{cid}: text changed")


async def inbox_reject(request: Any) -> Any:
    from ..tiers import inbox

    await _form(request)
    cid = request.path_params["cid"]
    try:
        c = await _run(lambda: inbox.reject(cid))
    except MemoryToolError as exc:
        return _back("/inbox", error=str(exc))
    return _back("/inbox", note=f"rejected {c.id}: it is not offered again")


async def inbox_bulk(request: Any) -> Any:
    """Accept (as proposed) or reject every checked candidate at once; one note says how many,
    and the first error, if any, is shown with the count of those that failed."""
    from starlette.exceptions import HTTPException

    from ..tiers import inbox

    form = await request.form()
    if not csrf_ok(form.get(CSRF_FIELD), settings_of(request).keys):
        raise HTTPException(403, "403 Forbidden: the form's CSRF value is missing or wrong.")
    action = form.get("action")
    cids = [c for c in form.getlist("cid") if isinstance(c, str)][:BULK_MAX]
    if action not in ("accept", "reject"):
        return _back("/inbox", error="choose Accept selected or Reject selected.")
    if not cids:
        return _back("/inbox", error="tick the candidates to accept or reject first.")

    def work() -> tuple[int, list[str]]:
        done, errors = 0, []
        with index() as idx:
            for cid in cids:
                try:
                    if action == "accept":
                        inbox.accept(idx, cid)
                    else:
                        inbox.reject(cid)
                    done += 1
                except MemoryToolError as exc:
                    errors.append(f"{cid}: {exc}")
        return done, errors

    done, errors = await _run(work)
    verb = "accepted" if action == "accept" else "rejected"
    note = f"{verb} {done} of {len(cids)}"
    if errors:
        return _back("/inbox", note=note, error=f"{len(errors)} failed; {errors[0]}")
    return _back("/inbox", note=note)


# --- health -------------------------------------------------------------------------------------


async def health_fix(request: Any) -> Any:
    """`memory-tool doctor --fix`: the same safe repairs, backed up first."""
    from ..hygiene.doctor import diagnose
    from ..hygiene.fix import fix

    await _form(request)
    cwd = settings_of(request).cwd

    def work() -> Any:
        with index() as idx:
            idx.refresh(cwd)
            return fix(idx, diagnose(idx, cwd))

    result = await _run(work)
    if not result.actions and not result.skipped:
        return _back("/health", note="nothing safe to repair")
    note = f"{len(result.actions)} repaired"
    if result.skipped:
        note += f", {len(result.skipped)} skipped ({result.skipped[0]['reason']})"
    if result.backup:
        note += f"; backup in {result.backup}"
    return _back("/health", note=note)
