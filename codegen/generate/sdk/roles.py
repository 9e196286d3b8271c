"""Adopt's discovery of an SDK's role files and of what they say of themselves: the files
that route and send each side's methods, the protocol classes, the SDK's method names and
the methods it gates as unstable (``wire.py`` changes the files; see its docstring for
the roles).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .edits import absolute

ROLES = ("meta", "interface", "agent-router", "client-connection", "client-router", "agent-connection")
SETTING_KEYS = ("templates", "models", *ROLES)
SHIPPED = "python-sdk"  # the template set for the official Python SDK's idiom
METHODS_TABLE = "AGENT_METHODS"  # the meta module's table of the agent's methods
TABLES = {"agent": METHODS_TABLE, "client": "CLIENT_METHODS"}  # side -> the meta module's table of its methods
ROUTERS = {"agent-router": "agent", "client-router": "client"}  # role -> the side whose methods it routes
SENDERS = {"client-connection": "agent", "agent-connection": "client"}  # role -> the side whose methods it calls


@dataclass
class Conventions:
    """What the SDK's role files say of themselves."""

    classes: dict[str, dict[str, str]] = field(default_factory=dict)  # role -> side -> class name
    functions: dict[str, str] = field(default_factory=dict)  # router role -> its function
    known: dict[str, str] = field(default_factory=dict)  # meta key -> the SDK's Python method name
    unstable: set[str] = field(default_factory=set)  # meta keys the SDK routes with unstable=True
    routed: set[tuple[str, str]] = field(default_factory=set)  # (side, meta key) the SDK routes itself
    takers: dict[str, str] = field(default_factory=dict)  # params class -> the protocol method that takes it

    @property
    def function(self) -> str:
        """The agent router's function."""
        return self.functions.get("agent-router", "")


def _parsed(path: Path, *needles: str) -> ast.Module | None:
    """The file's tree; None where it does not parse, or holds none of ``needles`` (given any)."""
    try:
        text = path.read_text(encoding="utf-8")
        return ast.parse(text) if not needles or any(n in text for n in needles) else None
    except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
        return None


def _key(node: ast.AST, table: str = METHODS_TABLE) -> str | None:
    """``"session_fork"`` of ``AGENT_METHODS["session_fork"]`` (of ``table``)."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == table:
        if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            return node.slice.value
    return None


def _name(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _name(node.value)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.rsplit(".", 1)[-1]
    return None


def _imports_from(tree: ast.Module, here: str, module: str, name: str) -> bool:
    """Whether module ``here`` imports ``name`` from ``module`` (relatively or not)."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            if absolute(here, node.level, node.module) == module:
                return True
    return False


def _routes(fn: ast.FunctionDef, table: str = METHODS_TABLE) -> list[ast.Call]:
    return [
        c
        for c in ast.walk(fn)
        if isinstance(c, ast.Call)
        and isinstance(c.func, ast.Attribute)
        and c.func.attr in ("route_request", "route_notification")
        and c.args
        and _key(c.args[0], table)
    ]


def _named(fn: ast.FunctionDef, table: str) -> set[str]:
    """The meta keys a function names in any way (a route of its own making, say)."""
    return {key for node in ast.walk(fn) if (key := _key(node, table))}


def _sends(cls: ast.ClassDef, table: str = METHODS_TABLE) -> dict[str, str]:
    """A class's methods that name a method of ``table``: Python name -> meta key."""
    return {
        fn.name: key
        for fn in cls.body
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
        for c in ast.walk(fn)
        if (key := _key(c, table))
    }


def _takers(interface: ast.Module | None) -> dict[str, str]:
    """Params class -> the protocol method that says it takes it (``@param_model(NewSessionRequest)``)."""
    out: dict[str, str] = {}
    for cls in (n for n in (interface.body if interface else ()) if isinstance(n, ast.ClassDef)):
        for fn in cls.body:
            if not isinstance(fn, ast.AsyncFunctionDef | ast.FunctionDef):
                continue
            for d in fn.decorator_list:
                if isinstance(d, ast.Call) and len(d.args) == 1 and not d.keywords and (c := _name(d.args[0])):
                    out.setdefault(c, fn.name)
    return out


def _router_function(router: ast.Module | None, table: str) -> ast.FunctionDef | None:
    fns = (n for n in (router.body if router else ()) if isinstance(n, ast.FunctionDef) and _routes(n, table))
    return next(fns, None)


def conventions(files: Mapping[str, Path]) -> Conventions:
    """The SDK's class and function names, method names and unstable methods, from its files."""
    out = Conventions()
    interface = _parsed(files["interface"]) if "interface" in files else None
    protocols = [
        n.name
        for n in (interface.body if interface else ())
        if isinstance(n, ast.ClassDef) and any(_name(b) == "Protocol" for b in n.bases)
    ]
    out.takers = _takers(interface)
    handlers: dict[str, str] = {}  # side -> the protocol class of its handler
    for role, side in ROUTERS.items():
        table = TABLES[side]
        fn = _router_function(_parsed(files[role]) if role in files else None, table)
        if fn is None:
            continue
        out.functions[role] = fn.name
        out.routed |= {(side, key) for key in _named(fn, table)}
        for call in _routes(fn, table):
            key, attr = _key(call.args[0], table), call.args[3] if len(call.args) > 3 else None
            if key and isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                out.known.setdefault(key, attr.value)
            if key and any(k.arg == "unstable" and getattr(k.value, "value", None) is True for k in call.keywords):
                out.unstable.add(key)
        handler = fn.args.args[0] if fn.args.args else None
        if (protocol := _name(handler.annotation) if handler is not None else None) in protocols:
            handlers[side] = protocol
    if "agent" in handlers:
        others = [n for n in protocols if n != handlers["agent"]]
        # the client's protocol: its router's, else the one other protocol class beside the agent's
        client = handlers.get("client") or (others[0] if len(others) == 1 else None)
        out.classes["interface"] = {"agent": handlers["agent"], **({"client": client} if client else {})}
    for role, side in SENDERS.items():
        connection = _parsed(files[role]) if role in files else None
        table = TABLES[side]
        classes = [n for n in (connection.body if connection else ()) if isinstance(n, ast.ClassDef)]
        if senders := [n for n in classes if _sends(n, table)]:
            sender = max(senders, key=lambda n: len(_sends(n, table)))
            out.classes[role] = {side: sender.name}
            for name, key in _sends(sender, table).items():
                out.known.setdefault(key, name)
    return out
