"""The conversions stage: declared differences are checked against both schemas, and
``generated/convert.py`` is rendered from them."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp_codegen import cli
from acp_codegen.errors import SchemaError
from acp_codegen.generate.pipeline import generate, load_protocols, read_declarations
from acp_codegen.plan.conversions import CONVERSIONS_FILE, plan
from support import FIXTURES, ROOT, SCHEMA, SchemaCopy

SMALL = FIXTURES / "convert_small"
ARCHIVE = "unstable_session_archive"


def _drop(section: str, **match: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        before = len(data[section])
        data[section] = [d for d in data[section] if any(d.get(k) != v for k, v in match.items())]
        assert len(data[section]) == before - 1, f"fixture edit matched nothing: {section} {match}"

    return edit


def _problems(schema_dir: Path, features: frozenset[str] = frozenset({ARCHIVE})) -> str:
    """The conversions stage's verdict (the stages before it, without rendering models)."""
    root = schema_dir.parent
    with pytest.raises(SchemaError) as info:
        protocols, sources = load_protocols(schema_dir, features, root)
        plan(protocols, sources, *read_declarations(schema_dir, root, True))
    return str(info.value)


@pytest.fixture(scope="module")
def stable_files() -> dict[str, str]:
    return generate(SCHEMA, frozenset(), ROOT).files


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(
            _drop("renamedTypes", v1="SessionNotification"),
            [
                "schema/v1/schema.json: /$defs/SessionNotification: type SessionNotification exists only in v1",
                "schema/v2/schema.json: /$defs/UpdateSessionNotification: type UpdateSessionNotification exists only",
            ],
            id="renamed-type",
        ),
        pytest.param(
            _drop("typesOnlyIn", type="AbsolutePath"),
            ["schema/v2/schema.json: /$defs/AbsolutePath: type AbsolutePath exists only in v2"],
            id="type-only-in-v2",
        ),
        pytest.param(
            _drop("fields", type="InitializeResponse", v1="agentInfo"),
            [
                "/$defs/InitializeResponse/properties/agentInfo: InitializeResponse.agentInfo exists only in v1",
                "/$defs/InitializeResponse/properties/info: InitializeResponse.info exists only in v2",
            ],
            id="renamed-field",
        ),
        pytest.param(
            _drop("fields", type="SessionCapabilities", v1="close"),
            ["/$defs/SessionCapabilities/properties/close: SessionCapabilities.close exists only in v1"],
            id="field-only-in-v1",
        ),
        pytest.param(
            _drop("fields", type="SessionInfo", v1="cwd"),
            ["/$defs/SessionInfo/properties/cwd: SessionInfo.cwd: v1 is string, v2 is AbsolutePath"],
            id="value-rule",
        ),
        pytest.param(
            _drop("fields", type="SessionInfo", v1="updatedAt"),
            ["SessionInfo.updatedAt: v1 is string | null, v2 is string<date-time> | null"],
            id="date-time-rule",
        ),
    ],
)
def test_an_undeclared_difference_fails_generation_naming_type_and_field(
    schema_copy: SchemaCopy, edit: Callable[[dict[str, Any]], None], expected: list[str]
) -> None:
    message = _problems(schema_copy(edits={CONVERSIONS_FILE: edit}))
    for text in expected:
        assert text in message


def test_an_accepted_nullability_difference_must_be_declared(schema_copy: SchemaCopy) -> None:
    def edit(data: dict[str, Any]) -> None:
        for d in data["fields"]:
            if d["v1"] == "sessionCapabilities":
                del d["accept"]

    message = _problems(schema_copy(edits={CONVERSIONS_FILE: edit}))
    assert "AgentCapabilities.sessionCapabilities (v2 session): nullable in v2 only" in message


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(
            lambda d: d["fields"].insert(0, {"type": "SessionInfo", "v1": "title", "v2": "title", "value": "same"}),
            "schema/conversions.json: /fields/0: SessionInfo.title: value rule 'same' declared, but both versions",
            id="value-rule-without-difference",
        ),
        pytest.param(
            lambda d: d["typesOnlyIn"].append({"type": "Nowhere", "version": 1}),
            "schema/conversions.json: /typesOnlyIn/4: covers no difference between the versions",
            id="unknown-type",
        ),
        pytest.param(
            lambda d: d["invariants"].append(
                {"version": 2, "type": "SessionCapabilities", "if": "archive", "then": "x"}
            ),
            "schema/conversions.json: /invariants/1/then: v2 has no x",
            id="invariant-on-unknown-field",
        ),
        pytest.param(
            lambda d: d["fields"][0].update(value="rename"),
            'schema/conversions.json: /fields/0/value: "rename" is not one of',
            id="unknown-value-rule",
        ),
        pytest.param(
            lambda d: d.update(versions=[1, 3]),
            "schema/conversions.json: /versions: [1,2] was expected",
            id="wrong-versions",
        ),
    ],
)
def test_a_declaration_that_covers_nothing_or_is_malformed_is_refused(
    schema_copy: SchemaCopy, edit: Callable[[dict[str, Any]], None], expected: str
) -> None:
    assert expected in _problems(schema_copy(edits={CONVERSIONS_FILE: edit}))


