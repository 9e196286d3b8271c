"""``acp-codegen adopt`` in process, on an SDK module written here over a release of the
protocol from before the archive RFD (the fragments with every archive item pruned, so
that no upstream files are needed): what it matches, the settings it writes, the code it
moves, what it leaves out and why, and its exit codes on bad input. The official SDK's
modules and the other styles are adopted from the built wheel in tests/adopt/test_sdk_dropin.py
and tests/adopt/test_sdk_dropin.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.adopt.read import Module, SdkField, SdkName
from acp_codegen.adopt.verify import compare_names
from acp_codegen.cli import main
from acp_codegen.protocol.features import select
from acp_codegen.protocol.load import load_version
from support import ROOT, SCHEMA

FEATURE = "unstable_session_archive"

# An SDK's schema module, written as an SDK's own generator would: its own class names,
# `field_meta` for `_meta`, a base class with a method and a lenient `_meta` validator,
# per-class validators (one lenient, one the SDK's own) and a property, an Enum of the
# JSON-RPC version no schema definition has, a RootModel of the update union and a second
# name for one class.
SDK_MODULE = '''
"""The SDK's wire models (a fixture of tests/adopt/test_adopt.py)."""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal, Optional

from pydantic import BaseModel as _BaseModel, ConfigDict, Field, RootModel, field_validator


