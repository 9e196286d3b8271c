"""Naming: give every anonymous schema that becomes a class a definition of its
own, named by a deterministic rule, so that the model generator never numbers a class
(``SessionUpdate1``, ``CreateElicitationRequest23``...).

Which schemas become classes: objects with properties that sit inline in a union, in a
property, or in an array; and objects that share properties with a union of variants
(upstream's flattened enums: ``SessionConfigOption`` is ``{id, name, ...}`` plus one of
``select`` / ``boolean``), which are rewritten as a union of complete objects. A titled
union variant with a constraint (2026-11 v2: ``SessionConfigSelectOptions``' ``Ungrouped``,
an array with ``minItems``) becomes an alias of its own, named as a class would be.

A derived name is a function of the schema's own place, never of which other names exist
(a name is an API: a later release that adds an unrelated definition must not rename a
class). Each derived name records the rule that made it:

``title``           a union variant: the union's name plus the variant's ``title``
                    (``McpServer`` + ``"http"`` -> ``McpServerHttp``);
``discriminator``   else the union's name plus its discriminator constant (``SessionUpdate``
                    + ``"user_message_chunk"`` -> ``SessionUpdateUserMessageChunk``);
``tagged``          a variant that only adds its tag to the definition it extends, when
                    the two rules above would give it that definition's own name:
                    ``AuthMethod`` + ``"terminal"`` extending ``AuthMethodTerminal`` ->
                    ``AuthMethodTerminalTagged``;
``required``        else the union's name plus what the variant requires that no other
                    variant of its union requires (upstream v0.10.3's ``AgentResponse``,
                    ``{id, result}`` or ``{id, error}`` -> ``AgentResponseResult``,
                    ``AgentResponseError``: the names newer releases' titles give); where it
                    requires nothing of its own, plus all it requires, in its order
                    (v0.0.16's ``SessionUpdate`` tool call update -> ``SessionUpdateKindToolCallId``);
``flattened``       a variant of an object with shared properties: the object's name plus
                    the variant's label (title, constant, the type it extends, or what it
                    requires as above):
                    ``SessionConfigOptionSelect``; nested variants append their labels;
``property``        an inline object in a property: owner name plus property name
                    (``PlanEntryPosition``), with ``Item`` for array items.

A label that already begins with the owner's name is not doubled; a variant that is a
``$ref`` keeps the name of the definition it refers to. Two schemas that would get one
name, or a name Python or pydantic already means (``Field``, ``BaseModel``, ``Any``...),
are an error naming both places: giving one a ``title`` fixes it. Last, ``rename`` applies
the names a user chose for classes (``[tool.acp-codegen].class-names``: SDKs keep their
public names), derived or not: see ``class_names``.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from typing import Any

from ..errors import fail, pointer
from ..schema_terms import DEFS, copy_json, ref_target, variants_key
from .validate import RESERVED_TYPE_NAMES

RULES = ("title", "discriminator", "tagged", "required", "flattened", "property")
VARIANT_RULES = RULES[:4]  # the names of a union's inline variants
# Keys that describe a definition as a whole rather than its shape.
_OWN_KEYS = ("description", "title", "x-method", "x-side", "x-feature", "discriminator")


@dataclass(frozen=True)
class Derived:
    name: str
    rule: str
    origin: str  # "file: /json/pointer" of the anonymous schema
    label: str = ""  # what the name adds to its owner's (a class-names key spelled so is pointed here)


def pascal(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", text) if part)


def prefixed(owner: str, label: str) -> str:
    """``owner`` + ``label``, unless the label already begins with the owner's name as a word."""
    rest = label[len(owner) :]
    if label.startswith(owner) and (rest[:1].isupper() or rest[:1].isdigit()):
        return label
    return owner + label


def _has_properties(schema: Any) -> bool:
    return isinstance(schema, dict) and bool(schema.get("properties"))


