"""Two agent processes on one database: an archive or delete in one reaches the sessions
open in the other (its turn cancelled, its client told, nothing more written), and a
bounded stress of mixed operations from both ends with one view and nothing lost.

Both spawn real agents (``python -m examples.archive_agent``) over stdio, in each
protocol version.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from test_archive_agent import SLOW_TURN, TIMEOUT, Agent, RpcError, _archived_update, _update_kind

PROTOCOLS = pytest.mark.parametrize("protocol", [1, 2], ids=["v1", "v2"])


def _stored(db: Path, session_id: str) -> tuple[str | None, list[tuple[str, str]]]:
    """(updated_at, history) of a session, read straight from the database."""
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT updated_at FROM sessions WHERE id = ?", (session_id,)).fetchone()
        history = conn.execute("SELECT role, text FROM messages WHERE session_id = ? ORDER BY seq", (session_id,))
        return (None if row is None else row[0]), list(history)


@PROTOCOLS
@pytest.mark.parametrize("action", ["archive", "archive+unarchive", "delete"])
def test_an_archive_or_delete_elsewhere_cancels_the_turn_here(tmp_path: Path, protocol: int, action: str) -> None:
    db = tmp_path / "agent.sqlite3"
    cwd = "/work/elsewhere"
    here, there = Agent(db, protocol), Agent(db, protocol)
    try:
        sid = here.new_session(cwd)
        assert here.prompt(sid, "first") == (["echo #1: first"], "end_turn")
        prompt_id, start = here.start_prompt(sid, SLOW_TURN + "never answered")
        here.request("session/list", {"cwd": cwd})  # answered after the prompt: its turn is running now
        before = _stored(db, sid)

        sent = time.monotonic()
        if action == "delete":
            assert there.request("session/delete", {"sessionId": sid}) == {}
        else:
            assert there.request("session/archive", {"sessionId": sid}) == {}
            if action == "archive+unarchive":
                # Undone at once, likely before `here` looks: archiving must still stop the work.
                assert there.request("session/unarchive", {"sessionId": sid}) == {}
        acknowledged = time.monotonic()

        end, stop = here.turn_end(sid, prompt_id, start)
        assert stop == "cancelled"
        assert here.replies(sid, start, len(here.log)) == []
        if action == "delete":
            assert not any(_archived_update(sid)(m) for m in here.log)
            assert _stored(db, sid) == (None, [])
        else:
            notified = here.wait_for(_archived_update(sid), start)
            assert notified < end, "the client hears of the archive before the turn's cancelled end"
            # Nothing of the cancelled turn reached the archived session's history.
            assert _stored(db, sid) == before
            print(
                f"\n{action} v{protocol}: noticed {(here.times[notified] - acknowledged) * 1e3:.0f} ms after the "
                f"other process answered ({(here.times[notified] - sent) * 1e3:.0f} ms after the request was sent)"
            )
        # Freed like session/close: no more turns here.
        error = here.error("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "again"}]})
        assert error.code == -32002
        assert _stored(db, sid) == (before if action != "delete" else (None, []))
    finally:
        here.close()
        there.close()


@PROTOCOLS
def test_a_session_archived_elsewhere_while_idle_is_announced_and_freed(tmp_path: Path, protocol: int) -> None:
    db = tmp_path / "agent.sqlite3"
    here, there = Agent(db, protocol), Agent(db, protocol)
    try:
        sid = here.new_session("/work/idle")
        start = len(here.log)
        assert there.request("session/archive", {"sessionId": sid}) == {}
        # No request to `here`: the watch alone finds it.
        index = here.wait_for(_archived_update(sid), start)
        assert [m for m in here.log[start:] if _update_kind(m, sid)] == [here.log[index]]
        error = here.error("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "x"}]})
        assert error.code == -32002 and "not open" in error.data["reason"]
    finally:
        here.close()
        there.close()


def _announced(agent: Agent) -> set[str]:
    """Sessions this agent has told its client were archived."""
    return {
        str(m["params"]["sessionId"])
        for m in list(agent.log)
        if m.get("method") == "session/update" and _archived_update(str(m["params"]["sessionId"]))(m)
    }


# -- stress ------------------------------------------------------------------------------------

OPS = 250  # per process
CWD = "/work/stress"


class _Side:
    """One process's client and what it was told, for the final comparison."""

    def __init__(self, agent: Agent, name: str) -> None:
        self.agent = agent
        self.name = name
        self.created: list[str] = []  # sessions this side created (and prompts in)
        self.replies: dict[str, list[str]] = {}  # acknowledged (end_turn) agent replies per session
        self.last_state: dict[str, str] = {}  # of the other side's sessions: "archived", "unarchived", "deleted"
        self.archived_once: set[str] = set()
        self.errors: list[BaseException] = []


