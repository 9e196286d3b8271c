"""Behaviour of the generated ``generated/convert.py``: RFD examples, the declared
differences, errors, and a round-trip property over every shared type."""

from __future__ import annotations

import copy
import json
import re
import string
from typing import Any

import pytest
from acp_codegen.generate.pipeline import load_protocols
from acp_codegen.protocol.ir import Protocol, TypeDef, TypeExpr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter
from pydantic_core import PydanticCustomError
from support import ROOT
from support.reference_data import reference_dir, require

from generated import convert
from generated._convert_rules import _iso8601_to_rfc3339
from generated.convert import ConversionError
from generated.v1 import models as m1
from generated.v2 import models as m2

RFD = reference_dir() / "rfd" / "session-archive.md"
ARCHIVE = "unstable_session_archive"
PROTOCOLS: dict[int, Protocol] = {p.version: p for p in load_protocols(ROOT / "schema", frozenset({ARCHIVE}), ROOT)[0]}
DECLARATIONS: dict[str, Any] = json.loads((ROOT / "schema" / "conversions.json").read_text(encoding="utf-8"))
RENAMED = {r["v1"]: r["v2"] for r in DECLARATIONS["renamedTypes"]}
MODELS = {1: m1, 2: m2}


def v2_name(v1_name: str) -> str:
    return RENAMED.get(v1_name, v1_name)


def v1_name(name: str, version: int) -> str:
    return name if version == 1 else next((k for k, v in RENAMED.items() if v == name), name)


SHARED = sorted(
    (n1, v2_name(n1))
    for n1, td in PROTOCOLS[1].types.items()
    if td.kind in ("object", "union") and v2_name(n1) in PROTOCOLS[2].types
)

# ---------------------------------------------------------------------------------------
# Every JSON example of the RFD, and its form in the other version.

INIT_V1 = {
    "jsonrpc": "2.0",
    "id": 0,
    "result": {
        "protocolVersion": 1,
        "agentCapabilities": {"sessionCapabilities": {"list": {}, "delete": {}, "archive": {}}},
    },
}
LIST_RESULT = {
    "jsonrpc": "2.0",
    "id": 4,
    "result": {
        "sessions": [
            {
                "sessionId": "sess_abc123",
                "cwd": "/home/user/project",
                "title": "Implement session archive support",
                "archived": True,
            },
            {
                "sessionId": "sess_def456",
                "cwd": "/home/user/project",
                "title": "Update session documentation",
                "archived": False,
            },
        ]
    },
}
# (v1 message, method of the request for responses, the same message in v2)
RFD_EXAMPLES: dict[str, tuple[dict[str, Any], str | None, dict[str, Any]]] = {
    "archive-request": (
        {"jsonrpc": "2.0", "id": 1, "method": "session/archive", "params": {"sessionId": "sess_abc123"}},
        None,
        {"jsonrpc": "2.0", "id": 1, "method": "session/archive", "params": {"sessionId": "sess_abc123"}},
    ),
    "unarchive-request": (
        {"jsonrpc": "2.0", "id": 2, "method": "session/unarchive", "params": {"sessionId": "sess_abc123"}},
        None,
        {"jsonrpc": "2.0", "id": 2, "method": "session/unarchive", "params": {"sessionId": "sess_abc123"}},
    ),
    "archive-result": (
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        "session/archive",
        {"jsonrpc": "2.0", "id": 1, "result": {}},
    ),
    "list-only-archived": (
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/list",
            "params": {"cwd": "/home/user/project", "archived": "only"},
        },
        None,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/list",
            "params": {"cwd": "/home/user/project", "archived": "only"},
        },
    ),
    "list-include-archived": (
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "session/list",
            "params": {"cwd": "/home/user/project", "archived": "include"},
        },
        None,
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "session/list",
            "params": {"cwd": "/home/user/project", "archived": "include"},
        },
    ),
    "list-result": (LIST_RESULT, "session/list", LIST_RESULT),
    "session-info-update": (
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "sess_abc123",
                "update": {"sessionUpdate": "session_info_update", "archived": True},
            },
        },
        None,
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "sess_abc123",
                "update": {"sessionUpdate": "session_info_update", "archived": True},
            },
        },
    ),
}


