"""Hook logic for Claude Code. The scripts in ``hooks/`` only call ``run(event)``.

Every hook fails open: on any error it exits 0, prints nothing and appends the error to
``<state>/logs/hooks.log``. Output is one JSON document under Claude Code's 10,000-character
cap: ``hookSpecificOutput`` with ``hookEventName`` for SessionStart and UserPromptSubmit, Claude
Code's own ``{"decision": "block", "reason": ...}`` (or ``systemMessage``) for Stop. The imports
here are the hook path: stdlib, sqlite3 and our light modules only (no click, YAML or tokenizer
unless a memory file changed).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from ..base import paths
from ..base.config import MAX_HOOK_OUTPUT_CHARS
from .client import MAX_STDIN_BYTES

# The hook log is for diagnosis, not history: rotate it at this size.
MAX_LOG_BYTES = 1024 * 1024

Handler = Callable[[dict[str, Any]], dict[str, Any] | None]


def log_error(event: str, exc: BaseException | str) -> None:
    """Append to the hook log; never raises. Every fail-open path comes through here, so this is
    also where a damaged index is set aside for a rebuild (``_set_aside_damaged_index``)."""
    try:
        from ..base.fsutil import ensure_dir

        path = paths.log_file()
        ensure_dir(path.parent)
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, path.with_suffix(".log.1"))
        if isinstance(exc, BaseException):
            import traceback

            detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        else:
            detail = exc + "\n"
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} {event} pid={os.getpid()} {detail}")
    except Exception:  # noqa: BLE001 - logging must never be the thing that breaks a hook
        pass
    if isinstance(exc, BaseException):
        _set_aside_damaged_index(exc)


def _set_aside_damaged_index(exc: BaseException) -> None:
    """Every fail-open path logs here. A plain sqlite3.DatabaseError ("database disk image is
    malformed") means index.db is damaged where opening it did not look (a truncated file):
    move it aside so the next run rebuilds it from the files, instead of failing the same way
    on every prompt and every session end."""
    import sqlite3

    if type(exc) is not sqlite3.DatabaseError:
        return
    try:
        from ..store.index import _quarantine

        _quarantine(paths.index_file())
    except Exception:  # noqa: BLE001 - recovery is best effort; the error is already logged
        pass


def _context(event: str, text: str) -> dict[str, Any] | None:
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def payload_cwd(payload: dict[str, Any]) -> str:
    """The session's working directory: the payload's cwd, else $CLAUDE_PROJECT_DIR, else ours."""
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd and os.path.isdir(cwd):
        return cwd
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    return env if env and os.path.isdir(env) else os.getcwd()


def _open_index() -> Any:
    from ..store.index import open_index

    return open_index()


def spawn_background_refresh() -> None:
    """Start a detached full index refresh, so L3/L4 catch up without the user waiting."""
    if os.environ.get("MEMORY_TOOL_NO_BACKGROUND"):
        return
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "memory_tool.runtime.dispatch", "--background-refresh"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        log_error("background-refresh", exc)


def start_server() -> None:
    """Start the resident hook server for the next prompts (server.py), when allowed."""
    try:
        from .client import ensure_server

        ensure_server()
    except Exception as exc:  # noqa: BLE001
        log_error("server", exc)


def background_refresh() -> int:
    from ..base.fsutil import file_lock

    try:
        with file_lock(paths.state_root() / ".refresh.lock", blocking=False) as got:
            if got:
                idx = _open_index()
                try:
                    idx.refresh()
                    _embed_some(idx)
                finally:
                    idx.close()
    except Exception as exc:  # noqa: BLE001
        log_error("background-refresh", exc)
    return 0


# Entries the detached refresh embeds per run when the semantic extra is in use (~40 ms each on
# a laptop core): memories Claude Code wrote during a session get their vectors by the next one,
# and a large backlog is spread over several runs instead of one long burst.
BACKGROUND_EMBED_MAX = 500


def _embed_some(idx: Any) -> None:
    from ..store import semantic

    if semantic.usable(idx):  # installed, switched on, and `memory-tool index` stored vectors
        semantic.update(idx, limit=BACKGROUND_EMBED_MAX)


def session_start(payload: dict[str, Any]) -> dict[str, Any] | None:
    from ..store.index import FULL_REFRESH_INTERVAL_S

    cwd = payload_cwd(payload)
    source = str(payload.get("source") or "startup")
    resuming = source in ("resume", "compact")
    idx = _open_index()
    try:
        idx.refresh_for_wake(cwd)
        # The brief is a function of the index, the config and the day: cache it so the
        # common start-up needs no ranking, no entry objects and no tokenizer.
        key = None if resuming else _brief_key(idx, cwd)
        text = idx.derived_get(key) if key else None
        if text is None:
            from ..recall.wake import build_brief

            extra = _resume_units(idx, payload, cwd, source) if resuming else []
            extra += _hygiene_units(idx, cwd)
            text = build_brief(idx, cwd, extra=extra).text
            if key:
                idx.derived_put(key, text)
        last = int(idx.meta("last_full_refresh", "0") or 0)
    finally:
        idx.close()
    from ..recall.seen import forget_old_sessions, ids_in, remember_ids

    session_id = payload.get("session_id")
    if isinstance(session_id, str):
        remember_ids(session_id, ids_in(text))  # L3 will not repeat what the brief holds
    if time.time() - last > FULL_REFRESH_INTERVAL_S:
        forget_old_sessions()
        spawn_background_refresh()
    start_server()  # warm for the session's first prompt
    return _context("SessionStart", text)


def _brief_key(idx: Any, cwd: str) -> str:
    from ..base.config import config_path, today
    from ..store.rooms import instincts_files, rooms_yaml

    project = paths.project_key(cwd)
    # config.yaml, and what the hygiene line checks beside the index: the project's MEMORY.md,
    # rooms.yaml and the instincts file (a broken one is named there).
    memory_md = paths.projects_dir() / project / "memory" / "MEMORY.md"
    stamps = []
    for path in (config_path(), memory_md, rooms_yaml(), *instincts_files()):
        try:
            st = os.stat(path)
            stamps.append(f"{st.st_mtime_ns}:{st.st_size}")
        except OSError:
            stamps.append("-")
    return f"brief|{project}|{today().isoformat()}|{idx.generation}|{'|'.join(stamps)}"


def _hygiene_units(idx: Any, cwd: str) -> list[Any]:
    """One line when memory needs attention (hygiene package); nothing otherwise."""
    try:
        from ..hygiene.wake_line import wake_units
    except ImportError:
        return []
    units: list[Any] = wake_units(idx, cwd)
    return units


def _resume_units(idx: Any, payload: dict[str, Any], cwd: str, source: str) -> list[Any]:
    """On resume or after compaction the session's hot state comes back (tiers module)."""
    try:
        from ..tiers.inject import resume_units
    except ImportError:
        return []
    units: list[Any] = resume_units(idx, payload, cwd, source)
    return units


HANDLERS: dict[str, Handler] = {"SessionStart": session_start}


def register(event: str, handler: Handler) -> None:
    HANDLERS[event] = handler


# Where each event's handler lives: a hook imports only its own event's module.
HANDLER_MODULES = {
    "UserPromptSubmit": "memory_tool.runtime.prompt_submit",
    "Stop": "memory_tool.runtime.stop",
    "SessionEnd": "memory_tool.runtime.stop",
}


def _load_handler(event: str) -> Handler | None:
    module = HANDLER_MODULES.get(event)
    if module is not None and event not in HANDLERS:
        __import__(module)  # registers its handlers
    return HANDLERS.get(event)


def run(event: str, stdin: IO[bytes] | None = None, stdout: IO[str] | None = None) -> int:
    """Entry point of every hook script. Always returns 0."""
    out = stdout or sys.stdout
    if os.environ.get("MEMORY_TOOL_NESTED"):  # a `claude -p` we started ourselves: stay out
        return 0
    from ..base import config

    # A hook says nothing on stderr: problems go to the log (restored after, for a process
    # that runs a hook in-process and is a CLI too).
    said, config.STDERR_NOTES = config.STDERR_NOTES, False
    try:
        raw = (stdin or sys.stdin.buffer).read(MAX_STDIN_BYTES + 1)
        if len(raw) > MAX_STDIN_BYTES:
            log_error(event, f"stdin over {MAX_STDIN_BYTES} bytes: ignored")
            return 0
        try:
            payload = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError as exc:
            log_error(event, f"stdin is not JSON ({exc}): ignored")
            return 0
        if not isinstance(payload, dict):
            log_error(event, "stdin JSON is not an object: ignored")
            return 0
        handler = _load_handler(event)
        if handler is None:
            return 0
        result = handler(payload)
        if result is None:
            return 0
        text = json.dumps(result, ensure_ascii=False)
        if len(text) > MAX_HOOK_OUTPUT_CHARS:
            log_error(event, f"output of {len(text)} characters over the cap: dropped")
            return 0
        out.write(text + "\n")
        out.flush()
    except BaseException as exc:  # noqa: BLE001 - fail open, whatever happened
        log_error(event, exc)
    finally:
        config.STDERR_NOTES = said
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--background-refresh"]:
        return background_refresh()
    return run(args[0]) if args else 0


if __name__ == "__main__":
    sys.exit(main())
