"""What upstream ACP legitimately writes, and the validator accepts: ``"x-side": "both"`` for a
method either peer may call, and a notification form beside a request/response pair
(upstream's ``mcp/message``). Half a pair beside a notification is still refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_codegen.errors import SchemaError
from acp_codegen.generate.pipeline import load_protocols
from acp_codegen.protocol.features import select
from acp_codegen.protocol.ir import build
from acp_codegen.protocol.load import Source, VersionSources
from acp_codegen.protocol.validate import validate_version


def _message(side: str) -> dict[str, Any]:
    return {"type": "object", "properties": {}, "x-method": "mcp/message", "x-side": side}


def _sources(defs: dict[str, Any], meta: dict[str, Any]) -> VersionSources:
    return VersionSources(
        "v1", (Source("v1/schema.json", "", {"$defs": defs}),), Source("v1/meta.json", "", {"version": 1, **meta})
    )


BOTH_META = {"agentMethods": {"mcp_message": "mcp/message"}, "clientMethods": {"mcp_message": "mcp/message"}}


def test_both_sides_and_a_notification_form_build_a_request_on_each_side() -> None:
    defs = {
        "MessageMcpRequest": _message("both"),
        "MessageMcpResponse": _message("both"),
        "MessageMcpNotification": _message("both"),
    }
    sources = _sources(defs, BOTH_META)
    validate_version(sources, 1)
    protocol = build(select(sources, frozenset()))
    assert [(m.side, m.kind, m.params, m.result) for m in protocol.methods] == [
        ("agent", "request", "MessageMcpRequest", "MessageMcpResponse"),
        ("client", "request", "MessageMcpRequest", "MessageMcpResponse"),
    ]


def test_both_needs_the_method_listed_on_both_sides() -> None:
    defs = {"MessageMcpRequest": _message("both"), "MessageMcpResponse": _message("both")}
    with pytest.raises(SchemaError) as err:
        validate_version(_sources(defs, {"agentMethods": {"mcp_message": "mcp/message"}}), 1)
    assert "/$defs/MessageMcpRequest/x-method: method 'mcp/message' (client side) is not listed" in str(err.value)


@pytest.mark.parametrize("half", ["MessageMcpRequest", "MessageMcpResponse"])
def test_notification_beside_half_a_pair_is_refused(half: str) -> None:
    defs = {half: _message("agent"), "MessageMcpNotification": _message("agent")}
    meta = {"agentMethods": {"mcp_message": "mcp/message"}}
    with pytest.raises(SchemaError) as err:
        validate_version(_sources(defs, meta), 1)
    assert "v1/meta.json: /agentMethods/mcp_message: method 'mcp/message' is both a notification and a request" in str(
        err.value
    )


def test_unknown_side_is_still_refused() -> None:
    defs = {"MessageMcpRequest": _message("everyone"), "MessageMcpResponse": _message("agent")}
    with pytest.raises(SchemaError) as err:
        validate_version(_sources(defs, {"agentMethods": {"mcp_message": "mcp/message"}}), 1)
    assert "/$defs/MessageMcpRequest/x-side: x-side must be one of" in str(err.value)


@pytest.mark.parametrize("version", [1, 2])
def test_upstream_unstable_schemas_load(upstream: Path, tmp_path: Path, version: int) -> None:
    target = tmp_path / f"v{version}"
    target.mkdir()
    for source, name in (("schema.unstable.json", "schema.json"), ("meta.unstable.json", "meta.json")):
        (target / name).write_bytes((upstream / f"v{version}" / source).read_bytes())
    [protocol], _ = load_protocols(tmp_path, frozenset())
    assert {m.side for m in protocol.methods if m.name == "mcp/message"} == {"agent", "client"}
    assert protocol.method("$/cancel_request", "protocol") is not None
