"""The version bridge driven message by message, without processes (``support.bridge``): a
v2 client's messages and lines in, a v1 agent's messages in, what each side gets out; the
runtime modules as the shipped package over upstream's 2026-11 release carries them
(``generated_upstream``). Where the 2026-11 v2 schema is at hand, every message for the client
is validated against it.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from generated_upstream.bridge import Bridge
from support import SHARED_UPSTREAM

V2_SCHEMA = SHARED_UPSTREAM / "2026-11" / "v2" / "schema.unstable.json"
SID = "sess_1"
TEXT = {"type": "text", "text": "hi"}


@cache
def _v2() -> tuple[dict[str, Any], dict[tuple[str, str], str]]:
    schema = json.loads(V2_SCHEMA.read_text())
    types: dict[tuple[str, str], str] = {}
    for name, body in schema["$defs"].items():
        if isinstance(body, dict) and "x-method" in body:
            types.setdefault((body["x-method"], "result" if name.endswith("Response") else "params"), name)
    return schema, types


def valid_v2(message: dict[str, Any], method: str | None = None) -> None:
    """``message`` for the client fits the 2026-11 v2 schema (``method``: the request a
    response answers). Skipped where the schema is not at hand."""
    if not V2_SCHEMA.exists():
        return
    import jsonschema_rs

    schema, types = _v2()
    if "method" in message:
        name, value = types[(message["method"], "params")], message["params"]
    elif "result" in message:
        assert method is not None
        name, value = types[(method, "result")], message["result"]
    else:
        return
    errors = [
        e.message
        for e in jsonschema_rs.validator_for({"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]}).iter_errors(value)
    ]
    assert errors == [], (name, value)


def request(request_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def update(variant: str, /, **fields: Any) -> dict[str, Any]:
    body = {"sessionUpdate": variant, **fields}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID, "update": body}}


def to(where: str, actions: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [m for w, m in actions if w == where]


def updates(actions: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    out = [m["params"]["update"] for m in to("client", actions) if m.get("method") == "session/update"]
    for message in to("client", actions):
        valid_v2(message)
    return out


V1_INIT = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
        "mcpCapabilities": {"http": True, "sse": False},
        "sessionCapabilities": {"list": {}, "resume": {}, "archive": {}},
    },
    "authMethods": [{"id": "login", "name": "Log in"}],
    "agentInfo": {"name": "agent", "title": "Agent", "version": "1.2"},
}
MODES = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]}


def bridged(init: dict[str, Any] | None = None) -> Bridge:
    """A bridge past initialize, with session ``SID`` created."""
    bridge = Bridge("agent-cmd", prefix="bridge-")  # (two bridges give the same ids)
    params = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}
    (sent,) = to("agent", bridge.from_client(request(0, "initialize", params)))
    # v2 has no file system and no terminal for the agent: v1's defaults (false) say so.
    assert sent["params"]["clientCapabilities"] == {}
    (answer,) = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 0, "result": init or V1_INIT}))
    valid_v2(answer, "initialize")
    assert bridge.active
    (new,) = to("agent", bridge.from_client(request(1, "session/new", {"cwd": "/w"})))
    assert new["params"] == {"cwd": "/w", "mcpServers": []}
    result = {"sessionId": SID, "modes": MODES, "configOptions": []}
    (created,) = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 1, "result": result}))
    valid_v2(created, "session/new")
    return bridge


def prompt(bridge: Bridge, request_id: Any = 7) -> tuple[Any, list[dict[str, Any]]]:
    """A prompt forwarded: (the id the agent got, what the client got)."""
    (sent,) = to(
        "agent", bridge.from_client(request(request_id, "session/prompt", {"sessionId": SID, "prompt": [TEXT]}))
    )
    assert sent["id"] != request_id  # (its response ends the turn, not the client's request)
    return sent["id"], to("client", bridge.forwarded(sent))
