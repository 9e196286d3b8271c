"""What a scenario works with: the agent, what it advertised, its own cwd, and helpers
that turn a wrong answer into a ``Failure`` naming the exchange.

A scenario raises ``Failure`` or ``Skip`` (with what the agent does not advertise);
returning means it passed. Each scenario works in a fresh working directory of its own
and lists with that ``cwd``, so sessions of other scenarios (and of earlier runs) never
show up in its listings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .driver import AgentProcess, Failure, Received, Reply, Skip, shown

OMIT = object()  # the `archived` filter left out of the request
FIRST_BATCH = 8  # sessions the pagination scenarios create first; doubled until a second page shows
MAX_SESSIONS = 200  # ... up to this many
BATCH = 50  # requests sent before reading their answers
MAX_PAGES = 1000


@dataclass(frozen=True)
class Caps:
    """What the agent advertised, read where the negotiated version puts it."""

    archive: bool = False
    list: bool = False
    delete: bool = False
    resume: bool = False
    close: bool = False
    load: bool = False

    @classmethod
    def read(cls, version: int, result: dict[str, Any]) -> Caps:
        if version == 1:
            caps = _obj(result.get("agentCapabilities"))
            session = _obj(caps.get("sessionCapabilities"))
            has = {
                name: isinstance(session.get(name), dict) for name in ("archive", "list", "delete", "resume", "close")
            }
            return cls(**has, load=caps.get("loadSession") is True)
        # v2: a present `session` object already promises list, close and resume.
        session_obj = _obj(result.get("capabilities")).get("session")
        if not isinstance(session_obj, dict):
            return cls()
        return cls(
            archive=isinstance(session_obj.get("archive"), dict),
            delete=isinstance(session_obj.get("delete"), dict),
            list=True,
            resume=True,
            close=True,
        )


def _session_id(result: Any) -> str:
    session_id = _obj(result).get("sessionId")
    if not isinstance(session_id, str):
        raise Failure("session/new: no string sessionId in the result", ("< " + shown(result),))
    return session_id


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass
class Options:
    timeout: float  # per request
    start_timeout: float  # for a fresh process to answer initialize
    turn_timeout: float  # for a prompt turn to end
    long_prompts: tuple[str, ...]  # prompts that keep the agent busy, each longer than the one before
    authenticate: str | None = None  # the authMethod id to run ACP `authenticate` with after initialize


class Context:
    def __init__(
        self,
        agent: AgentProcess,
        version: int,
        init: dict[str, Any],
        cwd: str,
        options: Options,
        restart: Callable[[], tuple[AgentProcess, dict[str, Any]]],
    ) -> None:
        self.agent = agent
        self.version = version
        self.init = init
        self.caps = Caps.read(version, init)
        self.cwd = cwd
        self.options = options
        self._restart = restart
        self.last_list: tuple[str, ...] = ()  # the latest session/list exchange, to show with a failure

    # -- requirements ---------------------------------------------------------------

    def need(self, capability: str) -> None:
        names = {
            "list": "session/list",
            "delete": "session/delete",
            "resume": "session/resume",
            "close": "session/close",
            "load": "session/load (loadSession)",
        }
        if not getattr(self.caps, capability):
            raise Skip(f"the agent does not advertise {names[capability]}")

    def need_reopen(self) -> str:
        """The method that reopens a stored session: resume, else load."""
        if self.caps.resume:
            return "session/resume"
        if self.caps.load:
            return "session/load"
        raise Skip("the agent advertises neither session/resume nor session/load")

    def restart(self) -> None:
        self.agent, self.init = self._restart()

    # -- requests -------------------------------------------------------------------

    def ok(self, method: str, params: dict[str, Any], what: str = "") -> Any:
        return _result(self.agent.call(method, params), method, what)

    def fails(self, method: str, params: dict[str, Any], code: int, what: str) -> Reply:
        reply = self.agent.call(method, params)
        got = "a result" if reply.error is None else f"error {reply.error.get('code')}"
        if reply.error is None or reply.error.get("code") != code:
            raise Failure(f"{what}: expected error {code}, got {got}", reply.exchange)
        return reply

    def new_session(self, cwd: str | None = None) -> str:
        return _session_id(self.ok("session/new", {"cwd": cwd or self.cwd, "mcpServers": []}))

    def ok_all(self, method: str, params: list[dict[str, Any]]) -> list[Any]:
        """``ok`` for many requests, sent ``BATCH`` at a time before reading their answers:
        creating a hundred sessions costs a few round trips, not a hundred."""
        results = []
        for start in range(0, len(params), BATCH):
            ids = [self.agent.send(method, p) for p in params[start : start + BATCH]]
            results += [_result(self.agent.wait_reply(request_id), method) for request_id in ids]
        return results

    def paged_sessions(self) -> tuple[list[str], set[str]]:
        """Sessions in this cwd, every other one archived, created in growing batches until
        both archived=exclude and archived=only list more than one page."""
        ids: list[str] = []
        archived: set[str] = set()
        target = FIRST_BATCH
        while True:
            new = [
                _session_id(r)
                for r in self.ok_all("session/new", [{"cwd": self.cwd, "mcpServers": []}] * (target - len(ids)))
            ]
            self.ok_all("session/archive", [{"sessionId": s} for s in new[::2]])
            ids += new
            archived.update(new[::2])
            one_page = [view for view in ("exclude", "only") if self.page(view)[1] is None]
            if not one_page:
                return ids, archived
            if len(ids) >= MAX_SESSIONS:
                raise Skip(
                    f"after creating {len(ids)} sessions ({len(archived)} archived) in one cwd, archived="
                    f"{' and '.join(one_page)} still fit on one page: nothing to paginate"
                    f" (the kit creates at most {MAX_SESSIONS}; give the agent a smaller page size)",
                    self.last_list,
                )
            target = min(target * 2, MAX_SESSIONS)

    def archive(self, session_id: str, what: str = "") -> None:
        self.ok("session/archive", {"sessionId": session_id}, what)

    def unarchive(self, session_id: str, what: str = "") -> None:
        self.ok("session/unarchive", {"sessionId": session_id}, what)

    def reopen(self, method: str, session_id: str) -> Reply:
        return self.agent.call(method, {"sessionId": session_id, "cwd": self.cwd, "mcpServers": []})

    # -- listing --------------------------------------------------------------------

    def list_params(self, archived: Any = OMIT, cwd: str | None = None, cursor: str | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"cwd": cwd or self.cwd}
        if archived is not OMIT:
            params["archived"] = archived
        if cursor is not None:
            params["cursor"] = cursor
        return params

    def page(self, archived: Any = OMIT, cursor: str | None = None) -> tuple[list[dict[str, Any]], str | None, Reply]:
        reply = self.agent.call("session/list", self.list_params(archived, cursor=cursor))
        self.last_list = reply.exchange
        if reply.error is not None:
            raise Failure(f"session/list (archived={_filter(archived)}) failed", reply.exchange)
        sessions = [s for s in reply.result.get("sessions", []) if isinstance(s, dict)]
        for session in sessions:
            if session.get("cwd") != self.cwd:
                raise Failure(f"session/list returned a session outside cwd {self.cwd}", reply.exchange)
        cursor = reply.result.get("nextCursor")
        return sessions, cursor if isinstance(cursor, str) else None, reply

    def listing(self, archived: Any = OMIT) -> dict[str, dict[str, Any]]:
        """Every session of this scenario's cwd under one filter, following nextCursor."""
        found: dict[str, dict[str, Any]] = {}
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            sessions, cursor, reply = self.page(archived, cursor)
            for session in sessions:
                if session["sessionId"] in found:
                    raise Failure(f"session/list listed {session['sessionId']} twice", reply.exchange)
                found[session["sessionId"]] = session
            if cursor is None:
                return found
        raise Failure(f"session/list kept returning a nextCursor after {MAX_PAGES} pages")

    def expect_listed(self, session_id: str, archived: Any, state: bool, why: str) -> None:
        listed = self.listing(archived)
        if session_id not in listed:
            raise Failure(
                f"{why}: {session_id} missing from session/list (archived={_filter(archived)})", self.last_list
            )
        if listed[session_id].get("archived") is not state:
            raise Failure(
                f"{why}: {session_id} listed with archived={shown(listed[session_id].get('archived'))}, "
                f"expected {str(state).lower()}",
                ("< " + shown(listed[session_id]),),
            )

    def expect_unlisted(self, session_id: str, archived: Any, why: str) -> None:
        if session_id in self.listing(archived):
            raise Failure(f"{why}: {session_id} is listed under archived={_filter(archived)}", self.last_list)

    # -- turns ----------------------------------------------------------------------

    def prompt(self, session_id: str, text: str) -> tuple[int, int]:
        """Start a turn; (request id, how many notifications came before it)."""
        mark = len(self.agent.notifications)
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        return self.agent.send("session/prompt", params), mark

    def turn_end(self, session_id: str, request_id: int, mark: int, timeout: float) -> tuple[int, Any]:
        """Wait for the turn's end: (arrival number, stopReason). v1 ends it with the
        prompt's response; v2 acknowledges the prompt and ends with an idle state_update."""
        if self.version == 1:
            reply = self.agent.wait_reply(request_id, timeout)
            if reply.error is not None:
                raise Failure("session/prompt failed", reply.exchange)
            return reply.received.seq, _obj(reply.result).get("stopReason")
        ack = self.agent.wait_reply(request_id, timeout)
        if ack.error is not None:
            raise Failure("session/prompt failed", ack.exchange)
        note = self.wait_idle(session_id, mark, timeout)
        return note.seq, idle_stop_reason(note)

    def wait_idle(self, session_id: str, mark: int, timeout: float) -> Received:
        """v2: the ``state_update`` idle that ends a turn, from notification ``mark`` on."""

        def idle(message: dict[str, Any]) -> bool:
            params = _obj(message.get("params"))
            update = _obj(params.get("update"))
            return (
                params.get("sessionId") == session_id
                and update.get("sessionUpdate") == "state_update"
                and update.get("state") == "idle"
            )

        note = self.agent.wait_for(idle, timeout, since=mark)
        if note is None:
            raise Failure(f"the turn in {session_id} did not end within {timeout:g}s")
        return note

    def run_turn(self, session_id: str, text: str) -> Any:
        request_id, mark = self.prompt(session_id, text)
        return self.turn_end(session_id, request_id, mark, self.options.turn_timeout)[1]

    def updates(self, session_id: str, since: int) -> list[dict[str, Any]]:
        """The ``session/update`` payloads about one session from notification ``since`` on."""
        return [
            _obj(_obj(n.message.get("params")).get("update"))
            for n in self.agent.notifications[since:]
            if n.message.get("method") == "session/update"
            and _obj(n.message.get("params")).get("sessionId") == session_id
        ]


def _filter(value: Any) -> str:
    return "omitted" if value is OMIT else shown(value)


def _result(reply: Reply, method: str, what: str = "") -> Any:
    """A reply's result object, or the Failure that names what went wrong."""
    if reply.error is not None:
        raise Failure(f"{what or method} failed: error {reply.error.get('code')}", reply.exchange)
    if not isinstance(reply.result, dict):
        raise Failure(f"{method}: the result must be an object", reply.exchange)
    return reply.result


def idle_stop_reason(note: Received) -> Any:
    """v2: the stopReason of the idle ``state_update`` that ended a turn."""
    return _obj(_obj(note.message.get("params")).get("update")).get("stopReason")
