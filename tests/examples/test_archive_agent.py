"""End-to-end behaviour of the reference archive agent (``examples/archive_agent``).

Every test drives a spawned agent process over its real stdin/stdout, once per protocol
version. Most share one agent per version (each test works in its own ``cwd``); the
restart and two-process tests start their own.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from support import ROOT

import generated.v1.models
import generated.v2.models

PAGE_SIZE = 3
TIMEOUT = 20.0  # generous: only a failing test waits this long
SLOW_TURN = "/delay 60 "  # outlasts TIMEOUT: a slow turn that ends during a test was cancelled

Message = dict[str, Any]


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error)
        self.code = error["code"]
        self.data = error.get("data")


class Agent:
    """A spawned agent and a small synchronous JSON-RPC client for it.

    Every message the agent writes is kept in ``log``, in wire order, so tests can assert
    on ordering (e.g. a notification sent before a response)."""

    def __init__(self, db: Path, protocol: int, page_size: int = PAGE_SIZE, initialize: bool = True) -> None:
        self.protocol = protocol
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "examples.archive_agent", "--db", str(db), "--page-size", str(page_size)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.log: list[Message] = []
        self.times: list[float] = []  # time.monotonic() when each message of ``log`` arrived
        self.invalid: list[bytes] = []  # output lines that are not strict JSON (there must be none)
        self._changed = threading.Condition()
        self._ids = itertools.count(1)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.init: dict[str, Any] = {}
        if initialize:
            self.initialize()

    def initialize(self) -> None:
        self.init = self.request("initialize", {"protocolVersion": self.protocol, "clientCapabilities": {}})
        assert self.init["protocolVersion"] == self.protocol

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = strict_json(line)
            except ValueError:
                self.invalid.append(line)
                continue
            with self._changed:
                self.log.append(message)
                self.times.append(time.monotonic())
                self._changed.notify_all()

    # -- sending

    def send_raw(self, text: str | bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((text.encode() if isinstance(text, str) else text) + b"\n")
        self.proc.stdin.flush()

    def send(self, method: str, params: dict[str, Any]) -> int:
        request_id = next(self._ids)
        self.send_raw(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        return request_id

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send_raw(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}))

    # -- waiting

    def wait_for(self, match: Callable[[Message], bool], start: int = 0) -> int:
        """Index in ``log`` of the first message from ``start`` on that matches."""
        deadline = time.monotonic() + TIMEOUT
        with self._changed:
            while True:
                for i in range(start, len(self.log)):
                    if match(self.log[i]):
                        return i
                left = deadline - time.monotonic()
                assert left > 0, f"no matching message; got {self.log[start:]}"
                self._changed.wait(left)

    def response_index(self, request_id: int) -> int:
        return self.wait_for(lambda m: m.get("id") == request_id and "method" not in m)

    def result(self, request_id: int) -> Any:
        response = self.log[self.response_index(request_id)]
        if "error" in response:
            raise RpcError(response["error"])
        return response["result"]

    def request(self, method: str, params: dict[str, Any]) -> Any:
        return self.result(self.send(method, params))

    def error(self, method: str, params: dict[str, Any]) -> RpcError:
        with pytest.raises(RpcError) as caught:
            self.request(method, params)
        return caught.value

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=TIMEOUT) == 0
        self._reader.join(timeout=TIMEOUT)
        assert self.invalid == [], "every line the agent writes must be strict JSON"

    # -- ACP helpers

    def new_session(self, cwd: str) -> str:
        session_id: str = self.request("session/new", {"cwd": cwd, "mcpServers": []})["sessionId"]
        return session_id

    def start_prompt(self, session_id: str, text: str) -> tuple[int, int]:
        """Send session/prompt; return (request id, log position before it)."""
        start = len(self.log)
        return self.send("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}), start

    def turn_end(self, session_id: str, request_id: int, start: int) -> tuple[int, str]:
        """(log index, stop reason) of the end of a turn: the prompt response in v1, the
        idle ``state_update`` in v2 (whose prompt response only acknowledges)."""
        if self.protocol == 1:
            index = self.response_index(request_id)
            return index, self.result(request_id)["stopReason"]
        # v2's PromptResponse requires messageId, the id the turn's message chunks carry.
        assert set(self.result(request_id)) == {"messageId"}
        index = self.wait_for(
            lambda m: _update_kind(m, session_id) == "state_update" and m["params"]["update"]["state"] == "idle", start
        )
        return index, self.log[index]["params"]["update"]["stopReason"]

    def replies(self, session_id: str, start: int, end: int) -> list[str]:
        return [
            m["params"]["update"]["content"]["text"]
            for m in self.log[start:end]
            if _update_kind(m, session_id) == "agent_message_chunk"
        ]

    def prompt(self, session_id: str, text: str) -> tuple[list[str], str]:
        """Run a whole turn: (agent replies, stop reason)."""
        request_id, start = self.start_prompt(session_id, text)
        end, stop = self.turn_end(session_id, request_id, start)
        return self.replies(session_id, start, end), stop

    def list_all(self, **params: Any) -> list[dict[str, Any]]:
        """Every page of session/list for these filters."""
        sessions: list[dict[str, Any]] = []
        cursor = None
        for _ in range(10_000):
            page = self.request("session/list", {**params, **({"cursor": cursor} if cursor else {})})
            assert len(page["sessions"]) <= PAGE_SIZE
            sessions += page["sessions"]
            cursor = page.get("nextCursor")
            if cursor is None:
                return sessions
            assert page["sessions"], "a page with a next cursor must not be empty"
        raise AssertionError("pagination does not end")

    def states(self, cwd: str, archived: str | None = "include") -> dict[str, bool]:
        params: dict[str, Any] = {"cwd": cwd}
        if archived is not None:
            params["archived"] = archived
        return {s["sessionId"]: s["archived"] for s in self.list_all(**params)}


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(line: bytes) -> Any:
    """Parse like a strict peer: UTF-8, no NaN/Infinity, no lone surrogate in any string."""
    value = json.loads(line.decode("utf-8"), parse_constant=_refuse_constant)
    # Infinity from an out-of-range number (1e400), UnicodeEncodeError from a lone surrogate:
    json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return value


def _update_kind(message: Message, session_id: str) -> str | None:
    if message.get("method") != "session/update" or message["params"]["sessionId"] != session_id:
        return None
    kind: str = message["params"]["update"]["sessionUpdate"]
    return kind


def _archived_update(session_id: str) -> Callable[[Message], bool]:
    def match(m: Message) -> bool:
        return _update_kind(m, session_id) == "session_info_update" and m["params"]["update"].get("archived") is True

    return match


@pytest.fixture(scope="module", params=[1, 2], ids=["v1", "v2"])
def agent(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    running = Agent(tmp_path_factory.mktemp(f"agent-v{request.param}") / "agent.sqlite3", request.param)
    yield running
    running.close()


@pytest.fixture
def cwd() -> str:
    """A working directory no other test uses, so listings filtered by it are this test's own."""
    return f"/work/project-{uuid.uuid4().hex[:12]}"


