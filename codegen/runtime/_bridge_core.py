"""The core of the version bridge (``_bridge``): what it runs on (``Tables``), the wire
(JSON-RPC errors, what is no request, batches, lines), and the state and conversions both
sides of the connection use. Nothing here depends on the schema.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ._bridge_sessions import MemoryIndex, Session, SessionIndex, Sessions
from ._router import _valid_id, params_error_data
from ._runtime import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
)

logger = logging.getLogger(__name__)

CLIENT, AGENT = "client", "agent"
# (CLIENT or AGENT, a message, a batch's answer, or a line passed on as read)
Action = tuple[str, Any]
CANCELLED = {"outcome": {"outcome": "cancelled"}}


@dataclass(frozen=True)
class Tables:
    """What the bridge runs on, from one generated package: its ``convert`` module's
    ``Conversions``, the methods a v2 client sends (``v2.methods.AGENT_METHODS``: their
    params models) and a v1 agent sends (``v1.methods.CLIENT_METHODS``), and the methods
    of one version only, with why (``convert``'s); ``closing``: the methods whose success
    closes the session on the connection besides ``session/close`` (the session archive's,
    where the package has it)."""

    conversions: Any
    client_methods: Mapping[str, Any]
    agent_methods: Mapping[str, Any]
    one_version_only: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    closing: frozenset[str] = frozenset()
    _adapters: dict[Any, TypeAdapter[Any]] = field(default_factory=dict, compare=False)

    def adapter(self, model: Any) -> TypeAdapter[Any]:
        adapter = self._adapters.get(model)
        if adapter is None:
            adapter = self._adapters[model] = TypeAdapter(model)
        return adapter


class Refused(Exception):
    """A request the bridge answers with an error of its own."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def problem(path: list[Any], message: str) -> dict[str, Any]:
    """``data`` of a -32602, as the generated router writes it."""
    return {"errors": [{"path": path, "message": message}]}


def failure(exc: ValueError, part: str) -> tuple[list[Any], str]:
    """Where a ``ConversionError`` is, in the message's ``part`` (params, result), and why."""
    path = list(getattr(exc, "path", ()))
    return (path[1:] if path[:1] == [part] else path), str(getattr(exc, "reason", exc))


def id_key(value: Any) -> str:
    """A request id as a dict key: 1, 1.0 and "1" are three ids."""
    return json.dumps(value)


def as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def update_action(sid: str, update: dict[str, Any]) -> Action:
    params = {"sessionId": sid, "update": update}
    return (CLIENT, {"jsonrpc": "2.0", "method": "session/update", "params": params})


def state_action(sid: str, state: str, **extra: Any) -> Action:
    return update_action(
        sid, {"sessionUpdate": "state_update", "state": state, **extra}
    )


def no_method(request_id: Any, method: str, reason: str) -> dict[str, Any]:
    """-32601 for a method the other side cannot serve, with why."""
    data = {"method": method, "reason": reason}
    return error(request_id, METHOD_NOT_FOUND, "Method not found", data)


def not_open(sid: str) -> Refused:
    text = f"Session {sid} is not open on this connection: session/new or session/resume it"
    return Refused(RESOURCE_NOT_FOUND, text, {"sessionId": sid})


def encode(payload: Any) -> bytes:
    """An action's payload as the line to write."""
    if isinstance(payload, bytes):
        return payload if payload.endswith(b"\n") else payload + b"\n"
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return text.encode() + b"\n"


def spoken_version(result: Any) -> int | None:
    """The protocol an agent's initialize result is written in: the ``protocolVersion`` it
    names, except that a result naming 2 in protocol 1's shape (``agentCapabilities``, and
    neither v2's required ``info`` nor ``capabilities``) is protocol 1's. fast-agent 0.10.48
    echoes a client's 2 that way, and speaks 1 from then on."""
    result = as_object(result)
    version = result.get("protocolVersion")
    if type(version) is not int:
        return None
    if (
        version == 2
        and "agentCapabilities" in result
        and "info" not in result
        and "capabilities" not in result
    ):
        return 1
    return version


def envelope_error(message: Any) -> dict[str, Any] | None:
    """The -32600 a value that is no JSON-RPC request, notification or response gets (None:
    it is one), with the id it gets (null where it has none that is valid)."""
    if not isinstance(message, dict):
        return error(
            None, INVALID_REQUEST, "Invalid Request", {"reason": "not an object"}
        )
    request_id = message.get("id")
    if "id" in message and not _valid_id(request_id):
        reason = "id must be a string, number or null"
        return error(None, INVALID_REQUEST, "Invalid Request", {"reason": reason})
    if message.get("jsonrpc") != "2.0":
        reason = 'jsonrpc must be "2.0"'
        return error(request_id, INVALID_REQUEST, "Invalid Request", {"reason": reason})
    if "method" in message:
        if not isinstance(message["method"], str):
            reason = "method must be a string"
            return error(
                request_id, INVALID_REQUEST, "Invalid Request", {"reason": reason}
            )
        if message.get("params") is not None and not isinstance(
            message["params"], (dict, list)
        ):
            reason = "params must be an object"
            return error(
                request_id, INVALID_REQUEST, "Invalid Request", {"reason": reason}
            )
        return None
    if "id" in message and ("result" in message) != ("error" in message):
        return None  # an answer to one of the agent's requests
    reason = "neither a request (method) nor a response (id, and result or error)"
    return error(request_id, INVALID_REQUEST, "Invalid Request", {"reason": reason})


@dataclass
class Batch:
    answers: list[dict[str, Any]] = field(default_factory=list)
    waiting: int = 0


def error_object(failure: Any) -> dict[str, Any]:
    """An error object of the agent's, as it is where it is a JSON-RPC error object."""
    if (
        isinstance(failure, dict)
        and type(failure.get("code")) is int
        and isinstance(failure.get("message"), str)
    ):
        return failure
    text = "The agent's answer is no valid JSON-RPC error"
    return {"code": INTERNAL_ERROR, "message": text, "data": {"error": failure}}


def error_answer(message: dict[str, Any]) -> dict[str, Any]:
    failure = message.get("error")
    said = error_object(failure)
    return message if said is failure else {**message, "error": said}


def named(answer: dict[str, Any], method: str) -> dict[str, Any]:
    """The agent's -32601 to a request under its v1 name (``logout``) naming the client's
    v2 method (``auth/logout``) instead."""
    failure = answer.get("error")
    if not isinstance(failure, dict) or failure.get("code") != METHOD_NOT_FOUND:
        return answer
    data = failure.get("data", {})
    if not isinstance(data, dict):
        return answer
    return {**answer, "error": {**failure, "data": {**data, "method": method}}}


# What the v1 side answers to a request the bridge forwarded becomes the client's answer.
Answer = Callable[[dict[str, Any]], list[Action]]


class BridgeCore:
    """What both sides of one connection's bridge share (see ``_bridge.Bridge``)."""

    def __init__(
        self,
        tables: Callable[[], Tables],
        agent_name: str,
        prefix: str | None = None,
        index: SessionIndex | None = None,
    ) -> None:
        self._tables = tables
        self.agent_name = agent_name
        self.index: SessionIndex = index if index is not None else MemoryIndex()
        self.active = False
        # Held by a threaded host around each call, and over a read of the agent's.
        self.lock = threading.RLock()
        self.sessions = Sessions(prefix or f"acp-bridge-{secrets.token_hex(6)}-")
        self._initialize: str | None = (
            None  # the key of the client's v2 initialize request
        )
        # What the client sent while the agent had not answered that initialize: which
        # version the connection speaks is not known yet (lines as read, or messages).
        self._held: list[Any] = []
        self._caps: dict[str, bool] = {}
        # Forwarded request id -> its answer's conversion.
        self._answers: dict[str, Answer] = {}
        # The agent's requests the client has: their v2 method; waiting permission requests:
        # their session and id; those the bridge answered (the client's answer is dropped).
        self._asked: dict[str, str] = {}
        self._permissions: dict[str, tuple[str, Any]] = {}
        self._settled: set[str] = set()
        self._batched: dict[str, Batch] = {}  # the open batches' request ids

    @property
    def tables(self) -> Tables:
        return self._tables()

    @property
    def interested(self) -> bool:
        """Whether the v1 side's messages must pass through ``from_agent``."""
        return self.active or self._initialize is not None

    def fast(self, line: bytes) -> bytes | None:
        """One line of the agent's, marked without decoding where it is a plain chunk; None
        for a line ``from_agent`` must see."""
        return self.sessions.chunk_line(line)

    def fast_lines(self, data: bytes) -> bytes | None:
        """A read of whole lines, marked without decoding where each is a plain chunk of
        one session and kind; None where its lines must be looked at one by one."""
        return self.sessions.chunk_read(data)

    def _holds(self, item: Any) -> bool:
        """Whether the client's line or message waits for the agent's answer to its v2
        initialize (``_held``); another initialize does not (the answer may be lost)."""
        if self._initialize is None:
            return False
        message = item
        if isinstance(item, bytes) and b"initialize" in item:
            try:
                message = json.loads(item)
            except (ValueError, RecursionError):
                pass  # (held: answered -32700 in its turn)
        if isinstance(message, dict) and message.get("method") == "initialize":
            return False
        self._held.append(item)
        return True

    def _out(self, actions: list[Action]) -> list[Action]:
        """Answers to the requests of an open batch are held, and sent as one array once
        the batch has them all."""
        if not self._batched:
            return actions
        out: list[Action] = []
        for where, payload in actions:
            if (
                where == CLIENT
                and isinstance(payload, dict)
                and "method" not in payload
            ):
                batch = self._batched.pop(id_key(payload.get("id")), None)
                if batch is not None:
                    batch.answers.append(payload)
                    batch.waiting -= 1
                    if batch.waiting == 0:
                        out.append((CLIENT, batch.answers))
                    continue
            out.append((where, payload))
        return out

    def _validated(self, method: str, params: Any) -> None:
        """v2 params checked with the package's model of them (-32602 naming the field)."""
        spec = self.tables.client_methods.get(method)
        if spec is None:
            return
        value = {} if params is None else params
        try:
            self.tables.adapter(spec.params).validate_python(value)
        except ValidationError as exc:
            raise Refused(
                INVALID_PARAMS, "Invalid params", params_error_data(exc, value)
            ) from None

    def _converted(
        self,
        message: dict[str, Any],
        source: int,
        *,
        method: str | None = None,
        supply: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``message`` in the other version, through the package's conversions. The agent's
        paths relative to its session's working directory are taken as its (v2 requires
        absolute ones; an agent that sends a relative diff path means the one in its cwd).
        """
        target = 2 if source == 1 else 1
        if source == 1:
            session = self.sessions.known(
                as_object(message.get("params")).get("sessionId")
            )
            if session is not None and session.cwd is not None:
                supply = {"cwd": session.cwd, **(supply or {})}
        convert = self.tables.conversions.convert_message
        out: dict[str, Any] = convert(
            message, source=source, target=target, method=method, supply=supply
        )
        return out

    def _to_v1(self, message: dict[str, Any], **changes: Any) -> dict[str, Any]:
        """A client's message as v1's (-32602 where v1 cannot say a value of it)."""
        try:
            out = self._converted(message, 2)
        except ValueError as exc:  # ConversionError
            where, reason = failure(exc, "params")
            if where == ["method"]:  # a v2 method no declaration pairs with one of v1
                data = {"method": message["method"], "reason": reason}
                raise Refused(METHOD_NOT_FOUND, "Method not found", data) from None
            data = problem(where, reason)
            raise Refused(INVALID_PARAMS, "Invalid params", data) from None
        return {**out, **changes}

    def _to_client(
        self,
        message: dict[str, Any],
        method: str | None = None,
        supply: Mapping[str, Any] | None = None,
    ) -> list[Action]:
        """A v1 message for the client, converted: a response that cannot be is an error
        naming what was wrong; a notification or request that cannot be is not sent. A
        time without a UTC offset is the local time of this machine, where the agent runs.
        """
        if "error" in message and "method" not in message:
            # (an error object is alike in both versions)
            return [(CLIENT, error_answer(message))]
        supply = {"utcOffset": "local", **(supply or {})}
        try:
            return [(CLIENT, self._converted(message, 1, method=method, supply=supply))]
        except ValueError as exc:  # ConversionError
            where, reason = failure(exc, "params" if "method" in message else "result")
        if "method" in message:
            logger.warning(
                "bridge: the agent's %s has no protocol 2 form (%s: %s); not passed on",
                message["method"],
                "/".join(map(str, where)),
                reason,
            )
            return []
        text = "The agent's answer has no valid protocol 2 form"
        data = problem(where, reason)
        return [(CLIENT, error(message.get("id"), INTERNAL_ERROR, text, data))]

    def _expect(self, request_id: Any, answer: Answer) -> None:
        self._answers[id_key(request_id)] = answer

    def _current_state(self, sid: str, session: Session) -> Action:
        """The ``state_update`` a resume sends before its result, even without replay."""
        if session.waiting:
            return state_action(sid, "requires_action")
        return (
            state_action(sid, "running") if session.turns else state_action(sid, "idle")
        )

    def cancelled(self, sid: str) -> list[Action]:
        """The session's turn was cancelled in the client's stead (an archive closes it): the
        agent's permission requests still waiting are answered ``cancelled``, as a v1 client
        answers them after its cancel (the client's own answer to them is dropped)."""
        return self._out(self._cancelled(sid))

    def _cancelled(self, sid: str) -> list[Action]:
        session = self.sessions.get(sid)
        actions: list[Action] = []
        for key in session.waiting:
            _, request_id = self._permissions.pop(key, (None, None))
            self._asked.pop(key, None)
            self._settled.add(key)
            actions.append(
                (AGENT, {"jsonrpc": "2.0", "id": request_id, "result": CANCELLED})
            )
        session.waiting.clear()
        return actions

    def _close(self, sid: str) -> list[Action]:
        """The session closes: its turns end (idle ``cancelled``; what the agent answers to
        them later is not passed on), what waits is answered (``cancelled``), and the
        agent's messages for it are dropped from then on."""
        actions = self._cancelled(sid)
        session = self.sessions.get(sid)
        session.closed = session.open
        session.open = False
        session.message = None
        if any(turn.acked for turn in session.turns):
            actions.append(state_action(sid, "idle", stopReason="cancelled"))
        session.turns.clear()
        return actions