def _drive(me: _Side, other: _Side, seed: int) -> None:
    rng = random.Random(seed)
    agent = me.agent
    try:
        for i in range(OPS):
            op = rng.choices(["new", "prompt", "resume", "state", "list"], [2, 5, 1, 4, 1])[0]
            if op == "new" or not me.created:
                me.created.append(agent.new_session(CWD))
            elif op == "prompt":
                sid = rng.choice(me.created)
                delay = rng.choice(["", "", "/delay 0.02 "])
                try:
                    replies, stop = agent.prompt(sid, f"{delay}{me.name}-{i}")
                except RpcError as exc:
                    assert exc.code == -32002, exc.data  # archived or deleted by the other side
                    continue
                if stop == "end_turn":
                    me.replies.setdefault(sid, []).extend(replies)
                else:
                    assert stop == "cancelled" and replies == []
            elif op == "resume":
                try:
                    assert agent.request("session/resume", {"sessionId": rng.choice(me.created)}) == {}
                except RpcError as exc:
                    assert exc.code in (-32002, -32602)  # deleted, or archived
            elif op == "state":
                theirs = list(other.created)  # only this side changes the state of those
                if not theirs:
                    continue
                sid = rng.choice(theirs)
                action = rng.choices(["archive", "unarchive", "delete"], [5, 4, 1])[0]
                try:
                    assert agent.request(f"session/{action}", {"sessionId": sid}) == {}
                except RpcError as exc:
                    assert exc.code == -32002 and me.last_state.get(sid) == "deleted"
                    continue
                if me.last_state.get(sid) != "deleted":
                    me.last_state[sid] = {"archive": "archived", "unarchive": "unarchived", "delete": "deleted"}[action]
                    if action == "archive":
                        me.archived_once.add(sid)
            else:
                assert agent.list_all(cwd=CWD, archived="include") is not None
    except BaseException as exc:  # reported by the test thread
        me.errors.append(exc)


@PROTOCOLS
def test_two_processes_under_mixed_load_end_with_one_view_and_lose_nothing(tmp_path: Path, protocol: int) -> None:
    db = tmp_path / "agent.sqlite3"
    one, two = _Side(Agent(db, protocol), "one"), _Side(Agent(db, protocol), "two")
    try:
        threads = [
            threading.Thread(target=_drive, args=(one, two, 1)),
            threading.Thread(target=_drive, args=(two, one, 2)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
        assert not one.errors and not two.errors, one.errors + two.errors

        # One view from both ends.
        view_one = one.agent.list_all(cwd=CWD, archived="include")
        view_two = two.agent.list_all(cwd=CWD, archived="include")
        assert view_one == view_two

        # Every acknowledged state change holds.
        listed = {s["sessionId"]: s["archived"] for s in view_one}
        expected: dict[str, bool] = {}
        for owner, changer in ((one, two), (two, one)):
            for sid in owner.created:
                state = changer.last_state.get(sid, "unarchived")
                if state != "deleted":
                    expected[sid] = state == "archived"
        assert listed == expected

        # Every acknowledged reply is stored, and nothing else was written as a reply.
        with sqlite3.connect(db) as conn:
            stored: dict[str, list[str]] = {}
            for sid, text in conn.execute("SELECT session_id, text FROM messages WHERE role = 'agent' ORDER BY seq"):
                stored.setdefault(sid, []).append(text)
        acknowledged = {sid: texts for side in (one, two) for sid, texts in side.replies.items() if sid in expected}
        assert stored == acknowledged

        # Each session the other side archived while it was open here was announced here
        # (unless deleted before this side looked: a deleted session is freed silently).
        for owner, changer in ((one, two), (two, one)):
            due = {sid for sid in changer.archived_once if changer.last_state[sid] != "deleted"}
            deadline = time.monotonic() + TIMEOUT
            while (missing := due - _announced(owner.agent)) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not missing
        assert any(side.archived_once for side in (one, two)), "the load must include archives"
    finally:
        one.agent.close()
        two.agent.close()