@pytest.mark.parametrize("name", sorted(RFD_EXAMPLES))
def test_rfd_example_converts_to_its_v2_form_and_back(name: str) -> None:
    v1, method, v2 = RFD_EXAMPLES[name]
    assert convert.convert_message(v1, source=1, target=2, method=method) == v2
    assert convert.convert_message(v2, source=2, target=1, method=method) == v1


def test_rfd_initialize_example_moves_the_archive_capability_and_drops_implied_list() -> None:
    # `initialize` is not a method of the fragments (so not a message they convert); its
    # result type is shared, so it converts as a value.
    info = {"name": "example-agent", "version": "1.0.0"}
    v1 = {**INIT_V1["result"], "agentInfo": info}
    v2 = {"protocolVersion": 1, "capabilities": {"session": {"delete": {}, "archive": {}}}, "info": info}
    assert convert.convert("InitializeResponse", v1, source=1, target=2) == v2
    assert convert.convert("InitializeResponse", v2, source=2, target=1) == v1


def test_rfd_initialize_example_without_agent_info_cannot_become_v2() -> None:
    with pytest.raises(ConversionError) as info:
        convert.convert("InitializeResponse", INIT_V1["result"], source=1, target=2)
    assert info.value.pointer == "/agentInfo"
    assert "v2 requires `info`" in info.value.reason


def test_every_json_example_of_the_rfd_is_covered() -> None:
    require(RFD)
    blocks = re.findall(r"```json[^\n]*\n(.*?)```", RFD.read_text(encoding="utf-8"), flags=re.S)
    ours = [v1 for v1, _, _ in RFD_EXAMPLES.values()] + [INIT_V1]
    assert blocks
    for block in blocks:
        assert json.loads(block) in ours


# ---------------------------------------------------------------------------------------
# Declared differences, one by one.


def _caps(session: dict[str, Any]) -> dict[str, Any]:
    return {"sessionCapabilities": session}


@pytest.mark.parametrize(
    ("v2", "v1"),
    [
        ({"session": {"archive": {}}}, _caps({"archive": {}, "list": {}})),
        ({"session": {"archive": {}, "delete": {}}}, _caps({"archive": {}, "delete": {}, "list": {}})),
        ({"session": {"archive": None}}, _caps({"archive": None})),
        ({"session": {"delete": {}}}, _caps({"delete": {}})),
        ({"session": {}}, _caps({})),
        ({"session": None}, {}),
        ({}, {}),
    ],
    ids=["archive", "archive-delete", "archive-null", "delete", "empty", "session-null", "nothing"],
)
def test_v2_to_v1_adds_list_exactly_when_archive_is_advertised(v2: dict[str, Any], v1: dict[str, Any]) -> None:
    assert convert.convert("AgentCapabilities", v2, source=2, target=1) == v1


@pytest.mark.parametrize(
    "caps",
    [{"archive": {}}, {"archive": {}, "list": None}, {"archive": {"_meta": {"x": 1}}, "delete": {}}],
    ids=["omitted", "null", "with-delete"],
)
def test_v1_archive_without_list_is_invalid_input(caps: dict[str, Any]) -> None:
    with pytest.raises(ConversionError) as info:
        convert.convert("AgentCapabilities", _caps(caps), source=1, target=2)
    assert info.value.pointer == "/sessionCapabilities/list"
    assert "requires `list` whenever `archive`" in info.value.reason


def test_v1_only_capabilities_are_dropped_converting_to_v2() -> None:
    v1 = {"loadSession": True, "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}}}
    assert convert.convert("AgentCapabilities", v1, source=1, target=2) == {"session": {"delete": {}}}


@pytest.mark.parametrize(
    "cwd",
    ["/home/user/project", "C:\\Users\\me", "D:/work", "\\\\server\\share", "/"],
)
def test_absolute_cwd_converts_unchanged(cwd: str) -> None:
    assert convert.convert("ListSessionsRequest", {"cwd": cwd}, source=1, target=2) == {"cwd": cwd}


@pytest.mark.parametrize("cwd", ["project", "./src", "", "~/x", "C:relative"])
def test_relative_cwd_cannot_become_an_absolute_path(cwd: str) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 9,
        "result": {"sessions": [{"sessionId": "a", "cwd": "/ok"}, {"sessionId": "b", "cwd": cwd}]},
    }
    with pytest.raises(ConversionError) as info:
        convert.convert_message(message, source=1, target=2, method="session/list")
    assert info.value.path == ("result", "sessions", 1, "cwd")
    assert info.value.pointer == "/result/sessions/1/cwd"
    assert "relative path" in info.value.reason