# -- initialize -----------------------------------------------------------------------------


def test_initialize_advertises_archive_in_the_negotiated_versions_shape(agent: Agent) -> None:
    if agent.protocol == 1:
        caps = agent.init["agentCapabilities"]["sessionCapabilities"]
        assert {"list", "delete", "close", "archive"} <= caps.keys()
        assert agent.init["agentCapabilities"]["loadSession"] is True
        assert all(caps[k] == {} for k in ("list", "delete", "close", "archive"))
        assert "capabilities" not in agent.init
    else:
        session = agent.init["capabilities"]["session"]
        # v2: the `session` object itself promises list and close; delete and archive are explicit.
        assert session["delete"] == {} and session["archive"] == {}
        assert agent.init["info"]["name"]
        assert "agentCapabilities" not in agent.init


# -- restoration and retries ----------------------------------------------------------------


def test_archive_then_unarchive_restores_the_same_session_with_its_history(agent: Agent, cwd: str) -> None:
    sid = agent.new_session(cwd)
    assert agent.prompt(sid, "first question") == (["echo #1: first question"], "end_turn")
    assert agent.request("session/close", {"sessionId": sid}) == {}
    start = len(agent.log)

    assert agent.request("session/archive", {"sessionId": sid}) == {}
    assert agent.states(cwd, None) == {}
    [archived] = agent.list_all(cwd=cwd, archived="only")
    assert archived["sessionId"] == sid and archived["archived"] is True and archived["title"] == "first question"

    assert agent.request("session/unarchive", {"sessionId": sid}) == {}
    assert agent.states(cwd, None) == {sid: False}
    assert agent.states(cwd, "only") == {}
    # Not open: no notification went to the client for a session it did not have open.
    assert not any(_update_kind(m, sid) for m in agent.log[start:])

    assert agent.request("session/resume", {"sessionId": sid}) == {}
    assert agent.prompt(sid, "second") == (["echo #2: second"], "end_turn")

    if agent.protocol == 1:  # v1 can also load a session, replaying the history kept through it all
        agent.request("session/close", {"sessionId": sid})
        start = len(agent.log)
        assert agent.request("session/load", {"sessionId": sid, "cwd": cwd, "mcpServers": []}) == {}
        replayed = [
            (m["params"]["update"]["sessionUpdate"], m["params"]["update"]["content"]["text"])
            for m in agent.log[start:]
            if _update_kind(m, sid)
        ]
        assert replayed == [
            ("user_message_chunk", "first question"),
            ("agent_message_chunk", "echo #1: first question"),
            ("user_message_chunk", "second"),
            ("agent_message_chunk", "echo #2: second"),
        ]


