"""Each hook event is answered once, however many installs of memory-tool hear it.

Installed both as the Claude Code plugin and in settings.json, Claude Code runs both hook commands
for every event, in parallel, with the same bytes on stdin. The first to claim the event answers
it; the other exits at once and prints nothing. A claim is a file named by Claude Code's process
id (``CLAUDE_PID``, in every hook's environment), the event and a checksum of the payload: twins
share all three, another Claude Code process never does. A claim older than ``CLAIM_WINDOW_S``
was made for an earlier event with the same payload (a second ``/compact`` of a session), so it
is taken over. Outside Claude Code (no ``CLAUDE_PID``: a test, a script) nothing is claimed.

Every failure means "answer it": a claim that cannot be made must never silence memory. Like the
client, this module is on every hook's path and imports only what it uses, when it uses it.
"""

import os

# Claude Code starts both twins at once; the later one claims within a few hundred milliseconds
# even on a loaded machine. The same payload again (a later /compact of the same session) comes
# minutes later, never within seconds.
CLAIM_WINDOW_S = 10.0
# Below this the payload is checksummed as one integer (a 5 MB paste would take ~80 ms that way;
# zlib's crc32 takes a few).
SMALL_PAYLOAD_BYTES = 8192
MERSENNE_61 = (1 << 61) - 1
# Claims are a few bytes each, one per event; SessionEnd sweeps those older than a day.
PRUNE_AFTER_S = 24 * 3600


def claims_dir(state_root: str) -> str:
    return os.path.join(state_root, "run", "claims")


def checksum(stdin: bytes) -> int:
    """The same number for the same bytes in every process (``hash()`` is salted per process).
    A payload is a few hundred bytes: as one integer modulo a Mersenne prime it costs
    microseconds and no import; zlib (an extension module to load) only for a large prompt."""
    if len(stdin) <= SMALL_PAYLOAD_BYTES:
        return int.from_bytes(stdin, "little") % MERSENNE_61
    import zlib

    return zlib.crc32(stdin)


def claim_path(event: str, stdin: bytes, state_root: str, pid: str) -> str:
    name = f"{pid}-{event}-{checksum(stdin):x}-{len(stdin)}"
    return os.path.join(claims_dir(state_root), name)


def claim(event: str, stdin: bytes, state_root: str) -> bool:
    """True when this process answers ``event``: it made the claim, or none was needed."""
    pid = os.environ.get("CLAUDE_PID", "")
    if not pid.isdigit() or not event.isalnum():
        return True
    path = claim_path(event, stdin, state_root, pid)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        try:
            fd = os.open(path, flags, 0o600)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            fd = os.open(path, flags, 0o600)
        os.close(fd)
        return True
    except FileExistsError:
        return _take_over_if_stale(path)
    except OSError:
        return True
    finally:
        if event == "SessionEnd":
            prune(state_root)


def _take_over_if_stale(path: str) -> bool:
    """Someone claimed this payload before: a twin (recent: it answers) or an earlier event
    with the same payload (stale: this one answers). Decided under a lock, so that two twins
    of a later event cannot both take over the stale claim."""
    import fcntl
    import time

    try:
        lock = os.open(os.path.join(os.path.dirname(path), ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return True
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if time.time() - os.stat(path).st_mtime < CLAIM_WINDOW_S:
            return False
        os.utime(path)
        return True
    except OSError:
        return True
    finally:
        os.close(lock)


def prune(state_root: str, older_than_s: float = PRUNE_AFTER_S) -> int:
    """Delete claims older than ``older_than_s``; how many went. Never raises."""
    import time

    folder = claims_dir(state_root)
    cutoff = time.time() - older_than_s
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        if name.startswith("."):
            continue
        path = os.path.join(folder, name)
        try:
            if os.stat(path).st_mtime < cutoff:
                os.unlink(path)
                removed += 1
        except OSError:
            continue
    return removed
