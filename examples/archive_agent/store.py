"""SQLite persistence of the archive agent: sessions, their history, and list cursors.

One database file may be shared by several agent processes: it runs in WAL mode, every
write is one ``BEGIN IMMEDIATE`` transaction, and readers see only committed state.
``PRAGMA data_version`` tells a process that another one committed, and each session's
``archives`` counter (bumped by every archive) that it was archived, even if it has been
unarchived again since. A
deleted session is removed with its history (no tombstone), so it can never show up in
a listing again nor be unarchived.

Listing is keyset pagination over ``(updated_at DESC, id DESC)``; each filter shape has an
index whose leading columns are the equality filters and whose tail is that order, so a
page costs the same however many sessions precede it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

ArchiveFilter = Literal["exclude", "include", "only"]

_SCHEMA_VERSION = 2  # 2: sessions.archives
_SCHEMA = """
CREATE TABLE IF NOT EXISTS agent_meta (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    title TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    archives INTEGER NOT NULL DEFAULT 0  -- times archived: open sessions compare it
);
-- One index per filter shape: equality columns first, then the listing order.
CREATE INDEX IF NOT EXISTS sessions_by_recency ON sessions (updated_at, id);
CREATE INDEX IF NOT EXISTS sessions_by_state ON sessions (archived, updated_at, id);
CREATE INDEX IF NOT EXISTS sessions_by_cwd ON sessions (cwd, updated_at, id);
CREATE INDEX IF NOT EXISTS sessions_by_cwd_state ON sessions (cwd, archived, updated_at, id);
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('user', 'agent')),
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_session ON messages (session_id, seq);
"""


class CursorError(ValueError):
    """A list cursor that this database did not issue, or issued for other filters."""


@dataclass(frozen=True)
class SessionRow:
    id: str
    cwd: str
    title: str | None
    updated_at: str
    archived: bool
    archives: int = 0  # how many times the session was archived


@dataclass(frozen=True)
class Page:
    sessions: list[SessionRow]
    next_cursor: str | None


def utc_now() -> str:
    """RFC 3339 UTC with fixed width, so that text order is time order."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


_LOCK_TIMEOUT = 10.0  # seconds a write waits for another process's lock


