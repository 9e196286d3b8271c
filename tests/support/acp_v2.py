"""A protocol 2 client as the migration guide describes one, that checks every message it
receives against a v2 schema (upstream's 2026-11 ``schema.unstable.json`` in the tests):

- a request or notification from the agent: its params against the ``$defs`` type of its
  method among the agent's requests and notifications (``AgentRequest``,
  ``AgentNotification``; the types whose ``x-side`` is ``client``); a method that protocol 2
  does not have (``fs/*``, ``terminal/*``; ``_``-prefixed extension methods aside) fails;
- a response: its result against the response type of the method the client asked
  (``AgentResponse``), an error against ``Error``;
- a ``session/update`` whose ``sessionUpdate`` protocol 2 does not name fails too, though the
  schema's open unions would take it (``tool_call``, ``plan``, ``current_mode_update`` are
  protocol 1's).

What the client sends is checked the same way (``ClientRequest``, ``ClientNotification``,
``ClientResponse``), so that a test cannot pass for a request protocol 2 does not have.
Every message received stays in ``received``, in order.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import jsonschema_rs

Message = dict[str, Any]
# Protocol 1's session updates that protocol 2 removed (the migration guide's table).
V1_ONLY_UPDATES = frozenset({"tool_call", "plan", "current_mode_update"})
# Protocol 1's agent->client methods that protocol 2 removed, and its client->agent ones.
V1_ONLY_CLIENT_METHODS = ("fs/", "terminal/")
V1_ONLY_AGENT_METHODS = frozenset({"session/load", "session/set_mode", "authenticate", "logout"})


def _refs(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            yield ref.removeprefix("#/$defs/")
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


class V2Schema:
    """The validators of one v2 schema file, one a ``$defs`` type, made when first used."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.schema = json.loads(path.read_text(encoding="utf-8"))
        self.defs: dict[str, Any] = self.schema["$defs"]
        self._validators: dict[str, Any] = {}

        def by_method(union: str, part: str) -> dict[str, str]:
            """{method: $defs name} of the types a union's ``params`` or ``result`` refers to."""
            found = {}
            for name in _refs(self.defs[union]):
                method = self.defs[name].get("x-method")
                if method is not None and _refs_within(self.defs[union], name, part):
                    found[method] = name
            return found

        # Agent -> client (what the client receives) and client -> agent (what it sends).
        self.agent_requests = by_method("AgentRequest", "params")
        self.agent_notifications = by_method("AgentNotification", "params")
        self.agent_results = by_method("AgentResponse", "result")
        self.client_requests = by_method("ClientRequest", "params")
        self.client_notifications = by_method("ClientNotification", "params")
        self.client_results = by_method("ClientResponse", "result")
        # {sessionUpdate: the $defs type of that variant}: an invalid update is checked
        # against its variant too, whose errors say more than "not valid under any of anyOf".
        self.update_types: dict[str, str] = {}
        for variant in self.defs["SessionUpdate"]["anyOf"]:
            kind = variant.get("properties", {}).get("sessionUpdate", {}).get("const")
            if kind is not None:
                (self.update_types[kind],) = _refs(variant.get("allOf", []))
        self.update_kinds = frozenset(self.update_types)

    def errors(self, name: str, instance: Any) -> list[str]:
        """What ``instance`` breaks of ``$defs[name]`` (nothing: it is valid)."""
        validator = self._validators.get(name)
        if validator is None:
            wrapped = {"$ref": f"#/$defs/{name}", "$defs": self.defs}
            validator = self._validators[name] = jsonschema_rs.validator_for(wrapped, validate_formats=True)
        return [
            f"{name} at /{'/'.join(map(str, e.instance_path))}: {e.message}" for e in validator.iter_errors(instance)
        ]


def _refs_within(union: Any, name: str, part: str) -> bool:
    """Whether ``union`` refers to ``name`` under a ``part`` property (params or result)."""
    if isinstance(union, dict):
        props = union.get("properties")
        if isinstance(props, dict) and part in props and name in set(_refs(props[part])):
            return True
        return any(_refs_within(value, name, part) for value in union.values())
    if isinstance(union, list):
        return any(_refs_within(value, name, part) for value in union)
    return False


class NotV2(AssertionError):
    """A message that protocol 2 does not allow."""