class BaseModel(_BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    def describe(self) -> str:
        return type(self).__name__

    @field_validator("field_meta", mode="wrap", check_fields=False)
    @classmethod
    def _meta_on_error(cls, value: Any, handler: Any) -> Any:
        try:
            return handler(value)
        except ValueError:
            return None


class Jsonrpc(Enum):
    field_2_0 = "2.0"


class ListCapability(BaseModel):
    field_meta: Optional[dict[str, Any]] = Field(default=None, alias="_meta")


class DeleteCapability(BaseModel):
    field_meta: Optional[dict[str, Any]] = Field(default=None, alias="_meta")


class ResumeCapability(BaseModel):
    field_meta: Optional[dict[str, Any]] = Field(default=None, alias="_meta")


class CloseCapability(BaseModel):
    field_meta: Optional[dict[str, Any]] = Field(default=None, alias="_meta")


class SessionFeatures(BaseModel):
    list: Optional[ListCapability] = None
    delete: Optional[DeleteCapability] = None
    resume: Optional[ResumeCapability] = None
    close: Optional[CloseCapability] = None
    field_meta: Optional[dict[str, Any]] = Field(default=None, alias="_meta")


class Program(BaseModel):
    name: str
    title: Optional[str] = None
    version: str
    field_meta: Optional[dict[str, Any]] = Field(default=None, alias="_meta")


class Summary(BaseModel):
    session_id: str = Field(alias="sessionId")
    cwd: str
    additional_directories: Optional[list[str]] = Field(default=None, alias="additionalDirectories")
    title: Optional[str] = None
    updated_at: Optional[str] = Field(default=None, alias="updatedAt")

    @field_validator("title", mode="wrap")
    @classmethod
    def _title_on_error(cls, value: Any, handler: Any) -> Any:
        try:
            return handler(value)
        except ValueError:
            return None

    @property
    def label(self) -> str:
        return self.title or self.cwd


class ListParams(BaseModel):
    cwd: Optional[str] = None
    cursor: Optional[str] = None
    field_meta: Optional[dict[str, Any]] = Field(default=None, alias="_meta")

    @field_validator("cwd")
    @classmethod
    def _absolute(cls, value: Optional[str]) -> Optional[str]:
        if value is not None and not value.startswith("/"):
            raise ValueError("cwd must be absolute")
        return value


class Page(BaseModel):
    sessions: list[Summary]
    next_cursor: Optional[str] = Field(default=None, alias="nextCursor")
    field_meta: Optional[dict[str, Any]] = Field(default=None, alias="_meta")


Listing = Page


class InfoChanged(BaseModel):
    session_update: Literal["session_info_update"] = Field(alias="sessionUpdate")
    title: Optional[str] = None
    updated_at: Optional[str] = Field(default=None, alias="updatedAt")
    field_meta: Optional[dict[str, Any]] = Field(default=None, alias="_meta")


class Update(RootModel[InfoChanged]):
    root: InfoChanged


class Notification(BaseModel):
    session_id: str = Field(alias="sessionId")
    update: Update
    field_meta: Optional[dict[str, Any]] = Field(default=None, alias="_meta")
'''

TABLE = """\
# The SDK's own project table, with a comment adopt keeps.
[project]
name = "oldsdk"  # the distribution
version = "1.0"

[tool.acp-codegen]
base-v1 = "schema/base.json"  # the release the SDK was generated from
out = "src/oldsdk/generated"
features = ["unstable_session_archive"]

[tool.ruff]
line-length = 100
"""


def release_before_the_rfd(directory: Path) -> Path:
    """The fragments' v1 with every archive item pruned: an upstream-style base file (and
    its meta) of a protocol release that predates the RFD."""
    selection = select(load_version(SCHEMA / "v1", ROOT), frozenset())
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "base.json").write_text(json.dumps({"$defs": selection.defs}, indent=1), encoding="utf-8")
    sections: dict[str, dict[str, str]] = {}
    for m in selection.methods:
        sections.setdefault(f"{m.side}Methods", {})[m.key] = m.name
    (directory / "meta.json").write_text(json.dumps({"version": 1, **sections}), encoding="utf-8")
    return directory / "base.json"


def sdk_repository(path: Path, module: str = SDK_MODULE, table: str = TABLE) -> Path:
    release_before_the_rfd(path / "schema")
    package = path / "src" / "oldsdk"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "models.py").write_text(textwrap.dedent(module).lstrip(), encoding="utf-8")
    (path / "pyproject.toml").write_text(table, encoding="utf-8")
    return path


def snapshot(repo: Path) -> dict[str, str]:
    return {
        p.relative_to(repo).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(repo.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def adopt(repo: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.chdir(repo)
    return main(["adopt", "src/oldsdk/models.py", *args])


def run_in(repo: Path, code: str) -> Any:
    """``code`` run against the repository's package in a fresh interpreter; the JSON it prints."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=repo / "src", capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, str]]:
    """One adoption: the repository after it, what adopt printed, the files before it."""
    repo = sdk_repository(tmp_path_factory.mktemp("adopt") / "sdk")
    before = snapshot(repo)
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out):
        patch.chdir(repo)
        code = main(["adopt", "src/oldsdk/models.py"])
    assert code == 0, out.getvalue()
    return repo, out.getvalue(), before


def table_of(repo: Path) -> dict[str, Any]:
    import tomllib

    return dict(tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["acp-codegen"])


def test_classes_match_by_wire_shape_and_nested_types(adopted: tuple[Path, str, dict[str, str]]) -> None:
    repo, _, _ = adopted
    names = table_of(repo)["v1"]["class-names"]
    assert names == {
        "Implementation": "Program",
        "ListSessionsRequest": "ListParams",
        "ListSessionsResponse": "Page",
        "SessionCapabilities": "SessionFeatures",
        # Four classes of one shape ({_meta}), told apart by the field that refers to each.
        "SessionCloseCapabilities": "CloseCapability",
        "SessionDeleteCapabilities": "DeleteCapability",
        "SessionListCapabilities": "ListCapability",
        "SessionResumeCapabilities": "ResumeCapability",
        "SessionInfo": "Summary",
        "SessionNotification": "Notification",
        "SessionUpdate": "Update",
        "SessionUpdateSessionInfoUpdate": "InfoChanged",
    }


def test_the_other_settings_follow_the_module(adopted: tuple[Path, str, dict[str, str]]) -> None:
    repo, _, _ = adopted
    table = table_of(repo)
    v1 = table["v1"]
    assert v1["field-names"] == {"_meta": "field_meta"}
    assert v1["aliases"] == {"Listing": "Page"}
    assert v1["root-models"] == ["Update"]
    assert v1["enums"] == {"Jsonrpc": {"field_2_0": "2.0"}}
    assert v1["unknown-properties"] == "drop"  # pydantic's default: extra="ignore"
    assert v1["default-on-null"] == "all"  # Optional[...] = None takes None
    assert v1["base-class"] == "oldsdk._models_ext:BaseModel"
    assert v1["mixins"] == {
        "ListParams": ["oldsdk._models_ext:ListParamsMixin"],
        "Summary": ["oldsdk._models_ext:SummaryMixin"],
    }
    # From the repository's own [tool.ruff]. Conversions are left alone: with one version
    # generated nothing converts (tests/adopt/test_sdk_dropin.py sees them go off over two).
    assert (table["formatter"], table["line-length"]) == ("ruff", 100)
    assert "conversions" not in table


def test_only_the_versions_the_sdk_has_are_generated(adopted: tuple[Path, str, dict[str, str]]) -> None:
    repo, report, _ = adopted
    # No base-v2 and no v2 schema module: v1 alone, and the report says why and where to change it.
    assert table_of(repo)["versions"] == [1]
    assert "versions: 1 (v2 not generated: no base-v<N> set and no v<N> schema module in the SDK;" in report
    out = repo / "src" / "oldsdk" / "generated"
    assert sorted(p.name for p in out.iterdir() if p.is_dir() and p.name != "__pycache__") == ["v1"]
    assert not (out / "convert.py").exists()


def test_a_v2_schema_module_in_the_sdk_keeps_v2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = sdk_repository(tmp_path / "sdk")
    v2 = repo / "src" / "oldsdk" / "experimental" / "v2"
    v2.mkdir(parents=True)
    (v2 / "models.py").write_text('"""The v2 models of the SDK, not adopted yet."""\n', encoding="utf-8")
    assert adopt(repo, monkeypatch) == 0
    report = capsys.readouterr().out
    assert "versions: 1, 2\n" in report
    assert "v2: oldsdk/experimental/v2/models.py found; adopt it with --version 2 once base-v2 is set" in report
    assert "versions" not in table_of(repo)
    assert (repo / "src" / "oldsdk" / "generated" / "v2" / "models.py").is_file()


def test_the_file_keeps_its_comments_and_other_tables(adopted: tuple[Path, str, dict[str, str]]) -> None:
    repo, _, before = adopted
    after = (repo / "pyproject.toml").read_text(encoding="utf-8")
    for line in before["pyproject.toml"].splitlines():
        assert line in after.splitlines(), line
    assert after.index("[tool.acp-codegen.v1]") < after.index("[tool.ruff]")


def test_moved_code_and_what_was_left_out(adopted: tuple[Path, str, dict[str, str]]) -> None:
    repo, report, _ = adopted
    moved = (repo / "src" / "oldsdk" / "_models_ext.py").read_text(encoding="utf-8")
    assert "class BaseModel(_BaseModel):" in moved and "def describe(self)" in moved
    assert "class SummaryMixin:" in moved and "def label(self)" in moved
    assert "class ListParamsMixin:" in moved and "def _absolute(" in moved
    # Lenient validators: acp-codegen's models read upstream's markers.
    assert "_meta_on_error" not in moved and "_title_on_error" not in moved
    assert "x-deserialize-* markers" in report and "Summary._title_on_error" in report
    assert "BaseModel._meta_on_error" in report


def test_the_module_becomes_one_import_and_the_package_works(adopted: tuple[Path, str, dict[str, str]]) -> None:
    repo, report, _ = adopted
    module = (repo / "src" / "oldsdk" / "models.py").read_text(encoding="utf-8")
    assert "from oldsdk.generated.v1.models import *" in module
    assert "from oldsdk._models_ext import BaseModel" in module  # it was a public name
    assert "adopt oldsdk.models: 15 of 15 public names reproduced" in report
    found = run_in(
        repo,
        """
        import json
        from pydantic import ValidationError
        from oldsdk.models import BaseModel, Jsonrpc, ListParams, Listing, Page, Summary, Update
        summary = Summary.model_validate({"sessionId": "s", "cwd": "/w", "title": 3})
        try:
            ListParams(cwd="relative")
            refused = False
        except ValidationError:
            refused = True
        print(json.dumps({
            "label": summary.label,  # the property, moved into a mixin
            "title": summary.title,  # a lenient title: dropped, not failed
            "relative_cwd_refused": refused,  # the SDK's own validator, moved
            "describe": Summary(session_id="s", cwd="/w").describe(),  # the base's method
            "base": issubclass(Summary, BaseModel),
            "listing": Listing is Page,
            "enum": [Jsonrpc("2.0").name],
            "root": Update.model_validate({"sessionUpdate": "session_info_update"}).root.session_update,
            "gains": sorted(ListParams.model_fields),
        }))
        """,
    )
    assert found == {
        "label": "/w",
        "title": None,
        "relative_cwd_refused": True,
        "describe": "Summary",
        "base": True,
        "listing": True,
        "enum": ["field_2_0"],
        "root": "session_info_update",
        "gains": ["archived", "cursor", "cwd", "field_meta"],
    }


def test_adopting_twice_changes_nothing(
    adopted: tuple[Path, str, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _, _ = adopted
    first = snapshot(repo)
    assert adopt(repo, monkeypatch) == 0
    assert snapshot(repo) == first


def test_dry_run_prints_the_table_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = sdk_repository(tmp_path / "sdk")
    before = snapshot(repo)
    assert adopt(repo, monkeypatch, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "[tool.acp-codegen.v1.class-names]" in out and 'SessionInfo = "Summary"' in out
    assert snapshot(repo) == before


def test_with_the_feature_off_the_report_says_how_to_turn_it_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = sdk_repository(tmp_path / "sdk", table=TABLE.replace(f'features = ["{FEATURE}"]\n', ""))
    assert adopt(repo, monkeypatch, "--dry-run") == 0
    report = capsys.readouterr().out
    assert "features: none\n" in report
    assert (
        f'off: {FEATURE} (nothing it adds is generated); turn it on with features = ["{FEATURE}"] in'
        " [tool.acp-codegen] of pyproject.toml, then run acp-codegen adopt again\n"
    ) in report


def test_a_name_it_cannot_reproduce_exits_1_with_the_nearest_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = SDK_MODULE + textwrap.dedent(
        """

        class Odd(BaseModel):
            session_id: str = Field(alias="sessionId")
            colour: str


        Odd1 = Odd
        """
    )
    repo = sdk_repository(tmp_path / "sdk", extra)
    module = (repo / "src" / "oldsdk" / "models.py").read_text(encoding="utf-8")
    assert adopt(repo, monkeypatch) == 1
    out = capsys.readouterr().out
    assert "Odd: no generated class has its wire keys (nearest: " in out
    # Its second name is not reproduced either (an alias of it would name no class: exit 2).
    assert "Odd1: a second name of Odd, which is not reproduced" in out
    assert "adopt oldsdk.models: 15 of 17 public names reproduced" in out
    # The table is written; the module and the output are not.
    assert "class-names" in table_of(repo)["v1"]
    assert (repo / "src" / "oldsdk" / "models.py").read_text(encoding="utf-8") == module
    assert not (repo / "src" / "oldsdk" / "generated").exists()


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("import-error", "cannot import it: ModuleNotFoundError: No module named 'missing_dependency'"),
        ("no-classes", "no pydantic classes among its public names"),
        ("no-base", "names no base-v1"),
        ("bad-toml", "pyproject.toml"),
    ],
)
def test_bad_input_exits_2_and_leaves_everything_as_it_was(
    case: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module, table = SDK_MODULE, TABLE
    if case == "import-error":
        module = SDK_MODULE.replace("from enum import Enum", "import missing_dependency\nfrom enum import Enum")
    elif case == "no-classes":
        module = "VERSION = 1\n\n\ndef helper() -> int:\n    return VERSION\n"
    elif case == "no-base":
        table = TABLE.replace('base-v1 = "schema/base.json"  # the release the SDK was generated from\n', "")
    elif case == "bad-toml":
        table = TABLE + "\n[tool.acp-codegen.v1\n"
    repo = sdk_repository(tmp_path / "sdk", module, table)
    before = snapshot(repo)
    assert adopt(repo, monkeypatch) == 2
    assert expected in capsys.readouterr().err
    assert snapshot(repo) == before


def test_a_version_the_fragments_lack_exits_2_naming_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    table = TABLE.replace(
        "[tool.acp-codegen]\n", '[tool.acp-codegen]\nschema-dir = "fragments"\nbase-v2 = "schema/base.json"\n'
    )
    repo = sdk_repository(tmp_path / "sdk", table=table)
    shutil.copytree(SCHEMA / "v1", repo / "fragments" / "v1")
    before = snapshot(repo)
    assert adopt(repo, monkeypatch, "--version", "2") == 2
    assert "fragments: no v2 fragments to adopt against" in capsys.readouterr().err
    assert snapshot(repo) == before


def test_a_tag_required_on_both_sides_is_no_difference() -> None:
    """The SDK 0.10.1's ``UntitledMultiSelectItems``: its ``type`` constant required in the
    old class and in the generated one (not a union variant's tag, so not defaulted)."""

    def module(*fields: SdkField) -> Module:
        return Module("m.m", Path("m.py"), Path("."), {"Items": SdkName("Items", "model", fields=fields)})

    tag = SdkField("type", "type", True, {"lit": ["string"]})
    values = SdkField("enum", "enum", True, {"list": {"prim": "str"}})
    optional_values = SdkField("enum", "enum", False, {"list": {"prim": "str"}})
    defaulted_tag = SdkField("type", "type", False, {"lit": ["string"]}, "string", True)
    assert compare_names(module(tag, values), module(tag, values), {}) == {}
    assert compare_names(module(tag, values), module(defaulted_tag, values), {}) == {}
    assert compare_names(module(tag, values), module(tag, optional_values), {}) == {
        "Items": "required keys differ: before ['enum', 'type'], now ['type']"
    }


def test_a_second_name_of_a_class_gains_what_the_class_gains() -> None:
    """The SDK 0.7.1's ``SessionUpdate9 = SessionInfoUpdate``: the generated class gains the
    archive feature's ``archived``, under either name."""
    fields = (SdkField("sessionId", "sessionId", True, {"prim": "str"}),)
    old = Module(
        "m.m",
        Path("m.py"),
        Path("."),
        {
            "Info": SdkName("Info", "model", ref="m.m:Info", fields=fields),
            "Info9": SdkName("Info9", "model", ref="m.m:Info", own=False, fields=fields),
        },
    )
    more = (*fields, SdkField("archived", "archived", False, {"prim": "bool"}))
    new = Module("m.m", Path("m.py"), Path("."), {n: SdkName(n, "model", fields=more) for n in ("Info", "Info9")})
    assert compare_names(old, new, {"Info": ("archived",)}) == {}
    assert compare_names(old, new, {}) == {
        n: "fields differ: before [], now [('archived', 'archived')]" for n in ("Info", "Info9")
    }


@pytest.mark.parametrize(
    ("program", "page", "derived"),
    [
        ("Optional[str] = None", "Optional[str]", ["Program"]),  # mixed, as the SDK 0.12.0's module is
        ("Optional[str] = None", "Optional[str] = None", "optional"),
    ],
)
def test_required_null_is_derived_class_by_class(
    program: str, page: str, derived: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A required property that may be null, in two classes of the base: where the module
    leaves it out in one class and requires it in the other, ``required-null`` lists the
    one; where every class agrees, the version-wide form."""
    module = SDK_MODULE.replace("class Page(BaseModel):\n", f"class Page(BaseModel):\n    owner: {page}\n").replace(
        "class Program(BaseModel):\n", f"class Program(BaseModel):\n    owner: {program}\n"
    )
    repo = sdk_repository(tmp_path / "sdk", module)
    base = repo / "schema" / "base.json"
    schema = json.loads(base.read_text(encoding="utf-8"))
    for name in ("Implementation", "ListSessionsResponse"):
        schema["$defs"][name]["properties"]["owner"] = {"type": ["string", "null"]}
        schema["$defs"][name]["required"] = [*schema["$defs"][name].get("required", []), "owner"]
    base.write_text(json.dumps(schema), encoding="utf-8")
    assert adopt(repo, monkeypatch) == 0  # every name reproduced, verified against the module
    assert table_of(repo)["v1"].get("required-null") == derived


def test_what_the_module_imported_from_its_package_stays_importable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK's v2 module imports its ``BaseModel`` from ``_schema_base`` and helpers from
    ``_deserialize``: its users may import them from it. pydantic's and the standard
    library's names are not re-exported, nor a name the models provide (``Jsonrpc``, which
    the module's own class replaced)."""
    module = SDK_MODULE.replace(
        "from enum import Enum\n",
        "from enum import Enum\n\nimport oldsdk._helpers as helpers\nfrom oldsdk import _helpers\n"
        "from oldsdk._helpers import Jsonrpc, Marker as SdkMarker, lenient\n"
        "from ._helpers import lenient as _lenient\n",
    )
    repo = sdk_repository(tmp_path / "sdk", module)
    helpers = "class Marker:\n    pass\n\n\ndef lenient() -> str:\n    return 'yes'\n\n\nJsonrpc = 1\n"
    (repo / "src" / "oldsdk" / "_helpers.py").write_text(helpers, encoding="utf-8")
    assert adopt(repo, monkeypatch) == 0
    found = run_in(
        repo,
        """
        import json
        from oldsdk.models import Jsonrpc, SdkMarker, _helpers, _lenient, helpers, lenient
        try:
            from oldsdk.models import Field
            leaked = True
        except ImportError:
            leaked = False
        names = [SdkMarker.__name__, lenient(), _lenient(), helpers.__name__, _helpers.__name__]
        print(json.dumps([*names, Jsonrpc("2.0").name, leaked]))
        """,
    )
    assert found == ["Marker", "yes", "yes", "oldsdk._helpers", "oldsdk._helpers", "field_2_0", False]
    new = (repo / "src" / "oldsdk" / "models.py").read_text(encoding="utf-8")
    assert adopt(repo, monkeypatch) == 0  # again: the same module
    assert (repo / "src" / "oldsdk" / "models.py").read_text(encoding="utf-8") == new


# A release of the protocol as upstream's early ones were (before v0.7.0): a message union
# whose properties (`jsonrpc`) every variant has, and request and notice unions whose
# catch-all variant takes anything; the schema's root, which datamodel-code-generator
# writes as a class `Model`, is a union of those unions.
EARLY_BASE = {
    "$defs": {
        "Ping": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
        "Pong": {"type": "object", "properties": {"at": {"type": "integer"}}, "required": ["at"]},
        "Note": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "Asked": {"anyOf": [{"$ref": "#/$defs/Ping"}, {"$ref": "#/$defs/Pong"}, {"title": "ExtRequest"}]},
        "Told": {"anyOf": [{"$ref": "#/$defs/Note"}, {"title": "ExtNotice"}]},
        "Message": {
            "type": "object",
            "properties": {"jsonrpc": {"type": "string", "enum": ["2.0"]}},
            "required": ["jsonrpc"],
            "anyOf": [
                {"title": "Request", "properties": {"method": {"type": "string"}}, "required": ["method"]},
                {"title": "Notice", "properties": {"note": {"$ref": "#/$defs/Note"}}, "required": ["note"]},
            ],
        },
    }
}
EARLY_MODULE = """
from __future__ import annotations

from enum import Enum
from typing import Any, Optional, Union

from pydantic import BaseModel, RootModel


class Jsonrpc(Enum):
    field_2_0 = "2.0"


class Ping(BaseModel):
    id: str


class Pong(BaseModel):
    at: int


class Note(BaseModel):
    text: str


class RequestMessage(BaseModel):
    jsonrpc: Jsonrpc
    method: str


class NoticeMessage(BaseModel):
    jsonrpc: Jsonrpc
    note: Note


class Model(RootModel[Union[Ping, Pong, Any, Note]]):
    root: Union[Ping, Pong, Any, Note]
"""


def test_an_early_release_s_messages_and_root_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The official SDK 0.4.5 to 0.6.2: the message classes' ``jsonrpc`` is an Enum of one
    member, a tag as a one-value ``Literal`` is; ``Model`` is the union of the schema's
    unions, written as such an alias."""
    table = '[tool.acp-codegen]\nbase-v1 = "schema/base.json"\nout = "src/oldsdk/generated"\n'
    repo = sdk_repository(tmp_path / "sdk", EARLY_MODULE, table)
    (repo / "schema" / "base.json").write_text(json.dumps(EARLY_BASE), encoding="utf-8")
    (repo / "schema" / "meta.json").write_text(json.dumps({"version": 1}), encoding="utf-8")
    assert adopt(repo, monkeypatch) == 0
    v1 = table_of(repo)["v1"]
    assert v1["class-names"] == {"MessageNotice": "NoticeMessage", "MessageRequest": "RequestMessage"}
    assert v1["aliases"] == {"Model": ["Asked", "Told"]} and v1["root-models"] == ["Model"]
    found = run_in(
        repo,
        """
        import json, typing
        from oldsdk.models import Model, RequestMessage
        members = typing.get_args(Model.model_fields["root"].annotation)
        print(json.dumps([sorted(getattr(m, "__name__", str(m)) for m in members),
                          RequestMessage(jsonrpc="2.0", method="m").model_dump(mode="json")]))
        """,
    )
    assert found == [["Any", "Note", "Ping", "Pong"], {"jsonrpc": "2.0", "method": "m"}]
