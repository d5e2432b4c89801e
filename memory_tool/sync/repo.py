"""Git plumbing for sync and team palaces: one ``git`` process per call, no library of our own.

Git does the transport, history, merging and authentication; this module only runs it with
settings that make it predictable in a detached process (no prompts, no user hooks, no commit
signing, English messages) and turns its failures into ``SyncError`` messages that say what to
do. Merges that conflict are settled here with git's own index stages: both versions of a file
survive (ours in place, theirs as a conflict copy beside it) and an edit beats a delete.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ..base.errors import SyncError
from ..base.record import record
from ..store.tree import CONFLICT_MARK

# The branch sync writes on a remote that has none yet and names none (and the one it keeps
# using where it already wrote). A remote made with `git init --bare` names ``master`` (or its
# ``init.defaultBranch``) in its HEAD: that branch is used there, so a plain `git clone` checks
# out the memory instead of "remote HEAD refers to nonexistent ref".
BRANCH = "main"
REMOTE = "origin"
# Where a clone records the remote's branch it syncs (chosen once, at the first fetch).
BRANCH_KEY = "memorytool.branch"
# A fetch, push or clone that hangs (a remote that accepts the connection and never answers)
# is given up after this long; the next sync retries.
NETWORK_TIMEOUT_S = 180
# Local git commands (add, commit, merge) on a palace of tens of thousands of files finish in
# seconds; this only stops a wedged one.
LOCAL_TIMEOUT_S = 600
# A git index lock this old is left over from a run that died (git holds it for the length of
# one command); a younger one may belong to a git still finishing after its caller was killed.
STALE_LOCK_S = 10
# Files merged by taking every line of both sides: Claude Code's MEMORY.md index and the
# inbox's decided list only ever gain lines, so a text conflict there would be noise.
UNION_FILES = ("MEMORY.md", ".decided")
# The empty tree: the base of a first import, when nothing was imported yet.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ZERO_SHA = "0" * 40
# Settings for every call: the user's global hooks, signing or pager must not stop a
# detached sync; paths come back unquoted (NUL-separated where there can be many).
_CONFIG = (
    "core.hooksPath=/dev/null",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "core.quotePath=false",
    "core.autocrlf=false",
    "core.fsmonitor=false",
    # A link in a shared palace (``rooms/x/key.md -> ~/.ssh/id_rsa``) is checked out as a
    # plain file holding its target's name: never followed, never indexed as the file.
    "core.symlinks=false",
    "merge.renames=false",
    "diff.renames=false",
    "advice.detachedHead=false",
    "init.defaultBranch=" + BRANCH,
)


def machine_name() -> str:
    """This machine's name in commit messages and conflict copies (``MEMORY_TOOL_MACHINE``
    overrides the host name)."""
    name = os.environ.get("MEMORY_TOOL_MACHINE") or socket.gethostname() or "machine"
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in name.lower()).strip("-")
    return safe[:40] or "machine"


def blob_sha(data: bytes) -> str:
    """The id git gives a file holding ``data``: compares a file on disk with a commit's
    version without running git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


_URL_PASSWORD_RE = re.compile(r"(\w+://[^/\s:@]+):[^@\s/]+@")


