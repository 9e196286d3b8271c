"""``session/list`` with the RFD's ``archived`` filter over an agent that has no such
filter: the agent's pages, filtered by the store's archive state, then the sessions this
connection created that the agent does not list (yet).

The polyfill's cursor is its own: the agent's cursor of the page it stopped in, how far
into that page it got (a count, and the last session id given, which wins where the page
shifted), the filters it is bound to, signed with the store's key. A cursor reused with
other filters, or not made by a polyfill on this store, is -32602.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .store import Store

PAGE_SIZE = 50  # sessions in one of the polyfill's pages
MAX_AGENT_PAGES = 100  # agent pages read for one of ours; past it, a short page and a cursor


class BadCursor(Exception):
    pass


@dataclass
class Position:
    """Where a listing goes on: in the agent's list (its cursor, then ``skip`` sessions of
    that page, the last of them ``last``), or among this connection's sessions (``phase``
    "own", after creation number ``skip``)."""

    phase: str = "agent"
    agent_cursor: str | None = None
    skip: int = 0
    last: str | None = None


def _sign(key: bytes, body: str) -> str:
    return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()[:32]


def write_cursor(key: bytes, at: Position, view: str, cwd: str | None) -> str:
    body = base64.urlsafe_b64encode(
        json.dumps([at.phase, at.agent_cursor, at.skip, at.last, view, cwd], separators=(",", ":")).encode()
    ).decode()
    return f"{body}.{_sign(key, body)}"


def read_cursor(key: bytes, cursor: str, view: str, cwd: str | None) -> Position:
    body, _, signature = cursor.partition(".")
    if not hmac.compare_digest(signature.encode(), _sign(key, body).encode()):
        raise BadCursor("not a cursor of this polyfill's listings")
    try:
        phase, agent_cursor, skip, last, bound_view, bound_cwd = json.loads(base64.urlsafe_b64decode(body))
    except (ValueError, binascii.Error, TypeError):
        raise BadCursor("not a cursor of this polyfill's listings") from None
    if (bound_view, bound_cwd) != (view, cwd):
        raise BadCursor("a cursor of a listing with other filters (cwd, archived): start a new listing")
    return Position(phase, agent_cursor, skip, last)


@dataclass
class Created:
    """A session created through this polyfill process, for as long as the agent has not
    listed it."""

    number: int
    cwd: str


def matches(view: str, archived: bool) -> bool:
    return view == "include" or archived == (view == "only")


class Lister:
    """One ``session/list`` of the client: ``ask(params)`` asks the agent for one page
    (its result object; a JSON-RPC error is raised by ``ask``)."""

    def __init__(
        self,
        store: Store,
        ask: Callable[[dict[str, Any]], dict[str, Any]],
        created: dict[str, Created],
        listed: set[str],
        page_size: int = PAGE_SIZE,
    ) -> None:
        self.store, self.ask, self.created, self.listed, self.page_size = store, ask, created, listed, page_size

    def page(self, params: dict[str, Any], view: str, cwd: str | None, cursor: str | None) -> dict[str, Any]:
        at = read_cursor(self.store.cursor_key, cursor, view, cwd) if cursor is not None else Position()
        out: list[dict[str, Any]] = []
        pages = 0
        while at.phase == "agent":
            asked = {**params, **({"cursor": at.agent_cursor} if at.agent_cursor is not None else {})}
            result = self.ask(asked)
            sessions = [s for s in result.get("sessions") or [] if isinstance(s, dict)]
            ids = [s.get("sessionId") for s in sessions]
            self.listed.update(i for i in ids if isinstance(i, str))
            start = at.skip
            if at.last in ids:
                start = ids.index(at.last) + 1
            states = self.store.states(i for i in ids if isinstance(i, str))
            for index in range(start, len(sessions)):
                info, sid = sessions[index], ids[index]
                archived, deleted = states.get(sid, (False, False)) if isinstance(sid, str) else (False, False)
                if deleted or not matches(view, archived):
                    continue
                out.append({**info, "archived": archived})
                if len(out) == self.page_size:
                    rest = index + 1 < len(sessions)
                    nxt = result.get("nextCursor")
                    if rest:
                        following = Position("agent", at.agent_cursor, index + 1, sid if isinstance(sid, str) else None)
                    elif isinstance(nxt, str):
                        following = Position("agent", nxt)
                    else:
                        following = Position("own", skip=-1)
                    return self._result(out, following, view, cwd)
            nxt = result.get("nextCursor")
            if not isinstance(nxt, str) or (not sessions and nxt == at.agent_cursor):
                at = Position("own", skip=-1)
                break
            at = Position("agent", nxt)
            pages += 1
            if pages >= MAX_AGENT_PAGES:
                return self._result(out, at, view, cwd)
        return self._own(out, at.skip, view, cwd)

    def _own(self, out: list[dict[str, Any]], after: int, view: str, cwd: str | None) -> dict[str, Any]:
        """The sessions created here that the agent has not listed, oldest first."""
        waiting = sorted(
            (c.number, sid, c.cwd)
            for sid, c in list(self.created.items())
            if c.number > after and sid not in self.listed and (cwd is None or c.cwd == cwd)
        )
        states = self.store.states(sid for _, sid, _ in waiting)
        last = after
        for number, sid, where in waiting:
            archived, deleted = states.get(sid, (False, False))
            if deleted or not matches(view, archived):
                continue
            if len(out) == self.page_size:
                return self._result(out, Position("own", skip=last), view, cwd)
            out.append({"sessionId": sid, "cwd": where, "archived": archived})
            last = number
        return self._result(out, None, view, cwd)

    def _result(
        self, out: list[dict[str, Any]], following: Position | None, view: str, cwd: str | None
    ) -> dict[str, Any]:
        result: dict[str, Any] = {"sessions": out}
        if following is not None:
            result["nextCursor"] = write_cursor(self.store.cursor_key, following, view, cwd)
        return result
