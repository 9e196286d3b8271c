"""Dispatch plan: what the generated ``dispatch.py`` routes, derived from the IR.

The dispatch template reads these records instead of raw JSON. Everything the router
enforces beyond the models comes from the schema's own markers: a method's or
property's ``x-feature`` decides what the runtime gate hides, and an open enum
(``"exclude" | "include" | "only" | string``) names the values an agent understands;
any other string is kept by the models (so proxies can forward it) but refused by the
agent-side router with ``-32602``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .ir import Field, Method, Protocol, TypeDef

# The router is the agent's inbound side: methods an agent handles, plus any the
# protocol defines for both ends.
ROUTED_SIDES = ("agent", "protocol")


@dataclass(frozen=True)
class GatedField:
    """A params property that exists only with ``feature``; non-null is refused while it is off."""

    name: str  # wire name
    py_name: str
    feature: str


@dataclass(frozen=True)
class EnumField:
    """A params property typed by an open enum: only the listed values are accepted."""

    name: str
    py_name: str
    enum: str
    values: tuple[Any, ...]
    feature: str | None  # the property's own feature, if any (checked only when enabled)


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
        kind = "notification" if self.method.kind == "notification" else "request"
        text = f"Handle the `{self.method.name}` {kind}."
        if self.method.feature:
            text += f" Routed only when the router enables `{self.method.feature}`."
        if self.params.description:
            text += "\n\n" + self.params.description
        return text


def _open_enum(protocol: Protocol, field: Field) -> TypeDef | None:
    if field.type.kind != "ref" or field.type.ref is None:
        return None
    target = protocol.types.get(field.type.ref)
    if target is None or target.kind != "enum" or not target.open:
        return None
    return target


def routes(protocol: Protocol) -> tuple[Route, ...]:
    """The routed methods of one protocol version, sorted by wire name."""
    out = []
    for method in sorted(protocol.methods, key=lambda m: m.name):
        if method.side not in ROUTED_SIDES:
            continue
        params = protocol.types[method.params]
        gated = tuple(GatedField(f.name, f.py_name, f.feature) for f in params.fields if f.feature)
        enums = []
        for f in params.fields:
            target = _open_enum(protocol, f)
            if target is not None:
                values = tuple(v.value for v in target.values)
                enums.append(EnumField(f.name, f.py_name, target.name, values, f.feature))
        out.append(
            Route(
                method=method,
                params=params,
                result=protocol.types[method.result] if method.result else None,
                gated_fields=gated,
                enum_fields=tuple(enums),
            )
        )
    return tuple(out)
