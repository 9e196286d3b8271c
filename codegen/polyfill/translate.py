"""Protocol v1 <-> v2 translation of the values the version bridge carries (``bridge.py``
keeps the state; this module only reshapes). Written from upstream's migration guide and
its 2026-11 v2 schema, on plain JSON values: what a type has in common passes as it is,
unknown members and ``_meta`` included, and what one version cannot say is refused with
``Untranslatable`` (the bridge answers the request with -32602 naming the field).
"""

from __future__ import annotations

import functools
import json
import logging
import re
from datetime import datetime
from typing import Any

from pydantic_core import PydanticCustomError

from ..resources import package_data
from ..runtime._convert_rules import _diff_to_git_patch

logger = logging.getLogger(__name__)

# The synthesized config option that stands for a v1 agent's session modes.
MODE_OPTION = "mode"


@functools.cache
def _declared() -> tuple[dict[str, str], dict[tuple[str, int], str]]:
    """From upstream's v1/v2 differences as the tool ships them for the conversions (read
    once, when a connection is first bridged): v1's name of each renamed v2 method, and why
    each method of one version only has no counterpart."""
    from ..plan.conversions import UPSTREAM_DECLARATIONS

    with package_data("acp_codegen.fragments") as directory:
        declared = json.loads((directory / UPSTREAM_DECLARATIONS).read_text(encoding="utf-8"))
    renames = {e["v2"]: e["v1"] for e in declared["renamedMethods"]}
    return renames, {(e["method"], e["version"]): e["why"] for e in declared["methodsOnlyIn"]}


def renamed(method: str) -> str | None:
    """v1's name of a v2 method upstream renamed (``authenticate`` for ``auth/login``)."""
    return _declared()[0].get(method)


def only_in(method: str, version: int) -> str | None:
    """Why ``method``, sent in ``version``, has no counterpart in the other (a request of it is
    answered -32601 without reaching the other side); None where it has."""
    whys = _declared()[1]
    return whys.get((method, version)) or (None if version == 1 else whys.get((method, 1)))


class Untranslatable(Exception):
    """A value that the other version cannot say. ``path`` is where, in the params."""

    def __init__(self, path: list[str | int], reason: str) -> None:
        super().__init__(reason)
        self.path, self.reason = path, reason


def obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _marker(flag: Any) -> dict[str, Any] | None:
    """A v1 boolean (or object) support marker as v2's object marker."""
    if isinstance(flag, dict):
        return flag
    return {} if flag is True else None


def _markers(pairs: dict[str, Any]) -> dict[str, Any]:
    return {name: marker for name, flag in pairs.items() if (marker := _marker(flag)) is not None}


# -- initialize ---------------------------------------------------------------------------


def spoken_version(result: Any) -> int | None:
    """The protocol an agent's initialize result is written in: the ``protocolVersion`` it
    names, except that a result naming 2 in protocol 1's shape (``agentCapabilities``, and
    neither v2's required ``info`` nor ``capabilities``) is protocol 1's. fast-agent 0.10.48
    echoes a client's 2 that way, and speaks 1 from then on."""
    result = obj(result)
    version = result.get("protocolVersion")
    if type(version) is not int:
        return None
    if version == 2 and "agentCapabilities" in result and "info" not in result and "capabilities" not in result:
        return 1
    return version


def initialize_request(params: dict[str, Any]) -> dict[str, Any]:
    """The client's v2 initialize params with v1's members beside them, so that an agent of
    either version reads them: the client has no file system and no terminal (v2 removed both)."""
    out = dict(params)
    caps = obj(params.get("capabilities"))
    v1_caps: dict[str, Any] = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
    if isinstance(caps.get("elicitation"), dict):
        v1_caps["elicitation"] = caps["elicitation"]
    if isinstance(obj(caps.get("auth")).get("terminal"), dict):  # v2's marker, v1's boolean
        v1_caps["auth"] = {"terminal": True}
    out.setdefault("clientCapabilities", v1_caps)
    if isinstance(params.get("info"), dict):
        out.setdefault("clientInfo", params["info"])
    return out