@pytest.mark.parametrize(
    ("cwd", "path", "resolved"),
    [("/w", "a.txt", "/w/a.txt"), ("/w/p", "../x/./a", "/w/x/a"), ("C:\\w", "src\\a.py", "C:\\w\\src\\a.py")],
)
def test_a_relative_path_is_taken_as_the_supplied_directorys(cwd: str, path: str, resolved: str) -> None:
    message = {"jsonrpc": "2.0", "id": 9, "result": {"sessions": [{"sessionId": "b", "cwd": path}]}}
    out = convert.convert_message(message, source=1, target=2, method="session/list", supply={"cwd": cwd})
    assert out["result"]["sessions"][0]["cwd"] == resolved
    # An empty path, or a supplied directory that is itself relative, resolves nothing.
    for bad_path, bad_cwd in (("", cwd), (path, "w")):
        spoilt = {**message, "result": {"sessions": [{"sessionId": "b", "cwd": bad_path}]}}
        with pytest.raises(ConversionError) as info:
            convert.convert_message(spoilt, source=1, target=2, method="session/list", supply={"cwd": bad_cwd})
        assert info.value.pointer == "/result/sessions/0/cwd" and "relative path" in info.value.reason


def test_a_relative_additional_directory_is_left_out_as_v2_skips_invalid_items() -> None:
    """v2 reads additionalDirectories skipping an invalid item (x-deserialize-skip-invalid-items):
    the conversion leaves the relative one out, the rest kept in order, and LOSSY says so."""
    session = {"sessionId": "a", "cwd": "/ok", "additionalDirectories": ["/a", "lib", "/b"]}
    assert convert.convert("SessionInfo", session, source=1, target=2)["additionalDirectories"] == ["/a", "/b"]
    assert "additionalDirectories" in convert.LOSSY[(1, 2)]["SessionInfo"]
    with pytest.raises(ConversionError) as info:  # (an item that is no string is not valid v1)
        convert.convert("SessionInfo", {**session, "additionalDirectories": ["/a", 5]}, source=1, target=2)
    assert info.value.pointer == "/additionalDirectories/1"


@pytest.mark.parametrize(
    ("v1", "v2"),
    [
        ("2026-10-28T09:30:00Z", "2026-10-28T09:30:00Z"),
        ("2026-10-28t09:30:00.123456z", "2026-10-28t09:30:00.123456z"),  # already RFC 3339: as sent
        ("2026-10-28T09:30:00+02:00", "2026-10-28T09:30:00+02:00"),
        ("2026-10-28T09:30:00+0200", "2026-10-28T09:30:00+02:00"),
        ("2026-10-28T09:30:00-05", "2026-10-28T09:30:00-05:00"),
        ("2026-10-28 09:30:00Z", "2026-10-28T09:30:00Z"),
        ("2026-10-28T09:30Z", "2026-10-28T09:30:00Z"),
        ("2026-10-28T09:30:00,5Z", "2026-10-28T09:30:00.5Z"),
        ("20261028T093000Z", "2026-10-28T09:30:00Z"),
        ("20261028T0930+0100", "2026-10-28T09:30:00+01:00"),
        ("2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"),
        ("2016-12-31T23:59:60Z", "2016-12-31T23:59:60Z"),
    ],
)
def test_iso8601_updated_at_becomes_rfc3339(v1: str, v2: str) -> None:
    for type_name, value in (
        ("SessionInfo", {"sessionId": "s", "cwd": "/", "updatedAt": v1}),
        ("SessionInfoUpdate", {"updatedAt": v1}),
    ):
        assert convert.convert(type_name, value, source=1, target=2)["updatedAt"] == v2


