"""What the version bridge (``_bridge``) keeps of each session: its turns, message ids, modes
and config options (a v1 agent's modes stand as a ``mode`` config option), the sessions
opened through it (``SessionIndex``, which it lists for an agent that cannot), and the chunk
lines it marks without decoding them. Nothing here depends on the schema.

Message ids: a chunk continues the message of the chunk before it of the same kind, until a
chunk of another kind, a tool call, a plan or the turn's end starts another; an id the agent
gave is kept. Each message shown is recorded, so that a replay gives it the id it had live
(2026-11: "If retained and replayed, the message keeps this identifier"), matched by kind,
in order.

A turn's stream is chunks, nearly all of them. A chunk line that shows itself plainly (the
envelope first, one ``"sessionUpdate"``, no ``"messageId"``, a text block without
annotations: what the conversions give back as it is, with its id added) gets its id
written in without being decoded; a read made of such lines only, of one session and one
kind, gets them all written in with a few passes over its bytes. The bridge turns this off
where its package's conversions change such a chunk (``Sessions.fast``).
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol

# v1's message chunks, and the message each is part of.
CHUNKS = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}
_UPDATE_HEAD = re.compile(
    rb'\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"method"\s*:\s*"session/update"\s*,\s*"params"\s*:\s*'
    rb'\{\s*"sessionId"\s*:\s*"([^"\\]*)"\s*,\s*"update"\s*:\s*\{'
)
_KIND = re.compile(rb'"sessionUpdate"\s*:\s*"([a-z_]*)"')
# The agent's chunks only: the user's are an echo during a turn, which the bridge drops.
_FAST_KINDS = {
    kind.encode(): kind for kind in ("agent_message_chunk", "agent_thought_chunk")
}
# The update's content, a text block (after the tag, where the tag comes first). What the
# line holds besides is checked for these keys, as written (a key inside a string is
# escaped: ``\\"messageId\\"``, never ``"messageId"``).
_TEXT_BLOCK = re.compile(
    rb'\s*,?\s*"content"\s*:\s*\{\s*"type"\s*:\s*"text"\s*,\s*"text"\s*:\s*"'
)
_MARKS = (b'"messageId"', b'"annotations"')
# The synthesized config option that stands for a v1 agent's session modes.
MODE_OPTION = "mode"


@dataclass
class Turn:
    """One v1 prompt the agent is working on."""

    client_id: Any
    user_message: str
    prompt: list[Any]
    acked: bool = False
    cancelled: bool = False  # the client sent session/cancel while it ran


@dataclass
class Session:
    plan_id: str
    open: bool = False  # created, resumed or loaded on this connection, and not closed
    closed: bool = False  # closed here: the agent's messages for it are dropped
    cwd: str | None = None
    modes: dict[str, Any] | None = None
    options: Any = None  # the agent's own config options (v1), as last given
    # (chunk kind, messageId, its member as written into a line) of the message being streamed
    message: tuple[str, str, bytes] | None = None
    # The prompts the agent works on, oldest first; its permission requests not answered.
    turns: list[Turn] = field(default_factory=list)
    waiting: set[str] = field(default_factory=set)
    # A load standing in for a resume without replay: its replay is not passed on.
    quiet: bool = False
    # Each message this connection has shown, (its kind, its id), in order; ``replayed``: how
    # far a replay going on has come, None while none does.
    history: list[tuple[str, str]] = field(default_factory=list)
    replayed: int | None = None


class Sessions:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.fast = True  # chunk lines may be marked without decoding (see the module)
        self._numbers = itertools.count(1)
        self._all: dict[str, Session] = {}
        # The last chunk line's head up to its update, and its session.
        self._head: tuple[bytes, str] = (b"\0", "")

    def mint(self, kind: str) -> str:
        return f"{kind}-{self.prefix}{next(self._numbers)}"

    def get(self, sid: str) -> Session:
        session = self._all.get(sid)
        if session is None:
            session = self._all[sid] = Session(plan_id=self.mint("plan"))
        return session

    def known(self, sid: Any) -> Session | None:
        return self._all.get(sid) if isinstance(sid, str) else None

    # -- message ids ----------------------------------------------------------------------

    def message_id(self, session: Session, kind: str, given: Any) -> str:
        """A chunk's message: the id the agent gave, else the one of the chunk before it of
        the same kind, else the next one."""
        if isinstance(given, str):
            if session.message is None or session.message[:2] != (kind, given):
                session.message = (kind, given, b"")
                self.shown(session, kind, given)
        elif (
            session.message is None
            or session.message[0] != kind
            or not session.message[2]
        ):
            mid = self.shown(session, kind, None)
            session.message = (
                kind,
                mid,
                b'"messageId":' + json.dumps(mid).encode() + b",",
            )
        return session.message[1]

    def shown(self, session: Session, kind: str, given: str | None) -> str:
        """A message starts: live, it is recorded; in a replay, it is the next recorded one of
        its kind (where one is left) and keeps that one's id."""
        if session.replayed is not None:
            for at in range(session.replayed, len(session.history)):
                if session.history[at][0] == kind:
                    session.replayed = at + 1
                    return given or session.history[at][1]
        mid = given or self.mint(f"msg-{CHUNKS[kind]}")
        # (one a replay brought: the next replay keeps it too)
        session.history.append((kind, mid))
        if session.replayed is not None:
            session.replayed = len(session.history)
        return mid

    # -- chunk lines, not decoded -----------------------------------------------------------

    def _plain(self, sid: str) -> Session | None:
        """The session whose chunk lines may be marked undecoded: open, and not quiet."""
        session = self._all.get(sid)
        if session is None or session.quiet or session.closed or not self.fast:
            return None
        return session

    def chunk_line(self, line: bytes) -> bytes | None:
        """A chunk's line with its message id written in, None for a line to decode."""
        head, sid = self._head
        if not line.startswith(head):  # (a turn's lines share their head: matched once)
            found = _UPDATE_HEAD.match(line)
            if found is None:
                return None
            head, sid = self._head = (line[: found.end()], found[1].decode())
        end = len(head)
        found = _KIND.search(line, end)
        kind = _FAST_KINDS.get(found[1]) if found is not None else None
        if (
            found is None
            or kind is None
            or _TEXT_BLOCK.match(line, found.end() if found.start() == end else end)
            is None
            or line.count(b'"sessionUpdate"') != 1
            or any(mark in line for mark in _MARKS)
        ):
            return None
        session = self._plain(sid)
        if session is None:
            return None
        self.message_id(session, kind, None)
        assert session.message is not None
        return line[:end] + session.message[2] + line[end:]

    def chunk_read(self, data: bytes) -> bytes | None:
        """Whole lines at once (``data`` ends with a newline) where each is a plain chunk of
        one session and one kind, as a busy turn's reads are; None where one line is
        anything else."""
        found = _UPDATE_HEAD.match(data)
        if found is None:
            return None
        head, sid = data[: found.end()], found[1].decode()
        kind_found = _KIND.search(data, len(head))
        kind = _FAST_KINDS.get(kind_found[1]) if kind_found is not None else None
        if kind_found is None or kind is None or any(mark in data for mark in _MARKS):
            return None
        lines = data.count(b"\n")
        # The tag first (as TypeScript and serde write it): every line starting with the head,
        # the tag and the text block is one of the kind. Else the tag's count and the kind's
        # must be the lines'.
        first = kind_found.start() == len(head)
        block = _TEXT_BLOCK.match(data, kind_found.end() if first else len(head))
        if block is None:
            return None
        start = data[: block.end()]
        if not first and (
            data.count(b'"sessionUpdate"') != lines
            or data.count(kind_found[0]) != lines
        ):
            return None
        session = self._plain(sid)
        if session is None:
            return None
        # (the first line's message, whatever the others are)
        self.message_id(session, kind, None)
        assert session.message is not None
        marked = head + session.message[2] + start[len(head) :]
        out = data[len(start) :].replace(b"\n" + start, b"\n" + marked)
        if len(out) + len(start) - len(data) != (lines - 1) * (
            len(marked) - len(start)
        ):
            return None  # a line that does not start so: each line is looked at
        return marked + out


