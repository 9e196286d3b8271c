"""The models module of a version: the one place that calls datamodel-code-generator's
API (``call_datamodel_codegen``, with our templates in ``templates/datamodel/``), what it
is given (``models_input``: the schema and template data the settings make) and what is
made of its output (``post_processed``: definitions before use, the imports it cannot
write, the public names). An upgrade of datamodel-code-generator is reviewed here."""

from __future__ import annotations

import ast
import io
import re
import warnings
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import resources
from ..code_text import Code
from ..config.settings import ModelOptions
from ..plan.customize import (
    enum_classes,
    public_names,
    with_common_classes,
    with_enums,
    with_mixins,
    with_optional_nulls,
)
from ..plan.markers import lenient_markers
from ..protocol.ir import Protocol, model_fields
from ..protocol.models_schema import for_datamodel_codegen
from ..protocol.names import model_field_name
from ..schema_terms import DEFS, iter_refs, ref_target

STRING_FORMATS = ("date-time", "date", "time", "duration", "uri", "uri-reference", "uuid", "email")


def _add_imports(source: str, imports: list[str]) -> str:
    """Add import lines after the leading imports: datamodel-code-generator takes absolute
    import paths only, and none under another name, while the package imports itself
    relatively (vendorable) and the SDK's mixins under private names."""
    if not imports:
        return source
    # The imports end before the first class: parsing only that far saves a parse of the
    # whole (upstream-sized) module. A top-level class starts a line; docstring lines in
    # it are indented and field descriptions are one-line literals.
    first_class = source.find("\nclass ")
    body = ast.parse(source[: first_class + 1] if first_class >= 0 else source).body
    end = 0
    for node in body[1:] if body and isinstance(body[0], ast.Expr) else body:  # after the docstring
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            break
        end = node.end_lineno or node.lineno
    lines = source.splitlines(keepends=True)
    return "".join([*lines[:end], "\n", *(f"{line}\n" for line in imports), *lines[end:]])


def _named_aliases(protocol: Protocol, aliases: set[str]) -> set[str]:
    """The aliases that stay a ``TypeAliasType``: those a method names as params or result
    (``MethodSpec`` types them so), and those that reach themselves through aliases only
    (a plain alias cannot refer to itself; through a class it may)."""
    named = {n for m in protocol.methods for n in (m.params, m.result) if n in aliases}

    def refs(name: str) -> set[str]:
        t = protocol.types[name]
        exprs = (t.target,) if t.target is not None else t.variants
        return {r for e in exprs for r in e.refs() if r in aliases}

    for start in aliases:
        seen: set[str] = set()
        todo = refs(start)
        while todo:
            name = todo.pop()
            if name == start:
                named.add(start)
                break
            if name not in seen:
                seen.add(name)
                todo |= refs(name)
    return named


def _payload_classes(protocol: Protocol) -> list[str]:
    """Classes whose unknown properties are their content: a catch-all variant (its tag
    is NotOneOf the others') or an object that says ``additionalProperties: true``."""
    defs = protocol.schema[DEFS]
    return [
        name
        for name, t in protocol.types.items()
        if t.kind == "object"
        and (
            any(f.not_one_of for f in model_fields(protocol, name))
            or (isinstance(defs.get(name), dict) and defs[name].get("additionalProperties") is True)
        )
    ]


def _attributes(protocol: Protocol) -> dict[str, str]:
    """Wire name -> the attribute acp-codegen's naming rule gives it (``model_field_name``),
    where the two differ."""
    wires = {f.name for name in protocol.types for f in model_fields(protocol, name)}
    return {wire: attr for wire in sorted(wires) if (attr := model_field_name(wire)) != wire}


@dataclass(frozen=True)
class ModelsInput:
    """What datamodel-code-generator is given for one version's models: the schema, the
    per-class data its templates read, and what the module must import besides."""

    schema: dict[str, Any]
    template_data: dict[str, dict[str, Any]]
    runtime_names: list[str]  # the _runtime annotations the fields carry
    imports: list[str]  # typing.Annotated, pydantic.RootModel... (absolute, as it takes them)
    named: set[str]  # the aliases that stay a TypeAliasType
    mixins: list[str]  # import lines of the SDK's mixins, added after
    enums: bool  # Enum classes: an Enum-typed field's default is its member


