"""The SQLite index: derived from the memory files, safe to delete, never the truth.

It holds each entry's parsed fields, its rendered forms and their exact token counts, so a hook
can answer without parsing YAML or loading the tokenizer. Several Claude Code sessions run at
once: WAL mode, a busy timeout, short write transactions, and parsing done outside them.
A corrupt database is moved aside and rebuilt from the files.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base import paths
from ..base.errors import DeletedMemoryError, IndexCorruptError, InvalidIdError, UnknownIdError
from ..base.fsutil import DIR_MODE, FILE_MODE, ensure_dir
from ..base.log import quarantine, set_aside_copies
from ..base.record import field, record
from . import tree
from .migrations import apply_migrations

if TYPE_CHECKING:
    from .entry import Entry

# Waiting this long for another writer beats failing a hook; SQLite retries inside the wait.
BUSY_TIMEOUT_MS = 10_000
# The write-ahead log is cut back to this after each checkpoint: the hook server keeps a
# connection open, and without a limit the log kept its largest size (about 4 MB after a week,
# as large as the index itself). A day's writes fit in far less.
WAL_SIZE_LIMIT_BYTES = 1 << 20
# Between tries to switch a new database to WAL while another process creates it: that takes
# a few milliseconds, so a short wait keeps a first session's hooks quick.
WAL_RETRY_S = 0.005
# The background full refresh a SessionStart may start runs at most this often.
FULL_REFRESH_INTERVAL_S = 300
# What a row holds depends on how a file is parsed and classified. Bump this when that changes:
# the next full refresh then re-reads every file (rows written by an older parser would keep,
# say, a broken frontmatter's raw YAML as the memory's text until the file changed).
# 2: broken frontmatter is stripped, invalid values recorded; a cold summary's room ignores
#    its generated name.
# 3: a wiki record's `project:` (set when promoted from a session) is its project.
# 4: a file that is not text is marked as such and holds no text; control characters dropped;
#    a critical rule is a rule (feedback, or never/must/always) with an irreversible consequence;
#    a room memory's `project:` is its project.
# 5: versioning keys (valid_from, valid_to, superseded_by, supersedes, forgotten) and the
#    history label in a retired memory's summary and full text.
# 6: a captured memory's provenance (origin, originSessionId, captured_from, confirmed) in
#    ``extra``.
# 7: `paths:` globs (the files a memory is tied to) are read and indexed (entry_paths).
# 8: a file over MAX_FILE_BYTES is not read (was: its first part), an unreadable one says why.
# 9: full text leaves out a description that is its body cut short ("…"): counts change.
PARSER_VERSION = "9"
# Sources whose files a project's machine-independent id seeds the ids of (what sync carries
# under ``projects/<id>/``), and where the ids in force were last applied.
SHARED_SOURCES = ("claude", "cold")
PROJECT_IDS_META = "project_ids"
# Cached derived values (briefs per project and day): enough for many projects, small on disk.
DERIVED_KEEP = 64
# Token cache rows (fixed strings, hot lines the Scribe pre-counts): ~50 bytes each, so the cap
# keeps it near a megabyte.
TOKEN_CACHE_MAX_ROWS = 20_000
# Row sets kept per connection for ``member_filter`` (one per room, project and day a session
# asks about): at 100,000 files a room's set holds ~15,000 rowids, about 1 MB.
MEMBER_SETS_KEEP = 4
# The SQL function ``member_filter`` names (registered on the connection when first used).
MEMBER_FN = "memory_tool_member"
# A kept set follows at most this many entry changes (rows written or removed) by testing them
# again; after more (a rebuild, a first index of a large folder) reading it again is as cheap.
MEMBER_CATCH_UP_MAX = 1_000

ENTRY_COLUMNS = (
    "id", "path", "source", "project", "type", "name", "description", "body", "room",
    "room_origin", "tags", "created", "created_inferred", "updated", "importance", "always",
    "expires", "priority", "dedupe_key", "line", "line_tokens", "summary", "summary_tokens",
    "full_tokens", "mtime_ns", "size", "error", "extra", "valid_from", "valid_to",
    "superseded_by", "supersedes", "forgotten",
)  # fmt: skip


# What a layer or a search may use: every entry but a file whose text memory does not have
# (entry.UNUSABLE: not text, unreadable, too large).
def text_only_sql(alias: str = "") -> str:
    return " AND ".join(f"{alias}error NOT LIKE '{kind}%'" for kind in UNUSABLE_ERRORS)


UNUSABLE_ERRORS = ("not text", "unreadable", "too large")  # entry.UNUSABLE (a test checks)
TEXT_ONLY_SQL = text_only_sql()
# What the loaded layers (L1, L2, L3, the tiers' wiki) may use: a live memory, neither
# superseded nor forgotten, within its valid_from..valid_to days (both inclusive). Two ``?``:
# today's date, twice (``live_params``). ``store.lifecycle.is_live`` says the same in Python.
_LIVE_TEMPLATE = (
    "{a}superseded_by = '' AND {a}forgotten = '' AND ({a}valid_to = '' OR {a}valid_to >= ?) "
    "AND ({a}valid_from = '' OR {a}valid_from <= ?)"
)
LIVE_SQL = _LIVE_TEMPLATE.format(a="")


def live_sql(alias: str = "") -> str:
    """``LIVE_SQL`` with its columns qualified by ``alias`` (``e.``)."""
    return _LIVE_TEMPLATE.format(a=alias)


def live_params() -> tuple[str, str]:
    from ..base.config import today

    day = today().isoformat()
    return day, day


RoomClassifier = Callable[["Entry"], "str | None"]


@record
class RefreshStats:
    scanned: int = 0
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    sessions_added: int = 0

    @property
    def touched(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def _row_values(e: Entry) -> tuple[Any, ...]:
    return (
        e.id, e.path, e.source, e.project, e.type, e.name, e.description, e.body, e.room,
        e.room_origin, json.dumps(e.tags), e.created, int(e.created_inferred), e.updated,
        e.importance, int(e.always), e.expires, e.priority, e.dedupe_key, e.line, e.line_tokens,
        e.summary, e.summary_tokens, e.full_tokens, e.mtime_ns, e.size, e.error,
        json.dumps(e.extra), e.valid_from, e.valid_to, e.superseded_by, e.supersedes,
        e.forgotten,
    )  # fmt: skip


def row_to_entry(row: sqlite3.Row) -> Entry:
    from .entry import Entry

    data = dict(row)
    data.pop("rowid", None)
    try:
        tags, extra = data.get("tags") or "[]", data.get("extra") or "{}"
        data["tags"] = [] if tags == "[]" else json.loads(tags)  # the common case, parse-free
        data["extra"] = {} if extra == "{}" else json.loads(extra)
    except ValueError as exc:
        # We only ever store valid JSON here: garbage means the file is damaged (a truncated
        # index can read back without SQLite noticing). Report it as such, so the damaged
        # index is moved aside and rebuilt instead of failing every hook that reads this row.
        raise sqlite3.DatabaseError(f"damaged index row {data.get('id')!r}: {exc}") from exc
    data["created_inferred"] = bool(data.get("created_inferred"))
    data["always"] = bool(data.get("always"))
    return Entry(**{k: data[k] for k in ENTRY_COLUMNS if k in data})


def is_busy(exc: BaseException) -> bool:
    """Whether a database error means "another process holds it" (locked, busy): the database
    is in use, not damaged, and must never be moved aside for it."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def is_damage(exc: BaseException) -> bool:
    """Whether a database error means the index is damaged (SQLite's "database disk image is
    malformed", "file is not a database", a garbled row), as opposed to busy: what sets it aside."""
    return isinstance(exc, sqlite3.DatabaseError) and not is_busy(exc)


