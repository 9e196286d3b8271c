"""A seeded fuzzer of the polyfill's version bridge, in front of a real protocol 1 agent (on
the official Python SDK 0.12.1, ``tests/agents/sdk_turn_agent.py``): hundreds of protocol 2
messages built from upstream's 2026-11 schema (``support.upstream_messages``' generator),
the same broken one thing at a time, and garbage (unparsable lines, values that are no
request, batches of all of these). Whatever comes:

- every request is answered exactly once (a batch's requests in one array), and each thing
  JSON-RPC answers without an id (a line that is no JSON, a value that is no request) gets
  one answer with a null id;
- every message the client receives is valid protocol 2 (``support.acp_v2``, which checks
  against the 2026-11 schema);
- the agent is alive at the end: a prompt still makes a whole turn.

Bounded: ``COUNT`` items from the seed, the whole run within ``BUDGET_S``. ``ACP_FUZZ_SEED``
picks another seed (a failure names the one it ran with).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import ROOT, SHARED_UPSTREAM, fresh_venv, processes_naming
from support.acp_v2 import Message, V2Client, V2Schema, is_state
from support.reference_data import require
from support.upstream_messages import RandomChooser, generator

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the processes left from /proc"),
]

AGENT = ROOT / "tests" / "agents" / "sdk_turn_agent.py"
SDK_PIN = "agent-client-protocol==0.12.1"
V2_SCHEMA = SHARED_UPSTREAM / "2026-11" / "v2" / "schema.unstable.json"
SEED = int(os.environ.get("ACP_FUZZ_SEED", "6501"))
COUNT = 400
BUDGET_S = 150.0
# How long the client waits, after the last item, for the answers still due.
SETTLE_S = 30.0
NO_ANSWER = object()


@pytest.fixture(scope="module")
def agent_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        return fresh_venv(tmp_path_factory.mktemp("fuzz-sdk") / "venv", SDK_PIN) / "python"
    except AssertionError as failed:
        pytest.skip(f"cannot install {SDK_PIN}: {str(failed)[-300:]}")


class Fuzz:
    """What the fuzzer sends, and what it must get back for it."""

    def __init__(self, rng: random.Random, schema: V2Schema, sid: str) -> None:
        self.rng, self.schema, self.sid = rng, schema, sid
        self.choose = RandomChooser(rng)
        self.generator = generator(V2_SCHEMA)
        self.numbers = iter(range(1000, 10**9))
        self.calls = sorted(
            [(m, t, True) for m, t in schema.client_requests.items()]
            + [(m, t, False) for m, t in schema.client_notifications.items()]
        )

    def valid(self) -> Message:
        """A protocol 2 request or notification of the client's, valid against the schema;
        its session, most of the time, the one the client has open."""
        while True:
            method, name, request = self.rng.choice(self.calls)
            if method == "initialize":
                continue  # (it would start the connection over)
            params = self.generator.value(name, self.choose)
            if self.schema.errors(name, params):  # (formats too: a uri is one)
                continue
            if isinstance(params, dict) and "sessionId" in params and self.rng.random() < 0.7:
                params["sessionId"] = self.sid
            if method == "session/close" and params.get("sessionId") == self.sid:
                continue  # (the session stays open: the turns keep coming)
            message: Message = {"jsonrpc": "2.0", "method": method, "params": params}
            if request:
                message = {"jsonrpc": "2.0", "id": self.request_id(), "method": method, "params": params}
            return message

    def request_id(self) -> Any:
        number = next(self.numbers)
        return number if self.rng.random() < 0.8 else f"fuzz-{number}"

    def broken(self) -> Any:
        """A valid message with one thing broken."""
        message = self.valid()
        params = message.get("params")
        how = self.rng.randrange(9)
        if how == 0 and isinstance(params, dict) and params:
            del params[self.rng.choice(sorted(params))]
        elif how == 1 and isinstance(params, dict) and params:
            params[self.rng.choice(sorted(params))] = self.rng.choice([12345, [], "x", None, {"a": []}, True])
        elif how == 2:
            message["params"] = self.rng.choice([[], "params", 5, [1, 2]])
        elif how == 3:
            message["method"] = self.rng.choice([7, None, ["session/prompt"], f"fuzz/{self.rng.randrange(99)}"])
        elif how == 4 and "id" in message:
            message["id"] = self.rng.choice([{"a": 1}, [1], True, False])
        elif how == 5:
            message.pop("jsonrpc")
        elif how == 6:
            message["jsonrpc"] = self.rng.choice(["1.0", 2, None])
        elif how == 7 and isinstance(params, dict):
            params["sessionId"] = f"unknown-{self.rng.randrange(99)}"
        else:
            message[f"_fuzz{self.rng.randrange(9)}"] = "an unknown member"
        return message

    def garbage(self) -> bytes:
        """A line that is no JSON, or a JSON value that is no request."""
        how = self.rng.randrange(6)
        if how == 0:
            return bytes(self.rng.randrange(32, 127) for _ in range(self.rng.randrange(1, 40)))
        if how == 1:
            text = json.dumps(self.valid())
            return text[: self.rng.randrange(1, len(text))].encode()
        if how == 2:
            return json.dumps(self.rng.choice(["hi", 5, None, True, 1.5, {}])).encode()
        if how == 3:
            return b"[]"
        if how == 4:
            return b"[" * 60 + b"]" * 60
        return json.dumps([self.entry() for _ in range(self.rng.randrange(1, 6))]).encode()

    def entry(self) -> Any:
        """One entry of a batch."""
        kind = self.rng.randrange(4)
        if kind == 0:
            return self.valid()
        if kind == 1:
            return self.broken()
        return self.rng.choice([5, "entry", None, [], {"jsonrpc": "2.0"}])

    def items(self, count: int) -> Iterator[Any]:
        for _ in range(count):
            kind = self.rng.randrange(10)
            if kind < 4:
                yield self.valid()
            elif kind < 7:
                yield self.broken()
            else:
                yield self.garbage()


def valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, (str, int, float)) and not isinstance(value, bool))


def answer_id(message: Any) -> Any:
    """The id JSON-RPC 2.0 answers a decoded value with; NO_ANSWER for a valid notification."""
    if not isinstance(message, dict):
        return None
    if "id" in message and not valid_id(message["id"]):
        return None
    given = message.get("id")
    if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return given
    if message.get("params") is not None and not isinstance(message["params"], (dict, list)):
        return given
    return given if "id" in message else NO_ANSWER


def expected(line: bytes) -> tuple[list[Any], bool]:
    """The ids a line is answered with (None: a null id), and whether as an array."""
    if not line.strip():
        return [], False  # (no message at all)
    try:
        value = json.loads(line)
    except ValueError:
        return [None], False
    if isinstance(value, list):
        if not value:
            return [None], False
        ids = [i for i in map(answer_id, value) if i is not NO_ANSWER]
        return ids, bool(ids)
    found = answer_id(value)
    return ([] if found is NO_ANSWER else [found]), False


def allow(request: Message) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": "allow"}}


def test_the_bridge_answers_every_request_once_and_only_with_valid_protocol_2(
    agent_python: Path, tmp_path: Path
) -> None:
    schema = V2Schema(require(V2_SCHEMA))
    rng = random.Random(SEED)
    agent = [str(agent_python), str(AGENT), "--store", str(tmp_path / "sessions.json")]
    command = [
        sys.executable,
        "-m",
        "acp_codegen",
        "polyfill",
        "--store",
        str(tmp_path / "state.sqlite3"),
        "--",
        *agent,
    ]
    started = time.monotonic()
    with V2Client(command, schema, cwd=ROOT, timeout=30) as client:
        client.batches = True
        client.on_request = allow
        client.initialize()
        sid = client.result("session/new", {"cwd": str(tmp_path)})["sessionId"]
        fuzz = Fuzz(rng, schema, sid)
        due: dict[str, Any] = {}  # json of each id still to be answered -> the id
        nulls_due = arrays_due = 0
        answered: dict[str, int] = {}
        nulls = arrays = 0

        def take(message: Any) -> None:
            nonlocal nulls, arrays
            answers = message if isinstance(message, list) else [message]
            arrays += isinstance(message, list)
            for answer in answers:
                if not isinstance(answer, dict) or "method" in answer:
                    continue  # (the agent's requests: gather has answered them)
                if answer["id"] is None:
                    nulls += 1
                    continue
                key = json.dumps(answer["id"])
                answered[key] = answered.get(key, 0) + 1
                assert answered[key] == 1, f"answered twice: {answer} (seed {SEED})"
                assert key in due, f"an answer to nothing sent: {answer} (seed {SEED})"
                del due[key]

        for item in fuzz.items(COUNT):
            line = item if isinstance(item, bytes) else json.dumps(item).encode()
            ids, as_array = expected(line)
            for request_id in ids:
                if request_id is None:
                    nulls_due += 1
                else:
                    due[json.dumps(request_id)] = request_id
                    if isinstance(item, dict) and "method" in item and isinstance(item["method"], str):
                        client.pending[request_id] = item["method"]
            arrays_due += as_array
            for entry in json.loads(line) if as_array else []:
                if isinstance(entry, dict) and isinstance(entry.get("method"), str) and valid_id(entry.get("id", {})):
                    client.pending[entry["id"]] = entry["method"]
            assert client.proc.stdin is not None
            client.proc.stdin.write(line + b"\n")
            client.proc.stdin.flush()
            for message in client.gather(0.01):
                take(message)
            assert time.monotonic() - started < BUDGET_S, f"over the fuzzer's budget (seed {SEED})"

        deadline = time.monotonic() + SETTLE_S
        while (due or nulls < nulls_due) and time.monotonic() < deadline:
            for message in client.gather(0.5):
                take(message)
        assert not due, f"never answered: {sorted(due)[:10]} of {len(due)} (seed {SEED})"
        assert (nulls, arrays) == (nulls_due, arrays_due), f"seed {SEED}"
        assert arrays > 0 and nulls > 20, (arrays, nulls)  # (the run did send both)

        # The agent is alive, and the session serves a whole turn.
        sid = client.result("session/new", {"cwd": str(tmp_path)})["sessionId"]
        client.result("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "/turn"}]})
        turn = client.until(lambda m: isinstance(m, dict) and is_state(m, "idle"))
        assert turn[-1]["params"]["update"]["stopReason"] == "end_turn", f"seed {SEED}"
        assert client.close() == 0
    assert time.monotonic() - started < BUDGET_S + SETTLE_S + 30
    assert processes_naming(str(tmp_path)) == []
