"""Overlay: lay the archive fragments over a full upstream ACP schema.

A *base* is an upstream ``schema.json`` or ``schema.unstable.json`` with, optionally,
its sibling ``meta.json`` / ``meta.unstable.json``. What the fragments lay over it is
what they mark with ``x-feature``; shapes are compared normalised, ignoring prose
(descriptions, titles, defaults, examples):

- a marked item (type, property, variant) the base lacks is added; one the base has takes
  the fragment's feature (so feature selection gates it), and must agree with it: a
  difference is an error naming both places;
- unmarked context (upstream types copied into the fragments) defers to the base: the
  base's definition is used, a difference is a note; a fragment type the base lacks is
  added as it is, unless it carries a feature's items: then the base is a release older
  than what the feature extends, and the type is the feature's (gated by it), as is the
  fragment-only context that needs it, or that only the feature's types use, or nothing
  does. Without the feature, such a release generates its own protocol; with it, the run
  stops naming the types the release lacks;
- methods are the base meta's plus the fragment meta's; features are the fragment's.

The result is an ordinary ``VersionSources``: the base document, carrying the types it
shares with the fragments (now extended), followed by the fragments, carrying only
their new types. Later stages see one consistent set of definitions.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import Problem, SchemaError, fail, pointer
from ..resources import display_name
from ..schema_terms import (
    DEFS,
    FEATURE_KEY,
    METHODS_SUFFIX,
    UNION_KEYWORDS,
    copy_json,
    features_inside,
    is_side,
    iter_refs,
    method_sections,
    ref_target,
    schema_nodes,
    sides_of,
    variants_key,
)
from .ir import expr, shape
from .load import Source, VersionSources, read_json
from .method_inference import infer_method_types
from .validate import validate_version

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def meta_path(schema_file: Path) -> Path:
    """``schema.unstable.json`` pairs with ``meta.unstable.json``, ``schema.json`` with ``meta.json``."""
    name = schema_file.name
    return schema_file.with_name("meta" + name[len("schema") :] if name.startswith("schema") else "meta.json")


def _method_key(method: str) -> str:
    """``document/didOpen`` -> ``document_did_open``; ``$/cancel_request`` -> ``cancel_request``."""
    return "_".join(_CAMEL.sub("_", part).lower() for part in method.split("/") if part and part != "$")


def _meta_from_markers(schema: Source, version: int) -> dict[str, Any]:
    """A base without a meta file: its methods are what its ``x-method``/``x-side`` markers say."""
    sections: dict[str, dict[str, str]] = {}
    for definition in schema.data.get(DEFS, {}).values():
        if not isinstance(definition, dict) or not isinstance(definition.get("x-method"), str):
            continue
        side = definition.get("x-side")
        if is_side(side):  # sides this tool does not know get a table too (see validate.SIDE_NAME)
            for one in sides_of(side):
                sections.setdefault(one + METHODS_SUFFIX, {})[_method_key(definition["x-method"])] = definition[
                    "x-method"
                ]
    return {"version": version, **{k: dict(sorted(v.items())) for k, v in sorted(sections.items())}}


@dataclass(frozen=True)
class Base:
    """An upstream schema (and its meta, read or derived) for one protocol version."""

    schema: Source
    meta: Source
    meta_file: bool  # False when the methods were derived from the schema's markers
    notes: tuple[Problem, ...] = ()  # method types found by name (see method_inference)

    @property
    def inputs(self) -> tuple[Source, ...]:
        return (self.schema, self.meta) if self.meta_file else (self.schema,)


def _shown(path: Path, root: Path | None) -> str:
    """Bases usually live outside the project (``../shared/upstream``): name them relative
    to the project anyway, so that generated headers do not depend on the machine."""
    if root is None:
        return display_name(path)
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(root))).as_posix()


def _read(path: Path, root: Path | None) -> Source:
    try:
        return replace(read_json(path, root), name=_shown(path, root))
    except SchemaError as exc:
        raise SchemaError([replace(p, file=_shown(path, root)) for p in exc.problems]) from None


def load_base(path: Path, version: int, root: Path | None = None, descriptions: bool = True) -> Base:
    """Read and validate a base schema (and its sibling meta when present), the types of
    the methods it lists but does not mark found by name. ``descriptions=False``: without
    the base's descriptions (upstream's prose, which a package shipped with this tool may
    not carry; its names and structure are facts of the protocol)."""
    if not path.is_file():
        raise fail(_shown(path, root), "", "base schema file does not exist")
    schema = _read(path, root)
    if not descriptions:
        for _, node in schema_nodes(schema.data):
            node.pop("description", None)
    meta_file = meta_path(path)
    if meta_file.is_file():
        meta = _read(meta_file, root)
    else:
        meta = Source(schema.name + " (x-method markers)", schema.sha256, _meta_from_markers(schema, version))
    sources = infer_method_types(VersionSources(_shown(path.parent, root), (schema,), meta))
    validate_version(sources, version)
    return Base(sources.schemas[0], meta, meta_file.is_file(), sources.notes)


# -- shape comparison ------------------------------------------------------------------


def _variant_key(variant: Any) -> Any:
    """Union variants are matched by their discriminator constant, else by their shape."""
    if isinstance(variant, dict):
        for prop in variant.get("required", []):
            schema = (variant.get("properties") or {}).get(prop)
            if isinstance(schema, dict) and "const" in schema:
                return ("const", prop, repr(schema["const"]))
    return ("shape", repr(shape(expr(variant))))


def _kind(schema: dict[str, Any]) -> str:
    has_variants = variants_key(schema) is not None
    if schema.get("properties") or schema.get("type") == "object":
        return "object with variants" if has_variants else "object"
    if has_variants:
        return "union"
    return "enum" if "enum" in schema else "alias"


def _marked(node: Any) -> bool:
    return isinstance(node, dict) and bool(node.get(FEATURE_KEY))


def feature_types(fragments: VersionSources) -> set[str]:
    """The fragments' definitions that are a feature's or carry a feature's items."""
    return {name for src in fragments.schemas for name, d in src.data[DEFS].items() if features_inside(d)}


