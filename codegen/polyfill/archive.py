"""The session-archive RFD on top of an agent that lacks it: what the polyfill adds to
``initialize``, answers itself (``session/archive``, ``session/unarchive``,
``session/list``) and watches on its way (sessions created, opened, closed, deleted;
prompts to archived sessions).

Where the agent cannot list sessions, or has ``archive`` already, the polyfill steps
aside after ``initialize``: every later message passes through untouched.

Sessions the agent does not list: some agents list a session only once it has had a
prompt. A session created through this polyfill process is known from the
``session/new`` result, so it can be archived and is listed (after the agent's own list)
for as long as this connection lasts and the agent has not listed it itself. Once the
connection ends, the agent's own list is again the only word on which sessions exist:
the polyfill cannot tell whether the agent kept a session it never listed.
"""

from __future__ import annotations

import itertools
import logging
import threading
from typing import Any

from pydantic import ValidationError

from ..runtime._bridge import spoken_version
from ..shipped import reference_module
from .listing import BadCursor, Created, Lister, Listings
from .relay import INTERNAL_ERROR, AgentGone, Relay, error
from .store import Store

logger = logging.getLogger(__name__)

INVALID_REQUEST, INVALID_PARAMS, RESOURCE_NOT_FOUND = -32600, -32602, -32002
OWN = ("session/archive", "session/unarchive", "session/list")
LOOKUP_PAGES = 1000  # agent pages read to find one session id
TURN_END_WAIT_S = 5.0  # for a cancelled v1 turn to end before the archive is answered


