"""The reference agent against hostile input: oversized lines, JSON that cannot be echoed
back, ids and params of the wrong shape, and a hypothesis fuzz of its stdio loop.

The regressions drive a spawned agent (``python -m examples.archive_agent``) over real
pipes, whose every output line the client checks is strict JSON; the fuzz runs the same
``serve`` loop and agent in-process, with a small line bound so that oversized lines
are cheap.
"""

from __future__ import annotations

import asyncio
import io
import json
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_archive_agent import Agent, strict_json

from examples.archive_agent.agent import ArchiveAgent
from examples.archive_agent.stdio import MAX_LINE, Peer, read_lines, serve
from examples.archive_agent.store import Store


@pytest.fixture(scope="module", params=[1, 2], ids=["v1", "v2"])
def agent(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    running = Agent(tmp_path_factory.mktemp(f"hostile-v{request.param}") / "agent.sqlite3", request.param)
    yield running
    running.close()


@pytest.fixture
def cwd() -> str:
    return f"/work/hostile-{uuid.uuid4().hex[:12]}"


def _errors_until_answered(agent: Agent, start: int, request_id: int) -> list[dict[str, Any]]:
    """The messages from ``start`` up to the response to ``request_id`` (which the agent
    answers only after everything sent before it)."""
    end = agent.response_index(request_id)
    return agent.log[start:end]


# -- 1. an oversized line is refused once, as a whole --------------------------------------


@pytest.mark.parametrize("mib", [20, 40])
def test_an_oversized_line_is_refused_once_and_nothing_in_it_runs(agent: Agent, cwd: str, mib: int) -> None:
    sid = agent.new_session(cwd)
    start = len(agent.log)
    smuggled = json.dumps({"jsonrpc": "2.0", "id": 4242, "method": "session/archive", "params": {"sessionId": sid}})
    agent.send_raw(b" " * (mib * 1024 * 1024) + smuggled.encode())
    sentinel = agent.send("session/list", {"cwd": cwd, "archived": "include"})

    before = _errors_until_answered(agent, start, sentinel)
    assert before == [
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "Invalid request",
                "data": {"reason": f"message longer than {MAX_LINE} bytes"},
            },
        }
    ]
    assert [s["archived"] for s in agent.result(sentinel)["sessions"]] == [False]
    assert all(m.get("id") != 4242 for m in agent.log)
    # The session is still usable on this connection: the archive never ran.
    assert agent.prompt(sid, "still here") == (["echo #1: still here"], "end_turn")


def test_a_line_at_the_bound_is_read(agent: Agent, cwd: str) -> None:
    request = json.dumps({"jsonrpc": "2.0", "id": "at-bound", "method": "session/new", "params": {"cwd": cwd}})
    agent.send_raw(request.encode() + b" " * (MAX_LINE - len(request)))
    agent.wait_for(lambda m: m.get("id") == "at-bound" and "result" in m)


# -- 2, 3. input that could not be written back as JSON ---------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","id":"\\ud800","method":"session/list"}',
        '{"jsonrpc":"2.0","id":"x\\udfffy","method":"session/new","params":{"cwd":"/work/surrogate"}}',
        '{"jsonrpc":"2.0","id":7,"method":"session/\\ud800new","params":{"cwd":"/work/surrogate"}}',
        '{"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":"/work/surrogate\\ud83d"}}',
        '{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"\\udc00":1,"cwd":"/work/surrogate"}}',
        '{"jsonrpc":"2.0","id":1e400,"method":"session/list"}',
        '{"jsonrpc":"2.0","id":-1e400,"method":"session/new","params":{"cwd":"/work/surrogate"}}',
        '{"jsonrpc":"2.0","id":10,"method":"session/new","params":{"cwd":"/work/surrogate","n":1e999}}',
        b'{"jsonrpc":"2.0","id":11,"method":"session/new","params":{"cwd":"/work/\xed\xa0\x80"}}',
        b'{"jsonrpc":"2.0","id":12,"method":"session/new","params":{"cwd":"/work/\xff"}}',
    ],
    ids=[
        "lone-surrogate-id",
        "lone-low-surrogate-id",
        "surrogate-in-method",
        "surrogate-in-params",
        "surrogate-in-key",
        "id-1e400",
        "id-minus-1e400",
        "1e999-in-params",
        "raw-surrogate-bytes",
        "not-utf8",
    ],
)
def test_what_cannot_be_echoed_as_json_is_a_parse_error_and_runs_nothing(agent: Agent, line: str | bytes) -> None:
    start = len(agent.log)
    agent.send_raw(line)
    sentinel = agent.send("session/list", {"cwd": "/work/surrogate", "archived": "include"})
    assert _errors_until_answered(agent, start, sentinel) == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    ]
    assert agent.result(sentinel)["sessions"] == [], "nothing in the refused message may run"
    assert agent.proc.poll() is None