def _use_wal(conn: sqlite3.Connection) -> None:
    """Put the database in WAL mode (it stays so: only the process that creates it switches).
    Switching needs the database to itself, and SQLite answers "database is locked" at once
    instead of waiting out the busy timeout when another process is creating it at the same
    moment (two hooks of a first session), so the switch is retried here. All tries together
    wait at most the busy timeout (each SQLite wait is cut to what is left of it)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    retried = False
    try:
        while True:
            try:
                if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                left_ms = int((deadline - time.monotonic()) * 1000)
                if not is_busy(exc) or left_ms <= 0:
                    raise
                retried = True
                conn.execute(f"PRAGMA busy_timeout={left_ms}")
                time.sleep(WAL_RETRY_S)
    finally:
        if retried:  # the common open never gets here: nothing to put back
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


def _writable(db_path: Path) -> bool:
    """Whether the index may be created or written where it lives (the nearest existing folder
    on its way must be writable, and the file itself if it exists)."""
    here = db_path.parent
    while not here.exists() and here != here.parent:
        here = here.parent
    if not os.access(here, os.W_OK):
        return False
    return not db_path.exists() or os.access(db_path, os.W_OK)


class _Members:
    """A kept row set of ``Index.member_filter``: its rowids, bounds on them (after changes
    the bounds may be wider than the set) and the largest rowid of the entries when it was
    last brought up to date (``upto``: a row inserted since has a larger one, or reuses the
    rowid of a removal entry_changes lists)."""

    __slots__ = ("hi", "lo", "rows", "upto")

    def __init__(self, rows: list[int], upto: int) -> None:
        self.rows = set(rows)
        self.lo, self.hi = min(rows, default=0), max(rows, default=0)
        self.upto = upto

    def update(self, changed: set[int], selected: list[int], upto: int) -> None:
        """``changed`` rowids were removed or changed in place, and rows above ``upto`` were
        added; of all these, ``selected`` pass the filter now (the entries' largest rowid is
        now ``upto``)."""
        if selected:
            low, high = min(selected), max(selected)
            self.lo, self.hi = (min(self.lo, low), max(self.hi, high)) if self.rows else (low, high)
        self.rows -= changed
        self.rows.update(selected)
        self.upto = upto


class Index:
    """A connection to the index plus the operations on it. Use ``Index.open()``."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.room_classifier: RoomClassifier | None = None
        # member_filter's cache: rowid sets by (condition, parameters), up to date with the
        # database as of ``_member_stamp`` and the entry changes up to ``_member_seq``; and the
        # set the SQL function answers from.
        self._member_sets: dict[tuple[str, tuple[Any, ...]], _Members] = {}
        self._member_stamp: tuple[int, int] | None = None
        self._member_seq = 0
        self._members: set[int] = set()
        self._member_fn = False
        self.in_memory = False  # built from the files, nothing on disk (_in_memory)
        # (device, inode) of the file while the hook server keeps this connection (keep_open).
        self._kept: tuple[int, int] | None = None

    # --- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, path: Path | None = None) -> Index:
        """Open (creating if needed); a database that is not readable is moved aside and rebuilt
        from the files on the next refresh."""
        db_path = path or paths.index_file()
        if not _writable(db_path):
            return cls._in_memory(db_path)
        ensure_dir(db_path.parent)
        try:
            return cls._connect(db_path)
        except sqlite3.DatabaseError as exc:
            if is_busy(exc):  # in use by another process, not damaged
                raise
            quarantine(db_path, exc)
            return cls._connect(db_path)

    @classmethod
    def _in_memory(cls, db_path: Path) -> Index:
        """A read-only state folder (a mounted backup, a locked-down home): the index cannot
        be written, but the files can be read, so an index in memory is built from them (the
        brief needs this project's folder only). Nothing is moved aside or written."""
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.row_factory = sqlite3.Row
        apply_migrations(conn)
        idx = cls(conn, db_path)
        idx.in_memory = True
        return idx

    @classmethod
    def from_files(cls, cwd: str | Path, deadline: float) -> Index:
        """An index in memory, built from what a prompt reads (the palace and this project's
        memory folder) while the index on disk is being rebuilt. Folders are read in that order
        until ``deadline`` (time.monotonic()): a huge palace gives a partial answer, not a hook
        killed by its timeout. Nothing is written to disk."""
        from .rooms import room_classifier

        idx = cls._in_memory(paths.index_file())
        idx.room_classifier = room_classifier()
        folders = [tree.claude_folder_of(cwd), *tree.palace_folders()]
        for folder in folders:
            if time.monotonic() > deadline:
                break
            found = {str(p): (mtime, size, folder) for p, mtime, size in tree.scan(folder)}
            idx._sync(found, {}, [])
        idx._record_dirs(folders)
        # refresh_changed_folders works on it (a note written meanwhile is read on the next try).
        idx.set_meta("last_full_refresh", str(int(time.time())))
        return idx

    def rebuilding(self) -> bool:
        """Whether this index replaces a damaged one and has not been filled yet (no full
        refresh since it was set aside): what it holds is partial, so a prompt waits for the
        rebuild or reads the files (runtime.recovery)."""
        return not self.meta("last_full_refresh") and bool(set_aside_copies(self.path))

    @classmethod
    def _connect(cls, db_path: Path) -> Index:
        fresh = not db_path.exists()
        if fresh:
            os.close(os.open(db_path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
        conn = sqlite3.connect(db_path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.row_factory = sqlite3.Row
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            _use_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT_BYTES}")
            apply_migrations(conn)
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return cls(conn, db_path)

    def close(self) -> None:
        if self._kept is not None:
            return  # the hook server's connection (keep_open): it outlives the call
        self.conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- meta and token cache --------------------------------------------------------------
    def meta(self, key: str, default: str = "") -> str:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    @property
    def generation(self) -> int:
        return int(self.meta("generation", "0") or 0)

    @contextlib.contextmanager
    def _no_wait(self) -> Iterator[None]:
        """Cache writes skip a locked database at once instead of waiting out the busy timeout:
        a hook's own timeout (UserPromptSubmit: 10 s) is no longer than that wait."""
        self.conn.execute("PRAGMA busy_timeout=0")
        try:
            yield
        finally:
            self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

    def count_cached(self, text: str) -> int:
        """Exact tokens of a fixed or rarely-changing string (headers, "N more" lines); the
        tokenizer loads only the first time a string is seen on this machine."""
        row = self.conn.execute("SELECT n FROM token_cache WHERE text=?", (text,)).fetchone()
        if row:
            return int(row[0])
        from ..base import tokens

        n = tokens.count(text)
        with contextlib.suppress(sqlite3.OperationalError), self._no_wait():  # locked: answer
            self.conn.execute(
                "INSERT OR REPLACE INTO token_cache(text, n) VALUES (?, ?)", (text, n)
            )
        return n

    def member_filter(self, where: str, params: Sequence[Any], column: str) -> str:
        """An SQL condition, true where ``column`` is the rowid of an entry that ``where``
        (over ``entries e``, with ``params``) selects, for the next statement run.

        Room recall runs a full-text search on every prompt, and joining each match to its
        entries row only to test the filters cost more than ranking the matches: most of the
        search's time at 10,000 files. The rowids the filters select (a room's live memories)
        are read once instead and kept. After a write (this connection's or another's) only the
        entries it added, changed or removed are tested again (``_catch_up``), so a long-lived
        connection (the hook server's) reads a set again only after a large change."""
        stamp = (self.conn.execute("PRAGMA data_version").fetchone()[0], self.conn.total_changes)
        if stamp != self._member_stamp:
            self._member_stamp = stamp
            self._catch_up()
        key = (where, tuple(params))
        kept = self._member_sets.get(key)
        if kept is None:
            kept = _Members(*self._rowids(where, params))
            while len(self._member_sets) >= MEMBER_SETS_KEEP:
                del self._member_sets[next(iter(self._member_sets))]
            self._member_sets[key] = kept
        self._members = kept.rows
        if not self._member_fn:
            self.conn.create_function(MEMBER_FN, 1, self._is_member)
            self._member_fn = True
        if not kept.rows:
            return f"{MEMBER_FN}({column})"
        # The smallest and largest rowid bound the full-text scan (FTS5 seeks its lists to
        # them): a project's own memories, written together, are a narrow range, and the
        # scan of a common word's every match outside it (10 ms at 100,000 files) is skipped.
        return f"{column} >= {kept.lo} AND {column} <= {kept.hi} AND {MEMBER_FN}({column})"

    def _rowids(
        self, where: str, params: Sequence[Any], since: tuple[int, int] | None = None
    ) -> tuple[list[int], int]:
        """The rowids ``where`` selects, and the entries' largest rowid, in one statement (one
        state of the database). With ``since`` (an entry_changes number, a rowid): only among
        the entries changed after that change, or added above that rowid. One string, not a
        row per rowid: at 100,000 files a room's 14,000 rowids took 17 ms as rows, 7 ms as one
        string."""
        rows = "entries e"
        if since is not None:
            # The changed rows drive (CROSS JOIN keeps that order): otherwise the planner
            # scans the room's whole index for the few rows a write touched.
            rows = (
                "(SELECT rid FROM entry_changes WHERE seq > ? UNION "
                "SELECT rowid FROM entries WHERE rowid > ?) c CROSS JOIN entries e"
            )
            where = f"e.rowid = c.rid AND ({where})"
            params = (*since, *params)
        listed, upto = self.conn.execute(
            f"SELECT group_concat(e.rowid), (SELECT coalesce(max(rowid), 0) FROM entries) "
            f"FROM {rows} WHERE {where}",
            params,
        ).fetchone()
        return ([int(r) for r in listed.split(",")] if listed else []), upto

    def _catch_up(self) -> None:
        """After a write: the kept sets follow the entries it added, changed or removed
        (entry_changes, and the rowids above what a set saw); a set further behind than
        MEMBER_CATCH_UP_MAX changes, or behind changes no longer listed, is dropped (read
        again when asked for). A write that touched no entry (token counts, cached briefs)
        leaves them as they are."""
        try:
            newest, oldest, top = self.conn.execute(
                "SELECT coalesce(max(seq), 0), coalesce(min(seq), 0), "
                "(SELECT coalesce(max(rowid), 0) FROM entries) FROM entry_changes"
            ).fetchone()
            since = self._member_seq
            self._member_seq = newest
            behind = [k for k in self._member_sets.values() if newest != since or top != k.upto]
            if not behind:
                return
            added = top - min(k.upto for k in behind)
            if newest < since or oldest > since + 1 or newest - since + added > MEMBER_CATCH_UP_MAX:
                self._member_sets.clear()
                return
            changed = self.conn.execute(
                "SELECT group_concat(rid) FROM entry_changes WHERE seq > ? AND seq <= ?",
                (since, newest),
            ).fetchone()[0]
            rows = {int(r) for r in changed.split(",")} if changed else set()
            for (where, params), kept in self._member_sets.items():
                if kept in behind:
                    kept.update(rows, *self._rowids(where, params, since=(since, kept.upto)))
        except sqlite3.OperationalError:  # no list of changes to follow: read them again
            self._member_sets.clear()

    def _is_member(self, rowid: int) -> bool:
        return rowid in self._members

    def derived_get(self, key: str) -> str | None:
        """A value computed from the index (e.g. a wake-up brief), valid while ``key`` is."""
        row = self.conn.execute("SELECT value FROM derived WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else None

    def derived_put(self, key: str, value: str) -> None:
        with contextlib.suppress(sqlite3.OperationalError), self._no_wait():  # locked: skip it
            self.conn.execute(
                "INSERT OR REPLACE INTO derived(key, value, at) VALUES (?, ?, ?)",
                (key, value, time.time()),
            )
            self.conn.execute(
                "DELETE FROM derived WHERE key NOT IN "
                f"(SELECT key FROM derived ORDER BY at DESC LIMIT {DERIVED_KEEP})"
            )

    # --- reading ---------------------------------------------------------------------------
    def get(self, entry_id: str) -> Entry:
        from .entry import ID_RE, USER_ID_RE

        if not (ID_RE.match(entry_id) or USER_ID_RE.match(entry_id)):
            raise InvalidIdError(entry_id)
        row = self.conn.execute("SELECT * FROM entries WHERE id=?", (entry_id,)).fetchone()
        if row is None:
            # An id this machine gave before the project's id was known (``_parse``): handoffs
            # and cold summaries written then still name it. A scan, on a miss only.
            row = self.conn.execute(
                "SELECT * FROM entries WHERE json_extract(extra, '$.former_id') = ? LIMIT 1",
                (entry_id,),
            ).fetchone()
        if row is None:
            raise UnknownIdError(entry_id)
        return row_to_entry(row)

    def get_current(self, entry_id: str) -> Entry:
        """``get``, as the file is now (``current``): an edited file is read again; a deleted
        one raises DeletedMemoryError instead of showing text that no longer exists."""
        entry = self.get(entry_id)
        fresh = self.current([entry])
        if not fresh:
            raise DeletedMemoryError(entry_id, entry.path)
        return fresh[0]

    def ensure_built(self, cwd: str | Path | None = None) -> bool:
        """Build the index from the files if it never was (deleted, or a new state root): the
        index is derived and safe to delete, so a command must not answer "no memories" from
        an empty one. True when it built."""
        if self.meta("last_full_refresh"):
            return False
        self.refresh(cwd)
        return True

    def query(self, where: str = "1", params: Sequence[Any] = ()) -> list[Entry]:
        sql = f"SELECT * FROM entries WHERE {where} ORDER BY id"
        return [row_to_entry(r) for r in self.conn.execute(sql, params)]

    def distinct_values(self, column: str) -> list[str]:
        """The values in use of a filter column (``room``, ``type`` or ``project``), sorted."""
        if column not in ("room", "type", "project"):  # a column name, never user text
            raise ValueError(column)
        sql = f"SELECT DISTINCT {column} FROM entries"
        return sorted(r[0] for r in self.conn.execute(sql) if r[0])

    # --- what the layers above ask for (SQL stays in this layer) ----------------------------
    # Columns ``entries`` may filter on: names fixed here, never user text.
    FILTER_COLUMNS = frozenset({"source", "project", "type", "room", "path", "description"})

    def entries(self, **equals: str) -> list[Entry]:
        """Entries whose columns equal the given values (``entries(source="cold")``), by id."""
        unknown = set(equals) - self.FILTER_COLUMNS
        if unknown:
            raise ValueError(f"not a filter column: {sorted(unknown)}")
        where = " AND ".join(f"{column} = ?" for column in equals) or "1"
        return self.query(where, tuple(equals.values()))

    def memories(self) -> list[Entry]:
        """Every memory: all entries but the chunks of past session transcripts."""
        return self.query("source != 'session'")

    def get_many(self, ids: Sequence[str]) -> list[Entry]:
        """The entries of ``ids`` that exist, by id."""
        return self.query("id IN (SELECT value FROM json_each(?))", (json.dumps(list(ids)),))

    def identity_facts(self) -> list[Entry]:
        """L1's candidates: what is known about the user, from every project and identity/."""
        return self.query(
            f"type = 'user' AND source != 'session' AND {TEXT_ONLY_SQL} AND {LIVE_SQL}",
            live_params(),
        )

    def project_facts(self, project: str, context_path: str | None = None) -> list[Entry]:
        """L2's own candidates: the rules and facts of ``project``'s memory folder and
        CONTEXT.md. ``context_path``: the working tree's CONTEXT.md, the only one a session
        there loads (every worktree of a repository shares its memory folder, not its thoughts/);
        None takes every CONTEXT.md of the project."""
        facts = self.query(
            "project = ? AND type IN ('project', 'feedback') AND source IN ('claude', 'context') "
            f"AND {TEXT_ONLY_SQL} AND {LIVE_SQL}",
            (project, *live_params()),
        )
        if context_path is None:
            return facts
        return [e for e in facts if e.source != "context" or e.path == context_path]

    def project_references(self, project: str, limit: int) -> list[Entry]:
        """``project``'s references (a ``[REUSE]``: "RateLimit.hit/3 is the one rate limiter")
        and the gotchas filed in a room as its own: L2's background, the ``limit`` most
        important and newest (``recall.layers.l2_background``)."""
        rows = self.conn.execute(
            "SELECT * FROM entries WHERE project = ? AND type = 'reference' "
            "AND source IN ('claude', 'context', 'room') "
            f"AND {TEXT_ONLY_SQL} AND {LIVE_SQL} "
            "ORDER BY importance DESC, created DESC, id LIMIT ?",
            (project, *live_params(), limit),
        )
        return [row_to_entry(r) for r in rows]

    def superseded_texts(self, project: str) -> list[str]:
        """The text of ``project``'s facts and rules that a newer one superseded: what a past
        session's summary may still state as true (``tiers.inject`` leaves such lines out)."""
        rows = self.conn.execute(
            "SELECT body FROM entries WHERE type IN ('project', 'feedback', 'reference') "
            "AND project = ? AND superseded_by != ''",
            (project,),
        )
        return [r[0] for r in rows]

    def pinned_for(self, project: str) -> list[Entry]:
        """Pinned memories (``always: true``) a session in ``project`` loads: a pin in the palace
        (a room, the wiki) holds everywhere; one in a project's own memory folder or CONTEXT.md,
        or a room memory of that project, holds for that project only, like the rest of its
        facts."""
        return self.query(
            "always = 1 AND type != 'user' AND source != 'session' "
            "AND (source NOT IN ('claude', 'context', 'room') OR project IN ('', ?)) "
            f"AND {TEXT_ONLY_SQL} AND {LIVE_SQL}",
            (project, *live_params()),
        )

    def tied_globs(self, project: str) -> list[tuple[str, str]]:
        """(memory file path, glob) of every memory tied to files by ``paths:`` that a session
        of ``project`` may see: its own and every project's (another project's own memories
        stay with it). Few rows: only memories with ``paths:`` have any."""
        rows = self.conn.execute(
            "SELECT path, glob FROM entry_paths WHERE project IN ('', ?)", (project,)
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def by_paths(self, file_paths: Sequence[str]) -> list[Entry]:
        """The text entries stored for these memory file paths (in no particular order)."""
        if not file_paths:
            return []
        marks = ",".join("?" * len(file_paths))
        rows = self.conn.execute(
            f"SELECT * FROM entries WHERE path IN ({marks}) AND {TEXT_ONLY_SQL}", list(file_paths)
        ).fetchall()
        return [row_to_entry(r) for r in rows]

    def captured(self, limit: int = 500) -> list[Entry]:
        """Memories something captured (``origin: capture:<signal>``), newest first, live or
        retired: what the Learned view lists."""
        return [
            row_to_entry(r)
            for r in self.conn.execute(
                "SELECT * FROM entries WHERE source != 'session' "
                "AND json_extract(extra, '$.origin') LIKE 'capture:%' "
                "ORDER BY created DESC, id LIMIT ?",
                (limit,),
            )
        ]

    def project_memory_ids(self, project: str) -> list[str]:
        """Ids of everything in ``project``'s memory folder and CONTEXT.md."""
        sql = "SELECT id FROM entries WHERE project = ? AND source IN ('claude', 'context')"
        return [r[0] for r in self.conn.execute(sql, (project,))]

    def meta_with_prefix(self, prefix: str) -> dict[str, str]:
        """The meta values whose keys start with ``prefix``, keyed by the rest of the key."""
        rows = self.conn.execute(
            "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ?", (len(prefix), prefix)
        )
        return {str(k)[len(prefix) :]: str(v) for k, v in rows}

    def bodies_under(self, prefix: str, min_len: int, max_len: int) -> list[tuple[str, str]]:
        """(path, body) of the entries under the path ``prefix`` whose text length is within
        [min_len, max_len] (a range scan of the path index)."""
        rows = self.conn.execute(
            "SELECT path, body FROM entries WHERE path >= ? AND path < ? "
            "AND length(body) BETWEEN ? AND ?",
            (*prefix_range(prefix), min_len, max_len),
        )
        return [(r[0], r[1]) for r in rows]

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM entries").fetchone()[0])

    # --- writing ---------------------------------------------------------------------------
    def _stored(self, where: str = "1", params: Sequence[Any] = ()) -> dict[str, sqlite3.Row]:
        sql = f"SELECT id, path, mtime_ns, size, source FROM entries WHERE {where}"
        return {r["path"]: r for r in self.conn.execute(sql, params)}

    def _parse(self, items: Iterable[tuple[Path, int, int, tree.Folder]]) -> list[Entry]:
        from . import project_ids
        from .entry import make_id, parse_file

        parsed = []
        shared = project_ids.load()
        for path, mtime, size, folder in sorted(items, key=lambda t: str(t[0])):
            project_id = shared.get(folder.project, "") if folder.source in SHARED_SOURCES else ""
            entry = parse_file(
                path,
                folder.source,
                stable_key=folder.stable_key(path, project_id),
                project=folder.project,
                room=folder.room,
                default_type=folder.default_type,
                st_mtime_ns=mtime,
                st_size=size,
            )
            if project_id and not entry.extra.get("own_id"):
                # The id this machine gave the file before: it still finds it (``get``).
                entry.extra["former_id"] = make_id(entry.type, folder.stable_key(path))
            if folder.team:  # recalled with the palace's own, labelled with its team
                entry.extra["team"] = folder.team
            if not entry.room and self.room_classifier is not None and entry.type != "user":
                room = self.room_classifier(entry)
                if room:
                    entry.room, entry.room_origin = room, "classified"
            parsed.append(entry)
        return parsed

    def _write(self, entries: list[Entry], removed_paths: Iterable[str]) -> None:
        """Apply parsed entries and removals in one short write transaction."""
        removed = list(removed_paths)
        if not entries and not removed:
            return
        from .entry import render

        # Rendering counts tokens (and the first count in a process loads the tokenizer, a few
        # hundred milliseconds): done before the write lock, so that other writers never wait
        # on it. An id that turns out taken (rare) is rendered again inside.
        for e in entries:
            render(e)
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            for p in removed:
                row = conn.execute("SELECT rowid FROM entries WHERE path=?", (p,)).fetchone()
                if row:
                    conn.execute("DELETE FROM entries_fts WHERE rowid=?", (row[0],))
                    conn.execute("DELETE FROM entries WHERE rowid=?", (row[0],))
                conn.execute("DELETE FROM entry_paths WHERE path=?", (p,))
            for e in entries:
                old = conn.execute(
                    "SELECT rowid, id, json_extract(extra, '$.stable_key') FROM entries "
                    "WHERE path=?",
                    (e.path,),
                ).fetchone()
                if old is not None:
                    conn.execute("DELETE FROM entries_fts WHERE rowid=?", (old[0],))
                    conn.execute("DELETE FROM entries WHERE rowid=?", (old[0],))
                    conn.execute("DELETE FROM entry_paths WHERE path=?", (e.path,))
                rendered_as = e.id
                # An id is kept across re-reads while its seed is the same (a clash's salt
                # stays); a new seed (the project's id became known) gives the new id.
                same_seed = old is not None and old[2] == e.extra.get("stable_key", e.path)
                e.id = self._free_id(e, previous=old[1] if old and same_seed else None)
                if e.id != rendered_as:
                    render(e)
                cur = conn.execute(
                    f"INSERT INTO entries({', '.join(ENTRY_COLUMNS)}) "
                    f"VALUES ({', '.join('?' * len(ENTRY_COLUMNS))})",
                    _row_values(e),
                )
                conn.execute(
                    "INSERT INTO entries_fts(rowid, name, description, body, tags, room) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (cur.lastrowid, e.name, e.description, e.body, " ".join(e.tags), e.room),
                )
                globs = e.extra.get("paths")
                if globs:
                    conn.executemany(
                        "INSERT INTO entry_paths(path, glob, project) VALUES (?, ?, ?)",
                        [(e.path, g, e.project) for g in globs],
                    )
            if entries:
                from ..base import tokens

                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('token_method', ?)",
                    (tokens.method(),),
                )
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('generation', '1') "
                "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def write_entries(self, entries: list[Entry]) -> None:
        """Store entries built elsewhere (session chunks), in one transaction."""
        self._write(entries, [])

    def remove_paths_with_prefix(self, prefix: str) -> None:
        self._write([], self.paths_under(prefix))

    def _free_id(self, e: Entry, previous: str | None) -> str:
        """Keep an entry's id across re-indexing; resolve a rare hash clash with a salt."""
        from .entry import make_id

        stable_key = str(e.extra.get("stable_key", e.path))
        if e.extra.get("own_id"):
            row = self.conn.execute("SELECT path FROM entries WHERE id=?", (e.id,)).fetchone()
            if row is None or row[0] == e.path:
                return e.id
            e.error = e.error or f"id {e.id!r} is already used by {row[0]}: given a generated id"
            e.id = make_id(e.type, stable_key)
        elif previous and previous[0] == e.id[0]:
            return previous
        candidate, salt = e.id, 0
        while True:
            row = self.conn.execute("SELECT path FROM entries WHERE id=?", (candidate,)).fetchone()
            if row is None or row[0] == e.path:
                return candidate
            salt += 1
            candidate = make_id(e.type, stable_key, salt)

    def _sync(
        self,
        found: dict[str, tuple[int, int, tree.Folder]],
        stored: dict[str, sqlite3.Row],
        removable: Iterable[str],
    ) -> RefreshStats:
        stats = RefreshStats(scanned=len(found))
        todo = []
        for p, (mtime, size, folder) in found.items():
            old = stored.get(p)
            if old is None:
                stats.added.append(p)
            elif old["mtime_ns"] != mtime or old["size"] != size:
                stats.changed.append(p)
            else:
                continue
            todo.append((Path(p), mtime, size, folder))
        stats.removed = [p for p in removable if p not in found]
        if todo or stats.removed:
            self._write(self._parse(todo), stats.removed)
        return stats

    def refresh(self, cwd: str | Path | None = None, sessions: bool = True) -> RefreshStats:
        """Bring the index in line with every memory file: stat each file, re-read only the new
        and changed ones, drop the deleted ones. File contents are not read when nothing changed."""
        if self.meta("parser_version") != PARSER_VERSION:
            # Rows of an older parser: every file is read again (ids are kept).
            self.conn.execute("UPDATE entries SET mtime_ns = -1 WHERE source != 'session'")
        shared = self._reseed_projects()
        # What the index holds is read before the folders are listed: a memory another
        # process writes and indexes meanwhile must not look deleted (and lose its row).
        stored = self._stored("source != 'session'")
        found: dict[str, tuple[int, int, tree.Folder]] = {}
        folders = tree.all_folders()
        if cwd is not None:
            self._register_session_folders(cwd)
        listed = {str(f.path) for f in folders}
        folders += [f for f in self.registered_folders() if str(f.path) not in listed]
        for folder in folders:
            for p, mtime, size in tree.scan(folder):
                found[str(p)] = (mtime, size, folder)
        self._add_context_files(found, cwd)
        stats = self._sync(found, stored, stored.keys())
        self._record_dirs(folders)
        if sessions:
            stats.sessions_added = self.refresh_sessions()
        self._prune_token_cache()
        self.set_meta("parser_version", PARSER_VERSION)
        self.set_meta(PROJECT_IDS_META, shared)
        self.set_meta("last_full_refresh", str(int(time.time())))
        return stats

    def _reseed_projects(self) -> str:
        """Mark for a re-read the memory of each project whose machine-independent id changed
        since the last full refresh (``project_ids``), so that its ids become the shared ones;
        returns the ids now in force, as recorded in meta."""
        from . import project_ids

        now = project_ids.load()
        try:
            applied = json.loads(self.meta(PROJECT_IDS_META) or "{}")
        except ValueError:
            applied = {}
        changed = sorted(k for k in set(now) | set(applied) if now.get(k) != applied.get(k))
        if changed:
            self.conn.execute(
                "UPDATE entries SET mtime_ns = -1 WHERE source IN "
                f"({', '.join('?' * len(SHARED_SOURCES))}) "
                "AND project IN (SELECT value FROM json_each(?))",
                (*SHARED_SOURCES, json.dumps(changed)),
            )
        return json.dumps(now, sort_keys=True)

    def refresh_sessions(self) -> int:
        """Index what was appended to every transcript since the last call (``sessions``);
        returns the chunks added. Each transcript is read from where the last read stopped."""
        from .sessions import session_chunk, transcript_files
        from .transcript import read_from

        known = {
            r["path"]: r
            for r in self.conn.execute("SELECT path, offset, size, mtime_ns FROM transcripts")
        }
        seen: set[str] = set()
        added = 0
        for path, project in transcript_files():
            key = str(path)
            seen.add(key)
            try:
                st = path.stat()
            except OSError:
                continue
            old = known.get(key)
            if old is not None and old["size"] == st.st_size and old["mtime_ns"] == st.st_mtime_ns:
                continue
            offset = int(old["offset"]) if old is not None else 0
            while True:
                result = read_from(path, offset)
                if result.restarted:  # the file was replaced: forget what it held
                    self.remove_paths_with_prefix(key + "#")
                chunks = [c for c in (session_chunk(e, path, project) for e in result.events) if c]
                self.write_entries(chunks)
                added += len(chunks)
                done = result.offset == offset or result.offset >= st.st_size
                offset = result.offset
                if done:
                    break
            self.conn.execute(
                "INSERT OR REPLACE INTO transcripts(path, offset, size, mtime_ns, project) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, offset, st.st_size, st.st_mtime_ns, project),
            )
        for key in set(known) - seen:
            self.remove_paths_with_prefix(key + "#")
            self.conn.execute("DELETE FROM transcripts WHERE path=?", (key,))
        return added

    def refresh_for_wake(self, cwd: str | Path) -> RefreshStats:
        """The part of a refresh that the wake-up brief depends on, cheap enough for every
        SessionStart: this project's memory folder and identity/ in full; in other projects'
        folders the known user facts, plus a full look where the folder's listing changed
        (a new or deleted file). Edits elsewhere are picked up by the full refresh."""
        own = tree.claude_folder_of(cwd)
        self._register_session_folders(cwd)
        known_dirs = {r[0]: r[1] for r in self.conn.execute("SELECT path, mtime_ns FROM dirs")}
        claude = [f for f in tree.claude_folders() if f.path != own.path] + [own]
        full_scan = [
            f for f in claude if f is own or known_dirs.get(str(f.path)) != tree.dir_mtime(f.path)
        ]
        palace = tree.palace_folders()
        full_scan += [f for f in palace if f.source == "identity"]

        found: dict[str, tuple[int, int, tree.Folder]] = {}
        removable: list[str] = []
        for folder in full_scan:
            # Rows before files (see refresh): a file indexed meanwhile is not "removed".
            removable += self.paths_under(str(folder.path) + os.sep)
            for p, mtime, size in tree.scan(folder):
                found[str(p)] = (mtime, size, folder)
        # Known always-loaded facts in folders not scanned in full: stat them one by one.
        scanned = {str(f.path) for f in full_scan}
        folders_by_path = {str(f.path): f for f in claude + palace}
        for row in self.conn.execute(
            "SELECT path FROM entries WHERE (type='user' OR always=1) "
            "AND source NOT IN ('session', 'context')"
        ):
            p = row[0]
            owner = _folder_of(p, folders_by_path)
            if p in found or owner is None or str(owner.path) in scanned:
                continue
            try:
                st = os.stat(p)
            except OSError:
                removable.append(p)
                continue
            found[p] = (st.st_mtime_ns, st.st_size, owner)
        self._add_context_files(found, cwd, only_cwd=True)
        removable.append(str(paths.context_file(cwd)))
        wanted = sorted(set(found) | set(removable))
        stored = self._stored("path IN (SELECT value FROM json_each(?))", (json.dumps(wanted),))
        stats = self._sync(found, stored, [p for p in removable if p in stored])
        self._record_dirs(full_scan)
        return stats

    # Folders a session registers (meta keys, value = project): a moved auto-memory folder and
    # a working tree's subagent memory, which no scan of the config folder would find.
    MEMORY_DIR_META = "memdir:"
    AGENT_ROOT_META = "agentroot:"

    def _register_session_folders(self, cwd: str | Path) -> None:
        project = paths.project_key(cwd)
        moved = tree.claude_folder_of(cwd).path
        wanted = []
        if moved != paths.projects_dir() / project / "memory":
            wanted.append(self.MEMORY_DIR_META + str(moved))
        agents = tree.project_agent_root(cwd)
        if agents.is_dir():
            wanted.append(self.AGENT_ROOT_META + str(agents))
        for key in wanted:
            if self.meta(key) != project:
                with contextlib.suppress(sqlite3.OperationalError):  # read-only: next time
                    self.set_meta(key, project)

    def registered_folders(self) -> list[tree.Folder]:
        """The folders sessions registered that still exist (see ``_register_session_folders``);
        one folder registered by several projects belongs to the latest."""
        out = []
        for path, project in sorted(self.meta_with_prefix(self.MEMORY_DIR_META).items()):
            if os.path.isdir(path):
                out.append(tree.Folder(Path(path), "claude", project=project))
        for path, project in sorted(self.meta_with_prefix(self.AGENT_ROOT_META).items()):
            out += tree.agent_folders(Path(path), project)
        return out

    def refresh_changed_folders(self, cwd: str | Path) -> RefreshStats:
        """The refresh every prompt can afford: the palace's folders and this project's memory
        folder are stat'ed (about 20 calls), and only a folder whose listing changed (a file
        added, deleted, or saved by an editor's rename) is scanned again. A hand-written note in
        rooms/auth/ is recalled on the next prompt, not after the next full refresh. Edits in
        place are checked where it matters, on the entries about to be shown (``current``).
        Does nothing on an index that was never built: a full build is no job for a hook."""
        if not self.meta("last_full_refresh"):
            return RefreshStats()
        folders = tree.palace_folders() + [tree.claude_folder_of(cwd)]
        folders += tree.agent_folders(tree.user_agent_root())
        folders += tree.agent_folders(tree.project_agent_root(cwd), paths.project_key(cwd))
        known = {r[0]: r[1] for r in self.conn.execute("SELECT path, mtime_ns FROM dirs")}
        stale: list[tree.Folder] = []
        for f in folders:
            mtime = tree.dir_mtime(f.path)
            if mtime is not None and known.get(str(f.path)) != mtime:
                stale.append(f)
        # A palace folder deleted as a whole (rm -r rooms/old): its memories go with it.
        palace = str(paths.state_root()) + os.sep
        listed = {str(f.path) for f in folders}
        gone = [d for d in known if d.startswith(palace) and d not in listed]
        gone = [d for d in gone if not os.path.isdir(d)]
        if not stale and not gone:
            return RefreshStats()
        # Listing times are recorded before the scan: a file added meanwhile changes the folder
        # again and is picked up next time, never lost.
        self._record_dirs(stale)
        found: dict[str, tuple[int, int, tree.Folder]] = {}
        removable: list[str] = []
        for folder in stale + [tree.Folder(Path(d), "room") for d in gone]:
            removable += self.paths_under(str(folder.path) + os.sep)
            if str(folder.path) in listed:
                for p, mtime, size in tree.scan(folder):
                    found[str(p)] = (mtime, size, folder)
        if gone:
            gone_json = json.dumps(gone)
            self.conn.execute(
                "DELETE FROM dirs WHERE path IN (SELECT value FROM json_each(?))", (gone_json,)
            )
        wanted = sorted(set(found) | set(removable))
        stored = self._stored("path IN (SELECT value FROM json_each(?))", (json.dumps(wanted),))
        return self._sync(found, stored, [p for p in removable if p in stored])

    def paths_under(self, prefix: str) -> list[str]:
        """The indexed paths that start with ``prefix`` (a range scan of the path index)."""
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT path FROM entries WHERE path >= ? AND path < ?", prefix_range(prefix)
            )
        ]

    def current(self, entries: Iterable[Entry]) -> list[Entry]:
        """``entries`` as their files are now: one stat each; a file edited since it was indexed
        is read again, a deleted one is dropped from the index and from the result. What a hook
        injects or `get` prints is never an old version of a file (files are the truth)."""
        out: list[Entry] = []
        folders: dict[str, tree.Folder] | None = None
        for e in entries:
            if e.source == "session" or not e.path:
                out.append(e)
                continue
            try:
                st = os.stat(e.path)
            except OSError:
                self._write([], [e.path])
                continue
            if (st.st_mtime_ns, st.st_size) == (e.mtime_ns, e.size):
                out.append(e)
                continue
            if folders is None:
                folders = {str(f.path): f for f in tree.all_folders()}
            folder = _folder_of(e.path, folders)
            if folder is None and e.source == "context":
                folder = tree.Folder(
                    Path(e.path).parent, "context", project=e.project, default_type="project"
                )
            if folder is None:
                out.append(e)  # not under a known folder any more: the full refresh decides
                continue
            self._write(self._parse([(Path(e.path), st.st_mtime_ns, st.st_size, folder)]), [])
            out.append(self.get_by_path(e.path))
        return out

    def _add_context_files(
        self,
        found: dict[str, tuple[int, int, tree.Folder]],
        cwd: str | Path | None,
        only_cwd: bool = False,
    ) -> None:
        """thoughts/CONTEXT.md files: the current project's, and every one seen before."""
        candidates: dict[str, str] = {}
        if not only_cwd:
            for r in self.conn.execute("SELECT path, project FROM entries WHERE source='context'"):
                candidates[r[0]] = r[1]
        if cwd is not None:
            candidates[str(paths.context_file(cwd))] = paths.project_key(cwd)
        for p, project in candidates.items():
            try:
                st = os.stat(p)
            except OSError:
                continue
            folder = tree.Folder(Path(p).parent, "context", project=project, default_type="project")
            found[p] = (st.st_mtime_ns, st.st_size, folder)

    def _prune_token_cache(self) -> None:
        """The cache grows with every distinct line ever counted; past its cap it starts over
        (each string costs one tokenizer load to count again, on a slow path or rarely a hook)."""
        n = self.conn.execute("SELECT count(*) FROM token_cache").fetchone()[0]
        if n > TOKEN_CACHE_MAX_ROWS:
            self.conn.execute("DELETE FROM token_cache")

    def _record_dirs(self, folders: Iterable[tree.Folder]) -> None:
        known = {r[0]: r[1] for r in self.conn.execute("SELECT path, mtime_ns FROM dirs")}
        rows = [(str(f.path), tree.dir_mtime(f.path)) for f in folders]
        rows = [r for r in rows if known.get(r[0]) != r[1]]  # write only what changed
        if rows:
            self.conn.executemany("INSERT OR REPLACE INTO dirs(path, mtime_ns) VALUES (?, ?)", rows)

    def index_file(self, path: Path, folder: tree.Folder) -> Entry:
        """Index one file we just wrote (``add``, ``inbox accept``) without a tree scan."""
        st = os.stat(path)
        self._write(self._parse([(path, st.st_mtime_ns, st.st_size, folder)]), [])
        return self.get_by_path(str(path))

    def remove_file(self, path: Path | str) -> None:
        """Drop one file's entry after deleting the file (the Scribe's rolling window)."""
        self._write([], [str(path)])

    def get_by_path(self, path: str) -> Entry:
        row = self.conn.execute("SELECT * FROM entries WHERE path=?", (path,)).fetchone()
        if row is None:
            raise UnknownIdError(path)
        return row_to_entry(row)

    def rebuild(self, cwd: str | Path | None = None) -> RefreshStats:
        """Re-read every file and transcript, keeping ids. Rows are replaced in place, so
        concurrent readers never see an empty index."""
        self.conn.execute("UPDATE entries SET mtime_ns = -1 WHERE source != 'session'")
        self.conn.execute("DELETE FROM transcripts")
        self.conn.execute("DELETE FROM token_cache")
        return self.refresh(cwd)


def prefix_range(prefix: str) -> tuple[str, str]:
    """Bounds of the paths that start with ``prefix``, for a range scan of the path index
    (``substr(path, ...) = prefix`` read the whole table: 40 ms a SessionStart at 100,000)."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _folder_of(path: str, folders: dict[str, tree.Folder]) -> tree.Folder | None:
    here = os.path.dirname(path)
    while True:
        folder = folders.get(here)
        if folder is not None:
            return folder
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


# The connection a long-lived process keeps between calls (keep_open), and whether it may.
_kept: list[Index] = []
_keeping = [False]


def keep_open(on: bool = True) -> None:
    """Let ``open_index`` hand out one connection that outlives each call (the hook server):
    no open and close per hook, SQLite's page cache stays warm, and what the index caches per
    connection (``member_filter``) is reused until the database changes. ``close`` leaves it
    open; ``release_kept`` ends what a call left unfinished."""
    _keeping[0] = on
    if not on:
        _drop_kept()


def release_kept() -> None:
    """After a call: roll back a transaction it left open, so the kept connection holds no
    lock between calls."""
    for idx in _kept:
        with contextlib.suppress(sqlite3.Error):
            if idx.conn.in_transaction:
                idx.conn.rollback()


def _drop_kept() -> None:
    for idx in _kept:
        idx._kept = None
        with contextlib.suppress(sqlite3.Error):
            idx.conn.close()
    _kept.clear()


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _reuse_kept() -> Index | None:
    """The kept connection while it still reads the index file of this call's state root: a
    file set aside, deleted or replaced (a rebuild, a restore) is opened afresh."""
    if not _kept:
        return None
    idx = _kept[0]
    if idx.path == paths.index_file() and _file_id(idx.path) == idx._kept:
        return idx
    _drop_kept()
    return None


def open_index() -> Index:
    """Open the index, recovering from corruption that only shows on first use. Memories it
    indexes without a room get one from the room classifier (compiled only if needed)."""
    from .rooms import room_classifier

    if _keeping[0]:
        reused = _reuse_kept()
        if reused is not None:
            reused.room_classifier = room_classifier()
            return reused
    idx = Index.open()
    try:
        idx.conn.execute("SELECT count(*) FROM entries").fetchone()
    except sqlite3.DatabaseError as exc:
        idx.close()
        if is_busy(exc):
            raise
        quarantine(idx.path, exc)
        idx = Index.open()
    idx.room_classifier = room_classifier()
    if _keeping[0] and not idx.in_memory and idx.path == paths.index_file():
        file_id = _file_id(idx.path)
        if file_id is not None:
            idx._kept = file_id
            _kept[:] = [idx]
    return idx


def with_recovery(fn: Callable[[Index], Any]) -> Any:
    """Run ``fn`` on the index; if the database turns out corrupt midway, move it aside, rebuild
    from the files and run ``fn`` once more."""
    idx = open_index()
    try:
        return fn(idx)
    except sqlite3.DatabaseError as exc:
        if is_busy(exc):
            raise
        idx.close()
        quarantine(idx.path, exc)
        idx = open_index()
        try:
            return fn(idx)
        except sqlite3.DatabaseError as exc2:
            raise IndexCorruptError(f"the index at {idx.path} cannot be used: {exc2}") from exc2
    finally:
        idx.close()


__all__ = [
    "DIR_MODE",
    "Index",
    "RefreshStats",
    "is_busy",
    "is_damage",
    "open_index",
    "row_to_entry",
    "with_recovery",
]
