"""The agent under test: a spawned process spoken to in newline-delimited JSON-RPC.

Every message the agent writes is read by a thread into a queue; the kit's single
thread takes them out while it waits, checks each one (JSON, JSON-RPC shape, the
generated model of the negotiated version) and raises ``Failure`` at the first bad one.
Nothing here waits without a deadline.
"""

from __future__ import annotations

import itertools
import json
import queue
import re
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, Any, Literal

from pydantic import ValidationError

from .. import processes
from ..errors import _printable, pointer
from .models import MessageModels

MAX_SHOWN = 300  # characters of one message quoted in a report
SHOWN_HEAD = 40  # of a cut message, the start kept whatever else is (its id and method)
AUTH_REQUIRED = -32000  # ACP's "authentication required"
# The longest line read from an agent; a longer one fails the scenario (and is skipped to
# its end in bounded pieces) instead of growing the kit's memory without limit.
MAX_LINE_BYTES = 16 * 1024 * 1024
STOP_GRACE_S = 2.0


class Verdict(Exception):
    status: Literal["fail", "skip", "auth"]

    def __init__(self, message: str, exchange: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.exchange = exchange


class Failure(Verdict):
    """The agent broke a requirement; ``exchange`` is the messages, in order, that show it."""

    status = "fail"


class Skip(Verdict):
    """The scenario could not check its requirement; ``exchange`` shows why when messages do."""

    status = "skip"


class AuthRequired(Verdict):
    """The agent refused a step because the user has not authenticated: the environment's
    verdict, not the agent's."""

    status = "auth"


def shown(message: Any, *focus: str) -> str:
    """One message as a single printable line, cut to a readable length. A cut keeps the
    start of the message and, for each JSON pointer in ``focus``, the member it names (key
    and value; the object that lacks it, for a missing key): what decided the verdict."""
    if isinstance(message, str):
        text, spans = message, []
    else:
        targets = [tuple(_unescape(t) for t in f.split("/")[1:]) for f in focus if f.startswith("/")]
        text, found = _dump(message, (), targets)
        spans = [found[max((p for p in found if p == t[: len(p)]), key=len)] for t in targets]
    if len(_printable(text)) <= MAX_SHOWN:
        return _printable(text)
    keep = [(0, SHOWN_HEAD)] + [
        (start, min(end, start + (MAX_SHOWN - SHOWN_HEAD) // len(spans) - 6)) for start, end in spans
    ]
    keep = _merged(keep)
    budget = MAX_SHOWN - sum(end - start for start, end in keep) - 3 * len(keep)
    for i in range(len(keep) - 1, -1, -1):  # the rest goes to what follows each kept part, last first
        start, end = keep[i]
        limit = keep[i + 1][0] if i + 1 < len(keep) else len(text)
        grow = max(0, min(budget, limit - end))
        keep[i], budget = (start, end + grow), budget - grow
    keep = _merged(keep)
    parts = [_printable(text[start:end]) for start, end in keep]
    out = "...".join(parts)
    return out + "..." if keep[-1][1] < len(text) else out


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _dump(
    value: Any, path: tuple[str, ...], targets: list[tuple[str, ...]]
) -> tuple[str, dict[tuple[str, ...], tuple[int, int]]]:
    """``value`` as compact JSON, with the span of each member on the way to a target (from its
    key to the end of its value; the whole text for the root)."""
    dumped = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    found = {path: (0, len(dumped))}
    if not isinstance(value, (dict, list)) or not any(t[: len(path)] == path and len(t) > len(path) for t in targets):
        return dumped, found
    items = value.items() if isinstance(value, dict) else enumerate(value)
    at = 1  # past the opening bracket
    for i, (key, item) in enumerate(items):
        prefix = ("," if i else "") + (json.dumps(key, ensure_ascii=False) + ":" if isinstance(value, dict) else "")
        text, inner = _dump(item, (*path, str(key)), targets)
        begin = at + (1 if i else 0)
        for sub, (start, end) in inner.items():
            shift = at + len(prefix)
            found[sub] = (begin, shift + end) if sub == (*path, str(key)) else (shift + start, shift + end)
        at += len(prefix) + len(text)
    return dumped, found


@dataclass
class Received:
    seq: int  # arrival order among everything the agent wrote
    message: dict[str, Any]


@dataclass
class Reply:
    method: str
    sent: dict[str, Any]
    received: Received
    sent_after: int  # how many messages the agent had written when this request went out

    @property
    def result(self) -> Any:
        return self.received.message.get("result")

    @property
    def error(self) -> dict[str, Any] | None:
        error = self.received.message.get("error")
        return error if isinstance(error, dict) else None

    @property
    def exchange(self) -> tuple[str, ...]:
        """The request and its answer; a cut answer keeps its error."""
        return ("> " + shown(self.sent), "< " + shown(self.received.message, "/error"))


@dataclass
class Pending:
    method: str
    sent: dict[str, Any]
    sent_after: int


def in_order(sent: list[tuple[int, dict[str, Any]]], received: list[Received]) -> tuple[str, ...]:
    """Requests (each with the count of agent messages before it) and agent messages as one
    transcript in the order they crossed the wire, ``>`` sent and ``<`` received."""
    lines = [(after * 2, "> " + shown(message)) for after, message in sent]
    lines += [(note.seq * 2 + 1, "< " + shown(note.message)) for note in received]
    return tuple(text for _, text in sorted(lines, key=lambda line: line[0]))


@dataclass(eq=False)  # (hashed by identity: kept in RUNNING)
class AgentProcess:
    command: list[str]
    timeout: float
    models: MessageModels | None = None  # set once the version is agreed
    max_line: int = MAX_LINE_BYTES
    notifications: list[Received] = field(default_factory=list)
    _proc: subprocess.Popen[bytes] | None = None
    _inbox: queue.Queue[bytes | int | None] = field(default_factory=queue.Queue)  # int: an oversized line
    _stderr: deque[str] = field(default_factory=lambda: deque(maxlen=5))
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _pending: dict[int, Pending] = field(default_factory=dict)
    _replies: dict[int, Received] = field(default_factory=dict)
    received_count: int = 0  # every message the agent wrote so far, in arrival order
    _write_lock: threading.Lock = field(default_factory=threading.Lock)
    _eof: bool = False
    auth_methods: tuple[str, ...] = ()  # the ids of the authMethods its initialize offered
    # The first request the agent refused for want of authentication: (method, error).
    auth_refusal: tuple[str, dict[str, Any]] | None = None

    def start(self) -> None:
        """Spawn the command in a session of its own; ``OSError`` (not found, not
        executable) goes to the caller."""
        self._proc = processes.spawn(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
        RUNNING.add(self)
        assert self._proc.stdout is not None and self._proc.stderr is not None
        threading.Thread(target=self._read, args=(self._proc.stdout,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self._proc.stderr,), daemon=True).start()

    def _read(self, out: IO[bytes]) -> None:
        with out:
            while line := out.readline(self.max_line + 1):
                if len(line) > self.max_line and not line.endswith(b"\n"):
                    size = len(line)
                    while (rest := out.readline(self.max_line)) and not rest.endswith(b"\n"):
                        size += len(rest)
                    self._inbox.put(size + len(rest))
                    continue
                self._inbox.put(line)
        self._inbox.put(None)

    def _drain(self, err: IO[bytes]) -> None:
        # Kept only to explain an exit; reading it also keeps a chatty agent from blocking.
        with err:
            for line in err:
                self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def stop(self, grace: float = STOP_GRACE_S) -> None:
        """End of input first (agents flush and exit on it; ``grace`` seconds), then terminate,
        then kill, ``STOP_GRACE_S`` apart: the agent and every process it started (its
        process group, and its descendants that left it)."""
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        others = processes.descendants(proc.pid)  # while the tree still hangs together
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        deadline = time.monotonic() + grace
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
        # A launcher may exit at end of input and leave its child running, or wait for a
        # child that ignores it: whatever of the group is left gets the rest of the grace.
        while time.monotonic() < deadline and processes.alive(proc.pid, others):
            time.sleep(0.02)
        processes.stop(proc.pid, others, STOP_GRACE_S)
        if proc.poll() is None:  # where there are no process groups
            proc.kill()
        try:
            proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        RUNNING.discard(self)

    # -- sending -------------------------------------------------------------------

    def _write(self, message: dict[str, Any]) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise Failure("the agent is not running")
        try:
            with self._write_lock:
                proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
                proc.stdin.flush()
        except OSError:
            raise Failure(f"the agent stopped reading its input ({self._exit_text()})") from None

    def send(self, method: str, params: dict[str, Any]) -> int:
        """Send a request without waiting; ``wait_reply`` collects the answer."""
        request_id = next(self._ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.pump(time.monotonic())  # so that sent_after counts what had arrived by now
        self._pending[request_id] = Pending(method, message, self.received_count)
        self._write(message)
        return request_id

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def call(self, method: str, params: dict[str, Any], timeout: float | None = None) -> Reply:
        return self.wait_reply(self.send(method, params), timeout)

    # -- receiving -----------------------------------------------------------------

    def wait_reply(self, request_id: int, timeout: float | None = None) -> Reply:
        pending = self._pending[request_id]
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while request_id not in self._replies:
            if not self.pump(deadline):
                raise Failure(
                    f"no answer to {pending.method} within {self.timeout if timeout is None else timeout:g}s",
                    ("> " + shown(pending.sent),),
                )
        del self._pending[request_id]
        return Reply(pending.method, pending.sent, self._replies.pop(request_id), pending.sent_after)

    def wait_for(self, wanted: Any, timeout: float | None = None, since: int = 0) -> Received | None:
        """The first notification from number ``since`` on that ``wanted(message)`` accepts,
        waiting up to the timeout for it; None if none came."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        seen = since
        while True:
            for note in self.notifications[seen:]:
                if wanted(note.message):
                    return note
            seen = len(self.notifications)
            if not self.pump(deadline):
                return None

    def pump(self, deadline: float) -> bool:
        """Take everything the agent wrote so far, waiting until ``deadline`` for at least
        one message; False when nothing came in time."""
        got = False
        while True:
            wait = deadline - time.monotonic() if not got else 0.0
            try:
                line = self._inbox.get(timeout=max(wait, 0.0)) if wait > 0 else self._inbox.get_nowait()
            except queue.Empty:
                return got
            if line is None:
                self._eof = True
                raise Failure(f"the agent closed its output ({self._exit_text()})")
            if isinstance(line, int):
                raise Failure(f"the agent wrote a line of {line} bytes; the kit reads lines up to {self.max_line}")
            if line.strip():
                self._take(line)
                got = True

    def _exit_text(self) -> str:
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(0.5)
            except subprocess.TimeoutExpired:
                pass
        text = "still running" if code is None else f"exit status {code}"
        if self._stderr:
            text += "; last stderr line: " + shown(self._stderr[-1])
        return text

    def _take(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            text = line.decode("utf-8", "replace")
            raise Failure("the agent wrote a line that is not JSON", ("< " + shown(text),)) from None
        seq = self.received_count
        self.received_count += 1
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise Failure("the agent wrote a message that is not a JSON-RPC 2.0 object", ("< " + shown(message),))
        received = Received(seq, message)
        if "method" in message:
            if "id" in message:
                # The kit offers no client methods (no fs, no terminal, no permissions).
                self._write(
                    {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
                )
                return
            self._check_notification(message)
            self.notifications.append(received)
            return
        request_id = message.get("id")
        pending = self._pending.get(request_id) if isinstance(request_id, int) else None
        if pending is None:
            raise Failure("the agent answered a request the kit never sent", ("< " + shown(message),))
        self._check_response(pending, message)
        self._replies[request_id] = received  # type: ignore[index]

    # -- checks against the generated models -------------------------------------------

    def _check_response(self, pending: Pending, message: dict[str, Any]) -> None:
        exchange = ("> " + shown(pending.sent), "< " + shown(message))
        if ("result" in message) == ("error" in message):
            raise Failure("a response must hold exactly one of result and error", exchange)
        if "error" in message:
            error = message["error"]
            if not (
                isinstance(error, dict) and type(error.get("code")) is int and isinstance(error.get("message"), str)
            ):
                raise Failure("a JSON-RPC error needs an integer code and a string message (at /error)", exchange)
            if self.auth_refusal is None and is_auth_refusal(error, self.auth_methods):
                self.auth_refusal = (pending.method, error)
            return
        model = self.models.result(pending.method) if self.models else None
        if model is not None:
            self._validate(model, message, "result", (pending.sent,))

    def _check_notification(self, message: dict[str, Any]) -> None:
        if self.models is None:
            return
        model = self.models.notification(message["method"], message.get("params"))
        if model is not None:
            self._validate(model, message, "params")

    @staticmethod
    def _validate(model: Any, message: dict[str, Any], key: str, before: Iterable[Any] = (), *focus: str) -> None:
        """Check ``message[key]`` against ``model``; a Failure quotes the messages ``before``
        it, then the message, cut around the pointer (and ``focus``) it names."""
        try:
            # Strict, from JSON text: "true" is not a boolean, 1 is not a string.
            model.model_validate_json(json.dumps(message.get(key)), strict=True)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = pointer(key, *_path(message.get(key), first["loc"]))
            exchange = (*("> " + shown(m) for m in before), "< " + shown(message, *focus, where))
            raise Failure(
                f"{model.__name__} does not accept the message at {where}: {first['msg']}", exchange
            ) from None


def is_auth_refusal(error: dict[str, Any], methods: Iterable[str]) -> bool:
    """An error that says the user must authenticate first: ACP's code, or one that names an
    auth method the agent offered."""
    if error.get("code") == AUTH_REQUIRED:
        return True
    text = json.dumps([error.get("message"), error.get("data")], ensure_ascii=False)
    return any(re.search(rf"(?<![\w-]){re.escape(m)}(?![\w-])", text) for m in methods if m)


# Every agent process started and not yet stopped, for ``stop_all``.
RUNNING: set[AgentProcess] = set()


def stop_all() -> None:
    """Stop every agent still running (the run was interrupted, or ended in an error)."""
    for agent in list(RUNNING):
        agent.stop(0.0)


def _path(data: Any, loc: tuple[int | str, ...]) -> list[str | int]:
    """The part of a pydantic error location that exists in the data (union tags are skipped)."""
    path: list[str | int] = []
    for i, part in enumerate(loc):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        elif i < len(loc) - 1:
            continue
        path.append(part)  # found, or the last part: a required key that is missing
    return path
