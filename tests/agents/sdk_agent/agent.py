"""A session-archive agent on the official Python SDK (``agent-client-protocol``) as
``acp-codegen adopt`` leaves it with the feature ``unstable_session_archive`` on.

It uses the SDK's public API only: ``from acp import Agent, RequestError, run_agent`` and
its helpers, the models from ``acp.schema``, the methods ``acp.interfaces.Agent`` declares
(``archive_session``, ``unarchive_session``, ``list_sessions(..., archived=...)`` among
them), and ``run_agent(agent, use_unstable_protocol=True)``. Written from the RFD and the
SDK's README and examples, not from this repository's reference agent.

    python agent.py --store SESSIONS.json [--page-size N] [--no-unstable-protocol]

- Sessions live in one JSON file (``--store``), rewritten whole (a temporary file, then
  ``os.replace``) after every change, so a restarted agent finds them. One process at a time.
- ``initialize`` advertises ``loadSession`` and ``sessionCapabilities`` ``list``, ``archive``,
  ``resume`` and ``close``, and ``delete`` where the SDK's ``Agent`` declares ``delete_session``
  (adopt wires every method of the base: an SDK's own router may not route ``session/delete``,
  and then it answers -32601 whatever the agent implements). ``session/delete`` forgets the
  session, archived or not; its id is then unknown (-32002).
- A prompt is echoed (``echo #<n>: <text>``, ``n`` counting the session's prompts); one that
  starts with ``/delay SECONDS`` first waits that long, or until it is cancelled, archived or
  closed (``stopReason`` ``cancelled``).
- ``session/archive`` of a session open on this connection sends ``session_info_update``
  ``archived: true`` first, then cancels its turn and closes it. ``session/unarchive`` only
  changes the stored state: the session must be resumed or loaded before its next turn, and
  an archived one cannot be. Unknown ids: -32002.
- ``session/list``: newest activity first, ``--page-size`` a page, keyset pagination on an
  activity counter that only a turn moves (archiving does not reorder a listing). The cursor
  is signed with a key kept in the store and bound to ``cwd`` and ``archived`` (omitted,
  ``null`` and ``"exclude"`` are one filter): another filter's cursor, or a forged one, is
  -32602; so is any ``archived`` value but ``exclude``, ``include`` and ``only``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import acp.schema
from acp import PROTOCOL_VERSION, Agent, RequestError, run_agent, text_block, update_agent_message, update_user_message
from acp.interfaces import Agent as AgentProtocol
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    ArchiveSessionResponse,
    ClientCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SessionArchiveCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionResumeCapabilities,
    UnarchiveSessionResponse,
)

VIEWS = ("exclude", "include", "only")
# Whether the SDK serves session/delete: its Agent protocol declares the method.
DELETES = hasattr(AgentProtocol, "delete_session") and hasattr(acp.schema, "SessionDeleteCapabilities")
DELAY = re.compile(r"^/delay\s+(\d+(?:\.\d+)?)\s*")


class Store:
    """The sessions, kept in one JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if path.exists():
            data = json.loads(path.read_text(encoding="utf-8"))
        else:
            data = {"key": secrets.token_hex(32), "clock": 0, "sessions": {}}
        self.key: bytes = bytes.fromhex(data["key"])
        self.clock: int = data["clock"]
        self.sessions: dict[str, dict[str, Any]] = data["sessions"]

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def save(self) -> None:
        data = {"key": self.key.hex(), "clock": self.clock, "sessions": self.sessions}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(tmp, self.path)


