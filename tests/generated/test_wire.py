"""The models accept exactly what the schema accepts, and re-emit valid input unchanged.

The property test draws JSON values near each type's schema (right shapes with wrong
scalar types, missing and extra keys, strings that look like numbers or booleans) and
compares model acceptance with jsonschema-rs acceptance, for the fragments
(test_wire_fragments.py, which imports nothing of the generator) and (slow) for upstream
v1 of both releases. Two differences are licensed:

- upstream's lenient markers: an invalid optional lenient value, or an invalid item of a
  skip-invalid-items list, is dropped rather than failing the message, so the reference
  schema does not constrain them;
- an integral float (``1.0``) is no ``integer`` for the models, though JSON Schema counts
  it as one: taking it would re-emit it as ``1``, and upstream's Rust types refuse it too.
  The reference sees such floats as non-integral (``1.5``) for the comparison.

Models generated with ``default-on-null = "all"`` widen the schema's rule once more: every
optional property takes ``null`` (read as "not given": the field stays unset, so what is
re-emitted leaves it out and is valid for the schema itself).
"""

from __future__ import annotations

import copy
import functools
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, get_args

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError
from support import ROOT, UPSTREAM_RELEASES, imported_models
from support.reference_data import missing

from generated.v1 import models as v1
from generated.v2 import models as v2

FEATURE = "unstable_session_archive"
# Upstream v1 of each release at hand: 2026-08 (the top folder) and the newest, 2026-11.
UPSTREAM_V1 = {r: UPSTREAM_RELEASES[r] / "v1" / "schema.unstable.json" for r in ("2026-08", "2026-11")}
# The property sweeps run over the newest release in README's command; over every release,
# and with the other null reading, in the ecosystem session (nox -s ecosystem).
NEWEST = "2026-11"
ECOSYSTEM = pytest.mark.ecosystem
EVERY_RELEASE = [pytest.param(r, marks=() if r == NEWEST else ECOSYSTEM) for r in sorted(UPSTREAM_RELEASES)]
LENIENT = "x-deserialize-default-on-error"
SKIP_ITEMS = "x-deserialize-skip-invalid-items"
NULL_AS_DEFAULT = "x-deserialize-default-on-null"
# Examples per type: the fragments have ~23 types a version, upstream ~250. The fragments'
# types are the archive surface this project writes (its lenient markers, filters, nullable
# fields): 80 draws a type reach their optional-key and wrong-type combinations. Upstream's
# ~340 model types a release, at 25, still draw ~8,500 values a release (derandomized: the
# same ones every run). An example costs a few ms now that each type's adapter and
# validators are built once (_checkers); the time had gone to rebuilding them per example,
# not to the number of examples.
FRAGMENT_EXAMPLES = 80
UPSTREAM_EXAMPLES = 25


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


# -- the property test -------------------------------------------------------------------

_TRICKY_STRINGS = ["", "1", "0", "1.0", "true", "false", "yes", "on", "null", "2024-01-01T00:00:00Z", "x"]
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.5, -1.5]),
    st.sampled_from(_TRICKY_STRINGS),
    st.just([]),
    st.just({}),
)


# The strategy of each $ref target by (name, depth, exact), for each $defs (kept alive here,
# so that its id stays its own): hypothesis validates and inspects every strategy it is
# given anew, which cost far more than drawing from it; _complete asks at every example.
_REF_STRATEGIES: dict[int, tuple[dict[str, Any], dict[tuple[str, int, bool], st.SearchStrategy[Any]]]] = {}


