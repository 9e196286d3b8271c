"""The overlay stage: fragments may only add feature-marked items to an upstream base."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.cli import main
from acp_codegen.errors import SchemaError
from acp_codegen.generate.pipeline import load_protocols
from acp_codegen.protocol.overlay import load_base, meta_path, overlay
from support import ROOT, SCHEMA, UPSTREAM_SHOWN, JsonEdit, copy_schema

FEATURE = frozenset({"unstable_session_archive"})
FRAGMENT = "schema/v1/schema.json"


def _fragments(tmp_path: Path, edit: JsonEdit | None = None, meta_edit: JsonEdit | None = None) -> Path:
    """A copy of the v1 fragments under tmp_path/schema, edited."""
    edits = {name: fn for name, fn in (("v1/schema.json", edit), ("v1/meta.json", meta_edit)) if fn is not None}
    return copy_schema(tmp_path / "schema", versions=("v1",), edits=edits)


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


BASE_2026_11 = "2026-11/v1/schema.unstable.json"


def _names_both(lines: list[str], expected: str, base: str, base_pointer: str) -> bool:
    """A line names the fragment's place and the base's (bases are shown relative to the project)."""
    return any(
        line.startswith(f"{FRAGMENT}: {expected} (base: ") and line.endswith(f"upstream/{base}: {base_pointer})")
        for line in lines
    )


# Unmarked context copied into the fragments that differs from the base: the base's
# definition is used and the difference is a note (older releases differ like this).
CONTEXT_DIFFERENCES = [
    pytest.param(
        _set(["SessionInfo", "properties", "cwd"], {"type": "integer"}),
        "/$defs/SessionInfo/properties/cwd: is integer, but the base says string",
        "/$defs/SessionInfo/properties/cwd",
        id="property-type",
    ),
    pytest.param(
        _set(["SessionInfo", "properties", "colour"], {"type": "string"}),
        "/$defs/SessionInfo/properties/colour: property 'colour' is not in the base",
        "/$defs/SessionInfo/properties",
        id="unmarked-new-property",
    ),
    pytest.param(
        _set(["SessionInfo", "required"], ["sessionId", "cwd", "title"]),
        "/$defs/SessionInfo/properties/title: is required here, but not in the base",
        "/$defs/SessionInfo/properties/title",
        id="required-differs",
    ),
    pytest.param(
        lambda d: d["$defs"]["SessionUpdate"]["oneOf"].append(
            {"type": "object", "properties": {"sessionUpdate": {"const": "bogus"}}, "required": ["sessionUpdate"]}
        ),
        "/$defs/SessionUpdate/oneOf/1: variant is not in the base",
        "/$defs/SessionUpdate/oneOf",
        id="unmarked-new-variant",
    ),
    pytest.param(
        _set(["SessionId"], {"type": "integer"}),
        "/$defs/SessionId: is integer, but the base says string",
        "/$defs/SessionId",
        id="alias-type",
    ),
]


@pytest.mark.parametrize(("edit", "expected", "base_pointer"), CONTEXT_DIFFERENCES)
def test_unmarked_context_defers_to_the_base_with_a_note(upstream, tmp_path, edit, expected, base_pointer):
    schema_dir = _fragments(tmp_path, edit)
    protocols, sources = load_protocols(schema_dir, FEATURE, tmp_path, {1: upstream / "v1" / "schema.json"})
    notes = [str(n) for n in sources[0].notes]
    assert _names_both(notes, f"{expected}; the base's is used", "v1/schema.json", base_pointer), notes
    info = protocols[0].types["SessionInfo"]
    assert info.field("cwd").type.kind == "string" and info.field("colour") is None  # the base's definition
    assert not info.field("title").required
    assert protocols[0].types["SessionId"].target.kind == "string"
    assert protocols[0].types["SessionUpdate"].variants and "bogus" not in repr(protocols[0].types["SessionUpdate"])
    assert info.field("archived") is not None  # the feature's addition is laid over it all the same


# What a fragment marks with x-feature and the base already has must agree with it.
FEATURE_CONFLICTS = [
    pytest.param(
        _set(
            ["SessionInfo", "properties", "archived"],
            {"type": "string", "x-feature": "unstable_session_archive"},
        ),
        BASE_2026_11,
        "/$defs/SessionInfo/properties/archived: is string, but the base says boolean | null",
        "/$defs/SessionInfo/properties/archived",
        id="marked-property-type",
    ),
    pytest.param(
        lambda d: d["$defs"]["ListSessionsRequest"].setdefault("required", []).append("archived"),
        BASE_2026_11,
        "/$defs/ListSessionsRequest/properties/archived: is required here, but not in the base",
        "/$defs/ListSessionsRequest/properties/archived",
        id="marked-property-required",
    ),
    pytest.param(
        _set(["ArchiveSessionRequest", "properties", "reason"], {"type": "string"}),
        BASE_2026_11,
        "/$defs/ArchiveSessionRequest/properties/reason: property 'reason' is not in the base",
        "/$defs/ArchiveSessionRequest/properties",
        id="marked-definition-property",
    ),
    pytest.param(
        lambda d: d["$defs"]["SessionArchiveFilter"]["anyOf"].insert(0, {"type": "string", "const": "deleted"}),
        BASE_2026_11,
        "/$defs/SessionArchiveFilter/anyOf/0: variant is not in the base",
        "/$defs/SessionArchiveFilter/anyOf",
        id="marked-enum-value",
    ),
    pytest.param(
        lambda d: [
            d["$defs"][t].update({"x-side": "client"}) for t in ("ArchiveSessionRequest", "ArchiveSessionResponse")
        ],
        BASE_2026_11,
        "/$defs/ArchiveSessionRequest/x-side: x-side is 'client', base has 'agent'",
        "/$defs/ArchiveSessionRequest/x-side",
        id="marked-x-side",
    ),
    pytest.param(
        _set(
            ["SessionId"],
            {"type": "object", "properties": {"id": {"type": "string", "x-feature": "unstable_session_archive"}}},
        ),
        "v1/schema.json",
        "/$defs/SessionId: is object here, alias in the base",
        "/$defs/SessionId",
        id="kind-with-feature-items",
    ),
]


def _archive_on_client_side(meta: dict[str, Any]) -> None:
    if "session_archive" in meta["agentMethods"]:
        meta["clientMethods"]["session_archive"] = meta["agentMethods"].pop("session_archive")


@pytest.mark.parametrize(("edit", "base", "expected", "base_pointer"), FEATURE_CONFLICTS)
def test_a_feature_item_disagreeing_with_the_base_names_both_places(
    upstream, tmp_path, edit, base, expected, base_pointer
):
    side_case = "x-side" in expected
    schema_dir = _fragments(tmp_path, edit, _archive_on_client_side if side_case else None)
    with pytest.raises(SchemaError) as caught:
        load_protocols(schema_dir, FEATURE, tmp_path, {1: upstream / base})
    problems = [str(p) for p in caught.value.problems]
    assert _names_both(problems, expected, base, base_pointer), problems


def test_a_base_without_a_type_the_feature_extends_is_refused_by_name(upstream, tmp_path):
    data = json.loads((upstream / "v1" / "schema.json").read_text(encoding="utf-8"))
    del data["$defs"]["SessionInfoUpdate"]
    data["$defs"]["SessionUpdate"]["oneOf"] = [
        v for v in data["$defs"]["SessionUpdate"]["oneOf"] if "SessionInfoUpdate" not in json.dumps(v)
    ]
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "schema.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SchemaError) as caught:
        load_protocols(ROOT / "schema", FEATURE, ROOT, {1: tmp_path / "v1" / "schema.json"})
    [problem] = [str(p) for p in caught.value.problems]
    assert problem.endswith(
        "v1/schema.json: /$defs: has no SessionInfoUpdate, which feature unstable_session_archive extends"
        f" ({FRAGMENT}): the feature needs an ACP release that has them;"
        " without the feature, this release's own protocol generates"
    )
    # Without the feature, the release is what it says: the fragment's definition is not added.
    protocol = load_protocols(ROOT / "schema", frozenset(), ROOT, {1: tmp_path / "v1" / "schema.json"})[0][0]
    assert "SessionInfoUpdate" not in protocol.types and "SessionInfo" in protocol.types


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
    from acp_codegen.protocol.load import load_version

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
    assert [s.name for s in merged.extra_inputs] == [f"{UPSTREAM_SHOWN}/v1/meta.json"]


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
    schema_dir = _fragments(
        tmp_path, _set(["SessionInfo", "properties", "archived"], {"type": "string", "x-feature": sorted(FEATURE)[0]})
    )
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
            str(upstream / BASE_2026_11),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "/$defs/SessionInfo/properties/archived" in err and f"{UPSTREAM_SHOWN}/{BASE_2026_11}" in err
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
    from acp_codegen.config.table import load_config

    (tmp_path / "pyproject.toml").write_text(
        '[tool.acp-codegen]\nbase-v1 = "../up/v1/schema.json"\nbase-v2 = "up2/schema.unstable.json"\n', encoding="utf-8"
    )
    config = load_config(tmp_path)
    assert config.bases == {1: tmp_path / "../up/v1/schema.json", 2: tmp_path / "up2/schema.unstable.json"}


def test_pyproject_base_must_be_a_path_string(tmp_path):
    from acp_codegen.config.table import load_config
    from acp_codegen.errors import ConfigError

    (tmp_path / "pyproject.toml").write_text("[tool.acp-codegen]\nbase-v1 = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="base-v1 must be a path string"):
        load_config(tmp_path)


def _stable_base(tmp_path: Path) -> Path:
    """The v1 fragments with every feature-marked item removed: a base the fragments
    must overlay cleanly onto, and that needs no upstream checkout."""
    from acp_codegen.protocol.features import FEATURE_KEY, _prune

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


def _base_before_the_feature(tmp_path: Path) -> tuple[Path, set[str]]:
    """A release older than what the feature extends (as upstream's before v0.7.0): the
    fragments' stable surface without session/list and session info, its session
    capabilities only ``list``; and the names of its definitions."""
    base = _stable_base(tmp_path)
    data = json.loads(base.read_text(encoding="utf-8"))
    defs = data["$defs"]
    for name in ("ListSessionsRequest", "ListSessionsResponse", "SessionInfo", "SessionInfoUpdate"):
        del defs[name]
    for kind in ("close", "delete", "resume"):
        del defs["SessionCapabilities"]["properties"][kind]
        del defs[f"Session{kind.title()}Capabilities"]
    plan = {"type": "object", "properties": {"sessionUpdate": {"type": "string", "const": "plan"}}}
    defs["SessionUpdate"]["oneOf"] = [{**plan, "required": ["sessionUpdate"]}]
    base.write_text(json.dumps(data), encoding="utf-8")
    meta = json.loads((base.parent / "meta.json").read_text(encoding="utf-8"))
    del meta["agentMethods"]
    (base.parent / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return base, set(defs)


def test_a_release_older_than_the_feature_generates_exactly_itself_without_it(tmp_path):
    base, names = _base_before_the_feature(tmp_path)
    [protocol], _ = load_protocols(_fragments(tmp_path), frozenset(), tmp_path, {1: base})
    # No fragment type is invented into the release: what extends for the feature, what
    # needs it (ListSessionsResponse) and what nothing of the release uses (the close,
    # delete and resume capabilities, which only the fragments' SessionCapabilities names).
    assert set(protocol.types) == names | {"SessionUpdatePlan"}
    assert [(m.name, m.side) for m in protocol.methods] == [("session/update", "client")]


def test_a_release_older_than_the_feature_is_refused_with_it_in_one_message(tmp_path):
    base, _ = _base_before_the_feature(tmp_path)
    with pytest.raises(SchemaError) as caught:
        load_protocols(_fragments(tmp_path), FEATURE, tmp_path, {1: base})
    assert [str(p) for p in caught.value.problems] == [
        "base/schema.json: /$defs: has no ListSessionsRequest, SessionInfo, SessionInfoUpdate, which feature"
        f" unstable_session_archive extends ({FRAGMENT}): the feature needs an ACP release that has them;"
        " without the feature, this release's own protocol generates"
    ]


def test_a_conflict_with_a_crafted_base_is_caught_without_upstream(tmp_path):
    base = _stable_base(tmp_path)
    data = json.loads(base.read_text(encoding="utf-8"))
    data["$defs"]["SessionInfo"]["properties"]["archived"] = {"type": "string"}
    base.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SchemaError) as caught:
        load_protocols(_fragments(tmp_path), FEATURE, tmp_path, {1: base})
    assert [str(p) for p in caught.value.problems] == [
        f"{FRAGMENT}: /$defs/SessionInfo/properties/archived: is boolean | null, but the base says string"
        " (base: base/schema.json: /$defs/SessionInfo/properties/archived)"
    ]


def test_context_differing_from_a_crafted_base_is_a_note_without_upstream(tmp_path):
    base = _stable_base(tmp_path)
    schema_dir = _fragments(tmp_path, _set(["SessionInfo", "properties", "title"], {"type": "boolean"}))
    protocols, sources = load_protocols(schema_dir, FEATURE, tmp_path, {1: base})
    assert [str(p) for p in sources[0].notes] == [
        f"{FRAGMENT}: /$defs/SessionInfo/properties/title: is boolean, but the base says string | null;"
        " the base's is used (base: base/schema.json: /$defs/SessionInfo/properties/title)"
    ]
    assert protocols[0].types["SessionInfo"].field("title").type.describe() == "string | null"


def test_a_side_this_tool_does_not_know_is_carried_through_unrouted(tmp_path):
    from acp_codegen.generate.pipeline import generate
    from acp_codegen.plan.dispatch import routes

    base = _stable_base(tmp_path)
    data = json.loads(base.read_text(encoding="utf-8"))
    for name in ("HelloProxyRequest", "HelloProxyResponse"):
        data["$defs"][name] = {"type": "object", "properties": {}, "x-method": "proxy/hello", "x-side": "proxy"}
    data["$defs"]["SessionId"]["x-future-keyword"] = {"anything": 1}
    base.write_text(json.dumps(data), encoding="utf-8")
    (base.parent / "meta.json").unlink()  # the methods come from the markers
    result = generate(_fragments(tmp_path), FEATURE, tmp_path, {1: base})
    [protocol] = result.protocols
    assert protocol.method("proxy/hello").side == "proxy"
    assert "proxy/hello" not in {r.method.name for r in routes(protocol)}
    assert 'name="proxy/hello",\n        key="proxy_hello",\n        side="proxy",' in result.files["v1/methods.py"]
    assert 'side: Literal["agent", "client", "protocol", "proxy"]' in result.files["_shared.py"]
    assert result.notes() == [
        "not understood, carried through: v1: x-side 'proxy' (proxy/hello: generated, routed by nobody),"
        " x-future-keyword (1 use, ignored)"
    ]


def test_a_run_over_a_base_reads_each_input_file_once(tmp_path, monkeypatch):
    from collections import Counter

    from acp_codegen.generate.pipeline import generate
    from acp_codegen.plan.conversions import UPSTREAM_DECLARATIONS

    base = _stable_base(tmp_path)
    schema_dir = copy_schema(tmp_path / "schema")  # both versions and conversions.json: every stage runs
    reads: Counter[Path] = Counter()
    read_bytes = Path.read_bytes

    def counted(path: Path) -> bytes:
        reads[path.resolve()] += 1
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", counted)
    result = generate(schema_dir, FEATURE, tmp_path, {1: base})
    assert "convert.py" in result.files and result.sources[0].overlaid
    # Over a base, upstream's declarations are read from the tool's own fragments, not the copy's.
    ours = [p for p in schema_dir.rglob("*.json") if p.name != UPSTREAM_DECLARATIONS]
    inputs = sorted(p.resolve() for p in (*ours, *base.parent.glob("*.json"), SCHEMA / UPSTREAM_DECLARATIONS))
    assert len(inputs) == 8
    assert {p: reads[p] for p in inputs} == dict.fromkeys(inputs, 1)
