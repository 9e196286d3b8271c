"""The version bridge's asyncio host (the runtime's ``_bridge_asyncio``, as
``generated_upstream`` carries it: ``bridge.bridged_streams``), in process: a client on one
end of a socket pair, and on the other, through the host, a protocol 1 "connection" that
reads lines and writes lines as an SDK's does (here the test's own code, so that what it
reads and when is seen). What an SDK's agent connection runs after ``adopt`` with
``base-v2`` (tests/adopt/test_sdk_v2.py runs the official SDK so).

- a protocol 1 client: every byte both ways exactly as written, lines split across writes
  and reads, an unparsable line and a line longer than the reader's limit included;
- a protocol 2 client: the initialize is protocol 2's; the prompt's answer is written to the
  client before the connection can read the prompt; chunks get message ids; bad input (a
  batch, ``[]``, an unparsable line) is answered and never reaches the connection;
- what is not a pair of byte streams comes back as it is, in either order; the connection's
  ``drain()`` waits for the client's, closing its writer closes the client's, and the end
  of the client's input is the end of the connection's.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from support.bridge import SID, V1_INIT, valid_v2

from generated_upstream.bridge import bridged_streams

V2_INIT = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}
Ends = tuple[asyncio.StreamReader, asyncio.StreamWriter, asyncio.StreamReader, asyncio.StreamWriter]


def line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


@asynccontextmanager
async def ends(limit: int = 2**16) -> AsyncIterator[Ends]:
    """The client's reader and writer, and the connection's (through the host)."""
    mine, theirs = socket.socketpair()
    client_reader, client_writer = await asyncio.open_connection(sock=mine)
    reader, writer = await asyncio.open_connection(sock=theirs, limit=limit)
    agent_writer, agent_reader = bridged_streams(writer, reader, agent="test-agent")  # (an SDK's order)
    try:
        yield client_reader, client_writer, agent_reader, agent_writer
    finally:
        client_writer.close()
        agent_writer.close()


async def read(reader: asyncio.StreamReader) -> Any:
    return json.loads(await asyncio.wait_for(reader.readline(), 5))


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


def test_a_protocol_1_client_sees_every_byte_as_written() -> None:
    async def test() -> None:
        async with ends(limit=1024) as (client_in, client_out, agent_in, agent_out):
            sent = [
                b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n',
                b"{not json\n",
                b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"big": "' + b"y" * 5000 + b'"}}\n',
            ]
            client_out.write(sent[0][:20])
            await client_out.drain()
            client_out.write(sent[0][20:] + sent[1] + sent[2])
            for expected in sent:  # (a line longer than the limit, read in pieces, passes whole)
                got = b""
                while not got.endswith(b"\n"):
                    try:
                        got += await asyncio.wait_for(agent_in.readuntil(b"\n"), 5)
                    except asyncio.LimitOverrunError as over:
                        got += await agent_in.readexactly(over.consumed)
                assert got == expected
            written = [
                b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}\n',
                b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_',
                b'message_chunk","content":{"type":"text","text":"hi"}}}}\n{"odd": ',
                b"1}\n",
            ]
            for part in written:
                agent_out.write(part)
                await agent_out.drain()
            expected_out = b"".join(written)
            assert await asyncio.wait_for(client_in.readexactly(len(expected_out)), 5) == expected_out

    run(test)


async def _initialized(
    client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter, agent_in: Any, agent_out: Any
) -> None:
    client_out.write(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": V2_INIT}))
    asked = await read(agent_in)
    assert asked["method"] == "initialize"
    agent_out.write(line({"jsonrpc": "2.0", "id": asked["id"], "result": V1_INIT}))
    answer = await read(client_in)
    valid_v2(answer, "initialize")
    assert answer["result"]["protocolVersion"] == 2 and answer["result"]["info"]["name"] == "agent", answer


def test_a_protocol_2_client_is_served_through_the_bridge() -> None:
    async def test() -> None:
        async with ends() as (client_in, client_out, agent_in, agent_out):
            await _initialized(client_in, client_out, agent_in, agent_out)
            client_out.write(line({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w"}}))
            asked = await read(agent_in)
            assert asked["method"] == "session/new" and asked["params"]["mcpServers"] == [], asked
            agent_out.write(line({"jsonrpc": "2.0", "id": asked["id"], "result": {"sessionId": SID}}))
            assert (await read(client_in))["result"]["sessionId"] == SID

            # The prompt's answer, the user message and running reach the client before the
            # connection has read the prompt: nothing it says can overtake them.
            prompt = {"sessionId": SID, "prompt": [{"type": "text", "text": "hi"}]}
            client_out.write(line({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}))
            said = [await read(client_in) for _ in range(3)]
            assert said[0]["id"] == 2 and said[0]["result"]["messageId"], said
            kinds = [m["params"]["update"]["sessionUpdate"] for m in said[1:]]
            assert kinds == ["user_message", "state_update"], said
            forwarded = await read(agent_in)
            assert forwarded["method"] == "session/prompt" and forwarded["id"] != 2, forwarded
            chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "yes"}}
            notification = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID, "update": chunk}}
            agent_out.write(line(notification) + line(notification))
            agent_out.write(line({"jsonrpc": "2.0", "id": forwarded["id"], "result": {"stopReason": "end_turn"}}))
            await agent_out.drain()
            chunks = [await read(client_in) for _ in range(2)]
            for message in chunks:
                valid_v2(message)
            ids = {m["params"]["update"]["messageId"] for m in chunks}
            assert len(ids) == 1 and ids != {said[0]["result"]["messageId"]}, chunks
            idle = (await read(client_in))["params"]["update"]
            assert idle == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}, idle

            # Bad input is answered by the bridge and reaches no connection.
            client_out.write(b"[]\n{not json\n" + line([{"jsonrpc": "2.0", "id": 7, "method": "session/list"}, 5]))
            empty, unparsable = await read(client_in), await read(client_in)
            assert empty["error"]["code"] == -32600 and unparsable["error"]["code"] == -32700, (empty, unparsable)
            listed = await read(agent_in)  # (the batch's one request, on its way: the connection has no list)
            assert listed["method"] == "session/list", listed
            agent_out.write(line({"jsonrpc": "2.0", "id": listed["id"], "result": {"sessions": []}}))
            batch = await read(client_in)
            assert isinstance(batch, list) and sorted(e.get("id") is None for e in batch) == [False, True], batch
            assert agent_in._buffer == b""  # type: ignore[attr-defined]  # (nothing else reached it)

    run(test)


def test_what_is_no_pair_of_streams_comes_back_as_it_is() -> None:
    async def test() -> None:
        transport = object()
        assert bridged_streams(transport, None) == (transport, None)
        mine, theirs = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=theirs)
        assert bridged_streams(writer, writer) == (writer, writer)
        agent_reader, agent_writer = bridged_streams(reader, writer)  # (asyncio's order)
        assert isinstance(agent_reader, asyncio.StreamReader) and isinstance(agent_writer, asyncio.StreamWriter)
        agent_writer.close()
        mine.close()

    run(test)


def test_drain_waits_for_the_client_and_the_ends_meet() -> None:
    async def test() -> None:
        async with ends() as (client_in, client_out, agent_in, agent_out):
            # The client reads nothing: the connection's drain() waits once the socket is full.
            big = line({"jsonrpc": "2.0", "method": "x", "params": {"p": "z" * 60_000}})
            drained = False

            async def flood() -> None:
                nonlocal drained
                for _ in range(200):
                    agent_out.write(big)
                    await agent_out.drain()
                drained = True

            task = asyncio.create_task(flood())
            await asyncio.sleep(0.5)
            assert not drained and not task.done()
            got = 0
            while got < 200 * len(big):
                got += len(await client_in.read(1 << 20))
            await asyncio.wait_for(task, 5)

            # The client's input ends: so does the connection's.
            client_out.write_eof()
            assert await asyncio.wait_for(agent_in.read(), 5) == b""
            # The connection closes its writer: so is the client's.
            agent_out.close()
            await asyncio.wait_for(agent_out.wait_closed(), 5)
            assert await asyncio.wait_for(client_in.read(), 5) == b""

    run(test)


@pytest.mark.parametrize("broken", ["from_client_line", "from_agent"])
def test_a_failure_of_the_bridge_costs_neither_the_answer_nor_the_connection(
    broken: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in the bridge: a request is answered -32603, a message of the connection is
    dropped (and logged), and the next line is served."""
    from generated_upstream import _bridge

    original = getattr(_bridge.Bridge, broken)
    calls = 0

    def once(self: Any, value: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("a bug")
        return original(self, value)

    monkeypatch.setattr(_bridge.Bridge, broken, once)

    async def test() -> None:
        async with ends() as (client_in, client_out, agent_in, agent_out):
            request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": V2_INIT}
            client_out.write(line(request))
            if broken == "from_client_line":
                assert (await read(client_in))["error"]["code"] == -32603
            else:
                asked = await read(agent_in)
                agent_out.write(line({"jsonrpc": "2.0", "id": asked["id"], "result": V1_INIT}))
                with pytest.raises(asyncio.TimeoutError):
                    await asyncio.wait_for(client_in.readline(), 0.5)
            await _initialized(client_in, client_out, agent_in, agent_out)

    run(test)