@pytest.mark.parametrize("method", ["session/archive", "session/unarchive"])
def test_repeating_archive_or_unarchive_succeeds_and_keeps_the_state(agent: Agent, cwd: str, method: str) -> None:
    sid = agent.new_session(cwd)
    for _ in range(3):
        assert agent.request(method, {"sessionId": sid}) == {}
        assert agent.states(cwd) == {sid: method == "session/archive"}


# -- pagination -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def paged(agent: Agent) -> tuple[str, dict[str, bool]]:
    """Eight sessions in one cwd, three of them archived, plus some in another cwd."""
    cwd = f"/work/paged-{uuid.uuid4().hex[:12]}"
    states = {agent.new_session(cwd): False for _ in range(8)}
    for sid in list(states)[1::3]:
        agent.request("session/archive", {"sessionId": sid})
        states[sid] = True
    agent.new_session(cwd + "-other")
    return cwd, states


@pytest.mark.parametrize("archived", [None, "exclude", "include", "only"])
@pytest.mark.parametrize("with_cwd", [True, False], ids=["cwd", "no-cwd"])
def test_pages_cover_the_filtered_sessions_once_each(
    agent: Agent, paged: tuple[str, dict[str, bool]], archived: str | None, with_cwd: bool
) -> None:
    cwd, states = paged
    params: dict[str, Any] = {}
    if archived is not None:
        params["archived"] = archived
    if with_cwd:
        params["cwd"] = cwd
    listed = agent.list_all(**params)

    ids = [s["sessionId"] for s in listed]
    assert len(ids) == len(set(ids)), "a session appeared on two pages"
    assert all(isinstance(s["archived"], bool) for s in listed)
    assert [s["updatedAt"] for s in listed] == sorted((s["updatedAt"] for s in listed), reverse=True)
    wanted = {"only": {True}, "include": {True, False}}.get(archived or "exclude", {False})
    assert all(s["archived"] in wanted for s in listed)
    if with_cwd:
        assert {s["cwd"] for s in listed} == {cwd}
    mine = {s["sessionId"]: s["archived"] for s in listed if s["cwd"] == cwd}
    assert mine == {sid: state for sid, state in states.items() if state in wanted}, "a session is missing"


@pytest.mark.parametrize(
    "change",
    [
        {"archived": "only"},
        {"archived": "include"},
        {"cwd": "/work/elsewhere"},
        {"cwd": None},
    ],
    ids=["archived-only", "archived-include", "other-cwd", "no-cwd"],
)
def test_a_cursor_used_with_other_filters_is_invalid_params(
    agent: Agent, paged: tuple[str, dict[str, bool]], change: dict[str, Any]
) -> None:
    cwd, _ = paged
    first = agent.request("session/list", {"cwd": cwd})
    assert first["nextCursor"]
    params = {"cwd": cwd, "cursor": first["nextCursor"], **change}
    params = {k: v for k, v in params.items() if v is not None}
    assert agent.error("session/list", params).code == -32602


