"""``handle_json``'s fast path (one pydantic-core pass over a well-formed request) answers
byte for byte what the general path (``json`` decoding, envelope checks, params
validation) answers, and is really taken. Both protocol versions, feature on and off."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
from typing import Any

import pytest

from generated import _router
from generated._runtime import InvalidParamsError, ResourceNotFoundError

_loop = asyncio.new_event_loop()


@pytest.fixture(scope="module", autouse=True)
def _close_loop() -> Any:
    yield
    _loop.close()


def _router_pair(version: int, enabled: bool) -> tuple[Any, Any]:
    """The same handler behind two routers, the second with its fast path switched off."""
    dispatch = importlib.import_module(f"generated.v{version}.dispatch")
    models = importlib.import_module(f"generated.v{version}.models")

    class Handler(dispatch.AgentHandler):  # type: ignore[misc,name-defined]
        async def session_archive(self, params: Any) -> Any:
            if params.session_id == "gone":
                raise ResourceNotFoundError(data={"sessionId": "gone"})
            if params.session_id == "boom":
                raise RuntimeError("handler bug")
            if params.session_id == "bad-result":
                return {"unexpected": object()}
            return models.ArchiveSessionResponse()

        async def session_list(self, params: Any) -> Any:
            if params.cursor == "raise-invalid":
                raise InvalidParamsError(data={"errors": [{"path": ["cursor"], "message": "stale"}]})
            return {"sessions": [{"sessionId": "s1", "cwd": "/r", "title": "Café ☕"}], "nextCursor": params.cursor}

    handler = Handler()
    fast = dispatch.Router(handler, unstable_session_archive=enabled)
    general = dispatch.Router(handler, unstable_session_archive=enabled)
    general._requests = None
    return fast, general


def _env(method: str, params: Any = None, id_: Any = 1, **extra: Any) -> str:
    message = {"jsonrpc": "2.0", "id": id_, "method": method, **extra}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


ARCHIVE = {"sessionId": "sess_1"}
TEXTS = [
    _env("session/archive", ARCHIVE),
    _env("session/archive", ARCHIVE, id_="req-7"),
    _env("session/archive", ARCHIVE, id_="ré\u2028q"),
    _env("session/archive", ARCHIVE, id_=None),
    _env("session/archive", ARCHIVE, id_=2**70),
    _env("session/archive", ARCHIVE, id_=1.0),
    _env("session/archive", ARCHIVE, id_=-0.5),
    _env("session/archive", ARCHIVE, id_=True),
    _env("session/archive", ARCHIVE, id_=[1]),
    _env("session/archive", {"sessionId": "sess_1", "_meta": {"x": 1}, "unknown": [1, 2]}),
    _env("session/archive", {"sessionId": "sess_1", "_meta": 5}),
    _env("session/archive", {"sessionId": 5}),
    _env("session/archive", {}),
    _env("session/archive", []),
    _env("session/archive", "s"),
    _env("session/archive"),
    json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/archive", "params": None}),
    _env("session/archive", {"sessionId": "gone"}),
    _env("session/archive", {"sessionId": "boom"}),
    _env("session/archive", {"sessionId": "bad-result"}),
    _env("session/archive", ARCHIVE, extra="ignored"),
    _env("session/unarchive", ARCHIVE),
    _env("session/list", {"cwd": "/r", "archived": "only"}),
    _env("session/list", {"archived": "maybe"}),
    _env("session/list", {"archived": None}),
    _env("session/list", {"cursor": "raise-invalid"}),
    _env("session/list", {"cursor": "c2"}),
    _env("session/list", {"cwd": 5}),
    _env("no/such", {}),
    _env("session/Archive", ARCHIVE),
    json.dumps({"jsonrpc": "2.0", "method": "session/archive", "params": ARCHIVE}),  # a notification
    json.dumps({"jsonrpc": "1.0", "id": 1, "method": "session/archive", "params": ARCHIVE}),
    json.dumps({"id": 1, "method": "session/archive", "params": ARCHIVE}),
    json.dumps({"jsonrpc": "2.0", "id": 1, "method": 7, "params": ARCHIVE}),
    '{"jsonrpc":"2.0","id":1,"method":"session/list","method":"session/archive","params":{"sessionId":"a"}}',
    '{"jsonrpc":"2.0","id":1,"id":"two","method":"session/archive","params":{"sessionId":"a"}}',
    '{"jsonrpc":"2.0","id":1,"method":"session/archive","params":{"sessionId":"s","_meta":{"n":NaN}}}',
    '{"jsonrpc":"2.0","id":1,"method":"session/archive","params":{"sessionId":"s","_meta":{"n":-Infinity}}}',
    '{"jsonrpc":"2.0","id":1,"method":"session/archive","params":{"sessionId":"NaN"}}',
    '{"jsonrpc":"2.0","id":1,"method":"session/archive","params":{"sessionId":"\\ud800"}}',
    '{"jsonrpc":"2.0","id":1,"method":"session/archive","params":{"sessionId":"s","_meta":{"big":1e400}}}',
    '{"jsonrpc":"2.0","id":1,"method":"session/archive","params":{"sessionId":"s"}} trailing',
    '\ufeff{"jsonrpc":"2.0","id":1,"method":"session/archive","params":{"sessionId":"s"}}',
    ' \n{"jsonrpc":"2.0","id":1,"method":"session/archive","params":{"sessionId":"s"}}\t',
    "[1, 2]",
    "",
    '{"jsonrpc":"2.0","id":1,"method":"session/archive","params":' + "[" * 5000 + "]" * 5000 + "}",
]


@pytest.mark.parametrize("version", [1, 2], ids=lambda v: f"v{v}")
@pytest.mark.parametrize("enabled", [True, False], ids=["feature-on", "feature-off"])
@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_fast_path_answers_exactly_what_the_general_path_answers(
    version: int, enabled: bool, as_bytes: bool, caplog: pytest.LogCaptureFixture
):
    fast, general = _router_pair(version, enabled)
    caplog.set_level(logging.ERROR, logger=_router.__name__)
    for text in TEXTS:
        message: str | bytes = text.encode("utf-8", "surrogatepass") if as_bytes else text
        caplog.clear()
        fast_answer = _loop.run_until_complete(fast.handle_json(message))
        fast_log = [r.getMessage() for r in caplog.records]
        caplog.clear()
        general_answer = _loop.run_until_complete(general.handle_json(message))
        assert fast_answer == general_answer, text[:200]
        assert fast_log == [r.getMessage() for r in caplog.records], text[:200]


@pytest.mark.parametrize("version", [1, 2], ids=lambda v: f"v{v}")
def test_a_well_formed_request_never_reaches_the_json_decoder(version: int, monkeypatch: pytest.MonkeyPatch):
    fast, general = _router_pair(version, True)

    class NoDecoding:
        def decode(self, text: str) -> Any:
            raise AssertionError("the general path ran")

    monkeypatch.setattr(_router, "_DECODER", NoDecoding())
    for text in (_env("session/archive", ARCHIVE), _env("session/list", {"archived": "only"}, id_="x")):
        assert json.loads(_loop.run_until_complete(fast.handle_json(text)))["id"] in (1, "x")
    with pytest.raises(AssertionError, match="general path"):  # the switched-off one does decode
        _loop.run_until_complete(general.handle_json(_env("session/archive", ARCHIVE)))
    with pytest.raises(AssertionError, match="general path"):  # and NaN keeps the general path
        _loop.run_until_complete(fast.handle_json(_env("session/archive", {"sessionId": "s", "_meta": {"n": "NaN"}})))
