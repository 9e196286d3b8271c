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
  response's ``stopReason`` (an error response is stop reason ``error``);
- message ids: a chunk continues the message of the chunk before it, of the same kind, until
  a chunk of another kind, a tool call, a plan or the turn's end starts another;
- each session's plan id, modes (a ``mode`` config option) and config options;
- ``session/resume`` with ``replayFrom: {type: start}`` is v1's ``session/load``; without
  it, v1's ``session/resume`` or, where the agent has only load, a load whose replay is not
  passed on.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import PydanticCustomError

from . import translate
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
_CHUNKS = {"user_message_chunk": "user", "agent_message_chunk": "agent", "agent_thought_chunk": "thought"}
# The stream of a turn is chunks, nearly all of them; a chunk that the line shows plainly
# (the envelope first, one "sessionUpdate", no "messageId" anywhere) gets its id written in
# without being decoded (``fast``).
_UPDATE_HEAD = re.compile(
    rb'\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"method"\s*:\s*"session/update"\s*,\s*"params"\s*:\s*'
    rb'\{\s*"sessionId"\s*:\s*"([^"\\]*)"\s*,\s*"update"\s*:\s*\{'
)
_KIND = re.compile(rb'"sessionUpdate"\s*:\s*"([a-z_]*)"')
_CHUNK_KINDS = {kind.encode(): kind for kind in _CHUNKS}


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


@dataclass
class _Turn:
    client_id: Any
    user_message: str
    prompt: list[Any]
    acked: bool = False
    waiting: set[str] = field(default_factory=set)  # the agent's permission requests not answered


@dataclass
class _Session:
    plan_id: str
    modes: dict[str, Any] | None = None
    options: Any = None
    # (chunk kind, messageId, its member as written in by ``fast``) of the message being streamed
    message: tuple[str, str, bytes] | None = None
    turn: _Turn | None = None
    quiet: bool = False  # a load standing in for a resume without replay: its replay is not passed on
    # Each message this connection has shown, (its kind, its id), in order: a replay gives each
    # the id it had live (the schema asks it), matched by kind in order. ``replayed``: how far a
    # replay going on has come, None while none does.
    history: list[tuple[str, str]] = field(default_factory=list)
    replayed: int | None = None


# What the v1 side answers to a request the bridge forwarded becomes the v2 client's answer.
Answer = Callable[[dict[str, Any]], list[Action]]


