"""Run as a script in the SDK's interpreter: ``python reader.py SRC_ROOT PACKAGE.MODULE
[NAMES]``.

It imports the module as its users do and prints one JSON line describing every public
name (or, given ``NAMES``, comma-separated, those names: what another module's users
import from this one): pydantic classes (fields: attribute, wire key, required, default, type; config;
bases; own members), RootModel classes, Enum classes and type aliases, and the names its
imports bind from the SDK's own package (which the new module re-exports). Then it answers
one JSON line on stdin, a list of ``[public name, message]``, with one line of outcomes:
``["ok", dump]`` or ``["error", exception class]`` per message, the dump made as
``model_dump(mode="json", by_alias=True, exclude_unset=True, exclude_none=True)``; and a
further line, a list of module names, with the modules that do not import and why.

It imports nothing but the standard library and pydantic: the SDK's interpreter need not
have acp-codegen. Types are described as terms: ``{"ref": "module:qualname"}``,
``{"prim": "str"}`` (builtins and pydantic's scalar types by class name), ``{"lit": [...]}``,
``{"list": t}``, ``{"dict": t}``, ``{"union": [t, ...]}``, ``{"any": true}``.
"""

from __future__ import annotations

import ast
import enum
import importlib
import importlib.util
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pydantic
from pydantic import BaseModel, RootModel
from pydantic_core import PydanticUndefined, to_jsonable_python

_UNION_TYPES = (typing.Union, types.UnionType)
_SEQUENCES = (list, tuple, set, frozenset)
# What pydantic puts into a model class's own namespace: not the SDK's members.
_PYDANTIC_OWN = {
    "model_config",
    "model_fields",
    "model_computed_fields",
    "model_post_init",
    "__pydantic_decorators__",
    "__class_vars__",
    "__private_attributes__",
    "__signature__",
    "__pydantic_complete__",
    "__pydantic_core_schema__",
    "__pydantic_custom_init__",
    "__pydantic_fields__",
    "__pydantic_generic_metadata__",
    "__pydantic_parent_namespace__",
    "__pydantic_post_init__",
    "__pydantic_root_model__",
    "__pydantic_serializer__",
    "__pydantic_validator__",
    "__pydantic_fields_set__",
    "__pydantic_extra__",
    "__pydantic_private__",
    "__pydantic_computed_fields__",
    "__pydantic_setattr_handlers__",
    "__abstractmethods__",
    "_abc_impl",
    "__annotations__",
    "__annotate_func__",
    "__annotations_cache__",
    "__module__",
    "__qualname__",
    "__doc__",
    "__dict__",
    "__weakref__",
    "__firstlineno__",
    "__static_attributes__",
    "__parameters__",
    "__orig_bases__",
}


def ref(obj: Any) -> str:
    return f"{obj.__module__}:{obj.__qualname__}"


