"""The archive agent: ACP session lifecycle on top of ``store.Store``.

``session/archive``, ``session/unarchive`` and ``session/list`` go through the generated
``dispatch.Router`` of the negotiated protocol version (params validated into the
generated models, the ``archived`` filter checked, errors mapped); ``initialize`` and the
other session methods are handled here.

A "turn" is an echo of the prompt text, after a delay the prompt may ask for with a
leading ``/delay <seconds>``, so that there is work in flight to cancel. The reply is
``echo #<n>: <text>``, ``n`` counting the user prompts in the session's saved history.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

import generated.v1.dispatch
import generated.v1.models
import generated.v2.dispatch
import generated.v2.models
from generated._shared import (
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    JsonRpcError,
    MethodNotFoundError,
    ResourceNotFoundError,
)

from .stdio import Peer
from .store import ArchiveFilter, CursorError, Store

logger = logging.getLogger(__name__)

AGENT_NAME = "acp-codegen-archive-agent"
AGENT_VERSION = "0.1.0"
SUPPORTED_VERSIONS = (1, 2)
MAX_DELAY_S = 600.0
_DELAY = re.compile(r"\s*/delay\s+(\d+(?:\.\d+)?)\s*(.*)", re.DOTALL)


# -- params of the methods handled here (the generated fragments model only the archive surface)


class _Params(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class _InitializeParams(_Params):
    protocol_version: int = Field(alias="protocolVersion", ge=0, le=65535)


class _NewSessionParams(_Params):
    cwd: str


class _SessionParams(_Params):
    session_id: str = Field(alias="sessionId")


class _PromptParams(_SessionParams):
    prompt: list[dict[str, Any]]


def _is_absolute(path: str) -> bool:
    return PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute()


def _validation_error(exc: ValidationError) -> InvalidParamsError:
    errors = [
        {"path": [p for p in err["loc"] if isinstance(p, (str, int))], "message": err["msg"]}
        for err in exc.errors(include_url=False, include_input=False, include_context=False)
    ]
    return InvalidParamsError(data={"errors": errors})


def _not_found(session_id: str, reason: str = "unknown or deleted session") -> ResourceNotFoundError:
    return ResourceNotFoundError(data={"sessionId": session_id, "reason": reason})


# -- running sessions


@dataclass
class Turn:
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None  # runs the turn and reports its end


@dataclass
class OpenSession:
    """A session loaded on this connection (created or resumed here, not yet closed)."""

    id: str
    turn: Turn | None = None


DEFERRED = object()  # a handler result meaning "the handler answers the request itself, later"


class ArchiveAgent:
    def __init__(self, store: Store, peer: Peer, page_size: int = 50) -> None:
        self.store = store
        self.peer = peer
        self.page_size = page_size
        self.version: int | None = None
        self.models: ModuleType | None = None
        self.router: generated.v1.dispatch.Router | generated.v2.dispatch.Router | None = None
        self.open: dict[str, OpenSession] = {}
        self._methods: dict[str, Callable[[dict[str, Any], Any], Awaitable[Any]]] = {
            "initialize": self._initialize,
            "session/new": self._new_session,
            "session/prompt": self._prompt,
            "session/cancel": self._cancel,
            "session/close": self._close_session,
            "session/delete": self._delete_session,
            "session/resume": self._resume_session,
            "session/load": self._load_session,
        }

    # -- message entry point --------------------------------------------------------

    async def handle(self, message: dict[str, Any]) -> None:
        """Answer one decoded message (already known to be a JSON object)."""
        method = message.get("method")
        if self.router is not None and method in self.router.methods:
            response = await self.router.handle_message(message)
            if response is not None:
                self.peer.send(response)
            return
        is_request = "id" in message
        request_id = message.get("id")
        params = message.get("params")
        try:
            if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
                raise InvalidRequestError(data={"reason": 'expected jsonrpc "2.0" and a string method'})
            if self.version is None and method != "initialize":
                raise InvalidRequestError(data={"reason": "call initialize first"})
            handler = self._methods.get(method)
            if handler is None:
                raise MethodNotFoundError(data={"method": method})
            result = await handler(params if params is not None else {}, request_id if is_request else None)
        except JsonRpcError as exc:
            error: JsonRpcError = exc
        except ValidationError as exc:
            error = _validation_error(exc)
        except Exception:
            logger.exception("%s failed", method)  # stderr only: the peer gets a bare -32603
            error = InternalError()
        else:
            if is_request and result is not DEFERRED:
                self.peer.respond(request_id, result)
            return
        if is_request:
            self.peer.fail(request_id, error)

    async def shutdown(self) -> None:
        """End of input: stop every running turn."""
        for session in list(self.open.values()):
            await self._release(session)

    # -- lifecycle methods handled here ------------------------------------------------

    async def _initialize(self, params: dict[str, Any], _: Any) -> dict[str, Any]:
        asked = _InitializeParams.model_validate(params).protocol_version
        # ACP negotiation: echo the client's version when supported, else offer our latest.
        version = asked if asked in SUPPORTED_VERSIONS else max(SUPPORTED_VERSIONS)
        if self.version is not None and version != self.version:
            raise InvalidRequestError(data={"reason": f"already initialized with protocol {self.version}"})
        self.version = version
        handler: ArchiveHandlerV1 | ArchiveHandlerV2
        if version == 1:
            m1 = generated.v1.models
            self.models = m1
            handler = ArchiveHandlerV1(self)
            self.router = generated.v1.dispatch.Router(handler, unstable_session_archive=True)
            response1 = m1.InitializeResponse(
                protocol_version=1,
                agent_capabilities=m1.AgentCapabilities(
                    load_session=True,
                    session_capabilities=m1.SessionCapabilities(
                        list=m1.SessionListCapabilities(),
                        delete=m1.SessionDeleteCapabilities(),
                        close=m1.SessionCloseCapabilities(),
                        resume=m1.SessionResumeCapabilities(),
                        archive=m1.SessionArchiveCapabilities(),
                    ),
                ),
                agent_info=m1.Implementation(name=AGENT_NAME, version=AGENT_VERSION),
            )
            return response1.model_dump(mode="json", by_alias=True, exclude_unset=True)
        m2 = generated.v2.models
        self.models = m2
        handler = ArchiveHandlerV2(self)
        self.router = generated.v2.dispatch.Router(handler, unstable_session_archive=True)
        # v2: a present `session` object already promises list, close and resume.
        response2 = m2.InitializeResponse(
            protocol_version=2,
            info=m2.Implementation(name=AGENT_NAME, version=AGENT_VERSION),
            capabilities=m2.AgentCapabilities(
                session=m2.SessionCapabilities(
                    delete=m2.SessionDeleteCapabilities(),
                    archive=m2.SessionArchiveCapabilities(),
                )
            ),
        )
        return response2.model_dump(mode="json", by_alias=True, exclude_unset=True)

    async def _new_session(self, params: dict[str, Any], _: Any) -> dict[str, Any]:
        cwd = _NewSessionParams.model_validate(params).cwd
        if not _is_absolute(cwd):
            raise InvalidParamsError(data={"errors": [{"path": ["cwd"], "message": "must be an absolute path"}]})
        row = self.store.create(cwd)
        self.open[row.id] = OpenSession(row.id)
        return {"sessionId": row.id}

    async def _resume_session(self, params: dict[str, Any], _: Any) -> dict[str, Any]:
        self._reopen(_SessionParams.model_validate(params).session_id)
        return {}

    async def _load_session(self, params: dict[str, Any], _: Any) -> dict[str, Any]:
        """v1 only (v2 has no session/load): reopen, and replay the saved history first."""
        if self.version != 1:
            raise MethodNotFoundError(data={"method": "session/load"})
        session_id = _SessionParams.model_validate(params).session_id
        self._reopen(session_id)
        for role, text in self.store.history(session_id):
            kind = "user_message_chunk" if role == "user" else "agent_message_chunk"
            self._update(session_id, {"sessionUpdate": kind, "content": {"type": "text", "text": text}})
        return {}

    def _reopen(self, session_id: str) -> None:
        row = self.store.get(session_id)
        if row is None:
            raise _not_found(session_id)
        if row.archived:
            # The RFD lets an agent refuse; this one wants an explicit session/unarchive first.
            raise InvalidParamsError(
                data={"sessionId": session_id, "reason": "session is archived; call session/unarchive first"}
            )
        self.open.setdefault(session_id, OpenSession(session_id))

    async def _prompt(self, params: dict[str, Any], request_id: Any) -> Any:
        request = _PromptParams.model_validate(params)
        session = self._usable(request.session_id)
        if session.turn is not None:
            raise InvalidParamsError(data={"sessionId": session.id, "reason": "a turn is already running"})
        text = "".join(
            str(block.get("text", ""))
            for block in request.prompt
            if isinstance(block, dict) and block.get("type") == "text"
        )
        delay = 0.0
        if match := _DELAY.fullmatch(text):
            delay, text = min(float(match.group(1)), MAX_DELAY_S), match.group(2)
        if not self.store.add_message(session.id, "user", text):
            self.open.pop(session.id, None)
            raise _not_found(session.id)
        number = sum(role == "user" for role, _ in self.store.history(session.id))
        turn = Turn()
        session.turn = turn
        if self.version == 2:
            # v2: the response only acknowledges; progress and the end come as state updates.
            self._update(session.id, {"sessionUpdate": "state_update", "state": "running"})
        turn.task = asyncio.create_task(self._run_turn(session, turn, request_id, text, number, delay))
        return DEFERRED if self.version == 1 else {}

    async def _run_turn(
        self, session: OpenSession, turn: Turn, request_id: Any, text: str, number: int, delay: float
    ) -> None:
        stop_reason = "cancelled"
        failed = False
        try:
            try:
                await asyncio.wait_for(turn.cancel.wait(), timeout=delay)
            except asyncio.TimeoutError:
                reply = f"echo #{number}: {text}"
                chunk: dict[str, Any] = {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": reply},
                }
                if self.version == 2:
                    chunk["messageId"] = f"{session.id}-{number}"
                self._update(session.id, chunk)
                self.store.add_message(session.id, "agent", reply)
                stop_reason = "end_turn"
        except Exception:
            logger.exception("turn in %s failed", session.id)
            failed = True
        if session.turn is turn:
            session.turn = None
        if self.version == 1:
            if failed:
                self.peer.fail(request_id, InternalError())
            else:
                self.peer.respond(request_id, {"stopReason": stop_reason})
        else:
            idle: dict[str, Any] = {"sessionUpdate": "state_update", "state": "idle"}
            if not failed:
                idle["stopReason"] = stop_reason
            self._update(session.id, idle)

    async def _cancel(self, params: dict[str, Any], _: Any) -> None:
        session = self.open.get(_SessionParams.model_validate(params).session_id)
        if session is not None and session.turn is not None:
            session.turn.cancel.set()

    async def _close_session(self, params: dict[str, Any], _: Any) -> dict[str, Any]:
        session_id = _SessionParams.model_validate(params).session_id
        session = self.open.get(session_id)
        if session is None:
            if self.store.get(session_id) is None:
                raise _not_found(session_id)
            return {}  # known but not open here: already in the state close leads to
        await self._release(session)
        return {}

    async def _delete_session(self, params: dict[str, Any], _: Any) -> dict[str, Any]:
        session_id = _SessionParams.model_validate(params).session_id
        session = self.open.get(session_id)
        if session is not None:
            await self._release(session)
        self.store.delete(session_id)  # unknown IDs succeed: "not listed" already holds
        return {}

    # -- archive surface (called by the generated routers' handlers) ---------------------

    async def archive(self, session_id: str) -> None:
        if self.store.get(session_id) is None:
            raise _not_found(session_id)
        session = self.open.get(session_id)
        if session is not None:
            # Tell the client first, while it still has the session open; then close it.
            assert self.models is not None
            info = self.models.SessionUpdateSessionInfoUpdate(session_update="session_info_update", archived=True)
            self._update(session_id, info.model_dump(mode="json", by_alias=True, exclude_unset=True))
            await self._release(session)
        if not self.store.set_archived(session_id, True):
            raise _not_found(session_id)  # deleted by another process meanwhile

    async def unarchive(self, session_id: str) -> None:
        # Only the stored state changes: the session is not loaded or resumed.
        if not self.store.set_archived(session_id, False):
            raise _not_found(session_id)

    def list_page(
        self, cwd: str | None, archived: str | None, cursor: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        if cwd is not None and not _is_absolute(cwd):
            raise InvalidParamsError(data={"errors": [{"path": ["cwd"], "message": "must be an absolute path"}]})
        effective: ArchiveFilter
        if archived is None or archived == "exclude":
            effective = "exclude"
        elif archived in ("include", "only"):
            effective = "include" if archived == "include" else "only"
        else:  # the router refuses these first; kept so the store never guesses
            raise InvalidParamsError(data={"errors": [{"path": ["archived"], "message": "unsupported value"}]})
        try:
            page = self.store.list_page(cwd, effective, cursor, self.page_size)
        except CursorError as exc:
            raise InvalidParamsError(data={"errors": [{"path": ["cursor"], "message": str(exc)}]}) from None
        sessions = []
        for row in page.sessions:
            info: dict[str, Any] = {
                "sessionId": row.id,
                "cwd": row.cwd,
                "updatedAt": row.updated_at,
                "archived": row.archived,
            }
            if row.title is not None:
                info["title"] = row.title
            sessions.append(info)
        return sessions, page.next_cursor

    # -- helpers ------------------------------------------------------------------------

    def _usable(self, session_id: str) -> OpenSession:
        """The open session, re-checked against the database (another process may have
        archived or deleted it)."""
        session = self.open.get(session_id)
        if session is None:
            raise _not_found(session_id, "session is not open on this connection")
        row = self.store.get(session_id)
        if row is None or row.archived:
            self.open.pop(session_id, None)
            raise _not_found(session_id, "session was deleted" if row is None else "session is archived")
        return session

    async def _release(self, session: OpenSession) -> None:
        """What session/close does: stop the running turn (its end is reported), free the session."""
        self.open.pop(session.id, None)
        turn = session.turn
        if turn is not None and turn.task is not None:
            turn.cancel.set()
            await asyncio.wait({turn.task})

    def _update(self, session_id: str, update: dict[str, Any]) -> None:
        self.peer.notify("session/update", {"sessionId": session_id, "update": update})


class _ArchiveMethods:
    """The generated ``AgentHandler`` methods, shared by both protocol versions."""

    models: ModuleType

    def __init__(self, agent: ArchiveAgent) -> None:
        self.agent = agent

    async def session_archive(self, params: Any) -> Any:
        await self.agent.archive(params.session_id)
        return self.models.ArchiveSessionResponse()

    async def session_unarchive(self, params: Any) -> Any:
        await self.agent.unarchive(params.session_id)
        return self.models.UnarchiveSessionResponse()

    async def session_list(self, params: Any) -> Any:
        sessions, next_cursor = self.agent.list_page(params.cwd, params.archived, params.cursor)
        page: dict[str, Any] = {"sessions": sessions}
        if next_cursor is not None:
            page["nextCursor"] = next_cursor
        return self.models.ListSessionsResponse.model_validate(page)


class ArchiveHandlerV1(_ArchiveMethods, generated.v1.dispatch.AgentHandler):
    models = generated.v1.models


class ArchiveHandlerV2(_ArchiveMethods, generated.v2.dispatch.AgentHandler):
    models = generated.v2.models
