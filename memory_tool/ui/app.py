"""The web UI as one ASGI application: the pages, the changes, the shipped static files (no
CDN: the page loads nothing from anywhere else), all behind the guard (security.Guard)."""

from __future__ import annotations

from typing import Any

from ..base.errors import MemoryToolError
from . import actions, pages
from .render import STATIC, Settings, render
from .security import Guard, Secrets


def create_app(keys: Secrets, cwd: str) -> Any:
    """The application for one run: ``keys`` are its secrets, ``cwd`` the folder whose project
    the pages show first."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import PlainTextResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    post = ["POST"]
    routes = [
        Route("/", pages.home),
        Route("/brief", pages.brief),
        Route("/rooms", pages.rooms),
        Route("/memory/{entry_id}", pages.memory),
        Route("/memory/{entry_id}/save", actions.save_memory, methods=post),
        Route("/memory/{entry_id}/pin", actions.pin, methods=post),
        Route("/memory/{entry_id}/unpin", actions.unpin, methods=post),
        Route("/memory/{entry_id}/move", actions.move, methods=post),
        Route("/memory/{entry_id}/archive", actions.archive, methods=post),
        Route("/memory/{entry_id}/forget", actions.forget, methods=post),
        Route("/memory/{entry_id}/unforget", actions.unforget, methods=post),
        Route("/learned", pages.learned),
        Route("/inbox", pages.inbox),
        Route("/inbox/bulk", actions.inbox_bulk, methods=post),
        Route("/inbox/{cid}/accept", actions.inbox_accept, methods=post),
        Route("/inbox/{cid}/revise", actions.inbox_revise, methods=post),
        Route("/inbox/{cid}/reject", actions.inbox_reject, methods=post),
        Route("/sessions", pages.sessions),
        Route("/search", pages.search_page),
        Route("/health", pages.health),
        Route("/health/fix", actions.health_fix, methods=post),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]

    async def plain_error(request: Any, exc: Exception) -> Any:
        assert isinstance(exc, HTTPException)
        return PlainTextResponse(f"{exc.detail}\n", status_code=exc.status_code)

    def domain_error(request: Any, exc: Exception) -> Any:
        # A library error a page did not expect (a broken rooms.yaml, say): its message says
        # how to fix it, as the CLI shows it.
        return render(request, "error.html", status=400, message=str(exc))

    handlers = {HTTPException: plain_error, MemoryToolError: domain_error}
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.state.settings = Settings(keys=keys, cwd=cwd)
    return Guard(app, keys)
