"""The resident hook server: same answers as in-process, and never a reason for a hook to fail."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers import REPO, run_hook, start_payload, write_memory

from memory_tool.base import paths
from memory_tool.runtime import client, server
from memory_tool.store.index import open_index

CLI = [sys.executable, "-c", "from memory_tool.cli.main import main; main()"]
PROMPT = "the oauth login flow is broken, refresh tokens expire"


def seed(project: Path) -> None:
    rooms = paths.state_root() / "rooms"
    write_memory(rooms / "authentication", "jwt.md", "Login tokens are JWTs signed with RS256.")
    write_memory(rooms / "authentication", "oauth.md", "The OAuth callback checks the state.")
    write_memory(rooms / "database", "pool.md", "Postgres pool size is 20 per worker.")
    with open_index() as idx:
        idx.refresh(project)


def payload(project: Path, session: str, prompt: str = PROMPT) -> dict[str, str]:
    return {"session_id": session, "cwd": str(project), "prompt": prompt}


def wait_for(predicate: object, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def server_pid() -> int | None:
    line = server.ping()
    if line is None:
        return None
    return int(line.split()[0].removeprefix("pid="))


@pytest.fixture
def allow_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Hooks may start a server here; whatever runs at the end is stopped (then killed)."""
    monkeypatch.delenv("MEMORY_TOOL_NO_BACKGROUND", raising=False)
    monkeypatch.delenv("MEMORY_TOOL_SERVER", raising=False)
    yield
    pid = server_pid()
    server.stop()
    if pid is not None and wait_for(lambda: server_pid() is None, 5) is False:
        os.kill(pid, signal.SIGKILL)


def calls() -> int:
    line = server.ping()
    assert line is not None, "no server answers"
    return int(line.split()[1].removeprefix("calls="))


def test_the_client_finds_the_state_root_as_paths_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert client.state_root() == str(paths.state_root())
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert client.state_root() == str(paths.state_root())
    monkeypatch.setenv("MEMORY_TOOL_HOME", str(tmp_path / "state"))
    assert client.state_root() == str(paths.state_root())


def test_a_socket_path_too_long_for_unix_sockets_moves_to_a_private_folder(tmp_path: Path) -> None:
    short = client.socket_path("/s")
    assert short == "/s/run/hooks.sock"
    deep = "/x" * 80
    long = client.socket_path(deep)
    assert len(long.encode()) <= client.MAX_SOCKET_PATH
    assert f"memory-tool-{os.getuid()}" in long
    assert long == client.socket_path(deep)  # stable across processes: not hash()
    assert long != client.socket_path(deep + "y")


def test_server_answers_byte_for_byte_as_the_hook_does_in_process(
    project: Path, allow_server: None
) -> None:
    seed(project)
    alone = run_hook("UserPromptSubmit", payload(project, "a"), env={"MEMORY_TOOL_SERVER": "0"})
    assert b"RS256" in alone.stdout
    assert server.start() is not None
    before = calls()
    served = run_hook("UserPromptSubmit", payload(project, "b"))
    assert calls() == before + 1  # it really went through the server
    assert served.returncode == 0 and served.stdout == alone.stdout
    assert served.stderr == b""


def test_the_server_recalls_a_memory_written_between_two_prompts(
    project: Path, allow_server: None
) -> None:
    """The server keeps its index connection and the room's rows between calls: a memory
    written (and indexed by another process) after its first prompt is in its next answer,
    exactly as in-process."""
    seed(project)
    assert server.start() is not None
    first = run_hook("UserPromptSubmit", payload(project, "a"))
    assert b"RS256" in first.stdout and b"rotate hourly" not in first.stdout
    auth = paths.state_root() / "rooms" / "authentication"
    write_memory(auth, "rotate.md", "Refresh tokens rotate hourly.")
    subprocess.run([*CLI, "index", "--cwd", str(project)], check=True, capture_output=True)
    served = run_hook("UserPromptSubmit", payload(project, "b"))
    alone = run_hook("UserPromptSubmit", payload(project, "c"), env={"MEMORY_TOOL_SERVER": "0"})
    assert b"rotate hourly" in served.stdout
    assert served.stdout == alone.stdout
    assert calls() == 2


def test_a_prompt_without_a_server_runs_in_process_and_starts_one(
    project: Path, allow_server: None
) -> None:
    seed(project)
    assert server.ping() is None
    first = run_hook("UserPromptSubmit", payload(project, "a"))
    assert b"RS256" in first.stdout  # answered in-process: nothing was waited for
    assert wait_for(lambda: server.ping() is not None)
    second = run_hook("UserPromptSubmit", payload(project, "b"))
    assert second.stdout == first.stdout and calls() == 1