def _is_flattened(schema: Any) -> bool:
    """An object with its own properties and a union of variants that extend it."""
    return _has_properties(schema) and variants_key(schema) is not None


# Validation keywords datamodel-code-generator writes into a Field(): a union variant with
# one (and no properties) becomes an alias of its own, which it would number (``Options1``).
_CONSTRAINTS = frozenset(
    {"minItems", "maxItems", "uniqueItems", "minLength", "maxLength", "pattern", "minimum", "maximum"}
    | {"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minProperties", "maxProperties"}
)


def _own_alias(variant: Any) -> bool:
    """A titled union variant that is no object and no reference but has a constraint."""
    return (
        isinstance(variant, dict)
        and isinstance(variant.get("title"), str)
        and "$ref" not in variant
        and bool(_CONSTRAINTS & set(variant))
    )


def _discriminator_const(variant: dict[str, Any]) -> str | None:
    for prop in variant.get("required", []):
        schema = (variant.get("properties") or {}).get(prop)
        if isinstance(schema, dict) and isinstance(schema.get("const"), str):
            return str(schema["const"])
    return None


def _extends(variant: dict[str, Any]) -> str | None:
    refs = [ref_target(p.get("$ref")) for p in variant.get("allOf", []) if isinstance(p, dict)]
    return refs[0] if len(refs) == 1 else None


def _required_label(variants: list[Any], i: int) -> str:
    """An untitled, untagged variant named by what it requires: the properties no other
    variant of its union requires, else all it requires (the ``required`` rule). A title
    or tag that names nothing is no reason to look further: such a variant is refused."""
    required = [p for p in variants[i].get("required", []) if isinstance(p, str)]
    others = {p for j, v in enumerate(variants) if j != i and isinstance(v, dict) for p in v.get("required", [])}
    return "".join(pascal(p) for p in [p for p in required if p not in others] or required)


def _label(variants: list[Any], i: int) -> str:
    """What a variant is called inside its union: title, constant, the type it extends, or
    what it requires."""
    variant = variants[i]
    if not isinstance(variant, dict):
        return ""
    title, const = variant.get("title"), _discriminator_const(variant)
    for candidate in (title, const, _extends(variant)):
        if isinstance(candidate, str) and pascal(candidate):
            return pascal(candidate)
    return _required_label(variants, i) if title is None and const is None else ""


def _merge(common: dict[str, Any], variant: dict[str, Any]) -> dict[str, Any]:
    """A complete object: the shared properties plus one variant's own."""
    out = {k: copy_json(v) for k, v in common.items()}
    for key, value in variant.items():
        if key == "title":
            continue
        if key == "properties":
            out["properties"] = {**out.get("properties", {}), **copy_json(value)}
        elif key == "required":
            out["required"] = list(dict.fromkeys([*out.get("required", []), *value]))
        elif key == "allOf":
            out["allOf"] = [*out.get("allOf", []), *copy_json(value)]
        else:
            out[key] = copy_json(value)
    out["type"] = "object"
    return out