@pytest.mark.parametrize(
    ("v1", "reason"),
    [
        ("2026-10-28T09:30:00", "without a UTC offset"),
        ("2026-10-28", "not an ISO 8601 date and time"),
        ("yesterday", "not an ISO 8601 date and time"),
        ("2023-02-29T00:00:00Z", "not a valid calendar date-time"),
        ("2026-13-01T00:00:00Z", "not a valid calendar date-time"),
        ("2026-10-28T25:00:00Z", "not a valid calendar date-time"),
        ("2026-10-28T09:30:00+24:00", "not a valid calendar date-time"),
    ],
)
def test_updated_at_that_is_not_an_instant_is_left_out_as_v2_reads_it(v1: str, reason: str) -> None:
    """v2 reads an invalid updatedAt as its default (x-deserialize-default-on-error): the
    conversion omits it (in an update, omitted leaves the value as it was; null would clear
    it), and LOSSY says so. ``reason`` is why the value is not an RFC 3339 instant."""
    assert convert.convert("SessionInfoUpdate", {"updatedAt": v1, "title": "t"}, source=1, target=2) == {"title": "t"}
    session = {"sessionId": "s", "cwd": "/", "updatedAt": v1}
    assert convert.convert("SessionInfo", session, source=1, target=2) == {"sessionId": "s", "cwd": "/"}
    assert convert.LOSSY[(1, 2)]["SessionInfoUpdate"] == ("updatedAt",)
    with pytest.raises(PydanticCustomError, match=reason):
        _iso8601_to_rfc3339(v1, None)


def test_v2_updated_at_must_be_rfc3339() -> None:
    with pytest.raises(ConversionError) as info:
        convert.convert("SessionInfoUpdate", {"updatedAt": "20261028T093000Z"}, source=2, target=1)
    assert info.value.pointer == "/updatedAt" and "RFC 3339" in info.value.reason


@pytest.mark.parametrize(
    "update",
    [
        {"title": None},
        {"archived": None},
        {"title": None, "archived": None, "updatedAt": None},
        {"archived": False},
        {"title": "x", "archived": True},
        {},
    ],
    ids=["title-null-clears", "archived-null-kept", "all-null", "archived-false", "set", "nothing"],
)
def test_session_info_update_nulls_and_omissions_survive_both_ways(update: dict[str, Any]) -> None:
    for source, target in ((1, 2), (2, 1)):
        assert convert.convert("SessionInfoUpdate", update, source=source, target=target) == update


def test_meta_and_unknown_properties_are_carried_unchanged_at_every_level() -> None:
    meta = {"vendor/trace": {"deep": [1, {"x": None}]}, "n": 1.5}
    v1 = {
        "sessions": [{"sessionId": "s", "cwd": "/", "_meta": meta, "vendorExtra": [True]}],
        "nextCursor": None,
        "_meta": meta,
        "somethingNew": {"a": 1},
    }
    v2 = convert.convert("ListSessionsResponse", v1, source=1, target=2)
    assert v2 == v1
    assert v2["_meta"] is not v1["_meta"]  # a new value, not an alias of the input


@pytest.mark.parametrize(
    ("type_name", "value", "source", "pointer"),
    [
        (
            "InitializeResponse",
            {"protocolVersion": 1, "agentInfo": {"name": "a", "version": "1"}, "info": {}},
            1,
            "/info",
        ),
        ("AgentCapabilities", {"session": {}}, 1, "/session"),
        ("SessionCapabilities", {"archive": {}, "list": {}}, 2, "/list"),
        ("AgentCapabilities", {"loadSession": True}, 2, "/loadSession"),
    ],
)
def test_unknown_property_that_would_become_a_field_is_refused(
    type_name: str, value: dict[str, Any], source: int, pointer: str
) -> None:
    with pytest.raises(ConversionError) as info:
        convert.convert(type_name, value, source=source, target=3 - source)
    assert info.value.pointer == pointer


# ---------------------------------------------------------------------------------------
# Messages.


@pytest.mark.parametrize(
    ("message", "method", "pointer", "reason"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}, None, "/method", "not covered"),
        ({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}}, None, "/method", "not covered"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, None, "", "pass method="),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "session/prompt", "/method", "not covered"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "session/update", "", "notification"),
        ({"jsonrpc": "2.0", "id": 1, "method": "session/update", "params": {}}, None, "", "has an id"),
        ({"jsonrpc": "2.0", "method": "session/archive", "params": {"sessionId": "s"}}, None, "", "lacks an id"),
        ({"jsonrpc": "2.0", "id": 1, "method": "session/archive"}, None, "/params/sessionId", "Field required"),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "session/archive", "params": {"sessionId": 7}},
            None,
            "/params/sessionId",
            "string",
        ),
        ({"jsonrpc": "2.0", "id": 1}, None, "", "not a JSON-RPC"),
    ],
)
def test_message_that_cannot_be_converted_raises(
    message: dict[str, Any], method: str | None, pointer: str, reason: str
) -> None:
    with pytest.raises(ConversionError) as info:
        convert.convert_message(message, source=1, target=2, method=method)
    assert info.value.pointer == pointer
    assert reason in info.value.reason