class V2Client:
    """``command`` run as an agent, spoken to in protocol 2 over stdio (``check=False``: any
    version, nothing checked).

    ``next()`` gives the next message received, checked; ``call()`` sends a request and
    gives its response and what came before it; requests from the agent that arrive
    meanwhile are answered by ``on_request`` (a function of the request that gives the
    result), and fail the call where there is none."""

    def __init__(
        self,
        command: list[str],
        schema: V2Schema | None,
        *,
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        check: bool = True,
    ) -> None:
        assert schema is not None or not check, "checking needs a schema"
        self.schema = schema
        self.check = check
        self.timeout = timeout
        self.proc = subprocess.Popen(
            command, cwd=cwd, env=None if env is None else dict(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.inbox: queue.Queue[bytes | None] = queue.Queue()
        self.received: list[Message] = []
        self.sent: list[Message] = []
        self.pending: dict[Any, str] = {}  # request id -> method, for the responses
        self.agent_requests: dict[Any, str] = {}  # the agent's request id -> method, for our answers
        self.ids = iter(range(1, 1_000_000))
        self.on_request: Callable[[Message], Any] | None = None
        self.batches = False  # whether an array (a batch's answer) may arrive
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip():
                self.inbox.put(line)
        self.inbox.put(None)

    # -- checks ------------------------------------------------------------------------------

    def check_received(self, message: Any) -> None:
        """Raise ``NotV2`` naming what ``message`` (from the agent) breaks of protocol 2."""
        problems = self.problems_received(message) if self.check else []
        if problems:
            raise NotV2(f"not protocol 2: {json.dumps(message)[:2000]}\n" + "\n".join(problems))

    def problems_received(self, message: Any) -> list[str]:
        s = self.schema
        assert s is not None
        if isinstance(message, list) and self.batches:
            return self._batch_problems(message)
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return ["not a JSON-RPC 2.0 object (a batch is not expected here)"]
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params", {})
            if "id" in message:
                if method.startswith("_"):
                    return []
                if method.startswith(V1_ONLY_CLIENT_METHODS) or method not in s.agent_requests:
                    return [f"protocol 2 has no agent request {method!r}"]
                return s.errors(s.agent_requests[method], params)
            if method.startswith(("_", "$/")):
                return []
            if method not in s.agent_notifications:
                return [f"protocol 2 has no agent notification {method!r}"]
            problems = s.errors(s.agent_notifications[method], params)
            if method == "session/update" and isinstance(params, dict) and isinstance(params.get("update"), dict):
                problems += self._update_problems(params["update"], bool(problems))
            return problems
        if "id" not in message:
            return ["neither a request, a notification nor a response"]
        if ("result" in message) == ("error" in message):
            return ["a response holds exactly one of result and error"]
        if "error" in message:
            return s.errors("Error", message["error"])
        asked = self.pending.get(message["id"])
        if asked is None:
            return [f"a response to no request of the client (id {message['id']!r})"]
        if asked not in s.agent_results:
            return [f"a result to {asked!r}, which protocol 2 does not have"]
        return s.errors(s.agent_results[asked], message["result"])

    def _batch_problems(self, answers: list[Any]) -> list[str]:
        """A batch's answer: a non-empty array of responses, each valid."""
        if not answers:
            return ["an empty array (a batch is answered with its responses, or not at all)"]
        problems = []
        for answer in answers:
            is_call = isinstance(answer, dict) and "method" in answer
            problems += ["a batch's answer holds a request"] if is_call else self.problems_received(answer)
        return problems

    def _update_problems(self, update: dict[str, Any], invalid: bool) -> list[str]:
        """What a session update breaks beyond its notification's schema: a kind protocol 2
        does not have; where it is invalid, its own variant's errors."""
        s = self.schema
        assert s is not None
        kind = update.get("sessionUpdate")
        problems = s.errors(s.update_types[kind], update) if invalid and kind in s.update_types else []
        if kind in V1_ONLY_UPDATES or (
            isinstance(kind, str) and not kind.startswith("_") and kind not in s.update_kinds
        ):
            problems.append(f"session/update {kind!r} is not one of protocol 2's")
        return problems

    def _check_sent(self, message: Message) -> None:
        s = self.schema
        if not self.check or s is None:
            return
        method = message.get("method")
        if method is None:
            name = s.client_results.get(self.agent_requests.get(message["id"], ""))
            problems = s.errors(name, message["result"]) if name and "result" in message else []
        elif method.startswith("_") or method not in (s.client_requests if "id" in message else s.client_notifications):
            problems = []  # (extension methods, and unknown methods the tests send on purpose)
        else:
            names = s.client_requests if "id" in message else s.client_notifications
            problems = s.errors(names[method], message.get("params", {}))
        assert not problems, f"the test's client sent what protocol 2 does not allow: {message}\n{problems}"

    # -- talking -----------------------------------------------------------------------------

    def write(self, message: Message) -> None:
        self._check_sent(message)
        self.sent.append(message)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def send(self, method: str, params: Any) -> int:
        request_id = next(self.ids)
        self.pending[request_id] = method
        self.write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def notify(self, method: str, params: Any) -> None:
        self.write({"jsonrpc": "2.0", "method": method, "params": params})

    def answer(self, request: Message, result: Any) -> None:
        self.write({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def next(self, timeout: float | None = None) -> Message:
        """The next message received, checked against protocol 2."""
        try:
            line = self.inbox.get(timeout=self.timeout if timeout is None else timeout)
        except queue.Empty:
            raise AssertionError(f"nothing received in {timeout or self.timeout} s") from None
        if line is None:
            self.inbox.put(None)  # (every later call sees the end too)
            raise AssertionError(f"the agent closed its output (exit status {self.proc.poll()})")
        message = json.loads(line)
        self.received.append(message)
        self.check_received(message)
        if isinstance(message, dict) and "method" in message and "id" in message:
            self.agent_requests[message["id"]] = message["method"]
        return message

    def until(self, done: Callable[[Message], bool], timeout: float | None = None) -> list[Message]:
        """The messages received up to and including the first that ``done`` accepts; the
        agent's requests meanwhile go to ``on_request``."""
        got = []
        while True:
            message = self.next(timeout)
            got.append(message)
            if done(message):
                return got
            if "method" in message and "id" in message:
                assert self.on_request is not None, f"an agent request the test did not expect: {message}"
                self.answer(message, self.on_request(message))

    def gather(self, seconds: float) -> list[Message]:
        """The messages received in the next ``seconds`` (the agent's requests go to
        ``on_request``)."""
        got: list[Message] = []
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                got += self.until(lambda m: True, timeout=left)
            except AssertionError as quiet:
                if "nothing received" not in str(quiet):
                    raise
                break
            if "method" in got[-1] and "id" in got[-1]:
                assert self.on_request is not None, f"an agent request the test did not expect: {got[-1]}"
                self.answer(got[-1], self.on_request(got[-1]))
        return got

    def call(self, method: str, params: Any, timeout: float | None = None) -> tuple[Message, list[Message]]:
        """Send a request: its response, and the messages received before it."""
        request_id = self.send(method, params)
        got = self.until(lambda m: is_response(m, request_id), timeout)
        return got[-1], got[:-1]

    def result(self, method: str, params: Any, timeout: float | None = None) -> Any:
        """The result of a request that must succeed."""
        response, _ = self.call(method, params, timeout)
        assert "result" in response, f"{method} failed: {response}"
        return response["result"]

    def initialize(self) -> Message:
        return self.result(
            "initialize",
            {
                "protocolVersion": 2,
                "info": {"name": "bridge-test", "title": "Bridge test", "version": "1"},
                "capabilities": {},
            },
        )

    def close(self, timeout: float = 30.0) -> int:
        """End the input, wait for the exit, and check what was left unread."""
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout)
        while True:
            try:
                line = self.inbox.get(timeout=5)
            except queue.Empty:
                break
            if line is None:
                break
            message = json.loads(line)
            self.received.append(message)
            self.check_received(message)
        return code

    def __enter__(self) -> V2Client:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            try:
                self.close()
            except (subprocess.TimeoutExpired, AssertionError):
                self.proc.kill()
                self.proc.wait()
                if exc[0] is None:
                    raise


def is_response(message: Message, request_id: Any) -> bool:
    return message.get("id") == request_id and "method" not in message


def update_of(message: Message, kind: str | None = None) -> dict[str, Any] | None:
    """The ``update`` of a ``session/update`` (of that ``sessionUpdate`` kind), else None."""
    if message.get("method") != "session/update":
        return None
    update = message.get("params", {}).get("update")
    if not isinstance(update, dict) or (kind is not None and update.get("sessionUpdate") != kind):
        return None
    return update


def is_state(message: Message, state: str) -> bool:
    update = update_of(message, "state_update")
    return update is not None and update.get("state") == state


def new_session(client: V2Client, cwd: Path) -> tuple[str, dict[str, Any]]:
    """``session/new`` in ``cwd``: the session's id and the result."""
    result = client.result("session/new", {"cwd": str(cwd)})
    return result["sessionId"], result


def mode_option(result: dict[str, Any]) -> dict[str, Any]:
    """The config option of category ``mode`` (a v1 agent's modes, as the bridge shows them)."""
    (option,) = [o for o in result.get("configOptions", []) if o.get("category") == "mode"]
    return option


def allow(request: Message) -> dict[str, Any]:
    """The answer to a permission request: the option ``allow``."""
    assert request["method"] == "session/request_permission", request
    return {"outcome": {"outcome": "selected", "optionId": "allow"}}


def kinds(messages: list[Message]) -> list[str]:
    """The ``sessionUpdate`` of each update (``state_update:<state>``), and the methods and
    ``response`` of the others: what a failing assertion shows."""
    shown = []
    for m in messages:
        update = update_of(m)
        if update is not None:
            kind = update.get("sessionUpdate")
            shown.append(f"{kind}:{update.get('state')}" if kind == "state_update" else str(kind))
        else:
            shown.append(m.get("method", "response"))
    return shown


def archive_and_unarchive(client: V2Client, sid: str, cwd: Path) -> None:
    """The session archived, listed as archived only, unarchived, listed again; then an
    unknown method, -32601."""
    assert client.result("session/archive", {"sessionId": sid}) == {}
    only = client.result("session/list", {"cwd": str(cwd), "archived": "only"})["sessions"]
    assert [(s["sessionId"], s["archived"]) for s in only] == [(sid, True)], only
    assert client.result("session/list", {"cwd": str(cwd)})["sessions"] == []
    assert client.result("session/unarchive", {"sessionId": sid}) == {}
    listed = client.result("session/list", {"cwd": str(cwd), "archived": "exclude"})["sessions"]
    assert [(s["sessionId"], s["archived"]) for s in listed] == [(sid, False)], listed
    unknown = client.call("foo/bar", {})[0]
    assert unknown["error"]["code"] == -32601, unknown