def _near(schema: Any, defs: dict[str, Any], depth: int = 0, exact: bool = False) -> st.SearchStrategy[Any]:
    """Values near ``schema``: mostly of its shape, with any leaf swapped for a scalar of
    another JSON type now and then. ``exact``: values of its shape only, with every
    required property and no property the schema does not define (the completeness test
    keeps those that are valid)."""
    if not isinstance(schema, dict) or depth > (20 if exact else 4):
        return _SCALARS  # (exact: deeper down, only required properties are drawn)
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        built = _REF_STRATEGIES.setdefault(id(defs), (defs, {}))[1]
        if (name, depth, exact) not in built:
            built[name, depth, exact] = st.deferred(lambda: _near(defs[name], defs, depth + 1, exact))
        return built[name, depth, exact]
    if exact and "const" in schema:  # (not also any value of its type)
        return st.just(schema["const"])
    if exact and isinstance(schema.get("enum"), list):
        return st.sampled_from(schema["enum"])
    if exact and schema.get("properties") and schema.get("allOf"):
        from acp_codegen.protocol.models_schema import flatten_variant

        schema = flatten_variant(schema, defs)  # an object extending another: both objects' properties
    options: list[st.SearchStrategy[Any]] = []
    for key in ("anyOf", "oneOf", "allOf"):
        options += [_near(branch, defs, depth + 1, exact) for branch in schema.get(key, [])]
    if "const" in schema:
        options.append(st.just(schema["const"]))
    if "enum" in schema:
        options.append(st.sampled_from(schema["enum"]))
    types = schema.get("type", [])
    for kind in [types] if isinstance(types, str) else types:
        options.append(_of_type(kind, schema, defs, depth, exact))
    if "properties" in schema and "type" not in schema:
        options.append(_of_type("object", schema, defs, depth, exact))
    if exact:
        return st.one_of(*options) if options else _SCALARS
    return st.one_of(*options, _SCALARS) if options else _SCALARS


@st.composite
def _objects(
    draw: st.DrawFn, properties: dict[str, st.SearchStrategy[Any]], required: set[str], exact: bool, deep: bool
) -> dict[str, Any]:
    """An object of some of ``properties`` (see _of_type). A module-level composite:
    st.composite reads a function's source each time it decorates one."""
    value = {}
    for name, sub in properties.items():
        # Required keys are nearly always there (always, exact); optional ones about half the time.
        if draw(st.integers(0, 9)) < ((10 if exact else 9) if name in required else 0 if deep else 5):
            value[name] = draw(sub)
    if not exact and draw(st.integers(0, 9)) == 0:
        value[draw(st.sampled_from(["extra", "_meta", "x-other"]))] = draw(_SCALARS)
    return value


def _of_type(
    kind: str, schema: dict[str, Any], defs: dict[str, Any], depth: int, exact: bool = False
) -> st.SearchStrategy[Any]:
    deep = exact and depth > 4
    if kind == "object":
        required = set(schema.get("required", []))
        # Built once here, not at every draw: the same values, without building the strategy again.
        properties = {name: _near(sub, defs, depth + 1, exact) for name, sub in schema.get("properties", {}).items()}
        return _objects(properties, required, exact, deep)
    if kind == "array":
        # (exact: at least minItems, however deep: a $ref reached through aliases is deeper)
        least = schema.get("minItems", 0) if exact and isinstance(schema.get("minItems"), int) else 0
        items = _near(schema.get("items", {}), defs, depth + 1, exact)
        return st.lists(items, min_size=least, max_size=max(least, 0 if deep else 3))
    if exact and kind == "string" and isinstance(schema.get("pattern"), str):
        return st.from_regex(schema["pattern"])
    return {
        "string": st.one_of(st.sampled_from(_TRICKY_STRINGS), st.text(max_size=4)),
        "integer": st.integers(-5, 70_000)
        if exact
        else st.one_of(st.integers(-5, 70_000), st.sampled_from([1.0, 2.0])),
        "number": st.one_of(st.floats(-1e6, 1e6, allow_nan=False), st.integers(-5, 5)),
        "boolean": st.booleans(),
        "null": st.none(),
    }.get(kind, _SCALARS)


def _licensed(schema: Any, null_absent: bool = False) -> Any:
    """The reference schema as the lenient markers amend it: an optional lenient
    property may hold anything (an invalid value is dropped), a skip-invalid-items
    list any items (invalid ones are dropped), a default-on-null property null (read as
    the empty list or map); with ``null_absent`` (``default-on-null = "all"``) every
    optional property null."""
    if isinstance(schema, list):
        return [_licensed(s, null_absent) for s in schema]
    if not isinstance(schema, dict):
        return schema
    # `properties` is a map of schemas, not a schema: a property may be named "properties".
    out = {k: v if k == "properties" else _licensed(v, null_absent) for k, v in schema.items()}
    required = set(schema.get("required", []))
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {name: _licensed(sub, null_absent) for name, sub in schema["properties"].items()}
    for name, sub in out.get("properties", {}).items():
        if not isinstance(sub, dict):
            continue
        if sub.get(LENIENT) and name not in required:
            out["properties"][name] = True
            continue
        amended = {**sub, "items": True} if sub.get(SKIP_ITEMS) else sub
        if sub.get(NULL_AS_DEFAULT) or (null_absent and name not in required):
            amended = {"anyOf": [amended, {"type": "null"}]}
        out["properties"][name] = amended
    return out


