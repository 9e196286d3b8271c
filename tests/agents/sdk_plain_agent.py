"""An ordinary agent on the official Python SDK (``agent-client-protocol`` 0.12.1 as
published, not adopted): sessions with ``session/list``, ``session/load``,
``session/resume`` and ``session/close``, and no session archive. What the polyfill is for.

    python sdk_plain_agent.py --store SESSIONS.json [--page-size N] [--no-list] [--crash-on TEXT]

- Sessions live in one JSON file (``--store``), rewritten whole after every change, so a
  restarted agent finds them. One process at a time.
- ``--no-list``: ``session/list`` is not advertised (an agent the polyfill must leave alone).
- A prompt is echoed (``echo #<n>: <text>``); one starting with ``/delay SECONDS`` waits that
  long first, or until cancelled or closed (``stopReason`` ``cancelled``). A prompt whose text
  is ``--crash-on``'s exits the process at once (status 3), and one starting with ``/ask``
  asks the client to read a file first (an agent->client request).
- ``session/list``: newest activity first, ``--page-size`` a page, a plain cursor (the
  offset into the listing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import tempfile
import uuid
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, Agent, RequestError, run_agent, text_block, update_agent_message, update_user_message
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
)

DELAY = re.compile(r"^/delay\s+(\d+(?:\.\d+)?)\s*")


class PlainAgent(Agent):
    _conn: Client

    def __init__(self, path: Path, page_size: int, lists: bool, crash_on: str | None) -> None:
        self._path = path
        data = json.loads(path.read_text()) if path.exists() else {"clock": 0, "sessions": {}}
        self._clock: int = data["clock"]
        self._sessions: dict[str, dict[str, Any]] = data["sessions"]
        self._page_size, self._lists, self._crash_on = page_size, lists, crash_on
        self._open: set[str] = set()
        self._turns: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    def _save(self) -> None:
        fd, tmp = tempfile.mkstemp(dir=self._path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as out:
            json.dump({"clock": self._clock, "sessions": self._sessions}, out)
        os.replace(tmp, self._path)

    def _session(self, session_id: str) -> dict[str, Any]:
        if session_id not in self._sessions:
            raise RequestError.resource_not_found(session_id)
        return self._sessions[session_id]

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities() if self._lists else None,
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                ),
            ),
            agent_info=Implementation(name="sdk-plain-agent", version="1"),
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        session_id = f"sess_{uuid.uuid4().hex}"
        self._clock += 1
        self._sessions[session_id] = {"cwd": cwd, "activity": self._clock, "history": []}
        self._save()
        self._open.add(session_id)
        return NewSessionResponse(session_id=session_id)

    async def resume_session(self, cwd: str, session_id: str, **kwargs: Any) -> ResumeSessionResponse:
        self._session(session_id)
        self._open.add(session_id)
        return ResumeSessionResponse()

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        session = self._session(session_id)
        for entry in session["history"]:
            block = text_block(entry["text"])
            update = update_user_message(block) if entry["role"] == "user" else update_agent_message(block)
            await self._conn.session_update(session_id, update)
        self._open.add(session_id)
        return LoadSessionResponse()

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        self._session(session_id)
        turn = self._turns.get(session_id)
        if turn is not None:
            turn.set()
        self._open.discard(session_id)
        return CloseSessionResponse()

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any) -> Any:
        if not self._lists:
            raise RequestError.method_not_found("session/list")
        matching = sorted(
            ((s["activity"], sid, s) for sid, s in self._sessions.items() if cwd is None or s["cwd"] == cwd),
            reverse=True,
        )
        start = int(cursor) if cursor else 0
        page = matching[start : start + self._page_size]
        more = start + self._page_size < len(matching)
        return ListSessionsResponse(
            sessions=[SessionInfo(session_id=sid, cwd=s["cwd"]) for _, sid, s in page],
            next_cursor=str(start + self._page_size) if more else None,
        )

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        if session_id not in self._open:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "not open: resume or load it"})
        text = "".join(getattr(block, "text", "") for block in prompt)
        if self._crash_on is not None and text == self._crash_on:
            os._exit(3)
        if text.startswith("/ask "):
            read = await self._conn.read_text_file(path=text[5:], session_id=session_id)
            text = f"read {read.content}"
        session["history"].append({"role": "user", "text": text})
        self._clock += 1
        session["activity"] = self._clock
        self._save()
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
            if cancelled.is_set() or session_id not in self._open:
                return PromptResponse(stop_reason="cancelled")
            reply = f"echo #{count}: {text}"
            await self._conn.session_update(session_id, update_agent_message(text_block(reply)))
            session["history"].append({"role": "agent", "text": reply})
            self._save()
            return PromptResponse(stop_reason="end_turn")
        finally:
            del self._turns[session_id]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        turn = self._turns.get(session_id)
        if turn is not None:
            turn.set()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"echoed": method, "params": params}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--page-size", type=int, default=10)
    parser.add_argument("--no-list", action="store_true")
    parser.add_argument("--crash-on")
    options = parser.parse_args()
    agent = PlainAgent(options.store, options.page_size, not options.no_list, options.crash_on)
    asyncio.run(run_agent(agent, use_unstable_protocol=True))


if __name__ == "__main__":
    main()
