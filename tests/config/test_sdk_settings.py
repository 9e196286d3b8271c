"""The settings an SDK moving to acp-codegen chooses (docs/sdk-migration.md):
``default-on-null``, ``unknown-properties``, ``field-names``, ``aliases``, ``root-models``,
``base-class``, ``regenerate``, ``string-formats``, ``mixins`` and ``enums``; what each does to the models,
and the errors each refuses with. The golden ``sdk-style`` package, as its users meet it, is
tested in tests/generated/test_sdk_style.py (on the oldest pydantic too)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from acp_codegen.cli import main
from acp_codegen.config.settings import ModelOptions, Settings
from acp_codegen.config.table import load_config
from acp_codegen.errors import ConfigError, SchemaError
from acp_codegen.generate.pipeline import generate, load_protocols, up_to_date
from acp_codegen.write import strip_header
from acp_codegen.write.tree import write_tree
from pydantic import BaseModel, ValidationError
from support import FIXTURES, ROOT, UPSTREAM_RELEASES, copy_schema, imported_models
from support.golden_cases import SETTINGS

ARCHIVE = frozenset({"unstable_session_archive"})
EDGE = FIXTURES / "edge"


def _forget(*packages: str) -> None:
    for module in [m for m in sys.modules if m.split(".")[0] in packages]:
        del sys.modules[module]


def _package(tmp: Path, name: str, **settings: Any) -> Iterator[ModuleType]:
    try:
        yield imported_models(tmp, name, generate(ROOT / "schema", ARCHIVE, ROOT, **settings).files)[1]
    finally:
        _forget(name)


@pytest.fixture(scope="module")
def sdk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The models under the SDK-style settings of the golden case ``sdk-style``."""
    yield from _package(tmp_path_factory.mktemp("sdk"), "sdk_style_pkg", **SETTINGS["sdk-style"])


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The models under the default settings."""
    yield from _package(tmp_path_factory.mktemp("plain"), "plain_pkg")


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def _sdk_schema(dest: Path) -> Path:
    """The fragments with what the SDK settings act on that they lack, in v1's SessionInfo:
    strings of format ``uri`` (alone, in an array, nullable, in a union) and closed enums
    (an ``enum`` list, ``Role``; ``oneOf`` constants, ``Priority``, one of them only with the
    archive feature) in fields, arrays, nullable and with a default. v2 has ``date-time``
    strings of its own (``updatedAt``)."""

    def edit(schema: dict[str, Any]) -> None:
        uri = {"type": "string", "format": "uri"}
        defs = schema["$defs"]
        defs["Role"] = {"description": "Who wrote it.", "type": "string", "enum": ["assistant", "user"]}
        defs["Priority"] = {
            "description": "How urgent.",
            "oneOf": [
                {"const": "high", "type": "string", "description": "Now."},
                {"const": "urgent", "type": "string", "x-feature": "unstable_session_archive"},
                {"const": "low", "type": "string"},
            ],
        }
        role = {"$ref": "#/$defs/Role"}
        defs["SessionInfo"]["properties"] |= {
            "homepage": {"description": "A URL.", **uri},
            "links": {"type": "array", "items": uri},
            "mirror": {"type": ["string", "null"], "format": "uri"},
            "either": {"anyOf": [uri, {"type": "integer"}]},
            "role": role,
            "roles": {"type": "array", "items": role},
            "priority": {"anyOf": [{"$ref": "#/$defs/Priority"}, {"type": "null"}]},
            "defaultRole": {"allOf": [role], "default": "user", "x-deserialize-default-on-error": True},
            "mood": {"$ref": "#/$defs/Mood", "x-feature": "unstable_session_archive"},
        }
        defs["Mood"] = {"type": "string", "enum": ["calm"], "x-feature": "unstable_session_archive"}

    return copy_schema(dest, edits={"v1/schema.json": edit})


@pytest.fixture(scope="module")
def sdk_schema(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _sdk_schema(tmp_path_factory.mktemp("sdk-schema") / "schema")


def _extended(sdk_schema: Path, features: frozenset[str] = ARCHIVE, **options: Any) -> dict[str, str]:
    return generate(
        sdk_schema, features, ROOT, conversions=False, settings=Settings(options=ModelOptions(**options))
    ).files


FORMATS = {"uri": "AnyUrl", "date-time": "AwareDatetime"}


@pytest.fixture(scope="module")
def formatted(sdk_schema: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, ModuleType]]:
    """The models of ``sdk_schema`` with ``string-formats`` of uri and date-time."""
    try:
        yield imported_models(
            tmp_path_factory.mktemp("formatted"), "formatted_pkg", _extended(sdk_schema, string_formats=FORMATS), (1, 2)
        )
    finally:
        _forget("formatted_pkg")


# default-on-null


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ModuleType]]:
    """The edge fixture's models (optional not-null fields without upstream's markers)
    under both readings of null."""
    tmp = tmp_path_factory.mktemp("edge")
    try:
        yield {
            mode: imported_models(
                tmp,
                f"edge_{mode}",
                generate(
                    EDGE,
                    frozenset({"edge_feature"}),
                    ROOT,
                    settings=Settings(options=ModelOptions(default_on_null=mode)),
                ).files,
            )[1]
            for mode in ("marked", "all")
        }
    finally:
        _forget("edge_marked", "edge_all")


def test_all_reads_null_as_not_given_in_optional_not_null_fields(edge: dict[str, ModuleType]) -> None:
    models = edge["all"]
    # PingNotification.level is optional and its schema does not allow null.
    ping = models.PingNotification(level=None)
    assert "level" not in ping.model_fields_set and _dump(ping) == {}
    assert _dump(models.PingNotification.model_validate({"level": None, "x": 1})) == {"x": 1}
    assert _dump(models.Holder.model_validate({"plainRef": "low", "viaAllOf": None})) == {"plainRef": "low"}
    # Wrong values still fail: only null is widened; a required field takes no null.
    with pytest.raises(ValidationError):
        models.PingNotification.model_validate({"level": 5})
    with pytest.raises(ValidationError):
        models.Holder.model_validate({"plainRef": None})
    # A field whose schema allows null keeps it (null has a meaning there).
    assert _dump(models.Holder.model_validate({"plainRef": "low", "viaAnyOf": None})) == {
        "plainRef": "low",
        "viaAnyOf": None,
    }


def test_marked_refuses_null_where_the_schema_does(edge: dict[str, ModuleType]) -> None:
    models = edge["marked"]
    with pytest.raises(ValidationError):
        models.PingNotification.model_validate({"level": None})
    with pytest.raises(ValidationError):
        models.PingNotification(level=None)


@pytest.mark.parametrize("package", ["sdk", "plain"])
def test_null_with_a_meaning_of_its_own_is_kept_in_both_modes(package: str, request: pytest.FixtureRequest) -> None:
    models = request.getfixturevalue(package)
    update = models.SessionUpdateSessionInfoUpdate.model_validate(
        {"sessionUpdate": "session_info_update", "title": None}
    )
    assert _dump(update) == {"sessionUpdate": "session_info_update", "title": None}  # clears the title
    listing = models.ListSessionsRequest.model_validate({"cwd": "/p", "archived": None})
    assert _dump(listing) == {"cwd": "/p", "archived": None}


# unknown-properties


def test_drop_ignores_unknown_properties_keep_emits_them(sdk: ModuleType, plain: ModuleType) -> None:
    data = {"sessionId": "s", "x-vendor": 1}
    assert _dump(sdk.ArchiveSessionRequest.model_validate(data)) == {"sessionId": "s"}
    assert _dump(plain.ArchiveSessionRequest.model_validate(data)) == data
    assert sdk.ArchiveSessionRequest.model_config["extra"] == "ignore"
    assert plain.ArchiveSessionRequest.model_config["extra"] == "allow"


# field-names


def test_field_names_rename_the_attribute_and_keep_the_wire_name(sdk: ModuleType) -> None:
    request = sdk.ArchiveSessionRequest(archived_session="s", field_meta={"k": 1})
    assert _dump(request) == {"sessionId": "s", "_meta": {"k": 1}}
    parsed = sdk.ArchiveSessionRequest.model_validate({"sessionId": "s", "_meta": {"k": 1}})
    assert parsed.archived_session == "s" and parsed.field_meta == {"k": 1}
    # The class's own entry wins over the one for every class; other classes keep theirs.
    assert "session_id" in sdk.UnarchiveSessionRequest.model_fields
    assert all("meta" not in cls.model_fields for cls in (sdk.ArchiveSessionRequest, sdk.SessionSummary))


def test_a_field_name_may_be_camel_case(tmp_path: Path) -> None:
    """A chosen attribute is written as chosen (datamodel-code-generator's own snake-casing
    would make ``sessionId`` ``session_id`` again)."""
    options = ModelOptions(field_names={"sessionId": "sessionId", "ListSessionsResponse.nextCursor": "nextCursor"})
    for models in _package(tmp_path, "camel_pkg", settings=Settings(options=options)):
        assert set(models.ArchiveSessionRequest.model_fields) == {"sessionId", "meta"}
        assert "nextCursor" in models.ListSessionsResponse.model_fields
        assert "updated_at" in models.SessionInfo.model_fields  # the rule's own names elsewhere
        assert _dump(models.ArchiveSessionRequest(sessionId="s")) == {"sessionId": "s"}


# aliases and __all__


def test_aliases_and_all(sdk: ModuleType, plain: ModuleType) -> None:
    assert sdk.SessionInfo is sdk.SessionSummary
    assert isinstance(sdk.ArchiveSessionRequest(archived_session="s"), sdk.ArchiveOrUnarchive)
    for models in (sdk, plain):
        tree = ast.parse(Path(models.__file__).read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        defined |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        assert set(models.__all__) == defined - {"__all__"}
        star: dict[str, Any] = {}
        exec(f"from {models.__name__} import *", star)  # the module just generated
        assert not {"BaseModel", "Field", "ConfigDict", "Annotated", "NOT_NULL"} & set(star)


def test_a_common_alias_is_a_constructible_base_of_its_classes(sdk: ModuleType) -> None:
    common = sdk.SessionRequestFields
    assert all(issubclass(getattr(sdk, n), common) for n in ("ArchiveSessionRequest", "UnarchiveSessionRequest"))
    assert isinstance(sdk.ArchiveSessionRequest(archived_session="s"), common)
    # sessionId is shared, but ArchiveSessionRequest has its own attribute for it: not common
    assert set(common.model_fields) == {"field_meta"}
    made = common(field_meta={"k": 1})  # a union could not be called
    assert _dump(made) == {"_meta": {"k": 1}}
    assert not isinstance(made, sdk.ArchiveSessionRequest)
    # its fields read as its first class's do (upstream's markers: a bad _meta is left out)
    assert _dump(common.model_validate({"_meta": 5})) == {}
    assert _dump(sdk.ArchiveSessionRequest.model_validate({"sessionId": "s", "_meta": 5})) == {"sessionId": "s"}
    # the classes still read and write as before; parsing goes through them, not the base
    parsed = sdk.UnarchiveSessionRequest.model_validate({"sessionId": "s", "_meta": {"a": 1}})
    assert _dump(parsed) == {"sessionId": "s", "_meta": {"a": 1}}


def test_a_common_alias_of_some_keys_only(tmp_path: Path) -> None:
    """``keys`` keeps the common class to those of the shared keys; a shared tag keeps its
    default there, and the classes still derive from it (Tagged after it in their bases)."""
    options = ModelOptions(
        aliases={
            "Scoped": {"common": ["ArchiveSessionRequest", "UnarchiveSessionRequest"], "keys": ["sessionId"]},
            "InfoTag": {"common": ["SessionUpdateSessionInfoUpdate"], "keys": ["sessionUpdate"]},
        }
    )
    for models in _package(tmp_path, "keys_pkg", settings=Settings(options=options)):
        assert set(models.Scoped.model_fields) == {"session_id"}  # not _meta, which they share too
        assert issubclass(models.ArchiveSessionRequest, models.Scoped)
        assert models.InfoTag().session_update == "session_info_update"  # the tag's default
        update = models.SessionUpdateSessionInfoUpdate(title="t")
        assert isinstance(update, models.InfoTag)
        assert _dump(update) == {"sessionUpdate": "session_info_update", "title": "t"}
        with pytest.raises(ValidationError):  # reading still requires the tag
            models.SessionUpdateSessionInfoUpdate.model_validate({"title": "t"})


def test_root_models_may_name_a_union_of_the_aliases(tmp_path: Path) -> None:
    from pydantic import RootModel

    options = ModelOptions(
        aliases={"ArchiveOrUnarchive": ["ArchiveSessionRequest", "UnarchiveSessionRequest"]},
        root_models=("ArchiveOrUnarchive",),
    )
    for models in _package(tmp_path, "union_root_pkg", settings=Settings(options=options)):
        assert issubclass(models.ArchiveOrUnarchive, RootModel)
        parsed = models.ArchiveOrUnarchive.model_validate({"sessionId": "s"})
        assert type(parsed.root).__name__ == "ArchiveSessionRequest"
        assert "ArchiveOrUnarchive" in models.__all__


def test_root_models_are_classes_with_root(sdk: ModuleType, plain: ModuleType) -> None:
    from pydantic import RootModel

    assert issubclass(sdk.SessionUpdate, RootModel) and not isinstance(plain.SessionUpdate, type)
    wire = {"sessionUpdate": "session_info_update", "title": "t"}
    update = sdk.SessionUpdate.model_validate(wire)
    assert type(update.root).__name__ == "SessionUpdateSessionInfoUpdate"
    assert update.model_dump(mode="json", by_alias=True, exclude_unset=True) == wire
    assert sdk.SessionUpdate.model_fields["root"].description  # the schema's description, on the root field
    note = sdk.SessionNotification.model_validate({"sessionId": "s", "update": wire})
    assert isinstance(note.update, sdk.SessionUpdate) and _dump(note) == {"sessionId": "s", "update": wire}


# string-formats


def test_string_formats_type_every_string_of_the_format(formatted: dict[int, ModuleType]) -> None:
    from pydantic import AnyUrl

    wire = {
        "sessionId": "s",
        "cwd": "/w",
        "homepage": "https://example.com/a",
        "links": ["https://a.example/x", "ftp://b.example/"],
        "mirror": None,
        "either": "https://c.example/",
    }
    info = formatted[1].SessionInfo.model_validate(wire)
    assert isinstance(info.homepage, AnyUrl) and info.homepage.host == "example.com"
    assert [type(link) for link in info.links] == [AnyUrl, AnyUrl] and info.mirror is None
    assert isinstance(info.either, AnyUrl)
    assert _dump(info) == wire  # written back as the strings they are
    assert formatted[1].SessionInfo.model_validate(wire | {"either": 5}).either == 5
    for bad in ({"homepage": "not a url"}, {"links": ["https://a.example/", "no"]}, {"homepage": 5}):
        with pytest.raises(ValidationError):
            formatted[1].SessionInfo.model_validate(wire | bad)
    # v2's updatedAt (date-time): an aware datetime; a naive one is no RFC 3339 date-time,
    # and upstream's marker drops it
    v2 = formatted[2].SessionInfo
    stamp = v2.model_validate({"sessionId": "s", "cwd": "/w", "updatedAt": "2026-01-02T03:04:05+01:00"}).updated_at
    assert stamp.utcoffset().total_seconds() == 3600
    naive = v2.model_validate({"sessionId": "s", "cwd": "/w", "updatedAt": "2026-01-02T03:04:05"})
    assert "updated_at" not in naive.model_fields_set
    cleared = formatted[2].SessionInfoUpdate.model_validate({"updatedAt": None})  # null has a meaning there
    assert cleared.updated_at is None and _dump(cleared) == {"updatedAt": None}


def test_string_formats_of_str_leave_the_models_as_they_are(sdk_schema: Path) -> None:
    plain = _extended(sdk_schema)
    stated = _extended(sdk_schema, string_formats={"uri": "str", "date-time": "str"})
    assert {n: strip_header(t) for n, t in stated.items()} == {n: strip_header(t) for n, t in plain.items()}
    assert "AnyUrl" not in plain["v1/models.py"] and "homepage: Annotated[StrictStr | None" in plain["v1/models.py"]


# required-null


def test_required_null_optional_makes_a_required_property_that_admits_null_optional(tmp_path: Path) -> None:
    """As datamodel-code-generator writes it without its strict-nullable option (the official SDK's
    early modules: ``AgentResponse``'s ``id``, a ``RequestId`` that may be null). A
    required property of any type, which does not say null, stays required."""

    def edit(schema: dict[str, Any]) -> None:
        defs = schema["$defs"]
        defs["Owner"] = {"anyOf": [{"type": "string"}, {"type": "null"}]}
        defs["SessionInfo"]["properties"] |= {"owner": {"$ref": "#/$defs/Owner"}, "payload": {}}
        defs["SessionInfo"]["required"] += ["owner", "payload"]

    schema = copy_schema(tmp_path / "schema", edits={"v1/schema.json": edit})
    made = {
        mode: imported_models(
            tmp_path / mode,
            f"required_null_{mode}",
            generate(
                schema, ARCHIVE, ROOT, conversions=False, settings=Settings(options=ModelOptions(required_null=mode))
            ).files,
        )[1]
        for mode in ("required", "optional")
    }
    try:
        strict, loose = (made[m].SessionInfo for m in ("required", "optional"))
        wire = {"sessionId": "s", "cwd": "/w", "payload": 1}
        with pytest.raises(ValidationError, match="owner"):
            strict.model_validate(wire)
        assert strict.model_fields["owner"].is_required() and strict.model_fields["payload"].is_required()
        assert not loose.model_fields["owner"].is_required() and loose.model_fields["owner"].default is None
        assert loose.model_fields["payload"].is_required()
        parsed = loose.model_validate(wire)
        assert parsed.owner is None and _dump(parsed) == wire  # absent stays absent on the wire
        assert _dump(loose.model_validate({**wire, "owner": None})) == {**wire, "owner": None}
        with pytest.raises(ValidationError, match="payload"):
            loose.model_validate({"sessionId": "s", "cwd": "/w"})
    finally:
        _forget("required_null_required", "required_null_optional")


def test_required_null_as_a_list_makes_it_so_in_those_classes_only(tmp_path: Path) -> None:
    """The official SDK 0.12.0: its response classes leave their nullable ``id`` out, its
    request classes require it; a list of classes says so."""

    def edit(schema: dict[str, Any]) -> None:
        for name in ("SessionInfo", "ListSessionsRequest"):
            schema["$defs"][name]["properties"]["owner"] = {"type": ["string", "null"]}
            schema["$defs"][name]["required"] = [*schema["$defs"][name].get("required", []), "owner"]

    schema = copy_schema(tmp_path / "schema", edits={"v1/schema.json": edit})
    options = ModelOptions(required_null=("SessionInfo",))
    files = generate(schema, ARCHIVE, ROOT, conversions=False, settings=Settings(options=options)).files
    models = imported_models(tmp_path / "out", "required_null_listed", files)[1]
    try:
        info, listing = models.SessionInfo, models.ListSessionsRequest
        assert not info.model_fields["owner"].is_required() and info.model_fields["owner"].default is None
        assert info.model_validate({"sessionId": "s", "cwd": "/w"}).owner is None
        assert listing.model_fields["owner"].is_required()
        with pytest.raises(ValidationError, match="owner"):
            listing.model_validate({"cwd": "/w"})
    finally:
        _forget("required_null_listed")
    # The string forms keep the digests they had; a list is an input of its own.
    assert ModelOptions(required_null="optional").parts()[-1] == "required-null=optional"
    assert "required-null" not in " ".join(ModelOptions(required_null="required", regenerate="x").parts())
    assert options.parts()[-1] == "required-null=[SessionInfo]"


# mixins


def test_mixins_come_first_under_private_names(sdk_schema: Path) -> None:
    """Two mixins of one name are told apart; a RootModel class and a {common} class take them too."""
    files = _extended(
        sdk_schema,
        mixins={"SessionInfo": ["sdk.ext:Members", "sdk.other:Members"], "SessionUpdate": "sdk.ext:Root"},
        root_models=("SessionUpdate",),
    )
    models = files["v1/models.py"]
    for line in (
        "from sdk.ext import Members as _Members\n",
        "from sdk.other import Members as _Members2\n",
        "from sdk.ext import Root as _Root\n",
        "class SessionInfo(_Members, _Members2, BaseModel):",
        "class SessionUpdate(_Root, RootModel[SessionUpdateSessionInfoUpdate]):",
    ):
        assert line in models, line
    assert "_Members" not in files["v1/methods.py"]  # only the models module imports them


# enums

ENUMS = {
    "Role": {"user": "user", "assistant": "assistant"},
    "Priority": {"high": "high", "urgent": "urgent", "low": "low"},
    "Jsonrpc": {"field_2_0": "2.0"},  # no type of that name: a class of its own
    "Mood": {"calm": "calm"},
}


@pytest.fixture(scope="module")
def enumerated(sdk_schema: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, ModuleType]]:
    try:
        yield imported_models(tmp_path_factory.mktemp("enums"), "enums_pkg", _extended(sdk_schema, enums=ENUMS), (1, 2))
    finally:
        _forget("enums_pkg")


def test_enums_make_closed_enums_enum_classes(enumerated: dict[int, ModuleType]) -> None:
    from enum import Enum

    models = enumerated[1]
    role = models.Role
    assert issubclass(role, Enum) and not issubclass(role, str)  # a plain Enum, as the SDKs have
    assert [(m.name, m.value) for m in role] == [("user", "user"), ("assistant", "assistant")]  # the table's order
    assert role.__doc__.strip() == "Who wrote it."
    wire = {"sessionId": "s", "cwd": "/w", "role": "assistant", "roles": ["user", "assistant"], "priority": "high"}
    info = models.SessionInfo.model_validate(wire)
    assert info.role is role.assistant and info.roles == [role.user, role.assistant]
    assert info.priority is models.Priority.high and _dump(info) == wire
    assert models.SessionInfo.model_validate(wire | {"priority": None}).priority is None
    assert _dump(models.SessionInfo(session_id="s", cwd="/w", role=role.user)) == {
        "sessionId": "s",
        "cwd": "/w",
        "role": "user",
    }
    # the default is the member; a bad value falls back to it (upstream's marker)
    assert info.default_role is role.user and "default_role" not in info.model_fields_set
    assert models.SessionInfo.model_validate(wire | {"defaultRole": "nobody"}).default_role is role.user
    for bad in ({"role": "system"}, {"roles": ["user", 1]}, {"priority": "soon"}):
        with pytest.raises(ValidationError):
            models.SessionInfo.model_validate(wire | bad)


def test_an_enum_no_type_has_is_a_class_of_its_own(enumerated: dict[int, ModuleType]) -> None:
    for models in enumerated.values():
        assert [(m.name, m.value) for m in models.Jsonrpc] == [("field_2_0", "2.0")]
        assert models.Jsonrpc("2.0") is models.Jsonrpc.field_2_0 and "Jsonrpc" in models.__all__
    # v2 has no type Role: the table makes it a class of its own there
    assert [m.value for m in enumerated[2].Role] == ["user", "assistant"] and "Role" in enumerated[2].__all__


def test_without_enums_closed_enums_stay_literals(sdk_schema: Path) -> None:
    models = _extended(sdk_schema)["v1/models.py"]
    assert (
        'Role: TypeAlias = Annotated[\n    Literal["assistant", "user"], Field(description="Who wrote it.")\n]'
        in models
    )
    assert "Enum" not in models


def test_an_enum_has_the_members_its_generation_has(sdk_schema: Path) -> None:
    """A value a left-out feature has is no member; the table may still name it."""
    stable = _extended(sdk_schema, frozenset(), enums=ENUMS)["v1/models.py"]
    full = _extended(sdk_schema, enums=ENUMS)["v1/models.py"]
    assert 'urgent = "urgent"' in full and 'urgent = "urgent"' not in stable
    assert 'high = "high"' in stable and 'low = "low"' in stable
    # a type only the feature has: an Enum with it, and nothing without (not a class of its own)
    assert "class Mood(Enum):" in full and "Mood" not in stable


def test_schema_text_and_values_of_an_enum_stay_data(tmp_path: Path) -> None:
    """An Enum's description (schema text) and its values reach the code escaped: the
    module holds them as a docstring and literals, and runs nothing."""
    hostile = 'Who """; import os; os.system("boom") #\\ \\"""\nend \u2028 \x01'
    values = ["a\"b'c\\", "line\nbreak", '"""; raise SystemExit #']

    def edit(schema: dict[str, Any]) -> None:
        schema["$defs"]["Role"] = {"description": hostile, "type": "string", "enum": values}
        schema["$defs"]["SessionInfo"]["properties"]["role"] = {"$ref": "#/$defs/Role"}

    schema = copy_schema(tmp_path / "schema", edits={"v1/schema.json": edit})
    members = {"quotes": values[0], "lines": values[1], "closer": values[2]}
    enums = {"Role": members, "Own": {"closer": values[2]}}  # the second: a class of its own
    source = _extended(schema, enums=enums)["v1/models.py"]
    tree = ast.parse(source)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    assert ast.get_docstring(classes["Role"]) == hostile  # kept as it was
    for name, table in enums.items():
        written = {s.targets[0].id: ast.literal_eval(s.value) for s in classes[name].body if isinstance(s, ast.Assign)}
        assert written == table
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "system"]