def initialize_result(result: dict[str, Any], fallback_name: str) -> dict[str, Any]:
    """A v1 agent's initialize result as v2's: ``info`` (required there), ``capabilities``
    with the session group, object markers, ``authMethods`` with ``methodId``."""
    caps = obj(result.get("agentCapabilities"))
    v1_session = obj(caps.get("sessionCapabilities"))
    prompt = obj(caps.get("promptCapabilities"))
    mcp = obj(caps.get("mcpCapabilities"))
    session: dict[str, Any] = {
        "prompt": _markers({k: prompt.get(k) for k in ("image", "audio", "embeddedContext")}),
        # Every v1 agent takes stdio servers (v1 requires it); v2 says so with a marker.
        "mcp": {"stdio": {}, **_markers({"http": mcp.get("http")})},
        **_markers({k: v1_session.get(k) for k in ("delete", "additionalDirectories", "archive")}),
    }
    out: dict[str, Any] = {
        "protocolVersion": 2,
        "info": _info(result.get("agentInfo"), fallback_name),
        "capabilities": {"session": session},
    }
    if "_meta" in caps:
        out["capabilities"]["_meta"] = caps["_meta"]
    methods = result.get("authMethods")
    if isinstance(methods, list):
        out["authMethods"] = [_auth_method(m) for m in methods if isinstance(m, dict)]
    if "_meta" in result:
        out["_meta"] = result["_meta"]
    return out


def _info(info: Any, fallback_name: str) -> dict[str, Any]:
    info = obj(info)
    out = {k: v for k, v in info.items() if v is not None}
    out.setdefault("name", fallback_name)
    out.setdefault("version", "unknown")
    return out


def _auth_method(method: dict[str, Any]) -> dict[str, Any]:
    out = {("methodId" if k == "id" else k): v for k, v in method.items()}
    out.setdefault("type", "agent")  # v1's untagged method is the agent's own flow
    return out


# -- sessions -----------------------------------------------------------------------------


def mcp_servers(servers: Any, where: str) -> list[Any]:
    """v2 server configs as v1's: stdio untagged with its (required) args and env lists, http
    with its headers list. Another transport cannot reach a v1 agent."""
    out: list[Any] = []
    for i, given in enumerate(servers if isinstance(servers, list) else []):
        server = obj(given)
        kind = server.get("type")
        if kind == "stdio":
            rest = {k: v for k, v in server.items() if k != "type"}
            out.append({"args": [], "env": [], **rest})
        elif kind == "http":
            out.append({"headers": [], **server})
        else:
            raise Untranslatable([where, i, "type"], f"an MCP server of type {kind!r} has no protocol 1 form")
    return out


def session_params(params: dict[str, Any]) -> dict[str, Any]:
    """session/new and session/resume params: v1 requires ``mcpServers``; ``systemPrompt``
    has no v1 form."""
    if params.get("systemPrompt") is not None:
        raise Untranslatable(["systemPrompt"], "protocol 1 has no system prompt")
    out = {k: v for k, v in params.items() if k not in ("replayFrom", "systemPrompt")}
    out["mcpServers"] = mcp_servers(params.get("mcpServers"), "mcpServers")
    return out


def config_options(options: Any, modes: dict[str, Any] | None) -> list[dict[str, Any]]:
    """v1 config options as v2's (``configId``, ``groupId``), with the agent's modes as a
    ``mode`` option where it has modes and no option of the ``mode`` category."""
    out = [_config_option(o) for o in options if isinstance(o, dict)] if isinstance(options, list) else []
    if modes_shown(options, modes):
        out.insert(0, mode_option(modes))  # type: ignore[arg-type]
    return out


def modes_shown(options: Any, modes: dict[str, Any] | None) -> bool:
    """Whether the modes stand as the ``mode`` option: the agent has modes, and no option of
    its own is of the ``mode`` category or has that id."""
    own = [o for o in options if isinstance(o, dict)] if isinstance(options, list) else []
    return bool(modes) and not any(o.get("category") == "mode" or o.get("id") == MODE_OPTION for o in own)


def _config_option(option: dict[str, Any]) -> dict[str, Any]:
    out = {("configId" if k == "id" else k): v for k, v in option.items()}
    choices = out.get("options")
    if isinstance(choices, list):
        out["options"] = [{("groupId" if k == "group" else k): v for k, v in obj(c).items()} for c in choices]
    return out


def mode_option(modes: dict[str, Any]) -> dict[str, Any]:
    available = [obj(m) for m in modes.get("availableModes") or []]
    choices = []
    for mode in available:
        choice = {"value": mode.get("id"), "name": mode.get("name", mode.get("id"))}
        if isinstance(mode.get("description"), str):
            choice["description"] = mode["description"]
        choices.append(choice)
    return {
        "configId": MODE_OPTION,
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": modes.get("currentModeId"),
        "options": choices,
    }


