"""An agent on the official Python SDK (``agent-client-protocol`` 0.12.1, as published or as
``acp-codegen adopt`` leaves it) that speaks protocol 1 only and does a whole turn of what
protocol 1 has: thoughts, messages, a plan, an edit tool call with a diff, a permission
request, a mode change. What the version bridge turns into protocol 2: the polyfill's in
front of the published SDK, or, in process, the adopted SDK's own (``base-v2``).

    python sdk_turn_agent.py --store SESSIONS.json [--page-size N]

- Capabilities: ``loadSession``, ``sessionCapabilities`` list, resume and close,
  ``promptCapabilities`` image and embedded context. No delete. The session archive where
  the SDK has it (adopted with the feature ``unstable_session_archive``): ``archive`` too,
  ``session/archive`` of an open session sends ``session_info_update`` ``archived: true``,
  ends its turns and closes it, ``session/unarchive`` clears the mark, and ``session/list``
  takes the ``archived`` filter (``exclude``, the default; ``include``; ``only``).
- Sessions live in one JSON file (``--store``), rewritten whole after every change, so a
  restarted agent finds them. One process at a time. Each has a mode, ``ask`` (the first)
  or ``code``: the ``modes`` of the ``session/new``, ``session/load`` and ``session/resume``
  results; ``session/set_mode`` changes it and sends ``current_mode_update``.
- After ``session/new`` the agent sends ``available_commands_update`` (``turn``, and
  ``delay`` with an input hint).
- A prompt starting with ``/delay SECONDS`` sends one message chunk and waits that long, or
  until ``session/cancel`` or ``session/close`` (``stopReason`` ``cancelled``; both end every
  turn of the session, where a client sent a prompt before the last one ended). A prompt
  starting with ``/fail`` sends one message chunk, then the prompt's answer is an error
  (``-32603``). A prompt ``/read PATH`` asks the client for the file (``fs/read_text_file``,
  whatever the client's capabilities) and says what it got, or that it could not read it.
- Any other prompt (``/turn``) does a whole turn: two ``agent_thought_chunk``, two
  ``agent_message_chunk``, a ``plan`` of two entries, a ``tool_call`` (kind ``edit``, status
  ``pending``, a ``diff`` of ``notes.txt`` in the session's cwd), ``session/request_permission``
  for it (``allow`` allow_once, ``reject`` reject_once), then ``tool_call_update``
  ``completed`` where allowed (``failed`` otherwise, also where the client cannot answer),
  the ``plan`` again (the edit ``completed`` where allowed), ``current_mode_update`` to
  ``code``, two more ``agent_message_chunk`` (a new message), and ``end_turn``
  (``cancelled`` where the turn was cancelled). No ``messageId`` anywhere.
- ``session/load`` replays the history: the user's prompts (``user_message_chunk``) and the
  agent's messages (``agent_message_chunk``), one chunk each.
- ``session/list``: newest activity first, the ``cwd`` filter, ``--page-size`` a page (1000
  by default); the cursor names the filters it was made for (another's is -32602).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import re
import uuid
from pathlib import Path
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    plan_entry,
    run_agent,
    start_tool_call,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.helpers import update_available_commands, update_current_mode
from acp.schema import (
    AgentCapabilities,
    AvailableCommand,
    AvailableCommandInput,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionModeResponse,
    ToolCallLocation,
    ToolCallUpdate,
    UnstructuredCommandInput,
)
from sdk_plain_agent import PlainAgent  # (beside this file: the directory a script runs from is on the path)

try:  # the session archive: where the SDK was adopted with the feature
    from acp.schema import (
        ArchiveSessionResponse,
        SessionArchiveCapabilities,
        SessionInfoUpdate,
        UnarchiveSessionResponse,
    )

    ARCHIVES = True
except ImportError:
    ARCHIVES = False

DELAY = re.compile(r"^/delay\s+(\d+(?:\.\d+)?)\s*")
MODES = ("ask", "code")
VIEWS = ("exclude", "include", "only")
OLD_TEXT = "first line\nold line\nlast line\n"
NEW_TEXT = "first line\nnew line\nlast line\n"


class TurnAgent(PlainAgent):
    """The plain agent's sessions and store, with a whole turn, modes and commands."""

    def __init__(self, path: Path, page_size: int = 1000) -> None:
        super().__init__(path, page_size=page_size, lists=True, crash_on=None)
        self._turns: dict[str, set[asyncio.Event]] = {}  # type: ignore[assignment]  # each session's running turns
        self._tasks: set[asyncio.Task[None]] = set()

    def _modes(self, session: dict[str, Any]) -> SessionModeState:
        return SessionModeState(
            current_mode_id=session["mode"],
            available_modes=[
                SessionMode(id="ask", name="Ask", description="Answers questions, changes nothing"),
                SessionMode(id="code", name="Code", description="Edits files"),
            ],
        )

    async def _update(self, session_id: str, update: Any) -> None:
        await self._conn.session_update(session_id, update)

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                    **({"archive": SessionArchiveCapabilities()} if ARCHIVES else {}),
                ),
            ),
            agent_info=Implementation(name="sdk-turn-agent", title="SDK turn agent", version="1"),
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        session_id = f"sess_{uuid.uuid4().hex}"
        self._clock += 1
        session = {"cwd": cwd, "activity": self._clock, "mode": "ask", "history": []}
        self._sessions[session_id] = session
        self._save()
        self._open.add(session_id)
        # A task of its own runs once this one has queued the response: the client has the
        # session's id before the update.
        task = asyncio.get_running_loop().create_task(self._announce_commands(session_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return NewSessionResponse(session_id=session_id, modes=self._modes(session))

    async def _announce_commands(self, session_id: str) -> None:
        commands = [
            AvailableCommand(name="turn", description="A whole turn: thoughts, a plan, an edit, a permission"),
            AvailableCommand(
                name="delay",
                description="Wait before answering, until cancelled",
                input=AvailableCommandInput(UnstructuredCommandInput(hint="seconds")),
            ),
        ]
        await self._update(session_id, update_available_commands(commands))

    def _unarchived(self, session_id: str) -> dict[str, Any]:
        session = self._session(session_id)
        if session.get("archived"):
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "archived: unarchive it first"})
        return session

    async def resume_session(self, cwd: str, session_id: str, **kwargs: Any) -> ResumeSessionResponse:
        session = self._unarchived(session_id)
        self._open.add(session_id)
        return ResumeSessionResponse(modes=self._modes(session))

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        session = self._unarchived(session_id)
        for entry in session["history"]:
            if entry["role"] == "user":
                await self._update(session_id, update_user_message_text(entry["text"]))
            else:
                await self._update(session_id, update_agent_message_text(entry["text"]))
        self._open.add(session_id)
        return LoadSessionResponse(modes=self._modes(session))

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        self._session(session_id)
        for turn in self._turns.get(session_id, ()):
            turn.set()
        self._open.discard(session_id)
        return CloseSessionResponse()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, archived: str | None = None, **kwargs: Any
    ) -> Any:
        view = archived or "exclude"
        if view not in VIEWS:
            raise RequestError.invalid_params({"archived": archived, "expected": list(VIEWS)})
        matching = sorted(
            (
                (s["activity"], sid, s)
                for sid, s in self._sessions.items()
                if (cwd is None or s["cwd"] == cwd)
                and (view == "include" or s.get("archived", False) == (view == "only"))
            ),
            reverse=True,
        )
        if cursor is not None:  # (keyset: the page after the last one given, whatever came since)
            try:
                after, *made_for = json.loads(base64.urlsafe_b64decode(cursor.encode()))
            except ValueError:
                after, made_for = None, []
            if made_for != [cwd, view] or not isinstance(after, list):
                raise RequestError.invalid_params({"cursor": cursor, "reason": "not a cursor of this listing"})
            matching = [m for m in matching if [m[0], m[1]] < after]
        sessions = []
        for _, sid, s in matching[: self._page_size]:
            prompts = [entry["text"] for entry in s["history"] if entry["role"] == "user"]
            title = prompts[0][:40] if prompts else None
            marked = {"archived": s.get("archived", False)} if ARCHIVES else {}
            sessions.append(SessionInfo(session_id=sid, cwd=s["cwd"], title=title, **marked))
        more = None
        if len(matching) > self._page_size:
            last = matching[self._page_size - 1]
            more = base64.urlsafe_b64encode(json.dumps([[last[0], last[1]], cwd, view]).encode()).decode()
        return ListSessionsResponse(sessions=sessions, next_cursor=more)

    async def archive_session(self, session_id: str, **kwargs: Any) -> Any:
        session = self._session(session_id)
        session["archived"] = True  # (before any await: a turn ending now writes nothing)
        self._save()
        if session_id in self._open:
            await self._update(session_id, SessionInfoUpdate(session_update="session_info_update", archived=True))
            for turn in self._turns.get(session_id, ()):
                turn.set()
            self._open.discard(session_id)
        return ArchiveSessionResponse()

    async def unarchive_session(self, session_id: str, **kwargs: Any) -> Any:
        self._session(session_id)["archived"] = False
        self._save()
        return UnarchiveSessionResponse()

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        session = self._session(session_id)
        if mode_id not in MODES:
            raise RequestError.invalid_params({"modeId": mode_id, "reason": f"one of {', '.join(MODES)}"})
        session["mode"] = mode_id
        self._save()
        await self._update(session_id, update_current_mode(mode_id))
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        if session_id not in self._open:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "not open: resume or load it"})
        text = "".join(getattr(block, "text", "") for block in prompt)
        session["history"].append({"role": "user", "text": text})
        self._clock += 1
        session["activity"] = self._clock
        self._save()
        cancelled = asyncio.Event()
        self._turns.setdefault(session_id, set()).add(cancelled)
        try:
            if text.startswith("/read "):  # (whatever the client's capabilities say, as agents do)
                try:
                    read = await self._conn.read_text_file(path=text[6:].strip(), session_id=session_id)
                    said = f"read: {read.content}"
                except Exception as failed:
                    said = f"could not read: {failed}"
                return await self._say(session_id, session, [said], "end_turn")
            if text.startswith("/fail"):
                await self._update(session_id, update_agent_message_text("about to fail"))
                raise RequestError.internal_error({"details": "the turn failed on purpose"})
            delay = DELAY.match(text)
            if delay:
                await self._update(session_id, update_agent_message_text("working..."))
                try:
                    await asyncio.wait_for(cancelled.wait(), float(delay.group(1)))
                except asyncio.TimeoutError:
                    pass
                if cancelled.is_set() or session_id not in self._open:
                    return PromptResponse(stop_reason="cancelled")
                return await self._say(session_id, session, [f"waited: {text}"], "end_turn")
            return await self._turn(session_id, session, cancelled)
        finally:
            self._turns[session_id].discard(cancelled)

    async def _say(self, session_id: str, session: dict[str, Any], chunks: list[str], stop: str) -> PromptResponse:
        for chunk in chunks:
            await self._update(session_id, update_agent_message_text(chunk))
        session["history"].append({"role": "agent", "text": "".join(chunks)})
        self._save()
        return PromptResponse(stop_reason=stop)

    async def _turn(self, session_id: str, session: dict[str, Any], cancelled: asyncio.Event) -> PromptResponse:
        for chunk in ("Thinking about ", "the notes."):
            await self._update(session_id, update_agent_thought_text(chunk))
        first = ["I will edit ", "notes.txt."]
        for chunk in first:
            await self._update(session_id, update_agent_message_text(chunk))
        session["history"].append({"role": "agent", "text": "".join(first)})
        self._save()
        await self._update(
            session_id,
            update_plan(
                [
                    plan_entry("Read notes.txt", priority="high", status="completed"),
                    plan_entry("Edit notes.txt", priority="medium", status="in_progress"),
                ]
            ),
        )
        path = str(Path(session["cwd"]) / "notes.txt")
        call_id = f"call_{uuid.uuid4().hex[:12]}"
        await self._update(
            session_id,
            start_tool_call(
                call_id,
                "Edit notes.txt",
                kind="edit",
                status="pending",
                content=[tool_diff_content(path, NEW_TEXT, OLD_TEXT)],
                locations=[ToolCallLocation(path=path, line=2)],
                raw_input={"path": path},
            ),
        )
        allowed = False
        if not cancelled.is_set():
            try:
                answer = await self._conn.request_permission(
                    session_id=session_id,
                    tool_call=ToolCallUpdate(
                        tool_call_id=call_id, title="Edit notes.txt", kind="edit", status="pending"
                    ),
                    options=[
                        PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
                        PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                    ],
                )
                outcome = answer.outcome
                allowed = outcome.outcome == "selected" and getattr(outcome, "option_id", None) == "allow"
            except Exception:  # (a client without permissions: not allowed)
                allowed = False
        await self._update(
            session_id,
            update_tool_call(call_id, status="completed" if allowed else "failed", raw_output={"edited": allowed}),
        )
        if cancelled.is_set() or session_id not in self._open:
            return PromptResponse(stop_reason="cancelled")
        await self._update(
            session_id,
            update_plan(
                [
                    plan_entry("Read notes.txt", priority="high", status="completed"),
                    plan_entry("Edit notes.txt", priority="medium", status="completed" if allowed else "pending"),
                ]
            ),
        )
        session["mode"] = "code"
        self._save()
        await self._update(session_id, update_current_mode("code"))
        done = ["Done: ", "notes.txt edited." if allowed else "notes.txt left as it was."]
        return await self._say(session_id, session, done, "end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        for turn in self._turns.get(session_id, ()):
            turn.set()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--page-size", type=int, default=1000)
    options = parser.parse_args()
    asyncio.run(run_agent(TurnAgent(options.store, options.page_size), use_unstable_protocol=True))


if __name__ == "__main__":
    main()