def now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class ArchiveAgent(Agent):
    _conn: Client

    def __init__(self, store: Store, page_size: int) -> None:
        self._store = store
        self._page_size = page_size
        self._open: set[str] = set()  # sessions open on this connection
        self._turns: dict[str, asyncio.Event] = {}  # running turn of a session: set to cancel it

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    # -- lookups --------------------------------------------------------------------

    def _session(self, session_id: str) -> dict[str, Any]:
        session = self._store.sessions.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        return session

    def _stop(self, session_id: str) -> None:
        """Cancel the session's running turn, if any, and close it on this connection."""
        turn = self._turns.get(session_id)
        if turn is not None:
            turn.set()
        self._open.discard(session_id)

    # -- lifecycle ------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    archive=SessionArchiveCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                    **({"delete": acp.schema.SessionDeleteCapabilities()} if DELETES else {}),
                ),
            ),
            agent_info=Implementation(name="sdk-archive-agent", title="Archive agent on the Python SDK", version="1"),
        )

    async def new_session(
        self, cwd: str, additional_directories: list[str] | None = None, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        session_id = f"sess_{uuid.uuid4().hex}"
        self._store.sessions[session_id] = {
            "cwd": cwd,
            "archived": False,
            "activity": self._store.tick(),
            "updatedAt": now(),
            "history": [],
        }
        self._store.save()
        self._open.add(session_id)
        return NewSessionResponse(session_id=session_id)

    def _reopen(self, session_id: str) -> dict[str, Any]:
        session = self._session(session_id)
        if session["archived"]:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "archived: unarchive it first"})
        self._open.add(session_id)
        return session

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Any = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        self._reopen(session_id)
        return ResumeSessionResponse()

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Any = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        session = self._reopen(session_id)
        for entry in session["history"]:
            block = text_block(entry["text"])
            update = update_user_message(block) if entry["role"] == "user" else update_agent_message(block)
            await self._conn.session_update(session_id, update)
        return LoadSessionResponse()

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        self._session(session_id)
        self._stop(session_id)
        return CloseSessionResponse()

    async def delete_session(self, session_id: str, **kwargs: Any) -> Any:
        self._session(session_id)
        self._stop(session_id)
        del self._store.sessions[session_id]
        self._store.save()
        return acp.schema.DeleteSessionResponse()

    # -- turns ----------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        if session_id not in self._open:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "reason": "not open on this connection: resume or load it first"}
            )
        if session_id in self._turns:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "a turn is already running"})
        text = "".join(getattr(block, "text", "") for block in prompt)
        session["history"].append({"role": "user", "text": text})
        session["activity"] = self._store.tick()
        session["updatedAt"] = now()
        self._store.save()
        count = sum(1 for entry in session["history"] if entry["role"] == "user")
        cancelled = self._turns[session_id] = asyncio.Event()
        try:
            delay = DELAY.match(text)
            if delay:
                await self._conn.session_update(session_id, update_agent_message(text_block("working...")))
                try:
                    await asyncio.wait_for(cancelled.wait(), float(delay.group(1)))
                except asyncio.TimeoutError:
                    pass
            # Nothing of a turn lands in a session archived or closed meanwhile.
            if cancelled.is_set() or session["archived"] or session_id not in self._open:
                return PromptResponse(stop_reason="cancelled")
            reply = f"echo #{count}: {text}"
            await self._conn.session_update(session_id, update_agent_message(text_block(reply)))
            session["history"].append({"role": "agent", "text": reply})
            self._store.save()
            return PromptResponse(stop_reason="end_turn")
        finally:
            del self._turns[session_id]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        turn = self._turns.get(session_id)
        if turn is not None:
            turn.set()

    # -- what this agent does not offer: -32601, not the Agent protocol's empty stubs ---

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise RequestError.method_not_found("authenticate")

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> None:
        raise RequestError.method_not_found("session/set_mode")

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool, **kwargs: Any) -> None:
        raise RequestError.method_not_found("session/set_config_option")

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Any = None,
        **kwargs: Any,
    ) -> Any:
        raise RequestError.method_not_found("session/fork")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # -- archive --------------------------------------------------------------------

    async def archive_session(self, session_id: str, **kwargs: Any) -> ArchiveSessionResponse | None:
        session = self._session(session_id)
        session["archived"] = True  # (before any await: a turn ending now writes nothing)
        self._store.save()
        if session_id in self._open:
            update = SessionInfoUpdate(session_update="session_info_update", archived=True)
            await self._conn.session_update(session_id, update)
            self._stop(session_id)
        return ArchiveSessionResponse()

    async def unarchive_session(self, session_id: str, **kwargs: Any) -> UnarchiveSessionResponse | None:
        session = self._session(session_id)
        session["archived"] = False
        self._store.save()
        return UnarchiveSessionResponse()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, archived: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        view = "exclude" if archived is None else archived
        if view not in VIEWS:
            raise RequestError.invalid_params({"archived": archived, "expected": list(VIEWS)})
        after = self._read_cursor(cursor, cwd, view) if cursor is not None else None
        matching = sorted(
            (
                (s["activity"], sid, s)
                for sid, s in self._store.sessions.items()
                if (cwd is None or s["cwd"] == cwd)
                and (view == "include" or s["archived"] == (view == "only"))
                and (after is None or s["activity"] < after)
            ),
            key=lambda item: item[0],
            reverse=True,
        )
        page = matching[: self._page_size]
        next_cursor = None
        if len(matching) > len(page):
            next_cursor = self._write_cursor(page[-1][0], cwd, view)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(session_id=sid, cwd=s["cwd"], updated_at=s["updatedAt"], archived=s["archived"])
                for _, sid, s in page
            ],
            next_cursor=next_cursor,
        )

    def _write_cursor(self, after: int, cwd: str | None, view: str) -> str:
        body = base64.urlsafe_b64encode(json.dumps([after, cwd, view]).encode()).decode()
        return f"{body}.{self._sign(body)}"

    def _read_cursor(self, cursor: str, cwd: str | None, view: str) -> int:
        body, _, signature = cursor.partition(".")
        if not hmac.compare_digest(signature.encode(), self._sign(body).encode()):
            raise RequestError.invalid_params({"cursor": cursor, "reason": "not a cursor of this agent"})
        after, bound_cwd, bound_view = json.loads(base64.urlsafe_b64decode(body))
        if (bound_cwd, bound_view) != (cwd, view):
            raise RequestError.invalid_params({"cursor": cursor, "reason": "a cursor of a listing with other filters"})
        return int(after)

    def _sign(self, body: str) -> str:
        return hmac.new(self._store.key, body.encode(), hashlib.sha256).hexdigest()[:32]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=Path("sdk_agent_sessions.json"))
    parser.add_argument("--page-size", type=int, default=10)
    parser.add_argument(
        "--no-unstable-protocol", action="store_true", help="run without use_unstable_protocol (the SDK's default)"
    )
    options = parser.parse_args()
    agent = ArchiveAgent(Store(options.store), options.page_size)
    asyncio.run(run_agent(agent, use_unstable_protocol=not options.no_unstable_protocol))


if __name__ == "__main__":
    main()