def test_the_member_order_is_an_input(sdk_schema: Path, tmp_path: Path) -> None:
    """Members are written in the table's order: another order is other output, which
    ``check``'s hash of the inputs must see."""
    ordered = Settings(options=ModelOptions(enums={"Role": ENUMS["Role"]}))
    turned = Settings(options=ModelOptions(enums={"Role": dict(reversed(ENUMS["Role"].items()))}))
    write_tree(tmp_path / "out", generate(sdk_schema, ARCHIVE, ROOT, conversions=False, settings=ordered).files)
    assert up_to_date(sdk_schema, tmp_path / "out", ARCHIVE, ROOT, conversions=False, settings=ordered)
    assert not up_to_date(sdk_schema, tmp_path / "out", ARCHIVE, ROOT, conversions=False, settings=turned)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"enums": {"Role": {"assistant": "assistant"}}},
            'enums/Role: the values differ: v1 has "user" and the table not',
        ),
        (
            {"enums": {"Role": {"assistant": "assistant", "user": "user", "system": "system"}}},
            'enums/Role: the values differ: the table has "system" and v1 not',
        ),
        (
            {"enums": {"Role": {"assistant": 1, "user": "user"}}},
            'enums/Role: the values differ: v1 has "assistant" and the table not; the table has 1 and v1 not',
        ),
        ({"enums": {"SessionInfo": {"a": "a"}}}, "enums/SessionInfo: 'SessionInfo' is a class of v1, not an enum"),
        ({"enums": {"SessionId": {"a": "a"}}}, "enums/SessionId: 'SessionId' is a type alias of v1, not an enum"),
        (
            {"enums": {"SessionArchiveFilter": {"only": "only"}}},
            "enums/SessionArchiveFilter: 'SessionArchiveFilter' is an open enum of v1",
        ),
        (
            {"enums": {"Role": {"class": "assistant", "user": "user"}}},
            "enums/Role/class: 'class' cannot be a member name: an identifier, no keyword, not '_...' or 'mro'",
        ),
        ({"enums": {"Jsonrpc": {"_two": "2.0"}}}, "enums/Jsonrpc/_two: '_two' cannot be a member name"),
        ({"enums": {"Jsonrpc": {"mro": "2.0"}}}, "enums/Jsonrpc/mro: 'mro' cannot be a member name"),
        ({"enums": {"Jsonrpc": {"two": [2]}}}, "enums/Jsonrpc/two: [2] is no JSON string, number or boolean"),
        ({"enums": {"Jsonrpc": {"two": float("inf")}}}, "enums/Jsonrpc/two: inf is no JSON string"),
        (
            {"enums": {"Jsonrpc": {"one": 1, "yes": True}}},
            "enums/Jsonrpc/yes: True is also the value of 'one': the Enum would make it an alias of that member",
        ),
        ({"enums": {"Jsonrpc": {}}}, "enums/Jsonrpc: must be a table of member name -> value, not {}"),
        ({"enums": {"Jsonrpc": "2.0"}}, "enums/Jsonrpc: must be a table of member name -> value, not '2.0'"),
        ({"enums": {"jsonrpc": {"two": "2.0"}}}, "enums/jsonrpc: 'jsonrpc' cannot be a public name"),
        (
            {"enums": {"Jsonrpc": {"two": "2.0"}}, "aliases": {"Jsonrpc": "SessionInfo"}},
            "enums/Jsonrpc: 'Jsonrpc' is also an alias (aliases)",
        ),
        (
            {"enums": {"Role": ENUMS["Role"]}, "root_models": ("Role",)},
            "enums/Role: 'Role' is in root-models too: an Enum or a RootModel",
        ),
        (
            {"enums": {"Role": ENUMS["Role"]}, "mixins": {"Role": "sdk.ext:Members"}},
            "mixins/Role: 'Role' is an Enum (enums), which takes no mixins",
        ),
    ],
)
def test_enum_errors_name_the_key(sdk_schema: Path, options: dict[str, Any], message: str) -> None:
    with pytest.raises(SchemaError) as caught:
        _extended(sdk_schema, **options)
    assert f"pyproject.toml: /tool/acp-codegen/{message}" in str(caught.value)


