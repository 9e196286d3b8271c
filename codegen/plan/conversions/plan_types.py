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


@dataclass(frozen=True)
class Fill:
    """A target-only field set to ``value`` when the written ``when`` field is non-null."""

    key: str
    when: str
    value: Code


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
    kind: Literal["object", "union"]
    cls: str
    function: str
    bases: tuple[str, ...] = ()
    fields: tuple[ConvField, ...] = ()
    union: Code | None = None
    # Effective over the class hierarchy (a subclass's hooks replace its base's).
    all_fields: tuple[ConvField, ...] = ()
    fills: tuple[Fill, ...] = ()
    invariants: tuple[Invariant, ...] = ()
    collisions: tuple[str, ...] = ()
    extra_allowed: bool = True

    @property
    def required_in_target(self) -> tuple[ConvField, ...]:
        return tuple(f for f in self.all_fields if f.target_requires)

    @property
    def nulls_to_absent(self) -> tuple[ConvField, ...]:
        return tuple(f for f in self.all_fields if f.null_to_absent and not f.target_requires)

    @property
    def checks(self) -> bool:
        return bool(self.required_in_target or self.nulls_to_absent or self.invariants or self.collisions)


@dataclass(frozen=True)
class MethodMap:
    version: int
    name: str
    kind: str
    params: str
    result: str | None


@dataclass(frozen=True)
class ConversionPlan:
    source: Source
    converters: tuple[Converter, ...]
    methods: tuple[MethodMap, ...]

    versions: tuple[int, ...] = VERSIONS
    directions: tuple[tuple[int, int], ...] = ((1, 2), (2, 1))

    def direction(self, source: int, target: int) -> tuple[Converter, ...]:
        return tuple(c for c in self.converters if c.source == source and c.target == target)
