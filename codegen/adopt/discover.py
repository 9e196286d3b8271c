"""Adopt's discovery of an SDK's role files (``meta``, ``interface``, ``agent-router``,
``client-connection``: see ``generate.sdk.wire``), found by what they hold, and the
``[tool.acp-codegen.v<N>.sdk]`` table adopt writes from them. ``generate`` reads the table
and wires; it never searches."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..generate.sdk.edits import module_of
from ..generate.sdk.roles import (
    METHODS_TABLE,
    ROLES,
    ROUTERS,
    SENDERS,
    SHIPPED,
    TABLES,
    _imports_from,
    _name,
    _parsed,
    _routes,
    _sends,
)
from ..generate.sdk.wire import _checked


def find_roles(schema_module: Path, src: Path) -> dict[str, Path]:
    """The role files of the SDK package a schema module belongs to (see the module's
    docstring); the roles it has no file for are left out."""
    top = src / module_of(schema_module, src).split(".")[0]
    here = schema_module.parent
    trees = {
        p: t
        for p in sorted(top.rglob("*.py"), key=lambda p: (len(p.relative_to(top).parts), p.as_posix()))
        # (only the files that can hold a role are parsed: not the generated models, say)
        if p != schema_module and "__pycache__" not in p.parts and (t := _parsed(p, *TABLES.values(), "Protocol"))
    }

    def distance(p: Path) -> int:  # directories between the file and the schema module
        common = len([a for a, b in zip(p.parent.parts, here.parts, strict=False) if a == b])
        return len(p.parent.parts) + len(here.parts) - 2 * common

    metas = [
        p
        for p, t in trees.items()
        if {METHODS_TABLE, "PROTOCOL_VERSION"}
        <= {t.id for n in t.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    ]
    if not metas:
        return {}
    meta = min(metas, key=distance)
    found = {"meta": meta}
    meta_module = module_of(meta, src)
    for role, side in ROUTERS.items():
        table = TABLES[side]
        users = {p: t for p, t in trees.items() if _imports_from(t, module_of(p, src), meta_module, table)}
        for path, tree in users.items():
            fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and _routes(n, table)), None)
            if fn is not None:
                found[role] = path
                handler = fn.args.args[0] if fn.args.args else None
                protocol = _name(handler.annotation) if handler is not None else None
                home = next((p for p, t in trees.items() if _defines_protocol(t, protocol)), None)
                if home is not None:
                    found.setdefault("interface", home)
                break
    for role, side in SENDERS.items():
        table, senders = TABLES[side], 0
        users = {p: t for p, t in trees.items() if _imports_from(t, module_of(p, src), meta_module, table)}
        for path, tree in users.items():
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and (count := len(_sends(node, table))) > senders:
                    found[role], senders = path, count  # the class that sends the most
    return {role: found[role] for role in ROLES if role in found}


def _defines_protocol(tree: ast.Module, name: str | None) -> bool:
    return any(
        isinstance(n, ast.ClassDef) and n.name == name and any(_name(b) == "Protocol" for b in n.bases)
        for n in tree.body
    )


def setting(found: Mapping[str, Path], written: Mapping[str, str], models: Path, root: Path) -> dict[str, str]:
    """``[tool.acp-codegen.v<N>.sdk]``: what the table says (the user's), else what was found;
    ``models``, the SDK's module of the models, which its files import them from."""
    _checked(written)
    out = {"templates": written.get("templates", SHIPPED), "models": models.relative_to(root).as_posix()}
    for role in ROLES:
        if role in written:
            out[role] = written[role]
        elif role in found:
            out[role] = found[role].relative_to(root).as_posix()
    return out


def version_modules(schema_module: Path, src: Path, versions: Iterable[int], out: Path) -> dict[int, Path]:
    """The SDK's schema modules of other protocol versions: a module named as the adopted
    one in a ``v<N>`` package of the same SDK (``acp/experimental/v2/schema.py``), outside
    the generated output."""
    top = src / module_of(schema_module, src).split(".")[0]
    mine, out = schema_module.resolve(), out.resolve()
    candidates = sorted(
        p
        for p in top.rglob(schema_module.name)
        if "__pycache__" not in p.parts and p.resolve() != mine and not p.resolve().is_relative_to(out)
    )
    found = {}
    for version in versions:
        hits = [p for p in candidates if f"v{version}" in p.relative_to(top).parts[:-1]]
        if hits:
            found[version] = hits[0]
    return found
