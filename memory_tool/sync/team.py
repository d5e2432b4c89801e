"""Team palaces: a shared palace (rooms and wiki) cloned from a git remote into
``<state>/teams/<name>/``, recalled with your own rooms and labelled with the team's name.

The clone is the team palace itself (no copying): ``memory-tool add --team`` writes into it and
publishes (commit, pull, push); ``team sync`` pulls what teammates pushed. Who may read or write
is the git server's business (keys, repository permissions), not ours.
"""

from __future__ import annotations

import glob
import json
import random
import re
import shutil
import time
from pathlib import Path
from typing import Any

from ..base.config import today
from ..base.errors import SyncError
from ..base.fsutil import atomic_write_bytes, atomic_write_text
from ..base.record import field, record
from ..store import tree
from . import layout, state
from .merge import onto_local
from .repo import (
    Conflict,
    Repo,
    blob_sha,
    commit_message,
    conflict_copy_name,
    free_name,
    redact_url,
)

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,40}$")
MAX_PUSH_ATTEMPTS = 6
PUSH_RETRY_PAUSE_S = (0.05, 0.5)
# What a new team palace starts with, so the remote's first commit explains itself.
README = """# Team memory palace (memory-tool)

Shared memories of this team, one Markdown file each, as `memory-tool` writes them:

- `rooms/<room>/*.md`: memories by topic, recalled when a member's prompt is about that room;
- `wiki/*.md`: decisions, conventions and gotchas, found by deep search.

A memory with `always: true` in its frontmatter is loaded at every member's session start (it
counts against their 15-entry always-load cap). Members join with
`memory-tool team add NAME URL` and write with `memory-tool add --team NAME --room ROOM TEXT`.
Who may read or write is decided by this repository's permissions.
"""


@record
class TeamReport:
    name: str
    committed: bool = False
    pushed: bool = False
    received: int = 0  # files changed by what was pulled
    conflicts: list[Conflict] = field(default_factory=list)
    redacted: list[tuple[str, str]] = field(default_factory=list)
    remote: str = ""


def check_name(name: str) -> str:
    if not NAME_RE.match(name):
        raise SyncError(
            f"{name!r} is not a team name: use lower-case letters, digits, '-' and '_' "
            "(at most 41 characters), e.g. `platform`."
        )
    return name


def team_dir(name: str) -> Path:
    return tree.teams_root() / check_name(name)


def team_repo(name: str, *, interactive: bool = True) -> Repo:
    return Repo(team_dir(name), interactive=interactive)


def record_name(name: str) -> str:
    return f"team-{name}"


def names() -> list[str]:
    """The teams joined on this machine (each a clone under ``<state>/teams/``)."""
    return [n for n in tree.team_names() if (tree.teams_root() / n / ".git").exists()]


def add(name: str, url: str) -> TeamReport:
    """Clone the team's palace. An empty remote is given its layout (a README, ``rooms/``,
    ``wiki/``) and pushed, so the next member clones something that explains itself."""
    r = team_repo(name)
    if r.exists():
        current = r.remote_url()
        if current == url:
            return sync_team(name)
        raise SyncError(
            f"team {name!r} is already here, from {redact_url(current)}: pick another name, or "
            f"`memory-tool team remove {name}` first."
        )
    if r.path.exists():
        raise SyncError(f"{r.path} exists but is no clone: move it away, then add the team again.")
    with state.locked(record_name(name)):
        r.clone(url)
        report = TeamReport(name, remote=redact_url(url))
        if r.remote_head() is None:  # an empty remote: give it the layout
            for folder in ("rooms", "wiki"):
                (r.path / folder).mkdir(mode=0o700, exist_ok=True)
            atomic_write_text(r.path / "README.md", README)
            r.stage_all()
            if r.commit_staged(commit_message(f"team {name}: start the palace")):
                report.committed = True
                report.pushed = _push(r, report)
        for folder in ("rooms", "wiki"):
            (r.path / folder).mkdir(mode=0o700, exist_ok=True)
        state.finish(record_name(name), True, f"joined from {redact_url(url)}")
    _refresh_index()
    return report