def models_input(protocol: Protocol, options: ModelOptions) -> ModelsInput:
    """The schema and template data the model settings make of a version (see ``customize``)."""
    template_data, runtime_names = lenient_markers(protocol, null_absent=options.default_on_null == "all")
    enums = enum_classes(options, protocol)
    aliases = {n for n, t in protocol.types.items() if t.kind != "object"} - set(enums)
    named = _named_aliases(protocol, aliases)
    for name in named:
        template_data.setdefault(name, {})["acp_named"] = True  # see templates/datamodel/TypeAliasType.jinja2
    root_models = [n for n in options.root_models if n in aliases]
    union_roots = [n for n in options.root_models if isinstance(options.aliases.get(n), list)]
    for name in root_models:
        template_data.setdefault(name, {})["acp_root_model"] = True
    # Unknown properties are a catch-all variant's payload (upstream says so with
    # `additionalProperties: true`): where they are dropped, kept there.
    payload = _payload_classes(protocol) if options.unknown_properties == "drop" else []
    for name in payload:
        template_data.setdefault(name, {})["acp_extra"] = Code('"allow"')
    schema = with_common_classes(options, protocol, template_data, payload)
    schema = with_enums(options, protocol, schema)
    schema = with_optional_nulls(options, protocol, schema)
    mixins = with_mixins(options, protocol, template_data)
    imports = (
        (["typing.Annotated"] if runtime_names else [])  # they go into Annotated
        + (["typing.TypeAlias"] if aliases - named else [])
        + (["pydantic.RootModel"] if root_models or union_roots else [])
        + (["enum.Enum"] if options.enums else [])
    )
    return ModelsInput(schema, template_data, runtime_names, imports, named, mixins, bool(enums))


def _module_docstring(version: int) -> str:
    return (
        '"""Wire models of ACP protocol v'
        + str(version)
        + ".\n\nParse with ``Model.model_validate(data)``; emit wire JSON with\n"
        '``model.model_dump(mode="json", by_alias=True, exclude_unset=True)`` (or\n'
        "``model_dump_json(by_alias=True, exclude_unset=True)``), which writes camelCase keys\n"
        'and never adds keys that were not set.\n"""'
    )


def call_datamodel_codegen(given: ModelsInput, protocol: Protocol, options: ModelOptions, header: str) -> str:
    """datamodel-code-generator's output for the models: the one call of its API (an
    upgrade of it is reviewed here), every option it takes said once."""
    from datamodel_code_generator import (  # type: ignore[attr-defined]
        DataModelType,
        InputFileType,
        LiteralType,
        PythonVersion,
        generate,
    )
    from datamodel_code_generator.enums import StrictTypes

    with warnings.catch_warnings():
        # Unknown formats (uint16, ...) fall back to the base type; that is intended.
        warnings.simplefilter("ignore")
        out = generate(
            for_datamodel_codegen(given.schema, options.string_types),
            input_file_type=InputFileType.JsonSchema,
            output_model_type=DataModelType.PydanticV2BaseModel,
            target_python_version=PythonVersion.PY_310,
            custom_template_dir=resources.TEMPLATES / "datamodel",
            custom_file_header=header + "\n\n" + _module_docstring(protocol.version),
            remove_special_field_name_prefix=True,
            allow_population_by_field_name=True,
            extra_fields="allow" if options.unknown_properties == "keep" else "ignore",
            # Every wire name's attribute as the IR has it (names.model_field_name, then the
            # SDK's field-names, "Class.wireName" first): datamodel-code-generator's own
            # snake_case_field would snake-case a chosen camelCase attribute too.
            aliases=_attributes(protocol) | dict(options.field_names),
            base_class=options.base_import or "",
            use_union_operator=True,
            use_standard_collections=True,
            use_schema_description=True,
            use_annotated=True,
            use_type_alias=True,
            field_constraints=True,
            use_double_quotes=True,
            keep_model_order=True,
            skip_root_model=True,
            disable_timestamp=True,
            # JSON types are not coerced into each other ("1" is no integer, 1 no boolean):
            # what the schema rejects, the models reject. Floats still take integers.
            strict_types=list(StrictTypes),
            strict_nullable=True,
            # Closed enums are Literal aliases of their values, as in the official Python
            # SDK: checked in pydantic-core and dumped without an Enum member's .value.
            enum_field_as_literal=LiteralType.All,
            # Formatted strings stay the strings that were sent: as datetime, UUID or URL
            # they would be re-emitted normalised ("+00:00" as "Z", a URL with a "/").
            # JSON Schema 2020-12 makes formats annotations, so the schema agrees.
            # (string-formats may name other formats "str", or type one otherwise: customTypePath)
            type_mappings=[f"string+{f}=string" for f in STRING_FORMATS]
            + [f"string+{f}=string" for f, v in sorted(options.string_formats.items()) if v == "str"],
            formatters=[],  # format_modules sorts imports and lays out the code after
            extra_template_data=defaultdict(dict, given.template_data),
            additional_imports=given.imports,
            # An Enum-typed field's default is its member (enums; no Enum classes otherwise).
            set_default_enum_member=given.enums,
        )
    assert isinstance(out, str)
    return out


