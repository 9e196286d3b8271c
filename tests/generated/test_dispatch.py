"""Behaviour of the generated dispatch (``generated/v{1,2}/dispatch.py`` + ``_router.py``).

Every test runs against both protocol versions. Messages go through ``handle_message``
and, where the wire text matters, ``handle_json``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from acp_codegen.generate.pipeline import load_protocols
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

from generated import _runtime
from generated._runtime import (
    InternalError,
    InvalidParamsError,
    JsonRpcError,
    MethodNotFoundError,
    ResourceNotFoundError,
)

FEATURE = "unstable_session_archive"
VERSIONS = (1, 2)
ARCHIVE_METHODS = ("session/archive", "session/unarchive")
FILTER_VALUES = ("exclude", "include", "only")


@pytest.fixture(params=VERSIONS, ids=lambda v: f"v{v}")
def version(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture
def dispatch(version: int) -> ModuleType:
    return importlib.import_module(f"generated.v{version}.dispatch")


@pytest.fixture
def models(version: int) -> ModuleType:
    return importlib.import_module(f"generated.v{version}.models")


def _handler_class(dispatch: ModuleType, models: ModuleType) -> type:
    class Recording(dispatch.AgentHandler):  # type: ignore[name-defined,misc]
        """Records every call; ``behaviour[key]`` is an exception to raise or a value to return."""

        def __init__(self) -> None:
            self.calls: list[tuple[str, Any]] = []
            self.behaviour: dict[str, Any] = {}

        def _act(self, key: str, params: Any, default: Any) -> Any:
            self.calls.append((key, params))
            outcome = self.behaviour.get(key, default)
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome

        async def session_archive(self, params: Any) -> Any:
            return self._act("session_archive", params, models.ArchiveSessionResponse())

        async def session_unarchive(self, params: Any) -> Any:
            return self._act("session_unarchive", params, models.UnarchiveSessionResponse())

        async def session_list(self, params: Any) -> Any:
            return self._act("session_list", params, models.ListSessionsResponse(sessions=[]))

    return Recording


@pytest.fixture
def handler(dispatch: ModuleType, models: ModuleType) -> Any:
    return _handler_class(dispatch, models)()


@pytest.fixture
def router(dispatch: ModuleType, handler: Any) -> Any:
    return dispatch.Router(handler, unstable_session_archive=True)


@pytest.fixture
def gated_router(dispatch: ModuleType, handler: Any) -> Any:
    return dispatch.Router(handler)


# One event loop for the module: asyncio.run per message would dominate the run time.
_loop = asyncio.new_event_loop()


@pytest.fixture(scope="module", autouse=True)
def _close_loop() -> Any:
    yield
    _loop.close()


def call(router: Any, message: Any) -> Any:
    return _loop.run_until_complete(router.handle_message(message))


def call_json(router: Any, text: str | bytes) -> Any:
    return _loop.run_until_complete(router.handle_json(text))


def request(method: str, params: Any = None, id_: Any = 1, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method, **extra}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    message = request(method, params)
    del message["id"]
    return message


def error_of(response: dict[str, Any] | None) -> dict[str, Any]:
    assert response is not None and "result" not in response, response
    assert response["jsonrpc"] == "2.0"
    return dict(response["error"])


def paths(error: dict[str, Any]) -> list[list[Any]]:
    return [e["path"] for e in error["data"]["errors"]]


# --- success -------------------------------------------------------------------------


@pytest.mark.parametrize("method", ARCHIVE_METHODS)
def test_archive_methods_answer_an_empty_result_and_get_validated_params(router: Any, handler: Any, method: str):
    response = call(router, request(method, {"sessionId": "sess_abc123"}, id_=7))
    assert response == {"jsonrpc": "2.0", "id": 7, "result": {}}
    ((key, params),) = handler.calls
    assert key == method.replace("/", "_")
    assert params.session_id == "sess_abc123"


def test_results_are_emitted_as_wire_json_without_unset_keys(router: Any, handler: Any, models: ModuleType):
    info = models.SessionInfo(session_id="s1", cwd="/home/u/p", archived=True)
    handler.behaviour["session_list"] = models.ListSessionsResponse(sessions=[info], next_cursor="c2")
    response = call(router, request("session/list", {}))
    assert response["result"] == {
        "sessions": [{"sessionId": "s1", "cwd": "/home/u/p", "archived": True}],
        "nextCursor": "c2",
    }


def test_unknown_params_properties_reach_the_handler(router: Any, handler: Any):
    call(router, request("session/archive", {"sessionId": "s", "vendorHint": {"x": 1}}))
    assert handler.calls[0][1].model_extra == {"vendorHint": {"x": 1}}


def test_handler_may_return_the_result_as_wire_data(router: Any, handler: Any):
    handler.behaviour["session_list"] = {"sessions": [], "nextCursor": "n"}
    assert call(router, request("session/list"))["result"] == {"sessions": [], "nextCursor": "n"}


def test_a_result_too_deep_to_serialise_is_an_internal_error(router: Any, handler: Any):
    deep: dict[str, Any] = {}
    for _ in range(400):
        deep = {"d": deep}
    handler.behaviour["session_list"] = {"sessions": [], "_meta": deep}
    answer = call(router, request("session/list"))
    assert answer["error"]["code"] == -32603 and "result" not in answer
    assert json.loads(call_json(router, json.dumps(request("session/list"))))["error"]["code"] == -32603


@pytest.mark.parametrize("params", [None, {}], ids=["omitted", "empty"])
def test_omitted_params_count_as_an_empty_object(router: Any, handler: Any, params: Any):
    message = request("session/list")
    if params is not None:
        message["params"] = params
    assert call(router, message)["result"] == {"sessions": []}
    message["params"] = None
    assert call(router, message)["result"] == {"sessions": []}


# --- ids -----------------------------------------------------------------------------

VALID_IDS = [0, 17, -3, 2**70, 1.5, "", "abc", "sess/ü\n\"'", None]
INVALID_IDS = [
    True,
    False,
    [],
    [1],
    {},
    {"a": 1},
    float("inf"),
    float("-inf"),
    float("nan"),
]  # the last three: no JSON numbers


@pytest.mark.parametrize("id_", VALID_IDS, ids=repr)
def test_every_valid_id_is_echoed_unchanged(router: Any, id_: Any):
    message = request("session/archive", {"sessionId": "s"}, id_=id_)
    assert call(router, message) == {"jsonrpc": "2.0", "id": id_, "result": {}}
    text = call_json(router, json.dumps(message))
    assert json.loads(text) == {"jsonrpc": "2.0", "id": id_, "result": {}}


@pytest.mark.parametrize("id_", VALID_IDS, ids=repr)
def test_errors_echo_the_id_too(router: Any, id_: Any):
    assert call(router, request("no/such", id_=id_))["id"] == id_


@pytest.mark.parametrize("id_", INVALID_IDS, ids=repr)
def test_an_id_that_is_not_string_number_or_null_is_an_invalid_request(router: Any, handler: Any, id_: Any):
    response = call(router, request("session/archive", {"sessionId": "s"}, id_=id_))
    assert response["id"] is None
    assert error_of(response)["code"] == _runtime.INVALID_REQUEST
    assert handler.calls == []


# --- notifications -------------------------------------------------------------------


def test_a_notification_runs_the_handler_and_gets_no_response(router: Any, handler: Any):
    assert call(router, notification("session/archive", {"sessionId": "s"})) is None
    assert call_json(router, json.dumps(notification("session/archive", {"sessionId": "s"}))) is None
    assert [key for key, _ in handler.calls] == ["session_archive", "session_archive"]


@pytest.mark.parametrize(
    "message, behaviour",
    [
        (notification("no/such"), None),
        (notification("session/archive", {}), None),
        (notification("session/archive", {"sessionId": "s"}), RuntimeError("boom")),
        (notification("session/archive", {"sessionId": "s"}), ResourceNotFoundError()),
        (notification("session/list", {"archived": "bogus"}), None),
    ],
    ids=["unknown-method", "invalid-params", "handler-crash", "handler-error", "bad-filter"],
)
def test_a_failing_notification_is_never_answered(router: Any, handler: Any, message: Any, behaviour: Any):
    if behaviour is not None:
        handler.behaviour["session_archive"] = behaviour
    assert call(router, message) is None


def test_a_gated_method_sent_as_notification_is_dropped(gated_router: Any, handler: Any):
    assert call(gated_router, notification("session/archive", {"sessionId": "s"})) is None
    assert handler.calls == []


# --- envelope ------------------------------------------------------------------------


@pytest.mark.parametrize("message", [[], [request("session/list")], "text", 3, None, True], ids=repr)
def test_a_message_that_is_not_an_object_is_an_invalid_request_with_null_id(router: Any, message: Any):
    response = call(router, message)
    assert response["id"] is None
    assert error_of(response)["code"] == _runtime.INVALID_REQUEST


@pytest.mark.parametrize(
    "change",
    [
        {"jsonrpc": "1.0"},
        {"jsonrpc": 2.0},
        {"jsonrpc": None},
        {"method": 5},
        {"method": None},
        {"params": "sessionId"},
        {"params": 3},
        {"params": True},
    ],
    ids=repr,
)
def test_a_malformed_request_is_an_invalid_request_that_keeps_its_id(router: Any, handler: Any, change: Any):
    message = {**request("session/archive", {"sessionId": "s"}, id_="r1"), **change}
    response = call(router, message)
    assert response["id"] == "r1"
    assert error_of(response)["code"] == _runtime.INVALID_REQUEST
    assert handler.calls == []


@pytest.mark.parametrize("drop", ["jsonrpc", "method"])
def test_a_request_missing_jsonrpc_or_method_is_invalid(router: Any, drop: str):
    message = request("session/archive", {"sessionId": "s"}, id_=4)
    del message[drop]
    assert error_of(call(router, message))["code"] == _runtime.INVALID_REQUEST


@pytest.mark.parametrize(
    "text",
    [
        "{bad",
        "",
        "   ",
        '{"jsonrpc": "2.0",',
        b"\xff\xfe{",
        "[" * 100_000,
        '{"jsonrpc": "2.0", "id": NaN, "method": "session/list"}',
        "Infinity",
    ],
    ids=repr,
)
def test_text_that_is_not_json_is_a_parse_error_with_null_id(router: Any, text: Any):
    response = json.loads(call_json(router, text))
    assert response == {"jsonrpc": "2.0", "id": None, "error": {"code": _runtime.PARSE_ERROR, "message": "Parse error"}}


def test_handle_json_answers_exactly_what_handle_message_answers(router: Any, handler: Any):
    handler.behaviour["session_unarchive"] = ResourceNotFoundError(data={"sessionId": "gone"})
    messages = [
        request("session/archive", {"sessionId": "s"}),
        request("session/unarchive", {"sessionId": "gone"}, id_="u"),
        request("session/list", {"archived": "maybe"}, id_=None),
        request("session/list", {"cwd": 5}),
        request("nope", id_=2.5),
        {"jsonrpc": "2.0", "id": [1], "method": "session/list"},
        ["not", "an", "object"],
    ]
    for message in messages:
        assert json.loads(call_json(router, json.dumps(message))) == call(router, message), message


def test_handle_json_accepts_bytes(router: Any):
    text = call_json(router, json.dumps(request("session/archive", {"sessionId": "s"})).encode())
    assert json.loads(text)["result"] == {}


# --- method not found and the runtime gate -------------------------------------------


@pytest.mark.parametrize("method", ["no/such", "session/update", "session/Archive", "", "initialize"])
def test_unknown_and_client_side_methods_are_method_not_found(router: Any, method: str):
    error = error_of(call(router, request(method, {})))
    assert error == {"code": -32601, "message": "Method not found", "data": {"method": method}}


def test_a_handler_that_overrides_nothing_answers_method_not_found_everywhere(dispatch: ModuleType):
    router = dispatch.Router(dispatch.AgentHandler(), unstable_session_archive=True)
    for method, params in [*((m, {"sessionId": "s"}) for m in ARCHIVE_METHODS), ("session/list", {})]:
        assert error_of(call(router, request(method, params)))["code"] == _runtime.METHOD_NOT_FOUND, method


@pytest.mark.parametrize("method", ARCHIVE_METHODS)
def test_gate_off_archive_methods_look_like_unknown_methods(gated_router: Any, handler: Any, method: str):
    gated = error_of(call(gated_router, request(method, {"sessionId": "s"})))
    unknown = error_of(call(gated_router, request("no/such", {"sessionId": "s"})))
    assert gated["code"] == unknown["code"] == _runtime.METHOD_NOT_FOUND
    assert gated["message"] == unknown["message"]
    assert handler.calls == []


def test_gate_decides_which_methods_are_routed(dispatch: ModuleType, handler: Any):
    on = dispatch.Router(handler, unstable_session_archive=True)
    off = dispatch.Router(handler, unstable_session_archive=False)
    assert on.methods == {"session/list", *ARCHIVE_METHODS}
    assert off.methods == {"session/list"}
    assert on.enabled_features == {FEATURE} and off.enabled_features == frozenset()


def test_routers_of_the_same_gate_share_their_validators_and_keep_their_handlers(
    dispatch: ModuleType, models: ModuleType
):
    # A server makes a router per connection: the validators are built once a process.
    first, second = (_handler_class(dispatch, models)() for _ in range(2))
    a, b = (dispatch.Router(h, unstable_session_archive=True) for h in (first, second))
    off = dispatch.Router(first)
    assert a._requests is b._requests and a._requests is not off._requests
    assert a._bound["session/list"].params is b._bound["session/list"].params
    call(b, request("session/list", {}))
    assert (first.calls, [key for key, _ in second.calls]) == ([], ["session_list"])


@pytest.mark.parametrize("value", [*FILTER_VALUES, "bogus"])
def test_gate_off_refuses_any_non_null_archived_filter(gated_router: Any, handler: Any, value: str):
    error = error_of(call(gated_router, request("session/list", {"archived": value})))
    assert error["code"] == _runtime.INVALID_PARAMS
    assert paths(error) == [["archived"]]
    assert handler.calls == []


@pytest.mark.parametrize("params", [{}, {"archived": None}, {"cwd": "/p", "archived": None}])
def test_gate_off_accepts_a_missing_or_null_archived_filter(gated_router: Any, handler: Any, params: Any):
    assert call(gated_router, request("session/list", params))["result"] == {"sessions": []}
    assert handler.calls[0][1].archived is None


# --- params validation ---------------------------------------------------------------


@pytest.mark.parametrize("value", FILTER_VALUES)
def test_every_known_archived_filter_reaches_the_handler(router: Any, handler: Any, value: str):
    assert "result" in call(router, request("session/list", {"archived": value, "cwd": "/p"}))
    assert handler.calls[0][1].archived == value


@pytest.mark.parametrize("value", ["bogus", "", "ONLY", "exclude ", "all"])
def test_an_unknown_archived_filter_is_invalid_params_not_the_default(router: Any, handler: Any, value: str):
    error = error_of(call(router, request("session/list", {"archived": value})))
    assert error["code"] == _runtime.INVALID_PARAMS
    assert paths(error) == [["archived"]]
    assert value in error["data"]["errors"][0]["message"] or value == ""
    assert handler.calls == []


def test_known_filter_values_come_from_the_schema_enum(dispatch: ModuleType, version: int):
    protocols, _ = load_protocols(ROOT / "schema", frozenset({FEATURE}), ROOT)
    (protocol,) = [p for p in protocols if p.version == version]
    expected = tuple((v.value, v.feature) for v in protocol.types["SessionArchiveFilter"].values)
    (field,) = dispatch.ROUTES["session/list"].enum_fields
    assert (field.path, field.values) == (("archived",), expected)


@pytest.mark.parametrize(
    "method, params, expected_paths",
    [
        ("session/archive", {}, [["sessionId"]]),
        ("session/archive", {"sessionId": 5}, [["sessionId"]]),
        ("session/archive", {"sessionId": None}, [["sessionId"]]),
        ("session/unarchive", {"sessionId": ["s"]}, [["sessionId"]]),
        ("session/list", {"cwd": 5, "cursor": {}}, [["cwd"], ["cursor"]]),
        ("session/list", {"archived": 5}, [["archived"]]),
        ("session/list", {"archived": ["only"]}, [["archived"]]),
        ("session/archive", [], [[]]),
        ("session/archive", ["sess_abc123"], [[]]),
    ],
)
def test_invalid_params_name_the_offending_wire_paths(
    router: Any, handler: Any, method: str, params: Any, expected_paths: Any
):
    error = error_of(call(router, request(method, params)))
    assert error["code"] == _runtime.INVALID_PARAMS and error["message"] == "Invalid params"
    assert paths(error) == expected_paths
    assert all(isinstance(e["message"], str) and e["message"] for e in error["data"]["errors"])
    assert handler.calls == []


def test_invalid_params_data_does_not_echo_the_input(router: Any):
    error = error_of(call(router, request("session/archive", {"sessionId": {"secret": "token-123"}})))
    assert "token-123" not in json.dumps(error)


# --- handler errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    "raised, expected",
    [
        (ResourceNotFoundError(), {"code": -32002, "message": "Resource not found"}),
        (
            ResourceNotFoundError("Unknown session", data={"sessionId": "s"}),
            {"code": -32002, "message": "Unknown session", "data": {"sessionId": "s"}},
        ),
        (
            InvalidParamsError(data={"why": "cursor"}),
            {"code": -32602, "message": "Invalid params", "data": {"why": "cursor"}},
        ),
        (MethodNotFoundError(), {"code": -32601, "message": "Method not found"}),
        (InternalError(), {"code": -32603, "message": "Internal error"}),
        (JsonRpcError(-32000, "Authentication required"), {"code": -32000, "message": "Authentication required"}),
        (JsonRpcError(-32099, "x", data=[1, 2]), {"code": -32099, "message": "x", "data": [1, 2]}),
    ],
    ids=repr,
)
def test_a_json_rpc_error_from_the_handler_is_sent_as_is(router: Any, handler: Any, raised: Any, expected: Any):
    handler.behaviour["session_archive"] = raised
    assert error_of(call(router, request("session/archive", {"sessionId": "s"}))) == expected


@pytest.mark.parametrize(
    "raised", [RuntimeError("secret /etc/passwd"), KeyError("secret"), ValueError("secret"), AssertionError("secret")]
)
def test_any_other_exception_is_an_internal_error_without_traceback(
    router: Any, handler: Any, raised: Exception, caplog: pytest.LogCaptureFixture
):
    handler.behaviour["session_archive"] = raised
    with caplog.at_level(logging.ERROR):
        text = call_json(router, json.dumps(request("session/archive", {"sessionId": "s"})))
    assert json.loads(text)["error"] == {"code": -32603, "message": "Internal error"}
    assert "secret" not in text and "Traceback" not in text and type(raised).__name__ not in text
    assert "secret" in caplog.text  # kept locally for the operator


def test_a_result_of_the_wrong_shape_is_an_internal_error(router: Any, handler: Any):
    handler.behaviour["session_list"] = {"sessions": "not a list"}
    assert error_of(call(router, request("session/list")))["code"] == _runtime.INTERNAL_ERROR


def test_cancellation_is_not_turned_into_an_error_response(router: Any, handler: Any):
    handler.behaviour["session_archive"] = asyncio.CancelledError()
    with pytest.raises(asyncio.CancelledError):
        call(router, request("session/archive", {"sessionId": "s"}))


def test_requests_are_handled_concurrently(dispatch: ModuleType, models: ModuleType):
    started: list[str] = []
    release = asyncio.Event()

    class Slow(dispatch.AgentHandler):  # type: ignore[name-defined,misc]
        async def session_archive(self, params: Any) -> Any:
            started.append(params.session_id)
            await release.wait()
            return models.ArchiveSessionResponse()

    async def scenario() -> list[Any]:
        router = dispatch.Router(Slow(), unstable_session_archive=True)
        tasks = [
            asyncio.create_task(router.handle_message(request("session/archive", {"sessionId": s}, id_=s)))
            for s in "ab"
        ]
        while len(started) < 2:
            await asyncio.sleep(0)
        release.set()
        return list(await asyncio.gather(*tasks))

    assert [r["id"] for r in asyncio.run(scenario())] == ["a", "b"]


# --- shared error types --------------------------------------------------------------


@pytest.mark.parametrize(
    "cls, code",
    [
        (_runtime.ParseError, -32700),
        (_runtime.InvalidRequestError, -32600),
        (MethodNotFoundError, -32601),
        (InvalidParamsError, -32602),
        (InternalError, -32603),
        (ResourceNotFoundError, -32002),
    ],
)
def test_error_classes_carry_their_json_rpc_codes(cls: type[JsonRpcError], code: int):
    error = cls()
    assert isinstance(error, JsonRpcError) and isinstance(error, Exception)
    assert error.code == code and error.data is None
    assert error.to_error() == {"code": code, "message": error.message}
    assert cls("custom", data={"k": 1}).to_error() == {"code": code, "message": "custom", "data": {"k": 1}}


# --- any input -----------------------------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_envelope = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0"]) | _json,
        "id": _json,
        "method": st.sampled_from(["session/archive", "session/unarchive", "session/list", "session/update"]) | _json,
        "params": st.fixed_dictionaries(
            {},
            optional={
                "sessionId": st.text(max_size=8) | _json,
                "archived": st.sampled_from([*FILTER_VALUES, "bogus", None]) | _json,
                "cwd": st.text(max_size=8) | _json,
                "cursor": st.text(max_size=8) | _json,
            },
        )
        | _json,
    },
)
_KNOWN_CODES = {-32700, -32600, -32601, -32602, -32603, -32002}


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(message=_envelope | _json, gate=st.booleans())
def test_any_message_gets_one_well_formed_answer_or_none_for_a_notification(
    dispatch: ModuleType, models: ModuleType, message: Any, gate: bool
):
    router = dispatch.Router(_handler_class(dispatch, models)(), unstable_session_archive=gate)
    response = call(router, message)
    text = call_json(router, json.dumps(message))
    if response is None:
        # Only a well-formed notification goes unanswered.
        assert isinstance(message, dict) and "id" not in message and isinstance(message.get("method"), str)
        assert text is None
        return
    assert json.loads(text) == response
    assert response["jsonrpc"] == "2.0" and len(response) == 3
    assert ("result" in response) != ("error" in response)
    if "error" in response:
        assert response["error"]["code"] in _KNOWN_CODES
        assert isinstance(response["error"]["message"], str)
    id_ok = isinstance(message, dict) and (
        message.get("id") is None
        or (isinstance(message["id"], (str, int, float)) and not isinstance(message["id"], bool))
    )
    assert response["id"] == (message.get("id") if id_ok else None)


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: f"v{v}")
def test_error_codes_and_messages_match_upstream_error_code(upstream: Path, version: int):
    schema = json.loads((upstream / f"v{version}" / "schema.json").read_text(encoding="utf-8"))
    titles = {v["const"]: v.get("title") for v in schema["$defs"]["ErrorCode"]["anyOf"] if "const" in v}
    for cls in (
        _runtime.ParseError,
        _runtime.InvalidRequestError,
        MethodNotFoundError,
        InvalidParamsError,
        InternalError,
        ResourceNotFoundError,
    ):
        error = cls()
        assert titles.get(error.code) == error.message, cls.__name__