def test_omitted_and_exclude_share_a_pagination_sequence(agent: Agent, paged: tuple[str, dict[str, bool]]) -> None:
    cwd, _ = paged
    first = agent.request("session/list", {"cwd": cwd})
    second = agent.request("session/list", {"cwd": cwd, "archived": "exclude", "cursor": first["nextCursor"]})
    assert not {s["sessionId"] for s in first["sessions"]} & {s["sessionId"] for s in second["sessions"]}


@pytest.mark.parametrize("forge", ["flip-a-character", "garbage", "empty-signature"])
def test_a_forged_cursor_is_invalid_params(agent: Agent, paged: tuple[str, dict[str, bool]], forge: str) -> None:
    cwd, _ = paged
    cursor: str = agent.request("session/list", {"cwd": cwd})["nextCursor"]
    forged = {
        "flip-a-character": cursor[:3] + ("A" if cursor[3] != "A" else "B") + cursor[4:],
        "garbage": "not-a-cursor",
        "empty-signature": cursor.split(".", maxsplit=1)[0] + ".",
    }[forge]
    assert agent.error("session/list", {"cwd": cwd, "cursor": forged}).code == -32602


def test_an_unknown_archived_filter_value_is_invalid_params(agent: Agent, cwd: str) -> None:
    error = agent.error("session/list", {"cwd": cwd, "archived": "all"})
    assert error.code == -32602
    assert "archived" in json.dumps(error.data)


# -- active sessions ------------------------------------------------------------------------


