"""R3: one ``session/list`` page of the reference archive agent barely depends on how
many sessions the database holds (keyset pagination on an index, no OFFSET scan).

The subject lists from a database of 100,000 sessions, the baseline from one of 1,000;
both go through the generated v2 ``Router`` into the agent's handler and SQLite, with the
same filters, page size and relative position in the listing.

R4: how long a process takes to notice that another one archived a session open on its
connection: two agent processes on one database, the time from sending
``session/archive`` to the second process until the first one's
``session_info_update`` reaches its client, worst of 20 rounds, against the 200 ms the
agent promises (docs/agent.md).
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import queue
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

import generated.v2.dispatch
from benchmarks import SAMPLE_S, Ratio, compare
from examples.archive_agent.agent import ArchiveAgent, ArchiveHandlerV2
from examples.archive_agent.stdio import Peer
from examples.archive_agent.store import SessionRow, Store

ROOT = Path(__file__).resolve().parent.parent
LARGE, SMALL = 100_000, 1_000
CWDS = 2
PAGE_SIZE = 50


def _fill(store: Store, count: int) -> list[SessionRow]:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    rows = [
        SessionRow(
            id=f"sess_{i:08d}",
            cwd=f"/work/project-{i % CWDS}",
            title=f"session {i}",
            updated_at=(start + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            archived=i % 3 == 0,
        )
        for i in range(count)
    ]
    store.insert_many(rows)
    return rows


class _Lister:
    """One database and a v2 router over the agent, answering list requests in one loop."""

    def __init__(self, path: Path, count: int) -> None:
        self.store = Store(path)
        self.rows = _fill(self.store, count)
        agent = ArchiveAgent(self.store, Peer(io.BytesIO()), page_size=PAGE_SIZE)
        self.router = generated.v2.dispatch.Router(ArchiveHandlerV2(agent), unstable_session_archive=True)
        self.loop = asyncio.new_event_loop()

    def call(self, params: dict[str, Any]) -> Callable[[], object]:
        message = {"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": params}

        def run() -> object:
            response = self.loop.run_until_complete(self.router.handle_message(message))
            assert response is not None and len(response["result"]["sessions"]) == PAGE_SIZE, response
            return response

        return run

    def middle_cursor(self, cwd: str, archived: Any) -> str:
        """A cursor halfway down the listing for these filters (newest first)."""
        matching = [r for r in self.rows if r.cwd == cwd and (r.archived if archived == "only" else not r.archived)]
        return self.store.cursor_after(matching[len(matching) // 2], cwd, archived)

    def close(self) -> None:
        self.loop.close()
        self.store.close()


class _Process:
    """A spawned agent; every line it writes lands in ``inbox`` with its arrival time."""

    def __init__(self, db: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "examples.archive_agent", "--db", str(db)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.inbox: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self._ids = itertools.count(1)
        threading.Thread(target=self._read, daemon=True).start()
        self.call("initialize", {"protocolVersion": 2})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.inbox.put((time.perf_counter(), json.loads(line)))

    def send(self, method: str, params: dict[str, Any]) -> int:
        assert self.proc.stdin is not None
        request_id = next(self._ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        return request_id

    def wait(self, match: Callable[[dict[str, Any]], bool]) -> tuple[float, dict[str, Any]]:
        while True:
            arrived, message = self.inbox.get(timeout=30)
            if match(message):
                return arrived, message

    def call(self, method: str, params: dict[str, Any]) -> Any:
        request_id = self.send(method, params)
        return self.wait(lambda m: m.get("id") == request_id and "method" not in m)[1]["result"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _archived_notice(session_id: str, message: dict[str, Any]) -> bool:
    return (
        message.get("method") == "session/update"
        and message["params"]["sessionId"] == session_id
        and message["params"]["update"].get("archived") is True
    )


def _notice_delay(tmp: str, rounds: int = 20) -> float:
    """Worst seconds, over ``rounds``, from sending session/archive to process B until
    process A, which has the session open, tells its client."""
    db = Path(tmp, "shared.sqlite3")
    here, there = _Process(db), _Process(db)
    rng = random.Random(0)
    delays = []
    try:
        for _ in range(rounds):
            session_id = here.call("session/new", {"cwd": "/work/notice", "mcpServers": []})["sessionId"]
            time.sleep(rng.uniform(0, 0.1))  # any phase of the watcher's polling
            sent = time.perf_counter()
            there.call("session/archive", {"sessionId": session_id})
            noticed, _ = here.wait(partial(_archived_notice, session_id))
            delays.append(noticed - sent)
    finally:
        here.close()
        there.close()
    return max(delays)


def run() -> list[Ratio]:
    with tempfile.TemporaryDirectory() as tmp:
        notice = Ratio(
            "R4",
            "cross-process archive noticed, worst of 20, vs the 200 ms promise",
            _notice_delay(tmp),
            0.2,
            target=1.0,
        )
        large, small = _Lister(Path(tmp, "large.sqlite3"), LARGE), _Lister(Path(tmp, "small.sqlite3"), SMALL)
        try:
            results = [
                compare(
                    "R3",
                    f"session/list first page, default filter: {LARGE:,} vs {SMALL:,} sessions",
                    large.call({}),
                    small.call({}),
                    target=2.0,
                    repeat=15,
                    sample_s=SAMPLE_S,
                )
            ]
            cwd = "/work/project-1"
            results.append(
                compare(
                    "R3",
                    f"session/list mid-listing page, cwd + archived=only: {LARGE:,} vs {SMALL:,} sessions",
                    large.call({"cwd": cwd, "archived": "only", "cursor": large.middle_cursor(cwd, "only")}),
                    small.call({"cwd": cwd, "archived": "only", "cursor": small.middle_cursor(cwd, "only")}),
                    target=2.0,
                    repeat=15,
                    sample_s=SAMPLE_S,
                )
            )
            return [*results, notice]
        finally:
            large.close()
            small.close()
