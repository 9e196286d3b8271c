"""``session/list`` with the RFD's ``archived`` filter over an agent that has no such
filter: the agent's pages, filtered by the store's archive state, then the sessions this
connection created that the agent's list did not show (in this listing).

The polyfill's cursor is its own: the agent's cursor of the page it stopped in, a digest
of every session it gave from that page (when it goes on inside the page it asks the
agent for it again and skips exactly those, in whatever order the agent now gives them:
nothing is resumed by position), a token naming the listing, the filters it is bound to,
signed with the store's key. A cursor reused with other filters, or not made by a
polyfill on this store, is -32602.

The token finds what this process remembers of the listing (``Listings``): the sessions
given so far, so that one the agent moved to a later page of its own is not given twice,
and the sessions the agent showed, so that one created here that the agent stopped
listing (opencode lists only its 100 most recently updated sessions, plus those open in
its process) still comes at the end. Where the memory is gone (another polyfill process,
or a listing long left), the cursor's digests still resume inside the page, and a
session created here comes at the end only if the agent never listed it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .store import Store

PAGE_SIZE = 50  # sessions in one of the polyfill's pages
MAX_AGENT_PAGES = 100  # agent pages read for one of ours; past it, a short page and a cursor
DIGEST = 8  # characters of one session's digest in a cursor (6 bytes, base64)
MAX_DIGESTS = 1024  # digests a cursor carries at most (an agent page longer goes by memory)
KEPT_LISTINGS = 64  # listings a process remembers; the oldest is forgotten first


class BadCursor(Exception):
    pass


@dataclass
class Position:
    """Where a listing goes on: in the agent's list (its cursor, then that page less the
    sessions whose digests are in ``given``), or among this connection's sessions (``phase``
    "own", after creation number ``skip``). ``token`` names the listing."""

    phase: str = "agent"
    agent_cursor: str | None = None
    skip: int = 0
    given: str = ""
    token: str = ""


def digest(session_id: str) -> str:
    return base64.urlsafe_b64encode(hashlib.blake2b(session_id.encode(), digest_size=6).digest()).decode()


def _sign(key: bytes, body: str) -> str:
    return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()[:32]


def write_cursor(key: bytes, at: Position, view: str, cwd: str | None) -> str:
    fields = [at.phase, at.agent_cursor, at.skip, at.given, at.token, view, cwd]
    body = base64.urlsafe_b64encode(json.dumps(fields, separators=(",", ":")).encode()).decode()
    return f"{body}.{_sign(key, body)}"


def read_cursor(key: bytes, cursor: str, view: str, cwd: str | None) -> Position:
    body, _, signature = cursor.partition(".")
    if not hmac.compare_digest(signature.encode(), _sign(key, body).encode()):
        raise BadCursor("not a cursor of this polyfill's listings")
    try:
        phase, agent_cursor, skip, given, token, bound_view, bound_cwd = json.loads(base64.urlsafe_b64decode(body))
    except (ValueError, binascii.Error, TypeError):
        raise BadCursor("not a cursor of this polyfill's listings") from None
    if (bound_view, bound_cwd) != (view, cwd):
        raise BadCursor("a cursor of a listing with other filters (cwd, archived): start a new listing")
    if not (
        isinstance(agent_cursor, str | None) and type(skip) is int and all(isinstance(t, str) for t in (given, token))
    ):
        raise BadCursor("not a cursor of this polyfill's listings")
    return Position(phase, agent_cursor, skip, given, token)


@dataclass
class Created:
    """A session created through this polyfill process: it exists for as long as this
    connection lasts, whatever the agent's list shows."""

    number: int
    cwd: str


@dataclass
class Seen:
    """What one listing has met: the sessions it gave, the sessions the agent showed in it
    (``whole`` when this process saw the listing from its first page)."""

    given: set[str] = field(default_factory=set)
    shown: set[str] = field(default_factory=set)
    whole: bool = True


class Listings:
    """This process's memory of its recent listings, by token."""

    def __init__(self, keep: int = KEPT_LISTINGS) -> None:
        self.keep = keep
        self._held: OrderedDict[str, Seen] = OrderedDict()
        self._lock = threading.Lock()

    def find(self, token: str | None) -> tuple[str, Seen]:
        """The listing's memory; a new listing (``token`` None) or a forgotten one starts
        an empty one, a forgotten one not ``whole``."""
        with self._lock:
            name = token or secrets.token_urlsafe(9)
            seen = self._held.get(name)
            if seen is None:
                seen = self._held[name] = Seen(whole=token is None)
                while len(self._held) > self.keep:
                    self._held.popitem(last=False)
            self._held.move_to_end(name)
            return name, seen


