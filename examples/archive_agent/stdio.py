"""Newline-delimited JSON-RPC over the process's stdin and stdout, on asyncio streams.

Why not the ACP SDK's transport: see docs/agent.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from generated._shared import InvalidRequestError, JsonRpcError, ParseError

logger = logging.getLogger(__name__)

MAX_LINE = 16 * 1024 * 1024  # one JSON-RPC message per line; longer lines are refused, not buffered forever


class Peer:
    """The client at the other end of stdout. Writes are synchronous, so each message
    leaves whole and in the order the agent produced it."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self.gone = False

    def send(self, message: dict[str, Any]) -> None:
        if self.gone:
            return
        try:
            self._out.write(json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
            self._out.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The client went away; stdin reaches its end next and the agent stops there.
            self.gone = True

    def respond(self, request_id: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def fail(self, request_id: Any, error: JsonRpcError) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "error": error.to_error()})

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})


def _not_json(name: str) -> Any:
    # Python's json reads NaN and Infinity; JSON (and so JSON-RPC) has neither.
    raise ValueError(f"{name} is not JSON")


async def open_stdin() -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    except (ValueError, OSError):
        # stdin is a regular file (``< requests.jsonl``): asyncio pipes refuse those.
        def pump() -> None:
            for line in sys.stdin.buffer:
                loop.call_soon_threadsafe(reader.feed_data, line)
            loop.call_soon_threadsafe(reader.feed_eof)

        threading.Thread(target=pump, name="stdin", daemon=True).start()
    return reader


async def serve(reader: asyncio.StreamReader, peer: Peer, handle: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
    """Feed every message to ``handle`` in arrival order until end of input.

    A line that is not JSON answers ``-32700`` (id null), one that is not an object
    ``-32600``; either way the loop goes on with the next line.
    """
    while True:
        try:
            line = await reader.readline()
        except ValueError:  # longer than MAX_LINE: asyncio has dropped it
            peer.fail(None, InvalidRequestError(data={"reason": f"message longer than {MAX_LINE} bytes"}))
            continue
        if not line:
            return
        if not line.strip():
            continue
        try:
            message = json.loads(line, parse_constant=_not_json)
        except (ValueError, RecursionError):
            peer.fail(None, ParseError())
            continue
        if not isinstance(message, dict):
            peer.fail(None, InvalidRequestError(data={"reason": "a message must be a JSON object"}))
            continue
        await handle(message)
