"""The method table an SDK's template set renders (``docs/dispatch.md``, "SDK template sets").

One record a method of a protocol version with every feature, each saying whether the
selected features include it: a template set writes the enabled ones, and ``adopt``'s
wiring takes the disabled ones out of an SDK's files. Names are the SDK's: classes as the
models name them after ``class-names``, attributes after ``field-names``, a method's
Python name by the rule the SDK's existing methods follow (``naming_rule``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...code_text import Code, identifier, py_literal
from ...config.settings import ModelOptions
from ...protocol.ir import Method, Protocol, TypeExpr, model_fields, python_field_name
from ...schema_terms import method_sections

# The wire key of the metadata property, which SDKs take as ``**kwargs``.
META_KEY = "_meta"
# How a method's Python name is made: from its params class (``ListSessionsRequest`` ->
# ``list_sessions``), from its wire name, verb first (``session/fork`` -> ``fork_session``),
# or its meta key as it is (``session_fork``). The first is the default.
NAMING_RULES = ("class", "wire", "key")
_ROLE_SUFFIXES = ("Request", "Notification", "Params")


@dataclass(frozen=True)
class Keyword:
    """A params field as a keyword parameter."""

    name: str  # the Python parameter (the model's attribute)
    wire: str
    annotation: Code  # as the SDK's signatures write it: "str", "SessionArchiveFilter | None"
    default: Code | None  # Python source of the default; None where the parameter is required
    feature: str | None
    enabled: bool

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class SdkMethod:
    wire: str  # "session/archive"
    key: str  # the meta key, "session_archive"
    side: str  # who handles it: "agent", "client", "protocol"
    kind: str  # "request" or "notification"
    name: str  # the Python method, "archive_session"
    params: str  # the params class, as the SDK names it
    result: str | None  # the result class; None for a notification
    result_required: tuple[str, ...]  # the result's required wire keys (none: an empty reply will do)
    keywords: tuple[Keyword, ...]  # required first, then in the model's order; no _meta
    meta_attr: str | None  # the params' attribute for _meta, if it has one
    feature: str | None  # the feature the method belongs to
    enabled: bool  # whether the selected features include it
    unstable: bool  # gated: a feature's, marked so by the SDK, or outside the base's stable meta
    names: frozenset[str]  # the models' names its signature uses (to import)
    union: bool = False  # the params are a union of classes (keywords: none; the SDK wires such by hand)
    result_model: bool = True  # the result is a class (not an alias of any JSON value)

    @property
    def featured(self) -> bool:
        """Whether a feature adds the method or one of its keywords."""
        return self.feature is not None or any(k.feature for k in self.keywords)


def snake(name: str) -> str:
    return python_field_name(name.replace("/", "_").replace("-", "_").replace("$", ""))


def method_name(rule: str, method: Method, params: str) -> str:
    if rule == "wire":
        parts = [snake(p) for p in method.name.split("/") if p.strip("$")]
        return "_".join(parts[1:] + parts[:1])
    if rule == "key":
        return snake(method.key)
    stem = next((params[: -len(s)] for s in _ROLE_SUFFIXES if params.endswith(s) and len(params) > len(s)), params)
    return snake(stem)


def naming_rule(protocol: Protocol, known: Mapping[str, str]) -> str:
    """The rule most of the SDK's existing methods follow (``known``: meta key -> Python
    name); the first rule on a tie, or where the SDK has none yet."""
    scores = {rule: 0 for rule in NAMING_RULES}
    for m in protocol.methods:
        if m.key in known:
            for rule in NAMING_RULES:
                scores[rule] += method_name(rule, m, m.params) == known[m.key]
    return max(NAMING_RULES, key=lambda rule: (scores[rule], -NAMING_RULES.index(rule)))


class _Annotations:
    """Type expressions as an SDK's signatures write them: classes and enum aliases by
    their public names, aliases of plain types and unions of classes spelled out."""

    def __init__(self, protocol: Protocol, options: ModelOptions) -> None:
        self.types = protocol.types
        self.formats = {fmt: path.rsplit(".", 1)[1] for fmt, path in options.string_types.items()}
        self.names: set[str] = set()

    def __call__(self, expr: TypeExpr, optional: bool) -> Code:
        parts = self.parts(expr, frozenset())
        if optional or expr.nullable:
            parts.append("None")
        return Code(" | ".join(dict.fromkeys(parts)))

    def parts(self, expr: TypeExpr, seen: frozenset[str]) -> list[str]:
        kind = expr.kind
        if kind == "union":
            return [p for v in expr.variants for p in self.parts(v, seen)] + (["None"] if expr.nullable else [])
        if kind == "ref" and expr.ref in self.types and expr.ref not in seen:
            target = self.types[expr.ref]
            if target.kind in ("object", "enum"):
                return [self.named(target.name)]
            inner = target.target if target.kind == "alias" else None
            if target.kind == "union" and all(v.kind == "ref" for v in target.variants):
                return [p for v in target.variants for p in self.parts(v, seen | {target.name})]
            if inner is not None and inner.kind in ("string", "integer", "number", "boolean", "array", "ref"):
                return self.parts(inner, seen | {target.name})
            return [self.named(target.name)]
        if kind == "array":
            return [f"list[{' | '.join(self.parts(expr.items, seen)) if expr.items else 'Any'}]"]
        if kind == "object":
            values = " | ".join(self.parts(expr.additional, seen)) if expr.additional else "Any"
            return [f"dict[str, {values}]"]
        if kind == "const":
            return [f"Literal[{py_literal(expr.const)}]"]
        plain = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
        if kind == "string" and expr.format in self.formats:
            return [self.formats[expr.format]]
        return [plain.get(kind, "Any")]

    def named(self, name: str) -> str:
        self.names.add(identifier(name))  # a schema's name reaches code only as an identifier
        return name


def _default(value: Any) -> Code:
    return py_literal(value) if isinstance(value, (str, int, float, bool)) else Code("None")


def method_table(
    complete: Protocol,
    meta: Mapping[str, Any],
    enabled: Iterable[str],
    options: ModelOptions,
    known: Mapping[str, str] | None = None,
    unstable: Iterable[str] = (),
    stable: Collection[tuple[str, str]] | None = None,
    names: Mapping[str, str] | None = None,
) -> tuple[SdkMethod, ...]:
    """Every method of ``complete`` (a version built with every feature, under the SDK's
    class names), in the order of its ``meta`` listing. ``known``: the SDK's Python names
    by meta key, which also decide the rule for the others; ``unstable``: meta keys the SDK
    marks unstable itself; ``stable``: (side, wire name) of the base's stable meta, where
    the meta read is not that one (a method outside it is gated); ``names``: wire name ->
    the Python name a maintainer chose (``method-names``), for a method the SDK does not
    name itself."""
    on = frozenset(enabled)
    known = dict(known or {})
    chosen = dict(names or {})
    rule = naming_rule(complete, known)
    marked = frozenset(unstable)
    out = []
    for m in complete.methods:
        annotate = _Annotations(complete, options)
        fields = [f for f in model_fields(complete, m.params) if f.name != META_KEY]
        meta_field = next((f for f in model_fields(complete, m.params) if f.name == META_KEY), None)
        keywords = sorted(
            (
                Keyword(
                    name=f.py_name,
                    wire=f.name,
                    annotation=annotate(f.type, optional=not f.required),
                    default=None if f.required else _default(f.default if f.has_default else None),
                    feature=f.feature,
                    enabled=f.feature is None or f.feature in on,
                )
                for f in fields
            ),
            key=lambda k: not k.required,
        )
        result_required = (
            tuple(f.name for f in model_fields(complete, m.result) if f.required)
            if m.result and complete.types[m.result].kind == "object"
            else ()
        )
        out.append(
            SdkMethod(
                wire=m.name,
                key=m.key,
                side=m.side,
                kind=m.kind,
                name=known.get(m.key) or chosen.get(m.name) or method_name(rule, m, m.params),
                params=m.params,
                result=m.result,
                result_required=result_required,
                keywords=tuple(keywords),
                meta_attr=meta_field.py_name if meta_field else None,
                feature=m.feature,
                enabled=m.feature is None or m.feature in on,
                unstable=m.key in marked
                or (m.feature or "").startswith("unstable")
                or (stable is not None and (m.side, m.name) not in stable),
                names=frozenset(annotate.names | {m.params, *([m.result] if m.result else [])}),
                union=complete.types[m.params].kind == "union" if m.params in complete.types else False,
                result_model=m.result is None or complete.types[m.result].kind == "object",
            )
        )
    order = {(side, key): i for i, (side, key, _) in enumerate(meta_listing(complete, meta))}
    return tuple(sorted(out, key=lambda s: order.get((s.side, s.key), len(order))))


def meta_listing(
    complete: Protocol, meta: Mapping[str, Any], off: Iterable[tuple[str, str]] = ()
) -> list[tuple[str, str, str]]:
    """(side, meta key, wire name) as the version's meta file lists them, in its order, less
    the methods ``off`` names ((wire name, side): of features that are off, see
    ``features.gated_off``);
    the methods it lists but does not type stay."""
    left_out = set(off)
    if not meta:  # no file at hand: the built methods, by side
        return [(m.side, m.key, m.name) for m in complete.methods if (m.name, m.side) not in left_out]
    return [
        (side, key, wire)
        for section, side in method_sections(dict(meta))
        for key, wire in meta.get(section, {}).items()
        if (wire, side) not in left_out
    ]


def listed(meta: Mapping[str, Any]) -> frozenset[tuple[str, str]]:
    """(side, wire name) of every method a meta file lists (the base's stable ``meta.json``:
    what an SDK serves without its unstable marker)."""
    return frozenset(
        (side, wire) for section, side in method_sections(dict(meta)) for wire in meta.get(section, {}).values()
    )
