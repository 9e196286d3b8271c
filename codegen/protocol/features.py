"""Feature selection: keep what the enabled features allow, prune the rest.

Items the session-archive RFD adds carry ``"x-feature": "<name>"``: whole definitions,
single properties, or single union variants. Generating without a feature removes
those items (the stable surface); generating with it keeps them and prefixes their
description with an UNSTABLE notice, as upstream does for its unstable items.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import Problem, SchemaError, pointer
from ..schema_terms import (
    DEFS,
    FEATURE_KEY,
    UNION_KEYWORDS,
    copy_json,
    iter_refs,
    method_sections,
    ref_target,
    schema_nodes,
    sides_of,
)
from .load import VersionSources


def unstable_notice(feature: str) -> str:
    return f"**UNSTABLE** (feature `{feature}`): not part of the stable protocol yet; it may change or be removed."


@dataclass(frozen=True)
class SelectedMethod:
    name: str
    key: str
    side: str
    feature: str | None


@dataclass(frozen=True)
class Selection:
    """One protocol version after feature selection; still plain JSON Schema."""

    version: int
    defs: dict[str, Any]
    def_files: dict[str, str]
    methods: tuple[SelectedMethod, ...]
    features: tuple[str, ...]
    declared_features: dict[str, str]


UPSTREAM_NOTICE = "**UNSTABLE**"


def _with_notice(node: dict[str, Any]) -> None:
    feature = node.get(FEATURE_KEY)
    if feature:
        text = node.get("description", "")
        # Upstream's own unstable items (2026-11's archive types) open with a bare notice
        # paragraph: ours, naming the feature, takes its place rather than doubling it.
        head, _, rest = text.partition("\n\n")
        if head.strip() == UPSTREAM_NOTICE:
            text = rest
        node["description"] = unstable_notice(feature) + ("\n\n" + text if text else "")


def _gated_off(node: Any, enabled: frozenset[str]) -> bool:
    return isinstance(node, dict) and node.get(FEATURE_KEY, None) not in (None, *enabled)


@dataclass(frozen=True)
class GatedOff:
    """What the features that are off mark in a version's schema documents: read from the
    documents themselves, since a base too old for a feature has no version built with it."""

    definitions: frozenset[str]
    methods: frozenset[tuple[str, str]]  # (wire name, side) of the definitions that carry one
    properties: frozenset[str]  # property names, in any definition


def gated_off(schemas: Iterable[dict[str, Any]], enabled: Iterable[str]) -> GatedOff:
    on = frozenset(enabled)
    definitions, methods, properties = set(), set(), set()
    for doc in schemas:
        for name, definition in doc.get(DEFS, {}).items():
            if _gated_off(definition, on):
                definitions.add(name)
                if isinstance(definition.get("x-method"), str):
                    methods |= {(definition["x-method"], side) for side in sides_of(definition.get("x-side"))}
            for path, node in schema_nodes(definition):
                if _gated_off(node, on) and len(path) > 1 and path[-2] == "properties" and isinstance(path[-1], str):
                    properties.add(path[-1])
    return GatedOff(frozenset(definitions), frozenset(methods), frozenset(properties))


def _prune(schema: dict[str, Any], enabled: frozenset[str]) -> dict[str, Any]:
    """Drop gated properties and variants inside one definition, in place; returns it."""
    for _, node in schema_nodes(schema):
        props = node.get("properties")
        if isinstance(props, dict):
            node["properties"] = {k: v for k, v in props.items() if not _gated_off(v, enabled)}
            if "required" in node:
                node["required"] = [r for r in node["required"] if r in node["properties"] or r not in props]
        for key in UNION_KEYWORDS:
            if isinstance(node.get(key), list):
                node[key] = [v for v in node[key] if not _gated_off(v, enabled)]
        # The kept members are walked after this, so their own members are pruned too.
        for member in [*(node["properties"].values() if isinstance(props, dict) else ()), *_variants(node)]:
            if isinstance(member, dict):
                _with_notice(member)
    return schema


def _variants(node: dict[str, Any]) -> list[Any]:
    return [v for key in UNION_KEYWORDS if isinstance(node.get(key), list) for v in node[key]]


def select(sources: VersionSources, enabled: frozenset[str]) -> Selection:
    meta = sources.meta.data
    declared = dict(meta.get("features", {}))
    defs: dict[str, Any] = {}
    files: dict[str, str] = {}
    for src in sources.schemas:
        for name, schema in src.data[DEFS].items():
            files[name] = src.name
            if schema.get(FEATURE_KEY, None) not in (None, *enabled):
                continue
            pruned = _prune(copy_json(schema), enabled)
            _with_notice(pruned)
            defs[name] = pruned

    problems = []
    for name, schema in defs.items():
        for path, ref in iter_refs(schema, (DEFS, name)):
            target = ref_target(ref)
            if target is not None and target not in defs:
                problems.append(
                    Problem(
                        files[name],
                        pointer(*path),
                        f"uses {target}, which is pruned without its feature; mark this item with the same x-feature",
                    )
                )
    if problems:
        raise SchemaError(problems)

    methods = []
    for section, side in method_sections(meta):
        for key, method in sorted(meta.get(section, {}).items()):
            carriers = [s for s in defs.values() if s.get("x-method") == method and side in sides_of(s.get("x-side"))]
            if not carriers:
                continue  # every type of the method is gated off
            # Kept definitions still carry their own x-feature: the method's feature.
            feature = next((c[FEATURE_KEY] for c in carriers if c.get(FEATURE_KEY)), None)
            methods.append(SelectedMethod(method, key, side, feature))
    return Selection(
        version=int(meta["version"]),
        defs=dict(sorted(defs.items())),
        def_files=files,
        methods=tuple(methods),
        features=tuple(sorted(f for f in enabled if f in declared)),
        declared_features=declared,
    )
