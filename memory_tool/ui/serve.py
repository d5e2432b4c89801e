"""Running the web UI: a socket on 127.0.0.1 (nowhere else), a fresh token per run, the URL
printed, the browser opened, and a clean stop on Ctrl-C (uvicorn finishes the requests in
flight and returns)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from ..base.errors import MemoryToolError
from .security import HOST, Secrets, new_secrets

# A thread-run server (tests, the screenshot script) must be up within this long.
START_TIMEOUT_S = 10.0
# Connections waiting to be accepted: one person's browser opens a handful at a time.
LISTEN_BACKLOG = 64


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((HOST, port))
        # Listening before the URL is printed: a browser that is quick queues, never refused.
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        raise MemoryToolError(
            f"cannot listen on {HOST}:{port} ({exc.strerror or exc}): pick another --port, or "
            "leave --port out for a free one."
        ) from exc
    return sock


def _server(sock: socket.socket, cwd: str) -> tuple[Any, Secrets]:
    import uvicorn

    from ..hygiene.roots import remember_root
    from ..store.index import open_index
    from .app import create_app

    with open_index() as idx:
        remember_root(idx, cwd)  # the project page can name this project's folder
    keys = new_secrets(sock.getsockname()[1])
    # No access log: the first request's URL holds the token.
    config = uvicorn.Config(
        create_app(keys, cwd), log_level="warning", access_log=False, lifespan="off"
    )
    return uvicorn.Server(config), keys


def serve(
    cwd: str,
    port: int = 0,
    open_browser: bool = True,
    say: Callable[[str], None] = print,
) -> None:
    """Serve until Ctrl-C. ``port`` 0 takes a free one."""
    sock = _bind(port)
    server, keys = _server(sock, cwd)
    say(f"memory-tool ui: {keys.url}")
    say("(only this machine can reach it, and only with that URL; Ctrl-C stops it)")
    if open_browser:
        import webbrowser

        threading.Timer(0.5, webbrowser.open, args=(keys.url,)).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # uvicorn finished its shutdown, then passed Ctrl-C on: a stop asked for
    finally:
        sock.close()
    say("memory-tool ui: stopped")


class Running:
    """A UI served from a thread of this process (tests, the screenshot script)."""

    def __init__(self, cwd: str, port: int = 0) -> None:
        self.sock = _bind(port)
        self.server, self.keys = _server(self.sock, cwd)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the UI server did not start")
            time.sleep(0.01)

    @property
    def url(self) -> str:
        return self.keys.url

    @property
    def origin(self) -> str:
        return self.keys.origin

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(START_TIMEOUT_S)
        self.sock.close()

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
