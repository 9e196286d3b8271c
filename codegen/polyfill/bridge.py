"""The version bridge: a client that speaks protocol 2 in front of an agent that speaks 1.

Sans I/O: ``from_client`` takes what the v2 client sent, ``from_agent`` what the v1 side
sent (the agent, or the archive layer that answers for it), ``forwarded`` is told once a
message has reached the agent; each returns what to send, as ``("client", message)`` and
``("agent", message)`` pairs, in order. The relay runs them; a Python agent on the
generated v1 package could run them the same way in front of its own connection.

Until ``initialize`` it only adds v1's members to a v2 request; it takes over once the
agent answers ``protocolVersion: 1`` to a client that asked for 2. The state v2 needs and
v1 does not carry lives here:

- the prompt lifecycle: ``session/prompt`` is answered as soon as the agent has it (with
  the user message's ``messageId``), then the ``user_message`` and ``state_update``
  ``running``; ``requires_action`` while a permission request waits; ``idle`` with the v1
  response's ``stopReason`` (an error response is stop reason ``error``, or ``cancelled``
  after the client's ``session/cancel``: v1 asks agents to say ``cancelled`` there, and
  some fail with the aborted request instead);
- message ids (``sessions.py``), each session's plan id, modes (a ``mode`` config option)
  and config options;
- a prompt sent while another runs goes to the agent too; the session is idle once the
  agent has answered every prompt. ``session/close`` (or a close the agent lacks) ends the
  turns, idle ``cancelled`` before the result, and answers the agent's permission requests
  still waiting ``cancelled``;
- ``session/resume`` with ``replayFrom: {type: start}`` is v1's ``session/load``; without
  it, v1's ``session/resume`` or, where the agent has only load, a load whose replay is not
  passed on.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Callable
from typing import Any

from . import translate
from .sessions import CHUNKS, Session, Sessions, Turn
from .translate import Untranslatable, obj

logger = logging.getLogger(__name__)

Action = tuple[str, dict[str, Any]]
METHOD_NOT_FOUND, INVALID_PARAMS, RESOURCE_NOT_FOUND = -32601, -32602, -32002
# Updates that do not end the message being streamed.
_BESIDE_MESSAGES = {
    "usage_update",
    "session_info_update",
    "available_commands_update",
    "config_option_update",
    "current_mode_update",
}
CANCELLED = {"outcome": {"outcome": "cancelled"}}


def _key(value: Any) -> str:
    return json.dumps(value)


def _update(sid: str, update: dict[str, Any]) -> Action:
    return ("client", {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": update}})


def _state(sid: str, state: str, **extra: Any) -> Action:
    return _update(sid, {"sessionUpdate": "state_update", "state": state, **extra})


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def _no_method(request_id: Any, method: str, reason: str) -> dict[str, Any]:
    """-32601 for a method the other side cannot serve, with why."""
    return _error(request_id, METHOD_NOT_FOUND, "Method not found", {"method": method, "reason": reason})


def _not_open(request_id: Any, sid: str) -> Action:
    text = f"Session {sid} is not open on this connection: session/new or session/resume it"
    return ("client", _error(request_id, RESOURCE_NOT_FOUND, text, {"sessionId": sid}))


# What the v1 side answers to a request the bridge forwarded becomes the v2 client's answer.
Answer = Callable[[dict[str, Any]], list[Action]]


class Bridge:
    def __init__(self, agent_name: str, prefix: str | None = None) -> None:
        self.agent_name = agent_name
        self.active = False
        self.lock = threading.RLock()  # held by the relay around each call, and over a read of the agent's
        self.sessions = Sessions(prefix or f"acp-bridge-{secrets.token_hex(6)}-")
        self._initialize: str | None = None  # the key of the client's v2 initialize request
        self._caps: dict[str, Any] = {}
        self._answers: dict[str, Answer] = {}  # forwarded request id -> its answer's translation
        self._permissions: dict[str, tuple[str, Any]] = {}  # the agent's waiting permission requests: session, id
        self._settled: set[str] = set()  # permission requests the bridge answered: the client's answer is dropped

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

    # -- the client's messages -----------------------------------------------------------

    def wants(self, message: dict[str, Any]) -> bool:
        """Whether a client's message must pass through ``from_client``: every one once the
        bridge speaks, and before that a v2 ``initialize``."""
        if self.active:
            return True
        version = obj(message.get("params")).get("protocolVersion")
        return message.get("method") == "initialize" and type(version) is int and version >= 2

    def from_client(self, message: dict[str, Any]) -> list[Action]:
        method = message.get("method")
        if not self.active:
            params = message.get("params")
            if self.wants(message) and "id" in message and isinstance(params, dict):
                self._initialize = _key(message["id"])
                return [("agent", {**message, "params": translate.initialize_request(params)})]
            return [("agent", message)]
        if not isinstance(method, str):
            return self._client_answer(message)
        params = obj(message.get("params"))
        if "id" not in message:
            if method == "session/cancel" and (session := self.sessions.known(params.get("sessionId"))):
                for turn in session.turns:
                    turn.cancelled = True
            return [("agent", message)]
        try:
            return self._request(message, method, params)
        except Untranslatable as exc:
            data = {"errors": [{"path": exc.path, "message": exc.reason}]}
            return [("client", _error(message["id"], INVALID_PARAMS, "Invalid params", data))]

    def _request(self, message: dict[str, Any], method: str, params: dict[str, Any]) -> list[Action]:
        request_id = message["id"]
        sid = params.get("sessionId")
        why = translate.only_in(method, 2)
        if why is not None:
            return [("client", _no_method(request_id, method, why))]
        v1_name = translate.renamed(method)
        if v1_name is not None:
            return [("agent", {**message, "method": v1_name})]
        if method == "session/new":
            self._expect(request_id, lambda m: self._opened(m, None))
            return [("agent", {**message, "params": translate.session_params(params)})]
        if method == "session/list":
            if not self._caps.get("list"):
                return [("client", _no_method(request_id, method, "the agent (protocol 1) does not list sessions"))]
            self._expect(request_id, self._listed)
        if not isinstance(sid, str):
            return [("agent", message)]
        if method == "session/resume":
            return self._resume(message, params, sid)
        if method == "session/prompt":
            return self._prompt(message, params, sid)
        if method == "session/set_config_option":
            return self._set_option(message, params, sid)
        if method == "session/close" and not self._caps.get("close"):
            # No close in the agent: its turns are cancelled, and the session is closed here.
            cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
            done = {"jsonrpc": "2.0", "id": request_id, "result": {}}
            return [("agent", cancel), *self._close(sid), ("client", done)]
        if method == "session/close":
            self._expect(request_id, lambda m: [*self._close(sid), ("client", m)] if "result" in m else [("client", m)])
        return [("agent", message)]

    def _expect(self, request_id: Any, answer: Answer) -> None:
        self._answers[_key(request_id)] = answer

    def _resume(self, message: dict[str, Any], params: dict[str, Any], sid: str) -> list[Action]:
        replay = params.get("replayFrom")
        v1 = translate.session_params(params)
        if replay is not None and obj(replay).get("type") != "start":
            raise Untranslatable(["replayFrom", "type"], "protocol 1 replays only from the start")
        if replay is None and self._caps.get("resume"):
            method = "session/resume"
        elif self._caps.get("load"):
            method = "session/load"
        else:
            missing = "session/load (loadSession)" if replay is not None else "session/resume or session/load"
            return [("client", _no_method(message["id"], "session/resume", f"the agent has no {missing}"))]
        session = self.sessions.get(sid)
        session.quiet = method == "session/load" and replay is None
        session.replayed = 0 if method == "session/load" and replay is not None else None
        session.message = None
        self._expect(message["id"], lambda m: self._opened(m, sid))
        return [("agent", {**message, "method": method, "params": v1})]

    def _prompt(self, message: dict[str, Any], params: dict[str, Any], sid: str) -> list[Action]:
        session = self.sessions.known(sid)
        if session is None or not session.open:
            return [_not_open(message["id"], sid)]
        own = self.sessions.mint("prompt")
        prompt = params.get("prompt")
        turn = Turn(message["id"], self.sessions.mint("msg-user"), prompt if isinstance(prompt, list) else [])
        session.turns.append(turn)
        session.history.append(("user_message_chunk", turn.user_message))
        session.message = None
        self._expect(own, lambda m: self._turn_ended(m, sid, turn))
        return [("agent", {**message, "id": own})]

    def _set_option(self, message: dict[str, Any], params: dict[str, Any], sid: str) -> list[Action]:
        session = self.sessions.known(sid)
        if session is None or not session.open:
            return [_not_open(message["id"], sid)]
        config_id = params.get("configId")
        known = [o.get("configId") for o in translate.config_options(session.options, session.modes)]
        if config_id not in known:
            raise Untranslatable(["configId"], f"the session has no config option {config_id!r}")
        if config_id == translate.MODE_OPTION and translate.modes_shown(session.options, session.modes):
            value = params.get("value")
            if params.get("type") != "id" or not isinstance(value, str):
                raise Untranslatable(["value"], "the mode option takes a mode id (type id)")
            v1 = {"sessionId": sid, "modeId": value}
            if "_meta" in params:
                v1["_meta"] = params["_meta"]
            self._expect(message["id"], lambda m: self._mode_set(m, session, value))
            return [("agent", {**message, "method": "session/set_mode", "params": v1})]
        self._expect(message["id"], lambda m: self._options_set(m, session))
        return [("agent", {**message, "params": translate.set_config_option(params)})]

    def _client_answer(self, message: dict[str, Any]) -> list[Action]:
        """The client's answer to one of the agent's requests: a permission answered puts the
        turn back to running once nothing else waits; one the bridge answered is dropped."""
        key = _key(message.get("id"))
        if key in self._settled:
            self._settled.discard(key)
            return []
        sid, _ = self._permissions.pop(key, (None, None))
        session = self.sessions.known(sid)
        if sid is not None and session is not None and key in session.waiting:
            session.waiting.discard(key)
            if not session.waiting and session.turns:  # (said first: the agent's next update cannot overtake it)
                return [_state(sid, "running"), ("agent", message)]
        return [("agent", message)]

    def forwarded(self, message: dict[str, Any]) -> list[Action]:
        """A message is on its way to the agent: a prompt is accepted, and the v2 client hears so."""
        if message.get("method") != "session/prompt":
            return []
        sid = obj(message.get("params")).get("sessionId")
        session = self.sessions.known(sid)
        turn = session.turns[-1] if session is not None and session.turns else None
        if turn is None or turn.acked:
            return []
        turn.acked = True
        assert isinstance(sid, str)
        ack = {"jsonrpc": "2.0", "id": turn.client_id, "result": {"messageId": turn.user_message}}
        user = {"sessionUpdate": "user_message", "messageId": turn.user_message, "content": turn.prompt}
        return [("client", ack), _update(sid, user), _state(sid, "running")]

    # -- the v1 side's messages -----------------------------------------------------------

    def from_agent(self, message: dict[str, Any]) -> list[Action]:
        method = message.get("method")
        if not self.active:
            if method is None and self._initialize is not None and _key(message.get("id")) == self._initialize:
                self._initialize = None
                return self._initialized(message)
            return [("client", message)]
        if method is None:
            answer = self._answers.pop(_key(message.get("id")), None)
            return [("client", message)] if answer is None else answer(message)
        if not isinstance(method, str):
            return [("client", message)]
        why = translate.only_in(method, 1) if "id" in message else None
        if why is not None:
            logger.warning("polyfill: the agent asked the v2 client for %s: %s", method, why)
            return [("agent", _no_method(message["id"], method, f"the client speaks protocol 2: {why}"))]
        params = obj(message.get("params"))
        sid = params.get("sessionId")
        if method == "session/request_permission" and isinstance(sid, str) and "id" in message:
            return self._permission(message, params, sid)
        if method == "session/update" and isinstance(sid, str):
            return self._updates(message, params, sid)
        return [("client", message)]

    def _initialized(self, message: dict[str, Any]) -> list[Action]:
        result = message.get("result")
        if not isinstance(result, dict) or translate.spoken_version(result) != 1:
            return [("client", message)]  # an error, or an agent of the client's version: nothing to bridge
        self.active = True
        caps = obj(result.get("agentCapabilities"))
        session = obj(caps.get("sessionCapabilities"))
        self._caps = {
            "load": caps.get("loadSession") is True,
            "list": isinstance(session.get("list"), dict),
            "resume": isinstance(session.get("resume"), dict),
            "close": isinstance(session.get("close"), dict),
        }
        return [("client", {**message, "result": translate.initialize_result(result, self.agent_name)})]

    def _opened(self, message: dict[str, Any], sid: str | None) -> list[Action]:
        result = message.get("result")
        sid = sid if sid is not None else obj(result).get("sessionId")
        if not isinstance(sid, str):
            return [("client", message)]
        session = self.sessions.get(sid)
        session.quiet, session.replayed, session.message = False, None, None
        if not isinstance(result, dict):
            return [("client", message)]
        session.open = True
        session.modes = obj(result.get("modes")) or None
        session.options = result.get("configOptions")
        return [("client", {**message, "result": translate.session_result(result, session.modes)})]

    def _listed(self, message: dict[str, Any]) -> list[Action]:
        result = message.get("result")
        return [("client", {**message, "result": translate.sessions(result)} if isinstance(result, dict) else message)]

    def cancelled(self, sid: str) -> list[Action]:
        """The session's turn was cancelled in the client's stead (the archive closes it): the
        agent's permission requests still waiting are answered ``cancelled``, as a v1 client
        answers them after its cancel (the client's own answer to them is dropped)."""
        session = self.sessions.get(sid)
        actions: list[Action] = []
        for key in session.waiting:
            _, request_id = self._permissions.pop(key, (None, None))
            self._settled.add(key)
            actions.append(("agent", {"jsonrpc": "2.0", "id": request_id, "result": CANCELLED}))
        session.waiting.clear()
        return actions

    def _close(self, sid: str) -> list[Action]:
        """The session closes: its turns end (idle ``cancelled``; what the agent answers to
        them later is not passed on), and what waits is answered (``cancelled``)."""
        actions = self.cancelled(sid)
        session = self.sessions.get(sid)
        session.open = False
        session.message = None
        if any(turn.acked for turn in session.turns):
            actions.append(_state(sid, "idle", stopReason="cancelled"))
        session.turns.clear()
        return actions

    def _mode_set(self, message: dict[str, Any], session: Session, value: str) -> list[Action]:
        if not isinstance(message.get("result"), dict):
            return [("client", message)]
        if session.modes is not None:
            session.modes = {**session.modes, "currentModeId": value}
        options = translate.config_options(session.options, session.modes)
        return [("client", {**message, "result": {"configOptions": options}})]

    def _options_set(self, message: dict[str, Any], session: Session) -> list[Action]:
        result = message.get("result")
        if not isinstance(result, dict):
            return [("client", message)]
        session.options = result.get("configOptions")
        out = {**result, "configOptions": translate.config_options(session.options, session.modes)}
        return [("client", {**message, "result": out})]

    def _turn_ended(self, message: dict[str, Any], sid: str, turn: Turn) -> list[Action]:
        """The agent answered a prompt. The session is idle once it has answered every
        prompt: with this one's stop reason (an error is stop reason ``error``)."""
        session = self.sessions.get(sid)
        if turn not in session.turns:
            return []  # (ended already: the session was closed)
        session.turns.remove(turn)
        session.message = None
        if not turn.acked:  # refused before it reached the agent: the client's own error
            session.history.remove(("user_message_chunk", turn.user_message))
            failure = message.get("error", {"code": -32603, "message": "Internal error"})
            return [("client", {"jsonrpc": "2.0", "id": turn.client_id, "error": failure})]
        if session.turns:
            return []
        if "error" in message and turn.cancelled:
            return [_state(sid, "idle", stopReason="cancelled")]
        if "error" in message:
            return [_state(sid, "idle", stopReason="error", error=message["error"])]
        result = obj(message.get("result"))
        extra: dict[str, Any] = {}
        usage = result.get("usage")
        if isinstance(usage, dict) and all(k in usage for k in ("totalTokens", "inputTokens", "outputTokens")):
            extra["usage"] = usage
        return [_state(sid, "idle", stopReason=result.get("stopReason", "end_turn"), **extra)]

    def _permission(self, message: dict[str, Any], params: dict[str, Any], sid: str) -> list[Action]:
        request = {**message, "params": translate.permission_request(params)}
        session = self.sessions.known(sid)
        if session is None or not session.turns:
            return [("client", request)]
        first = not session.waiting
        key = _key(message["id"])
        session.waiting.add(key)
        self._permissions[key] = (sid, message["id"])
        return [_state(sid, "requires_action"), ("client", request)] if first else [("client", request)]

    def _updates(self, message: dict[str, Any], params: dict[str, Any], sid: str) -> list[Action]:
        update = obj(params.get("update"))
        kind = update.get("sessionUpdate")
        session = self.sessions.get(sid)
        if session.quiet:
            return []  # the replay of a load that stands in for a resume without replay
        if kind not in _BESIDE_MESSAGES and kind not in CHUNKS:
            session.message = None
        if kind in CHUNKS:
            update = {**update, "messageId": self.sessions.message_id(session, kind, update.get("messageId"))}
        elif kind in ("tool_call", "tool_call_update"):
            update = translate.tool_call(update)
        elif kind == "plan":
            update = translate.plan(update, session.plan_id)
        elif kind == "available_commands_update":
            update = translate.commands(update)
        elif kind == "session_info_update" and "updatedAt" in update:
            update = {**update, "updatedAt": translate.timestamp(update["updatedAt"])}
        elif kind == "config_option_update":
            session.options = update.get("configOptions")
            update = {**update, "configOptions": translate.config_options(session.options, session.modes)}
        elif kind == "current_mode_update":
            if session.modes is None:
                logger.warning("polyfill: current_mode_update for %s, whose modes the bridge never saw", sid)
                return []
            session.modes = {**session.modes, "currentModeId": update.get("currentModeId")}
            options = translate.config_options(session.options, session.modes)
            update = {"sessionUpdate": "config_option_update", "configOptions": options}
        return [("client", {**message, "params": {**params, "update": update}})]
