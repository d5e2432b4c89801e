"""What keeps the local web UI to the person who started it.

- It listens on 127.0.0.1 only (``serve``), and answers only requests whose Host header names
  that address and port: a web page on another site cannot reach it through DNS rebinding.
- Every request carries the run's random token: the URL ``memory-tool ui`` prints holds it; the
  first visit trades it for a cookie (HttpOnly, SameSite=Strict, named after the port) and is
  sent on to the same page without it, so the token does not linger in the address bar or
  history. Without the token or the cookie: 403.
- Changes are POST only, each form carries a second random value (the CSRF token) that the
  handler checks, and a POST whose Origin or Sec-Fetch-Site says another site sent it is refused.
- Memory text is escaped by the templates (autoescape on), and the Content-Security-Policy lets
  the page run only the script it ships: even markup that got through would not run.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlencode

from ..base.record import record

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

HOST = "127.0.0.1"
# 32 random bytes: as hard to guess as a session key; a URL still fits on one terminal line.
TOKEN_BYTES = 32
TOKEN_PARAM = "token"
CSRF_FIELD = "csrf"
# Methods that change nothing; every other one must pass the CSRF and origin checks.
SAFE_METHODS = frozenset({"GET", "HEAD"})

HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    # Not no-referrer: with it, browsers send "Origin: null" on the UI's own form posts, and
    # the origin check could not tell them from a stranger's. Nothing links off the page.
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


@record(frozen=True)
class Secrets:
    """One run's secrets and where it listens."""

    token: str
    csrf: str
    port: int

    @property
    def cookie(self) -> str:
        # Cookies are per host, not per port: two UIs on one machine must not overwrite each other.
        return f"memory_tool_ui_{self.port}"

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"{HOST}:{self.port}", f"localhost:{self.port}"})

    @property
    def url(self) -> str:
        return f"{self.origin}/?{TOKEN_PARAM}={self.token}"


def new_secrets(port: int) -> Secrets:
    return Secrets(
        token=secrets.token_urlsafe(TOKEN_BYTES), csrf=secrets.token_urlsafe(TOKEN_BYTES), port=port
    )


def same(given: str | None, expected: str) -> bool:
    """Constant-time comparison: the time taken says nothing about how much of it was right."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def csrf_ok(form_value: object, keys: Secrets) -> bool:
    return isinstance(form_value, str) and same(form_value, keys.csrf)


class Guard:
    """ASGI middleware: the Host, token and origin checks, and the security headers on every
    answer. The CSRF field is checked by each POST handler (it reads the form)."""

    def __init__(self, app: ASGIApp, keys: Secrets) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.requests import Request
        from starlette.responses import PlainTextResponse, RedirectResponse

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in HEADERS.items()]
                message["headers"] = headers
            await send(message)

        request = Request(scope)
        keys = self.keys
        refused = None
        if request.headers.get("host", "") not in keys.hosts:
            refused = "this UI answers only at the address memory-tool ui printed"
        elif request.method not in SAFE_METHODS and not self._same_origin(request):
            refused = "a change must come from this UI's own page"
        given = request.query_params.get(TOKEN_PARAM)
        if refused is None and same(given, keys.token) and request.method in SAFE_METHODS:
            # Trade the token for a cookie and show the same page without it.
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_PARAM]
            target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
            response = RedirectResponse(target, status_code=303)
            response.set_cookie(keys.cookie, keys.token, httponly=True, samesite="strict", path="/")
            await response(scope, receive, send_with_headers)
            return
        if refused is None and not (
            same(given, keys.token) or same(request.cookies.get(keys.cookie), keys.token)
        ):
            refused = "open the URL that memory-tool ui printed (it holds this run's token)"
        if refused is not None:
            await PlainTextResponse(f"403 Forbidden: {refused}.\n", status_code=403)(
                scope, receive, send_with_headers
            )
            return
        await self.app(scope, receive, send_with_headers)

    def _same_origin(self, request: Any) -> bool:
        origin = request.headers.get("origin")
        if origin is not None and origin not in {f"http://{h}" for h in self.keys.hosts}:
            return False
        site = request.headers.get("sec-fetch-site")
        return site is None or site in ("same-origin", "none")
