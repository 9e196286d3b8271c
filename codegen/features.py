"""Stage 3, feature selection: keep what the enabled features allow, prune the rest.

Items the session-archive RFD adds carry ``"x-feature": "<name>"``: whole definitions,
single properties, or single union variants. Generating without a feature removes
those items (the stable surface); generating with it keeps them and prefixes their
description with an UNSTABLE notice, as upstream does for its unstable items.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from .errors import Problem, SchemaError, pointer
from .load import VersionSources
from .validate import DEFS, iter_refs, method_sections, ref_target, sides_of

FEATURE_KEY = "x-feature"


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


def _prune(node: Any, enabled: frozenset[str]) -> Any:
    """Drop gated properties and variants inside one definition (recursively)."""
    if isinstance(node, list):
        return [_prune(item, enabled) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("const", "default", "enum", "examples"):
            out[key] = value
        elif key == "properties" and isinstance(value, dict):
            kept = {}
            for prop, schema in value.items():
                if isinstance(schema, dict) and schema.get(FEATURE_KEY, None) not in (None, *enabled):
                    continue
                schema = _prune(schema, enabled)
                if isinstance(schema, dict):
                    _with_notice(schema)
                kept[prop] = schema
            out[key] = kept
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            variants = []
            for variant in value:
                if isinstance(variant, dict) and variant.get(FEATURE_KEY, None) not in (None, *enabled):
                    continue
                variant = _prune(variant, enabled)
                if isinstance(variant, dict):
                    _with_notice(variant)
                variants.append(variant)
            out[key] = variants
        else:
            out[key] = _prune(value, enabled)
    if "required" in out and isinstance(out.get("properties"), dict):
        out["required"] = [r for r in out["required"] if r in out["properties"] or r not in node.get("properties", {})]
    return out


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
            schema = _prune(copy.deepcopy(schema), enabled)
            _with_notice(schema)
            defs[name] = schema

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