class Hoister:
    def __init__(self, defs: dict[str, Any], files: dict[str, str]) -> None:
        self.defs = {k: copy_json(v) for k, v in defs.items()}
        self.files = files
        self.derived: dict[str, Derived] = {}
        self._leaves: dict[str, list[tuple[str, str]]] = {}  # flattened def -> [(label, leaf def)]

    # -- bookkeeping --------------------------------------------------------------------

    def _taken(self, name: str) -> str | None:
        """Where ``name`` is already meant, or None when it is free."""
        if name in self.derived:
            return self.derived[name].origin
        if name in self.defs:
            return f"{self.files[name]}: {pointer(DEFS, name)}"
        if name in RESERVED_TYPE_NAMES or keyword.iskeyword(name):
            return "a name Python or pydantic means"
        return None

    def _add(
        self, name: str, rule: str, schema: dict[str, Any], owner: str, path: tuple[str | int, ...], label: str = ""
    ) -> str:
        other = self._taken(name)
        if other is not None:
            raise fail(
                self.files[owner],
                pointer(*path),
                f"this schema would be named {name}, which is already {other}; give one of them a distinct title",
            )
        body = {k: v for k, v in schema.items() if k != "title"}
        self.defs[name] = body
        self.files[name] = self.files[owner]
        self.derived[name] = Derived(name, rule, f"{self.files[owner]}: {pointer(*path)}", label or name[len(owner) :])
        return name

    # -- flattened objects ----------------------------------------------------------------

    def flatten(self, name: str) -> list[tuple[str, str]]:
        """Rewrite a flattened object as a union of complete objects; return its leaves."""
        if name in self._leaves:
            return self._leaves[name]
        self._leaves[name] = []  # a reference cycle ends here rather than recursing forever
        schema = self.defs[name]
        key = variants_key(schema)
        assert key is not None
        common = {k: v for k, v in schema.items() if k not in (key, *_OWN_KEYS)}
        leaves: list[tuple[str, str]] = []
        for i, variant in enumerate(schema[key]):
            label = _label(schema[key], i)
            path = (DEFS, name, key, i)
            leaves += self._leaves_of(name, label, _merge(common, variant if isinstance(variant, dict) else {}), path)
        union: dict[str, Any] = {k: v for k, v in schema.items() if k in _OWN_KEYS and k != "discriminator"}
        union[key] = [{"$ref": f"#/$defs/{leaf}"} for _, leaf in leaves]
        prop = (schema.get("discriminator") or {}).get("propertyName")
        consts = [_discriminator_const(self.defs[leaf]) for _, leaf in leaves]
        if prop and None not in consts and len(set(consts)) == len(consts):
            union["discriminator"] = schema["discriminator"]
        self.defs[name] = union
        self._leaves[name] = leaves
        return leaves

    def _distribute(self, schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]] | None:
        """An object extending a union is a union of objects, one per variant it extends:
        ``{sessionUpdate: "state_update"} & StateUpdate`` -> one object per state."""
        for j, part in enumerate(schema.get("allOf", [])):
            target = ref_target(part.get("$ref")) if isinstance(part, dict) else None
            if target is None or target not in self.defs:
                continue
            if target in self._leaves or _is_flattened(self.defs[target]):
                out = []
                for label, leaf in self.flatten(target):  # flattened leaves keep their own labels
                    rest = copy_json(schema)
                    rest["allOf"][j] = {"$ref": f"#/$defs/{leaf}"}
                    out.append((label, rest))
                return out
            union = self.defs[target]
            key = variants_key(union)
            if key is None or _has_properties(union) or not all(isinstance(v, dict) for v in union[key]):
                continue
            out = []
            for i, variant in enumerate(union[key]):
                rest = copy_json(schema)
                del rest["allOf"][j]
                if set(variant) == {"$ref"}:
                    rest["allOf"].insert(j, dict(variant))
                    label = _label(union[key], i) or str(ref_target(variant["$ref"]))
                else:
                    rest, label = _merge(rest, variant), _label(union[key], i)
                if not rest.get("allOf"):
                    rest.pop("allOf", None)
                out.append((label, rest))
            return out
        return None

    def _leaves_of(
        self, owner: str, label: str, merged: dict[str, Any], path: tuple[str | int, ...]
    ) -> list[tuple[str, str]]:
        distributed = self._distribute(merged)
        if distributed is not None:
            out = []
            for sub_label, schema in distributed:
                out += self._leaves_of(owner, label + sub_label, schema, path)
            return out
        # A variant with a union of its own (nested flattening).
        key = variants_key(merged)
        if key is not None:
            inner = merged.pop(key)
            out = []
            for i, variant in enumerate(inner):
                sub = _label(inner, i)
                out += self._leaves_of(owner, label + sub, _merge(merged, variant), (*path, key, i))
            return out
        return [(label, self._add(prefixed(owner, label), "flattened", merged, owner, path, label))]

    # -- union variants -------------------------------------------------------------------

    def extending_variants(self) -> None:
        """Union variants that extend a union become several variants (see ``_distribute``)."""
        for union in sorted(self.defs):
            schema = self.defs[union]
            key = variants_key(schema)
            if key is None or _has_properties(schema):
                continue
            variants: list[Any] = []
            for i, variant in enumerate(schema[key]):
                if _has_properties(variant) and self._distribute(variant) is not None:
                    leaves = self._leaves_of(union, _label(schema[key], i), variant, (DEFS, union, key, i))
                    variants += [{"$ref": f"#/$defs/{leaf}"} for _, leaf in leaves]
                else:
                    variants.append(variant)
            schema[key] = variants

    def union_variants(self) -> None:
        """Name inline object variants of unions, and titled ones with a constraint: the
        union's name plus the variant's title, constant or what it requires (see the
        module's docstring for ``tagged``)."""
        for union in sorted(self.defs):
            schema = self.defs[union]
            key = variants_key(schema)
            if key is None or _has_properties(schema):
                continue
            written = list(schema[key])  # as written: named variants become references below
            for i, variant in enumerate(written):
                if not (_has_properties(variant) or _own_alias(variant)):
                    continue
                path = (DEFS, union, key, i)
                title, const = variant.get("title"), _discriminator_const(variant)
                if isinstance(title, str) and pascal(title):
                    label, rule = pascal(title), "title"
                elif const and pascal(const):
                    label, rule = pascal(const), "discriminator"
                elif title is None and const is None and (required := _required_label(written, i)):
                    label, rule = required, "required"
                else:
                    raise fail(
                        self.files[union],
                        pointer(*path),
                        "this union variant has no title, tag or required property to name it by; give it a title",
                    )
                name = prefixed(union, label)
                if name == _extends(variant):
                    name, rule = name + "Tagged", "tagged"
                name = self._add(name, rule, variant, union, path, label)
                self.defs[union][key][i] = {"$ref": f"#/$defs/{name}"}

    # -- inline objects in properties -----------------------------------------------------

    def properties(self, name: str) -> None:
        schema = self.defs[name]
        for prop, value in list((schema.get("properties") or {}).items()):
            path = (DEFS, name, "properties", prop)
            schema["properties"][prop] = self._inline(value, name, name + pascal(prop), path)

    def _inline(self, node: Any, owner: str, stem: str, path: tuple[str | int, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        if _has_properties(node):
            return {"$ref": f"#/$defs/{self._add(stem, 'property', node, owner, path)}"}
        out = dict(node)
        key = variants_key(node)
        if key is not None:
            out[key] = [
                self._inline(v, owner, stem + _label(node[key], i), (*path, key, i)) for i, v in enumerate(node[key])
            ]
        if isinstance(node.get("items"), dict):
            out["items"] = self._inline(node["items"], owner, stem + "Item", (*path, "items"))
        if isinstance(node.get("additionalProperties"), dict):
            out["additionalProperties"] = self._inline(
                node["additionalProperties"], owner, stem + "Value", (*path, "additionalProperties")
            )
        return out

    def run(self) -> dict[str, Any]:
        for name in sorted(self.defs):
            if _is_flattened(self.defs[name]):
                self.flatten(name)
        self.extending_variants()
        self.union_variants()
        done: set[str] = set()
        while pending := sorted(set(self.defs) - done):
            for name in pending:
                done.add(name)
                self.properties(name)
        return dict(sorted(self.defs.items()))


def hoist(defs: dict[str, Any], files: dict[str, str]) -> tuple[dict[str, Any], dict[str, Derived]]:
    """Definitions in which every class-to-be has a name, and how each new name was derived.
    ``files`` gains the file of every new definition (that of the definition it came from)."""
    hoister = Hoister(defs, files)
    out = hoister.run()
    return out, dict(sorted(hoister.derived.items()))
