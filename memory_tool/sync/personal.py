"""Personal sync: the palace's durable folders and every project's memory, on a git remote.

A git working tree at ``<state>/sync/repo`` mirrors what travels (``layout``). One sync:

1. settle what an interrupted run left (a half-done merge, files merged but not yet copied
   back to this machine);
2. copy this machine's changes into the tree, redacted (``layout.outgoing``), and commit;
3. fetch, merge (git's own three-way merge; a file both sides changed keeps both versions, an
   edit beats a delete), copy what the merge changed back to this machine, push; a push the
   remote refused because another machine pushed first is fetched, merged and pushed again;
4. refresh the index when memory files changed here.

Nothing is lost at any step: a local file is only changed when what it sends is exactly what was
last synced, and then the incoming version is merged onto its text (secrets and ``<private>``
text, which never travel, stay in it: ``merge``); every write is atomic, and a failure leaves
local commits for the next run.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path, PurePosixPath
from typing import Any

from ..base.config import today
from ..base.errors import SyncError
from ..base.fsutil import atomic_write_bytes, ensure_dir
from ..base.record import field, record
from ..store.tree import is_conflict_copy
from . import layout, state
from .conflicts import original_of
from .merge import onto_local, union
from .projects import Projects, folder_name, resolve
from .repo import (
    UNION_FILES,
    ZERO_SHA,
    Conflict,
    Repo,
    blob_sha,
    commit_message,
    conflict_copy_name,
    free_name,
    redact_url,
)

NAME = "personal"
# A push refused because another machine pushed first is retried after a fresh merge this
# many times (with a short random pause, so two machines do not keep colliding).
MAX_PUSH_ATTEMPTS = 6
PUSH_RETRY_PAUSE_S = (0.05, 0.5)
# Per file: (mtime_ns, size, blob id of what it sends); a file whose stat is unchanged is not
# read again. The index keeps the same kind of record for the same reason.
STAMPS_FILE = "personal-stamps.json"


@record
class Report:
    """What one sync did."""

    exported: dict[str, int] = field(default_factory=dict)  # added / changed / deleted
    committed: bool = False
    fetched: bool = False
    pushed: bool = False
    pulled: list[str] = field(default_factory=list)  # local files written or deleted
    conflicts: list[Conflict] = field(default_factory=list)
    kept_local: list[str] = field(default_factory=list)  # changed here while syncing: kept
    redacted: list[tuple[str, str]] = field(default_factory=list)
    held: list[tuple[str, str]] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)  # project ids not on this machine
    unsynced: list[str] = field(default_factory=list)  # local keys without an id
    remote: str = ""
    attempts: int = 0  # rounds of fetch, merge and push (more than one: a push was refused)
    reseeded: bool = False  # a project's id became known here: its memories' ids changed


def repo(*, interactive: bool = True) -> Repo:
    return Repo(state.sync_dir() / "repo", interactive=interactive)


def is_set_up() -> bool:
    return (state.sync_dir() / "repo" / ".git").is_dir()


def init(url: str, cwd: str | Path | None = None) -> Report:
    """Make the palace's durable folders a git working tree with ``url`` as its remote and run
    the first sync (a remote with memory in it already is merged, nothing overwritten)."""
    if not url.strip():
        raise SyncError("give the remote's URL: a path, ssh://, git@host:path or https://.")
    r = repo()
    with state.locked(NAME):
        if r.exists():
            if r.remote_url() != url:
                r.set_remote(url)
        else:
            r.init(url)
    return sync(cwd)


def sync(
    cwd: str | Path | None = None, *, interactive: bool = True, pull_only: bool = False
) -> Report:
    """One sync (see the module doc). ``pull_only``: fetch, and do the rest only when the
    remote has something new (what SessionStart starts). Raises SyncError with what to do when
    the remote cannot be reached or keeps refusing; whatever was committed stays committed."""
    if not is_set_up():
        raise SyncError(
            "sync is not set up on this machine: `memory-tool sync init REMOTE` (any git URL: "
            "a path, ssh or https; an empty repository is fine)."
        )
    r = repo(interactive=interactive)
    report = Report(remote=redact_url(r.remote_url()))
    with state.locked(NAME):
        try:
            _sync(r, report, cwd, pull_only)
        except SyncError as exc:
            state.finish(NAME, False, str(exc), **_record(report))
            raise
        except Exception as exc:
            state.finish(NAME, False, f"{type(exc).__name__}: {exc}", **_record(report))
            raise
        state.finish(NAME, True, summary(report), **_record(report))
    if report.pulled or report.reseeded:
        _refresh_index()
    return report


def _record(report: Report) -> dict[str, Any]:
    return {
        "redacted": report.redacted,
        "held": report.held,
        "waiting": report.waiting,
        "conflicts": [[c.path, c.kept, c.copy] for c in report.conflicts],
    }


def _sync(r: Repo, report: Report, cwd: str | Path | None, pull_only: bool) -> None:
    projects = resolve(cwd)
    report.unsynced = projects.unsynced
    report.reseeded = projects.reseeded
    r.clear_leftovers()  # a half-done merge, a stale git lock
    if state.load(NAME).get("running", True):
        _restore_tree(r)  # a run stopped midway (or none ran yet): redo it from the files here
    state.update(NAME, running=os.getpid())
    imported = state.load(NAME).get("imported")
    head = r.head()
    if head is not None and imported != head:  # a run stopped between merging and copying
        _pull_into_local(r, projects, imported if _known(r, imported) else None, head, report)
        state.update(NAME, imported=head)
    mapped = sorted(projects.keys)
    new = [i for i in mapped if i not in state.load(NAME).get("mapped", [])]
    if head is not None and new:  # a folder found for a project whose memory was waiting
        only = [f"{layout.PROJECTS}/{folder_name(i)}" for i in new]
        _pull_into_local(r, projects, None, head, report, only)
    state.update(NAME, mapped=mapped)
    if pull_only:
        report.fetched = r.fetch()
        _, behind = r.ahead_behind()
        if not behind:
            return
    _export(r, projects, report)
    r.stage_all()
    guarded, _ = layout.guard_staged(r, stage_redacted=False)
    report.held += guarded
    if r.commit_staged(commit_message(f"sync: {_counts(report.exported)}")):
        report.committed = True
        state.update(NAME, imported=r.head())
    day = today().isoformat()

    def copy_name(path: str, who: str) -> str:
        return conflict_copy_name(path, who, day)

    for attempt in range(MAX_PUSH_ATTEMPTS):
        report.attempts = attempt + 1
        report.fetched = r.fetch()
        before = r.head()
        report.conflicts += r.merge_remote(copy_name)
        after = r.head()
        if after is not None and after != before:
            _pull_into_local(r, projects, before, after, report)
            state.update(NAME, imported=after)
        ahead, _ = r.ahead_behind()
        if ahead == 0:
            break
        if r.push() == "ok":
            report.pushed = True
            break
        time.sleep(random.uniform(*PUSH_RETRY_PAUSE_S) * (attempt + 1))
    else:
        raise SyncError(
            f"the remote refused the push {MAX_PUSH_ATTEMPTS} times: other machines kept "
            "pushing meanwhile. Nothing was lost (this machine's changes are committed "
            "locally); the next sync pushes them."
        )
    report.waiting = _waiting(r, projects)


def _known(r: Repo, rev: Any) -> bool:
    if not isinstance(rev, str):
        return False
    return r.run("cat-file", "-e", f"{rev}^{{commit}}", check=False).code == 0


def _restore_tree(r: Repo) -> None:
    """The working tree exactly as committed: what a stopped run wrote into it is redone
    from this machine's files by the export (they are the truth)."""
    if r.head() is not None:
        r.run("reset", "-q", "--hard", "HEAD")
    else:
        r.run("read-tree", "--empty")
    r.run("clean", "-q", "-f", "-d")