def term(tp: Any) -> dict[str, Any]:
    """A JSON description of a type annotation."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is typing.Any or tp is object:
        return {"any": True}
    if tp is None or tp is type(None):
        return {"prim": "none"}
    if origin is typing.Annotated:
        return term(args[0])
    if origin in _UNION_TYPES:
        return {"union": [term(a) for a in args]}
    if origin is typing.Literal:
        return {"lit": [to_jsonable_python(a) for a in args]}
    if origin in _SEQUENCES:
        return {"list": term(args[0]) if args else {"any": True}}
    if origin is dict:
        return {"dict": term(args[1]) if len(args) == 2 else {"any": True}}
    value = getattr(tp, "__value__", None)  # typing.TypeAliasType
    if value is not None and type(tp).__name__ == "TypeAliasType":
        return term(value)
    if isinstance(tp, type):
        if issubclass(tp, (BaseModel, enum.Enum)):
            return {"ref": ref(tp)}
        return {"prim": tp.__name__}
    return {"prim": repr(tp)}


def _json(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return to_jsonable_python(value, by_alias=True)


def _default(info: Any) -> dict[str, Any]:
    if info.default_factory is not None:
        try:
            value = info.default_factory()
        except TypeError:  # a factory that takes the validated data
            return {"factory": True}
        return {"default": _json(value), "factory": True}
    if info.default is PydanticUndefined:
        return {}
    return {"default": _json(info.default)}


def _config(cls: type[BaseModel]) -> dict[str, Any]:
    return {
        k: v if isinstance(v, (str, int, float, bool, type(None))) else repr(v) for k, v in cls.model_config.items()
    }


def _members(cls: type) -> list[dict[str, Any]]:
    """What the class body itself defines beyond fields: validators and serializers (with
    what they apply to), methods, properties and class variables."""
    fields = set(getattr(cls, "__pydantic_fields__", {}) or {})
    decorators: dict[str, Any] = {}
    infos = getattr(cls, "__pydantic_decorators__", None)
    for group in (
        "validators",
        "field_validators",
        "root_validators",
        "field_serializers",
        "model_validators",
        "model_serializers",
        "computed_fields",
    ):
        for name, decorator in (getattr(infos, group, None) or {}).items():
            decorators[name] = decorator.info  # inherited ones too: only names in the class's own body are read
    out = []
    for name, value in vars(cls).items():
        if name in _PYDANTIC_OWN or name in fields or name.startswith("__pydantic"):
            continue
        info = decorators.get(name)
        if info is not None:
            out.append(
                {
                    "name": name,
                    "kind": type(info).__name__.removesuffix("DecoratorInfo"),  # FieldValidator, ModelValidator...
                    "fields": list(getattr(info, "fields", ())),
                    "mode": getattr(info, "mode", None),
                    "check_fields": getattr(info, "check_fields", None),
                }
            )
        else:
            out.append({"name": name, "kind": type(value).__name__})
    return out


def model(cls: type[BaseModel]) -> dict[str, Any]:
    described: dict[str, Any] = {
        "kind": "root" if issubclass(cls, RootModel) else "model",
        "ref": ref(cls),
        "bases": [ref(b) for b in cls.__bases__],
        "mro": [ref(b) for b in cls.__mro__],
        "config": _config(cls),
        "members": _members(cls),
        "fields": [],
    }
    for attr, info in cls.model_fields.items():
        wire = info.validation_alias if isinstance(info.validation_alias, str) else info.alias or attr
        described["fields"].append(
            {
                "attr": attr,
                "wire": wire,
                "required": info.is_required(),
                "type": term(info.annotation),
                # A null read as "not given" without None in the type: acp-codegen's own
                # models (default-on-null = "all") say so in the field's metadata.
                "null_absent": any(getattr(m, "null_absent", False) is True for m in info.metadata),
                **_default(info),
            }
        )
    if described["kind"] == "root":
        described["root"] = term(cls.model_fields["root"].annotation)
    return described


def describe(value: Any, name: str) -> dict[str, Any] | None:
    if isinstance(value, type) and issubclass(value, BaseModel):
        if value.__module__.startswith("pydantic"):
            return None
        return {"name_is_own": value.__name__ == name, **model(value)}
    if isinstance(value, type) and issubclass(value, enum.Enum):
        if value.__module__ == "enum":
            return None
        members = [[m.name, to_jsonable_python(m.value)] for m in value]
        return {"kind": "enum", "ref": ref(value), "name_is_own": value.__name__ == name, "members": members}
    if isinstance(value, type):
        return {"kind": "class", "ref": ref(value), "name_is_own": value.__name__ == name, "members": _members(value)}
    origin = typing.get_origin(value)
    if origin is not None or type(value).__name__ == "TypeAliasType":
        return {"kind": "alias", "type": term(value)}
    return None


def public_names(module: types.ModuleType) -> list[str]:
    """``__all__`` where the module has one; else the names its own top-level statements
    define, and those of the modules it star-imports."""
    if isinstance(getattr(module, "__all__", None), (list, tuple)):
        return [str(n) for n in module.__all__]
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names) and node.module:
            spelled = "." * node.level + node.module
            names += public_names(importlib.import_module(importlib.util.resolve_name(spelled, module.__package__)))
        elif type(node).__name__ == "TypeAlias":  # Python 3.12's `type X = ...`
            names.append(node.name.id)  # type: ignore[attr-defined]
    return [n for n in dict.fromkeys(names) if not n.startswith("_")]


def imported(module: types.ModuleType) -> dict[str, list[str]]:
    """The names the module's top-level imports bind from its own top-level package
    (``from acp._schema_base import BaseModel``): name -> [the module it comes from, its name
    there] (``""`` for ``import acp.meta as meta``). Star imports are its public names already."""
    top = module.__name__.split(".")[0]
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    found: list[tuple[str, str, str]] = []  # (name, source, original)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            spelled = "." * node.level + (node.module or "")
            source = importlib.util.resolve_name(spelled, module.__package__) if node.level else spelled
            found += [(a.asname or a.name, source, a.name) for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Import):
            found += [(a.asname, a.name, "") for a in node.names if a.asname]
    return {
        name: [source, original]
        for name, source, original in found
        if (source == top or source.startswith(top + ".")) and hasattr(module, name)
    }


def main() -> None:
    root, dotted = sys.argv[1], sys.argv[2]
    wanted = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    sys.path.insert(0, root)
    module = importlib.import_module(dotted)
    out: dict[str, Any] = {"module": dotted, "file": module.__file__, "pydantic": pydantic.VERSION, "names": {}}
    out["imported"] = imported(module)
    for name in public_names(module) if wanted is None else wanted:
        value = getattr(module, name, None)
        described = describe(value, name) if value is not None else None
        out["names"][name] = described or {"kind": "other", "repr": repr(value)[:200]}
    # The module's own classes that have no public name (bases it split off, `_Update`):
    # their members may need carrying.
    out["private"] = {
        name: model(value)
        for name, value in vars(module).items()
        if name.startswith("_")
        and isinstance(value, type)
        and issubclass(value, BaseModel)
        and value.__module__ == dotted
    }
    print(json.dumps(out, sort_keys=True), flush=True)
    line = sys.stdin.readline()
    if not line.strip():
        return
    results = []
    for name, data in json.loads(line):
        results.append(_outcome(getattr(module, name, None), data))
    print(json.dumps(results), flush=True)
    # Then, optionally, a list of the SDK's modules to import (those adopt wired): the
    # ones that fail, with their error.
    line = sys.stdin.readline()
    if not line.strip():
        return
    failed = {}
    for name in json.loads(line):
        try:
            importlib.import_module(name)
        except Exception as exc:  # any failure to import is the answer
            failed[name] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(failed), flush=True)


def _outcome(tp: Any, data: Any) -> list[Any]:
    options = {"mode": "json", "by_alias": True, "exclude_unset": True, "exclude_none": True}
    try:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return ["ok", tp.model_validate(data).model_dump(**options)]  # type: ignore[arg-type]
        adapter = pydantic.TypeAdapter(tp)
        return ["ok", adapter.dump_python(adapter.validate_python(data), **options)]  # type: ignore[arg-type]
    except Exception as exc:  # the outcome is the data: which exception, not a traceback
        return ["error", type(exc).__name__]


if __name__ == "__main__":
    main()
