"""In-process checks of the reference archive agent: the runtime gate of the generated
Router it uses, version negotiation, and the shape of its listing queries."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import generated.v1.dispatch
import generated.v2.dispatch
from examples.archive_agent.agent import ArchiveAgent, ArchiveHandlerV1, ArchiveHandlerV2
from examples.archive_agent.stdio import Peer
from examples.archive_agent.store import SessionRow, Store

ROUTERS = {1: (generated.v1.dispatch.Router, ArchiveHandlerV1), 2: (generated.v2.dispatch.Router, ArchiveHandlerV2)}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "agent.sqlite3")


class Wire:
    """An in-process agent whose stdout is a buffer."""

    def __init__(self, store: Store) -> None:
        self.out = io.BytesIO()
        self.agent = ArchiveAgent(store, Peer(self.out))

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        before = self.out.tell()
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        asyncio.run(self.agent.handle(message))
        lines = self.out.getvalue()[before:].splitlines()
        response: dict[str, Any] = json.loads(lines[-1])
        return response


def _call(router: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = asyncio.run(router.handle_message({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}))
    assert response is not None
    return response


@pytest.mark.parametrize("protocol", [1, 2], ids=["v1", "v2"])
@pytest.mark.parametrize("method", ["session/archive", "session/unarchive"])
def test_with_the_gate_off_archive_methods_are_method_not_found(store: Store, protocol: int, method: str) -> None:
    router_cls, handler_cls = ROUTERS[protocol]
    handler = handler_cls(ArchiveAgent(store, Peer(io.BytesIO())))
    assert _call(router_cls(handler), method, {"sessionId": "sess_x"})["error"]["code"] == -32601
    # The same handler behind an opted-in router reaches the agent (which does not know the ID).
    assert (
        _call(router_cls(handler, unstable_session_archive=True), method, {"sessionId": "sess_x"})["error"]["code"]
        == -32002
    )


@pytest.mark.parametrize("protocol", [1, 2], ids=["v1", "v2"])
def test_with_the_gate_off_the_archived_filter_is_invalid_params(store: Store, protocol: int) -> None:
    router_cls, handler_cls = ROUTERS[protocol]
    router = router_cls(handler_cls(ArchiveAgent(store, Peer(io.BytesIO()))))
    assert _call(router, "session/list", {"archived": "only"})["error"]["code"] == -32602
    assert _call(router, "session/list", {})["result"] == {"sessions": []}


@pytest.mark.parametrize(("asked", "agreed"), [(1, 1), (2, 2), (3, 2), (0, 2)])
def test_initialize_answers_the_clients_version_or_the_latest_supported(store: Store, asked: int, agreed: int) -> None:
    assert Wire(store).call("initialize", {"protocolVersion": asked})["result"]["protocolVersion"] == agreed


def test_initialize_without_a_version_is_invalid_params(store: Store) -> None:
    assert Wire(store).call("initialize", {})["error"]["code"] == -32602


@pytest.mark.parametrize("method", ["session/new", "session/list", "session/archive"])
def test_session_methods_before_initialize_are_refused(store: Store, method: str) -> None:
    assert Wire(store).call(method, {"cwd": "/w", "sessionId": "s"})["error"]["code"] == -32600


def test_a_relative_cwd_is_invalid_params(store: Store) -> None:
    wire = Wire(store)
    wire.call("initialize", {"protocolVersion": 1})
    assert wire.call("session/new", {"cwd": "relative/dir", "mcpServers": []})["error"]["code"] == -32602
    assert wire.call("session/list", {"cwd": "relative/dir"})["error"]["code"] == -32602


@pytest.mark.parametrize("archived", ["exclude", "include", "only"])
@pytest.mark.parametrize("cwd", ["/w", None], ids=["cwd", "no-cwd"])
@pytest.mark.parametrize("with_cursor", [False, True], ids=["first-page", "later-page"])
def test_listing_walks_an_index_in_order_and_seeks_to_the_cursor(
    store: Store, archived: Any, cwd: str | None, with_cursor: bool
) -> None:
    plan = " ".join(store.explain_list(cwd, archived, with_cursor))
    assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, plan
    assert "TEMP B-TREE" not in plan, f"sorts instead of reading in index order: {plan}"
    if with_cursor:
        # The cursor bounds the index range (keyset), rather than skipping rows one by one.
        assert "(updated_at,id)<(?,?)" in plan, plan


_sessions = st.lists(
    st.tuples(st.sampled_from(["/a", "/b"]), st.booleans(), st.integers(0, 5)),  # cwd, archived, timestamp
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(
    rows=_sessions,
    cwd=st.sampled_from(["/a", None]),
    archived=st.sampled_from(["exclude", "include", "only"]),
    limit=st.integers(1, 4),
)
def test_pages_concatenate_to_the_filtered_listing_in_order(
    rows: list[tuple[str, bool, int]], cwd: str | None, archived: Any, limit: int
) -> None:
    # Few distinct timestamps, so that ties (broken by ID) are common.
    store = Store(":memory:")
    sessions = [
        SessionRow(f"sess_{i:03d}", where, None, f"2026-01-01T00:00:0{stamp}.000000Z", state)
        for i, (where, state, stamp) in enumerate(rows)
    ]
    store.insert_many(sessions)
    expected = sorted(
        (
            s
            for s in sessions
            if (cwd is None or s.cwd == cwd) and (archived == "include" or s.archived == (archived == "only"))
        ),
        key=lambda s: (s.updated_at, s.id),
        reverse=True,
    )
    listed: list[SessionRow] = []
    cursor = None
    try:
        while True:
            page = store.list_page(cwd, archived, cursor, limit)
            assert len(page.sessions) <= limit
            listed += page.sessions
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
    finally:
        store.close()
    assert listed == expected


def _open_store(path: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        Store(path).close()
        results.put("ok")
    except Exception as exc:  # reported to the parent, which asserts on it
        results.put(repr(exc))


def test_processes_opening_a_fresh_database_together_all_succeed(tmp_path: Path) -> None:
    """Two agents started at once on a new file both switch it to WAL; SQLite may refuse
    one of them at once ("database is locked") unless the store retries."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    for round_ in range(25):
        path = str(tmp_path / f"fresh-{round_}.sqlite3")
        barrier, results = context.Barrier(2), context.Queue()
        workers = [context.Process(target=_open_store, args=(path, barrier, results)) for _ in range(2)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)
        assert [results.get(timeout=5), results.get(timeout=5)] == ["ok", "ok"], f"round {round_}"


