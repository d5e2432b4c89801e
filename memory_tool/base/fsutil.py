"""Small file-system helpers: private permissions, atomic writes, exclusive creation, locks, and
reading a user's JSON config file."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .errors import SettingsError

# Memory can hold personal facts: files are readable by their owner only.
FILE_MODE = 0o600
DIR_MODE = 0o700


def ensure_dir(path: Path) -> Path:
    """``path`` and every missing parent, each created owner-only: ``mkdir(parents=True)``
    gives the parents the umask's mode (0755), e.g. ``cold/`` when ``cold/<project>`` is made."""
    missing = []
    here = path
    while not here.is_dir() and here != here.parent:
        missing.append(here)
        here = here.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise
    return path


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new private temp file next to ``path`` (same file system, so a rename is atomic).
    Not ``tempfile.mkstemp``: importing tempfile costs a hook several milliseconds."""
    for attempt in range(100):
        tmp = f"{path.parent}/.{path.name}.{os.getpid()}.{time.monotonic_ns()}.{attempt}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temp name beside {path}")


def atomic_write_text(path: Path, text: str, mode: int = FILE_MODE) -> None:
    """Write via a temp file and rename, so a reader never sees half a file. Our own files are
    owner-only; ``mode`` keeps the mode of a file that is someone else's (settings.json)."""
    ensure_dir(path.parent)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_json_object(path: Path, fix: str) -> tuple[str | None, dict[str, Any]]:
    """The JSON object in one of Claude Code's config files (settings.json, ~/.claude.json) and
    the file's text, exactly as it is (None: no such file; an empty file is an empty object).
    A file we cannot use raises SettingsError saying nothing was changed; ``fix`` tells the user
    what to do about JSON that does not parse."""
    import json

    try:
        text = path.read_bytes().decode("utf-8")  # no newline translation: backups stay exact
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from exc
    if not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc}); {fix}") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path} must hold a JSON object; nothing was changed.")
    return text, data


def atomic_write_bytes(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """``atomic_write_text`` for exact bytes, created with ``mode`` (never wider than 0600)."""
    ensure_dir(path.parent)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode & FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def create_exclusive(path: Path, text: str) -> bool:
    """Create ``path`` with ``text`` only if it does not exist; True when we created it.

    The content is written to a temp file first and hard-linked into place, so the file appears
    complete or not at all, and two writers can never both claim the same name.
    """
    ensure_dir(path.parent)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, FILE_MODE)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


@contextlib.contextmanager
def file_lock(lock_path: Path, blocking: bool = True) -> Iterator[bool]:
    """An advisory lock shared by memory-tool processes; yields False when busy and not blocking."""
    ensure_dir(lock_path.parent)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def append_line_locked(path: Path, line: str) -> None:
    """Append one line under an exclusive lock: concurrent writers never lose each other's line."""
    ensure_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            data = line if line.endswith("\n") else line + "\n"
            # Make sure we start on a fresh line even if the file lacks a final newline.
            size = os.fstat(fd).st_size
            if size:
                with open(path, "rb") as fh:
                    fh.seek(size - 1)
                    if fh.read(1) != b"\n":
                        data = "\n" + data
            os.write(fd, data.encode("utf-8"))
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def rewrite_locked(path: Path, transform: Callable[[str], str]) -> bool:
    """Rewrite a text file in place under the lock ``append_line_locked`` takes, so a line
    appended meanwhile is never lost (a rename would leave a waiting appender writing to the
    old file). True when the text changed; a missing file is left missing."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            with os.fdopen(os.dup(fd), "r+", encoding="utf-8", newline="") as fh:
                old = fh.read()
                new = transform(old)
                if new == old:
                    return False
                fh.seek(0)
                fh.write(new)
                fh.truncate()
                fh.flush()
                return True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