class Bridge:
    def __init__(self, agent_name: str, prefix: str | None = None) -> None:
        self.agent_name = agent_name
        self.prefix = prefix or f"acp-bridge-{secrets.token_hex(6)}-"
        self.active = False
        self.lock = threading.RLock()  # held by the relay around each call, and over a read of the agent's
        self._initialize: str | None = None  # the key of the client's v2 initialize request
        self._caps: dict[str, Any] = {}
        self._numbers = itertools.count(1)
        self._sessions: dict[str, _Session] = {}
        self._answers: dict[str, Answer] = {}  # forwarded request id -> its answer's translation
        self._permissions: dict[str, str] = {}  # the agent's permission request id -> session
        self._head: tuple[bytes, str] = (b"\0", "")  # the last chunk line's head up to its update, and its session

    def _id(self, kind: str) -> str:
        return f"{kind}-{self.prefix}{next(self._numbers)}"

    def _session(self, sid: str) -> _Session:
        session = self._sessions.get(sid)
        if session is None:
            session = self._sessions[sid] = _Session(plan_id=self._id("plan"))
        return session

    @property
    def interested(self) -> bool:
        """Whether the v1 side's messages must pass through ``from_agent``."""
        return self.active or self._initialize is not None

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
            if method == "initialize" and "id" in message and isinstance(params, dict):
                version = params.get("protocolVersion")
                if type(version) is int and version >= 2:
                    self._initialize = _key(message["id"])
                    return [("agent", {**message, "params": translate.initialize_request(params)})]
            return [("agent", message)]
        if not isinstance(method, str):
            return self._client_answer(message)
        params = obj(message.get("params"))
        if "id" not in message:
            if method == "session/cancel" and isinstance(params.get("sessionId"), str):
                self._session(params["sessionId"])
            return [("agent", message)]
        try:
            return self._request(message, method, params)
        except Untranslatable as exc:
            data = {"errors": [{"path": exc.path, "message": exc.reason}]}
            return [("client", _error(message["id"], INVALID_PARAMS, "Invalid params", data))]

    def _request(self, message: dict[str, Any], method: str, params: dict[str, Any]) -> list[Action]:
        request_id = message["id"]
        sid = params.get("sessionId")
        if method in translate.V2_ONLY:
            data = {"method": method, "reason": translate.V2_ONLY[method]}
            return [("client", _error(request_id, METHOD_NOT_FOUND, "Method not found", data))]
        if method in translate.RENAMED:
            return [("agent", {**message, "method": translate.RENAMED[method]})]
        if method == "session/new":
            cwd = params.get("cwd")
            self._expect(request_id, lambda m: self._opened(m, None, cwd))
            return [("agent", {**message, "params": translate.session_params(params)})]
        if not isinstance(sid, str):
            return [("agent", message)]
        if method == "session/resume":
            return self._resume(message, params, sid)
        if method == "session/prompt":
            return self._prompt(message, params, sid)
        if method == "session/set_config_option":
            return self._set_option(message, params, sid)
        if method == "session/close" and not self._caps.get("close"):
            # No close in the agent: its turn is cancelled, and the session is closed here.
            self._sessions.pop(sid, None)
            cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
            return [("agent", cancel), ("client", {"jsonrpc": "2.0", "id": request_id, "result": {}})]
        if method == "session/close":
            self._expect(request_id, lambda m: self._closed(m, sid))
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
            data = {"method": "session/resume", "reason": f"the agent has no {missing}"}
            return [("client", _error(message["id"], METHOD_NOT_FOUND, "Method not found", data))]
        session = self._session(sid)
        session.quiet = method == "session/load" and replay is None
        session.replayed = 0 if method == "session/load" and replay is not None else None
        session.message = None
        self._expect(message["id"], lambda m: self._opened(m, sid, None))
        return [("agent", {**message, "method": method, "params": v1})]

    def _prompt(self, message: dict[str, Any], params: dict[str, Any], sid: str) -> list[Action]:
        session = self._sessions.get(sid)
        if session is None:
            data = {"sessionId": sid}
            text = f"Session {sid} is not open on this connection: session/new or session/resume it"
            return [("client", _error(message["id"], RESOURCE_NOT_FOUND, text, data))]
        own = self._id("prompt")
        prompt = params.get("prompt")
        session.turn = _Turn(message["id"], self._id("msg-user"), prompt if isinstance(prompt, list) else [])
        session.history.append(("user_message_chunk", session.turn.user_message))
        session.message = None
        self._expect(own, lambda m: self._turn_ended(m, sid))
        return [("agent", {**message, "id": own})]

    def _set_option(self, message: dict[str, Any], params: dict[str, Any], sid: str) -> list[Action]:
        session = self._session(sid)
        if params.get("configId") == translate.MODE_OPTION and translate.modes_shown(session.options, session.modes):
            value = params.get("value")
            if params.get("type") != "id" or not isinstance(value, str):
                raise Untranslatable(["value"], "the mode option takes a mode id (type id)")
            v1 = {"sessionId": sid, "modeId": value}
            if "_meta" in params:
                v1["_meta"] = params["_meta"]
            self._expect(message["id"], lambda m: self._mode_set(m, sid, value))
            return [("agent", {**message, "method": "session/set_mode", "params": v1})]
        self._expect(message["id"], lambda m: self._options_set(m, sid))
        return [("agent", {**message, "params": translate.set_config_option(params)})]

    def _client_answer(self, message: dict[str, Any]) -> list[Action]:
        """The client's answer to one of the agent's requests: a permission answered puts the
        turn back to running once nothing else waits."""
        sid = self._permissions.pop(_key(message.get("id")), None)
        session = self._sessions.get(sid) if sid is not None else None
        if sid is not None and session is not None and session.turn is not None:
            session.turn.waiting.discard(_key(message.get("id")))
            if not session.turn.waiting:  # (said first: the agent's next update cannot overtake it)
                return [_state(sid, "running"), ("agent", message)]
        return [("agent", message)]

    def forwarded(self, message: dict[str, Any]) -> list[Action]:
        """A message has reached the agent: a prompt is accepted, and the v2 client hears so."""
        if message.get("method") != "session/prompt":
            return []
        sid = obj(message.get("params")).get("sessionId")
        session = self._sessions.get(sid) if isinstance(sid, str) else None
        turn = session.turn if session is not None else None
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
        if "id" in message and method.startswith(translate.V1_CLIENT_ONLY):
            logger.warning("polyfill: the agent asked the v2 client for %s, which protocol 2 removed", method)
            data = {"method": method, "reason": "the client speaks protocol 2, which has no client files or terminals"}
            return [("agent", _error(message["id"], METHOD_NOT_FOUND, "Method not found", data))]
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
            "resume": isinstance(session.get("resume"), dict),
            "close": isinstance(session.get("close"), dict),
        }
        return [("client", {**message, "result": translate.initialize_result(result, self.agent_name)})]

    def _opened(self, message: dict[str, Any], sid: str | None, cwd: Any) -> list[Action]:
        result = message.get("result")
        if not isinstance(result, dict):
            if sid is not None and sid in self._sessions:
                self._sessions[sid].quiet = False
                self._sessions[sid].replayed = None
            return [("client", message)]
        sid = sid if sid is not None else result.get("sessionId")
        if not isinstance(sid, str):
            return [("client", message)]
        session = self._session(sid)
        session.quiet = False
        session.replayed = None
        session.message = None
        session.modes = obj(result.get("modes")) or None
        session.options = result.get("configOptions")
        return [("client", {**message, "result": translate.session_result(result, session.modes)})]

    def _closed(self, message: dict[str, Any], sid: str) -> list[Action]:
        if "result" in message:
            self._sessions.pop(sid, None)
        return [("client", message)]

    def _mode_set(self, message: dict[str, Any], sid: str, value: str) -> list[Action]:
        if not isinstance(message.get("result"), dict):
            return [("client", message)]
        session = self._session(sid)
        if session.modes is not None:
            session.modes = {**session.modes, "currentModeId": value}
        options = translate.config_options(session.options, session.modes)
        return [("client", {**message, "result": {"configOptions": options}})]

    def _options_set(self, message: dict[str, Any], sid: str) -> list[Action]:
        result = message.get("result")
        if not isinstance(result, dict):
            return [("client", message)]
        session = self._session(sid)
        session.options = result.get("configOptions")
        out = {**result, "configOptions": translate.config_options(session.options, session.modes)}
        return [("client", {**message, "result": out})]

    def _turn_ended(self, message: dict[str, Any], sid: str) -> list[Action]:
        session = self._sessions.get(sid)
        turn = session.turn if session is not None else None
        if session is None or turn is None:
            return []
        session.turn = None
        session.message = None
        if not turn.acked:  # refused before it reached the agent: the client's own error
            session.history.remove(("user_message_chunk", turn.user_message))
            failure = message.get("error", {"code": -32603, "message": "Internal error"})
            return [("client", {"jsonrpc": "2.0", "id": turn.client_id, "error": failure})]
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
        session = self._sessions.get(sid)
        if session is None or session.turn is None:
            return [("client", request)]
        first = not session.turn.waiting
        session.turn.waiting.add(_key(message["id"]))
        self._permissions[_key(message["id"])] = sid
        return [_state(sid, "requires_action"), ("client", request)] if first else [("client", request)]

    def _message_id(self, session: _Session, kind: str, given: Any) -> str:
        """A chunk's message: the id the agent gave, else the one of the chunk before it of
        the same kind, else a new one."""
        if isinstance(given, str):
            if session.message is None or session.message[:2] != (kind, given):
                session.message = (kind, given, b"")
                self._shown(session, kind, given)
        elif session.message is None or session.message[0] != kind:
            mid = self._shown(session, kind, None)
            session.message = (kind, mid, b'"messageId":' + json.dumps(mid).encode() + b",")
        return session.message[1]

    def _shown(self, session: _Session, kind: str, given: str | None) -> str:
        """A message starts: live, it is recorded; in a replay, it is the next recorded one of
        its kind (where one is left) and keeps that one's id."""
        if session.replayed is None:
            mid = given or self._id(f"msg-{_CHUNKS[kind]}")
            session.history.append((kind, mid))
            return mid
        for at in range(session.replayed, len(session.history)):
            if session.history[at][0] == kind:
                session.replayed = at + 1
                return given or session.history[at][1]
        mid = given or self._id(f"msg-{_CHUNKS[kind]}")
        session.history.append((kind, mid))  # (a message this connection had not shown: the next replay keeps it too)
        session.replayed = len(session.history)
        return mid

    def fast(self, line: bytes) -> bytes | None:
        """A chunk's line with its message id written in, b"" for one not passed on, None
        for a line that ``from_agent`` must decode."""
        head, sid = self._head
        if not line.startswith(head):  # (a turn's lines share their head: matched once)
            found = _UPDATE_HEAD.match(line)
            if found is None:
                return None
            head, sid = self._head = (line[: found.end()], found[1].decode())
        end = len(head)
        found = _KIND.search(line, end)
        kind = _CHUNK_KINDS.get(found[1]) if found is not None else None
        if kind is None or line.count(b'"sessionUpdate"') != 1 or b'"messageId"' in line:
            return None
        session = self._sessions.get(sid) or self._session(sid)
        if session.quiet:
            return b""
        if session.message is None or session.message[0] != kind or not session.message[2]:
            self._message_id(session, kind, None)
        assert session.message is not None
        return line[:end] + session.message[2] + line[end:]

    def fast_lines(self, data: bytes) -> bytes | None:
        """Whole lines at once (``data`` ends with a newline) where each is a plain chunk of
        one session and one kind, as a busy turn's reads are: every line's id written in
        with a few passes over the bytes. None where one line is anything else."""
        found = _UPDATE_HEAD.match(data)
        if found is None:
            return None
        head, sid = data[: found.end()], found[1].decode()
        kind_found = _KIND.search(data, len(head))
        kind = _CHUNK_KINDS.get(kind_found[1]) if kind_found is not None else None
        if kind_found is None or kind is None or b'"messageId"' in data:
            return None
        lines = data.count(b"\n")
        # The tag first (as TypeScript and serde write it): every line starting with the head
        # and the tag is one of the kind. Else the tag's count and the kind's must be the lines'.
        first = kind_found.start() == len(head)
        start = data[: kind_found.end()] if first else head
        if not first and (data.count(b'"sessionUpdate"') != lines or data.count(kind_found[0]) != lines):
            return None
        session = self._sessions.get(sid) or self._session(sid)
        if session.quiet:
            return None  # (rare: a replay not passed on, line by line)
        if session.message is None or session.message[0] != kind or not session.message[2]:
            self._message_id(session, kind, None)  # (the first line's message, whatever the others are)
        assert session.message is not None
        marked = head + session.message[2] + start[len(head) :]
        out = data[len(start) :].replace(b"\n" + start, b"\n" + marked)
        if len(out) + len(start) - len(data) != (lines - 1) * (len(marked) - len(start)):
            return None  # a line that does not start so: each line is looked at
        return marked + out

    def _updates(self, message: dict[str, Any], params: dict[str, Any], sid: str) -> list[Action]:
        update = obj(params.get("update"))
        kind = update.get("sessionUpdate")
        session = self._session(sid)
        if session.quiet:
            return []  # the replay of a load that stands in for a resume without replay
        if kind not in _BESIDE_MESSAGES and kind not in _CHUNKS:
            session.message = None
        if kind in _CHUNKS:
            update = {**update, "messageId": self._message_id(session, kind, update.get("messageId"))}
        elif kind in ("tool_call", "tool_call_update"):
            update = _tool_call(update)
        elif kind == "plan":
            plan = {"type": "items", "planId": session.plan_id, "entries": update.get("entries", [])}
            update = {
                "sessionUpdate": "plan_update",
                "plan": plan,
                **{k: v for k, v in update.items() if k == "_meta"},
            }
        elif kind == "available_commands_update":
            update = translate.commands(update)
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


def _tool_call(update: dict[str, Any]) -> dict[str, Any]:
    try:
        return translate.tool_call(update)
    except PydanticCustomError as exc:
        # A diff v2 cannot carry (a relative path): shown as text rather than lost.
        logger.warning("polyfill: a diff of tool call %s has no v2 form: %s", update.get("toolCallId"), exc)
        kept = [c if obj(c).get("type") != "diff" else _diff_as_text(c) for c in update.get("content") or []]
        return translate.tool_call({**update, "content": kept})


def _diff_as_text(item: dict[str, Any]) -> dict[str, Any]:
    text = f"{item.get('path')}: changed (the diff has no protocol 2 form: its path is not absolute)"
    return {"type": "content", "content": {"type": "text", "text": text}}