def test_error_response_is_carried_as_it_is() -> None:
    message = {"jsonrpc": "2.0", "id": 5, "error": {"code": -32002, "message": "Resource not found", "data": {"x": 1}}}
    out = convert.convert_message(message, source=2, target=1, method="session/archive")
    assert out == message and out["error"] is not message["error"]


def test_failed_conversion_leaves_input_untouched_and_returns_nothing() -> None:
    message = copy.deepcopy(RFD_EXAMPLES["list-result"][0])
    message["result"]["sessions"].append({"sessionId": "bad", "cwd": "relative"})
    before = copy.deepcopy(message)
    with pytest.raises(ConversionError):
        convert.convert_message(message, source=1, target=2, method="session/list")
    assert message == before


def test_convert_json_matches_convert() -> None:
    value = RFD_EXAMPLES["list-result"][0]["result"]
    assert json.loads(convert.convert_json("ListSessionsResponse", json.dumps(value), source=1, target=2)) == value
    with pytest.raises(ConversionError) as info:
        convert.convert_json(
            "ListSessionsResponse", '{"sessions": [{"sessionId": "s", "cwd": "x"}]}', source=1, target=2
        )
    assert info.value.pointer == "/sessions/0/cwd"


def test_convert_message_json_matches_convert_message() -> None:
    message = {"jsonrpc": "2.0", "id": 7, "method": "session/list", "params": {"cwd": "/w", "archived": "only"}}
    text = convert.convert_message_json(json.dumps(message), source=1, target=2)
    assert json.loads(text) == convert.convert_message(message, source=1, target=2)
    for bad in ('{"jsonrpc": "2.0", "id": NaN, "result": {}}', "{", '{"jsonrpc": "2.0", "id": 1, "method": "x"}'):
        with pytest.raises(ConversionError):
            convert.convert_message_json(bad, source=1, target=2, method="session/list")


def test_unknown_direction_or_type_raises() -> None:
    with pytest.raises(ConversionError, match="no conversion from v1 to v3"):
        convert.convert("SessionInfo", {}, source=1, target=3)
    with pytest.raises(ConversionError, match="not shared"):
        convert.convert("AbsolutePath", "/", source=2, target=1)


# ---------------------------------------------------------------------------------------
# Typed functions over the generated models.


def test_a_typed_function_exists_for_every_shared_type_both_ways() -> None:
    for n1, n2 in SHARED:
        for name in (f"{_snake(n1)}_v1_to_v2", f"{_snake(n2)}_v2_to_v1"):
            assert callable(getattr(convert, name)), name
            assert name in convert.__all__


def test_typed_functions_convert_models() -> None:
    v1 = m1.SessionInfo(session_id="s", cwd="/p", updated_at="2026-10-28T09:30:00+0200", archived=True)
    v2 = convert.session_info_v1_to_v2(v1)
    assert isinstance(v2, m2.SessionInfo)
    assert v2.updated_at == "2026-10-28T09:30:00+02:00"  # the declared conversion writes RFC 3339
    back = convert.session_info_v2_to_v1(v2)
    assert isinstance(back, m1.SessionInfo) and back.archived is True and back.cwd == "/p"
    note = m1.SessionNotification.model_validate(RFD_EXAMPLES["session-info-update"][0]["params"])
    assert isinstance(convert.session_notification_v1_to_v2(note), m2.UpdateSessionNotification)
    with pytest.raises(ConversionError):
        convert.session_info_v1_to_v2(m1.SessionInfo(session_id="s", cwd="p"))


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