# base-class and regenerate


def test_base_class_is_the_sdks_and_model_config_still_applies(sdk: ModuleType, plain: ModuleType) -> None:
    from pydantic import RootModel
    from sdk_base import SdkBaseModel as Base

    every = [getattr(sdk, n) for n in sdk.__all__ if isinstance(getattr(sdk, n), type)]
    classes = [c for c in every if issubclass(c, BaseModel)]
    assert [c.__name__ for c in every if c not in classes] == ["Jsonrpc"]  # an Enum (enums), no model
    # root-models are pydantic's RootModel, as in the SDK (SessionUpdate here); every other class is the SDK's.
    roots = [c.__name__ for c in classes if issubclass(c, RootModel)]
    assert roots == ["SessionUpdate"]
    assert len(classes) > 20 and all(issubclass(c, Base) for c in classes if not issubclass(c, RootModel))
    assert not issubclass(plain.ArchiveSessionRequest, Base)
    assert sdk.ArchiveSessionRequest.model_validate({"sessionId": "s"}).sdk_kind() == "ArchiveSessionRequest"
    config = sdk.ArchiveSessionRequest.model_config  # the SDK's own, and the generated settings over it
    assert config["use_attribute_docstrings"] is True
    assert (config["populate_by_name"], config["extra"]) == (True, "ignore")


