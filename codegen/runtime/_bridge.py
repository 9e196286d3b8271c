"""The version bridge: a client that speaks protocol 2 in front of an agent that speaks 1,
on the generated package's own v2 models (validation) and ``convert`` module (every value
that differs between the versions). Nothing here depends on the schema: the package's
``bridge`` module binds it to its tables.

Sans I/O, one ``Bridge`` per connection. The host hands it each line the client wrote
(``from_client_line``, bytes as read), each message of the v1 side (``from_agent``: the
agent, or whatever answers in its stead), and tells it when a message reaches the agent
(``forwarded``). Each returns what to send, in order, as ``(CLIENT, payload)`` and
``(AGENT, payload)`` actions; a payload is a message (a dict), a batch's answer (a list)
or a line to pass on as it was read (bytes). ``encode`` writes any of them as a line.

Until the client's ``initialize`` asks for protocol 2 and the agent answers 1, every line
passes through unchanged. Then, the state v2 needs and v1 does not carry lives here:

- bad input reaches no agent: an unparsable line is -32700, a value that is no request
  -32600, a batch is split for the agent and answered as one array (``[]``: one -32600),
  and v2 params are validated before anything is acknowledged or forwarded (-32602 naming
  the field); a v1 answer that has no valid v2 form is an error naming what was wrong;
- the prompt lifecycle: ``session/prompt`` is answered as soon as the agent has it (with
  the user message's ``messageId``), then the ``user_message`` and ``state_update``
  ``running``; ``requires_action`` while a permission request waits; ``idle`` with the v1
  response's ``stopReason`` (an error response is stop reason ``error``, or ``cancelled``
  after the client's ``session/cancel``: v1 asks agents to say ``cancelled`` there, and
  some fail with the aborted request instead); the agent's echo of a live prompt
  (``user_message_chunk`` during the turn) is not shown twice;
- message ids (``_bridge_sessions``), plan ids, modes (a ``mode`` config option), config
  options; a prompt while another runs goes to the agent too (idle once all are answered);
- the v2 baseline, whatever the agent lacks of it: ``session/list`` from the sessions
  opened through the bridge (``SessionIndex``), ``session/close`` by ending the session's
  turns (idle ``cancelled`` before the result, waiting permission requests answered
  ``cancelled``) and forgetting it, ``session/resume`` through v1's resume, through its
  load (whose replay is not passed on without ``replayFrom``), or, for a session the agent
  still has open, by the bridge; with its ``state_update`` before the result.
"""

from __future__ import annotations

import json
from typing import Any

from ._bridge_agent import AgentSide
from ._bridge_core import (
    AGENT,
    CLIENT,
    Action,
    Batch,
    Refused,
    Tables,
    as_object,
    encode,
    envelope_error,
    error,
    id_key,
    logger,
    named,
    no_method,
    not_open,
    problem,
    spoken_version,
    state_action,
    update_action,
)
from ._bridge_sessions import (
    MODE_OPTION,
    MemoryIndex,
    SessionIndex,
    Turn,
    listed_page,
    modes_shown,
    v1_options,
)
from ._router import _DECODER
from ._runtime import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
)

__all__ = [
    "AGENT",
    "CLIENT",
    "Action",
    "Bridge",
    "MemoryIndex",
    "SessionIndex",
    "Tables",
    "encode",
    "spoken_version",
]