def test_archiving_an_active_session_notifies_then_cancels_the_turn_and_closes_it(agent: Agent, cwd: str) -> None:
    sid = agent.new_session(cwd)
    prompt_id, start = agent.start_prompt(sid, SLOW_TURN + "never answered")
    archive_id = agent.send("session/archive", {"sessionId": sid})

    notified = agent.wait_for(_archived_update(sid), start)
    turn_end, stop = agent.turn_end(sid, prompt_id, start)
    archived = agent.response_index(archive_id)
    assert agent.result(archive_id) == {}
    assert stop == "cancelled"
    assert notified < turn_end < archived, "expected: archived update, then the cancelled turn, then the response"
    notification = (
        generated.v1.models.SessionNotification
        if agent.protocol == 1
        else generated.v2.models.UpdateSessionNotification
    ).model_validate(agent.log[notified]["params"])
    assert notification.update.archived is True and notification.update.model_fields_set == {
        "session_update",
        "archived",
    }
    assert agent.replies(sid, start, len(agent.log)) == []

    # Freed like session/close: the session can no longer run turns here.
    assert agent.error("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}).code == -32002
    assert agent.states(cwd) == {sid: True}


def test_unarchive_does_not_reopen_a_session(agent: Agent, cwd: str) -> None:
    sid = agent.new_session(cwd)
    agent.request("session/archive", {"sessionId": sid})
    agent.request("session/unarchive", {"sessionId": sid})
    error = agent.error("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]})
    assert error.code == -32002 and "not open" in error.data["reason"]


def test_resuming_an_archived_session_is_refused_until_unarchived(agent: Agent, cwd: str) -> None:
    sid = agent.new_session(cwd)
    agent.request("session/archive", {"sessionId": sid})
    assert agent.error("session/resume", {"sessionId": sid}).code == -32602
    if agent.protocol == 1:
        assert agent.error("session/load", {"sessionId": sid, "cwd": cwd, "mcpServers": []}).code == -32602
    agent.request("session/unarchive", {"sessionId": sid})
    assert agent.request("session/resume", {"sessionId": sid}) == {}


def test_cancel_ends_the_turn_and_the_session_stays_usable(agent: Agent, cwd: str) -> None:
    sid = agent.new_session(cwd)
    prompt_id, start = agent.start_prompt(sid, SLOW_TURN + "slow")
    agent.notify("session/cancel", {"sessionId": sid})
    assert agent.turn_end(sid, prompt_id, start)[1] == "cancelled"
    assert agent.prompt(sid, "again") == (["echo #2: again"], "end_turn")


# -- deletion -------------------------------------------------------------------------------


def test_deleted_sessions_are_never_listed_nor_restorable(agent: Agent, cwd: str) -> None:
    kept, archived, active = (agent.new_session(cwd) for _ in range(3))
    agent.request("session/archive", {"sessionId": archived})
    prompt_id, start = agent.start_prompt(active, SLOW_TURN + "busy")

    for sid in (archived, active):
        assert agent.request("session/delete", {"sessionId": sid}) == {}
    assert agent.turn_end(active, prompt_id, start)[1] == "cancelled"

    for archived_filter in (None, "exclude", "include", "only"):
        assert set(agent.states(cwd, archived_filter)) <= {kept}
    for sid in (archived, active):
        for method in ("session/unarchive", "session/archive", "session/resume"):
            assert agent.error(method, {"sessionId": sid}).code == -32002
        assert agent.request("session/delete", {"sessionId": sid}) == {}, "delete stays silent when repeated"
    assert agent.states(cwd) == {kept: False}


# -- unknown IDs and malformed input ----------------------------------------------------------


@pytest.mark.parametrize(
    "method", ["session/archive", "session/unarchive", "session/close", "session/resume", "session/load"]
)
def test_unknown_session_ids_are_resource_not_found(agent: Agent, method: str) -> None:
    if method == "session/load" and agent.protocol == 2:
        assert agent.error(method, {"sessionId": "sess_does_not_exist"}).code == -32601  # not in v2
        return
    error = agent.error(method, {"sessionId": "sess_does_not_exist", "cwd": "/work", "mcpServers": []})
    assert error.code == -32002
    assert error.data["sessionId"] == "sess_does_not_exist"


def test_missing_session_id_is_invalid_params(agent: Agent) -> None:
    assert agent.error("session/archive", {}).code == -32602


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("{not json", -32700),
        ('{"jsonrpc": "2.0", "id": NaN, "method": "session/list"}', -32700),
        ("[1, 2]", -32600),
        ('{"jsonrpc": "2.0", "id": 9, "method": 5}', -32600),
    ],
)
def test_a_malformed_line_gets_an_error_and_the_agent_keeps_serving(
    agent: Agent, cwd: str, line: str, code: int
) -> None:
    start = len(agent.log)
    agent.send_raw(line)
    index = agent.wait_for(lambda m: "error" in m and m["error"]["code"] == code, start)
    assert agent.log[index]["id"] in (None, 9)
    assert agent.new_session(cwd)


# -- conformance with the published (pre-archive) ACP schemas ---------------------------------

UPSTREAM_RESULTS = {
    "initialize": "InitializeResponse",
    "session/new": "NewSessionResponse",
    "session/prompt": "PromptResponse",
    "session/list": "ListSessionsResponse",
    "session/close": "CloseSessionResponse",
    "session/delete": "DeleteSessionResponse",
    "session/resume": "ResumeSessionResponse",
    "session/load": "LoadSessionResponse",
}


def test_stable_methods_answer_in_the_upstream_schemas_shapes(agent: Agent, cwd: str, upstream: Path) -> None:
    """Everything outside the archive surface must also be valid ACP of the agreed version:
    results and ``session/update`` params checked against the upstream JSON Schema."""
    defs = json.loads((upstream / f"v{agent.protocol}" / "schema.unstable.json").read_text())["$defs"]

    def check(definition: str, instance: Any) -> None:
        jsonschema_rs.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": defs}).validate(instance)

    check("InitializeResponse", agent.init)
    start = len(agent.log)
    new_id = agent.send("session/new", {"cwd": cwd, "mcpServers": []})
    sid = agent.result(new_id)["sessionId"]
    methods = {new_id: "session/new"}
    calls = [
        ("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hello"}]}),
        ("session/list", {"cwd": cwd}),
        ("session/close", {"sessionId": sid}),
        ("session/resume", {"sessionId": sid}),
    ]
    if agent.protocol == 1:
        calls.append(("session/load", {"sessionId": sid, "cwd": cwd, "mcpServers": []}))
    for method, params in [*calls, ("session/delete", {"sessionId": sid})]:
        methods[agent.send(method, params)] = method
        agent.result(next(reversed(methods)))
    if agent.protocol == 2:
        agent.wait_for(lambda m: _update_kind(m, sid) == "state_update" and m["params"]["update"]["state"] == "idle")
    notification = "SessionNotification" if agent.protocol == 1 else "UpdateSessionNotification"
    updates = 0
    for message in agent.log[start:]:
        if message.get("method") == "session/update":
            check(notification, message["params"])
            updates += 1
        elif message.get("id") in methods:
            check(UPSTREAM_RESULTS[methods[message["id"]]], message["result"])
    assert updates >= (1 if agent.protocol == 1 else 3)  # the reply chunk (+ running and idle in v2)


