"""The settings an SDK moving to acp-codegen chooses (docs/sdk-migration.md):
``default-on-null``, ``unknown-properties``, ``field-names``, ``aliases``, ``root-models``,
``base-class`` and ``regenerate``; what each does to the models, and the errors each refuses with."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import FIXTURES, ROOT, imported_models
from pydantic import BaseModel, ValidationError
from test_golden import SETTINGS

from codegen.cli import main
from codegen.config import ConfigError, load_config
from codegen.errors import SchemaError
from codegen.options import ModelOptions
from codegen.pipeline import generate

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
                generate(EDGE, frozenset({"edge_feature"}), ROOT, options=ModelOptions(default_on_null=mode)).files,
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


# base-class and regenerate


def test_base_class_is_the_sdks_and_model_config_still_applies(sdk: ModuleType, plain: ModuleType) -> None:
    from pydantic import RootModel
    from sdk_base import SdkBaseModel as Base

    classes = [getattr(sdk, n) for n in sdk.__all__ if isinstance(getattr(sdk, n), type)]
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
    from codegen.pipeline import RUNTIME_FILES

    def runtime(options: ModelOptions) -> dict[str, str]:
        files = generate(ROOT / "schema", ARCHIVE, ROOT, options=options).files
        return {name: text for name, text in files.items() if name in RUNTIME_FILES}

    plain = runtime(ModelOptions())
    assert len(plain) == 3
    assert runtime(ModelOptions(unknown_properties="drop", field_names={"_meta": "field_meta"})) == plain
    renamed = runtime(ModelOptions(regenerate="make gen-all"))
    assert all(renamed[name] != plain[name] and "`make gen-all`" in renamed[name] for name in plain)


def test_command_line_options_override_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.acp-codegen]\nunknown-properties = "drop"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--unknown-properties", "keep", "--default-on-null", "all"]) == 0
    text = (tmp_path / "generated" / "v1" / "models.py").read_text(encoding="utf-8")
    assert 'extra="allow"' in text and 'extra="ignore"' not in text and "null_absent=True" in text


# errors


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('default-on-null = "some"', "default-on-null must be one of 'marked', 'all', not 'some'"),
        ('unknown-properties = "forget"', "unknown-properties must be one of 'keep', 'drop'"),
        ('default-on-nul = "all"', "unknown key 'default-on-nul'; did you mean 'default-on-null'?"),
        ("field-names = {_meta = 1}", "field-names must be a table of strings"),
        ("regenerate = 1", "regenerate must be a string"),
    ],
)
def test_config_errors(tmp_path: Path, table: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.acp-codegen]\n{table}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("?", r"\?")):
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
        (
            ModelOptions(aliases={"Empty": []}),
            "aliases/Empty: must be a class name, a list of them or {common = [...]}, not []",
        ),
        (ModelOptions(aliases={"Odd": {"shared": ["SessionInfo"]}}), "aliases/Odd: must be a class name"),
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
    ],
)
def test_setting_errors_name_the_key(options: ModelOptions, message: str) -> None:
    with pytest.raises(SchemaError) as caught:
        generate(ROOT / "schema", ARCHIVE, ROOT, options=options)
    assert message in str(caught.value)
    assert str(caught.value).startswith("pyproject.toml: /tool/acp-codegen/")


def test_a_setting_error_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "pyproject.toml").write_text("[tool.acp-codegen.field-names]\n_mta = 'field_meta'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["generate"]) == 2
    assert "field-names/_mta: no field has the wire name '_mta'; did you mean '_meta'?" in capsys.readouterr().err
    assert not (tmp_path / "generated").exists()
