"""The version bridge's asyncio host: a connection written for protocol 1 (an SDK's agent
side, say) serves a client that speaks protocol 2, in process.

``bridged_streams(reader, writer, bridge=...)`` takes the client's byte streams (stdio, a
socket) and gives the pair the protocol 1 connection reads and writes instead. Between them the sans-I/O
``Bridge`` (``_bridge``) decides, line by line, what goes where; this module only moves
bytes and the bridge's messages, and never looks inside them (the package's ``bridge``
module binds it to its ``Bridge``: ``bridge.bridged_streams``):

- each line the client writes goes to the bridge as it came (bad input included: the bridge
  answers it); what the bridge sends on reaches the connection's reader, in order;
- each line the connection writes goes to the bridge, which gives what the client receives;
  until a client asks for protocol 2 and the connection answers 1, every byte passes as
  it was written (a protocol 1 client sees no change);
- what the bridge says once a message is handed on (a prompt's answer) is written to the
  client before the connection can read that message, so nothing it answers overtakes it.

One task reads the client; the connection's writes are handled as they are made, and its
``drain()`` waits for the client's. Closing the connection's writer closes the client's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, Protocol, TypeVar, cast

from ._bridge_core import CLIENT, Action, encode
from ._runtime import INTERNAL_ERROR

logger = logging.getLogger(__name__)

# Lines longer than a reader's limit are read in pieces, as the SDKs read them.
DEFAULT_LIMIT = 2**16

_A = TypeVar("_A")
_B = TypeVar("_B")


class BridgeLike(Protocol):
    """What the host needs of the sans-I/O bridge (``_bridge.Bridge``)."""

    @property
    def interested(self) -> bool: ...

    def from_client_line(self, line: bytes) -> list[Action]: ...

    def from_agent(self, message: dict[str, Any]) -> list[Action]: ...

    def forwarded(self, message: dict[str, Any]) -> list[Action]: ...

    def fast(self, line: bytes) -> bytes | None: ...

    def fast_lines(self, data: bytes) -> bytes | None: ...


def _lines(data: bytes) -> Iterator[bytes]:
    start = 0
    while start < len(data):
        end = data.find(b"\n", start) + 1 or len(data)
        yield data[start:end]
        start = end


def bridged_streams(
    first: _A,
    second: _B,
    *,
    bridge: Callable[[str], BridgeLike],
    agent: str | None = None,
) -> tuple[_A, _B]:
    """The byte streams a protocol 1 connection uses in place of the client's, with a
    version bridge (``bridge(agent)``: the package's ``bridge.Bridge``) between them.
    ``first`` and ``second`` are the client's reader and writer in either order (asyncio's,
    or an SDK's writer first), and come back in their places; anything else (a message
    transport, a missing stream) comes back as it is.

    ``agent``: the name a protocol 2 client is given where the agent names none (default:
    the program's). Called with the event loop running: the task that reads the client
    starts here."""
    name = agent or os.path.basename(sys.argv[0]) or "agent"
    if isinstance(first, asyncio.StreamReader) and isinstance(
        second, asyncio.StreamWriter
    ):
        host = _Host(first, second, bridge(name))
        return cast(_A, host.agent_reader), cast(_B, host.agent_writer)
    if isinstance(first, asyncio.StreamWriter) and isinstance(
        second, asyncio.StreamReader
    ):
        host = _Host(second, first, bridge(name))
        return cast(_A, host.agent_writer), cast(_B, host.agent_reader)
    return first, second


class _Host:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        bridge: BridgeLike,
    ) -> None:
        self.bridge = bridge
        self.client_reader, self.client_writer = reader, writer
        loop = asyncio.get_running_loop()
        self.limit: int = getattr(reader, "_limit", DEFAULT_LIMIT)
        self.agent_reader = asyncio.StreamReader(limit=self.limit)
        self.transport = _AgentTransport(self)
        self.agent_writer = asyncio.StreamWriter(
            self.transport, _AgentProtocol(self, loop), None, loop
        )
        self.rest = b""  # the start of a line the connection has not ended yet
        self.midline = False  # a line passed on unread is not ended yet
        self.closed = False
        self.task = loop.create_task(self._pump(), name="acp.bridge.client")

    # -- the client's side ---------------------------------------------------------------

    async def _pump(self) -> None:
        """The client's lines to the bridge, until its input ends."""
        try:
            while line := await self._line():
                self.from_client(line)
        except asyncio.CancelledError:
            raise
        except (
            Exception
        ) as exc:  # (the client's stream failed: the connection hears it as it would)
            self.agent_reader.set_exception(exc)
            return
        self.agent_reader.feed_eof()

    async def _line(self) -> bytes:
        """One whole line, however long (b"" at the end; the last may lack its newline)."""
        pieces = []
        while True:
            try:
                line = await self.client_reader.readuntil(b"\n")
            except asyncio.LimitOverrunError as over:
                pieces.append(await self.client_reader.readexactly(over.consumed))
            except asyncio.IncompleteReadError as end:
                return b"".join([*pieces, end.partial])
            else:
                return b"".join([*pieces, line]) if pieces else line

    def from_client(self, line: bytes) -> None:
        try:
            actions = self.bridge.from_client_line(line)
        except (
            Exception
        ):  # a bug of the bridge's must not cost the client its answer, nor the session
            logger.exception("version bridge: the client's line failed: %.200r", line)
            try:
                request = json.loads(line)
            except ValueError:
                return
            if isinstance(request, dict) and "id" in request and "method" in request:
                error = {"code": INTERNAL_ERROR, "message": "Internal error"}
                self.to_client(
                    encode({"jsonrpc": "2.0", "id": request["id"], "error": error})
                )
            return
        self._run(actions)

    def to_client(self, data: bytes) -> None:
        if not self.client_writer.is_closing():
            self.client_writer.write(data)

    def _run(self, actions: list[Action]) -> None:
        for where, payload in actions:
            if where == CLIENT:
                self.to_client(encode(payload))
                continue
            if isinstance(
                payload, dict
            ):  # (said before the connection can read the message)
                self._run(self.bridge.forwarded(payload))
            self.agent_reader.feed_data(encode(payload))

    # -- the connection's side -----------------------------------------------------------

    def from_agent(self, data: bytes) -> None:
        """What the connection wrote: as it is, until the bridge speaks; then line by line."""
        if self.rest:
            data, self.rest = self.rest + data, b""
        if self.midline:  # the end of a line that started to pass unread passes too
            end = data.find(b"\n") + 1
            head, data = (data, b"") if not end else (data[:end], data[end:])
            self.to_client(head)
            self.midline = not end
        if not data:
            return
        if not self.bridge.interested:
            self.to_client(data)
            self.midline = not data.endswith(b"\n")
            return
        end = data.rfind(b"\n") + 1
        if end < len(data):
            data, self.rest = data[:end], data[end:]
        if not data:
            return
        # (a connection writes a message a write, as the SDKs do: one line is the cheaper look)
        whole = (
            self.bridge.fast(data)
            if data.find(b"\n") + 1 == end
            else self.bridge.fast_lines(data)
        )
        if whole is not None:
            self.to_client(whole)
            return
        passing: list[bytes] = []
        for line in _lines(data):
            marked = self.bridge.fast(line)
            if marked is not None:
                passing.append(marked)
                continue
            if passing:
                self.to_client(b"".join(passing))
                passing = []
            self._agent_line(line)
        if passing:
            self.to_client(b"".join(passing))

    def _agent_line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self.to_client(line)
            return
        try:
            self._run(self.bridge.from_agent(message))
        except Exception:
            logger.exception(
                "version bridge: the connection's message failed: %.200r", line
            )

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.task.cancel()
        self.client_writer.close()


class _AgentTransport(asyncio.WriteTransport):
    """The connection's writes, handed to the host as they are made."""

    def __init__(self, host: _Host) -> None:
        super().__init__()
        self.host = host

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self.host.closed:
            self.host.from_agent(bytes(data))

    def writelines(self, list_of_data: Any) -> None:
        self.write(b"".join(list_of_data))

    def can_write_eof(self) -> bool:
        return False

    def is_closing(self) -> bool:
        return self.host.closed

    def close(self) -> None:
        self.host.close()

    def abort(self) -> None:
        self.host.close()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.host.client_writer.get_extra_info(name, default)

    def get_write_buffer_size(self) -> int:
        return self.host.client_writer.transport.get_write_buffer_size()


class _AgentProtocol(asyncio.BaseProtocol):
    """The flow control ``asyncio.StreamWriter`` asks of its protocol: the connection's
    ``drain()`` waits for the client's, and ``wait_closed()`` for the client's writer.
    """

    def __init__(self, host: _Host, loop: asyncio.AbstractEventLoop) -> None:
        self.host = host
        self.loop = loop

    async def _drain_helper(self) -> None:
        if not self.host.client_writer.is_closing():
            await self.host.client_writer.drain()

    def _get_close_waiter(self, stream: asyncio.StreamWriter) -> asyncio.Future[None]:
        return asyncio.ensure_future(self._closed(), loop=self.loop)

    async def _closed(self) -> None:
        await self.host.client_writer.wait_closed()