class Bridge(AgentSide):
    """One connection's bridge (see the module). ``tables`` gives what it runs on, loaded
    once the client asks for protocol 2; ``agent_name`` is the agent's ``info.name`` where
    its v1 answer names none; ``index`` keeps the sessions opened, for ``session/list``.
    """

    # -- the client's messages -----------------------------------------------------------

    def wants(self, message: dict[str, Any]) -> bool:
        """Whether a client's message must pass through ``from_client``: every one once the
        bridge speaks, and before that a v2 ``initialize``."""
        if self.active:
            return True
        version = as_object(message.get("params")).get("protocolVersion")
        return (
            message.get("method") == "initialize"
            and type(version) is int
            and version >= 2
        )

    def from_client_line(self, line: bytes) -> list[Action]:
        """One line the client wrote, as read."""
        if self._holds(line):
            return []
        if not self.active:
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                message = None
            if isinstance(message, dict) and self.wants(message):
                return self.from_client(message)
            return [(AGENT, line)]
        if not line.strip():
            return []
        try:
            value = _DECODER.decode(line.decode())
        except (ValueError, RecursionError) as exc:
            data = {"reason": f"not JSON: {exc}"}
            return [(CLIENT, error(None, PARSE_ERROR, "Parse error", data))]
        if isinstance(value, list):
            return self._out(self._batch(value))
        return self.from_client(value)

    def from_client(self, message: Any) -> list[Action]:
        """One message the client sent, decoded."""
        if self._holds(message):
            return []
        return self._out(self._from_client(message))

    def _initialized(self, message: dict[str, Any]) -> list[Action]:
        """The agent's answer to the initialize, then what the client sent before it, now
        that the answer tells which version the connection speaks."""
        actions = super()._initialized(message)
        held, self._held = self._held, []
        for item in held:
            if isinstance(item, bytes):
                actions += self.from_client_line(item)
            else:
                actions += self.from_client(item)
        return actions

    def _from_client(self, message: Any) -> list[Action]:
        if not self.active:
            if not isinstance(message, dict):
                return [(AGENT, message)]
            params = message.get("params")
            if self.wants(message) and "id" in message and isinstance(params, dict):
                return self._initialize_request(message)
            return [(AGENT, message)]
        refused = envelope_error(message)
        if refused is not None:
            return [(CLIENT, refused)]
        method = message.get("method")
        if method is None:
            return self._client_answer(message)
        if "id" not in message:
            return self._client_notification(message, method)
        try:
            return self._request(message, method, as_object(message.get("params")))
        except Refused as exc:
            return [(CLIENT, error(message["id"], exc.code, exc.message, exc.data))]

    def _batch(self, entries: list[Any]) -> list[Action]:
        """A batch: each entry on its own way, the answers to its requests as one array
        once all are in (none for a batch of notifications)."""
        if not entries:
            reason = "an empty batch"
            return [
                (
                    CLIENT,
                    error(None, INVALID_REQUEST, "Invalid Request", {"reason": reason}),
                )
            ]
        batch = Batch()
        valid = []
        for entry in entries:
            refused = envelope_error(entry)
            if refused is None and "method" in entry and "id" in entry:
                key = id_key(entry["id"])
                if key in self._batched:
                    reason = "an id another request of an open batch has"
                    data = {"reason": reason}
                    refused = error(
                        entry["id"], INVALID_REQUEST, "Invalid Request", data
                    )
                else:
                    self._batched[key] = batch
                    batch.waiting += 1
            if refused is not None:
                batch.answers.append(refused)
            else:
                valid.append(entry)
        actions = [action for entry in valid for action in self._from_client(entry)]
        if batch.waiting == 0 and batch.answers:
            actions.append((CLIENT, batch.answers))
        return actions

    def _initialize_request(self, message: dict[str, Any]) -> list[Action]:
        """The client's v2 initialize, with v1's members beside its own, so that an agent of
        either version reads it."""
        try:
            self._validated("initialize", message["params"])
            v1 = self._to_v1(message)
        except Refused as exc:
            return [(CLIENT, error(message["id"], exc.code, exc.message, exc.data))]
        if self.active:  # (again)
            self._expect(message["id"], self._initialized)
        else:
            self._initialize = id_key(message["id"])
        return [(AGENT, {**message, "params": {**v1["params"], **message["params"]}})]

    def _request(
        self, message: dict[str, Any], method: str, params: dict[str, Any]
    ) -> list[Action]:
        request_id = message["id"]
        only = self.tables.one_version_only
        why = only.get(2, {}).get(method)
        if why is None and method not in self.tables.client_methods:
            why = only.get(1, {}).get(method)
            why = f"protocol 2 has no {method}: {why}" if why else None
        if why is not None:
            return [(CLIENT, no_method(request_id, method, why))]
        if method not in self.tables.client_methods:
            return [(AGENT, message)]  # an extension, or unknown: the agent answers it
        if method == "initialize":
            return self._initialize_request(message)
        self._validated(method, message.get("params"))
        # (a string where the method has one: validated)
        sid = str(params.get("sessionId"))
        if method == "session/new":
            cwd = params["cwd"]
            self._expect(
                request_id, lambda m: self._opened(m, None, cwd, "session/new")
            )
            return [(AGENT, self._to_v1(message))]
        if method == "session/list":
            return self._list(message, params)
        if method == "session/resume":
            return self._resume(message, params, sid)
        if method == "session/prompt":
            return self._prompt(message, params, sid)
        if method == "session/set_config_option":
            return self._set_option(message, params, sid)
        if method == "session/close":
            return self._close_request(message, sid)
        if method in self.tables.closing:
            return self._closing_request(message, method, sid)
        v1 = self._to_v1(message)
        self._expect(
            request_id, lambda m: self._to_client(named(m, method), v1["method"])
        )
        return [(AGENT, v1)]

    def _client_notification(
        self, message: dict[str, Any], method: str
    ) -> list[Action]:
        if method not in self.tables.client_methods:
            return [(AGENT, message)]  # an extension, or unknown
        try:
            self._validated(method, message.get("params"))
            v1 = self._to_v1(message)
        except Refused as exc:
            logger.warning("bridge: the client's %s is not valid: %s", method, exc.data)
            return []
        sid = as_object(message.get("params")).get("sessionId")
        session = self.sessions.known(sid)
        if method == "session/cancel" and session is not None:
            for turn in session.turns:
                turn.cancelled = True
        return [(AGENT, v1)]

    def _list(self, message: dict[str, Any], params: dict[str, Any]) -> list[Action]:
        if self._caps.get("list"):
            self._expect(message["id"], lambda m: self._to_client(m, "session/list"))
            return [(AGENT, self._to_v1(message))]
        # The agent cannot list: the sessions opened through the bridge.
        result = listed_page(self.index, params.get("cwd"), params.get("cursor"))
        if result is None:
            data = problem(["cursor"], "not a cursor of this list")
            raise Refused(INVALID_PARAMS, "Invalid params", data)
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        return self._to_client(answer, "session/list")

    def _resume(
        self, message: dict[str, Any], params: dict[str, Any], sid: str
    ) -> list[Action]:
        replay = params.get("replayFrom")
        if replay is not None and replay.get("type") != "start":
            reason = "protocol 1 replays only from the start"
            raise Refused(
                INVALID_PARAMS,
                "Invalid params",
                problem(["replayFrom", "type"], reason),
            )
        if replay is None and self._caps.get("resume"):
            method = "session/resume"
        elif self._caps.get("load"):
            method = "session/load"
        elif replay is not None:
            reason = (
                "the agent (protocol 1) has no session/load to replay a session with"
            )
            raise Refused(
                INVALID_PARAMS, "Invalid params", problem(["replayFrom"], reason)
            )
        else:
            return self._resumed_here(message, sid)
        session = self.sessions.get(sid)
        was_closed, session.closed = session.closed, False  # (its replay comes first)
        session.quiet = method == "session/load" and replay is None
        session.replayed = (
            0 if method == "session/load" and replay is not None else None
        )
        session.message = None
        v1 = self._to_v1(message, method=method)
        # (v1's load requires the servers its resume may omit; v2: omitted means none)
        v1["params"].setdefault("mcpServers", [])
        cwd = params["cwd"]

        def answered(answer: dict[str, Any]) -> list[Action]:
            failure = as_object(answer.get("error"))
            if method == "session/load" or failure.get("code") != METHOD_NOT_FOUND:
                return self._opened(answer, sid, cwd, "session/resume")
            # An agent that advertised resume and has none (qwen-code 0.15.10): through its
            # load, or the bridge, as if it had not advertised it.
            self._caps["resume"] = False
            session.closed = was_closed
            try:
                return self._resume(message, params, sid)
            except Refused as exc:
                return [(CLIENT, error(message["id"], exc.code, exc.message, exc.data))]

        self._expect(message["id"], answered)
        return [(AGENT, v1)]

    def _resumed_here(self, message: dict[str, Any], sid: str) -> list[Action]:
        """A resume the agent has no method for: a session it still has (opened on this
        connection, and not closed in it) is open again; any other is not found."""
        session = self.sessions.known(sid)
        if session is None or not (session.open or session.closed):
            text = (
                f"Session {sid} not found: the agent (protocol 1) cannot resume or load a"
                " session it does not have open"
            )
            raise Refused(RESOURCE_NOT_FOUND, text, {"sessionId": sid})
        session.open, session.closed = True, False
        result = {"configOptions": v1_options(session)}
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        return [
            self._current_state(sid, session),
            *self._to_client(answer, "session/resume"),
        ]

    def _prompt(
        self, message: dict[str, Any], params: dict[str, Any], sid: str
    ) -> list[Action]:
        session = self.sessions.known(sid)
        if session is None or not session.open:
            raise not_open(sid)
        own = self.sessions.mint("prompt")
        v1 = self._to_v1(message, id=own)
        turn = Turn(message["id"], self.sessions.mint("msg-user"), params["prompt"])
        session.turns.append(turn)
        session.history.append(("user_message_chunk", turn.user_message))
        session.message = None
        if session.cwd is not None:
            self.index.opened(sid, session.cwd)
        self._expect(own, lambda m: self._turn_ended(m, sid, turn))
        return [(AGENT, v1)]

    def _set_option(
        self, message: dict[str, Any], params: dict[str, Any], sid: str
    ) -> list[Action]:
        session = self.sessions.known(sid)
        if session is None or not session.open:
            raise not_open(sid)
        config_id = params.get("configId")
        if config_id not in [o.get("id") for o in v1_options(session)]:
            reason = f"the session has no config option {config_id!r}"
            raise Refused(
                INVALID_PARAMS, "Invalid params", problem(["configId"], reason)
            )
        if config_id == MODE_OPTION and modes_shown(session):
            value = params.get("value")
            if params.get("type") != "id" or not isinstance(value, str):
                reason = "the mode option takes a mode id (type id)"
                raise Refused(
                    INVALID_PARAMS, "Invalid params", problem(["value"], reason)
                )
            v1_params = {"sessionId": sid, "modeId": value}
            if "_meta" in params:
                v1_params["_meta"] = params["_meta"]
            self._expect(message["id"], lambda m: self._mode_set(m, session, value))
            set_mode = {**message, "method": "session/set_mode", "params": v1_params}
            return [(AGENT, set_mode)]
        self._expect(message["id"], lambda m: self._options_set(m, session))
        return [(AGENT, self._to_v1(message))]

    def _closing_request(
        self, message: dict[str, Any], method: str, sid: str
    ) -> list[Action]:
        """A method that closes a session open on the connection when it succeeds (the RFD:
        archiving it): its turn ends, idle ``cancelled``, before the result; a prompt then is
        -32002 until a resume (an unarchive is none)."""

        def closed(answer: dict[str, Any]) -> list[Action]:
            session = self.sessions.known(sid)
            if "result" not in answer or session is None or not session.open:
                return self._to_client(answer, method)
            return [*self._close(sid), *self._to_client(answer, method)]

        self._expect(message["id"], closed)
        return [(AGENT, self._to_v1(message))]

    def _close_request(self, message: dict[str, Any], sid: str) -> list[Action]:
        if not self._caps.get("close"):
            # No close in the agent: its turns are cancelled, and the session forgotten here.
            cancel = {
                "jsonrpc": "2.0",
                "method": "session/cancel",
                "params": {"sessionId": sid},
            }
            done = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
            return [(AGENT, cancel), *self._close(sid), (CLIENT, done)]

        def closed(answer: dict[str, Any]) -> list[Action]:
            if "result" not in answer:
                return self._to_client(answer, "session/close")
            return [*self._close(sid), *self._to_client(answer, "session/close")]

        self._expect(message["id"], closed)
        return [(AGENT, self._to_v1(message))]

    def _client_answer(self, message: dict[str, Any]) -> list[Action]:
        """The client's answer to one of the agent's requests, in v1: a permission answered
        puts the turn back to running once nothing else waits; one the bridge answered is
        dropped."""
        key = id_key(message.get("id"))
        if key in self._settled:
            self._settled.discard(key)
            return []
        actions: list[Action] = []
        sid, _ = self._permissions.pop(key, (None, None))
        session = self.sessions.known(sid)
        if sid is not None and session is not None and key in session.waiting:
            session.waiting.discard(key)
            if not session.waiting and session.turns:
                # (said first: the agent's next update cannot overtake it)
                actions.append(state_action(sid, "running"))
        method = self._asked.pop(key, None)
        if method is None:
            return [*actions, (AGENT, message)]
        try:
            return [*actions, (AGENT, self._converted(message, 2, method=method))]
        except ValueError as exc:  # ConversionError: the agent still gets an answer
            logger.warning(
                "bridge: the client's answer to %s has no protocol 1 form: %s",
                method,
                exc,
            )
            text = f"The client's answer has no protocol 1 form: {exc}"
            return [*actions, (AGENT, error(message["id"], INTERNAL_ERROR, text))]

    def forwarded(self, message: dict[str, Any]) -> list[Action]:
        """A message is on its way to the agent: a prompt is accepted, and the client hears
        so (before the agent has it: nothing the agent says can overtake it)."""
        if message.get("method") != "session/prompt":
            return []
        sid = as_object(message.get("params")).get("sessionId")
        session = self.sessions.known(sid)
        turn = session.turns[-1] if session is not None and session.turns else None
        if turn is None or turn.acked:
            return []
        turn.acked = True
        assert isinstance(sid, str)
        result = {"messageId": turn.user_message}
        ack = {"jsonrpc": "2.0", "id": turn.client_id, "result": result}
        user = {
            "sessionUpdate": "user_message",
            "messageId": turn.user_message,
            "content": turn.prompt,
        }
        return self._out(
            [(CLIENT, ack), update_action(sid, user), state_action(sid, "running")]
        )