# -- the sessions opened, modes as a config option -----------------------------------------


class SessionIndex(Protocol):
    """The sessions opened through the bridge, which it lists for an agent that cannot:
    ``MemoryIndex`` keeps those of the connection; a host may keep them longer (the
    polyfill's store)."""

    def opened(self, session_id: str, cwd: str, title: str | None = None) -> None: ...

    def sessions(self) -> list[dict[str, Any]]:
        """v1 ``SessionInfo`` values, the most recently active first."""
        ...


class MemoryIndex:
    """The sessions opened on this connection."""

    def __init__(self) -> None:
        self._sessions: dict[str, dict[str, Any]] = {}

    def opened(self, session_id: str, cwd: str, title: str | None = None) -> None:
        info = self._sessions.pop(session_id, {"sessionId": session_id})
        info |= {"cwd": cwd, "updatedAt": now()}
        if title is not None:
            info["title"] = title
        self._sessions[session_id] = info

    def sessions(self) -> list[dict[str, Any]]:
        return list(reversed(self._sessions.values()))


# Sessions in one page of a list the bridge serves.
PAGE_SIZE = 50


def listed_page(index: SessionIndex, cwd: Any, cursor: Any) -> dict[str, Any] | None:
    """A v1 ``session/list`` result of the sessions in ``index`` (in ``cwd`` where given)
    from ``cursor``; None for a cursor this list does not give."""
    listed = [s for s in index.sessions() if cwd is None or s.get("cwd") == cwd]
    start = 0
    if cursor is not None:
        valid = (
            isinstance(cursor, str)
            and cursor.startswith("idx:")
            and cursor[4:].isdigit()
        )
        start = int(cursor[4:]) if valid else -1
        if not 0 <= start <= len(listed):
            return None
    result: dict[str, Any] = {"sessions": listed[start : start + PAGE_SIZE]}
    if start + PAGE_SIZE < len(listed):
        result["nextCursor"] = f"idx:{start + PAGE_SIZE}"
    return result


