"""Newline-delimited JSON-RPC over the process's stdin and stdout, on asyncio streams.

Input is read in chunks and split into lines here, with a hard bound per line: a line
over the bound is refused once, as a whole, and skipped to its newline, so no part of
it is ever read as a message of its own. Decoding is strict JSON (no NaN/Infinity, no
number too large for a double, no lone surrogate), so that anything the agent echoes
back (ids above all) is JSON again.

Why not the ACP SDK's transport: see docs/agent.md.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import math
import re
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, BinaryIO

from ._generated import InternalError, InvalidRequestError, JsonRpcError, ParseError

logger = logging.getLogger(__name__)

MAX_LINE = 16 * 1024 * 1024  # bytes in one message (its newline excluded); longer lines are refused
_CHUNK = 64 * 1024


def _encode(message: dict[str, Any]) -> bytes:
    # allow_nan=False and a strict UTF-8 encode: what cannot be JSON raises instead of
    # reaching the peer as Infinity or a lone surrogate.
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode() + b"\n"


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
            data = _encode(message)
        except (ValueError, TypeError, RecursionError):
            # A bug, not the peer's doing (input is decoded strictly): log it, and answer a
            # request with a bare -32603 rather than with broken JSON or not at all.
            logger.exception("message cannot be written as JSON")
            if "method" in message or "id" not in message:
                return
            error = {"jsonrpc": "2.0", "id": None, "error": InternalError().to_error()}
            try:
                data = _encode({**error, "id": message["id"]})
            except (ValueError, TypeError, RecursionError):
                data = _encode(error)
        try:
            self._out.write(data)
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


# -- strict decoding


def _not_json(name: str) -> Any:
    # Python's json reads NaN and Infinity; JSON (and so JSON-RPC) has neither.
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400: valid JSON text, but no double holds it
        raise ValueError(f"number out of range: {text[:40]}")
    return value


_DECODER = json.JSONDecoder(parse_constant=_not_json, parse_float=_finite)
# A \uD800-\uDFFF escape: only these can put a surrogate into a decoded string (raw
# surrogate bytes are not UTF-8 and fail the decode itself). Pairs are fine, lone ones not.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def _check_strings(value: Any) -> None:
    """Refuse a lone surrogate in any string or key (iterative: nesting is unbounded)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            item.encode("utf-8")  # UnicodeEncodeError, a ValueError, on a lone surrogate
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def decode(line: bytes) -> Any:
    """One line of strict JSON; ValueError (or RecursionError) when it is not."""
    text = line.decode("utf-8")
    value = _DECODER.decode(text)
    if _SURROGATE_ESCAPE.search(text):
        _check_strings(value)
    return value


# -- reading


async def open_stdin() -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    except (ValueError, OSError):
        # stdin is a regular file (``< requests.jsonl``): asyncio pipes refuse those.
        # Chunks, not lines: a line may be far longer than the agent will ever hold.
        def pump() -> None:
            stream = sys.stdin.buffer
            assert isinstance(stream, io.BufferedReader)
            while chunk := stream.read1(_CHUNK):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
            loop.call_soon_threadsafe(reader.feed_eof)

        threading.Thread(target=pump, name="stdin", daemon=True).start()
    return reader


async def read_lines(reader: asyncio.StreamReader, max_line: int = MAX_LINE) -> AsyncIterator[bytes | None]:
    """Each line without its newline (the last one may lack it), or ``None`` once for a
    line longer than ``max_line`` bytes, as soon as that is known; the rest of that line
    is then discarded, never buffered. At most ``max_line`` + one chunk is held."""
    buffer = bytearray()
    skipping = False  # inside an oversized line, already reported
    while chunk := await reader.read(_CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if skipping:
                skipping = False
            elif len(buffer) + end - start > max_line:
                yield None
            else:
                buffer += chunk[start:end]
                yield bytes(buffer)
            buffer.clear()
            start = end + 1
        if not skipping:
            buffer += chunk[start:]
            if len(buffer) > max_line:
                buffer.clear()
                skipping = True
                yield None
    if buffer:
        yield bytes(buffer)


async def serve(
    reader: asyncio.StreamReader,
    peer: Peer,
    handle: Callable[[dict[str, Any]], Awaitable[None]],
    max_line: int = MAX_LINE,
) -> None:
    """Feed every message to ``handle`` in arrival order until end of input.

    A line that is not JSON answers ``-32700`` (id null); one that is not an object, or
    is longer than ``max_line``, ``-32600`` (id null); either way the loop goes on.
    """
    async for line in read_lines(reader, max_line):
        if line is None:
            peer.fail(None, InvalidRequestError(data={"reason": f"message longer than {max_line} bytes"}))
            continue
        if not line.strip():
            continue
        try:
            message = decode(line)
        except (ValueError, RecursionError):
            peer.fail(None, ParseError())
            continue
        if not isinstance(message, dict):
            peer.fail(None, InvalidRequestError(data={"reason": "a message must be a JSON object"}))
            continue
        try:
            await handle(message)
        except Exception:
            # ``handle`` answers errors itself; this is a bug, and it must not end the loop.
            logger.exception("message handling failed")
            peer.fail(None, InternalError())
