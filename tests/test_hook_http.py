"""Hooks over HTTP: the server's loopback door answers Claude Code's `type: "http"` hooks with the
same context as a command hook, only with this install's secret, always in JSON, and its life
follows the sessions it serves."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers import run_hook
from test_server import payload, seed, server_pid, wait_for

from memory_tool.base import paths
from memory_tool.runtime import hook_http, server, sessions, settings

SECRET = "s3cret-" + "x" * 30


@pytest.fixture
def http_server(project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """A running server with this install's secret in settings.json; yields its port."""
    monkeypatch.delenv("MEMORY_TOOL_NO_BACKGROUND", raising=False)
    monkeypatch.delenv("MEMORY_TOOL_SERVER", raising=False)
    paths.settings_file().parent.mkdir(parents=True, exist_ok=True)
    paths.settings_file().write_text(json.dumps({"env": {hook_http.SECRET_ENV: SECRET}}))
    seed(project)
    assert server.start() is not None
    yield int(os.environ[hook_http.PORT_ENV])
    pid = server_pid()
    server.stop()
    if pid is not None and not wait_for(lambda: server_pid() is None, 5):
        os.kill(pid, signal.SIGKILL)


def post(
    port: int, event: str, body: bytes | object, secret: str | None = SECRET
) -> tuple[int, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["X-Memory-Tool-Secret"] = secret
    conn.request("POST", f"/hook/{event}", body=data, headers=headers)
    resp = conn.getresponse()
    out = resp.status, resp.read()
    conn.close()
    return out


def test_a_prompt_over_http_gets_the_context_the_command_hook_gives(
    project: Path, http_server: int
) -> None:
    status, body = post(http_server, "UserPromptSubmit", payload(project, "h1"))
    assert status == 200
    over_http = json.loads(body)
    assert "RS256" in over_http["hookSpecificOutput"]["additionalContext"]
    in_process = run_hook(
        "UserPromptSubmit", payload(project, "h2"), env={"MEMORY_TOOL_SERVER": "0"}
    ).stdout
    assert over_http == json.loads(in_process)


@pytest.mark.parametrize("secret", [None, "", "wrong-" + "x" * 30, SECRET[:-1]])
def test_a_request_without_the_secret_gets_403_and_nothing_else(
    project: Path, http_server: int, secret: str | None
) -> None:
    status, body = post(http_server, "UserPromptSubmit", payload(project, "h3"), secret=secret)
    assert (status, body) == (403, b"{}")
    assert b"RS256" not in body


def test_no_secret_in_settings_means_every_request_is_refused(
    project: Path, http_server: int
) -> None:
    paths.settings_file().write_text("{}")
    assert post(http_server, "UserPromptSubmit", payload(project, "h4"), secret="")[0] == 403
    assert post(http_server, "UserPromptSubmit", payload(project, "h4"))[0] == 403


def test_the_server_listens_on_loopback_only(http_server: int) -> None:
    addrs = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
    for addr in addrs - {"127.0.0.1"}:
        with socket.socket() as s, pytest.raises(OSError):
            s.settimeout(2)
            s.connect((addr, http_server))


@pytest.mark.parametrize(
    "body",
    [b"", b"not json", b"[1, 2]", b'"a string"', b"{", b"\xff\xfe\x00garbage", b"null"],
)
def test_a_malformed_body_gets_an_empty_json_answer(http_server: int, body: bytes) -> None:
    assert post(http_server, "UserPromptSubmit", body) == (200, b"{}")
    assert server.ping() is not None  # and the server goes on


def test_garbage_requests_get_json_errors_and_the_server_goes_on(http_server: int) -> None:
    for raw in (b"GARBAGE\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"\x00" * 100):
        with socket.create_connection(("127.0.0.1", http_server), timeout=10) as s:
            s.sendall(raw)
            s.shutdown(socket.SHUT_WR)
            reply = s.recv(4096)
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 4") and body in (b"{}",), reply
    status, _ = post(http_server, "Not-An-Event!", {})
    assert status == 404
    conn = http.client.HTTPConnection("127.0.0.1", http_server, timeout=10)
    conn.request("GET", "/hook/UserPromptSubmit", headers={"X-Memory-Tool-Secret": SECRET})
    assert conn.getresponse().status == 405
    assert server.ping() is not None


def test_an_event_without_a_handler_answers_empty_json(http_server: int, project: Path) -> None:
    assert post(http_server, "Notification", payload(project, "h5")) == (200, b"{}")


def test_stop_over_http_answers_empty_json(project: Path, http_server: int) -> None:
    body = {"session_id": "h6", "cwd": str(project), "stop_hook_active": False}
    status, out = post(http_server, "Stop", body)
    assert status == 200 and set(json.loads(out)) <= hook_http.STOP_KEYS


def test_shape_answer_keeps_only_the_stop_decision() -> None:
    out = hook_http.shape_answer(
        "Stop",
        b'{"decision": "block", "reason": "r", "hookSpecificOutput": {"additionalContext": "x"}}',
    )
    assert json.loads(out) == {"decision": "block", "reason": "r"}
    assert hook_http.shape_answer("Stop", b'{"hookSpecificOutput": {}}') == b"{}"
    assert hook_http.shape_answer("UserPromptSubmit", b"") == b"{}"
    assert hook_http.shape_answer("UserPromptSubmit", b"plain text") == b"{}"


def test_fifty_concurrent_http_hooks_all_get_their_answer(project: Path, http_server: int) -> None:
    def one(i: int) -> tuple[int, bytes]:
        return post(http_server, "UserPromptSubmit", payload(project, f"c{i}"))

    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(one, range(50)))
    assert all(status == 200 for status, _ in results)
    assert all(b"RS256" in body for _, body in results)


def test_the_same_hook_from_two_installs_is_answered_once(project: Path, http_server: int) -> None:
    body = json.dumps({**payload(project, "twin"), "prompt_id": "p1"}).encode()
    first = post(http_server, "UserPromptSubmit", body)
    second = post(http_server, "UserPromptSubmit", body)
    assert b"RS256" in first[1] and second == (200, b"{}")


def test_a_session_s_hooks_run_with_the_environment_its_session_start_had(
    project: Path, http_server: int, tmp_path: Path
) -> None:
    """An HTTP request carries no environment: the session's SessionStart (a command hook
    through the unix socket) left its values with the server."""
    from test_server import calls

    before = calls()
    start = {"session_id": "envs", "cwd": str(project), "source": "startup"}
    proc = run_hook("SessionStart", start, env={"MEMORY_TOOL_NESTED": "1"})
    assert proc.stdout == b""  # a nested session of ours: memory stays out
    assert calls() == before + 1  # answered by the server
    assert post(http_server, "UserPromptSubmit", payload(project, "envs")) == (200, b"{}")
    assert b"RS256" in post(http_server, "UserPromptSubmit", payload(project, "other"))[1]


def test_install_writes_http_hooks_with_a_secret_only_settings_json_holds(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMORY_TOOL_SERVER", raising=False)
    settings.install()
    path = paths.settings_file()
    data = json.loads(path.read_text())
    secret = data["env"][hook_http.SECRET_ENV]
    assert len(secret) >= 32 and oct(path.stat().st_mode & 0o777) == "0o600"
    (group,) = data["hooks"]["UserPromptSubmit"]
    assert group["hooks"][0]["type"] == "http"
    assert group["hooks"][0]["headers"] == {"X-Memory-Tool-Secret": "${MEMORY_TOOL_HOOK_SECRET}"}
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["type"] == "command"
    for f in state.rglob("*"):  # nowhere else under the state root
        if f.is_file():
            assert secret.encode() not in f.read_bytes(), f
    settings.install()  # installing again keeps the secret
    assert json.loads(path.read_text())["env"][hook_http.SECRET_ENV] == secret
    settings.uninstall()
    assert not path.exists()


def test_with_the_server_off_install_writes_command_hooks_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMORY_TOOL_SERVER", "0")
    settings.install()
    data = json.loads(paths.settings_file().read_text())
    kinds = {h["type"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]}
    assert kinds == {"command"}
    assert "env" not in data
    assert "PostToolUse" not in data["hooks"]  # a process per tool call: not worth it


def test_a_session_is_live_while_its_claude_process_runs(tmp_path: Path) -> None:
    reg = sessions.Sessions(str(tmp_path / "sessions.json"))
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        reg.touch("a", {"CLAUDE_PID": str(child.pid), "CLAUDE_PROJECT_DIR": "/p", "HOME": "/h"})
        assert reg.env_of("a") == {"CLAUDE_PID": str(child.pid), "CLAUDE_PROJECT_DIR": "/p"}
        assert reg.live() and not reg.may_exit(last_call=0)
        # a successor reads the same sessions
        assert sessions.Sessions(str(tmp_path / "sessions.json")).live()
    finally:
        child.kill()
        child.wait()
    assert not reg.live()
    now = time.time()
    assert not reg.may_exit(last_call=now, now=now)  # the grace period
    assert reg.may_exit(last_call=now, now=now + sessions.GRACE_S + 1)


def test_a_session_ends_with_its_session_end(tmp_path: Path) -> None:
    reg = sessions.Sessions(str(tmp_path / "sessions.json"))
    reg.touch("a", {"CLAUDE_PID": str(os.getpid())})
    assert reg.live()
    reg.end("a")
    assert not reg.live()


def test_a_session_seen_only_over_http_lives_until_it_goes_quiet(tmp_path: Path) -> None:
    reg = sessions.Sessions(str(tmp_path / "sessions.json"))
    reg.touch("h")
    now = time.time()
    assert reg.live(now)
    assert not reg.live(now + sessions.UNKNOWN_PID_LIVE_S + 1)


def test_an_idle_server_serving_a_live_session_does_not_exit(tmp_path: Path) -> None:
    srv = server.Server(str(tmp_path), str(tmp_path / "s.sock"))
    srv.sessions.touch("a", {"CLAUDE_PID": str(os.getpid())})
    srv.last_call = time.time() - 10 * server.IDLE_EXIT_S
    assert srv._wait_or_exit(server.IDLE_EXIT_S) == server.TICK_S
    srv.sessions.end("a")
    assert srv._wait_or_exit(server.IDLE_EXIT_S) is not None  # the grace period
    srv.sessions.last_live -= sessions.GRACE_S + 1
    assert srv._wait_or_exit(server.IDLE_EXIT_S) is None


def test_the_plugins_session_start_gives_settings_json_a_secret_once(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = paths.settings_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"model": "opus"}\n')
    os.chmod(path, 0o644)
    start = {"session_id": "p1", "cwd": str(project), "source": "startup"}
    run_hook("SessionStart", start, env={"CLAUDE_PLUGIN_ROOT": str(project)})
    data = json.loads(path.read_text())
    secret = data["env"][hook_http.SECRET_ENV]
    assert data["model"] == "opus" and oct(path.stat().st_mode & 0o777) == "0o600"
    run_hook("SessionStart", start, env={"CLAUDE_PLUGIN_ROOT": str(project)})
    assert json.loads(path.read_text())["env"][hook_http.SECRET_ENV] == secret
    settings.uninstall()
    assert json.loads(path.read_text()) == {"model": "opus"}


def test_a_retiring_server_hands_its_sessions_and_port_to_a_successor(
    project: Path, http_server: int
) -> None:
    """After MAX_CALLS (or an upgrade) a server serving a live session starts its successor,
    which takes over the port and the session: the session's HTTP hooks go on working."""
    server.stop()
    assert wait_for(lambda: server.ping() is None, 10)
    script = (
        "import sys\n"
        "from memory_tool.runtime import server\n"
        "server.MAX_CALLS = 2\n"
        "sys.exit(server.main())\n"
    )
    env = {
        **os.environ,
        "MEMORY_TOOL_SERVER_SESSION": "live",
        "CLAUDE_PID": str(os.getpid()),  # this test process stands in for Claude Code
    }
    first = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        assert wait_for(lambda: server.ping() is not None, 20)
        for i in range(2):
            assert b"RS256" in post(http_server, "UserPromptSubmit", payload(project, f"r{i}"))[1]
        assert first.wait(timeout=30) == 0  # retired after its two calls
        assert wait_for(lambda: server_pid() not in (None, first.pid), 20)
        status, body = post(http_server, "UserPromptSubmit", payload(project, "live"))
        assert status == 200 and b"RS256" in body
        known = json.loads((paths.state_root() / "run" / "sessions.json").read_text())
        assert known["live"]["pid"] == os.getpid()  # it knows the live session
    finally:
        if first.poll() is None:
            first.kill()


def test_an_upgrade_is_noticed_between_calls_not_while_a_hook_waits(tmp_path: Path) -> None:
    srv = server.Server(str(tmp_path), str(tmp_path / "s.sock"))
    srv.bind()
    try:
        assert srv.sock is not None
        srv.stamp = ()  # as if the package on disk had changed
        srv.stamp_checked = 0.0
        with socket.socket(socket.AF_UNIX) as waiting:
            waiting.connect(srv.path)  # a hook waits to be answered
            assert not srv._upgraded([srv.sock])
        accepted, _ = srv.sock.accept()
        accepted.close()
        assert srv._upgraded([srv.sock])
        srv.stamp_checked = time.monotonic()
        assert not srv._upgraded([srv.sock])  # at most every CODE_CHECK_S
    finally:
        srv.close()


OTHER_PYTHON = "/usr/bin/python3"  # one `nobody` may run (a venv under /root is not)


@pytest.mark.skipif(
    not hasattr(os, "getuid") or os.getuid() != 0 or not os.access(OTHER_PYTHON, os.X_OK),
    reason="needs root to run a process as another user, and a system python3",
)
def test_another_local_user_cannot_read_the_secret_and_gets_403(
    project: Path, http_server: int
) -> None:
    """Run as `nobody`: settings.json (0600) cannot be read, and a request without the secret
    is refused with nothing in the answer."""
    probe = (
        "import http.client, json, sys\n"
        "try:\n"
        f"    open({str(paths.settings_file())!r}).read(); print('READ')\n"
        "except OSError:\n"
        "    print('DENIED')\n"
        f"c = http.client.HTTPConnection('127.0.0.1', {http_server}, timeout=10)\n"
        f"c.request('POST', '/hook/UserPromptSubmit', body={json.dumps(payload(project, 'x'))!r})\n"
        "r = c.getresponse(); print(r.status, r.read().decode())\n"
    )
    os.chmod(paths.settings_file(), 0o600)
    proc = subprocess.run(
        [OTHER_PYTHON, "-S", "-c", probe], user="nobody", capture_output=True, text=True,
        cwd="/", timeout=60,
    )  # fmt: skip
    assert proc.stdout.split("\n")[:2] == ["DENIED", "403 {}"], proc.stdout + proc.stderr


# --- when the HTTP hooks cannot reach the server ----------------------------------------------


def doctor_findings(check: str) -> list[dict[str, object]]:
    cli = [sys.executable, "-c", "from memory_tool.cli.main import main; main()"]
    out = subprocess.run([*cli, "doctor", "--json"], capture_output=True, text=True)
    return [f for f in json.loads(out.stdout)["findings"] if f["check"] == check]


def brief(project: Path, session: str) -> str:
    start = {"session_id": session, "cwd": str(project), "source": "startup"}
    proc = run_hook("SessionStart", start, env={hook_http.SECRET_ENV: SECRET})
    text: str = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    return text


@pytest.fixture
def settings_with_secret(project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("MEMORY_TOOL_NO_BACKGROUND", raising=False)
    monkeypatch.delenv("MEMORY_TOOL_SERVER", raising=False)
    paths.settings_file().parent.mkdir(parents=True, exist_ok=True)
    paths.settings_file().write_text(json.dumps({"env": {hook_http.SECRET_ENV: SECRET}}))
    seed(project)
    yield
    pid = server_pid()
    server.stop()
    if pid is not None and not wait_for(lambda: server_pid() is None, 5):
        os.kill(pid, signal.SIGKILL)


def test_a_port_another_program_holds_is_named_and_taken_once_it_is_free(
    project: Path, settings_with_secret: None
) -> None:
    port = int(os.environ[hook_http.PORT_ENV])
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", port))
    squatter.listen(8)
    try:
        assert server.start() is not None  # it runs: the command hooks still reach it
        why = doctor_findings("hook_server")
        assert len(why) == 1 and "held by another program" in str(why[0]["message"])
        assert f"127.0.0.1:{port}" in str(why[0]["message"])
        line = [ln for ln in brief(project, "b1").splitlines() if "Memory hook server" in ln]
        assert len(line) == 1 and "another program" in line[0]
    finally:
        squatter.close()
    # Freed: the next SessionStart takes the port, and the line and the finding go.
    assert "Memory hook server" not in brief(project, "b2")
    assert doctor_findings("hook_server") == []
    assert b"RS256" in post(port, "UserPromptSubmit", payload(project, "b2"))[1]


def test_a_port_held_by_another_installs_server_says_so(
    project: Path, settings_with_secret: None
) -> None:
    """Another install's server refuses our requests as ours refuse theirs: 403 and `{}`."""
    import threading

    port = int(os.environ[hook_http.PORT_ENV])
    other = socket.socket()
    other.bind(("127.0.0.1", port))
    other.listen(8)

    def answer() -> None:
        while True:
            try:
                conn, _ = other.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                hook_http.send(conn, 403)

    threading.Thread(target=answer, daemon=True).start()
    try:
        assert server.start() is not None
        [finding] = doctor_findings("hook_server")
        assert "another memory-tool install" in str(finding["message"])
    finally:
        other.close()


def test_a_server_on_another_port_than_settings_json_names_is_reported(
    project: Path, settings_with_secret: None
) -> None:
    from machines import free_port

    elsewhere = free_port()  # installed before `server.port` changed
    hooks = {
        "UserPromptSubmit": [{"hooks": [settings.http_handler("UserPromptSubmit", elsewhere, 10)]}]
    }
    data = json.loads(paths.settings_file().read_text())
    paths.settings_file().write_text(json.dumps({**data, "hooks": hooks}))
    assert server.start() is not None
    assert "Memory hook server: settings.json sends HTTP hooks to port" in brief(project, "p1")
    [finding] = doctor_findings("hook_server")
    assert "run `memory-tool install`" in str(finding["message"])


def test_a_session_sending_another_secret_is_reported(
    project: Path, settings_with_secret: None
) -> None:
    assert server.start() is not None
    start = {"session_id": "old", "cwd": str(project), "source": "startup"}
    run_hook("SessionStart", start, env={hook_http.SECRET_ENV: "rotated-" + "y" * 30})
    [finding] = doctor_findings("hook_server")
    assert "another secret" in str(finding["message"])
    brief(project, "new")  # a session with the secret settings.json holds: all is well again
    assert doctor_findings("hook_server") == []