def sync_team(name: str, *, interactive: bool = True, pull_only: bool = False) -> TeamReport:
    """Commit what changed in the team palace here (redacted first), pull, merge, push."""
    r = team_repo(name, interactive=interactive)
    if not r.exists():
        raise SyncError(
            f"no team {name!r} here: `memory-tool team add {name} REMOTE` joins it "
            "(`memory-tool team list` shows the teams you have)."
        )
    report = TeamReport(name, remote=redact_url(r.remote_url()))
    with state.locked(record_name(name)):
        try:
            _sync(r, report, pull_only)
        except Exception as exc:
            message = str(exc) if isinstance(exc, SyncError) else f"{type(exc).__name__}: {exc}"
            state.finish(record_name(name), False, message, redacted=report.redacted)
            raise
        state.finish(record_name(name), True, summary(report), redacted=report.redacted)
    if report.received:
        _refresh_index()
    return report


def _sync(r: Repo, report: TeamReport, pull_only: bool) -> None:
    r.clear_leftovers()
    _put_back(r, report)  # a run stopped midway: local text set aside goes back first
    if pull_only:
        r.fetch()
        if not r.ahead_behind()[1]:
            return
    r.stage_all()
    report.redacted, _ = layout.guard_staged(r, stage_redacted=True)
    report.committed = r.commit_staged(commit_message(f"team {report.name}: memories"))
    _set_aside(r, report.name)
    try:
        report.pushed = _push(r, report)
    finally:
        _put_back(r, report)


# --- text that never travels ------------------------------------------------------------------
# A file of the team palace is the person's own file: a secret or ``<private>`` text in it stays
# in it, and only its redacted version is committed. Git merges need a tree that matches what
# is committed, so while one runs those files hold their committed (redacted) version and their
# text waits in a file of this machine's sync folder; afterwards what the merge brought is
# merged onto that text (``merge.onto_local``), or kept beside it when it touched those lines.
def _stash_path(name: str) -> Path:
    return state.sync_dir() / f"{record_name(name)}.local.json"


def local_only(r: Repo) -> dict[str, bytes]:
    """Tracked files whose text differs from what is committed only by what never travels."""
    if r.head() is None:
        return {}
    out = r.run("diff", "--name-only", "-z", "--no-renames", "HEAD", "--").out
    found: dict[str, bytes] = {}
    for rel in (p for p in out.split("\0") if p):
        try:
            data = (r.path / rel).read_bytes()
        except OSError:
            continue
        sent = layout.outgoing(data).data
        committed = r.run("rev-parse", "--verify", "--quiet", f"HEAD:{rel}", check=False)
        if sent is not None and sent != data and blob_sha(sent) == committed.out.strip():
            found[rel] = data
    return found


def _set_aside(r: Repo, name: str) -> None:
    files = local_only(r)
    if not files:
        return
    # Saved before any file changes: a run killed from here on is put right by the next one.
    stash = {rel: data.decode("utf-8") for rel, data in files.items()}
    atomic_write_text(_stash_path(name), json.dumps(stash))
    for rel, data in files.items():
        sent = layout.outgoing(data).data
        if sent is not None:
            atomic_write_bytes(r.path / rel, sent)


def _own_copy(path: Path, mine: bytes) -> Path | None:
    """A conflict copy of ``path`` that holds exactly what ``mine`` sends."""
    sent = layout.outgoing(mine).data
    for copy in sorted(path.parent.glob(f"{glob.escape(path.stem)}{tree.CONFLICT_MARK}*")):
        try:
            if copy.read_bytes() == sent:
                return copy
        except OSError:
            continue
    return None


def _holding(root: Path, gone: str, sent: bytes | None, stashed: set[str]) -> Path | None:
    """The file beside ``gone`` (the one it is a conflict copy of, or one of its copies) that
    now holds exactly ``sent``: where a version moved."""
    path = root / gone
    name = path.name
    stem = name.partition(tree.CONFLICT_MARK)[0] if tree.is_conflict_copy(name) else path.stem
    for other in sorted(path.parent.glob(f"{glob.escape(stem)}*")):
        try:
            if other.relative_to(root).as_posix() not in stashed and other.read_bytes() == sent:
                return other
        except OSError:
            continue
    return None