# --- this machine -> the repository ------------------------------------------------------------
def _stamps_path() -> Path:
    return state.sync_dir() / STAMPS_FILE


def _load_stamps() -> dict[str, list[Any]]:
    import json

    try:
        data = json.loads(_stamps_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_stamps(stamps: dict[str, list[Any]]) -> None:
    import json

    atomic_write_bytes(_stamps_path(), json.dumps(stamps, separators=(",", ":")).encode())


def committed_blobs(r: Repo) -> dict[str, str]:
    """Path -> blob id of every file in HEAD."""
    if r.head() is None:
        return {}
    out = r.run("ls-tree", "-r", "-z", "--full-tree", "HEAD").out
    blobs = {}
    for item in out.split("\0"):
        meta, _, path = item.partition("\t")
        if path:
            blobs[path] = meta.split()[2]
    return blobs


def scan_local(
    projects: Projects, stamps: dict[str, list[Any]]
) -> tuple[dict[str, tuple[str, str, bytes | None]], list[tuple[str, str]], list[tuple[str, str]]]:
    """Each travelling local file: (its path, the blob id it sends, the data when it was read);
    plus what is redacted and what is held back. ``stamps`` is updated."""
    files: dict[str, tuple[str, str, bytes | None]] = {}
    redacted: list[tuple[str, str]] = []
    held: list[tuple[str, str]] = []
    fresh: dict[str, list[Any]] = {}
    for rel, path in sorted(layout.local_files(projects).items()):
        try:
            st = os.stat(path)
        except OSError:
            continue
        old = stamps.get(rel)
        if old and old[0] == st.st_mtime_ns and old[1] == st.st_size and old[2]:
            fresh[rel] = old
            if len(old) > 3 and old[3]:
                redacted.append((rel, old[3]))
            files[rel] = (path, old[2], None)
            continue
        data = _read(Path(path))
        if data is None:
            continue
        out = layout.outgoing(data)
        if out.data is None:
            held.append((rel, out.why))
            continue
        if out.why:
            redacted.append((rel, out.why))
        sha = blob_sha(out.data)
        fresh[rel] = [st.st_mtime_ns, st.st_size, sha, out.why]
        files[rel] = (path, sha, out.data)
    stamps.clear()
    stamps.update(fresh)
    return files, redacted, held


def _export(r: Repo, projects: Projects, report: Report) -> None:
    """Write this machine's changes into the working tree (redacted), delete what was deleted
    here. A repository path this machine cannot map (a project it does not have) is left."""
    stamps = _load_stamps()
    files, report.redacted, report.held = scan_local(projects, stamps)
    committed = committed_blobs(r)
    counts = {"added": 0, "changed": 0, "deleted": 0}
    for rel, (path, sha, data) in files.items():
        if committed.get(rel) == sha:
            continue
        if data is None:  # the stamp said unchanged, but the repository differs: read it
            out = layout.outgoing(_read(Path(path)) or b"")
            if out.data is None:
                continue
            data = out.data
        target = r.path / rel
        ensure_dir(target.parent)
        target.write_bytes(data)
        counts["changed" if rel in committed else "added"] += 1
    held = {rel for rel, _ in report.held}
    for rel in committed:
        if rel in files or rel in held:
            continue
        local = layout.local_path(rel, projects)
        if local is None or local.exists():
            continue  # not this machine's to delete
        (r.path / rel).unlink(missing_ok=True)
        counts["deleted"] += 1
    report.exported = counts
    _save_stamps(stamps)


# --- the repository -> this machine ------------------------------------------------------------
def _pull_into_local(
    r: Repo,
    projects: Projects,
    old: str | None,
    new: str,
    report: Report,
    only: list[str] | None = None,
) -> None:
    """Bring what changed between two commits to this machine's files (see ``_Pull``)."""
    changes = r.changed_paths(old, new, only or ())
    pull = _Pull(r, projects, new, report, changes)
    for rel, old_sha, new_sha in changes:
        if new_sha != ZERO_SHA:
            pull.bring(rel, old_sha, new_sha)
    for rel, old_sha, new_sha in changes:  # after the writes: a text that moved is written first
        if new_sha == ZERO_SHA:
            pull.delete(rel, old_sha)


class _Pull:
    """One commit range brought to this machine's files.

    A local file is only changed or deleted when what it sends is exactly what the old commit
    held; the incoming version is then merged onto its text (``merge.onto_local``: secrets and
    ``<private>`` text, which never travel, stay). One changed here meanwhile, or whose secrets
    the incoming change touched, is kept, and the incoming version is written beside it as a
    conflict copy (an edit here and a delete there keeps the edit). Two exceptions keep both
    machines' texts without sending them back and forth:

    - the other machine already kept this one's version beside its own (a conflict copy of the
      file arrives holding exactly what the file here sends): the incoming version takes the
      file's place and the file's own text goes into that copy, secrets and all (were both to
      keep their own in place, each sync would send it back over the other's, a new conflict
      copy every time);
    - a version moves from one file to another (`sync resolve --keep theirs` on the other
      machine: the copy's text into the file, the copy deleted): this machine's own text for
      that version, secrets and all, moves with it.
    """

    def __init__(
        self,
        r: Repo,
        projects: Projects,
        new: str,
        report: Report,
        changes: list[tuple[str, str, str]],
    ) -> None:
        self.r, self.projects, self.report = r, projects, report
        self.day = today().isoformat()
        self.remote = r.remote_head() or new
        # The working tree is ``new`` (each caller has just merged or reset to it): its files
        # are read directly, not one `git cat-file` process per file.
        self.in_tree = r.head() == new
        self.copies: dict[str, list[tuple[str, str]]] = {}  # file -> its copies arriving
        self.placed: set[str] = set()  # copies already written with this machine's text
        # Blob -> this machine's text of that version, in a file the change deletes.
        self.moving: dict[str, bytes] = {}
        self.moved: set[str] = set()
        arriving = {new_sha for _, _, new_sha in changes}
        for rel, old_sha, new_sha in changes:
            if new_sha != ZERO_SHA and is_conflict_copy(rel.rpartition("/")[2]):
                original = original_of(PurePosixPath(rel)).as_posix()
                self.copies.setdefault(original, []).append((rel, new_sha))
            if new_sha == ZERO_SHA and old_sha in arriving:
                local = layout.local_path(rel, projects)
                current = _read(local) if local is not None else None
                sent = _sendable(current) if current is not None else None
                if current is not None and sent != current and blob_sha(sent or b"") == old_sha:
                    self.moving[old_sha] = current

    def bring(self, rel: str, old_sha: str, new_sha: str) -> None:
        local = layout.local_path(rel, self.projects)
        if local is None or rel in self.placed:
            return
        current = _read(local)
        here = blob_sha(_sendable(current)) if current is not None else ZERO_SHA
        incoming = _read(self.r.path / rel) if self.in_tree else None
        if incoming is None or blob_sha(incoming) != new_sha:
            incoming = self.r.cat_blob(new_sha)
        ours = self.moving.get(new_sha)  # this machine's text of the version that arrives
        if current is None or (here == old_sha and current == _sendable(current) and ours):
            self._write(local, ours or incoming, moved=new_sha if ours else "")
        elif current == incoming or here == new_sha:
            return  # it already sends what arrived (its own secrets and all)
        elif here == old_sha:  # unchanged here since: the incoming version, onto the local text
            merged = onto_local(current, incoming)
            own = self._own_copy(rel, here) if merged is None else None
            if own is not None:
                self._write(own[1], current)
                self._write(local, incoming)
                self.placed.add(own[0])
            elif merged is None:
                self._beside(local, rel, incoming)
            elif merged != current:
                self._write(local, merged)
        elif local.name in UNION_FILES:
            self._write(local, union(current, incoming))
        else:
            self._beside(local, rel, incoming)

    def delete(self, rel: str, old_sha: str) -> None:
        local = layout.local_path(rel, self.projects)
        current = _read(local) if local is not None else None
        if local is None or current is None:
            return
        stays = old_sha in self.moving and old_sha not in self.moved  # its text found no place
        if blob_sha(_sendable(current)) == old_sha and not stays:
            local.unlink(missing_ok=True)
            self.report.pulled.append(str(local))
        else:
            self.report.kept_local.append(str(local))

    def _write(self, path: Path, data: bytes, moved: str = "") -> None:
        _write(path, data)
        self.report.pulled.append(str(path))
        if moved:
            self.moved.add(moved)

    def _beside(self, local: Path, rel: str, incoming: bytes) -> None:
        who = self.r.author_machine(self.remote, rel)
        name = free_name(local.parent, conflict_copy_name(local.name, who, self.day))
        _write(local.parent / name, incoming)
        self.report.kept_local.append(str(local))
        self.report.pulled.append(str(local.parent / name))

    def _own_copy(self, rel: str, here: str) -> tuple[str, Path] | None:
        """This machine's version of ``rel``, arrived as a conflict copy: its repository path
        and where it lives here (not written yet, or written with what arrived)."""
        for copy, sha in self.copies.get(rel, ()):
            path = layout.local_path(copy, self.projects) if sha == here else None
            there = _read(path) if path is not None else None
            if path is not None and (there is None or blob_sha(_sendable(there)) == here):
                return copy, path
        return None


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _sendable(data: bytes) -> bytes:
    out = layout.outgoing(data)
    return out.data if out.data is not None else data


def _write(path: Path, data: bytes) -> None:
    atomic_write_bytes(path, data)


def _waiting(r: Repo, projects: Projects) -> list[str]:
    """Projects in the repository this machine has no folder for (yet)."""
    ids = set()
    for rel in committed_blobs(r):
        project_id = layout.project_of(rel)
        if project_id is not None and layout.local_path(rel, projects) is None:
            ids.add(project_id)
    return sorted(ids)


def _refresh_index() -> None:
    from ..store.index import open_index

    with open_index() as idx:
        idx.refresh()


# --- reporting ----------------------------------------------------------------------------------
def _counts(counts: dict[str, int]) -> str:
    shown = [f"{n} {what}" for what, n in counts.items() if n]
    return ", ".join(shown) or "no changes"


def summary(report: Report) -> str:
    parts = [f"sent {_counts(report.exported)}" if report.committed else "nothing new to send"]
    parts.append(f"received {len(report.pulled)} files" if report.pulled else "nothing received")
    if report.pushed:
        parts.append("pushed")
    if report.conflicts or report.kept_local:
        parts.append(f"{len(report.conflicts) + len(report.kept_local)} kept twice")
    return "; ".join(parts)


def status(fetch: bool = False) -> dict[str, Any]:
    """Ahead, behind, local changes not sent yet, conflict copies, the last run."""
    if not is_set_up():
        return {"set_up": False}
    r = repo()
    out: dict[str, Any] = {"set_up": True, "remote": redact_url(r.remote_url())}
    if fetch:
        with state.locked(NAME):
            try:
                r.fetch()
            except SyncError as exc:
                out["fetch_error"] = str(exc)
    out["ahead"], out["behind"] = r.ahead_behind()
    projects = resolve()
    stamps = _load_stamps()
    files, redacted, held = scan_local(projects, stamps)
    committed = committed_blobs(r)
    pending = [rel for rel, (_, sha, _) in files.items() if committed.get(rel) != sha]
    pending += [
        rel
        for rel in committed
        if rel not in files
        and (local := layout.local_path(rel, projects)) is not None
        and not local.exists()
    ]
    out["pending"] = sorted(pending)
    out["held"] = held
    out["redacted"] = redacted
    out["unsynced"] = projects.unsynced
    out["shadowed"] = projects.shadowed
    out["waiting"] = _waiting(r, projects)
    record_ = state.load(NAME)
    out["last"] = record_.get("last", {})
    out["last_ok"] = record_.get("last_ok", "")
    return out