def test_the_server_lets_the_tokenizer_go_after_a_call_that_needed_it(
    project: Path, allow_server: None
) -> None:
    """The tokenizer holds ~50 MB the steady prompt path never needs (counts are cached): a call
    that had to load it is answered, then the server drops it and stays small."""
    import sqlite3

    seed(project)
    run_hook("UserPromptSubmit", payload(project, "warm"), env={"MEMORY_TOOL_SERVER": "0"})
    assert server.start() is not None
    assert b"RS256" in run_hook("UserPromptSubmit", payload(project, "a")).stdout
    small = float(server.ping().split("rss_mb=")[1])  # type: ignore[union-attr]
    with sqlite3.connect(paths.index_file()) as db:
        db.execute("DELETE FROM token_cache")  # every line must be counted again
    loaded = run_hook("UserPromptSubmit", payload(project, "b"))
    assert b"RS256" in loaded.stdout and calls() == 2
    after = float(server.ping().split("rss_mb=")[1])  # type: ignore[union-attr]
    assert after < small + 20, (small, after)  # the tokenizer alone is ~50 MB


def test_session_start_warms_a_server_for_the_first_prompt(
    project: Path, allow_server: None
) -> None:
    seed(project)
    run_hook("SessionStart", start_payload(project))
    # Listening when SessionStart returns: `claude -p` sends its one prompt over HTTP right
    # after it, and a server still starting refused it (a scripted week's first prompt).
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(client.socket_path())
    finally:
        sock.close()
    assert wait_for(lambda: server.ping() is not None)
    # The readiness probe's empty connection is no error of the server's.
    log = paths.log_file()
    assert not log.exists() or "server" not in log.read_text(), log.read_text()


