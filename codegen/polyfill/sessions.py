"""What the version bridge remembers of each session, and the chunk lines it marks without
decoding them.

Message ids: a chunk continues the message of the chunk before it of the same kind, until a
chunk of another kind, a tool call, a plan or the turn's end starts another; an id the agent
gave is kept. Each message shown is recorded, so that a replay gives it the id it had live
(the 2026-11 schema: "If retained and replayed, the message keeps this identifier"),
matched by kind, in order.

A turn's stream is chunks, nearly all of them. A chunk line that shows itself plainly (the
envelope first, one ``"sessionUpdate"``, no ``"messageId"`` anywhere) gets its id written in
without being decoded; a read made of such lines only, of one session and one kind, gets them
all written in with a few passes over its bytes.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

CHUNKS = {"user_message_chunk": "user", "agent_message_chunk": "agent", "agent_thought_chunk": "thought"}
_UPDATE_HEAD = re.compile(
    rb'\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"method"\s*:\s*"session/update"\s*,\s*"params"\s*:\s*'
    rb'\{\s*"sessionId"\s*:\s*"([^"\\]*)"\s*,\s*"update"\s*:\s*\{'
)
_KIND = re.compile(rb'"sessionUpdate"\s*:\s*"([a-z_]*)"')
_CHUNK_KINDS = {kind.encode(): kind for kind in CHUNKS}


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
    modes: dict[str, Any] | None = None
    options: Any = None
    # (chunk kind, messageId, its member as written into a line) of the message being streamed
    message: tuple[str, str, bytes] | None = None
    turns: list[Turn] = field(default_factory=list)  # the prompts the agent is working on, oldest first
    waiting: set[str] = field(default_factory=set)  # the agent's permission requests not answered
    quiet: bool = False  # a load standing in for a resume without replay: its replay is not passed on
    # Each message this connection has shown, (its kind, its id), in order; ``replayed``: how
    # far a replay going on has come, None while none does.
    history: list[tuple[str, str]] = field(default_factory=list)
    replayed: int | None = None


class Sessions:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._numbers = itertools.count(1)
        self._all: dict[str, Session] = {}
        self._head: tuple[bytes, str] = (b"\0", "")  # the last chunk line's head up to its update, and its session

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
        elif session.message is None or session.message[0] != kind or not session.message[2]:
            mid = self.shown(session, kind, None)
            session.message = (kind, mid, b'"messageId":' + json.dumps(mid).encode() + b",")
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
        session.history.append((kind, mid))  # (one a replay brought: the next replay keeps it too)
        if session.replayed is not None:
            session.replayed = len(session.history)
        return mid

    # -- chunk lines, not decoded -----------------------------------------------------------

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
        kind = _CHUNK_KINDS.get(found[1]) if found is not None else None
        if kind is None or line.count(b'"sessionUpdate"') != 1 or b'"messageId"' in line:
            return None
        session = self.get(sid)
        if session.quiet:
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
        session = self.get(sid)
        if session.quiet:
            return None
        self.message_id(session, kind, None)  # (the first line's message, whatever the others are)
        assert session.message is not None
        marked = head + session.message[2] + start[len(head) :]
        out = data[len(start) :].replace(b"\n" + start, b"\n" + marked)
        if len(out) + len(start) - len(data) != (lines - 1) * (len(marked) - len(start)):
            return None  # a line that does not start so: each line is looked at
        return marked + out