def test_regenerate_is_named_by_headers_and_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "pyproject.toml").write_text('[tool.acp-codegen]\nregenerate = "make gen-all"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["generate"]) == 0
    models = tmp_path / "generated" / "v1" / "models.py"
    assert models.read_text(encoding="utf-8").startswith(
        "# Generated by acp-codegen 0.1.0. Do not edit: run `make gen-all`."
    )
    models.write_text(models.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["check"]) == 1
    assert "run `make gen-all` to regenerate it" in capsys.readouterr().err


def test_model_settings_leave_the_runtime_files_as_they_were() -> None:
    """A runtime file is copied as it is: a model setting changes neither it nor the inputs
    its header records (kept as they were, as `generate` keeps unchanged files, they stay
    true for `check`); the command its header names does."""
    from acp_codegen.generate.pipeline import BRIDGE_FILES, RUNTIME_FILES

    def runtime(options: ModelOptions) -> dict[str, str]:
        files = generate(ROOT / "schema", ARCHIVE, ROOT, settings=Settings(options=options)).files
        return {name: text for name, text in files.items() if name in RUNTIME_FILES}

    plain = runtime(ModelOptions())
    assert set(plain) == set(RUNTIME_FILES) - set(BRIDGE_FILES)  # (the archive surface alone: no bridge)
    assert runtime(ModelOptions(unknown_properties="drop", field_names={"_meta": "field_meta"})) == plain
    renamed = runtime(ModelOptions(regenerate="make gen-all"))
    assert all(renamed[name] != plain[name] and "`make gen-all`" in renamed[name] for name in plain)


def test_command_line_options_override_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.acp-codegen]\nunknown-properties = "drop"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--unknown-properties", "keep", "--default-on-null", "all"]) == 0
    text = (tmp_path / "generated" / "v1" / "models.py").read_text(encoding="utf-8")
    assert 'extra="allow"' in text and 'extra="ignore"' not in text and "null_absent=True" in text