# ---------------------------------------------------------------------------------------
# Round trip over generated valid instances of every shared type.

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
ABSOLUTE = st.one_of(
    st.text(string.ascii_letters + "/-_. ", max_size=12).map(lambda s: "/" + s),
    st.text(string.ascii_letters + "\\ ", max_size=8).map(lambda s: "C:\\" + s),
)
RFC3339 = st.builds(
    lambda d, t, frac, off: f"{d.isoformat()}T{t.strftime('%H:%M:%S')}{frac}{off}",
    st.dates(),
    st.times(),
    st.sampled_from(["", ".5", ".123456"]),
    st.sampled_from(["Z", "+00:00", "+05:30", "-08:00"]),
)
# v1 values under a value rule: valid for v1 whatever they hold, so some cannot convert.
V1_RULE_VALUES = {
    "absolute-path": st.one_of(ABSOLUTE, st.text(max_size=6)),
    "date-time": st.one_of(RFC3339, st.text(max_size=12)),
}
RULES = {(d["type"], d["v1"]): d["value"] for d in DECLARATIONS["fields"] if d.get("value") in V1_RULE_VALUES}


def _fields(td: TypeDef, proto: Protocol) -> list[Any]:
    return [f for b in td.bases for f in _fields(proto.types[b], proto)] + list(td.fields)


def _expr_strategy(e: TypeExpr, proto: Protocol, leaf: st.SearchStrategy[Any] | None) -> st.SearchStrategy[Any]:
    if e.kind == "ref" and e.ref == "AbsolutePath":
        base: st.SearchStrategy[Any] = ABSOLUTE
    elif e.kind == "ref" and e.ref in proto.types:
        td = proto.types[e.ref]
        if td.kind == "alias" and td.target is not None:
            base = _expr_strategy(td.target, proto, leaf)
        elif td.kind == "enum":
            base = st.sampled_from([v.value for v in td.values]) | (st.text(max_size=5) if td.open else st.nothing())
        else:
            base = st.deferred(lambda: _type_strategy(td.name, proto.version))
    elif e.kind == "string":
        base = leaf if leaf is not None else RFC3339 if e.format == "date-time" else st.text(max_size=8)
    elif e.kind == "integer":
        base = st.integers(0, 65535)
    elif e.kind == "boolean":
        base = st.booleans()
    elif e.kind == "const":
        base = st.just(e.const)
    elif e.kind == "array":
        base = st.lists(_expr_strategy(e.items, proto, leaf) if e.items else JSON, max_size=3)
    elif e.kind == "object":
        base = st.dictionaries(st.text(max_size=5), JSON, max_size=3)
    else:
        base = JSON
    return st.none() | base if e.nullable else base


_STRATEGIES: dict[tuple[str, int], st.SearchStrategy[Any]] = {}


def _type_strategy(name: str, version: int) -> st.SearchStrategy[Any]:
    key = (name, version)
    if key not in _STRATEGIES:
        proto = PROTOCOLS[version]
        td = proto.types[name]
        if td.kind == "union":
            _STRATEGIES[key] = st.one_of([_expr_strategy(v, proto, None) for v in td.variants])
        else:
            fields = _fields(td, proto)
            known = {f.name for f in fields}
            strategies = {}
            for f in fields:
                rule = RULES.get((v1_name(td.name, version), f.name)) if version == 1 else None
                strategies[f.name] = (f.required, _expr_strategy(f.type, proto, V1_RULE_VALUES[rule] if rule else None))
            unknown = st.dictionaries(
                st.text(min_size=1, max_size=6).filter(lambda k: k not in known), JSON, max_size=2
            )
            _STRATEGIES[key] = st.builds(
                lambda extra, own: {**extra, **own},
                unknown,
                st.fixed_dictionaries(
                    {k: s for k, (req, s) in strategies.items() if req},
                    optional={k: s for k, (req, s) in strategies.items() if not req},
                ),
            )
    return _STRATEGIES[key]


def _field_decl(type_v1: str, version: int, name: str) -> dict[str, Any] | None:
    return next((d for d in DECLARATIONS["fields"] if d["type"] == type_v1 and d[f"v{version}"] == name), None)