def session_result(result: dict[str, Any], modes: dict[str, Any] | None) -> dict[str, Any]:
    """session/new, /load and /resume results as v2's: modes become a config option."""
    out = {k: v for k, v in result.items() if k not in ("modes", "configOptions")}
    options = config_options(result.get("configOptions"), modes)
    if options:
        out["configOptions"] = options
    return out


def set_config_option(params: dict[str, Any]) -> dict[str, Any]:
    """v2 tags the value (``type: id`` / ``boolean``); v1 tags the boolean form only."""
    out = dict(params)
    kind = out.get("type")
    if kind == "id":
        del out["type"]
    elif kind != "boolean":
        raise Untranslatable(["type"], f"a config value of type {kind!r} has no protocol 1 form")
    return out


# -- session/update -------------------------------------------------------------------------


def tool_call(update: dict[str, Any]) -> dict[str, Any]:
    """A v1 tool call (or its update) as v2's upsert: diffs become changes and a git patch."""
    out = dict(update)
    if out.get("sessionUpdate") == "tool_call":
        out["sessionUpdate"] = "tool_call_update"
    content = out.get("content")
    if isinstance(content, list):
        out["content"] = [_tool_content(c, update.get("toolCallId")) for c in content]
    return out


def _tool_content(item: Any, call: Any) -> Any:
    if not (isinstance(item, dict) and item.get("type") == "diff" and "changes" not in item):
        return item
    try:
        return {"type": "diff", **_diff_to_git_patch({k: v for k, v in item.items() if k != "type"})}
    except PydanticCustomError as exc:
        # A diff v2 cannot carry (a relative path): shown as text rather than lost.
        logger.warning("polyfill: a diff of tool call %s has no v2 form: %s", call, exc)
        text = f"{item.get('path')}: changed (the diff has no protocol 2 form: {exc.message()})"
        return {"type": "content", "content": {"type": "text", "text": text}}


def plan(update: dict[str, Any], plan_id: str) -> dict[str, Any]:
    """v1's plan (a session has one) as v2's ``items`` plan of the session's id."""
    items = {"type": "items", "planId": plan_id, "entries": update.get("entries", [])}
    return {"sessionUpdate": "plan_update", "plan": items, **{k: v for k, v in update.items() if k == "_meta"}}


_OFFSET = re.compile(r"(?:[Zz]|[+-]\d\d:?\d\d)$")


def timestamp(value: Any) -> Any:
    """v1 asks ISO 8601 of ``updatedAt``, v2 RFC 3339, which needs an offset: a time without
    one is the local time of this machine, where the agent runs."""
    if not isinstance(value, str) or _OFFSET.search(value):
        return value
    try:
        return datetime.fromisoformat(value).astimezone().isoformat()
    except ValueError:
        logger.warning("polyfill: updatedAt %r is no ISO 8601 time; passed on as it is", value)
        return value


def sessions(result: dict[str, Any]) -> dict[str, Any]:
    """A session/list result: each session's ``updatedAt`` as v2 writes it."""
    listed = result.get("sessions")
    if not isinstance(listed, list):
        return result
    out = [
        {**s, "updatedAt": timestamp(s["updatedAt"])} if isinstance(s, dict) and "updatedAt" in s else s for s in listed
    ]
    return {**result, "sessions": out}


def commands(update: dict[str, Any]) -> dict[str, Any]:
    """v2 tags a command (``type: command``) and its input (``type: text``)."""
    out = dict(update)
    listed = []
    for each in out.get("availableCommands") or []:
        command = {"type": "command", **obj(each)}
        given = command.get("input")
        if isinstance(given, dict) and "type" not in given:
            command["input"] = {"type": "text", **given}
        listed.append(command)
    out["availableCommands"] = listed
    return out


def permission_request(params: dict[str, Any]) -> dict[str, Any]:
    """v1's bare tool call becomes the v2 request's ``tool_call`` subject; its required prompt
    ``title`` is the tool call's title, as v1 agents put the prompt copy there."""
    call = obj(params.get("toolCall"))
    out = {k: v for k, v in params.items() if k != "toolCall"}
    title = call.get("title")
    out["title"] = title if isinstance(title, str) and title else "Allow the tool call?"
    if call:
        out["subject"] = {"type": "tool_call", "toolCall": tool_call(call)}
    return out
