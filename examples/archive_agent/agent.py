"""The archive agent: ACP session lifecycle on top of ``store.Store``.

Every message goes through one ``BaseRouter`` of the generated package per protocol
version: the generated routes of ``session/archive``, ``session/unarchive`` and
``session/list`` (params validated into the generated models, the ``archived`` filter
checked) plus routes for ``initialize`` and the other session methods, whose params
models live here. So the router's envelope rules (ids, ``jsonrpc``, params shape) and
its error mapping hold for every method alike.

A "turn" is an echo of the prompt text, after a delay the prompt may ask for with a
leading ``/delay <seconds>``, so that there is work in flight to cancel. The reply is
``echo #<n>: <text>``, ``n`` counting the user prompts in the session's saved history.

Sessions open here may be archived or deleted by another process sharing the database:
``watch`` polls SQLite's ``PRAGMA data_version`` and, when another process committed,
re-reads the open sessions' state.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from types import ModuleType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._generated import (
    BaseRouter,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    ResourceNotFoundError,
    Route,
    dispatch_v1,
    dispatch_v2,
    models_v1,
    models_v2,
)
from .stdio import Peer
from .store import ArchiveFilter, CursorError, Store

logger = logging.getLogger(__name__)

AGENT_NAME = "acp-codegen-archive-agent"
AGENT_VERSION = "0.1.0"
SUPPORTED_VERSIONS = (1, 2)
MAX_DELAY_S = 600.0
WATCH_INTERVAL_S = 0.05  # how often open sessions are checked for another process's archive or delete
FEATURES = frozenset({"unstable_session_archive"})
_DELAY = re.compile(r"\s*/delay\s+(\d+(?:\.\d+)?)\s*(.*)", re.DOTALL)


# -- params of the methods handled here (the generated fragments model only the archive surface)


class _Params(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class _InitializeParams(_Params):
    # strict: ACP's protocol version is a JSON integer, not "1" nor true.
    protocol_version: int = Field(alias="protocolVersion", ge=0, le=65535, strict=True)


class _NewSessionParams(_Params):
    cwd: str


class _SessionParams(_Params):
    session_id: str = Field(alias="sessionId")


class _PromptParams(_SessionParams):
    prompt: list[dict[str, Any]]


def _route(name: str, key: str, params: type[BaseModel], notification: bool = False) -> Route:
    # Results are plain wire dicts (checked against the upstream schemas by the tests).
    kind: Literal["request", "notification"] = "notification" if notification else "request"
    return Route(name, key, kind, params, None if notification else dict, None)


_OWN_ROUTES = {
    route.name: route
    for route in (
        _route("initialize", "initialize", _InitializeParams),
        _route("session/new", "session_new", _NewSessionParams),
        _route("session/prompt", "session_prompt", _PromptParams),
        _route("session/cancel", "session_cancel", _SessionParams, notification=True),
        _route("session/close", "session_close", _SessionParams),
        _route("session/delete", "session_delete", _SessionParams),
        _route("session/resume", "session_resume", _SessionParams),
    )
}
_LOAD_ROUTE = _route("session/load", "session_load", _SessionParams)  # v1 only: v2 has no session/load
ROUTES: Mapping[int, Mapping[str, Route]] = {
    1: {**dispatch_v1.ROUTES, **_OWN_ROUTES, _LOAD_ROUTE.name: _LOAD_ROUTE},
    2: {**dispatch_v2.ROUTES, **_OWN_ROUTES},
}
# Before initialize: every method of either version is known, and all but initialize
# answer "call initialize first" (after the same envelope checks as ever).
_UNINITIALIZED_ROUTES = {
    name: route if name == "initialize" else _route(name, "uninitialized", _Params, route.kind == "notification")
    for name, route in {**ROUTES[2], **ROUTES[1]}.items()
}


def _is_absolute(path: str) -> bool:
    return PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute()


def _not_found(session_id: str, reason: str = "unknown or deleted session") -> ResourceNotFoundError:
    return ResourceNotFoundError(data={"sessionId": session_id, "reason": reason})


# -- running sessions


@dataclass
class Turn:
    message_id: str  # of the message the turn answers with (v2 names it in the prompt's response)
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[str | None] | None = None  # runs the turn; its stop reason, None if it failed


@dataclass
class OpenSession:
    """A session loaded on this connection (created or resumed here, not yet closed)."""

    id: str
    archives: int  # the session's archive counter when it was opened: a change means archived elsewhere
    turn: Turn | None = None


class ArchiveAgent:
    def __init__(
        self, store: Store, peer: Peer, page_size: int = 50, versions: tuple[int, ...] = SUPPORTED_VERSIONS
    ) -> None:
        self.store = store
        self.peer = peer
        self.page_size = page_size
        self.versions = versions  # the protocol versions it agrees to (--protocol: one of them)
        self.version: int | None = None
        self.models: ModuleType | None = None
        self.open: dict[str, OpenSession] = {}
        self._routers = {1: BaseRouter(ArchiveHandlerV1(self), ROUTES[1], FEATURES)}
        self._routers[2] = BaseRouter(ArchiveHandlerV2(self), ROUTES[2], FEATURES)
        self.router = BaseRouter(ArchiveHandlerV2(self), _UNINITIALIZED_ROUTES, FEATURES)
        self._answering: set[asyncio.Task[None]] = set()  # v1 prompts, answered when their turn ends

    # -- message entry point --------------------------------------------------------

    async def handle(self, message: dict[str, Any]) -> None:
        """Answer one decoded message (already known to be a JSON object)."""
        if self.version == 1 and message.get("method") == "session/prompt":
            # v1 answers a prompt when its turn ends, and messages keep coming meanwhile (a
            # cancel, say): answer it from a task of its own. The task runs first (the
            # loop's ready queue is FIFO) up to the turn's first wait, so the turn exists
            # before the next message is read.
            task = asyncio.create_task(self._answer(message))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)
            await asyncio.sleep(0)
            return
        await self._answer(message)

    async def _answer(self, message: dict[str, Any]) -> None:
        response = await self.router.handle_message(message)
        if response is not None:
            self.peer.send(response)

    async def shutdown(self) -> None:
        """End of input: stop every running turn, and send the answers still owed."""
        for session in list(self.open.values()):
            await self._release(session)
        if self._answering:
            await asyncio.wait(set(self._answering))

    async def watch(self, interval: float = WATCH_INTERVAL_S) -> None:
        """Run until cancelled: free the sessions open here that another process archived
        or deleted, within about ``interval`` of its commit."""
        seen = self.store.data_version()
        while True:
            await asyncio.sleep(interval)
            if not self.open:
                continue
            try:
                version = self.store.data_version()
                if version != seen:
                    await self.check_open_sessions()
                    seen = version
            except Exception:  # a busy or failing database: log it, and look again next time
                logger.exception("checking the open sessions failed")

    async def check_open_sessions(self) -> None:
        """Compare the open sessions with the database: one archived elsewhere is announced
        (``session_info_update`` ``archived: true``) and freed like a local archive frees
        it; a deleted one is freed. Either way its running turn is cancelled."""
        states = self.store.archive_states(list(self.open))
        for session in list(self.open.values()):
            state = states.get(session.id)
            if state == (False, session.archives):
                continue
            if self.open.get(session.id) is not session:
                continue  # closed while an earlier session was being released
            if state is not None:
                self._announce_archived(session.id)
            await self._release(session)

    # -- lifecycle methods handled here ------------------------------------------------

    async def initialize(self, params: _InitializeParams) -> dict[str, Any]:
        asked = params.protocol_version
        # ACP negotiation: echo the client's version when supported, else offer our latest.
        version = asked if asked in self.versions else max(self.versions)
        if self.version is not None and version != self.version:
            raise InvalidRequestError(data={"reason": f"already initialized with protocol {self.version}"})
        self.version = version
        self.router = self._routers[version]
        if version == 1:
            m1 = models_v1
            self.models = m1
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
        m2 = models_v2
        self.models = m2
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

    async def new_session(self, params: _NewSessionParams) -> dict[str, Any]:
        if not _is_absolute(params.cwd):
            raise InvalidParamsError(data={"errors": [{"path": ["cwd"], "message": "must be an absolute path"}]})
        row = self.store.create(params.cwd)
        self.open[row.id] = OpenSession(row.id, row.archives)
        return {"sessionId": row.id}

    async def resume_session(self, params: _SessionParams) -> dict[str, Any]:
        self._reopen(params.session_id)
        return {}

    async def load_session(self, params: _SessionParams) -> dict[str, Any]:
        """v1 only (v2 has no session/load): reopen, and replay the saved history first."""
        session_id = params.session_id
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
        self.open.setdefault(session_id, OpenSession(session_id, row.archives))

    async def prompt(self, params: _PromptParams) -> dict[str, Any]:
        session = await self._usable(params.session_id)
        if session.turn is not None:
            raise InvalidParamsError(data={"sessionId": session.id, "reason": "a turn is already running"})
        text = "".join(
            str(block.get("text", ""))
            for block in params.prompt
            if isinstance(block, dict) and block.get("type") == "text"
        )
        delay = 0.0
        if match := _DELAY.fullmatch(text):
            delay, text = min(float(match.group(1)), MAX_DELAY_S), match.group(2)
        if not self.store.add_message(session.id, "user", text, session.archives):
            await self._gone_elsewhere(session.id)
        number = sum(role == "user" for role, _ in self.store.history(session.id))
        turn = Turn(f"{session.id}-{number}")
        session.turn = turn
        if self.version == 2:
            # v2: the response only acknowledges; progress and the end come as state updates.
            self._update(session.id, {"sessionUpdate": "state_update", "state": "running"})
        turn.task = asyncio.create_task(self._turn(session, turn, text, number, delay))
        if self.version == 2:
            # v2's PromptResponse requires the id of the message the turn answers with.
            return {"messageId": turn.message_id}
        stop_reason = await turn.task
        if stop_reason is None:
            raise InternalError()
        return {"stopReason": stop_reason}

    async def _turn(self, session: OpenSession, turn: Turn, text: str, number: int, delay: float) -> str | None:
        """Run one turn and report its end (v2); its stop reason, or None if it failed."""
        stop_reason: str | None = "cancelled"
        try:
            try:
                await asyncio.wait_for(turn.cancel.wait(), timeout=delay)
            except asyncio.TimeoutError:
                reply = f"echo #{number}: {text}"
                # Stored first, and only into a session that is neither archived nor deleted
                # (one transaction, so another process's archive is either before or after).
                if self.store.add_message(session.id, "agent", reply, session.archives):
                    chunk: dict[str, Any] = {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": reply},
                    }
                    if self.version == 2:
                        chunk["messageId"] = turn.message_id
                    self._update(session.id, chunk)
                    stop_reason = "end_turn"
        except Exception:
            logger.exception("turn in %s failed", session.id)
            stop_reason = None
        if session.turn is turn:
            session.turn = None
        if self.version == 2:
            idle: dict[str, Any] = {"sessionUpdate": "state_update", "state": "idle"}
            if stop_reason is not None:
                idle["stopReason"] = stop_reason
            self._update(session.id, idle)
        return stop_reason

    async def cancel(self, params: _SessionParams) -> None:
        session = self.open.get(params.session_id)
        if session is not None and session.turn is not None:
            session.turn.cancel.set()

    async def close_session(self, params: _SessionParams) -> dict[str, Any]:
        session = self.open.get(params.session_id)
        if session is None:
            if self.store.get(params.session_id) is None:
                raise _not_found(params.session_id)
            return {}  # known but not open here: already in the state close leads to
        await self._release(session)
        return {}

    async def delete_session(self, params: _SessionParams) -> dict[str, Any]:
        session = self.open.get(params.session_id)
        if session is not None:
            await self._release(session)
        self.store.delete(params.session_id)  # unknown IDs succeed: "not listed" already holds
        return {}

    # -- archive surface (called by the generated routes' handlers) ----------------------

    async def archive(self, session_id: str) -> None:
        if self.store.get(session_id) is None:
            raise _not_found(session_id)
        session = self.open.get(session_id)
        if session is not None:
            # Tell the client first, while it still has the session open; then close it.
            self._announce_archived(session_id)
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

    async def _usable(self, session_id: str) -> OpenSession:
        """The open session, re-checked against the database (another process may have
        archived or deleted it since the last watch)."""
        session = self.open.get(session_id)
        if session is None:
            raise _not_found(session_id, "session is not open on this connection")
        row = self.store.get(session_id)
        if row is None or row.archived or row.archives != session.archives:
            await self._gone_elsewhere(session_id)
        return session

    async def _gone_elsewhere(self, session_id: str) -> None:
        """Another process archived or deleted this open session before the watch saw it:
        do what the watch would have done, then refuse."""
        await self.check_open_sessions()
        reason = "session was deleted" if self.store.get(session_id) is None else "session was archived"
        raise _not_found(session_id, reason)

    async def _release(self, session: OpenSession) -> None:
        """What session/close does: stop the running turn (its end is reported), free the session."""
        self.open.pop(session.id, None)
        turn = session.turn
        if turn is not None and turn.task is not None:
            turn.cancel.set()
            await asyncio.wait({turn.task})

    def _announce_archived(self, session_id: str) -> None:
        assert self.models is not None
        info = self.models.SessionUpdateSessionInfoUpdate(session_update="session_info_update", archived=True)
        self._update(session_id, info.model_dump(mode="json", by_alias=True, exclude_unset=True))

    def _update(self, session_id: str, update: dict[str, Any]) -> None:
        self.peer.notify("session/update", {"sessionId": session_id, "update": update})


class _Methods:
    """The router's handler, shared by both protocol versions: the generated
    ``AgentHandler`` methods of the archive surface, and the agent's own methods."""

    models: ModuleType

    def __init__(self, agent: ArchiveAgent) -> None:
        self.agent = agent

    async def uninitialized(self, params: _Params) -> None:
        raise InvalidRequestError(data={"reason": "call initialize first"})

    async def initialize(self, params: _InitializeParams) -> dict[str, Any]:
        return await self.agent.initialize(params)

    async def session_new(self, params: _NewSessionParams) -> dict[str, Any]:
        return await self.agent.new_session(params)

    async def session_prompt(self, params: _PromptParams) -> dict[str, Any]:
        return await self.agent.prompt(params)

    async def session_cancel(self, params: _SessionParams) -> None:
        await self.agent.cancel(params)

    async def session_close(self, params: _SessionParams) -> dict[str, Any]:
        return await self.agent.close_session(params)

    async def session_delete(self, params: _SessionParams) -> dict[str, Any]:
        return await self.agent.delete_session(params)

    async def session_resume(self, params: _SessionParams) -> dict[str, Any]:
        return await self.agent.resume_session(params)

    async def session_load(self, params: _SessionParams) -> dict[str, Any]:
        return await self.agent.load_session(params)

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


class ArchiveHandlerV1(_Methods, dispatch_v1.AgentHandler):
    models = models_v1


class ArchiveHandlerV2(_Methods, dispatch_v2.AgentHandler):
    models = models_v2