# -- persistence and sharing ----------------------------------------------------------------


@pytest.mark.parametrize("protocol", [1, 2], ids=["v1", "v2"])
def test_state_survives_a_restart(tmp_path: Path, protocol: int) -> None:
    db = tmp_path / "agent.sqlite3"
    cwd = "/work/restart"
    first = Agent(db, protocol)
    kept, archived = first.new_session(cwd), first.new_session(cwd)
    others = {first.new_session(cwd + "/more") for _ in range(PAGE_SIZE + 1)}
    first.prompt(kept, "before restart")
    first.request("session/archive", {"sessionId": archived})
    page = first.request("session/list", {"cwd": cwd + "/more"})
    first.close()

    second = Agent(db, protocol)
    try:
        assert second.states(cwd) == {kept: False, archived: True}
        # A cursor handed out before the restart still continues its listing.
        rest = second.request("session/list", {"cwd": cwd + "/more", "cursor": page["nextCursor"]})
        assert {s["sessionId"] for s in page["sessions"] + rest["sessions"]} == others
        assert second.request("session/unarchive", {"sessionId": archived}) == {}
        assert second.request("session/resume", {"sessionId": kept}) == {}
        assert second.prompt(kept, "after") == (["echo #2: after"], "end_turn")
    finally:
        second.close()


@pytest.mark.parametrize("protocol", [1, 2], ids=["v1", "v2"])
def test_two_agents_share_one_database(tmp_path: Path, protocol: int) -> None:
    db = tmp_path / "agent.sqlite3"
    cwd = "/work/shared"
    # Started together: both create the schema of a fresh database at the same time.
    one, two = Agent(db, protocol, initialize=False), Agent(db, protocol, initialize=False)
    try:
        one.initialize()
        two.initialize()
        sessions = [one.new_session(cwd) for _ in range(PAGE_SIZE + 1)]
        # A cursor from one process is good in the other: the signing key is in the database.
        page = one.request("session/list", {"cwd": cwd})
        rest = two.request("session/list", {"cwd": cwd, "cursor": page["nextCursor"]})
        assert {s["sessionId"] for s in page["sessions"] + rest["sessions"]} == set(sessions)

        assert two.request("session/archive", {"sessionId": sessions[0]}) == {}
        assert one.states(cwd)[sessions[0]] is True
        # The other process archived it, so this one will not run turns in it any more.
        error = one.error("session/prompt", {"sessionId": sessions[0], "prompt": [{"type": "text", "text": "x"}]})
        assert error.code == -32002
        one.wait_for(_archived_update(sessions[0]))  # told, by the prompt's check or by the watch

        assert two.request("session/delete", {"sessionId": sessions[1]}) == {}
        assert one.error("session/archive", {"sessionId": sessions[1]}).code == -32002

        # Writes from both processes at once all commit (WAL, IMMEDIATE transactions, busy wait).
        pending = [
            (agent, agent.send("session/new", {"cwd": cwd + "/busy"})) for _ in range(10) for agent in (one, two)
        ]
        created = {agent.result(request_id)["sessionId"] for agent, request_id in pending}
        assert set(two.states(cwd + "/busy")) == created and len(created) == 20
    finally:
        one.close()
        two.close()
