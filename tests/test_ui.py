"""The web UI over real HTTP on 127.0.0.1 (tests/test_ui_browser.py drives it in a browser): it
listens on the loopback address only, wants the run's token on every request, takes changes by
POST with a CSRF check only, resolves nothing outside the memory folders, escapes memory text,
and no hook ever imports it. `memory-tool ui` prints its URL and stops cleanly on Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import REPO
from ui_support import Served, location_path, served

from memory_tool.cli.main import main
from memory_tool.ui.security import HEADERS

PAGES = ["/brief", "/rooms", "/inbox", "/learned", "/sessions", "/health", "/search?q=token"]


@pytest.fixture
def ui(sandbox: Path) -> Served:
    with served(sandbox) as s:
        yield s


def test_it_listens_on_the_loopback_address_only(ui: Served) -> None:
    assert ui.ui.sock.getsockname()[0] == "127.0.0.1"
    assert ui.ui.url.startswith(f"http://127.0.0.1:{ui.port}/?token=")
    addresses = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
    for address in addresses - {"127.0.0.1", "127.0.1.1"}:
        with pytest.raises(OSError):  # another interface of this machine: nothing listens there
            socket.create_connection((address, ui.port), timeout=2).close()


def test_without_the_token_every_request_is_refused(ui: Served) -> None:
    for path in ["/", *PAGES, f"/memory/{ui.ids['rule0']}", "/static/ui.css"]:
        status, _, body = ui.request("GET", path, authed=False)
        assert status == 403, path
        assert "open the URL that memory-tool ui printed" in body
        assert "Never run database migrations" not in body
    wrong = ui.request("GET", "/brief", authed=False, headers={"Cookie": f"{ui.ui.keys.cookie}=x"})
    assert wrong[0] == 403
    assert ui.request("GET", "/brief?token=wrong", authed=False)[0] == 403


def test_the_token_is_traded_for_a_cookie_and_leaves_the_address_bar(ui: Served) -> None:
    token = ui.ui.keys.token
    status, headers, _ = ui.request("GET", f"/rooms?room=api&token={token}", authed=False)
    assert status == 303 and location_path(headers) == "/rooms?room=api"
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"{ui.ui.keys.cookie}={token};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert ui.request("GET", "/rooms?room=api")[0] == 200


def test_a_request_naming_another_host_is_refused_even_with_the_cookie(ui: Served) -> None:
    """A page on another site cannot reach the UI by pointing its own name at 127.0.0.1."""
    status, _, body = ui.request("GET", "/brief", headers={"Host": f"evil.example:{ui.port}"})
    assert status == 403 and "answers only at the address" in body
    assert ui.request("GET", "/brief", headers={"Host": f"localhost:{ui.port}"})[0] == 200


def test_every_page_answers_with_the_security_headers(ui: Served) -> None:
    for path in [*PAGES, f"/memory/{ui.ids['token-refresh']}"]:
        status, headers, body = ui.request("GET", path)
        assert status == 200, (path, body[:500])
        for name, value in HEADERS.items():
            assert headers[name] == value, (path, name)
        assert "script-src 'self'" in headers["content-security-policy"]
        assert re.search(r"<script src=\"/static/ui.js\"", body)
        assert "http://" not in body.replace(f"http://127.0.0.1:{ui.port}", "")  # no CDN


def test_memory_text_is_escaped_wherever_it_is_shown(ui: Served) -> None:
    hostile = ui.ids["hostile"]
    for path in [f"/memory/{hostile}", "/rooms?room=frontend", "/search?q=markup+test"]:
        _, _, body = ui.request("GET", path)
        assert "<script>window.__pwned" not in body and "<img src=x" not in body, path
    _, _, page = ui.request("GET", f"/memory/{hostile}")
    assert "&lt;script&gt;window.__pwned = 1;&lt;/script&gt;" in page


def test_changes_need_post_the_csrf_value_and_the_uis_own_origin(ui: Served) -> None:
    mid = ui.ids["rule1"]
    path = Path(ui.request("GET", f"/memory/{mid}")[2].split("<code>")[1].split("</code>")[0])
    path = Path(str(path).replace("~", os.environ["HOME"], 1))
    before = path.read_text()
    assert ui.request("GET", f"/memory/{mid}/pin")[0] == 405  # a link cannot change anything
    status, _, body = ui.request("POST", f"/memory/{mid}/pin", form={})
    assert status == 403 and "CSRF" in body
    status, _, _ = ui.request("POST", f"/memory/{mid}/pin", form={"csrf": "guess"})
    assert status == 403
    for origin in ("https://evil.example", "null"):  # null: a sandboxed or opaque sender
        assert ui.post(f"/memory/{mid}/pin", {}, headers={"Origin": origin})[0] == 403
    other_site = {"Sec-Fetch-Site": "cross-site"}
    assert ui.post(f"/memory/{mid}/pin", {}, headers=other_site)[0] == 403
    assert path.read_text() == before  # nothing changed by any of them
    own = {"Origin": f"http://127.0.0.1:{ui.port}", "Sec-Fetch-Site": "same-origin"}
    status, headers, _ = ui.post(f"/memory/{mid}/pin", {}, headers=own)
    assert status == 303 and location_path(headers).startswith(f"/memory/{mid}?note=pinned")
    assert "always: true" in path.read_text()


@pytest.mark.parametrize(
    "path",
    [
        "/memory/..%2F..%2F..%2Fetc%2Fpasswd",
        "/memory/%2e%2e",
        "/memory/..",
        "/memory/x%00y",
        "/static/..%2F..%2Fsecurity.py",
        "/static/../../store/edit.py",
    ],
)
def test_no_path_reaches_outside_the_memory_folders(ui: Served, path: str) -> None:
    status, _, body = ui.request("GET", path)
    assert status in (400, 404), (path, status)
    assert "root:" not in body and "def " not in body


def test_a_bad_edit_is_refused_with_the_persons_text_kept(ui: Served) -> None:
    mid = ui.ids["fact0"]
    status, _, body = ui.post(
        f"/memory/{mid}/save", {"frontmatter": "name: [unclosed", "body": "My careful rewrite."}
    )
    assert status == 400
    assert "not valid YAML" in body
    assert "My careful rewrite." in body and "name: [unclosed" in body  # nothing typed is lost


def test_an_unknown_id_and_an_unknown_project_are_404s(ui: Served) -> None:
    assert ui.request("GET", "/memory/p-000000")[0] == 404
    assert ui.request("GET", "/brief?project=nope")[0] == 404


def test_no_hook_imports_the_ui_or_its_libraries() -> None:
    code = (
        "import sys; import memory_tool.runtime.dispatch, memory_tool.runtime.prompt_submit, "
        "memory_tool.runtime.session_start, memory_tool.runtime.stop, "
        "memory_tool.runtime.server, memory_tool.runtime.client, memory_tool.recall.room, "
        "memory_tool.recall.wake, memory_tool.tiers.inject, memory_tool.tiers.inbox; "
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('starlette', 'jinja2', 'uvicorn', 'multipart', 'anyio', 'playwright') "
        "or m.startswith('memory_tool.ui')]; print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=str(REPO)
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_the_command_prints_its_url_serves_and_stops_on_ctrl_c(sandbox: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from memory_tool.cli.main import main; main()",
            "ui",
            "--no-browser",
            "--cwd",
            str(sandbox),
        ],  # fmt: skip
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(REPO),
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        match = re.match(r"memory-tool ui: (http://127\.0\.0\.1:(\d+)/\?token=(\S+))$", first)
        assert match, first + (proc.stderr.read() if proc.stderr else "")
        port = int(match.group(2))
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/brief")
        assert conn.getresponse().status == 403
        conn.close()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", f"/?token={match.group(3)}")
        assert conn.getresponse().status == 303
        conn.close()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.rstrip().endswith("memory-tool ui: stopped")
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_a_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["ui", "--no-browser", "--port", str(port)])
    assert result.exit_code == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.output
    assert "pick another --port" in result.output


def test_without_the_extra_the_command_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a)
    )
    result = CliRunner().invoke(main, ["ui", "--no-browser"])
    assert result.exit_code == 1
    assert "uvicorn missing" in result.output and ".[ui]" in result.output


def test_the_server_stops_without_leaving_its_port_open(sandbox: Path) -> None:
    from memory_tool.ui.serve import Running

    ui = Running(str(sandbox))
    port = ui.keys.port
    ui.stop()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return
        time.sleep(0.1)
    pytest.fail("the port still answers after stop()")


def test_pages_show_the_files_as_they_are_now(ui: Served) -> None:
    """Files are the truth: a note written by hand appears, a memory edited in place shows its
    new text, and one deleted by hand is gone, without a command in between."""
    room = Path(os.environ["HOME"]) / ".claude" / "memory-tool" / "rooms" / "api"
    room.mkdir(parents=True, exist_ok=True)
    (room / "pagination.md").write_text(
        "---\nname: pagination\ndescription: Cursor pagination only.\n---\n\nNo offsets.\n"
    )
    assert "Cursor pagination only." in ui.request("GET", "/rooms?room=api")[2]
    path = next(p for p in room.parent.joinpath("authentication").glob("old-login-page*.md"))
    path.write_text(path.read_text().replace("still serves", "no longer serves"))
    _, _, page = ui.request("GET", "/rooms?room=authentication")
    assert "no longer serves" in page and "still serves" not in page
    path.unlink()
    assert "no longer serves" not in ui.request("GET", "/rooms?room=authentication")[2]
    assert ui.request("GET", f"/memory/{ui.ids['old-login-page']}")[0] == 404
