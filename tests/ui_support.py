"""What the web UI's tests share: the demo palace (scripts/demo_palace.py) served by a real
server on 127.0.0.1, and a plain HTTP client that sets exactly the headers a test names."""

from __future__ import annotations

import http.client
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlencode, urlsplit

from helpers import REPO


def demo_palace() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "demo_palace", REPO / "scripts" / "demo_palace.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("demo_palace", module)
    spec.loader.exec_module(module)
    return module


class Served:
    """The demo palace behind a running UI."""

    def __init__(self, ui: Any, palace: dict[str, Any]) -> None:
        self.ui = ui
        self.root: Path = palace["root"]
        self.key: str = palace["key"]
        self.ids: dict[str, str] = palace["ids"]
        self.port: int = ui.keys.port

    @property
    def cookie(self) -> str:
        return f"{self.ui.keys.cookie}={self.ui.keys.token}"

    def request(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        form: dict[str, str] | list[tuple[str, str]] | None = None,
        authed: bool = True,
    ) -> tuple[int, dict[str, str], str]:
        """One request; ``authed`` sends the run's cookie; ``form`` as pairs may repeat a
        field. Returns status, headers, body."""
        sent = {"Host": f"127.0.0.1:{self.port}"}
        if authed:
            sent["Cookie"] = self.cookie
        body = None
        if form is not None:
            body = urlencode(form)
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        sent.update(headers or {})
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=sent)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode()
        finally:
            conn.close()

    def post(self, path: str, form: dict[str, str], **kw: Any) -> tuple[int, dict[str, str], str]:
        return self.request("POST", path, form={"csrf": self.ui.keys.csrf, **form}, **kw)


@contextmanager
def served(base: Path, hostile: bool = True) -> Iterator[Served]:
    """Build the demo palace under ``base`` (the sandboxed HOME) and serve it."""
    from memory_tool.ui.serve import Running

    palace = demo_palace().build(base, hostile=hostile)
    with Running(str(palace["root"])) as ui:
        yield Served(ui, palace)


def location_path(headers: dict[str, str]) -> str:
    """The path and query a redirect points at."""
    parts = urlsplit(headers["location"])
    return parts.path + (f"?{parts.query}" if parts.query else "")