def now() -> str:
    """This moment as RFC 3339 (UTC)."""
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def modes_shown(session: Session) -> bool:
    """Whether the session's modes stand as the ``mode`` option: the agent has modes, and no
    option of its own is of the ``mode`` category or has that id."""
    options = session.options
    own = (
        [o for o in options if isinstance(o, dict)] if isinstance(options, list) else []
    )
    return bool(session.modes) and not any(
        o.get("category") == "mode" or o.get("id") == MODE_OPTION for o in own
    )


def mode_option(modes: dict[str, Any]) -> dict[str, Any]:
    """A v1 agent's modes as a v1 config option of the ``mode`` category."""
    choices = []
    for given in modes.get("availableModes") or []:
        mode = given if isinstance(given, dict) else {}
        choice = {"value": mode.get("id"), "name": mode.get("name", mode.get("id"))}
        if isinstance(mode.get("description"), str):
            choice["description"] = mode["description"]
        choices.append(choice)
    return {
        "id": MODE_OPTION,
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": modes.get("currentModeId"),
        "options": choices,
    }


def v1_options(session: Session) -> list[dict[str, Any]]:
    """The session's config options in v1's form, with its modes as a ``mode`` option
    where it has modes and no option of that category or id of its own."""
    options = session.options
    own = (
        [o for o in options if isinstance(o, dict)] if isinstance(options, list) else []
    )
    if modes_shown(session):
        return [mode_option(session.modes or {}), *own]
    return own
