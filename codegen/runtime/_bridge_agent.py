"""The version bridge (``_bridge``): the v1 side's messages (the agent's, or what answers
in its stead) for the v2 client. Nothing here depends on the schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._bridge_core import (
    AGENT,
    CANCELLED,
    CLIENT,
    Action,
    BridgeCore,
    as_object,
    error,
    error_object,
    failure,
    id_key,
    logger,
    no_method,
    problem,
    spoken_version,
    state_action,
)
from ._bridge_sessions import CHUNKS, Session, Turn, v1_options
from ._runtime import INVALID_PARAMS, RESOURCE_NOT_FOUND

# Updates that do not end the message being streamed.
BESIDE_MESSAGES = frozenset(
    {
        "usage_update",
        "session_info_update",
        "available_commands_update",
        "config_option_update",
        "current_mode_update",
    }
)
FALLBACK_TITLE = "Allow the tool call?"


class AgentSide(BridgeCore):
    """The v1 side's messages (see ``_bridge.Bridge``)."""

    def from_agent(self, message: dict[str, Any]) -> list[Action]:
        """One message of the v1 side, decoded."""
        return self._out(self._from_agent(message))

    def _from_agent(self, message: dict[str, Any]) -> list[Action]:
        method = message.get("method")
        if not self.active:
            if (
                method is None
                and self._initialize is not None
                and id_key(message.get("id")) == self._initialize
            ):
                self._initialize = None
                return self._initialized(message)
            return [(CLIENT, message)]
        if method is None:
            answer = self._answers.pop(id_key(message.get("id")), None)
            return [(CLIENT, message)] if answer is None else answer(message)
        if not isinstance(method, str):
            return [(CLIENT, message)]
        params = as_object(message.get("params"))
        sid = params.get("sessionId")
        session = self.sessions.known(sid)
        if session is not None and session.closed:
            # "After the close response, the Agent sends no other messages for the session."
            if "id" not in message:
                return []
            if method == "session/request_permission":
                outcome = {"jsonrpc": "2.0", "id": message["id"], "result": CANCELLED}
                return [(AGENT, outcome)]
            return [
                (
                    AGENT,
                    error(
                        message["id"], RESOURCE_NOT_FOUND, f"Session {sid} is closed"
                    ),
                )
            ]
        why = self.tables.one_version_only.get(1, {}).get(method)
        if why is not None:
            logger.warning(
                "bridge: the agent asked the v2 client for %s: %s", method, why
            )
            if "id" not in message:
                return []
            reason = f"the client speaks protocol 2: {why}"
            return [(AGENT, no_method(message["id"], method, reason))]
        if method == "session/update" and isinstance(sid, str):
            return self._updates(message, params, sid)
        if method not in self.tables.agent_methods:
            return [(CLIENT, message)]  # an extension, or unknown: passed on as it is
        if "id" not in message:
            return self._to_client(message)
        if method == "session/request_permission" and isinstance(sid, str):
            return self._permission(message, sid)
        return self._agent_request(message)

    def _agent_request(
        self, message: dict[str, Any], supply: Mapping[str, Any] | None = None
    ) -> list[Action]:
        """One of the agent's requests for the client, converted; the client's answer is
        converted back (``_client_answer``). One v2 cannot carry is answered -32602."""
        try:
            v2 = self._converted(message, 1, supply=supply)
        except ValueError as exc:  # ConversionError
            where, reason = failure(exc, "params")
            data = problem(where, f"protocol 2 cannot carry it: {reason}")
            return [
                (AGENT, error(message["id"], INVALID_PARAMS, "Invalid params", data))
            ]
        self._asked[id_key(message["id"])] = v2["method"]
        return [(CLIENT, v2)]

    def _initialized(self, message: dict[str, Any]) -> list[Action]:
        result = message.get("result")
        if not isinstance(result, dict) or spoken_version(result) != 1:
            # An error, or an agent of the client's version: nothing to bridge.
            return [(CLIENT, message)]
        self.active = True
        caps = as_object(result.get("agentCapabilities"))
        session = as_object(caps.get("sessionCapabilities"))
        self._caps = {
            "load": caps.get("loadSession") is True,
            "list": isinstance(session.get("list"), dict),
            "resume": isinstance(session.get("resume"), dict),
            "close": isinstance(session.get("close"), dict),
        }
        v1 = {**message, "result": {**result, "protocolVersion": 1}}
        supply = {"info": {"name": self.agent_name, "version": "unknown"}}
        actions = self._to_client(v1, "initialize", supply)
        for _, answer in actions:
            answered = answer.get("result")
            if isinstance(answered, dict):
                answered["protocolVersion"] = 2
                # The bridge serves every baseline session method (see the module).
                answered.setdefault("capabilities", {})
                if answered["capabilities"].get("session") is None:
                    answered["capabilities"]["session"] = {}
        return actions

    def _opened(
        self, message: dict[str, Any], sid: str | None, cwd: str, method: str
    ) -> list[Action]:
        """session/new's, resume's or load's answer (``method``: the v2 client's)."""
        result = message.get("result")
        sid = sid if sid is not None else as_object(result).get("sessionId")
        if not isinstance(sid, str):
            return self._to_client(message, method)
        session = self.sessions.get(sid)
        session.quiet, session.replayed, session.message = False, None, None
        if not isinstance(result, dict):
            return self._to_client(message, method)
        session.open, session.closed, session.cwd = True, False, cwd
        session.modes = as_object(result.get("modes")) or None
        session.options = result.get("configOptions")
        self.index.opened(sid, cwd)
        v1_result = {
            k: v for k, v in result.items() if k not in ("modes", "configOptions")
        }
        options = v1_options(session)
        if options:
            v1_result["configOptions"] = options
        v1_method = "session/new" if method == "session/new" else "session/resume"
        out = self._to_client({**message, "result": v1_result}, v1_method)
        if method == "session/resume":
            return [self._current_state(sid, session), *out]
        return out

    def _mode_set(
        self, message: dict[str, Any], session: Session, value: str
    ) -> list[Action]:
        if not isinstance(message.get("result"), dict):
            return self._to_client(message, "session/set_mode")
        if session.modes is not None:
            session.modes = {**session.modes, "currentModeId": value}
        result = {"configOptions": v1_options(session)}
        return self._to_client(
            {**message, "result": result}, "session/set_config_option"
        )

    def _options_set(self, message: dict[str, Any], session: Session) -> list[Action]:
        result = message.get("result")
        if not isinstance(result, dict):
            return self._to_client(message, "session/set_config_option")
        session.options = result.get("configOptions")
        out = {**result, "configOptions": v1_options(session)}
        return self._to_client({**message, "result": out}, "session/set_config_option")

    def _turn_ended(
        self, message: dict[str, Any], sid: str, turn: Turn
    ) -> list[Action]:
        """The agent answered a prompt. The session is idle once it has answered every
        prompt: with this one's stop reason (an error is stop reason ``error``)."""
        session = self.sessions.get(sid)
        if turn not in session.turns:
            return []  # (ended already: the session was closed)
        session.turns.remove(turn)
        session.message = None
        if (
            not turn.acked
        ):  # refused before it reached the agent: the client's own error
            session.history.remove(("user_message_chunk", turn.user_message))
            failure = error_object(message.get("error"))
            return [
                (CLIENT, {"jsonrpc": "2.0", "id": turn.client_id, "error": failure})
            ]
        if session.turns:
            return []
        if "error" in message and turn.cancelled:
            return [state_action(sid, "idle", stopReason="cancelled")]
        if "error" in message:
            said = error_object(message["error"])
            return [state_action(sid, "idle", stopReason="error", error=said)]
        result = as_object(message.get("result"))
        extra: dict[str, Any] = {}
        if result.get("usage") is not None:
            convert = self.tables.conversions.convert
            try:
                extra["usage"] = convert("Usage", result["usage"], source=1, target=2)
            except ValueError as exc:  # ConversionError: the turn ends all the same
                logger.warning(
                    "bridge: the turn's usage has no protocol 2 form: %s", exc
                )
        reason = result.get("stopReason")
        return [
            state_action(
                sid,
                "idle",
                stopReason=reason if isinstance(reason, str) else "end_turn",
                **extra,
            )
        ]

    def _permission(self, message: dict[str, Any], sid: str) -> list[Action]:
        """A permission request (its prompt ``title``, which v2 requires, is the tool call's
        where it has one): ``requires_action`` first while a turn runs."""
        actions = self._agent_request(message, {"title": FALLBACK_TITLE})
        session = self.sessions.known(sid)
        if session is None or not session.turns or actions[0][0] != CLIENT:
            return actions
        key = id_key(message["id"])
        first = not session.waiting
        session.waiting.add(key)
        self._permissions[key] = (sid, message["id"])
        return [state_action(sid, "requires_action"), *actions] if first else actions

    def _updates(
        self, message: dict[str, Any], params: dict[str, Any], sid: str
    ) -> list[Action]:
        session = self.sessions.get(sid)
        if session.quiet:
            return []  # the replay of a load that stands in for a resume without replay
        update = as_object(params.get("update"))
        kind = update.get("sessionUpdate")
        if kind not in BESIDE_MESSAGES and kind not in CHUNKS:
            session.message = None
        supply: dict[str, Any] | None = None
        if kind in CHUNKS:
            # The agent's echo of a live prompt: the client has it as the user_message.
            if (
                kind == "user_message_chunk"
                and session.turns
                and session.replayed is None
            ):
                return []
            assert isinstance(kind, str)
            supply = {
                "messageId": self.sessions.message_id(
                    session, kind, update.get("messageId")
                )
            }
        elif kind == "plan":
            supply = {"planId": session.plan_id}
        elif kind == "config_option_update":
            session.options = update.get("configOptions")
            update = {**update, "configOptions": v1_options(session)}
        elif kind == "current_mode_update":
            if session.modes is None:
                logger.warning(
                    "bridge: current_mode_update for %s, whose modes the bridge never saw",
                    sid,
                )
                return []
            session.modes = {
                **session.modes,
                "currentModeId": update.get("currentModeId"),
            }
            update = {
                "sessionUpdate": "config_option_update",
                "configOptions": v1_options(session),
            }
        elif (
            kind == "session_info_update"
            and isinstance(update.get("title"), str)
            and session.cwd
        ):
            self.index.opened(sid, session.cwd, update["title"])
        v1 = {**message, "params": {**params, "update": update}}
        return self._to_client(v1, supply=supply)