def _first_lines(text: str, n: int = 3) -> str:
    """Git's message in one line, with any password in a URL masked (messages are shown and
    recorded)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("hint:")]
    return _URL_PASSWORD_RE.sub(r"\1:***@", " / ".join(lines[:n]))


def is_rejected(stderr: str) -> bool:
    """Whether a push was refused because the remote moved on meanwhile (fetch and retry)."""
    low = stderr.lower()
    return any(
        s in low
        for s in ("[rejected]", "non-fast-forward", "fetch first", "stale info", "cannot lock ref")
    )


@record
class Result:
    code: int
    out: str
    err: str


@record
class Conflict:
    """A path both sides changed: what was kept where."""

    path: str
    kept: str  # "both" (ours in place, theirs in ``copy``) | "edit" (an edit beat a delete)
    copy: str = ""


class Repo:
    """A git working tree we own (the personal sync tree, or a team palace)."""

    def __init__(self, path: Path, *, interactive: bool = True) -> None:
        self.path = path
        # A detached run has no terminal: git must fail at once instead of asking for a
        # password nobody will type.
        self.interactive = interactive
        self._identity: list[str] | None = None
        self._branch: str | None = None

    # --- running git ---------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["LC_ALL"] = "C"
        env["LANGUAGE"] = "C"
        env["GIT_MERGE_AUTOEDIT"] = "no"
        if not self.interactive:
            env["GIT_TERMINAL_PROMPT"] = "0"
            env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):  # ours, not a caller's
            env.pop(var, None)
        return env

    def run(
        self,
        *args: str,
        check: bool = True,
        network: bool = False,
        cwd: Path | None = None,
        data: bytes | None = None,
    ) -> Result:
        cmd = ["git"]
        for item in _CONFIG:
            cmd += ["-c", item]
        cmd += self.identity() if args and args[0] in ("commit", "merge") else []
        cmd += list(args)
        try:
            proc = subprocess.run(
                cmd,
                cwd=cwd or self.path,
                env=self.env(),
                input=data,
                stdin=None if data is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=NETWORK_TIMEOUT_S if network else LOCAL_TIMEOUT_S,
                check=False,
            )
        except FileNotFoundError as exc:
            raise SyncError(
                "git is not installed (or not on PATH): sync and team palaces run on git. "
                "Install it (e.g. `apt-get install git`) and try again."
            ) from exc
        except subprocess.TimeoutExpired as exc:
            what = "the remote did not answer" if network else "git did not finish"
            raise SyncError(
                f"`git {args[0]}` timed out ({what}); nothing was lost, the next sync retries."
            ) from exc
        result = Result(
            proc.returncode,
            proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"),
        )
        if check and result.code != 0:
            raise SyncError(f"`git {args[0]}` failed in {self.path}: {_first_lines(result.err)}")
        return result

    def identity(self) -> list[str]:
        """A committer for machines without a git identity (CI, a fresh laptop): the user's
        own name and email win whenever git knows them."""
        if self._identity is None:
            known = self.run("config", "--get", "user.email", check=False).out.strip()
            if known or os.environ.get("GIT_AUTHOR_EMAIL"):
                self._identity = []
            else:
                host = machine_name()
                self._identity = [
                    "-c",
                    "user.name=memory-tool",
                    "-c",
                    f"user.email=memory-tool@{host}.invalid",
                ]
        return self._identity

    # --- state -----------------------------------------------------------------------------
    def exists(self) -> bool:
        return (self.path / ".git").exists()

    def head(self) -> str | None:
        r = self.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
        return r.out.strip() or None if r.code == 0 else None

    def remote_head(self) -> str | None:
        ref = f"refs/remotes/{REMOTE}/{self.branch()}"
        r = self.run("rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False)
        return r.out.strip() or None if r.code == 0 else None

    def branch(self) -> str:
        """The remote's branch this clone syncs (``BRANCH`` until the first fetch chose)."""
        if self._branch is None:
            recorded = self.run("config", "--get", BRANCH_KEY, check=False).out.strip()
            if not recorded:
                return BRANCH
            self._branch = recorded
        return self._branch

    def choose_branch(self) -> str:
        """Which branch to sync, once per clone, after a fetch: ``main`` where sync already
        writes it; else the branch the remote's HEAD names, whether it exists yet or not (an
        empty remote's HEAD is read by cloning it: ``ls-remote`` does not show an unborn one);
        else ``main``. A path remote whose HEAD names no branch while ``main`` exists (made by
        an earlier version) gets its HEAD set to ``main``."""
        heads = self.run("for-each-ref", "--format=%(refname:lstrip=3)", f"refs/remotes/{REMOTE}/")
        have = {h for h in heads.out.split() if h != "HEAD"}
        named = self._remote_head_name(empty=not have)
        if BRANCH in have:
            chosen = BRANCH
            if named is None:
                self._point_head_at(BRANCH)
        else:
            chosen = named or BRANCH
        self.run("config", BRANCH_KEY, chosen)
        self._branch = chosen
        return chosen

    def _remote_head_name(self, *, empty: bool) -> str | None:
        r = self.run("ls-remote", "--symref", REMOTE, "HEAD", check=False, network=True)
        for line in r.out.splitlines():
            if line.startswith("ref: refs/heads/") and line.endswith("\tHEAD"):
                return line[len("ref: refs/heads/") : -len("\tHEAD")]
        if not empty:
            return None
        probe = self.path / ".git" / "memory-tool-probe"
        shutil.rmtree(probe, ignore_errors=True)
        try:
            cloned = self.run(
                "clone", "-q", "--bare", self.remote_url(), str(probe),
                check=False, network=True,
            )  # fmt: skip
            if cloned.code != 0:
                return None
            ref = self.run("symbolic-ref", "-q", "HEAD", check=False, cwd=probe).out.strip()
            return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else None
        finally:
            shutil.rmtree(probe, ignore_errors=True)

    def _point_head_at(self, branch: str) -> None:
        url = self.remote_url()
        path = Path(url[len("file://") :] if url.startswith("file://") else url)
        if "://" in url or not path.is_absolute() or not (path / "HEAD").is_file():
            return  # only a repository on this disk can be told; a server keeps its own
        self.run(
            "--git-dir", str(path), "symbolic-ref", "HEAD", f"refs/heads/{branch}", check=False
        )

    def remote_url(self) -> str:
        return self.run("config", "--get", f"remote.{REMOTE}.url", check=False).out.strip()

    def ahead_behind(self) -> tuple[int, int]:
        """Commits here the remote lacks, and commits the remote has that are not merged here
        (as of the last fetch)."""
        head, remote = self.head(), self.remote_head()
        if head is None:
            return 0, self.count(remote) if remote else 0
        if remote is None:
            return self.count(head), 0
        out = self.run("rev-list", "--left-right", "--count", f"{head}...{remote}").out.split()
        return int(out[0]), int(out[1])

    def count(self, rev: str) -> int:
        return int(self.run("rev-list", "--count", rev).out.strip() or 0)

    def tracked(self) -> list[str]:
        out = self.run("ls-files", "-z").out
        return [p for p in out.split("\0") if p]

    def changed_paths(
        self, old: str | None, new: str, only: Sequence[str] = ()
    ) -> list[tuple[str, str, str]]:
        """(path, old blob, new blob) of each file that differs between two commits (a blob of
        zeros: the file is absent on that side); ``only``: under these folders."""
        out = self.run(
            "diff", "--raw", "-z", "--no-renames", "--no-abbrev", old or EMPTY_TREE, new,
            "--", *(f"{folder}/" for folder in only),
        ).out  # fmt: skip
        items = out.split("\0")
        changes = []
        for i in range(0, len(items) - 1, 2):
            meta, path = items[i], items[i + 1]
            if not meta.startswith(":"):
                break
            fields = meta[1:].split()
            changes.append((path, fields[2], fields[3]))
        return changes

    def cat_blob(self, sha: str) -> bytes:
        r = subprocess.run(
            ["git", "cat-file", "blob", sha],
            cwd=self.path,
            env=self.env(),
            capture_output=True,
            timeout=LOCAL_TIMEOUT_S,
            check=False,
        )
        if r.returncode != 0:
            raise SyncError(f"git cannot read object {sha} in {self.path}: the clone is damaged")
        return r.stdout

    # --- setting up ------------------------------------------------------------------------
    def init(self, url: str) -> None:
        """A new working tree with ``url`` as its remote; union merges for append-only files."""
        self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.run("init", "-q", "-b", BRANCH)
        self.set_remote(url)
        self.write_attributes()

    def set_remote(self, url: str) -> None:
        if self.remote_url():
            self.run("remote", "set-url", REMOTE, url)
            self.run("config", "--unset", BRANCH_KEY, check=False)  # chosen again for it
            self._branch = None
        else:
            self.run("remote", "add", REMOTE, url)

    def write_attributes(self) -> None:
        """``merge=union`` for the files that only gain lines, in this clone's own settings
        (not a committed file: a team's repository stays exactly as its members write it)."""
        info = self.path / ".git" / "info"
        info.mkdir(parents=True, exist_ok=True)
        lines = "".join(f"{name} merge=union\n" for name in UNION_FILES)
        (info / "attributes").write_text(lines, encoding="utf-8")
        # Temp files of atomic writes and lock files are never content.
        (info / "exclude").write_text(".*.tmp\n.*.lock\n", encoding="utf-8")

    def clear_leftovers(self) -> None:
        """What an interrupted run leaves behind: a half-done merge (aborted: the next merge
        redoes it) and a stale index lock (we hold the sync lock, so no git of ours runs)."""
        git = self.path / ".git"
        lock = git / "index.lock"
        deadline = time.monotonic() + STALE_LOCK_S
        while lock.exists():
            try:
                age = time.time() - lock.stat().st_mtime
            except OSError:
                break
            if age >= STALE_LOCK_S or time.monotonic() >= deadline:
                lock.unlink(missing_ok=True)  # its git is gone (a crash, a power cut)
                break
            time.sleep(0.2)  # a git orphaned by a killed run may still be finishing
        if (git / "MERGE_HEAD").exists():
            self.run("merge", "--abort", check=False)
            if (git / "MERGE_HEAD").exists():
                self.run("reset", "-q", "--merge", check=False)

    # --- the network -----------------------------------------------------------------------
    def fetch(self) -> bool:
        """Fetch the remote's branch; False when the remote is empty (no branch yet)."""
        r = self.run("fetch", "-q", "--prune", REMOTE, check=False, network=True)
        if r.code != 0:
            raise SyncError(unreachable_message(self.remote_url(), r.err))
        if not self.run("config", "--get", BRANCH_KEY, check=False).out.strip():
            self.choose_branch()
        return self.remote_head() is not None

    def push(self) -> str:
        """Push; "ok", "rejected" (the remote moved on: fetch, merge, push again) or raises."""
        r = self.run(
            "push", "-q", "--porcelain", REMOTE, f"HEAD:refs/heads/{self.branch()}",
            check=False, network=True,
        )  # fmt: skip
        if r.code == 0:
            return "ok"
        if is_rejected(r.err + r.out):
            return "rejected"
        if "[remote rejected]" in r.out + r.err:  # the server's own rule (a hook, permissions)
            said = [
                line.split("\t")[-1] if "\t" in line else line
                for line in (r.err + "\n" + r.out).splitlines()
                if line.startswith("remote:") or "[remote rejected]" in line
            ]
            reason = _first_lines("\n".join(said))
            raise SyncError(
                f"the remote {redact_url(self.remote_url())} refused the push ({reason}). "
                "Nothing was lost: this machine's changes are committed here and go out with "
                "the first sync the server accepts; check your write access to the repository "
                "and its rules."
            )
        raise SyncError(unreachable_message(self.remote_url(), r.err or r.out))

    def clone(self, url: str) -> None:
        """Clone ``url`` into this path (an empty remote gives an empty working tree)."""
        parent = self.path.parent
        parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        r = self.run(
            "clone", "-q", "--origin", REMOTE, url, str(self.path),
            check=False, network=True, cwd=parent,
        )  # fmt: skip
        if r.code != 0:
            raise SyncError(unreachable_message(url, r.err))
        self.write_attributes()
        self.choose_branch()
        # A remote whose HEAD names no branch clones with nothing checked out.
        remote = self.remote_head()
        if remote is not None and self.head() != remote:
            self.run("checkout", "-q", "-B", self.branch(), remote)

    # --- committing and merging ------------------------------------------------------------
    def stage_all(self) -> None:
        self.run("add", "-A", ".")

    def commit_staged(self, message: str) -> bool:
        """Commit what is staged; False when nothing is."""
        if self.run("diff", "--cached", "--quiet", check=False).code == 0:
            return False
        self.run("commit", "-q", "--no-verify", "-m", message)
        return True

    def staged_paths(self) -> list[str]:
        """Files added or changed in the index (deletions carry no content)."""
        out = self.run(
            "diff", "--cached", "--name-only", "-z", "--no-renames", "--diff-filter=AM"
        ).out
        return [p for p in out.split("\0") if p]

    def stage_data(self, rel: str, data: bytes) -> None:
        """Stage ``data`` as the content of ``rel`` without touching the file in the tree."""
        sha = self.run("hash-object", "-w", "--stdin", data=data).out.strip()
        staged = self.run("ls-files", "-s", "-z", "--", rel).out.split(" ", 1)[0]
        self.run("update-index", "--cacheinfo", f"{staged or '100644'},{sha},{rel}")

    def unstage(self, rel: str) -> None:
        if self.head() is None:
            self.run("rm", "-q", "--cached", "--", rel)
        else:
            self.run("reset", "-q", "HEAD", "--", rel)

    def merge_remote(self, copy_name: Callable[[str, str], str]) -> list[Conflict]:
        """Merge the fetched remote branch. A path both sides changed keeps our version in
        place and theirs as a conflict copy (``copy_name(path, who)`` names it); a file one
        side edited and the other deleted keeps the edit. Returns what was settled so."""
        remote = self.remote_head()
        if remote is None:
            return []
        if self.head() is None:  # nothing committed here yet: take the remote as it is
            self.run("reset", "-q", "--hard", remote)
            return []
        r = self.run(
            "merge", "-q", "--no-edit", "--allow-unrelated-histories",
            "-m", commit_message(f"sync: merge {REMOTE}/{self.branch()}"), remote,
            check=False,
        )  # fmt: skip
        if r.code == 0:
            return []
        stages = self.unmerged()
        if not stages:
            raise SyncError(f"git could not merge in {self.path}: {_first_lines(r.err + r.out)}")
        conflicts = [self._settle(path, have, remote, copy_name) for path, have in stages.items()]
        self.run("commit", "-q", "--no-verify", "--no-edit")
        return conflicts

    def unmerged(self) -> dict[str, dict[int, str]]:
        """Each conflicted path and its index stages (1 base, 2 ours, 3 theirs) -> blob."""
        out = self.run("ls-files", "-u", "-z").out
        stages: dict[str, dict[int, str]] = {}
        for item in out.split("\0"):
            if not item:
                continue
            meta, _, path = item.partition("\t")
            _mode, sha, stage = meta.split()
            stages.setdefault(path, {})[int(stage)] = sha
        return stages

    def _settle(
        self, path: str, have: dict[int, str], remote: str, copy_name: Callable[[str, str], str]
    ) -> Conflict:
        target = self.path / path
        if 2 in have and 3 in have:  # both changed (or both added): ours here, theirs beside
            copy = free_name(self.path, copy_name(path, self.author_machine(remote, path)))
            _write(target, self.cat_blob(have[2]))
            _write(self.path / copy, self.cat_blob(have[3]))
            self.run("add", "--", path, copy)
            return Conflict(path, "both", copy)
        kept = have.get(2) or have.get(3)  # one side deleted it: the edit stays
        if kept is None:
            self.run("rm", "-q", "--cached", "--ignore-unmatch", "--", path)
            return Conflict(path, "deleted")
        _write(target, self.cat_blob(kept))
        self.run("add", "--", path)
        return Conflict(path, "edit")

    def author_machine(self, rev: str, path: str) -> str:
        """The machine that last changed ``path`` on ``rev`` (our commit messages name it)."""
        subject = self.run("log", "-1", "--format=%s", rev, "--", path, check=False).out
        match = _MACHINE_RE.search(subject.strip())
        return match.group(1) if match else "remote"