def _no_integral_floats(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return value + 0.5
    if isinstance(value, dict):
        return {k: _no_integral_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_integral_floats(v) for v in value]
    return value


def _same_json(a: Any, b: Any) -> bool:
    """Equal as JSON text is: 1, 1.0 and true are three different values."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


_REJECTED = object()


def _drops_only(dumped: Any, value: Any) -> bool:
    """``dumped`` is ``value`` with some object members left out, nothing else changed."""
    if isinstance(dumped, dict) and isinstance(value, dict):
        return dumped.keys() <= value.keys() and all(_drops_only(dumped[k], value[k]) for k in dumped)
    if isinstance(dumped, list) and isinstance(value, list):
        return len(dumped) == len(value) and all(_drops_only(d, v) for d, v in zip(dumped, value, strict=True))
    return _same_json(dumped, value)


# The adapter and the two validators of each type, built once: they cost far more than
# checking one example. Keyed by the models module: one per schema here (the fragments' two
# versions, one package per upstream release). A type's validators refer into a registry
# of the $defs (and one of the licensed $defs), made once a schema: compiling every $defs
# again for each type took 15 times as long as the reference does.
_REGISTRIES: dict[tuple[ModuleType, bool | None], jsonschema_rs.Registry] = {}
_CHECKERS: dict[tuple[ModuleType, str, bool], tuple[TypeAdapter[Any], Any, Any]] = {}
_DEFS = "urn:acp-codegen:defs"


def _registry(models: ModuleType, defs: dict[str, Any], null_absent: bool | None) -> jsonschema_rs.Registry:
    """``defs`` as they are (``null_absent`` None), or as _licensed amends them."""
    if (models, null_absent) not in _REGISTRIES:
        resource = defs if null_absent is None else _licensed(defs, null_absent)
        _REGISTRIES[models, null_absent] = jsonschema_rs.Registry([(_DEFS, {"$defs": resource})])
    return _REGISTRIES[models, null_absent]


def _checkers(
    models: ModuleType, schema: dict[str, Any], name: str, null_absent: bool
) -> tuple[TypeAdapter[Any], Any, Any]:
    if (models, name, null_absent) not in _CHECKERS:
        ref = {"$ref": f"{_DEFS}#/$defs/{name}"}
        _CHECKERS[models, name, null_absent] = (
            TypeAdapter(getattr(models, name)),
            jsonschema_rs.validator_for(ref, registry=_registry(models, schema["$defs"], None)),
            jsonschema_rs.validator_for(ref, registry=_registry(models, schema["$defs"], null_absent)),
        )
    return _CHECKERS[models, name, null_absent]


def _check_type(
    models: ModuleType,
    schema: dict[str, Any],
    name: str,
    value: Any,
    exact_round_trip: bool = True,
    null_absent: bool = False,
) -> None:
    adapter, strict, licensed = _checkers(models, schema, name, null_absent)
    text = json.dumps(value)
    try:
        parsed: Any = adapter.validate_python(copy.deepcopy(value))
    except ValidationError:
        parsed = _REJECTED
    try:
        from_json: Any = adapter.validate_json(text)
    except ValidationError:
        from_json = _REJECTED
    accepted = parsed is not _REJECTED
    assert (from_json is not _REJECTED) == accepted, f"validate_json and validate_python disagree on {text}"
    expected = licensed.is_valid(_no_integral_floats(value))
    assert accepted == expected, f"{name}: model {'accepts' if accepted else 'rejects'} {text}"
    if accepted:
        dumped = adapter.dump_python(parsed, mode="json", by_alias=True, exclude_unset=True)
        assert _same_json(dumped, adapter.dump_python(from_json, mode="json", by_alias=True, exclude_unset=True))
        # An integral float is no integer to the models (see generated-package.md): where
        # a lenient field drops it, the value does not come back whole.
        if strict.is_valid(value) and exact_round_trip and _same_json(value, _no_integral_floats(value)):
            assert _same_json(dumped, value), f"{name}: {text} re-emitted as {json.dumps(dumped)}"
        elif strict.is_valid(value):
            assert _drops_only(dumped, value) and strict.is_valid(dumped), f"{name}: {text} became {json.dumps(dumped)}"
        else:  # only lenient recovery made it acceptable: what is left is valid
            assert strict.is_valid(dumped), f"{name}: {text} recovered to invalid {json.dumps(dumped)}"


def _type_names(models: ModuleType, schema: dict[str, Any]) -> list[str]:
    return sorted(n for n in schema["$defs"] if hasattr(models, n))


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,  # the same values every run: a failure reproduces
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


def _property(
    models: ModuleType, schema: dict[str, Any], name: str, examples: int, exact: bool = True, null_absent: bool = False
) -> None:
    @_settings(examples)
    @given(_near(schema["$defs"][name], schema["$defs"]))
    def accepted_alike(value: Any) -> None:
        _check_type(models, schema, name, value, exact, null_absent)

    accepted_alike()


def test_fragment_models_with_null_as_not_given_accept_what_the_widened_schema_accepts(tmp_path: Path) -> None:
    """``default-on-null = "all"``, over the edge fixture (optional not-null fields
    without upstream's markers) and the fragments."""
    from acp_codegen.config.settings import ModelOptions, Settings
    from acp_codegen.generate.pipeline import generate

    for schema_dir, features in (
        (ROOT / "tests" / "fixtures" / "edge", {"edge_feature"}),
        (ROOT / "schema", {FEATURE}),
    ):
        result = generate(
            schema_dir, frozenset(features), ROOT, settings=Settings(options=ModelOptions(default_on_null="all"))
        )
        package = f"acp_null_absent_{schema_dir.name}"
        models = imported_models(tmp_path, package, result.files)[1]
        protocol = next(p for p in result.protocols if p.version == 1)
        for name in _type_names(models, protocol.schema):
            _property(models, protocol.schema, name, FRAGMENT_EXAMPLES // 2, null_absent=True)


@functools.cache
def _fragment_protocols() -> dict[int, Any]:
    # The schema loader names fields through datamodel-code-generator, which
    # `nox -s lowest_pydantic` cannot install (it refuses pydantic 2.10.0 - 2.10.2).
    pytest.importorskip("datamodel_code_generator")
    from acp_codegen.generate.pipeline import load_protocols

    protocols, _ = load_protocols(ROOT / "schema", frozenset({FEATURE}), ROOT)
    return {p.version: p for p in protocols}


# -- upstream: every release at hand (support.UPSTREAM_RELEASES), generated once per module --


@pytest.fixture(scope="module")
def upstream_models(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``load(release, default_on_null="marked")``: {version: (protocol, models module)} of
    that snapshot, generated (ruff's layout: faster than black's, the same models) and
    imported once."""
    from acp_codegen.config.settings import ModelOptions, Settings
    from acp_codegen.generate.pipeline import generate
    from acp_codegen.style import Style

    loaded: dict[tuple[str, str], dict[int, tuple[Any, ModuleType]]] = {}

    def load(release: str, default_on_null: str = "marked") -> dict[int, tuple[Any, ModuleType]]:
        key = (release, default_on_null)
        if key not in loaded:
            base = UPSTREAM_RELEASES[release]
            bases = {v: base / f"v{v}" / "schema.unstable.json" for v in (1, 2)}
            bases = {v: path for v, path in bases.items() if path.is_file()}
            if not bases:
                pytest.skip(missing(base))
            options = ModelOptions(default_on_null=default_on_null)
            result = generate(
                ROOT / "schema",
                frozenset({FEATURE}),
                ROOT,
                bases,
                conversions=False,
                style=Style("ruff"),
                settings=Settings(options=options),
            )
            out = tmp_path_factory.mktemp("upstream")
            # One name a release and mode: all import here.
            package = f"acp_wire_{release.replace('-', '_').replace('.', '_')}_{default_on_null}"
            modules = imported_models(out, package, result.files, bases)
            loaded[key] = {p.version: (p, modules[p.version]) for p in result.protocols if p.version in bases}
        return loaded[key]

    return load


@pytest.mark.slow
@pytest.mark.parametrize(
    ("release", "default_on_null"),
    [
        *(pytest.param(r, "marked", marks=() if r == NEWEST else ECOSYSTEM) for r in sorted(UPSTREAM_V1)),
        pytest.param("2026-11", "all", marks=ECOSYSTEM),
    ],
)
def test_upstream_models_accept_what_the_schema_accepts(
    release: str, default_on_null: str, upstream_models: Any
) -> None:
    protocol, models = upstream_models(release, default_on_null)[1]
    names = _type_names(models, protocol.schema)
    assert len(names) > 200
    gaps = {}
    for name in names:
        try:
            _property(models, protocol.schema, name, UPSTREAM_EXAMPLES, null_absent=default_on_null == "all")
        except AssertionError as exc:
            gaps[name] = str(exc).splitlines()[0]
    assert not gaps, json.dumps(gaps, indent=1)  # the types whose model and schema disagree


# -- completeness: every property typed, the right variant picked ----------------------------

# Examples per type: enough to reach each optional property and each nested variant a few
# times; kept low because the suite's run time matters (the check is per type, ~300 a version).
COMPLETE_FRAGMENT_EXAMPLES = 25
COMPLETE_UPSTREAM_EXAMPLES = 8


def _untyped(value: Any, at: str = "") -> list[str]:
    """Where a parsed value keeps a property in ``model_extra``, at any depth."""
    if isinstance(value, BaseModel):
        out = [f"{at}/{key}" for key in value.model_extra or {}]
        for name in type(value).model_fields:
            out += _untyped(getattr(value, name), f"{at}/{name}")
        return out
    if isinstance(value, (list, tuple)):
        return [p for i, item in enumerate(value) for p in _untyped(item, f"{at}/{i}")]
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _untyped(item, f"{at}/{key}")]
    return []


def _class_variants(schema: dict[str, Any], name: str) -> list[str]:
    """The classes a union type names directly (its variants)."""
    definition = schema["$defs"][name]
    refs = [v.get("$ref", "") for key in ("anyOf", "oneOf") for v in definition.get(key, []) if isinstance(v, dict)]
    return [r.rsplit("/", 1)[-1] for r in refs if r]


def _complete(models: ModuleType, schema: dict[str, Any], name: str, examples: int) -> None:
    """An instance drawn from the schema of ``name`` (of one of its variants, for a union)
    with only the properties the schema defines parses with an empty ``model_extra`` at
    every level, and a union picks the variant it was drawn from: another only where the
    instance is valid for that variant's schema and the parse types it all (the schema
    itself does not tell them apart). Nested unions are read as the same union at the top
    level is (pydantic's union choice does not depend on where the union sits)."""
    defs = schema["$defs"]
    classes = [v for v in _class_variants(schema, name) if isinstance(getattr(models, v, None), type)]
    drawn = [(v, {"$ref": f"#/$defs/{v}"}) for v in classes] or [(name, defs[name])]
    validators = {n: _checkers(models, schema, n, False)[1] for n, _ in drawn}
    cases = {n: st.tuples(st.just(n), _near(s, defs, exact=True)) for n, s in drawn}  # built once, drawn from often

    @_settings(examples)
    @given(st.sampled_from(drawn).flatmap(lambda d: cases[d[0]]))
    def complete(case: tuple[str, Any]) -> None:
        variant, value = case
        assume(validators[variant].is_valid(value))
        try:
            parsed = _checkers(models, schema, name, False)[0].validate_python(copy.deepcopy(value))
        except ValidationError as exc:
            raise AssertionError(f"{name}: refuses {json.dumps(value)}, valid for {variant}: {exc}") from None
        untyped = _untyped(parsed)
        assert not untyped, f"{name}: {json.dumps(value)} keeps {untyped} untyped"
        picked = type(parsed).__name__
        if classes and picked != variant:
            assert _checkers(models, schema, picked, False)[1].is_valid(value), (
                f"{name}: {json.dumps(value)} (a {variant}) parsed as {picked}"
            )

    complete()


def _check_complete(models: ModuleType, schema: dict[str, Any], examples: int) -> None:
    names = _type_names(models, schema)
    gaps = {}
    for name in names:
        try:
            _complete(models, schema, name, examples)
        except AssertionError as exc:
            gaps[name] = str(exc).splitlines()[0][:300]
    assert not gaps, json.dumps(gaps, indent=1)


@pytest.mark.parametrize("version", [1, 2])
def test_fragment_models_type_every_property(version: int) -> None:
    _check_complete(v1 if version == 1 else v2, _fragment_protocols()[version].schema, COMPLETE_FRAGMENT_EXAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("release", EVERY_RELEASE)
def test_upstream_models_type_every_property(release: str, upstream_models: Any) -> None:
    for protocol, models in upstream_models(release).values():
        _check_complete(models, protocol.schema, COMPLETE_UPSTREAM_EXAMPLES)


# -- what the models say about themselves ----------------------------------------------------

# Run in a fresh interpreter: argv = sys.path entry, models module. Prints, per class whose
# fields differ, the fields right after import and after model_rebuild(force=True).
_FIELDS_AT_IMPORT = """
import importlib, json, sys
from pydantic import BaseModel
sys.path.insert(0, sys.argv[1])
models = importlib.import_module(sys.argv[2])
classes = [c for c in vars(models).values() if isinstance(c, type) and issubclass(c, BaseModel)]
classes = [c for c in classes if c.__module__ == models.__name__]
def fields(cls):
    return [[name, f.alias, repr(f.annotation), repr(f.default)] for name, f in cls.model_fields.items()]
at_import = {c.__name__: fields(c) for c in classes}
for c in classes:
    c.model_rebuild(force=True)
differ = {c.__name__: [at_import[c.__name__], fields(c)] for c in classes if fields(c) != at_import[c.__name__]}
print(json.dumps({"classes": len(classes), "differ": differ}))
"""


def _fields_at_import(models: ModuleType) -> dict[str, Any]:
    root = Path(models.__file__).parents[2]  # <root>/<package>/v<n>/models.py
    done = subprocess.run(
        [sys.executable, "-c", _FIELDS_AT_IMPORT, str(root), models.__name__],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout))


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
def test_fragment_model_fields_are_right_at_import(models: ModuleType) -> None:
    found = _fields_at_import(models)
    assert found["classes"] >= 15 and found["differ"] == {}


@pytest.mark.slow
@pytest.mark.parametrize("release", EVERY_RELEASE)
def test_upstream_model_fields_are_right_at_import(release: str, upstream_models: Any) -> None:
    for _, models in upstream_models(release).values():
        found = _fields_at_import(models)
        assert found["classes"] > 200 and found["differ"] == {}, json.dumps(found["differ"], indent=1)[:3000]


@pytest.mark.slow
@pytest.mark.parametrize("release", EVERY_RELEASE)
def test_upstream_tags_default_and_none_is_a_class_name(release: str, upstream_models: Any) -> None:
    for _, models in upstream_models(release).values():
        classes = {n for n, c in vars(models).items() if isinstance(c, type) and issubclass(c, BaseModel)}
        source = Path(models.__file__).read_text(encoding="utf-8")
        invented = [n for n in classes if f'Literal["{n}"]' in source]
        assert invented == []  # a tag made up from a class name (datamodel-code-generator's fallback)
        tagged = 0
        for name in sorted(classes):
            for field in getattr(models, name).model_fields.values():
                if any(repr(m) == "TAG" for m in field.metadata):
                    tagged += 1
                    assert (field.default,) == get_args(field.annotation), name
        assert tagged > 40


@pytest.mark.slow
@pytest.mark.parametrize("release", EVERY_RELEASE)
@pytest.mark.parametrize("mode", ["form", "url"])
def test_upstream_request_scoped_elicitation_is_the_request_variant(
    release: str, mode: str, upstream_models: Any
) -> None:
    message = {"message": "Sign in", "mode": mode, "requestId": 7}
    message |= {"requestedSchema": {"type": "object", "properties": {}}} if mode == "form" else {}
    message |= {"url": "https://example.com/", "elicitationId": "e1"} if mode == "url" else {}
    for _, models in upstream_models(release).values():
        parsed = TypeAdapter(models.CreateElicitationRequest).validate_python(message)
        assert type(parsed).__name__ == f"CreateElicitationRequest{mode.title()}Request"
        assert (parsed.request_id, parsed.model_extra) == (7, {})
        session = TypeAdapter(models.CreateElicitationRequest).validate_python(
            {k: v for k, v in message.items() if k != "requestId"} | {"sessionId": "s", "toolCallId": "t"}
        )
        assert type(session).__name__.endswith("Session") and (session.session_id, session.tool_call_id) == ("s", "t")


@pytest.mark.slow
@ECOSYSTEM
def test_schema_v1_19_0_titled_items_and_custom_property_kinds_parse(upstream_models: Any) -> None:
    models = upstream_models("schema-v1.19.0")[1][1]
    titled = TypeAdapter(models.MultiSelectItems).validate_python({"anyOf": [{"const": "a", "title": "A"}]})
    assert type(titled) is models.TitledMultiSelectItems and titled.model_extra == {}
    custom = TypeAdapter(models.ElicitationPropertySchema).validate_python({"type": "_vendor_color"})
    assert type(custom) is models.ElicitationPropertySchemaOther and custom.type == "_vendor_color"
    with pytest.raises(ValidationError):  # a known kind is its own variant or nothing
        TypeAdapter(models.ElicitationPropertySchema).validate_python({"type": "number", "minimum": "x"})
