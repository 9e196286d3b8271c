"""R3: one ``session/list`` page of the reference archive agent barely depends on how
many sessions the database holds (keyset pagination on an index, no OFFSET scan).

The subject lists from a database of 100,000 sessions, the baseline from one of 1,000;
both go through the generated v2 ``Router`` into the agent's handler and SQLite, with the
same filters, page size and relative position in the listing.
"""

from __future__ import annotations

import asyncio
import io
import tempfile
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import generated.v2.dispatch
from benchmarks import Ratio, compare
from examples.archive_agent.agent import ArchiveAgent, ArchiveHandlerV2
from examples.archive_agent.stdio import Peer
from examples.archive_agent.store import SessionRow, Store

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


def run() -> list[Ratio]:
    with tempfile.TemporaryDirectory() as tmp:
        large, small = _Lister(Path(tmp, "large.sqlite3"), LARGE), _Lister(Path(tmp, "small.sqlite3"), SMALL)
        try:
            results = [
                compare(
                    "R3",
                    f"session/list first page, default filter: {LARGE:,} vs {SMALL:,} sessions",
                    large.call({}),
                    small.call({}),
                    target=2.0,
                    repeat=7,
                    number=50,
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
                    repeat=7,
                    number=50,
                )
            )
            return results
        finally:
            large.close()
            small.close()