def test_generation_without_the_feature_skips_declarations_about_pruned_items(stable_files: dict[str, str]) -> None:
    source = stable_files["convert.py"]
    assert "archive" not in source  # the archive capability, its fill and invariant are pruned
    assert '"session/list"' in source and '"session/archive"' not in source


def test_stable_surface_conversion_behaves(tmp_path: Path, stable_files: dict[str, str]) -> None:
    out = tmp_path / "pkg"
    for rel, text in stable_files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        "stable_pkg", out / "__init__.py", submodule_search_locations=[str(out)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["stable_pkg"] = module
    try:
        spec.loader.exec_module(module)
        convert = importlib.import_module("stable_pkg.convert")
        caps = {"sessionCapabilities": {"list": {}, "archive": {}}}
        # Without the feature `archive` is an unknown property: carried, and no `list` is invented.
        assert convert.convert("AgentCapabilities", caps, source=1, target=2) == {"session": {"archive": {}}}
        assert convert.convert("AgentCapabilities", {"session": {"archive": {}}}, source=2, target=1) == {
            "sessionCapabilities": {"archive": {}}
        }
    finally:
        for name in [n for n in sys.modules if n == "stable_pkg" or n.startswith("stable_pkg.")]:
            del sys.modules[name]


def test_without_a_conversions_file_no_convert_module_is_generated(tmp_path: Path, schema_copy: SchemaCopy) -> None:
    schema_dir = schema_copy()
    (schema_dir / CONVERSIONS_FILE).unlink()
    protocols, sources = load_protocols(schema_dir, frozenset({ARCHIVE}), tmp_path)
    assert read_declarations(schema_dir, tmp_path, True) == ()
    assert plan(protocols, sources, None) is None


@pytest.mark.parametrize("features", [frozenset({"widget_flags"}), frozenset()], ids=["flags", "stable"])
def test_convert_module_of_a_small_fixture_matches_golden(golden: Any, features: frozenset[str]) -> None:
    files = generate(SMALL, features, ROOT).files
    golden(f"convert_small/{'-'.join(sorted(features)) or 'stable'}/convert.py", files["convert.py"])


def test_declaration_text_reaches_convert_module_only_as_literals(tmp_path: Path, schema_copy: SchemaCopy) -> None:
    why = '"""; import os  # \'\\"\n'

    def edit(data: dict[str, Any]) -> None:
        data["invariants"][0]["why"] = why
        data["fields"][2]["fill"]["value"] = {"k\"'": ["\\", None]}

    schema_dir = schema_copy(source=SMALL, edits={CONVERSIONS_FILE: edit})
    source = generate(schema_dir, frozenset({"widget_flags"}), tmp_path).files["convert.py"]
    constants = [n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant)]
    assert why in constants
    assert "k\"'" in constants and "\\" in constants
    assert not [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import) and n.names[0].name == "os"]


