"""The generated code under bad messages (hypothesis).

``Router.handle_message`` / ``handle_json`` of every protocol version, fed random JSON
values, message-shaped objects with ids of every JSON type, missing or wrong ``jsonrpc``,
huge strings and deep nesting, and handlers that succeed, fail or return garbage: the
answer is always ``None`` (for a notification) or one well-formed JSON-RPC response, and
no exception escapes. ``convert_message`` raises nothing but ``ConversionError``.

The tests address the generated modules by their contract (``generated.v<N>.dispatch.Router``
with ``AgentHandler`` and ``ROUTES``; ``generated.convert.convert_message``); each test is
skipped, with the reason, only when that module is not part of the generated package.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import math
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

VERSIONS = (1, 2)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _module(name: str) -> ModuleType:
    return pytest.importorskip(name, reason=f"{name} is not generated on this branch")


# --- strategies -----------------------------------------------------------------------------

HUGE = st.integers(100_000, 1_000_000).map(lambda n: "\u00e9" * n)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


def _deep(depth: int, leaf: Any, as_list: bool) -> Any:
    for _ in range(depth):
        leaf = [leaf] if as_list else {"sessionId": "s", "x": leaf}  # one child per level
    return leaf


DEEP = st.builds(_deep, st.integers(50, 5_000), SCALARS, st.booleans())
VALUES = JSON | HUGE | DEEP
IDS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=20)
    | JSON
    | HUGE
)

# Plausible params so that validation and handlers are reached, not only refused.
SESSION_ID = st.text(min_size=1, max_size=20) | HUGE
PARAMS = (
    st.fixed_dictionaries({"sessionId": SESSION_ID}, optional={"_meta": JSON, "extra": VALUES})
    | st.fixed_dictionaries(
        {},
        optional={
            "cwd": st.text(max_size=20) | VALUES,
            "cursor": st.text(max_size=20) | VALUES,
            "archived": st.sampled_from(["exclude", "include", "only", "all", None, ""]) | VALUES,
            "_meta": JSON,
        },
    )
    | VALUES
)


def messages(methods: list[str]) -> st.SearchStrategy[Any]:
    method = st.sampled_from(methods) | st.text(max_size=20) | JSON
    shaped = st.fixed_dictionaries(
        {},
        optional={
            "jsonrpc": st.just("2.0") | st.sampled_from(["1.0", "2", ""]) | JSON,
            "id": IDS,
            "method": method,
            "params": PARAMS,
            "result": JSON,
            "error": JSON,
        },
    )
    well_formed = st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "method": st.sampled_from(methods)},
        optional={"id": st.integers() | st.text(max_size=10), "params": PARAMS},
    )
    return well_formed | shaped | VALUES


def _dumps(message: Any) -> str:
    try:
        return json.dumps(message)
    except RecursionError:  # deeper than json can write: send the deepest text instead
        return "[" * 100_000


def _deep_text(depth: int, as_list: bool) -> str:
    params = "[" * depth + "]" * depth if as_list else '{"x":' * depth + "1" + "}" * depth
    return '{"jsonrpc":"2.0","id":7,"method":"session/list","params":' + params + "}"


DEEP_TEXT = st.builds(_deep_text, st.integers(50, 100_000), st.booleans())


# --- router ---------------------------------------------------------------------------------

ERROR_TYPES = (ValueError, KeyError, RuntimeError, TypeError, AssertionError, RecursionError, ZeroDivisionError)


def _handler(dispatch: ModuleType, behaviour: st.DataObject) -> Any:
    """An AgentHandler whose every method does what hypothesis draws: answer, fail, or
    return garbage; or the generated stub (method not found)."""
    handler = dispatch.AgentHandler()
    for route in dispatch.ROUTES.values():
        choice = behaviour.draw(st.sampled_from(["stub", "answer", "raise", "garbage"]), label=route.key)
        garbage = behaviour.draw(VALUES, label=f"{route.key} returns") if choice == "garbage" else None
        error = behaviour.draw(st.sampled_from(ERROR_TYPES), label=f"{route.key} raises")

        async def method(
            params: Any, route: Any = route, choice: str = choice, garbage: Any = garbage, error: Any = error
        ) -> Any:
            if choice == "answer":
                return None if route.result is None else route.result.model_construct()
            if choice == "raise":
                raise error("handler failed")
            return garbage

        if choice != "stub":
            setattr(handler, route.key, method)
    return handler


def _valid_id(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value))
    )


def check_response(message: Any, response: Any) -> None:
    if response is None:
        assert isinstance(message, dict) and "id" not in message, "only a notification goes unanswered"
        return
    assert isinstance(response, dict)
    json.dumps(response, allow_nan=False)  # wire JSON, nothing else
    assert response["jsonrpc"] == "2.0"
    assert set(response) in ({"jsonrpc", "id", "result"}, {"jsonrpc", "id", "error"})
    assert _valid_id(response["id"])
    if isinstance(message, dict) and "id" in message and response["id"] is not None:
        assert response["id"] == message["id"]
    if "error" in response:
        error = response["error"]
        assert isinstance(error, dict) and set(error) <= {"code", "message", "data"}
        assert type(error["code"]) is int and -32768 <= error["code"] <= -32000
        assert isinstance(error["message"], str) and error["message"]
        assert "Traceback" not in json.dumps(error)
    else:
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0" and "id" in message


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("gate", [False, True], ids=["gate-off", "gate-on"])
@FUZZ
@given(data=st.data())
def test_router_answers_every_message_with_one_well_formed_response(
    version: int, gate: bool, data: st.DataObject
) -> None:
    dispatch = _module(f"generated.v{version}.dispatch")
    router = dispatch.Router(_handler(dispatch, data), unstable_session_archive=gate)
    message = data.draw(messages(sorted(dispatch.ROUTES)), label="message")
    response = asyncio.run(router.handle_message(message))
    check_response(message, response)


@pytest.mark.parametrize("version", VERSIONS)
@FUZZ
@given(data=st.data())
def test_router_answers_every_text_with_one_well_formed_response(version: int, data: st.DataObject) -> None:
    dispatch = _module(f"generated.v{version}.dispatch")
    router = dispatch.Router(dispatch.AgentHandler(), unstable_session_archive=True)
    texts = messages(sorted(dispatch.ROUTES)).map(_dumps) | DEEP_TEXT | st.text(max_size=50) | st.binary(max_size=50)
    text = data.draw(texts, label="text")
    answer = asyncio.run(router.handle_json(text))
    if answer is None:
        check_response(json.loads(text), None)
        return
    response = json.loads(answer)
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):
        assert response["error"]["code"] == -32700 and response["id"] is None
        return
    check_response(decoded, response)


# --- conversions ----------------------------------------------------------------------------


@pytest.mark.parametrize(("source", "target"), [(1, 2), (2, 1), (1, 1), (2, 3)])
@FUZZ
@given(data=st.data())
def test_convert_message_raises_only_conversion_error(source: int, target: int, data: st.DataObject) -> None:
    convert = _module("generated.convert")
    methods = sorted({m.name for v in VERSIONS for m in importlib.import_module(f"generated.v{v}.methods").METHODS})
    message = data.draw(messages(methods), label="message")
    method = data.draw(st.none() | st.sampled_from(methods) | st.text(max_size=10) | JSON, label="method")
    try:
        out = convert.convert_message(message, source=source, target=target, method=method)
    except convert.ConversionError as exc:
        assert isinstance(exc, ValueError) and str(exc)
        return
    assert isinstance(out, dict)
    json.dumps(out, allow_nan=False)


@pytest.mark.parametrize(("source", "target"), [(1, 2), (2, 1)])
@FUZZ
@given(data=st.data())
def test_convert_and_convert_json_raise_only_conversion_error(source: int, target: int, data: st.DataObject) -> None:
    convert = _module("generated.convert")
    names = sorted(
        n for n, obj in vars(importlib.import_module(f"generated.v{source}.models")).items() if isinstance(obj, type)
    )
    type_name = data.draw(st.sampled_from(names) | st.text(max_size=10), label="type")
    value = data.draw(PARAMS, label="value")
    try:
        out = convert.convert(type_name, value, source=source, target=target)
    except convert.ConversionError:
        pass
    else:
        json.dumps(out, allow_nan=False)
    text = data.draw(st.just(_dumps(value)) | DEEP_TEXT | st.text(max_size=30) | st.binary(max_size=30), label="text")
    try:
        answer = convert.convert_json(type_name, text, source=source, target=target)
    except convert.ConversionError:
        return
    json.loads(answer)