def commit_message(summary: str) -> str:
    """A commit subject that names this machine (conflict copies are named after it)."""
    return f"{summary} (machine {machine_name()})"


_MACHINE_RE = re.compile(r"\(machine ([a-z0-9_-]+)\)$")


def free_name(root: Path, rel: str) -> str:
    """``rel``, or ``rel`` with ``-2``, ``-3``... before its extension: a name not taken."""
    if not (root / rel).exists():
        return rel
    stem, dot, ext = rel.rpartition(".")
    if not dot or "/" in ext:
        stem, ext = rel, ""
    n = 2
    while True:
        candidate = f"{stem}-{n}" + (f".{ext}" if ext else "")
        if not (root / candidate).exists():
            return candidate
        n += 1


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def unreachable_message(url: str, stderr: str) -> str:
    detail = _first_lines(stderr) or "no answer"
    return (
        f"could not reach the remote {redact_url(url)} ({detail}). Nothing was lost: local "
        "changes are committed here and go out with the next sync (it retries by itself "
        "after the next session; `memory-tool sync` retries now). Check the URL, your network "
        "and your access to the repository."
    )


def redact_url(url: str) -> str:
    """A URL as it may be shown or logged: a password or token in it is never printed."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest.split("/", 1)[0]:
        return url
    creds, _, host = rest.partition("@")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user + ':***' if ':' in creds else user}@{host}"


def conflict_copy_name(path: str, who: str, day: str) -> str:
    """``rooms/db/pool.md`` -> ``rooms/db/pool.conflict-<who>-<day>.md``."""
    folder, _, name = path.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    new = f"{stem}{CONFLICT_MARK}{who}-{day}" + (f".{ext}" if ext else "")
    return f"{folder}/{new}" if folder else new


def run_checked(args: Sequence[str], cwd: Path) -> str:
    """A plain ``git`` call outside a repository we own (reading a project's origin URL)."""
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            timeout=LOCAL_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else ""