def _refs(node: Any) -> set[str]:
    return {t for _, ref in iter_refs(node) if (t := ref_target(ref)) is not None}


class _Merge:
    """Lay one fragment's definitions over the base's.

    What a fragment marks with ``x-feature`` is the feature's: added where the base lacks
    it, marked where the base has it, and an error where the two are incompatible. The
    rest of a fragment is context copied from some upstream release: where it differs
    from the base, the base wins and the difference is a note.
    """

    def __init__(self, base: Source, fragment: Source) -> None:
        self.base, self.fragment = base, fragment
        self.problems: list[Problem] = []
        self.notes: list[Problem] = []

    def differ(self, marked: bool, path: tuple[str | int, ...], base_path: tuple[str | int, ...], message: str) -> None:
        where = f"base: {self.base.name}: {pointer(*base_path) or '/'}"
        if marked:
            self.problems.append(Problem(self.fragment.name, pointer(*path), f"{message} ({where})"))
        else:
            self.notes.append(Problem(self.fragment.name, pointer(*path), f"{message}; the base's is used ({where})"))

    def definition(self, name: str, frag: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
        """The base definition, with the fragment's feature items added or marked."""
        path = base_path = (DEFS, name)
        merged: dict[str, Any] = copy_json(base)
        marked = _marked(frag)  # the whole definition is the feature's: every difference counts
        if marked:
            merged[FEATURE_KEY] = frag[FEATURE_KEY]
        for key in ("x-method", "x-side"):
            if key in frag and frag.get(key) != base.get(key):
                self.differ(
                    marked, (*path, key), (*base_path, key), f"{key} is {frag[key]!r}, base has {base.get(key)!r}"
                )
        kind, base_kind = _kind(frag), _kind(base)
        fkey, bkey = variants_key(frag), variants_key(base)
        if kind != base_kind:
            # Feature items inside cannot be laid over a different kind of type.
            self.differ(
                marked or bool(features_inside(frag)), path, base_path, f"is {kind} here, {base_kind} in the base"
            )
            return merged
        if kind.startswith("object"):
            self.properties(frag, merged, path, base_path, marked)
        if fkey and bkey:
            self.variants(frag, fkey, merged, bkey, path, base_path, marked)
        elif kind == "enum":
            added = [v for v in frag["enum"] if v not in base["enum"]]
            if added:
                self.differ(marked, (*path, "enum"), (*base_path, "enum"), f"has enum values {added!r} the base lacks")
        elif kind == "alias" and shape(expr(frag)) != shape(expr(base)):
            self.differ(
                marked, path, base_path, f"is {expr(frag).describe()}, but the base says {expr(base).describe()}"
            )
        return merged

    def properties(
        self,
        frag: dict[str, Any],
        merged: dict[str, Any],
        path: tuple[str | int, ...],
        bpath: tuple[str | int, ...],
        whole: bool,
    ) -> None:
        base_props = merged.setdefault("properties", {})
        base_required = set(merged.get("required", []))
        frag_required = set(frag.get("required", []))
        previous: str | None = None  # the fragment's last property that the base has
        for prop, schema in (frag.get("properties") or {}).items():
            here, there = (*path, "properties", prop), (*bpath, "properties", prop)
            marked = whole or _marked(schema)
            if prop not in base_props:
                if not _marked(schema):
                    self.differ(whole, here, (*bpath, "properties"), f"property {prop!r} is not in the base")
                    continue
                # An addition goes where the fragment puts it: after the property it follows there.
                items = list(base_props.items())
                at = 0 if previous is None else [k for k, _ in items].index(previous) + 1
                items.insert(at, (prop, copy_json(schema)))
                base_props.clear()
                base_props.update(items)
                previous = prop
                if prop in frag_required:
                    merged.setdefault("required", []).append(prop)
                continue
            previous = prop
            want, have = expr(schema), expr(base_props[prop])
            if shape(want) != shape(have):
                self.differ(marked, here, there, f"is {want.describe()}, but the base says {have.describe()}")
            if (prop in frag_required) != (prop in base_required):
                state = "required" if prop in frag_required else "optional"
                self.differ(marked, here, there, f"is {state} here, but not in the base")
            if _marked(schema):  # the base has the feature's property already: it takes the feature
                base_props[prop] = {**base_props[prop], FEATURE_KEY: schema[FEATURE_KEY]}

    def variants(
        self,
        frag: dict[str, Any],
        fkey: str,
        merged: dict[str, Any],
        bkey: str,
        path: tuple[str | int, ...],
        bpath: tuple[str | int, ...],
        whole: bool,
    ) -> None:
        base_keys = {_variant_key(v): i for i, v in enumerate(merged[bkey])}
        for i, variant in enumerate(frag[fkey]):
            key = _variant_key(variant)
            here = (*path, fkey, i)
            if key in base_keys:
                j = base_keys[key]
                base_variant = merged[bkey][j]
                if shape(expr(variant)) != shape(expr(base_variant)):
                    self.differ(whole or _marked(variant), here, (*bpath, bkey, j), "variant differs from the base's")
                if _marked(variant) and isinstance(base_variant, dict):
                    merged[bkey][j] = {**base_variant, FEATURE_KEY: variant[FEATURE_KEY]}
            elif _marked(variant):
                merged[bkey].append(copy_json(variant))
            else:
                self.differ(whole, here, (*bpath, bkey), "variant is not in the base")


def _gate_uses(node: Any, gated: dict[str, str]) -> None:
    """Mark the base's own properties and union variants that reach a gated definition
    with its feature (upstream's ``ClientRequest`` lists ``ArchiveSessionRequest``): without
    the feature they go too, instead of pointing at a type that is not generated."""
    for _, obj in schema_nodes(node):
        props = obj.get("properties")
        members = list(props.values()) if isinstance(props, dict) else []
        members += [v for key in UNION_KEYWORDS if isinstance(obj.get(key), list) for v in obj[key]]
        for member in members:
            if isinstance(member, dict) and not member.get(FEATURE_KEY):
                features = sorted({gated[t] for t in _refs(member) if t in gated})
                if len(features) == 1:
                    member[FEATURE_KEY] = features[0]


def _gate_what_the_base_lacks(kept: list[Source], base_defs: dict[str, Any]) -> dict[str, set[str]]:
    """Mark, in ``kept``, the fragment-only types a base older than a feature cannot carry
    with that feature: those that extend for it (returned, with their features), then,
    until nothing changes, those that use a gated type and those that only gated types use
    (or nothing does: the fragments copied that context for the feature, the release has
    no use for it). A type whose gated neighbours belong to several features stays context."""
    new = {name: d for s in kept for name, d in s.data[DEFS].items()}
    lacking = {name: features_inside(d) for name, d in new.items() if not _marked(d) and features_inside(d)}
    if not lacking:
        return {}
    lacking_features = set().union(*lacking.values())
    everything = {**base_defs, **new}
    gated = {name: d[FEATURE_KEY] for name, d in everything.items() if _marked(d)}
    gated.update({name: min(features) for name, features in lacking.items()})
    uses = {name: _refs(d) - {name} for name, d in everything.items()}
    users: dict[str, set[str]] = {}
    for name, targets in uses.items():
        for target in targets:
            users.setdefault(target, set()).add(name)
    changed = True
    while changed:
        changed = False
        for name in sorted(set(new) - set(gated)):
            near = {gated[t] for t in uses[name] if t in gated}
            if not near and users.get(name, set()) <= set(gated):
                near = {gated[u] for u in users.get(name, ())} or lacking_features
            if len(near) == 1:
                gated[name], changed = min(near), True
    for src in kept:
        defs = src.data[DEFS]
        for name in defs:
            if name in gated and not _marked(defs[name]):
                defs[name] = {**defs[name], FEATURE_KEY: gated[name]}
    return lacking


def _lacking_problems(
    base: Source, fragments: VersionSources, lacking: dict[str, set[str]], enabled: frozenset[str]
) -> list[Problem]:
    """One problem per enabled feature whose extended types the base lacks."""
    problems = []
    for feature in sorted(enabled):
        names = sorted(name for name, features in lacking.items() if feature in features)
        if names:
            files = ", ".join(s.name for s in fragments.schemas if set(names) & set(s.data[DEFS]))
            problems.append(
                Problem(
                    base.name,
                    pointer(DEFS),
                    f"has no {', '.join(names)}, which feature {feature} extends ({files}): the feature needs"
                    " an ACP release that has them; without the feature, this release's own protocol generates",
                )
            )
    return problems


def overlay(base: Base, fragments: VersionSources, enabled: frozenset[str] = frozenset()) -> VersionSources:
    """The base with the fragments laid over it (see the module docstring); ``enabled``:
    the features the run generates, which a base that lacks what they extend refuses."""
    base_data = copy_json(base.schema.data)
    base_defs: dict[str, Any] = base_data[DEFS]
    problems: list[Problem] = []
    notes: list[Problem] = []
    kept: list[Source] = []
    for src in fragments.schemas:
        merge = _Merge(base.schema, src)
        new_defs: dict[str, Any] = {}
        for name, schema in src.data[DEFS].items():
            if name in base_defs:
                base_defs[name] = merge.definition(name, schema, base_defs[name])
            else:
                new_defs[name] = schema
        problems += merge.problems
        notes += merge.notes
        kept.append(Source(src.name, src.sha256, {**src.data, DEFS: new_defs}))
    problems += _lacking_problems(base.schema, fragments, _gate_what_the_base_lacks(kept, base_defs), enabled)
    gated = {name: d[FEATURE_KEY] for s in kept for name, d in s.data[DEFS].items() if _marked(d)}
    gated.update({name: d[FEATURE_KEY] for name, d in base_defs.items() if _marked(d)})
    _gate_uses({DEFS: {n: d for n, d in base_defs.items() if n not in gated}}, gated)
    meta, meta_problems = _merge_meta(base.meta, fragments.meta)
    problems += meta_problems
    if problems:
        raise SchemaError(problems)
    merged_base = Source(base.schema.name, base.schema.sha256, base_data)
    extra = (base.meta,) if base.meta_file else ()
    return VersionSources(
        fragments.directory,
        (merged_base, *kept),
        meta,
        extra,
        notes=tuple(sorted([*base.notes, *notes])),
        fragments=fragments,
    )


def _merge_meta(base: Source, fragment: Source) -> tuple[Source, list[Problem]]:
    problems = []
    data: dict[str, Any] = {"version": fragment.data["version"]}
    if base.data.get("version") != fragment.data["version"]:
        problems.append(
            Problem(
                fragment.name,
                "/version",
                f"is {fragment.data['version']}, but the base {base.name} says {base.data.get('version')}",
            )
        )
    features = {**base.data.get("features", {}), **fragment.data.get("features", {})}
    if features:
        data["features"] = features
    for section, _ in method_sections({**base.data, **fragment.data}):
        methods = dict(base.data.get(section, {}))
        for key, method in fragment.data.get(section, {}).items():
            if methods.get(key, method) != method:
                problems.append(
                    Problem(
                        fragment.name,
                        pointer(section, key),
                        f"is {method!r}, but the base {base.name} says {methods[key]!r}",
                    )
                )
            methods[key] = method
        if methods:
            data[section] = methods
    digest = hashlib.sha256(f"{base.sha256}\0{fragment.sha256}".encode()).hexdigest()
    return Source(fragment.name, digest, data), problems