def test_no_server_is_started_when_switched_off(
    project: Path, allow_server: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(project)
    (paths.state_root() / "config.yaml").write_text("server:\n  enabled: false\n")
    run_hook("SessionStart", start_payload(project))
    run_hook("UserPromptSubmit", payload(project, "a"))
    monkeypatch.setenv("MEMORY_TOOL_SERVER", "0")
    (paths.state_root() / "config.yaml").unlink()
    run_hook("UserPromptSubmit", payload(project, "b"))
    time.sleep(1.0)
    monkeypatch.delenv("MEMORY_TOOL_SERVER")
    assert server.ping() is None


def test_each_call_runs_with_its_callers_environment(project: Path, allow_server: None) -> None:
    seed(project)
    assert server.start() is not None
    nested = run_hook("UserPromptSubmit", payload(project, "a"), env={"MEMORY_TOOL_NESTED": "1"})
    assert nested.stdout == b""  # a `claude -p` of ours: the hook stays out
    plain = run_hook("UserPromptSubmit", payload(project, "b"))
    assert b"RS256" in plain.stdout and calls() == 2


def test_a_stale_socket_file_costs_nothing(project: Path, allow_server: None) -> None:
    seed(project)
    path = client.socket_path()
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(path)  # bound, never listening: connections are refused
    dead.close()
    out = run_hook("UserPromptSubmit", payload(project, "a"))
    assert b"RS256" in out.stdout
    assert wait_for(lambda: server.ping() is not None)  # the new server took the path over


def test_a_server_that_never_answers_delays_but_does_not_break_the_hook(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(project)
    monkeypatch.delenv("MEMORY_TOOL_SERVER", raising=False)
    path = client.socket_path()
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    mute = socket.socket(socket.AF_UNIX)
    mute.bind(path)
    mute.listen(4)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept_and_hang() -> None:
        mute.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(mute.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept_and_hang)
    thread.start()
    try:
        t = time.monotonic()
        out = run_hook("UserPromptSubmit", payload(project, "a"))
        took = time.monotonic() - t
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        mute.close()
    assert out.returncode == 0 and b"RS256" in out.stdout
    assert client.TIMEOUT_S <= took < client.TIMEOUT_S + 20


def test_garbage_on_the_socket_is_refused_and_the_server_goes_on(
    project: Path, allow_server: None
) -> None:
    seed(project)
    assert server.start() is not None
    for junk in (
        b"hello\n",
        b"MT2 x 1 2\n",
        b"MT2 UserPromptSubmit 1 5 5 999999999999\n",
        b"MT1 UserPromptSubmit 0 0 2\n{}",  # an older protocol
        b"\xff" * 5000,
    ):
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(client.socket_path())
            s.sendall(junk)
            s.shutdown(socket.SHUT_WR)
            assert s.recv(100).startswith(b"ERROR")
    assert b"RS256" in run_hook("UserPromptSubmit", payload(project, "a")).stdout
    assert calls() == 1


def test_concurrent_prompts_all_get_their_answer(project: Path, allow_server: None) -> None:
    seed(project)
    expected = run_hook("UserPromptSubmit", payload(project, "x"), env={"MEMORY_TOOL_SERVER": "0"})
    assert server.start() is not None
    with ThreadPoolExecutor(8) as pool:
        outs = list(
            pool.map(lambda i: run_hook("UserPromptSubmit", payload(project, f"p{i}")), range(16))
        )
    assert all(o.returncode == 0 and o.stdout == expected.stdout for o in outs)
    assert calls() == 16


def test_an_idle_server_exits_and_removes_its_socket(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*CLI, "server", "run", "--idle-exit", "0.5"], capture_output=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert not os.path.exists(client.socket_path())
    # In the foreground it says where it serves and that it stopped (it printed nothing).
    out = proc.stdout.decode()
    assert f"serving on {client.socket_path()}" in out and out.rstrip().endswith("stopped")


def test_a_second_server_of_the_same_root_leaves_at_once(allow_server: None) -> None:
    assert server.start() is not None
    pid = server_pid()
    t = time.monotonic()
    assert server.main(idle_exit_s=30) == 0  # the lock is held: returns without serving
    assert time.monotonic() - t < 5
    assert server_pid() == pid


def answer_once(srv: server.Server, pkg: bytes) -> tuple[bytes, bool]:
    """One UserPromptSubmit request from a client of package folder ``pkg``, answered by
    ``srv`` in a thread: (the reply, whether the server goes on)."""
    answered: list[bool] = []
    assert srv.sock is not None
    listening = srv.sock

    def serve_one() -> None:
        answered.append(srv._answer(listening.accept()[0], {}))

    thread = threading.Thread(target=serve_one)
    thread.start()
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(srv.path)
        s.sendall(b"MT2 UserPromptSubmit %d 0 0 2\n%s{}" % (len(pkg), pkg))
        s.shutdown(socket.SHUT_WR)
        reply = s.recv(100)
    thread.join()
    return reply, answered[0]


def test_a_server_whose_code_changed_retires(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sock")
    srv = server.Server(str(tmp_path), path)
    srv.bind()
    srv.stamp = ()  # as if the package on disk were no longer the one it imported
    reply, goes_on = answer_once(srv, client.PACKAGE_DIR)
    srv.close()
    assert reply == b"RETRY\n" and goes_on is False
    assert not os.path.exists(path)


def test_a_hook_of_another_install_is_not_answered_with_this_ones_code(tmp_path: Path) -> None:
    srv = server.Server(str(tmp_path), str(tmp_path / "s.sock"))
    srv.bind()
    reply, goes_on = answer_once(srv, b"/elsewhere/site-packages/memory_tool")
    srv.close()
    assert reply == b"RETRY\n" and goes_on is False


def test_a_call_stuck_past_the_limit_ends_the_server(tmp_path: Path) -> None:
    """SIGALRM ends a server stuck in one call, so later prompts start a fresh one instead of
    each waiting out the client's timeout behind it."""
    script = (
        "import sys, time\n"
        "from memory_tool.runtime import dispatch, server\n"
        "server.CALL_LIMIT_S = 1\n"
        "dispatch.register('Hang', lambda event: time.sleep(60))\n"
        "sys.exit(server.main())\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        assert wait_for(lambda: server.ping() is not None)
        t = time.monotonic()
        status, _ = client.request("Hang", b"{}", timeout=30)
        assert status == client.FAILED  # the connection died with the server
        assert proc.wait(timeout=30) == -signal.SIGALRM
        assert time.monotonic() - t < 10
    finally:
        if proc.poll() is None:
            proc.kill()


def test_install_stops_a_running_server_so_new_code_answers(allow_server: None) -> None:
    assert server.start() is not None
    proc = subprocess.run([*CLI, "install"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "stopped the running hook server" in proc.stdout
    assert server.ping() is None


def test_uninstall_stops_the_server(allow_server: None) -> None:
    assert server.start() is not None
    proc = subprocess.run([*CLI, "uninstall"], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert server.ping() is None


def test_the_client_imports_nothing_heavy() -> None:
    """The point of the client: a routed hook pays for os, sys and _socket, nothing else."""
    code = (
        "import os, sys; before = set(sys.modules); import memory_tool.runtime.client; "
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert set(proc.stdout.split()) == {
        "memory_tool",
        "memory_tool.runtime",
        "memory_tool.runtime.client",
    }


def test_status_and_stop_from_the_cli(allow_server: None) -> None:
    cli = [*CLI, "server"]
    assert subprocess.run([*cli, "status"], capture_output=True).returncode == 1
    started = subprocess.run([*cli, "start"], capture_output=True, text=True)
    assert started.returncode == 0 and "pid=" in started.stdout
    status = subprocess.run([*cli, "status"], capture_output=True, text=True)
    assert status.returncode == 0 and json.dumps(client.socket_path())[1:-1] in status.stdout
    stopped = subprocess.run([*cli, "stop"], capture_output=True, text=True)
    assert "stopped" in stopped.stdout and server.ping() is None


def test_each_call_gets_its_callers_time_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TZ", raising=False)
    time.tzset()
    home = time.timezone
    env = dict(os.environ)
    cwd = os.getcwd()
    try:
        server.handle("NoSuchEvent", b"/", {**env, "TZ": "Etc/GMT+5"}, b"{}")
        assert time.timezone == 5 * 3600
        server.handle("NoSuchEvent", b"/", env, b"{}")
        assert time.timezone == home
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        time.tzset()