def test_a_database_of_schema_version_1_gains_the_archive_counter(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as old:  # the sessions table as the previous agent wrote it
        old.executescript(
            """
            CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT NOT NULL, title TEXT, created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL, archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)));
            INSERT INTO sessions VALUES ('sess_old', '/w', 'kept', 't', '2026-01-01T00:00:00.000000Z', 1);
            PRAGMA user_version = 1;
            """
        )
    old.close()
    store = Store(path)
    try:
        assert store.get("sess_old") == SessionRow("sess_old", "/w", "kept", "2026-01-01T00:00:00.000000Z", True, 0)
        assert store.set_archived("sess_old", False) and store.set_archived("sess_old", True)
        assert store.archive_states(["sess_old", "sess_gone"]) == {"sess_old": (True, 1)}
    finally:
        store.close()
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA user_version").fetchone()[0] == 2
    check.close()


def test_the_archive_counter_counts_archives_and_guards_history_writes(store: Store) -> None:
    sid = store.create("/w").id
    assert store.add_message(sid, "user", "one", archives=0)
    for archived in (True, True, False, True, False):  # repeats change nothing
        assert store.set_archived(sid, archived)
    assert store.archive_states([sid]) == {sid: (False, 2)}
    # Opened before those archives: its turn may not write, though the session is unarchived now.
    assert not store.add_message(sid, "agent", "late", archives=0)
    assert store.add_message(sid, "agent", "fresh", archives=2)
    store.set_archived(sid, True)
    assert not store.add_message(sid, "agent", "archived", archives=3)
    assert store.history(sid) == [("user", "one"), ("agent", "fresh")]