def post_processed(out: str, given: ModelsInput, protocol: Protocol, options: ModelOptions) -> str:
    """datamodel-code-generator's module as the package has it: no unused TypeAliasType
    import, definitions before use, the relative and private imports it cannot write, the
    public names after the classes."""
    if not given.named:  # datamodel-code-generator imports it for any alias
        out = out.replace("\nfrom typing_extensions import TypeAliasType\n", "\n", 1)
    bases = {name: data["acp_base"] for name, data in given.template_data.items() if "acp_base" in data}
    imports = [f"from .._runtime import {', '.join(given.runtime_names)}"] if given.runtime_names else []
    ordered = _defined_before_use(out, given.schema, bases)
    return _add_imports(ordered, imports + given.mixins) + public_names(protocol, options)


def render_models(protocol: Protocol, options: ModelOptions, header: str) -> str:
    """The models module under ``header``, not yet formatted (see ``format_modules``)."""
    given = models_input(protocol, options)
    return post_processed(call_datamodel_codegen(given, protocol, options, header), given, protocol, options)


# The first line of a top-level class or alias as the models templates write it.
_HEAD = re.compile(r"class (\w+)\(|(\w+)(?:: TypeAlias = | = TypeAliasType\()")


def _defined_before_use(source: str, schema: dict[str, Any], bases: Mapping[str, str]) -> str:
    """The module with every top-level class and alias after the definitions it names, the
    written order kept otherwise. pydantic reads a class's annotations when the class is
    made; a name defined further down leaves its fields unread (no alias, no type) until
    the model is first used, so ``model_fields`` would be wrong after import. Members of a
    cycle (none in the schemas at hand) keep their written order.

    What a definition names comes from the schema (its references; its ``{common}`` base in
    ``bases``), far cheaper than parsing the module, while the module is one class or alias a
    definition, each starting a line (all other lines below the imports indented or blank).
    Otherwise (datamodel-code-generator named a value itself) the module is parsed."""
    # Lines as Python counts them (str.splitlines also breaks at \f, \x85, \u2028... in strings).
    lines = io.StringIO(source, newline="").readlines()
    heads = [(i, m[1] or m[2]) for i, line in enumerate(lines) if (m := _HEAD.match(line))]
    defs = schema[DEFS]
    if (
        heads
        and len(heads) == len(defs)
        and {name for _, name in heads} == set(defs)
        and all(not line[:1].strip() or _HEAD.match(line) for line in lines[heads[0][0] :])
    ):
        starts = [i for i, _ in heads]
        named: list[str | None] = [name for _, name in heads]
        uses = [{ref_target(ref) for _, ref in iter_refs(defs[name])} | {bases.get(name)} for _, name in heads]
    else:
        body = ast.parse(source).body
        all_named = [_statement_name(node) for node in body]
        first = next((i for i, name in enumerate(all_named) if name), None)
        if first is None:
            return source
        body, named = body[first:], all_named[first:]
        starts = [min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))]) - 1 for n in body]
        uses = [{n.id for n in ast.walk(node) if isinstance(n, ast.Name)} for node in body]
    chunks = [
        "".join(lines[a:b]).rstrip("\n") + "\n\n\n" for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)
    ]
    names = {name: i for i, name in enumerate(named) if name}
    order: list[int] = []
    seen: set[int] = set()  # placed, or being placed (a cycle ends there)

    def place(i: int) -> None:
        if i in seen:
            return
        seen.add(i)
        for j in sorted(names[n] for n in uses[i] if n in names):
            place(j)
        order.append(i)

    for i in range(len(starts)):
        place(i)
    return "".join(lines[: starts[0]]) + "".join(chunks[i] for i in order).rstrip("\n") + "\n"


def _statement_name(node: ast.stmt) -> str | None:
    """The name a top-level class or assignment defines."""
    target = node.target if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [None])[0]
    return node.name if isinstance(node, ast.ClassDef) else target.id if isinstance(target, ast.Name) else None


MODELS_TEMPLATES = (
    "datamodel/TypeAliasType.jinja2",
    "datamodel/pydantic_v2/BaseModel.jinja2",
    "datamodel/pydantic_v2/ConfigDict.jinja2",
)