class Store:
    """The agent's database. Not thread-safe: one instance per event loop."""

    def __init__(self, path: str | Path) -> None:
        # isolation_level=None: no implicit transactions; writes open their own below.
        self._db = sqlite3.connect(str(path), isolation_level=None, timeout=_LOCK_TIMEOUT)
        self._enable_wal()
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        with self._write():
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, 1, _SCHEMA_VERSION):
                raise RuntimeError(f"{path}: database schema version {version}, this agent knows {_SCHEMA_VERSION}")
            if version == 1:  # written by an older agent: same data, one counter more
                self._db.execute("ALTER TABLE sessions ADD COLUMN archives INTEGER NOT NULL DEFAULT 0")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
            # The cursor key lives in the database so that every process sharing it, and
            # every restart, accepts the cursors the others handed out.
            self._db.execute(
                "INSERT OR IGNORE INTO agent_meta (key, value) VALUES ('cursor_key', ?)", (secrets.token_bytes(32),)
            )
        self._cursor_key: bytes = self._db.execute("SELECT value FROM agent_meta WHERE key = 'cursor_key'").fetchone()[
            0
        ]

    def _enable_wal(self) -> None:
        # Switching a fresh database to WAL needs an exclusive lock, and SQLite may answer
        # "database is locked" at once, without its busy handler, while another process
        # opens the same new file: retry until the usual lock timeout.
        deadline = time.monotonic() + _LOCK_TIMEOUT
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        # IMMEDIATE takes the write lock up front, so two processes never both read
        # then deadlock upgrading; the connection timeout covers the wait.
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- sessions -----------------------------------------------------------------

    def create(self, cwd: str) -> SessionRow:
        row = SessionRow(f"sess_{uuid.uuid4().hex}", cwd, None, utc_now(), False)
        with self._write() as db:
            db.execute(
                "INSERT INTO sessions (id, cwd, title, created_at, updated_at, archived) VALUES (?, ?, NULL, ?, ?, 0)",
                (row.id, row.cwd, row.updated_at, row.updated_at),
            )
        return row

    def get(self, session_id: str) -> SessionRow | None:
        found = self._db.execute(
            "SELECT id, cwd, title, updated_at, archived, archives FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return None if found is None else SessionRow(found[0], found[1], found[2], found[3], bool(found[4]), found[5])

    def archive_states(self, session_ids: list[str]) -> dict[str, tuple[bool, int]]:
        """``(archived, archives)`` of each of these sessions that still exists."""
        states: dict[str, tuple[bool, int]] = {}
        for start in range(0, len(session_ids), 500):  # stay under SQLite's bound-variable limit
            batch = session_ids[start : start + 500]
            marks = ",".join("?" * len(batch))
            for session_id, archived, archives in self._db.execute(
                f"SELECT id, archived, archives FROM sessions WHERE id IN ({marks})", batch
            ):
                states[session_id] = (bool(archived), archives)
        return states

    def data_version(self) -> int:
        """Changes whenever another connection (another process) has committed since the last call."""
        value: int = self._db.execute("PRAGMA data_version").fetchone()[0]
        return value

    def set_archived(self, session_id: str, archived: bool) -> bool:
        """Set the archive state; False when the session does not exist (never was, or deleted)."""
        with self._write() as db:
            changed = db.execute(
                # Every real archive bumps the counter, so that a process with the session open
                # learns of it even when it was unarchived again before that process looked.
                "UPDATE sessions SET archives = archives + (? AND NOT archived), archived = ? WHERE id = ?",
                (int(archived), int(archived), session_id),
            ).rowcount
        return changed == 1

    def delete(self, session_id: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    # -- history ------------------------------------------------------------------

    def add_message(self, session_id: str, role: Literal["user", "agent"], text: str, archives: int) -> bool:
        """Append to the history and mark the session active now; False, and nothing
        written, if the session is gone, archived, or was archived since its counter was
        ``archives`` (by another process, perhaps, and maybe unarchived again since).

        The first user message also becomes the title, so a listing shows something useful.
        """
        with self._write() as db:
            now = utc_now()
            changed = db.execute(
                "UPDATE sessions SET updated_at = ?, title = COALESCE(title, ?)"
                " WHERE id = ? AND NOT archived AND archives = ?",
                (now, text[:80] if role == "user" else None, session_id, archives),
            ).rowcount
            if changed != 1:
                return False
            db.execute("INSERT INTO messages (session_id, role, text) VALUES (?, ?, ?)", (session_id, role, text))
        return True

    def history(self, session_id: str) -> list[tuple[str, str]]:
        return [
            (role, text)
            for role, text in self._db.execute(
                "SELECT role, text FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
            )
        ]

    # -- listing ------------------------------------------------------------------

    def list_page(self, cwd: str | None, archived: ArchiveFilter, cursor: str | None, limit: int) -> Page:
        """One page, newest activity first. ``cursor`` must come from a page with the same filters."""
        where: list[str] = []
        args: list[object] = []
        if cwd is not None:
            where.append("cwd = ?")
            args.append(cwd)
        if archived != "include":
            where.append("archived = ?")
            args.append(1 if archived == "only" else 0)
        if cursor is not None:
            updated_at, last_id = self._open_cursor(cursor, cwd, archived)
            where.append("(updated_at, id) < (?, ?)")
            args += [updated_at, last_id]
        sql = "SELECT id, cwd, title, updated_at, archived FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at DESC, id DESC LIMIT ?"
        args.append(limit + 1)  # one extra row tells whether another page exists
        rows = [SessionRow(r[0], r[1], r[2], r[3], bool(r[4])) for r in self._db.execute(sql, args)]
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = self.cursor_after(rows[-1], cwd, archived) if more else None
        return Page(rows, next_cursor)

    def explain_list(self, cwd: str | None, archived: ArchiveFilter, with_cursor: bool) -> list[str]:
        """SQLite's query plan for a listing (tests assert that it walks an index, in order)."""
        where = (["cwd = ?"] if cwd is not None else []) + (["archived = ?"] if archived != "include" else [])
        args: list[object] = ([cwd] if cwd is not None else []) + ([0] if archived != "include" else [])
        if with_cursor:
            where.append("(updated_at, id) < (?, ?)")
            args += ["9", "x"]
        sql = "EXPLAIN QUERY PLAN SELECT id, cwd, title, updated_at, archived FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at DESC, id DESC LIMIT 10"
        return [row[3] for row in self._db.execute(sql, args)]

    def _filter_tag(self, cwd: str | None, archived: ArchiveFilter) -> str:
        return hashlib.sha256(json.dumps([cwd, archived]).encode()).hexdigest()[:16]

    def cursor_after(self, last: SessionRow, cwd: str | None, archived: ArchiveFilter) -> str:
        """The cursor of the page that follows ``last`` in the listing with these filters."""
        body = json.dumps([last.updated_at, last.id, self._filter_tag(cwd, archived)], separators=(",", ":")).encode()
        mac = hmac.new(self._cursor_key, body, hashlib.sha256).digest()[:16]
        return f"{_b64(body)}.{_b64(mac)}"

    def _open_cursor(self, cursor: str, cwd: str | None, archived: ArchiveFilter) -> tuple[str, str]:
        try:
            body_text, mac_text = cursor.split(".")
            body, mac = _unb64(body_text), _unb64(mac_text)
        except (ValueError, binascii.Error):
            raise CursorError("malformed cursor") from None
        expected = hmac.new(self._cursor_key, body, hashlib.sha256).digest()[:16]
        if not hmac.compare_digest(mac, expected):
            raise CursorError("cursor was not issued by this agent")
        updated_at, last_id, tag = json.loads(body)
        if tag != self._filter_tag(cwd, archived):
            raise CursorError("cursor belongs to a listing with other cwd/archived filters")
        return str(updated_at), str(last_id)

    # -- bulk loading (benchmarks) -----------------------------------------------

    def insert_many(self, rows: list[SessionRow]) -> None:
        with self._write() as db:
            db.executemany(
                "INSERT INTO sessions (id, cwd, title, created_at, updated_at, archived) VALUES (?, ?, ?, ?, ?, ?)",
                [(r.id, r.cwd, r.title, r.updated_at, r.updated_at, int(r.archived)) for r in rows],
            )