def _expected_round_trip(value: Any, e: TypeExpr | None, version: int, back: Any = None) -> Any:
    """What source -> other -> source gives, by the declarations: fields of the source
    version only are dropped (a fill puts them back), nulls the other version cannot
    say come back omitted; everything else, unknown properties included, is kept. A field
    ``convert.LOSSY`` lists may come back without its value, or without some of its items
    (read as the other version's default there): as ``back`` has it, where it does."""
    proto = PROTOCOLS[version]
    if value is None or e is None:
        return value
    if e.kind == "array" and e.items is not None:
        parts = back if isinstance(back, list) and len(back) == len(value) else [None] * len(value)
        return [_expected_round_trip(v, e.items, version, b) for v, b in zip(value, parts, strict=True)]
    if e.kind != "ref" or e.ref not in proto.types:
        return value
    td = proto.types[e.ref]
    if td.kind == "alias":
        return _expected_round_trip(value, td.target, version, back)
    if td.kind == "union":  # the fragments' unions have one variant
        return _expected_round_trip(value, td.variants[0], version, back)
    if td.kind != "object":
        return value
    other = 3 - version
    type_v1 = v1_name(td.name, version)
    fields = {f.name: f for f in _fields(td, proto)}
    lossy = set(getattr(convert, "LOSSY", {}).get((version, other), {}).get(td.name, ()))
    back = back if isinstance(back, dict) else {}
    out = {}
    for key, item in value.items():
        f = fields.get(key)
        if f is None:
            out[key] = item
            continue
        decl = _field_decl(type_v1, version, key)
        if decl is not None and decl[f"v{other}"] is None:
            continue
        if item is None and decl is not None and "nullable" in decl.get("accept", []) and f.type.nullable:
            continue
        if key in lossy and key not in back:
            continue
        kept = _kept(item, back[key]) if key in lossy else item
        out[key] = _expected_round_trip(kept, f.type, version, back.get(key))
    for d in DECLARATIONS["fields"]:
        if d["type"] == type_v1 and d[f"v{other}"] is None and "fill" in d and d[f"v{version}"] in fields:
            if out.get(d["fill"]["when"]) is not None:
                out[d[f"v{version}"]] = d["fill"]["value"]
    return out


def _kept(sent: Any, back: Any) -> Any:
    """A lossy field's value as a round trip may give it back: a list without the items the
    other version skipped."""
    return [i for i in sent if i in back] if isinstance(sent, list) and isinstance(back, list) else sent


DOCUMENTED_FAILURES = (
    "a relative path cannot become a v2 AbsolutePath",
    "cannot become an RFC 3339 date-time",
    "v2 requires `info`",
    "v1 requires `list` whenever `archive` is advertised.",
    "would become the v",
)


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for token in path:
        value = value[token]
    return value


def _assert_documented(error: ConversionError, value: Any) -> None:
    assert any(text in error.reason for text in DOCUMENTED_FAILURES), error
    if "relative path" in error.reason:
        offending = _at(value, error.path)
        assert isinstance(offending, str) and not offending.startswith(("/", "C:\\"))
    elif "RFC 3339" in error.reason:
        assert not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", _at(value, error.path))


@pytest.mark.parametrize(
    ("source", "index"),
    [pytest.param(s, i, id=f"v{s}-{names[s - 1]}") for s in (1, 2) for i, names in enumerate(SHARED)],
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_round_trip_of_every_shared_type_is_lossless_or_a_documented_error(
    source: int, index: int, data: st.DataObject
) -> None:
    names = SHARED[index]
    name, target_name = names[source - 1], names[2 - source]
    target = 3 - source
    value = data.draw(_type_strategy(name, source), label=name)
    original = copy.deepcopy(value)
    try:
        converted = convert.convert(name, value, source=source, target=target)
    except ConversionError as error:
        _assert_documented(error, value)
        with pytest.raises(ConversionError) as from_json:
            convert.convert_json(name, json.dumps(value), source=source, target=target)
        assert from_json.value.path == error.path
        return
    assert value == original  # the input is never modified
    assert json.loads(convert.convert_json(name, json.dumps(value), source=source, target=target)) == converted
    TypeAdapter(getattr(MODELS[target], target_name)).validate_python(converted)  # valid in the target version
    back = convert.convert(target_name, converted, source=target, target=source)
    assert back == _expected_round_trip(value, TypeExpr("ref", ref=name), source, back)


@pytest.mark.parametrize(
    "envelope",
    [{"id": float("inf"), "result": {}}, {"id": 1, "error": {"code": float("nan")}}, {"id": object(), "result": {}}],
)
def test_message_envelope_that_is_not_json_is_refused(envelope: dict[str, Any]) -> None:
    # The envelope is carried as it is; a value JSON cannot hold must not come out.
    message = {"jsonrpc": "2.0", **envelope}
    with pytest.raises(ConversionError, match="not JSON"):
        convert.convert_message(message, source=1, target=2, method="session/archive")