# every setting at once, type-checked


def test_packages_with_the_settings_pass_ruff_and_mypy_strict(sdk_schema: Path, tmp_path: Path) -> None:
    """The ``sdk-style`` settings (mixins and string-formats with the others), and the
    fragments with every formatted string typed and mixins on a class and a RootModel."""
    packages = {
        "sdk_style_lint": generate(ROOT / "schema", ARCHIVE, ROOT, **SETTINGS["sdk-style"]).files,
        "formats_lint": _extended(
            sdk_schema,
            string_formats=FORMATS,
            mixins={"SessionInfo": "sdk_base:UnarchiveMixin", "SessionUpdate": ["sdk_base:RootMixin"]},
            root_models=("SessionUpdate",),
            enums=ENUMS,
        ),
    }
    for name, files in packages.items():
        write_tree(tmp_path / name, files)
    # E501: schema descriptions; RUF012: ruff takes a model default ({}) for a mutable class
    # attribute where it cannot see that the base class (the SDK's) is a pydantic model.
    ignore = "E501,RUF012"
    config = ("--no-cache", "--config", str(ROOT / "pyproject.toml"), "--extend-ignore", ignore)
    ruff = subprocess.run(
        [sys.executable, "-m", "ruff", "check", *config, *packages],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert ruff.returncode == 0, ruff.stdout + ruff.stderr
    strict = ("--strict", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy"), "--python-version", "3.10")
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", *strict, *packages],
        cwd=tmp_path,
        env=os.environ | {"MYPYPATH": str(ROOT / "tests")},  # sdk_base, the SDK's own module
        capture_output=True,
        text=True,
    )
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr


@pytest.mark.slow
def test_the_settings_over_upstream_pass_mypy_strict(upstream: Path, tmp_path: Path) -> None:
    """Over upstream 2026-11, v1 and v2: uri and date-time strings typed, every closed enum of
    each version an Enum class (per version tables), a mixin on a request; the output reads
    messages and passes mypy --strict."""
    base = UPSTREAM_RELEASES["2026-11"]
    bases = {v: base / f"v{v}" / "schema.unstable.json" for v in (1, 2)}
    protocols, _ = load_protocols(ROOT / "schema", ARCHIVE, ROOT, bases)
    enums = {
        p.version: {
            name: {re.sub(r"\W", "_", str(v.value)): v.value for v in t.values}
            for name, t in p.types.items()
            if t.kind == "enum" and not t.open
        }
        for p in protocols
    }
    assert len(enums[1]) > 5 and enums[2]
    options = ModelOptions(string_formats=FORMATS, mixins={"InitializeRequest": "sdk_base:LegacyProtocolVersion"})
    settings = Settings(
        options=options,
        versions={
            v: Settings(options=replace(options, enums=table, tables={"enums": f"v{v}"})) for v, table in enums.items()
        },
    )
    files = generate(ROOT / "schema", ARCHIVE, ROOT, bases, conversions=False, settings=settings).files
    try:
        models = imported_models(tmp_path, "upstream_settings", files, (1, 2))
        from enum import Enum

        for v, table in enums.items():
            assert all(issubclass(getattr(models[v], name), Enum) for name in table)
        request = models[1].InitializeRequest.model_validate({"protocolVersion": "2024-11-05"})
        assert request.protocol_version == 1
        stop = models[1].PromptResponse.model_validate({"stopReason": "end_turn"}).stop_reason
        assert stop is models[1].StopReason.end_turn
    finally:
        _forget("upstream_settings")
    strict = ("--strict", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy"), "--python-version", "3.10")
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", *strict, "upstream_settings"],
        cwd=tmp_path,
        env=os.environ | {"MYPYPATH": str(ROOT / "tests")},
        capture_output=True,
        text=True,
    )
    assert mypy.returncode == 0, mypy.stdout[-3000:] + mypy.stderr


# errors


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('default-on-null = "some"', "default-on-null must be one of 'marked', 'all', not 'some'"),
        ('unknown-properties = "forget"', "unknown-properties must be one of 'keep', 'drop'"),
        ('default-on-nul = "all"', "unknown key 'default-on-nul'; did you mean 'default-on-null'?"),
        ("field-names = {_meta = 1}", "field-names must be a table of strings"),
        ("regenerate = 1", "regenerate must be a string"),
        ("string-formats = {uri = 1}", "string-formats must be a table of strings"),
        ("mixins = 'a:B'", "mixins must be a table"),
        ("enums = ['Role']", "enums must be a table"),
        ('required-null = "some"', "required-null must be one of 'required', 'optional' (or a list), not 'some'"),
        ("required-null = [1]", "required-null must be a list of strings"),
        ("required-null = 1", "required-null must be a string or a list, not 1"),
    ],
)
def test_config_errors(tmp_path: Path, table: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.acp-codegen]\n{table}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(tmp_path)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ModelOptions(field_names={"_meta": "field meta"}),
            "/tool/acp-codegen/field-names/_meta: 'field meta' is not a Python identifier",
        ),
        (ModelOptions(field_names={"_meta": "class"}), "'class' is not a Python identifier"),
        (
            ModelOptions(field_names={"_meta": "model_dump"}),
            "'model_dump' would shadow an attribute of pydantic's BaseModel",
        ),
        (
            ModelOptions(field_names={"_mtea": "field_meta"}),
            "field-names/_mtea: no field has the wire name '_mtea'; did you mean '_meta'?",
        ),
        (
            ModelOptions(field_names={"ArchiveSessionRequest.sesionId": "sid"}),
            "no class has a field 'ArchiveSessionRequest.sesionId'; did you mean 'ArchiveSessionRequest.sessionId'?",
        ),
        (
            ModelOptions(field_names={"ListSessionsRequest.cursor": "cwd"}),
            "field-names/ListSessionsRequest.cursor: ListSessionsRequest: 'cwd' and 'cursor' would both be 'cwd'",
        ),
        (
            ModelOptions(aliases={"SessionInfoo": "SessionInfoo"}),
            "aliases/SessionInfoo: no generated class is named 'SessionInfoo'; did you mean 'SessionInfo'?",
        ),
        (
            ModelOptions(aliases={"SessionInfo": "SessionInfo"}),
            "'SessionInfo' is already the name of a generated class",
        ),
        (ModelOptions(aliases={"Field": "SessionInfo"}), "'Field' cannot be a public name"),
        (ModelOptions(aliases={"Tagged": "SessionInfo"}), "'Tagged' cannot be a public name"),  # the runtime's
        (
            ModelOptions(aliases={"Empty": []}),
            "aliases/Empty: must be a class name, a list of them or {common = [...]} (with keys = [...]), not []",
        ),
        (ModelOptions(aliases={"Odd": {"shared": ["SessionInfo"]}}), "aliases/Odd: must be a class name"),
        (
            ModelOptions(aliases={"Part": {"common": ["SessionInfo"], "keys": ["sessionId", "colour"]}}),
            "aliases/Part/keys: not every one of SessionInfo has the wire key 'colour'",
        ),
        (
            ModelOptions(aliases={"A": {"common": ["SessionInfo"]}, "B": {"common": ["SessionInfo"]}}),
            "aliases/B: 'SessionInfo' derives from another common class",
        ),
        (
            ModelOptions(root_models=("SessionUpdat",)),
            "root-models/0: no generated type is named 'SessionUpdat'; did you mean 'SessionUpdate'?",
        ),
        (ModelOptions(root_models=("SessionInfo",)), "root-models/0: 'SessionInfo' is a class already"),
        (
            ModelOptions(base_class="acp.schema.BaseModel"),
            "base-class: 'acp.schema.BaseModel' is not 'package.module:Name'",
        ),
        (
            ModelOptions(string_formats={"date-time": "Url"}),
            "string-formats/date-time: 'Url' is not one of str, AnyUrl, AwareDatetime, NaiveDatetime, datetime, date,"
            " time, timedelta, UUID; did you mean 'AnyUrl'?",
        ),
        (
            ModelOptions(string_formats={"datetime": "AwareDatetime"}),
            "string-formats/datetime: no string has the format 'datetime'; did you mean 'date-time'?",
        ),
        (ModelOptions(string_formats={"uri": "AnyUrl"}), "no string has the format 'uri'; formats: date-time"),
        (
            ModelOptions(string_formats={"date-time": "UUID"}, aliases={"UUID": "SessionInfo"}),
            "string-formats/date-time: 'UUID' is also a name the models define (a class or an alias)",
        ),
        (
            ModelOptions(mixins={"SessionInfoo": "sdk.ext:Members"}),
            "mixins/SessionInfoo: no generated class is named 'SessionInfoo'; did you mean 'SessionInfo'?",
        ),
        (ModelOptions(mixins={"SessionInfo": "sdk.ext.Members"}), "'sdk.ext.Members' is not 'package.module:Name'"),
        (ModelOptions(mixins={"SessionInfo": ["a:B", "c:"]}), "mixins/SessionInfo: 'c:' is not 'package.module:Name'"),
        (
            ModelOptions(mixins={"SessionInfo": []}),
            "mixins/SessionInfo: must be 'package.module:Name' or a list of them (each once), not []",
        ),
        (ModelOptions(mixins={"SessionInfo": ["a:B", "a:B"]}), "a list of them (each once), not ['a:B', 'a:B']"),
        (ModelOptions(mixins={"SessionInfo": {"a": "b:C"}}), "mixins/SessionInfo: must be 'package.module:Name'"),
        (
            ModelOptions(mixins={"SessionId": "sdk.ext:Members"}),
            "mixins/SessionId: 'SessionId' is a type alias, not a class (root-models makes a RootModel class of it)",
        ),
        (
            ModelOptions(required_null=("SessionInfo", "SesionInfoUpdate")),
            "required-null/1: no generated class is named 'SesionInfoUpdate'; did you mean 'SessionInfoUpdate'?",
        ),
        (ModelOptions(required_null=("SessionUpdate",)), "required-null/0: 'SessionUpdate' is a union, not a class"),
    ],
)
def test_setting_errors_name_the_key(options: ModelOptions, message: str) -> None:
    with pytest.raises(SchemaError) as caught:
        generate(ROOT / "schema", ARCHIVE, ROOT, settings=Settings(options=options))
    assert message in str(caught.value)
    assert str(caught.value).startswith("pyproject.toml: /tool/acp-codegen/")


def test_a_setting_error_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "pyproject.toml").write_text("[tool.acp-codegen.field-names]\n_mta = 'field_meta'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["generate"]) == 2
    assert "field-names/_mta: no field has the wire name '_mta'; did you mean '_meta'?" in capsys.readouterr().err
    assert not (tmp_path / "generated").exists()