class Refused(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def _valid_id(value: Any) -> bool:
    """JSON-RPC 2.0: a string, a number or null (a bool is no number)."""
    return value is None or (isinstance(value, (str, int, float)) and not isinstance(value, bool))


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class Polyfill:
    """The relay's hook, and the RFD's behaviour."""

    def __init__(self, relay: Relay, store: Store, page_size: int | None = None) -> None:
        self.relay, self.store = relay, store
        self.page_size = page_size
        relay.hook = self.client_message
        self.version: int | None = None
        self.active = False  # the agent lists sessions and lacks archive: the polyfill serves it
        self.has_close = self.has_delete = False
        self._lock = threading.Lock()
        self.open: set[str] = set()  # sessions open on this connection
        self.closed_by_archive: set[str] = set()  # closed here by an archive; a prompt is refused
        self.created: dict[str, Created] = {}
        self.listed: set[str] = set()  # ids the agent's list has shown
        self.listings = Listings()  # what each recent session/list sequence has given and met
        self.turns: dict[str, threading.Event] = {}  # v1: set once the prompt's response went out
        self._numbers = itertools.count()
        self.workers: list[threading.Thread] = []
        # The client's messages while the agent has not answered initialize: whether the
        # polyfill serves archive is not known yet (a shell writes every line at once).
        self._held: list[dict[str, Any]] | None = None
        self._releasing: int | None = None  # the thread that forwards them, in order

    # -- initialize ------------------------------------------------------------------------

    def initialized(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The agent's initialize result: archive added where the agent lists and lacks it."""
        result = message.get("result")
        version = spoken_version(result)
        self.active = False
        if version not in (1, 2):
            return None
        if version == 1:
            caps = _obj(_obj(result).get("agentCapabilities"))
            session = caps.get("sessionCapabilities")
            lists = isinstance(_obj(session).get("list"), dict)
            self.has_close = isinstance(_obj(session).get("close"), dict)
        else:
            session = _obj(_obj(result).get("capabilities")).get("session")
            lists = isinstance(session, dict)  # v2: a session object promises list and close
            self.has_close = lists
        if not lists or not isinstance(session, dict) or session.get("archive") is not None:
            return None  # cannot list, or has archive already: step aside
        self.version, self.active = version, True
        self.has_delete = isinstance(session.get("delete"), dict)
        session["archive"] = {}
        return message

    def _release(self) -> None:
        """Once the initialize answer has gone to the client: what was held, in order."""
        self._releasing = threading.get_ident()
        while True:
            with self._lock:
                if not self._held:
                    self._held = self._releasing = None
                    return
                message = self._held.pop(0)
            self.relay.forward(message)

    # -- the client's messages -------------------------------------------------------------

    def client_message(self, message: dict[str, Any]) -> bool:
        method = message["method"]
        has_id = "id" in message
        if method == "initialize" and has_id:
            with self._lock:
                self._held = self._held if self._held is not None else []
            self.relay.watch(message["id"], self.initialized, self._release)
            return False
        with self._lock:
            if self._held is not None and threading.get_ident() != self._releasing:
                self._held.append(message)
                return True
        if not self.active:
            return False
        params = message.get("params")
        sid = _obj(params).get("sessionId")
        if method in OWN:
            if has_id and not _valid_id(message["id"]):
                self.relay.send_client(error(None, INVALID_REQUEST, "Invalid Request", {"reason": "invalid id"}))
                return True
            worker = threading.Thread(target=self._serve, args=(message,), daemon=True)
            self.workers = [w for w in self.workers if w.is_alive()] + [worker]
            worker.start()
            return True
        if not has_id:
            return False
        if method == "session/new":
            self.relay.watch(message["id"], lambda m: self._created(m, _obj(params).get("cwd")))
            return False
        if not isinstance(sid, str):
            return False
        if method == "session/prompt" and (sid in self.closed_by_archive or self.store.state(sid)[0]):
            why = "the session is archived" if sid not in self.closed_by_archive else "archiving closed it"
            self.relay.send_client(
                error(
                    message["id"],
                    RESOURCE_NOT_FOUND,
                    f"Session {sid} is not open: {why}; session/unarchive, then session/resume or session/load it",
                    {"sessionId": sid},
                )
            )
            return True
        if method == "session/prompt" and self.version == 1:
            ended = threading.Event()
            with self._lock:
                self.turns[sid] = ended
            self.relay.watch(message["id"], lambda m: None, after=lambda: self._turn_ended(sid, ended))
            return False
        watch = {
            "session/load": lambda m: self._opened(m, sid),
            "session/resume": lambda m: self._opened(m, sid),
            "session/close": lambda m: self._closed(m, sid),
            "session/delete": lambda m: self._deleted(m, sid),
        }.get(method)
        if watch is not None:
            self.relay.watch(message["id"], watch)
        return False

    def _turn_ended(self, sid: str, ended: threading.Event) -> None:
        with self._lock:
            if self.turns.get(sid) is ended:
                del self.turns[sid]
        ended.set()

    def _created(self, message: dict[str, Any], cwd: Any) -> None:
        sid = _obj(message.get("result")).get("sessionId")
        if isinstance(sid, str):
            with self._lock:
                self.open.add(sid)
                if isinstance(cwd, str):
                    self.created[sid] = Created(next(self._numbers), cwd)

    def _opened(self, message: dict[str, Any], sid: str) -> None:
        if "result" in message:
            with self._lock:
                self.open.add(sid)
                self.closed_by_archive.discard(sid)

    def _closed(self, message: dict[str, Any], sid: str) -> None:
        if "result" in message:
            with self._lock:
                self.open.discard(sid)

    def _deleted(self, message: dict[str, Any], sid: str) -> None:
        if "result" in message:
            self.store.set_deleted(sid)
            with self._lock:
                self.open.discard(sid)
                self.created.pop(sid, None)

    # -- the methods the polyfill answers --------------------------------------------------

    def _serve(self, message: dict[str, Any]) -> None:
        """One archive, unarchive or list request, in a thread of its own (it may wait for
        the agent, which must stay free to answer)."""
        request_id, has_id = message.get("id"), "id" in message
        try:
            result = self._run(message["method"], message.get("params"))
            reply = {"jsonrpc": "2.0", "id": request_id, "result": result}
        except Refused as exc:
            reply = error(request_id, exc.code, exc.message, exc.data)
        except AgentGone as exc:
            reply = error(request_id, INTERNAL_ERROR, str(exc))
        except Exception:
            logger.exception("polyfill: %s failed", message["method"])
            reply = error(request_id, INTERNAL_ERROR, "Internal error")
        if has_id:
            self.relay.send_client(reply)

    def _run(self, method: str, params: Any) -> dict[str, Any]:
        assert self.version is not None
        valid = validated(self.version, method, params)
        if method == "session/list":
            return self._list(params, valid)
        sid: str = valid.session_id
        cwd = self._known(sid)
        if method == "session/unarchive":
            self.store.set_archived(sid, False, cwd)
            return {}
        with self._lock:
            was_open = sid in self.open
            self.open.discard(sid)
            if was_open:
                self.closed_by_archive.add(sid)
        if was_open:
            # The RFD's order: tell the client while it has the session open, then cancel the
            # turn and close the session (where the agent can), then commit.
            update = {"sessionUpdate": "session_info_update", "archived": True}
            self.relay.send_client(
                {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": update}}
            )
            self.relay.notify_agent("session/cancel", {"sessionId": sid})
            self.relay.cancelled(sid)
            if self.has_close:
                closed = self.relay.request("session/close", {"sessionId": sid})
                if "error" in closed:
                    logger.warning("polyfill: the agent refused session/close of %s: %s", sid, closed["error"])
            with self._lock:
                turn = self.turns.get(sid)
            if turn is not None:
                # Archived once the work stopped: an agent may end the turn some time after
                # the cancel, or (without close) only when it is done.
                turn.wait(TURN_END_WAIT_S)
        self.store.set_archived(sid, True, cwd)
        return {}

    def _known(self, sid: str) -> str | None:
        """The session's cwd where known, if the agent knows the session; else -32002."""
        if self.store.state(sid)[1]:
            raise Refused(RESOURCE_NOT_FOUND, f"Session {sid} was deleted", {"sessionId": sid})
        with self._lock:
            created = self.created.get(sid)
        if created is not None:
            return created.cwd
        hint = self.store.cwd(sid)
        cursor: str | None = None
        for _ in range(LOOKUP_PAGES):
            params: dict[str, Any] = {"cwd": hint} if hint is not None else {}
            if cursor is not None:
                params["cursor"] = cursor
            result = self._ask_list(params)
            for info in result.get("sessions") or []:
                if isinstance(info, dict) and info.get("sessionId") == sid:
                    cwd = info.get("cwd")
                    return cwd if isinstance(cwd, str) else hint
            nxt = result.get("nextCursor")
            if not isinstance(nxt, str) or nxt == cursor:
                break
            cursor = nxt
        raise Refused(RESOURCE_NOT_FOUND, f"Session {sid} not found: the agent does not list it", {"sessionId": sid})

    def _ask_list(self, params: dict[str, Any]) -> dict[str, Any]:
        answer = self.relay.request("session/list", params)
        if "error" in answer:
            failure = _obj(answer["error"])
            code = failure.get("code")
            raise Refused(
                code if type(code) is int else INTERNAL_ERROR,
                str(failure.get("message", "session/list failed")),
                failure.get("data"),
            )
        return _obj(answer.get("result"))

    def _list(self, params: dict[str, Any], valid: Any) -> dict[str, Any]:
        view = valid.archived or "exclude"
        cwd = valid.cwd
        forwarded = {k: v for k, v in params.items() if k not in ("archived", "cursor")}
        lister = Lister(self.store, self._ask_list, self.created, self.listed, self.listings, **_size(self.page_size))
        try:
            return lister.page(forwarded, view, cwd, valid.cursor)
        except BadCursor as exc:
            raise Refused(INVALID_PARAMS, "Invalid params", _problem(["cursor"], str(exc))) from None


def _size(page_size: int | None) -> dict[str, int]:
    return {} if page_size is None else {"page_size": page_size}


def validated(version: int, method: str, params: Any) -> Any:
    """The params of one of the RFD's requests, validated into the generated model of the
    version, with the route's checks of the generated router (the ``archived`` values)."""
    dispatch = reference_module(version, "dispatch")
    router = reference_module(None, "_router")
    route = dispatch.ROUTES[method]
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise Refused(
            INVALID_PARAMS, "Invalid params", {"errors": [{"path": [], "message": "params must be an object"}]}
        )
    try:
        model = route.params.model_validate(params)
    except ValidationError as exc:
        raise Refused(INVALID_PARAMS, "Invalid params", router.params_error_data(exc, params)) from None
    for field in route.enum_fields:
        value: Any = model
        for step in field.path:
            value = getattr(value, _attr(value, step), None)
        accepted = [v for v, _ in field.values]
        if value is not None and value not in accepted:
            message = f"unsupported value {value!r}; expected one of {', '.join(map(repr, accepted))}"
            raise Refused(
                INVALID_PARAMS, "Invalid params", {"errors": [{"path": list(field.path), "message": message}]}
            )
    return model


def _problem(path: list[Any], message: str) -> dict[str, Any]:
    """``data`` of a -32602, as the generated router writes it."""
    return {"errors": [{"path": path, "message": message}]}


def _attr(model: Any, wire: str) -> str:
    for name, info in type(model).model_fields.items():
        if (info.alias or name) == wire:
            return str(name)
    return wire