def test_surrogate_pairs_are_ordinary_text(agent: Agent) -> None:
    cwd = f"/work/\\ud83d\\ude00-{uuid.uuid4().hex[:8]}"  # an escaped pair: one emoji
    agent.send_raw(f'{{"jsonrpc":"2.0","id":"\\ud83d\\ude00","method":"session/new","params":{{"cwd":"{cwd}"}}}}')
    index = agent.wait_for(lambda m: m.get("id") == "\U0001f600")
    sid = agent.log[index]["result"]["sessionId"]
    listed = agent.request("session/list", {"cwd": json.loads(f'"{cwd}"')})["sessions"]
    assert [(s["sessionId"], s["cwd"]) for s in listed] == [(sid, json.loads(f'"{cwd}"'))]


# -- 4. one rule for ids and params, routed and agent methods alike ----------------------------

METHODS = {
    "session/new": {"cwd": "/work/bad-ids", "mcpServers": []},
    "session/list": {"cwd": "/work/bad-ids"},
    "session/archive": {"sessionId": "sess_unknown"},
    "session/prompt": {"sessionId": "sess_unknown", "prompt": []},
    "initialize": {"protocolVersion": 1},
}


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("bad_id", ['{"a":1}', "[1]", "true", "false", "{}"])
def test_an_invalid_id_is_invalid_request_with_a_null_id_and_nothing_runs(
    agent: Agent, method: str, bad_id: str
) -> None:
    start = len(agent.log)
    agent.send_raw(f'{{"jsonrpc":"2.0","id":{bad_id},"method":"{method}","params":{json.dumps(METHODS[method])}}}')
    sentinel = agent.send("session/list", {"cwd": "/work/bad-ids", "archived": "include"})
    (error,) = _errors_until_answered(agent, start, sentinel)
    assert error["id"] is None and error["error"]["code"] == -32600
    assert agent.result(sentinel)["sessions"] == []


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize(("params", "code"), [("[]", -32602), ('["/work"]', -32602), ("5", -32600), ('"x"', -32600)])
def test_params_of_the_wrong_shape_get_the_same_code_from_every_method(
    agent: Agent, method: str, params: str, code: int
) -> None:
    request_id = uuid.uuid4().hex
    agent.send_raw(f'{{"jsonrpc":"2.0","id":"{request_id}","method":"{method}","params":{params}}}')
    assert agent.log[agent.wait_for(lambda m: m.get("id") == request_id)]["error"]["code"] == code


def test_initialize_wants_an_integer_protocol_version(tmp_path: Path) -> None:
    agent = Agent(tmp_path / "agent.sqlite3", 1, initialize=False)
    try:
        for n, version in enumerate(['"1"', "true", "1.0", "1.5", "-1", "65536", "null", "[1]"]):
            agent.send_raw(
                f'{{"jsonrpc":"2.0","id":"v{n}","method":"initialize","params":{{"protocolVersion":{version}}}}}'
            )
            response = agent.log[agent.wait_for(lambda m, n=n: m.get("id") == f"v{n}")]  # type: ignore[misc]
            assert response["error"]["code"] == -32602, version
        # Nothing was agreed: the other methods still want initialize first.
        assert agent.error("session/new", {"cwd": "/work", "mcpServers": []}).code == -32600
        agent.initialize()
    finally:
        agent.close()


def test_float_and_string_ids_are_echoed_exactly(agent: Agent) -> None:
    for raw, expected in (("1.5", 1.5), ("-0", 0), ('"é\\n"', "é\n"), ("12345678901234567890", 12345678901234567890)):
        start = len(agent.log)
        agent.send_raw(f'{{"jsonrpc":"2.0","id":{raw},"method":"session/list","params":{{"cwd":"/work/ids"}}}}')
        response = agent.log[agent.wait_for(lambda m: "id" in m and "method" not in m, start)]
        assert response["id"] == expected and type(response["id"]) is type(expected) and "result" in response


# -- the line reader, in-process --------------------------------------------------------------


def _fed_reader(data: bytes, chunks: list[int]) -> asyncio.StreamReader:
    """A stream that hands ``data`` over in pieces of the given sizes, then the rest, then EOF
    (call inside a running event loop)."""
    reader = asyncio.StreamReader()
    at = 0
    for size in chunks:
        reader.feed_data(data[at : at + size])
        at += size
    reader.feed_data(data[at:])
    reader.feed_eof()
    return reader


def _lines(data: bytes, chunks: list[int], max_line: int) -> list[bytes | None]:
    async def run() -> list[bytes | None]:
        return [line async for line in read_lines(_fed_reader(data, chunks), max_line)]

    return asyncio.run(run())


