"""An agent and a client on an SDK's public API that implement every method of its ``Agent``
and ``Client`` protocols, and call every method its connections offer (issue 51).

``every_method.py client [--no-unstable-protocol]`` spawns ``every_method.py agent`` through
``acp.spawn_agent_process``; the client calls each ``ClientSideConnection`` method once, then
``prompt``, in which the agent calls each ``AgentSideConnection`` method once. Each side
records the methods its handlers were reached by; the client prints, as JSON, the wire names
each side reached and the error codes its calls met. Handlers and arguments are made from
the protocols' and connections' own signatures (keyword parameters, their annotations), so
that the same script runs on any release: a method the SDK lacks on one side is not reached.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import json
import os
import re
import sys
import types
import typing
from typing import Any

import acp
from acp import interfaces, meta
from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection
from pydantic import BaseModel, RootModel

SKIP = {"ext_method", "ext_notification", "on_connect"}
UNSTABLE = "--no-unstable-protocol" not in sys.argv


def sample(tp: Any, depth: int = 0) -> Any:
    """A value of the type ``tp`` (an annotation): the simplest one pydantic takes."""
    origin = typing.get_origin(tp)
    if depth > 8 or tp is Any or tp is None or tp is type(None):
        return None if tp is not Any else {}
    if isinstance(tp, typing.TypeAliasType if hasattr(typing, "TypeAliasType") else ()) or hasattr(tp, "__value__"):
        return sample(tp.__value__, depth + 1)
    if origin is typing.Annotated:
        return sample(typing.get_args(tp)[0], depth + 1)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        return sample(options[0], depth + 1) if options else None
    if origin is typing.Literal:
        return typing.get_args(tp)[0]
    if origin in (list, tuple, set, frozenset):
        return []
    if origin is dict or tp is dict:
        return {}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return next(iter(tp))
    if isinstance(tp, type) and issubclass(tp, RootModel):
        return tp(sample(tp.model_fields["root"].annotation, depth + 1))
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        fields = {name: sample(f.annotation, depth + 1) for name, f in tp.model_fields.items() if f.is_required()}
        return tp(**fields)
    return plain(tp)


def plain(tp: Any) -> Any:
    """A value of a plain type (a URL's, too: a string will do)."""
    values = {bool: True, int: 1, float: 1.0, str: "file:///tmp/every-method"}
    if tp in values:
        return values[tp]
    return "file:///tmp/every-method" if isinstance(tp, type) and "Url" in tp.__name__ else None


def hints(fn: Any) -> dict[str, Any]:
    module = sys.modules[fn.__module__]
    return typing.get_type_hints(fn, vars(module), include_extras=True)


def arguments(fn: Any) -> dict[str, Any]:
    """Keyword arguments for a connection method: each required parameter, sampled."""
    found = hints(fn)
    return {
        name: sample(found.get(name, Any))
        for name, p in inspect.signature(fn).parameters.items()
        if name != "self" and p.default is p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    }


def sent(cls: type, table: str) -> dict[str, str]:
    """The connection's methods that send a method of ``table``: Python name -> meta key."""
    out = {}
    for name, fn in vars(cls).items():
        # (not the camelCase aliases the SDK's compatible_class adds for its old API style)
        if callable(fn) and not name.startswith("_") and name == name.lower() and name not in SKIP:
            keys = re.findall(rf"""{table}\[\s*["'](\w+)["']\s*\]""", inspect.getsource(fn))
            if keys:
                out[name] = keys[0]
    return out


def implementing(protocol: type, reached: list[str], methods: dict[str, str]) -> type:
    """A class with an implementation of every method of ``protocol``: it records the call
    (by wire name: ``methods`` maps Python names to them) and returns a value of its result."""

    def handler(name: str, fn: Any) -> Any:
        result = hints(fn).get("return", Any)

        async def handle(self: Any, *args: Any, **kwargs: Any) -> Any:
            reached.append(methods.get(name, name))
            if name == "prompt" and hasattr(self, "call_client"):
                await self.call_client()
            return sample(result)

        return handle

    body = {
        name: handler(name, fn)
        for name, fn in vars(protocol).items()
        if inspect.iscoroutinefunction(fn) and name not in SKIP
    }
    return type(f"Every{protocol.__name__}", (), body)


def names(cls: type, table: dict[str, str], key_table: str) -> dict[str, str]:
    return {name: table[key] for name, key in sent(cls, key_table).items() if key in table}


async def call_all(conn: Any, cls: type, table: dict[str, str], key_table: str, errors: dict[str, Any]) -> None:
    for name, key in sent(cls, key_table).items():
        if name == "prompt" or key not in table:
            continue
        try:
            await getattr(conn, name)(**arguments(getattr(cls, name)))
        except Exception as exc:  # (each method's outcome is the result)
            errors[table[key]] = getattr(exc, "code", repr(exc))


def agent_main() -> None:
    reached: list[str] = []
    errors: dict[str, Any] = {}
    by_name = names(ClientSideConnection, meta.AGENT_METHODS, "AGENT_METHODS")
    base = implementing(interfaces.Agent, reached, by_name)

    class Agent(base):  # type: ignore[misc,valid-type]
        def on_connect(self, conn: Any) -> None:
            self.conn = conn

        async def call_client(self) -> None:
            await call_all(self.conn, AgentSideConnection, meta.CLIENT_METHODS, "CLIENT_METHODS", errors)

        async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
            return {"reached": reached, "errors": errors}

        async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
            return None

    asyncio.run(acp.run_agent(Agent(), use_unstable_protocol=UNSTABLE))


async def client_main() -> None:
    reached: list[str] = []
    errors: dict[str, Any] = {}
    by_name = names(AgentSideConnection, meta.CLIENT_METHODS, "CLIENT_METHODS")
    base = implementing(interfaces.Client, reached, by_name)

    class Client(base):  # type: ignore[misc,valid-type]
        async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
            return {}

        async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
            return None

    command = [__file__, "agent", *sys.argv[2:]]
    async with acp.spawn_agent_process(
        Client(), sys.executable, *command, env=dict(os.environ), use_unstable_protocol=UNSTABLE
    ) as (
        conn,
        _process,
    ):
        await conn.initialize(protocol_version=1)
        await call_all(conn, ClientSideConnection, meta.AGENT_METHODS, "AGENT_METHODS", errors)
        await conn.prompt(**arguments(ClientSideConnection.prompt))
        await asyncio.sleep(0.2)  # (notifications have no answer: let the last ones arrive)
        agent = await conn.ext_method("reached", {})
    print(
        json.dumps(
            {
                "agent": sorted(set(agent["reached"])),
                "client": sorted(set(reached)),
                "agent_errors": errors,
                "client_errors": agent["errors"],
            }
        )
    )


if __name__ == "__main__":
    if sys.argv[1] == "agent":
        agent_main()
    else:
        asyncio.run(client_main())
