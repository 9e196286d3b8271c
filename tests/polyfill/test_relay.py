"""The relay in process, between pipes: lines pass through byte for byte both ways, the
proxy's own ids never meet the client's, and a gone agent fails what waits for it."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from acp_codegen.polyfill.archive import Polyfill
from acp_codegen.polyfill.relay import AgentGone, Relay
from acp_codegen.polyfill.store import Store


class Wire:
    """A relay between two pipe pairs: ``client`` and ``agent`` are what the test writes
    as each peer, ``to_client`` and ``to_agent`` what the relay wrote to each."""

    def __init__(self) -> None:
        pipes = [os.pipe() for _ in range(4)]
        files: list[IO[bytes]] = [os.fdopen(fd, "rb" if i % 2 == 0 else "wb") for p in pipes for i, fd in enumerate(p)]
        self.to_agent, agent_in, agent_out, self.agent, client_in, self.client, self.to_client, client_out = files
        self.relay = Relay(agent_in, agent_out, client_in, client_out, prefix="pfx-")
        pumps = (self.relay.pump_client, self.relay.pump_agent)
        self.threads = [threading.Thread(target=f, daemon=True) for f in pumps]
        for thread in self.threads:
            thread.start()

    @staticmethod
    def send(out: IO[bytes], line: bytes) -> None:
        out.write(line)
        out.flush()

    def close(self) -> None:
        for f in (self.client, self.agent):
            f.close()
        for thread in self.threads:
            thread.join(5)


@pytest.fixture
def wire() -> Iterator[Wire]:
    made = Wire()
    yield made
    made.close()


def test_lines_pass_through_byte_for_byte_both_ways(wire: Wire) -> None:
    # An extension request (spacing and key order as the client wrote them), the agent's
    # request to the client and the client's answer, a notification whose method comes
    # last, the agent's answer with its own spacing.
    ext = b'{"id":7, "params":{"x":  1,"y":"\\u00e9"},"method":"_vendor/thing","jsonrpc":"2.0"}\n'
    wire.send(wire.client, ext)
    assert wire.to_agent.readline() == ext
    ask = b'{"jsonrpc":"2.0","id":"a1","method":"fs/read_text_file","params":{"path":"/x","sessionId":"s"}}\n'
    wire.send(wire.agent, ask)
    assert wire.to_client.readline() == ask
    answer = b'{"jsonrpc":"2.0","id":"a1","result":{"content":"text"}}\n'
    wire.send(wire.client, answer)
    assert wire.to_agent.readline() == answer
    update = b'{"params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}},"jsonrpc":"2.0","method":"session/update"}\n'  # noqa: E501
    wire.send(wire.agent, update)
    assert wire.to_client.readline() == update
    reply = b'{"jsonrpc": "2.0", "result": {"echoed": "thing"}, "id": 7}\n'
    wire.send(wire.agent, reply)
    assert wire.to_client.readline() == reply
    junk = b"not json at all\n"
    wire.send(wire.client, junk)
    assert wire.to_agent.readline() == junk


def _own_request(relay: Relay, into: list[Any]) -> threading.Thread:
    thread = threading.Thread(target=lambda: into.append(relay.request("session/list", {"cwd": "/w"})), daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("own_first", [True, False])
def test_a_client_id_equal_to_the_proxys_own_never_reaches_the_agent_twice(wire: Wire, own_first: bool) -> None:
    answers: list[Any] = []
    client_request = {"jsonrpc": "2.0", "id": "pfx-1", "method": "session/new", "params": {"cwd": "/w"}}
    seen = []
    if own_first:
        thread = _own_request(wire.relay, answers)
        seen.append(json.loads(wire.to_agent.readline()))
        wire.send(wire.client, json.dumps(client_request).encode() + b"\n")
        seen.append(json.loads(wire.to_agent.readline()))
    else:
        wire.send(wire.client, json.dumps(client_request).encode() + b"\n")
        seen.append(json.loads(wire.to_agent.readline()))
        thread = _own_request(wire.relay, answers)
        seen.append(json.loads(wire.to_agent.readline()))
    ids = [m["id"] for m in seen]
    assert len(set(ids)) == 2, ids
    by_method = {m["method"]: m for m in seen}
    # The agent answers both, the client's first: each answer reaches its own asker only.
    for method in ("session/new", "session/list"):
        agent_id = by_method[method]["id"]
        wire.send(wire.agent, json.dumps({"jsonrpc": "2.0", "id": agent_id, "result": {"m": method}}).encode() + b"\n")
    got = json.loads(wire.to_client.readline())
    assert got == {"jsonrpc": "2.0", "id": "pfx-1", "result": {"m": "session/new"}}
    thread.join(5)
    assert answers == [{"jsonrpc": "2.0", "id": by_method["session/list"]["id"], "result": {"m": "session/list"}}]
    # Nothing else reached the client: the proxy's answer stayed with the proxy.
    wire.send(wire.agent, b'{"jsonrpc":"2.0","method":"session/update","params":{}}\n')
    assert json.loads(wire.to_client.readline())["method"] == "session/update"


def test_a_gone_agent_fails_the_pending_client_requests_and_the_proxys(wire: Wire) -> None:
    answers: list[Any] = []
    failures: list[str] = []

    def own() -> None:
        try:
            answers.append(wire.relay.request("session/list", {}))
        except AgentGone as exc:
            failures.append(str(exc))

    wire.send(wire.client, b'{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s"}}\n')
    wire.to_agent.readline()
    thread = threading.Thread(target=own, daemon=True)
    thread.start()
    wire.to_agent.readline()
    wire.agent.close()
    wire.threads[1].join(5)
    wire.relay.agent_gone("the agent exited with status 3")
    thread.join(5)
    assert failures == ["the agent exited with status 3"] and answers == []
    assert json.loads(wire.to_client.readline()) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32603, "message": "the agent exited with status 3"},
    }
    with pytest.raises(AgentGone):
        wire.relay.request("session/list", {})
    wire.agent = open(os.devnull, "wb")  # (closed above)


def test_what_the_client_sends_before_initialize_is_answered_waits_for_the_answer(wire: Wire, tmp_path: Path) -> None:
    """A client that writes every line at once (a shell's printf): its archive request waits
    until the agent's answer says whether the polyfill serves archive, then is served by it
    (the agent lists and lacks archive), never sent to the agent."""
    Polyfill(wire.relay, Store(tmp_path / "s.sqlite3", ["agent"], "/w"))
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    archive = {"jsonrpc": "2.0", "id": 1, "method": "session/archive", "params": {"sessionId": "s1"}}
    new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}
    for message in (init, archive, new):
        wire.send(wire.client, json.dumps(message).encode() + b"\n")
    assert json.loads(wire.to_agent.readline())["method"] == "initialize"
    caps = {"sessionCapabilities": {"list": {}}}
    wire.send(
        wire.agent,
        json.dumps({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentCapabilities": caps}}).encode()
        + b"\n",
    )
    answer = json.loads(wire.to_client.readline())
    assert answer["result"]["agentCapabilities"]["sessionCapabilities"]["archive"] == {}
    # The archive is the polyfill's: it looks the session up in the agent's list (in a thread
    # of its own, so the two lines come in either order); session/new goes on to the agent.
    lines = [json.loads(wire.to_agent.readline()) for _ in range(2)]
    (asked,) = [m for m in lines if m["method"] == "session/list"]
    assert [m for m in lines if m is not asked] == [new]
    wire.send(
        wire.agent, json.dumps({"jsonrpc": "2.0", "id": asked["id"], "result": {"sessions": []}}).encode() + b"\n"
    )
    served = json.loads(wire.to_client.readline())
    assert served["id"] == 1 and served["error"]["code"] == -32002, served  # (not the agent's -32601)
