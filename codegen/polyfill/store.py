"""Where the polyfill keeps archive state: one SQLite file per user, shared by every
polyfill process (an editor may run several, and two editors may run the same agent).

WAL and a busy timeout make concurrent processes wait for each other instead of failing;
each write is one statement (SQLite makes it a transaction of its own), so what one
process commits the next read of any other sees. Rows are keyed by the agent (see
``agent_key``) and the session id, so that two agents' sessions never mix.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import sqlite3
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

BUSY_TIMEOUT_MS = 10_000
FILE_NAME = "polyfill.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS agents (key TEXT PRIMARY KEY, command TEXT NOT NULL, cwd TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    agent TEXT NOT NULL,
    id TEXT NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0,
    deleted INTEGER NOT NULL DEFAULT 0,
    cwd TEXT,
    changed_at REAL NOT NULL,
    PRIMARY KEY (agent, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS opened (
    agent TEXT NOT NULL,
    id TEXT NOT NULL,
    cwd TEXT NOT NULL,
    title TEXT,
    active_at REAL NOT NULL,
    PRIMARY KEY (agent, id)
) WITHOUT ROWID;
"""


def default_path() -> Path:
    """The per-user state file: ``$XDG_STATE_HOME/acp-codegen`` (``~/.local/state``) on
    Linux and other Unix systems, ``~/Library/Application Support/acp-codegen`` on macOS,
    ``%LOCALAPPDATA%\\acp-codegen`` on Windows."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        state = os.environ.get("XDG_STATE_HOME", "")
        base = Path(state) if os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "acp-codegen" / FILE_NAME


def agent_key(command: Sequence[str], cwd: str) -> tuple[str, str]:
    """(key, readable form) of an agent: its command, the program resolved on PATH (so that
    ``fast-agent-acp`` and its full path are one agent), and the directory it runs in (many
    agents keep their sessions per directory). Two agents' session ids, which each agent
    chooses on its own, never meet in one key."""
    program = shutil.which(command[0]) or command[0]
    readable = json.dumps([os.path.abspath(program) if os.sep in program else program, *command[1:]])
    key = hashlib.sha256(json.dumps([readable, cwd]).encode()).hexdigest()[:32]
    return key, readable


def _set_up(db: sqlite3.Connection) -> None:
    """WAL and the tables. SQLite answers "locked" at once, without waiting for the busy
    timeout, when two processes switch a new file to WAL together (one of them would
    deadlock); every step is idempotent, so the loser tries again until the timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.executescript(_SCHEMA)
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


class Store:
    """Archive and deletion state of one agent's sessions, and the sessions opened through
    the polyfill (the version bridge lists them for an agent that cannot list: a
    ``SessionIndex``). Thread-safe (one connection, one lock): the polyfill's workers and
    its relay thread share it."""

    def __init__(self, path: Path, command: Sequence[str], cwd: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
        self._lock = threading.Lock()
        self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _set_up(self._db)
        self.agent, readable = agent_key(command, cwd)
        self._db.execute("INSERT OR IGNORE INTO agents VALUES (?, ?, ?)", (self.agent, readable, cwd))
        # The cursors' signing key: the same for every process, so a cursor one process gave
        # can be followed through another (and after a restart).
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('cursor-key', ?)", (secrets.token_hex(32),))
        (key,) = self._db.execute("SELECT value FROM meta WHERE key = 'cursor-key'").fetchone()
        self.cursor_key = bytes.fromhex(key)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def states(self, ids: Iterable[str]) -> dict[str, tuple[bool, bool]]:
        """{id: (archived, deleted)} of the sessions among ``ids`` that have a row; the
        others are unarchived and not known deleted."""
        wanted = list(dict.fromkeys(ids))
        found: dict[str, tuple[bool, bool]] = {}
        with self._lock:
            for start in range(0, len(wanted), 500):  # (SQLite's bound on parameters)
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT id, archived, deleted FROM sessions WHERE agent = ? AND id IN ({marks})",
                    (self.agent, *chunk),
                )
                found.update({row[0]: (bool(row[1]), bool(row[2])) for row in rows})
        return found

    def state(self, session_id: str) -> tuple[bool, bool]:
        return self.states([session_id]).get(session_id, (False, False))

    def cwd(self, session_id: str) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT cwd FROM sessions WHERE agent = ? AND id = ?", (self.agent, session_id)
            ).fetchone()
        return None if row is None else row[0]

    def set_archived(self, session_id: str, archived: bool, cwd: str | None) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO sessions (agent, id, archived, cwd, changed_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (agent, id) DO UPDATE SET archived = excluded.archived,"
                " cwd = COALESCE(excluded.cwd, sessions.cwd), changed_at = excluded.changed_at",
                (self.agent, session_id, int(archived), cwd, time.time()),
            )

    def opened(self, session_id: str, cwd: str, title: str | None = None) -> None:
        """A session was created, resumed or prompted through the polyfill (a title: the
        agent named it)."""
        with self._lock:
            self._db.execute(
                "INSERT INTO opened VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent, id) DO UPDATE SET"
                " cwd = excluded.cwd, title = COALESCE(excluded.title, opened.title), active_at = excluded.active_at",
                (self.agent, session_id, cwd, title, time.time()),
            )

    def sessions(self) -> list[dict[str, Any]]:
        """The sessions opened through the polyfill and not deleted, the most recently active
        first, as v1's ``SessionInfo``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT o.id, o.cwd, o.title, o.active_at FROM opened o LEFT JOIN sessions s"
                " ON s.agent = o.agent AND s.id = o.id WHERE o.agent = ? AND COALESCE(s.deleted, 0) = 0"
                " ORDER BY o.active_at DESC, o.id",
                (self.agent,),
            ).fetchall()
        out = []
        for session_id, cwd, title, active_at in rows:
            when = datetime.fromtimestamp(active_at, timezone.utc).isoformat().replace("+00:00", "Z")
            out.append({"sessionId": session_id, "cwd": cwd, "updatedAt": when, **({"title": title} if title else {})})
        return out

    def set_deleted(self, session_id: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO sessions (agent, id, deleted, changed_at) VALUES (?, ?, 1, ?)"
                " ON CONFLICT (agent, id) DO UPDATE SET deleted = 1, changed_at = excluded.changed_at",
                (self.agent, session_id, time.time()),
            )