def matches(view: str, archived: bool) -> bool:
    return view == "include" or archived == (view == "only")


def _key(session_id: Any) -> str:
    return session_id if isinstance(session_id, str) else json.dumps(session_id, sort_keys=True)


class Lister:
    """One ``session/list`` of the client: ``ask(params)`` asks the agent for one page
    (its result object; a JSON-RPC error is raised by ``ask``)."""

    def __init__(
        self,
        store: Store,
        ask: Callable[[dict[str, Any]], dict[str, Any]],
        created: dict[str, Created],
        listed: set[str],
        listings: Listings,
        page_size: int = PAGE_SIZE,
    ) -> None:
        self.store, self.ask, self.created, self.listed = store, ask, created, listed
        self.listings, self.page_size = listings, page_size

    def page(self, params: dict[str, Any], view: str, cwd: str | None, cursor: str | None) -> dict[str, Any]:
        at = read_cursor(self.store.cursor_key, cursor, view, cwd) if cursor is not None else Position()
        token, seen = self.listings.find(at.token if cursor is not None else None)
        skipped = {at.given[i : i + DIGEST] for i in range(0, len(at.given), DIGEST)}
        out: list[dict[str, Any]] = []
        pages = 0
        while at.phase == "agent":
            asked = {**params, **({"cursor": at.agent_cursor} if at.agent_cursor is not None else {})}
            result = self.ask(asked)
            sessions = [s for s in result.get("sessions") or [] if isinstance(s, dict)]
            keys = [_key(s.get("sessionId")) for s in sessions]
            self.listed.update(keys)
            states = self.store.states(keys)
            given_here = list(skipped)  # digests of this page's sessions given, carried on
            for index, (info, key) in enumerate(zip(sessions, keys, strict=True)):
                seen.shown.add(key)  # only once looked at: the rest of the page may be gone next time
                mark = digest(key)
                if mark in skipped or key in seen.given:
                    continue
                archived, deleted = states.get(key, (False, False))
                if deleted or not matches(view, archived):
                    continue
                out.append({**info, "archived": archived})
                seen.given.add(key)
                given_here.append(mark)
                if len(out) == self.page_size:
                    nxt = result.get("nextCursor")
                    if index + 1 < len(sessions):
                        carried = "".join(given_here[:MAX_DIGESTS])
                        following = Position("agent", at.agent_cursor, given=carried, token=token)
                    elif isinstance(nxt, str):
                        following = Position("agent", nxt, token=token)
                    else:
                        following = Position("own", skip=-1, token=token)
                    return self._result(out, following, view, cwd)
            skipped = set()
            nxt = result.get("nextCursor")
            if not isinstance(nxt, str) or (not sessions and nxt == at.agent_cursor):
                at = Position("own", skip=-1, token=token)
                break
            at = Position("agent", nxt, token=token)
            pages += 1
            if pages >= MAX_AGENT_PAGES:
                return self._result(out, at, view, cwd)
        return self._own(out, at.skip, seen, token, view, cwd)

    def _own(
        self, out: list[dict[str, Any]], after: int, seen: Seen, token: str, view: str, cwd: str | None
    ) -> dict[str, Any]:
        """The sessions created here that the agent's list did not show in this listing (in
        one this process did not see whole: never showed), oldest first."""
        shown = seen.shown if seen.whole else self.listed
        waiting = sorted(
            (c.number, sid, c.cwd)
            for sid, c in list(self.created.items())
            if c.number > after and sid not in shown and sid not in seen.given and (cwd is None or c.cwd == cwd)
        )
        states = self.store.states(sid for _, sid, _ in waiting)
        last = after
        for number, sid, where in waiting:
            archived, deleted = states.get(sid, (False, False))
            if deleted or not matches(view, archived):
                continue
            if len(out) == self.page_size:
                return self._result(out, Position("own", skip=last, token=token), view, cwd)
            out.append({"sessionId": sid, "cwd": where, "archived": archived})
            seen.given.add(sid)
            last = number
        return self._result(out, None, view, cwd)

    def _result(
        self, out: list[dict[str, Any]], following: Position | None, view: str, cwd: str | None
    ) -> dict[str, Any]:
        result: dict[str, Any] = {"sessions": out}
        if following is not None:
            result["nextCursor"] = write_cursor(self.store.cursor_key, following, view, cwd)
        return result
