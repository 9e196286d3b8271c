"""The overlay stage: fragments may only add feature-marked items to an upstream base."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.errors import SchemaError
from codegen.overlay import load_base, meta_path, overlay
from codegen.pipeline import load_protocols

ROOT = Path(__file__).resolve().parent.parent
FEATURE = frozenset({"unstable_session_archive"})
FRAGMENT = "schema/v1/schema.json"


def _fragments(tmp_path: Path, edit: Callable[[dict[str, Any]], None] | None = None, meta_edit=None) -> Path:
    """A copy of the v1 fragments under tmp_path/schema, edited."""
    schema_dir = tmp_path / "schema"
    shutil.copytree(ROOT / "schema" / "v1", schema_dir / "v1")
    for name, fn in (("schema.json", edit), ("meta.json", meta_edit)):
        if fn is not None:
            path = schema_dir / "v1" / name
            data = json.loads(path.read_text(encoding="utf-8"))
            fn(data)
            path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return schema_dir


def _problems(upstream: Path, schema_dir: Path, root: Path) -> list[str]:
    with pytest.raises(SchemaError) as caught:
        load_protocols(schema_dir, FEATURE, root, {1: upstream / "v1" / "schema.json"})
    return [str(p) for p in caught.value.problems]


def _set(path: list[str], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        node = data["$defs"]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = copy.deepcopy(value)

    return edit


CONFLICTS = [
    pytest.param(
        _set(["SessionInfo", "properties", "cwd"], {"type": "integer"}),
        None,
        "/$defs/SessionInfo/properties/cwd: is integer, but the base says string",
        "/$defs/SessionInfo/properties/cwd",
        id="property-type",
    ),
    pytest.param(
        _set(["SessionInfo", "properties", "colour"], {"type": "string"}),
        None,
        "/$defs/SessionInfo/properties/colour: property 'colour' is not in the base (no x-feature)",
        "/$defs/SessionInfo/properties",
        id="unmarked-new-property",
    ),
    pytest.param(
        _set(["SessionInfo", "required"], ["sessionId", "cwd", "title"]),
        None,
        "/$defs/SessionInfo/properties/title: is required here, but not in the base",
        "/$defs/SessionInfo/properties/title",
        id="required-differs",
    ),
    pytest.param(
        lambda d: d["$defs"]["SessionUpdate"]["oneOf"].append(
            {"type": "object", "properties": {"sessionUpdate": {"const": "bogus"}}, "required": ["sessionUpdate"]}
        ),
        None,
        "/$defs/SessionUpdate/oneOf/1: variant is not in the base (no x-feature)",
        "/$defs/SessionUpdate/oneOf",
        id="unmarked-new-variant",
    ),
    pytest.param(
        _set(
            ["SessionId"],
            {"type": "object", "properties": {"id": {"type": "string", "x-feature": "unstable_session_archive"}}},
        ),
        None,
        "/$defs/SessionId: kind differs: object here, alias in the base",
        "/$defs/SessionId",
        id="kind",
    ),
    pytest.param(
        _set(["SessionId"], {"type": "integer"}),
        None,
        "/$defs/SessionId: is integer, but the base says string",
        "/$defs/SessionId",
        id="alias-type",
    ),
    pytest.param(
        lambda d: [
            d["$defs"][t].update({"x-method": "session/enumerate"})
            for t in ("ListSessionsRequest", "ListSessionsResponse")
        ],
        lambda m: m["agentMethods"].update(session_list="session/enumerate"),
        "/$defs/ListSessionsRequest/x-method: x-method is 'session/enumerate', base has 'session/list'",
        "/$defs/ListSessionsRequest/x-method",
        id="x-method",
    ),
]


@pytest.mark.parametrize(("edit", "meta_edit", "expected", "base_pointer"), CONFLICTS)
def test_a_fragment_disagreeing_with_the_base_names_both_places(
    upstream, tmp_path, edit, meta_edit, expected, base_pointer
):
    schema_dir = _fragments(tmp_path, edit, meta_edit)
    problems = _problems(upstream, schema_dir, tmp_path)
    assert any(
        p.startswith(f"{FRAGMENT}: {expected} (base: ") and p.endswith(f"upstream/v1/schema.json: {base_pointer})")
        for p in problems
    ), problems


def test_a_method_renamed_against_the_base_meta_is_refused(upstream, tmp_path):
    schema_dir = _fragments(
        tmp_path,
        _set(["SessionNotification", "x-method"], "session/changed"),
        lambda m: m["clientMethods"].update(session_update="session/changed"),
    )
    with pytest.raises(SchemaError) as caught:
        load_protocols(schema_dir, FEATURE, tmp_path, {1: upstream / "v1" / "schema.json"})
    assert any("/clientMethods/session_update" in str(p) and "session/update" in str(p) for p in caught.value.problems)


def test_feature_marked_additions_are_added_to_the_base_types(upstream):
    base = load_base(upstream / "v1" / "schema.json", 1, ROOT)
    assert "archived" not in base.schema.data["$defs"]["SessionInfo"]["properties"]
    from codegen.load import load_version

    merged = overlay(base, load_version(ROOT / "schema" / "v1", ROOT))
    info = merged.schemas[0].data["$defs"]["SessionInfo"]
    assert info["properties"]["archived"]["x-feature"] == "unstable_session_archive"
    assert info["description"] == base.schema.data["$defs"]["SessionInfo"]["description"]  # the base's prose wins
    variants = merged.schemas[0].data["$defs"]["SessionUpdate"]["oneOf"]
    assert len(variants) == len(base.schema.data["$defs"]["SessionUpdate"]["oneOf"])  # no duplicate variant
    new_types = set(merged.schemas[1].data["$defs"])
    assert {"ArchiveSessionRequest", "SessionArchiveFilter"} <= new_types
    assert not new_types & set(base.schema.data["$defs"])
    assert merged.meta.data["agentMethods"]["session_archive"] == "session/archive"
    assert merged.meta.data["agentMethods"]["initialize"] == "initialize"
    assert [s.name for s in merged.extra_inputs] == ["../shared/upstream/v1/meta.json"]


@pytest.mark.parametrize(
    ("schema", "meta"),
    [("schema.json", "meta.json"), ("schema.unstable.json", "meta.unstable.json"), ("custom.json", "meta.json")],
)
def test_a_base_pairs_with_the_meta_file_of_its_own_name(schema, meta):
    assert meta_path(Path("/x") / schema) == Path("/x") / meta


def test_a_base_without_meta_takes_its_methods_from_its_markers(upstream, tmp_path):
    shutil.copy(upstream / "v1" / "schema.unstable.json", tmp_path / "schema.unstable.json")
    derived = load_base(tmp_path / "schema.unstable.json", 1, tmp_path).meta.data
    published = json.loads((upstream / "v1" / "meta.unstable.json").read_text(encoding="utf-8"))
    for section in ("agentMethods", "clientMethods", "protocolMethods"):
        assert derived[section] == dict(sorted(published[section].items()))


def test_cli_exits_2_on_a_conflict_and_leaves_the_output_alone(upstream, tmp_path, capsys):
    schema_dir = _fragments(tmp_path, _set(["SessionInfo", "properties", "cwd"], {"type": "integer"}))
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("previous output", encoding="utf-8")
    code = main(
        [
            "generate",
            "--schema-dir",
            str(schema_dir),
            "--out",
            str(out),
            "--base-v1",
            str(upstream / "v1" / "schema.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "/$defs/SessionInfo/properties/cwd" in err and "../shared/upstream/v1/schema.json" in err
    assert "Traceback" not in err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_cli_refuses_a_base_for_a_version_without_fragments(upstream, tmp_path, capsys):
    schema_dir = _fragments(tmp_path)
    code = main(
        [
            "generate",
            "--schema-dir",
            str(schema_dir),
            "--out",
            str(tmp_path / "o"),
            "--base-v2",
            str(upstream / "v2" / "schema.json"),
        ]
    )
    assert code == 2
    assert "base for v2, which has no fragments" in capsys.readouterr().err


def test_pyproject_names_bases_relative_to_itself(tmp_path):
    from codegen.config import load_config

    (tmp_path / "pyproject.toml").write_text(
        '[tool.acp-codegen]\nbase-v1 = "../up/v1/schema.json"\nbase-v2 = "up2/schema.unstable.json"\n', encoding="utf-8"
    )
    config = load_config(tmp_path)
    assert config.bases == {1: tmp_path / "../up/v1/schema.json", 2: tmp_path / "up2/schema.unstable.json"}


def test_pyproject_base_must_be_a_path_string(tmp_path):
    from codegen.config import ConfigError, load_config

    (tmp_path / "pyproject.toml").write_text("[tool.acp-codegen]\nbase-v1 = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="base-v1 must be a path string"):
        load_config(tmp_path)


def _stable_base(tmp_path: Path) -> Path:
    """The v1 fragments with every feature-marked item removed: a base the fragments
    must overlay cleanly onto, and that needs no upstream checkout."""
    from codegen.features import FEATURE_KEY, _prune

    data = json.loads((ROOT / FRAGMENT).read_text(encoding="utf-8"))
    data["$defs"] = {
        name: _prune(schema, frozenset()) for name, schema in data["$defs"].items() if FEATURE_KEY not in schema
    }
    meta = json.loads((ROOT / "schema" / "v1" / "meta.json").read_text(encoding="utf-8"))
    del meta["features"]
    meta["agentMethods"] = {k: v for k, v in meta["agentMethods"].items() if "archive" not in k}
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "schema.json").write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "base" / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return tmp_path / "base" / "schema.json"


@pytest.mark.parametrize("enabled", [FEATURE, frozenset()], ids=["with-feature", "without-feature"])
def test_fragments_over_their_own_stable_surface_give_the_fragments_back(tmp_path, enabled):
    base = _stable_base(tmp_path)
    plain, _ = load_protocols(ROOT / "schema", enabled, ROOT)
    overlaid, _ = load_protocols(_fragments(tmp_path), enabled, tmp_path, {1: base})
    assert sorted(overlaid[0].types) == sorted(plain[0].types)
    assert [(m.name, m.side, m.kind, m.feature) for m in overlaid[0].methods] == [
        (m.name, m.side, m.kind, m.feature) for m in plain[0].methods
    ]
    for name, typedef in plain[0].types.items():
        assert [f.name for f in overlaid[0].types[name].fields] == [f.name for f in typedef.fields], name


def test_a_conflict_with_a_crafted_base_is_caught_without_upstream(tmp_path):
    base = _stable_base(tmp_path)
    schema_dir = _fragments(tmp_path, _set(["SessionInfo", "properties", "title"], {"type": "boolean"}))
    with pytest.raises(SchemaError) as caught:
        load_protocols(schema_dir, FEATURE, tmp_path, {1: base})
    assert [str(p) for p in caught.value.problems] == [
        f"{FRAGMENT}: /$defs/SessionInfo/properties/title: is boolean, but the base says string | null"
        " (base: base/schema.json: /$defs/SessionInfo/properties/title)"
    ]