@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=8),
    chunks=st.lists(st.integers(1, 30), max_size=10),
    final_newline=st.booleans(),
)
def test_read_lines_splits_at_newlines_only_and_refuses_long_lines_whole(
    lines: list[bytes], chunks: list[int], final_newline: bool
) -> None:
    max_line = 16
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    expected: list[bytes | None] = [None if len(line) > max_line else line for line in lines]
    if lines and not final_newline and lines[-1] == b"":
        expected.pop()  # no bytes after the last newline: no last line
    assert _lines(data, chunks, max_line) == expected


# -- the fuzz ---------------------------------------------------------------------------------

FUZZ_EXAMPLES = 400
FUZZ_MAX_LINE = 256  # the real bound is 16 MiB; the logic is the same, the examples cheaper

_json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
_json = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_methods = st.sampled_from(
    [
        "initialize",
        "session/new",
        "session/prompt",
        "session/cancel",
        "session/close",
        "session/delete",
        "session/resume",
        "session/load",
        "session/list",
        "session/archive",
        "session/unarchive",
    ]
) | st.text(max_size=12)


@st.composite
def _message(draw: st.DrawFn) -> dict[str, Any]:
    """A JSON object shaped more or less like a JSON-RPC request."""
    message: dict[str, Any] = {}
    if draw(st.booleans()):
        message["jsonrpc"] = draw(st.sampled_from(["2.0", "2.0", "1.0"]) | _json_scalars)
    if draw(st.booleans()):
        message["id"] = draw(_json)
    message["method"] = draw(_methods | _json_scalars)
    if draw(st.booleans()):
        message["params"] = draw(_json)
    return message


# One stream item: ("valid", request) answered with its id, ("long", request) padded
# past the bound (never answered), or ("noise", bytes) of any kind.
_item = st.one_of(
    st.tuples(st.just("valid"), st.sampled_from(["session/list", "session/new"])),
    st.tuples(st.just("long"), st.sampled_from(["session/list", "session/new"])),
    st.tuples(st.just("noise"), st.binary(max_size=300)),
    st.tuples(st.just("noise"), st.binary(min_size=FUZZ_MAX_LINE + 1, max_size=FUZZ_MAX_LINE * 3)),
    st.tuples(st.just("noise"), _message().map(lambda m: json.dumps(m).encode())),
    st.tuples(st.just("noise"), st.text(max_size=80).map(lambda t: t.encode("utf-8", "surrogatepass"))),
)


@pytest.fixture(scope="module")
def fuzz_store() -> Iterator[Store]:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "fuzz.sqlite3")
        yield store
        store.close()


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    protocol=st.sampled_from([1, 2]),
    items=st.lists(_item, max_size=15),
    chunks=st.lists(st.integers(1, 200), max_size=20),
)
def test_fuzz_the_stdio_loop_stays_up_and_answers_valid_requests_by_id(
    fuzz_store: Store, protocol: int, items: list[tuple[str, Any]], chunks: list[int]
) -> None:
    initialize = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": protocol}}
    expected: set[str] = {"init"}
    refused: set[str] = set()
    lines: list[bytes] = [json.dumps(initialize).encode()]
    for n, (kind, payload) in enumerate(items):
        if kind == "noise":
            lines.append(payload)
            continue
        request_id = f"fuzz-{n}"
        params = {"cwd": "/work/fuzz"} if payload == "session/new" else {"cwd": "/work/fuzz", "archived": "include"}
        text = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": payload, "params": params}).encode()
        if kind == "long":
            lines.append(b" " * (FUZZ_MAX_LINE - len(text) + 1) + text)  # just past the bound
            refused.add(request_id)
        else:
            lines.append(text)
            expected.add(request_id)
    data = b"\n".join(lines) + b"\n"

    out = io.BytesIO()

    async def run() -> None:
        agent = ArchiveAgent(fuzz_store, Peer(out), page_size=2)
        await serve(_fed_reader(data, chunks), agent.peer, agent.handle, max_line=FUZZ_MAX_LINE)
        await agent.shutdown()

    asyncio.run(run())

    answered: dict[Any, int] = {}
    for line in out.getvalue().splitlines():
        message = strict_json(line)  # every line is strict JSON
        assert message["jsonrpc"] == "2.0"
        if "method" in message:
            continue
        request_id = message["id"]
        assert request_id is None or type(request_id) in (str, int, float), "a JSON-RPC id, or null"
        if isinstance(request_id, str) and request_id in expected | refused:
            assert "result" in message, message
            answered[request_id] = answered.get(request_id, 0) + 1
    assert answered == dict.fromkeys(expected, 1), "each valid request answered once, by its id"
