"""Dispatch plan: what the generated ``dispatch.py`` routes and checks, derived from the IR.

The dispatch template reads these records instead of raw JSON. Everything the router
enforces beyond the models comes from the schema's own markers, found anywhere inside
a method's params (through object references and array items):

- a property's ``x-feature``: while that feature is off at runtime, a non-null value is
  refused (``-32602``), as if the property did not exist;
- an enum with values of its own (``SessionArchiveFilter``): an open enum's models keep
  any string so that proxies can forward it, and a closed enum's ``Literal`` includes
  values that belong to a feature; the agent-side router accepts only the values it
  knows, less those whose feature is off. Never a fallback to a default.

Union members are not walked: a value's shape there depends on which member matched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..protocol.ir import Field, Method, Protocol, TypeDef, TypeExpr

# The router is the agent's inbound side: methods an agent handles, plus any the
# protocol defines for both ends.
ROUTED_SIDES = ("agent", "protocol")

# A path from the params object: wire property names, ``None`` for "every item of the list".
Path = tuple[str | None, ...]


@dataclass(frozen=True)
class GatedField:
    """A property that exists only with ``feature``."""

    path: Path
    feature: str


@dataclass(frozen=True)
class EnumField:
    """A property typed by an enum whose values the router checks itself."""

    path: Path
    enum: str
    values: tuple[tuple[Any, str | None], ...]  # (value, the feature that adds it)


@dataclass(frozen=True)
class Route:
    method: Method
    params: TypeDef
    result: TypeDef | None
    gated_fields: tuple[GatedField, ...]
    enum_fields: tuple[EnumField, ...]

    @property
    def summary(self) -> str:
        """Docstring text of the handler method."""
        text = f"Handle the `{self.method.name}` {self.method.kind}."
        if self.method.feature:
            text += f" Routed only when the router enables `{self.method.feature}`."
        if self.params.description:
            text += "\n\n" + self.params.description
        return text


def _checked_enum(target: TypeDef) -> bool:
    return target.kind == "enum" and (target.open or any(v.feature for v in target.values))


class _Walker:
    def __init__(self, protocol: Protocol) -> None:
        self.types = protocol.types
        self.gated: list[GatedField] = []
        self.enums: list[EnumField] = []

    def fields(self, typedef: TypeDef, seen: frozenset[str]) -> list[Field]:
        """Own fields plus those of the object types it extends (``allOf``)."""
        out: list[Field] = []
        for base in typedef.bases:
            parent = self.types.get(base)
            if parent is not None and parent.kind == "object" and base not in seen:
                out.extend(self.fields(parent, seen | {base}))
        names = {f.name for f in typedef.fields}
        return [f for f in out if f.name not in names] + list(typedef.fields)

    def object(self, name: str, path: Path, seen: frozenset[str]) -> None:
        typedef = self.types.get(name)
        if typedef is None or typedef.kind != "object" or name in seen:
            return  # unknown, not an object, or a cycle: nothing (more) to find
        for field in self.fields(typedef, seen | {name}):
            here = (*path, field.name)
            if field.feature:
                self.gated.append(GatedField(here, field.feature))
            self.expr(field.type, here, seen | {name})

    def expr(self, expr: TypeExpr, path: Path, seen: frozenset[str]) -> None:
        if expr.kind == "array" and expr.items is not None:
            self.expr(expr.items, (*path, None), seen)
        elif expr.kind == "ref" and expr.ref is not None:
            target = self.types.get(expr.ref)
            if target is None:
                return
            if target.kind == "alias" and target.target is not None and expr.ref not in seen:
                self.expr(target.target, path, seen | {expr.ref})
            elif _checked_enum(target):
                values = tuple((v.value, v.feature) for v in target.values)
                self.enums.append(EnumField(path, target.name, values))
            elif target.kind == "object":
                self.object(target.name, path, seen)
        elif expr.kind == "object":  # inline properties
            for field in expr.fields:
                here = (*path, field.name)
                if field.feature:
                    self.gated.append(GatedField(here, field.feature))
                self.expr(field.type, here, seen)


def routes(protocol: Protocol) -> tuple[Route, ...]:
    """The routed methods of one protocol version, sorted by wire name."""
    out = []
    for method in sorted(protocol.methods, key=lambda m: m.name):
        if method.side not in ROUTED_SIDES:
            continue
        params = protocol.types[method.params]
        walker = _Walker(protocol)
        walker.object(params.name, (), frozenset())
        out.append(
            Route(
                method=method,
                params=params,
                result=protocol.types[method.result] if method.result else None,
                gated_fields=tuple(walker.gated),
                enum_fields=tuple(walker.enums),
            )
        )
    return tuple(out)
