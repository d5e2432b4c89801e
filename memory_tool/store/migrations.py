"""Schema changes as an ordered list of named migrations, recorded in the database."""

from __future__ import annotations

import sqlite3

MIGRATIONS: list[tuple[str, str]] = [
    (
        "001_entries",
        """
        CREATE TABLE entries (
            id TEXT NOT NULL UNIQUE,
            path TEXT NOT NULL UNIQUE,
            source TEXT NOT NULL,
            project TEXT NOT NULL DEFAULT '',
            type TEXT NOT NULL,
            name TEXT NOT NULL DEFAULT '',
            description TEXT NOT NULL DEFAULT '',
            body TEXT NOT NULL DEFAULT '',
            room TEXT NOT NULL DEFAULT '',
            room_origin TEXT NOT NULL DEFAULT '',
            tags TEXT NOT NULL DEFAULT '[]',
            created TEXT NOT NULL DEFAULT '',
            created_inferred INTEGER NOT NULL DEFAULT 0,
            updated TEXT NOT NULL DEFAULT '',
            importance INTEGER NOT NULL DEFAULT 3,
            always INTEGER NOT NULL DEFAULT 0,
            expires TEXT NOT NULL DEFAULT '',
            priority INTEGER NOT NULL DEFAULT 3,
            dedupe_key TEXT NOT NULL DEFAULT '',
            line TEXT NOT NULL DEFAULT '',
            line_tokens INTEGER NOT NULL DEFAULT 0,
            summary TEXT NOT NULL DEFAULT '',
            summary_tokens INTEGER NOT NULL DEFAULT 0,
            full_tokens INTEGER NOT NULL DEFAULT 0,
            mtime_ns INTEGER NOT NULL DEFAULT 0,
            size INTEGER NOT NULL DEFAULT 0,
            error TEXT NOT NULL DEFAULT '',
            extra TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX entries_type_project ON entries(type, project);
        CREATE INDEX entries_room ON entries(room);
        CREATE VIRTUAL TABLE entries_fts USING fts5(
            name, description, body, tags, room, tokenize = 'porter unicode61'
        );
        CREATE TABLE dirs (path TEXT PRIMARY KEY, mtime_ns INTEGER);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE token_cache (text TEXT PRIMARY KEY, n INTEGER NOT NULL);
        """,
    ),
    (
        "002_derived_and_layer_indexes",
        """
        CREATE TABLE derived (key TEXT PRIMARY KEY, value TEXT NOT NULL, at REAL NOT NULL);
        CREATE INDEX entries_project_type ON entries(project, type);
        CREATE INDEX entries_always ON entries(always) WHERE always = 1;
        """,
    ),
    (
        "003_transcripts",
        """
        CREATE TABLE transcripts (
            path TEXT PRIMARY KEY,
            offset INTEGER NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            project TEXT NOT NULL
        );
        CREATE INDEX entries_source ON entries(source);
        """,
    ),
    (
        "004_room_rank_index",
        """
        CREATE INDEX entries_room_rank ON entries(room, importance DESC, created DESC);
        """,
    ),
    (
        # Sentence vectors for the optional semantic search (memory_tool/semantic.py): one row
        # per chunk of an entry; digest is that of the embedded text, so an edit re-embeds.
        "005_vectors",
        """
        CREATE TABLE vectors (
            id TEXT NOT NULL,
            chunk INTEGER NOT NULL,
            digest TEXT NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (id, chunk)
        );
        """,
    ),
    (
        # Versioning (store/lifecycle.py): which memories still load. Columns, not ``extra``, so
        # the layers filter in SQL and the doctor follows chains by index.
        "006_lifecycle",
        """
        ALTER TABLE entries ADD COLUMN valid_from TEXT NOT NULL DEFAULT '';
        ALTER TABLE entries ADD COLUMN valid_to TEXT NOT NULL DEFAULT '';
        ALTER TABLE entries ADD COLUMN superseded_by TEXT NOT NULL DEFAULT '';
        ALTER TABLE entries ADD COLUMN supersedes TEXT NOT NULL DEFAULT '';
        ALTER TABLE entries ADD COLUMN forgotten TEXT NOT NULL DEFAULT '';
        """,
    ),
    (
        # The files a memory is tied to (frontmatter ``paths:`` globs, store/globs.py): one row
        # per glob, keyed by the memory's file path, so tool-level recall finds the memories of
        # a file Claude touches without reading every entry's frontmatter.
        "007_entry_paths",
        """
        CREATE TABLE entry_paths (
            path TEXT NOT NULL,
            glob TEXT NOT NULL,
            project TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX entry_paths_path ON entry_paths(path);
        CREATE INDEX entry_paths_project ON entry_paths(project);
        """,
    ),
    (
        # A room's rowids that pass a search's filters (Index.member_filter), read from the
        # index alone: every prompt after a write to the index (the Scribe's, each turn) reads
        # them again, and reading each entry's whole row (bodies included) for five short
        # columns was most of that. Built once: 0.02 s at 10,000 files.
        "008_room_filter_index",
        """
        CREATE INDEX entries_room_filter ON entries(
            room, source, type, project, error, superseded_by, forgotten, valid_to, valid_from
        );
        """,
    ),
    (
        # The rowids of the entries removed or changed in place, in order: a kept connection
        # (the hook server's) brings its room rowid sets (Index.member_filter) up to date from
        # the rows a write touched instead of reading the sets again (a room's set at 100,000
        # files: 7 ms, on every prompt after the Scribe's write). An insert needs no row: SQLite
        # gives a new row a rowid above every rowid there is, so it is either above what a
        # reader saw or reuses the rowid of a row whose removal is listed. Triggers keep it,
        # whichever code (or version of it) writes; the oldest rows go as it passes
        # CHANGES_KEEP.
        "009_entry_changes",
        """
        CREATE TABLE entry_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, rid INTEGER NOT NULL);
        CREATE TRIGGER entry_changes_delete AFTER DELETE ON entries BEGIN
            INSERT INTO entry_changes(rid) VALUES (old.rowid);
        END;
        CREATE TRIGGER entry_changes_update AFTER UPDATE ON entries BEGIN
            INSERT INTO entry_changes(rid) VALUES (old.rowid);
            INSERT INTO entry_changes(rid) SELECT new.rowid WHERE new.rowid != old.rowid;
        END;
        CREATE TRIGGER entry_changes_prune AFTER INSERT ON entry_changes
        WHEN new.seq % 1024 = 0 BEGIN
            DELETE FROM entry_changes WHERE seq <= new.seq - 4096;
        END;
        """,
    ),
]
# entry_changes keeps at least this many rows (009's prune trigger): a kept connection at most
# this many changes behind brings its sets up to date; one further behind reads them again.
CHANGES_KEEP = 4096


def statements(sql: str) -> list[str]:
    """The statements of a migration (a trigger's body has semicolons of its own)."""
    out, pending = [], ""
    for part in sql.split(";"):
        pending += part + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                out.append(pending)
            pending = ""
    return out


def apply_migrations(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {r[0] for r in conn.execute("SELECT name FROM migrations")}
    pending = [(n, sql) for n, sql in MIGRATIONS if n not in done]
    if not pending:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        done = {r[0] for r in conn.execute("SELECT name FROM migrations")}  # another process won
        for name, sql in pending:
            if name in done:
                continue
            for statement in statements(sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO migrations(name, applied_at) VALUES (?, datetime('now'))", (name,)
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
