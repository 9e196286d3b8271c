"""What the conversions stage hands to ``templates/convert.py.jinja``: one converter per
shared type and direction, and the methods both versions share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...code_text import Code
from ...protocol.load import Source
from .declarations import VERSIONS


@dataclass(frozen=True)
class ConvField:
    """One field of a converter: read under ``source``, written under ``target``."""

    attr: str  # attribute of the generated converter class (internal)
    source: str  # wire name read
    target: str | None  # wire name written; None: exists in the source version only, dropped
    annotation: Code  # checks the source value (and applies the value rule)
    required: bool  # in the source version
    target_requires: bool  # the target requires a value the source may omit or null
    null_to_absent: bool  # the target cannot say null: a null is omitted (null and omission are equivalent)
    read: tuple[str, ...] = ()  # a path into nested source objects the value is read from (else ``source``)
    nest: tuple[str, ...] = ()  # a path into nested target objects the value is written to (else ``target``)
    supply: str | None = None  # the caller's supply key that gives the value where the source has none
    # The target reads an invalid value as its default (x-deserialize-default-on-error): one the
    # value rule refuses is omitted (``omitted``: the field; else the item, where the target
    # skips invalid items), so LOSSY lists it.
    omitted: bool = False
    lossy: bool = False


@dataclass(frozen=True)
class Fill:
    """A target-only field (at ``path`` into nested objects) set to ``value`` where it is
    absent and, where ``when`` is given, that written field is non-null."""

    path: tuple[str, ...]
    when: str | None
    value: Code

    @property
    def key(self) -> str:
        return self.path[0]


@dataclass(frozen=True)
class Supplied:
    """A target-only field (at ``path``) the caller supplies (``supply`` key), else read from
    the source at ``read`` (where given); the target requires it."""

    attr: str  # holds the value read from the source (``read``), if any
    path: tuple[str, ...]
    supply: str
    read: tuple[str, ...] = ()


@dataclass(frozen=True)
class Invariant:
    """Source-version rule: when ``if_attr`` is non-null, ``then_attr`` must be too."""

    if_attr: str
    then_attr: str
    then_wire: str
    reason: str


@dataclass(frozen=True)
class Converter:
    """One shared type, one direction."""

    source: int
    target: int
    source_type: str
    target_type: str
    kind: Literal["object", "union", "function"]
    cls: str
    function: str
    bases: tuple[str, ...] = ()
    fields: tuple[ConvField, ...] = ()
    union: Code | None = None  # union: the variants; function: the function's name in the runtime
    # union: the discriminator the variants are told by, and the tags that cannot convert (-> why)
    tag: str | None = None
    refused_tags: tuple[tuple[str, str], ...] = ()
    tags: tuple[str, ...] = ()  # union: the tags that convert
    typed: bool = True  # has a typed function (its source values are generated models)
    tagged: tuple[tuple[Code, str], ...] = ()  # union: (converter, tag) where each variant has its own tag
    # Effective over the class hierarchy (a subclass's hooks replace its base's).
    all_fields: tuple[ConvField, ...] = ()
    fills: tuple[Fill, ...] = ()
    supplied: tuple[Supplied, ...] = ()
    invariants: tuple[Invariant, ...] = ()
    collisions: tuple[str, ...] = ()
    extra_allowed: bool = True

    @property
    def required_in_target(self) -> tuple[ConvField, ...]:
        return tuple(f for f in self.all_fields if f.target_requires)

    @property
    def omitted(self) -> tuple[ConvField, ...]:
        """Fields a value rule's refusal omits (the attribute is still made, unset)."""
        return tuple(f for f in self.all_fields if f.omitted)

    @property
    def nulls_to_absent(self) -> tuple[ConvField, ...]:
        return tuple(f for f in self.all_fields if f.null_to_absent and not f.target_requires)

    @property
    def checks(self) -> bool:
        return bool(
            self.required_in_target
            or self.nulls_to_absent
            or self.invariants
            or self.collisions
            or self.supplied
            or self.supplies
        )

    @property
    def supplies(self) -> tuple[ConvField, ...]:
        """Fields both versions have whose value the caller supplies where the source has none."""
        return tuple(f for f in self.all_fields if f.supply)

    @property
    def fills_only(self) -> bool:
        """Reshaped by fills of a single key on a condition alone (their plain serializer)."""
        return not (self.supplied or self.moved or self.supplies) and all(
            fl.when is not None and len(fl.path) == 1 for fl in self.fills
        )

    @property
    def moved(self) -> tuple[ConvField, ...]:
        """Fields written into nested objects of the target."""
        return tuple(f for f in self.all_fields if f.nest)

    @property
    def reshapes(self) -> bool:
        return bool(self.fills or self.supplied or self.moved or self.supplies)


@dataclass(frozen=True)
class MethodMap:
    version: int
    name: str
    kind: str
    params: str
    result: str | None
    counterpart: str  # the method's name in the other version


@dataclass(frozen=True)
class ConversionPlan:
    source: Source
    converters: tuple[Converter, ...]
    methods: tuple[MethodMap, ...]
    refused_methods: tuple[tuple[int, str, str], ...] = ()  # (version, method, why): one version only
    lossy: tuple[tuple[int, int, str, tuple[str, ...]], ...] = ()  # (source, target, type, wire fields or "*")

    versions: tuple[int, ...] = VERSIONS
    directions: tuple[tuple[int, int], ...] = ((1, 2), (2, 1))

    def direction(self, source: int, target: int) -> tuple[Converter, ...]:
        return tuple(c for c in self.converters if c.source == source and c.target == target)

    @property
    def first_kinds(self) -> tuple[MethodMap, ...]:
        """Each method in one kind: the request where it is a request and a notification."""
        first: dict[tuple[int, str], MethodMap] = {}
        for m in self.methods:
            if first.setdefault((m.version, m.name), m).kind != "request" and m.kind == "request":
                first[(m.version, m.name)] = m
        return tuple(first.values())

    @property
    def other_kinds(self) -> tuple[MethodMap, ...]:
        """The methods both versions define in a second kind as well (mcp/message's notification)."""
        first = set(self.first_kinds)
        return tuple(m for m in self.methods if m not in first)