def test_cli_reports_an_undeclared_difference_with_exit_2_and_leaves_output(
    tmp_path: Path, schema_copy: SchemaCopy, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    schema_dir = schema_copy(edits={CONVERSIONS_FILE: _drop("fields", type="AgentCapabilities", v1="loadSession")})
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("previous", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    status = cli.main(["generate", "--schema-dir", str(schema_dir), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2
    assert "AgentCapabilities.loadSession exists only in v1" in err
    assert "Traceback" not in err
    assert (out / "keep.txt").read_text(encoding="utf-8") == "previous"


def _upstream_only(flag: bool) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        entry: dict[str, Any] = {"type": "SessionInfo", "v1": None, "v2": "status"}
        data["fields"].append({**entry, "upstream": True} if flag else entry)

    return edit


def test_an_upstream_only_declaration_is_not_stale_where_the_fragments_lack_the_field(
    schema_copy: SchemaCopy,
) -> None:
    stale = schema_copy(edits={CONVERSIONS_FILE: _upstream_only(False)})
    assert f"/fields/{_field_count()}: covers no difference" in _problems(stale)
    schema_dir = schema_copy("flagged/schema", edits={CONVERSIONS_FILE: _upstream_only(True)})
    protocols, sources = load_protocols(schema_dir, frozenset({ARCHIVE}), schema_dir.parent)
    assert plan(protocols, sources, *read_declarations(schema_dir, schema_dir.parent, True)) is not None


def _field_count() -> int:
    return len(json.loads((SCHEMA / CONVERSIONS_FILE).read_text(encoding="utf-8"))["fields"])


@pytest.mark.parametrize("how", ["flag", "pyproject"])
def test_conversions_can_be_switched_off(
    tmp_path: Path,
    schema_copy: SchemaCopy,
    how: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An undeclared difference: with conversions on, exit 2; off, the rest generates.
    schema_dir = schema_copy(edits={CONVERSIONS_FILE: _drop("fields", type="AgentCapabilities", v1="loadSession")})
    monkeypatch.chdir(tmp_path)
    args = ["generate", "--schema-dir", str(schema_dir), "--out", str(tmp_path / "out")]
    assert cli.main(args) == 2
    if how == "flag":
        args.append("--no-conversions")
    else:
        (tmp_path / "pyproject.toml").write_text("[tool.acp-codegen]\nconversions = false\n", encoding="utf-8")
    assert cli.main(args) == 0, capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if p.suffix == ".py") == [
        "__init__.py",
        "_router.py",
        "_runtime.py",
        "_shared.py",
    ]
    assert cli.main(["check", *args[1:]]) == 0


def test_the_conversions_key_must_be_a_boolean(tmp_path: Path) -> None:
    from acp_codegen.config.table import load_config
    from acp_codegen.errors import ConfigError

    (tmp_path / "pyproject.toml").write_text('[tool.acp-codegen]\nconversions = "no"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="conversions must be true or false"):
        load_config(tmp_path)


def test_a_value_rule_holds_where_the_target_schema_states_it() -> None:
    """Issue 64: read through $ref, allOf, every branch of a union but null, and (for the
    string rules) the items a list holds; a keyword elsewhere does not count."""
    from acp_codegen.plan.conversions.annotations import states
    from acp_codegen.plan.conversions.declarations import LEAF_RULES, STATED_BY

    defs = {"AbsolutePath": {"type": "string"}, "Stamp": {"type": "string", "format": "date-time"}}

    def said(rule: str, node: dict[str, Any]) -> bool:
        return states(node, defs, STATED_BY[rule], rule in LEAF_RULES)

    assert said("date-time", {"type": ["string", "null"], "format": "date-time"})
    assert not said("date-time", {"type": ["string", "null"], "x-deserialize-default-on-error": True})
    assert said("date-time", {"anyOf": [{"$ref": "#/$defs/Stamp"}, {"type": "null"}]})
    assert not said("date-time", {"anyOf": [{"$ref": "#/$defs/Stamp"}, {"type": "string"}]})  # one branch takes any
    assert said("absolute-path", {"allOf": [{"$ref": "#/$defs/AbsolutePath"}]})
    assert said("absolute-path", {"type": "array", "items": {"$ref": "#/$defs/AbsolutePath"}})
    assert said("non-empty", {"type": "array", "items": {"type": "string"}, "minItems": 1})
    assert not said("non-empty", {"type": "array", "items": {"type": "string", "minItems": 1}})  # (of the list)
    assert said("non-negative", {"type": ["integer", "null"], "minimum": 0})
    assert not said("non-negative", {"type": ["integer", "null"], "format": "uint64"})
    assert said("unit-interval", {"type": "number", "minimum": 0, "maximum": 1})
    assert not said("currency", {"type": "string"}) and said("currency", {"type": "string", "pattern": "^[A-Z]{3}$"})
