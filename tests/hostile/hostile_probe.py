"""Run in a fresh interpreter: import a generated package and report what it holds, as JSON.

``python -I hostile_probe.py <parent dir> <package name>``. Reports every model, enum and alias
of every protocol version (docstrings, fields with alias, description, title, default,
examples, pattern and the Literal values of the annotation), the method tables and the
package's FEATURES, so that the test can compare them with the schema text it put in.
"""

from __future__ import annotations

import enum
import importlib
import json
import sys
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined


def literals(annotation: Any) -> list[Any]:
    found: list[Any] = []
    value = getattr(annotation, "__value__", None)  # TypeAliasType
    if value is not None:
        return literals(value)
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    for arg in typing.get_args(annotation):
        found += literals(arg)
    return found


def jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, enum.Enum):
        return value.value
    return value


def describe_model(cls: type[BaseModel]) -> dict[str, Any]:
    fields = {}
    for name, info in cls.model_fields.items():
        pattern = next((getattr(m, "pattern", None) for m in info.metadata if getattr(m, "pattern", None)), None)
        fields[name] = {
            "alias": info.alias,
            "description": info.description,
            "title": info.title,
            "examples": info.examples,
            "required": info.is_required(),
            "default": None if info.default is PydanticUndefined else jsonable(info.default),
            "literals": literals(info.annotation),
            "pattern": pattern,
        }
    return {"kind": "model", "doc": cls.__doc__, "fields": fields}


def describe(obj: Any) -> dict[str, Any] | None:
    if isinstance(obj, type) and issubclass(obj, BaseModel) and obj is not BaseModel:
        return describe_model(obj)
    if isinstance(obj, type) and issubclass(obj, enum.Enum) and obj is not enum.Enum:
        return {"kind": "enum", "doc": obj.__doc__, "values": [m.value for m in obj]}
    if type(obj).__name__ == "TypeAliasType":
        return {"kind": "alias", "literals": literals(obj)}
    return None


def main(parent: str, package: str) -> None:
    sys.path.insert(0, parent)
    pkg = importlib.import_module(package)
    # Every module of the package imports (dispatch, router, convert...), not only those read below.
    for module in sorted(Path(parent, package).rglob("*.py")):
        dotted = ".".join((package, *module.relative_to(Path(parent, package)).with_suffix("").parts))
        importlib.import_module(dotted.removesuffix(".__init__"))
    report: dict[str, Any] = {"features": sorted(pkg.FEATURES), "versions": {}}
    for version in pkg.PROTOCOL_VERSIONS:
        models = importlib.import_module(f"{package}.v{version}.models")
        methods = importlib.import_module(f"{package}.v{version}.methods")
        types = {}
        # Plain aliases (`X: TypeAlias = ...`) are typing objects: known by their annotation.
        annotations = vars(models).get("__annotations__", {})
        aliases = {n for n, a in annotations.items() if a in ("TypeAlias", typing.TypeAlias)}
        for name in dir(models):
            if name in aliases:
                types[name] = {"kind": "alias", "literals": literals(getattr(models, name))}
                continue
            if getattr(getattr(models, name), "__module__", models.__name__) != models.__name__:
                continue  # imported, not defined here
            described = describe(getattr(models, name))
            if described is not None:
                types[name] = described
        routes = {}
        if Path(parent, package, f"v{version}", "dispatch.py").exists():
            dispatch = importlib.import_module(f"{package}.v{version}.dispatch")
            for name, route in dispatch.ROUTES.items():
                routes[name] = {
                    "gated": [list(g.path) for g in route.gated_fields],
                    "enums": [[v for v, _ in e.values] for e in route.enum_fields],
                }
        report["versions"][str(version)] = {
            "routes": routes,
            "types": types,
            "methods": [
                {"name": m.name, "key": m.key, "feature": m.feature, "params": m.params.__name__}
                for m in methods.METHODS
            ],
        }
    json.dump(report, sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