def _put_back(r: Repo, report: TeamReport) -> None:
    path = _stash_path(report.name)
    try:
        stash = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    day = today().isoformat()
    remote = r.remote_head() or "HEAD"
    for rel, text in stash.items() if isinstance(stash, dict) else ():
        mine = str(text).encode("utf-8")
        try:
            current = (r.path / rel).read_bytes()
        except OSError:
            # Deleted by a teammate: gone everywhere, unless its version moved to another file
            # (`sync resolve --keep theirs` there): then this text goes with it.
            moved = _holding(r.path, rel, layout.outgoing(mine).data, set(stash))
            if moved is not None:
                atomic_write_bytes(moved, mine)
            continue
        if current == mine:
            continue
        merged = onto_local(mine, current)
        if merged is not None:
            atomic_write_bytes(r.path / rel, merged)
            continue
        own = _own_copy(r.path / rel, mine)
        if own is not None:
            # A teammate kept this version beside theirs (see personal._Pull): so
            # does this machine, with the file's own text in the copy, or each sync would send
            # it back over theirs.
            atomic_write_bytes(own, mine)
            continue
        copy = free_name(r.path, conflict_copy_name(rel, r.author_machine(remote, rel), day))
        atomic_write_bytes(r.path / copy, current)
        atomic_write_bytes(r.path / rel, mine)
        report.conflicts.append(Conflict(rel, "both", copy))
    path.unlink(missing_ok=True)


def _push(r: Repo, report: TeamReport) -> bool:
    day = today().isoformat()

    def copy_name(path: str, who: str) -> str:
        return conflict_copy_name(path, who, day)

    for attempt in range(MAX_PUSH_ATTEMPTS):
        r.fetch()
        before = r.head()
        report.conflicts += r.merge_remote(copy_name)
        after = r.head()
        if after != before and after is not None:
            report.received += len(r.changed_paths(before, after))
        if r.ahead_behind()[0] == 0:
            return False
        if r.push() == "ok":
            return True
        time.sleep(random.uniform(*PUSH_RETRY_PAUSE_S) * (attempt + 1))
    raise SyncError(
        f"the team's remote refused the push {MAX_PUSH_ATTEMPTS} times (teammates kept "
        "pushing): your memories are committed here and go out with the next team sync."
    )


def publish(name: str) -> TeamReport:
    """After writing a memory into the team palace: send it now."""
    return sync_team(name)


def remove(name: str, *, force: bool = False) -> Path:
    """Leave a team on this machine (its clone is deleted; the remote is untouched). Refused
    while memories written here were not pushed yet, unless ``force``."""
    r = team_repo(name)
    if not r.exists():
        raise SyncError(f"no team {name!r} here (`memory-tool team list` shows them).")
    if not force:
        with state.locked(record_name(name)):
            listed = r.run("status", "--porcelain", "-z", check=False).out.split("\0")
            kept = local_only(r)  # redacted when sent: nothing of them is unsent
            dirty = [item for item in listed if item and item[3:] not in kept]
            ahead = r.ahead_behind()[0]
        if dirty or ahead:
            raise SyncError(
                f"team {name!r} has memories written here that are not pushed yet: "
                f"`memory-tool team sync {name}` first, or `--force` to drop them."
            )
    shutil.rmtree(r.path)
    state.record_path(record_name(name)).unlink(missing_ok=True)
    _refresh_index()
    return r.path


def listing() -> list[dict[str, Any]]:
    rows = []
    for name in names():
        r = team_repo(name)
        ahead, behind = r.ahead_behind()
        rec = state.load(record_name(name))
        rows.append(
            {
                "name": name,
                "remote": redact_url(r.remote_url()),
                "path": str(r.path),
                "ahead": ahead,
                "behind": behind,
                "memories": sum(
                    1
                    for folder in ("rooms/*/**/*.md", "wiki/**/*.md")
                    for p in r.path.glob(folder)
                    if tree.is_memory_file(p.name)
                ),
                "last": rec.get("last", {}),
            }
        )
    return rows


def summary(report: TeamReport) -> str:
    parts = ["sent your changes" if report.pushed else "nothing to send"]
    parts.append(f"received {report.received} files" if report.received else "nothing new")
    if report.conflicts:
        parts.append(f"{len(report.conflicts)} kept twice")
    if report.redacted:
        parts.append(f"{len(report.redacted)} redacted")
    return "; ".join(parts)


def _refresh_index() -> None:
    from ..store.index import open_index

    with open_index() as idx:
        idx.refresh()
