"""The two pumps between the client (our stdin and stdout) and the agent (its stdin and
stdout), and the proxy's own requests to the agent.

Lines pass through as they are: the client's are parsed to route them (they are few; with
the version bridge, the bridge reads them first), the agent's only where they may be a
response the proxy must see. A line that starts as
a request or notification does (``is_call``: scalar members, then ``"method"``; what
agents write) is not, so the stream of ``session/update`` notifications is copied without
being decoded, a chunk of lines in one write.

The proxy's own requests carry string ids with a random prefix of this process; the
agent's answers to them never reach the client. A client request whose id happens to
carry the prefix is given one of the proxy's ids on the way and its own back on the
answer, so the agent never sees one id twice.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import secrets
import threading
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # (the polyfill runs the copy in the shipped package: shipped.upstream_module)
    from ..runtime._bridge import Bridge

logger = logging.getLogger(__name__)

INTERNAL_ERROR = -32603
CHUNK = 1 << 16
# How nearly every agent writes a notification or request: decided with one comparison.
_CALL_STARTS = (b'{"jsonrpc":"2.0","method":', b'{"jsonrpc": "2.0", "method": ', b'{"method":', b'{"method": ')
_CALL = re.compile(
    rb'\s*\{\s*(?:"(?:[^"\\]|\\.)*"\s*:\s*(?:"(?:[^"\\]|\\.)*"|[-+.\deE]+|true|false|null)\s*,\s*)*"method"\s*:'
)


def is_call(line: bytes) -> bool:
    """Whether a line is certainly a request or notification (its ``method`` a member of the
    top-level object); False where it may be anything else, for the caller to decode."""
    return line.startswith(_CALL_STARTS) or _CALL.match(line) is not None


# A watch: called with the agent's response to a client request; returns the message to
# send the client instead, or None to send the agent's line as it is.
Watch = Callable[[dict[str, Any]], "dict[str, Any] | None"]


class AgentGone(Exception):
    """The agent exited (or stopped reading) before it answered."""


def encode(message: Any) -> bytes:
    """A message (or a batch's answer) as a line; a line as it is."""
    if isinstance(message, bytes):
        return message if message.endswith(b"\n") else message + b"\n"
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def decoded(line: bytes) -> Any:
    """A line's JSON value; None where it is none."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def id_key(value: Any) -> str:
    """A request id as a dict key: 1, 1.0 and "1" are three ids."""
    return json.dumps(value)


def error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


class _Call:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.response: dict[str, Any] | None = None


class Relay:
    """``hook(message)`` sees each client request and notification first (decoded); it
    returns True when it has taken the message (the proxy answers it), False to forward
    it. ``gone`` says why the agent is gone, once it is."""

    def __init__(
        self,
        agent_in: IO[bytes],
        agent_out: IO[bytes],
        client_in: IO[bytes],
        client_out: IO[bytes],
        prefix: str | None = None,
    ) -> None:
        self.agent_in, self.agent_out = agent_in, agent_out
        self.client_in, self.client_out = client_in, client_out
        self.prefix = prefix or f"acp-polyfill-{secrets.token_hex(8)}-"
        self.hook: Callable[[dict[str, Any]], bool] = lambda message: False
        self.bridge: Bridge | None = None
        self.gone: str | None = None
        self.client_gone = False
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # the tables below
        self._to_client = threading.Lock()
        self._to_agent = threading.Lock()
        self._own: dict[str, _Call] = {}
        self._renamed: dict[str, Any] = {}  # own id -> the client's id it stands for
        self._watched: dict[str, tuple[Watch, Callable[[], None] | None]] = {}
        self._pending: dict[str, Any] = {}  # client requests the agent has not answered

    # -- writing ---------------------------------------------------------------------

    def to_client(self, data: bytes) -> None:
        with self._to_client:
            if self.client_gone:
                return
            try:
                self.client_out.write(data)
                self.client_out.flush()
            except (BrokenPipeError, ConnectionResetError, ValueError):
                self.client_gone = True

    def send_client(self, message: dict[str, Any]) -> None:
        """A message of the agent's side (the agent's version) for the client."""
        self.deliver(message, encode(message))

    def deliver(self, message: dict[str, Any], line: bytes) -> None:
        """``line`` to the client as it is, or, where the bridge speaks another version to
        the client, what the bridge makes of ``message``."""
        bridge = self.bridge
        if bridge is None or not bridge.interested:
            self.to_client(line)
            return
        with bridge.lock:
            self._run(bridge.from_agent(message))

    def cancelled(self, sid: str) -> None:
        """The proxy cancelled the session's turn in the client's stead: the bridge answers
        what the agent asked the client and is waiting for, as a v1 client does."""
        bridge = self.bridge
        if bridge is not None and bridge.active:
            with bridge.lock:
                actions = bridge.cancelled(sid)
            self._run(actions)

    def _run(self, actions: list[tuple[str, Any]]) -> None:
        """The bridge's actions, in order: for the client as they are; for the agent through
        the agent's side (the archive layer's hook), a line it passes on as it was read
        decoded for the hook. What the bridge says once a message is accepted (a prompt's
        answer) goes to the client before the agent has the message, so that nothing the
        agent answers can overtake it; the agent is written to outside the bridge's lock,
        which the agent's pump takes."""
        bridge = self.bridge
        assert bridge is not None
        for where, payload in actions:
            if where == "client":
                self.to_client(encode(payload))
                continue
            message = decoded(payload) if isinstance(payload, bytes) else payload
            if not isinstance(message, dict) or message.get("method") != "session/prompt":
                self._forward(message, encode(payload))
                continue

            def accepted(message: dict[str, Any] = message) -> None:
                with bridge.lock:
                    said = bridge.forwarded(message)
                for _, told in said:
                    self.to_client(encode(told))

            self._forward(message, encode(payload), accepted)

    def to_agent(self, data: bytes) -> None:
        with self._to_agent:
            try:
                self.agent_in.write(data)
                self.agent_in.flush()
            except (BrokenPipeError, ConnectionResetError, ValueError):
                pass  # the agent is gone: its output ends next, and the relay says so there

    # -- the proxy's own requests -------------------------------------------------------

    def request(self, method: str, params: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
        """Send a request of the proxy's own and wait for the agent's response message."""
        call = _Call()
        with self._lock:
            if self.gone is not None:
                raise AgentGone(self.gone)
            own = f"{self.prefix}{next(self._ids)}"
            self._own[id_key(own)] = call
        self.to_agent(encode({"jsonrpc": "2.0", "id": own, "method": method, "params": params}))
        if not call.done.wait(timeout):
            with self._lock:
                self._own.pop(id_key(own), None)
            raise AgentGone(f"the agent did not answer {method} within {timeout:g}s")
        if call.response is None:
            raise AgentGone(self.gone or "the agent exited")
        return call.response

    def notify_agent(self, method: str, params: dict[str, Any]) -> None:
        self.to_agent(encode({"jsonrpc": "2.0", "method": method, "params": params}))

    def watch(self, request_id: Any, watch: Watch, after: Callable[[], None] | None = None) -> None:
        """Have the agent's response to the client's request ``request_id`` pass ``watch``,
        and call ``after`` once it has gone to the client."""
        with self._lock:
            self._watched[id_key(request_id)] = (watch, after)

    # -- client -> agent -----------------------------------------------------------------

    def pump_client(self) -> None:
        """Until the client's input ends."""
        for line in self.client_in:
            self.from_client(line)

    def from_client(self, line: bytes) -> None:
        bridge = self.bridge
        if bridge is None:
            self._forward(decoded(line), line)  # (what is no message is the agent's to answer)
            return
        with bridge.lock:
            actions = bridge.from_client_line(line)
        self._run(actions)

    def forward(self, message: dict[str, Any]) -> None:
        """A client's message the hook held, on its way to the agent now (the hook sees it again)."""
        self._forward(message, encode(message))

    def _forward(self, message: Any, line: bytes, accepted: Callable[[], None] | None = None) -> None:
        """The client's message on its way to the agent (``line`` as written), unless the
        hook takes it; ``accepted`` is called right before it is written."""
        if isinstance(message, dict) and isinstance(message.get("method"), str) and self.hook(message):
            return
        if accepted is not None:
            accepted()
        if not isinstance(message, dict) or not isinstance(message.get("method"), str) or "id" not in message:
            self.to_agent(line)  # notifications, responses to the agent's requests, and whatever else
            return
        request_id = message["id"]
        with self._lock:
            if isinstance(request_id, str) and request_id.startswith(self.prefix):
                own = f"{self.prefix}{next(self._ids)}"
                self._renamed[id_key(own)] = request_id
                line = encode({**message, "id": own})
            self._pending[id_key(request_id)] = request_id
        self.to_agent(line)

    # -- agent -> client -----------------------------------------------------------------

    def pump_agent(self) -> None:
        """Until the agent's output ends. What the agent wrote is read as it comes, in
        chunks; the lines that pass through go on together, in one write per chunk."""
        parts: list[bytes] = []  # a line not yet ended, in pieces (a long one is not copied each time)
        while chunk := self.agent_out.read1(CHUNK):  # type: ignore[attr-defined]
            end = chunk.rfind(b"\n")
            if end < 0:
                parts.append(chunk)
                continue
            data = b"".join([*parts, chunk[: end + 1]]) if parts else chunk[: end + 1]
            parts = [chunk[end + 1 :]] if end + 1 < len(chunk) else []
            if not (self._own or self._watched or self._pending or self._renamed or self._bridged):
                self.to_client(data)
                continue
            self._lines(data)
        if parts:
            self._lines(b"".join(parts))

    @property
    def _bridged(self) -> bool:
        return self.bridge is not None and self.bridge.interested

    def _lines(self, data: bytes) -> None:
        bridge = self.bridge
        if bridge is None or not bridge.interested:
            self._each_line(data, None)
            return
        with bridge.lock:
            whole = bridge.fast_lines(data) if data.endswith(b"\n") else None
            if whole is not None:
                self.to_client(whole)
            else:
                self._each_line(data, bridge.fast)

    def _each_line(self, data: bytes, mark: Callable[[bytes], bytes | None] | None) -> None:
        """Lines that pass go on together: requests and notifications as they are, or, with
        the bridge, the chunk lines ``mark`` gives marked; the others one by one to
        ``from_agent``."""
        passing: list[bytes] = []
        start = 0
        while start < len(data):
            end = data.find(b"\n", start) + 1 or len(data)
            line, start = data[start:end], end
            if mark is None:
                passed = line if is_call(line) else None
            else:
                passed = mark(line)
            if passed is not None:
                passing.append(passed)
                continue
            if passing:
                self.to_client(b"".join(passing))
                passing = []
            self.from_agent(line)
        if passing:
            self.to_client(b"".join(passing))

    def from_agent(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict) or "method" in message:
            if isinstance(message, dict):
                self.deliver(message, line)
            else:
                self.to_client(line)
            return
        key = id_key(message.get("id"))
        with self._lock:
            call = self._own.pop(key, None)
            renamed = self._renamed.pop(key, None)
            if renamed is not None:
                key = id_key(renamed)
            self._pending.pop(key, None)
            watch, after = self._watched.pop(key, (None, None))
        if call is not None:
            call.response = message
            call.done.set()
            return
        if renamed is not None:
            message["id"] = renamed
            line = encode(message)
        replaced = None
        if watch is not None:
            try:
                replaced = watch(message)
            except Exception:  # a bug of ours must not cost the client its answer
                logger.exception("polyfill: handling the response to %s failed", renamed or message.get("id"))
        self.deliver(replaced or message, line if replaced is None else encode(replaced))
        if after is not None:
            after()

    def agent_gone(self, why: str) -> None:
        """The agent's output ended (``why``: how it exited): the proxy's own requests fail,
        and each client request it had not answered gets -32603 naming the exit."""
        with self._lock:
            self.gone = why
            calls, self._own = list(self._own.values()), {}
            pending, self._pending = list(self._pending.values()), {}
            self._watched.clear()
            self._renamed.clear()
        for call in calls:
            call.done.set()
        for request_id in pending:
            self.send_client(error(request_id, INTERNAL_ERROR, why))
