"""Model settings of one protocol version (``[tool.acp-codegen.v2]``): a key there replaces
the top-level one for that version only; names and options are checked against the
versions they apply to; each version's files record that version's settings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from acp_codegen.cli import main
from acp_codegen.config.settings import ModelOptions, Settings
from acp_codegen.config.table import load_config
from acp_codegen.errors import ConfigError, SchemaError
from acp_codegen.generate.pipeline import generate
from acp_codegen.protocol.class_names import ClassNames
from acp_codegen.write.tree import write_tree
from support import ROOT, identifiers

ARCHIVE = frozenset({"unstable_session_archive"})
TOP = ClassNames({"SessionInfo": "SessionSummary", "ArchiveSessionRequest": "ArchiveParams"})
# v2 chooses another name for SessionInfo and none for ArchiveSessionRequest: the whole
# table replaces the top-level one, entry by entry nothing is merged.
V2 = Settings(ClassNames({"SessionInfo": "SessionRecord"}))


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    return generate(ROOT / "schema", ARCHIVE, ROOT, settings=Settings(TOP, versions={2: V2})).files


def test_a_version_table_replaces_the_top_level_key_for_its_version(files: dict[str, str]) -> None:
    v1, v2 = identifiers(files["v1/models.py"]), identifiers(files["v2/models.py"])
    assert {"SessionSummary", "ArchiveParams"} <= v1 and not {"SessionInfo", "ArchiveSessionRequest"} & v1
    assert {"SessionRecord", "ArchiveSessionRequest"} <= v2 and not {"SessionSummary", "ArchiveParams"} & v2


def test_conversions_pair_the_versions_names(files: dict[str, str], tmp_path: Path) -> None:
    """A type both versions name alike in the schema converts to its counterpart under
    each version's chosen name; the functions follow the source version's name."""
    convert = files["convert.py"]
    assert "def session_summary_v1_to_v2(value: _m1.SessionSummary) -> _m2.SessionRecord:" in convert
    assert "def session_record_v2_to_v1(value: _m2.SessionRecord) -> _m1.SessionSummary:" in convert
    write_tree(tmp_path / "pkg", files)
    script = """
from pkg import convert
from pkg.v1 import models as m1
moved = convert.session_summary_v1_to_v2(m1.SessionSummary(session_id="s", cwd="/w", archived=True))
assert type(moved).__name__ == "SessionRecord" and moved.archived is True, moved
back = convert.session_record_v2_to_v1(moved)
assert type(back) is m1.SessionSummary and back.session_id == "s", back
assert type(convert.archive_params_v1_to_v2(m1.ArchiveParams(session_id="s"))).__name__ == "ArchiveSessionRequest"
message = {"jsonrpc": "2.0", "id": 1, "method": "session/archive", "params": {"sessionId": "s"}}
assert convert.convert_message(message, source=1, target=2) == message
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "ok", done.stderr[-3000:]


def test_each_versions_files_record_its_own_settings(files: dict[str, str]) -> None:
    """v1's settings are the top-level ones: its files are those of a run without the v2
    table, byte for byte (header digests included). v2's differ; the package's files record
    both versions'."""
    plain = generate(ROOT / "schema", ARCHIVE, ROOT, settings=Settings(TOP)).files
    v1 = [name for name in files if name.startswith("v1/")]
    assert v1 and all(files[name] == plain[name] for name in v1)
    assert files["v2/models.py"] != plain["v2/models.py"]
    header = files["__init__.py"].split('"""', 1)[0]
    assert "# Class names chosen: v1 2 (in the class_names argument); v2 1 (in the class_names argument)" in header
    assert header != plain["__init__.py"].split('"""', 1)[0]


def test_the_same_settings_in_a_version_table_change_no_byte() -> None:
    """Settings equal to the top-level ones, from a version's own table: the same output."""
    plain = generate(ROOT / "schema", ARCHIVE, ROOT, settings=Settings(TOP)).files
    again = Settings(TOP, versions={2: Settings(ClassNames(dict(TOP.chosen), table="v2"))})
    assert generate(ROOT / "schema", ARCHIVE, ROOT, settings=again).files == plain


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.acp-codegen]\nfeatures = ["unstable_session_archive"]\n' + table, encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path / "generated"


def test_cli_reads_version_tables_and_check_follows_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    table = """
[tool.acp-codegen.class-names]
SessionInfo = "SessionSummary"
[tool.acp-codegen.field-names]
_meta = "field_meta"
[tool.acp-codegen.v2]
class-names = {SessionInfo = "SessionRecord", SessionListCursor = "Cursor"}
unknown-properties = "drop"
string-formats = {date-time = "AwareDatetime"}
"""
    out = _project(tmp_path, monkeypatch, table)
    assert main(["generate"]) == 0
    # one entry of the top-level table and two of v2's took effect
    assert "chosen in pyproject.toml: 3" in capsys.readouterr().out
    v1, v2 = (out / f"v{v}" / "models.py" for v in (1, 2))
    assert "class SessionSummary(BaseModel):" in v1.read_text() and 'extra="allow"' in v1.read_text()
    text = v2.read_text()
    assert "class SessionRecord(BaseModel):" in text and "Cursor: TypeAlias" in text and 'extra="ignore"' in text
    assert "field_meta" in text  # a key the v2 table does not hold is the top-level one
    assert "AwareDatetime | None" in text
    assert "# Class names chosen: 2 (in pyproject.toml [tool.acp-codegen.v2].class-names)" in text
    assert main(["check"]) == 0
    (tmp_path / "pyproject.toml").write_text(
        (tmp_path / "pyproject.toml").read_text().replace('"SessionRecord"', '"SessionEntry"'), encoding="utf-8"
    )
    assert main(["check"]) == 1
    assert "+class SessionEntry(BaseModel):" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("table", "message"),
    [
        # v2's own table: its keys must name classes of v2
        (
            "[tool.acp-codegen.v2.class-names]\nSessionCloseCapabilities = 'Close'\n",
            "/tool/acp-codegen/v2/class-names/SessionCloseCapabilities: no generated class is named"
            " 'SessionCloseCapabilities' in the versions this table applies to"
            " (v1 has one, named by the table v1 reads)",
        ),
        # the top-level table, which a v2 table replaces, applies to v1 only
        (
            "[tool.acp-codegen.class-names]\nSessionListCursor = 'Cursor'\n"
            "[tool.acp-codegen.v2.class-names]\nSessionInfo = 'SessionRecord'\n",
            "/tool/acp-codegen/class-names/SessionListCursor: no generated class is named 'SessionListCursor'",
        ),
        (
            "[tool.acp-codegen.v2.class-names]\nSessionInfoo = 'X'\n",
            "/tool/acp-codegen/v2/class-names/SessionInfoo: no generated class is named 'SessionInfoo'; did you mean"
            " 'SessionInfo'?",
        ),
        (
            "[tool.acp-codegen.v2.class-names]\nSessionInfo = 'SessionInfoUpdate'\n",
            "/tool/acp-codegen/v2/class-names/SessionInfo: 'SessionInfoUpdate' is already the name of another class",
        ),
        (
            "[tool.acp-codegen.v2.field-names]\n_mta = 'field_meta'\n",
            "/tool/acp-codegen/v2/field-names/_mta: no field has the wire name '_mta'; did you mean '_meta'?",
        ),
        (
            "[tool.acp-codegen.v1]\naliases = {Cursor = 'SessionListCursor'}\n",
            "/tool/acp-codegen/v1/aliases/Cursor: no generated class is named 'SessionListCursor'",
        ),
        (
            "[tool.acp-codegen.v1]\nroot-models = ['SessionUpdat']\n",
            "/tool/acp-codegen/v1/root-models/0: no generated type is named 'SessionUpdat';"
            " did you mean 'SessionUpdate'?",
        ),
        # v1's strings have no format: only v2's table may type date-time strings
        (
            "[tool.acp-codegen.v1]\nstring-formats = {date-time = 'AwareDatetime'}\n",
            "/tool/acp-codegen/v1/string-formats/date-time: no string has the format 'date-time'; formats: none",
        ),
        (
            "[tool.acp-codegen.v2.mixins]\nSessionCloseCapabilities = 'sdk.ext:Members'\n",
            "/tool/acp-codegen/v2/mixins/SessionCloseCapabilities: no generated class is named"
            " 'SessionCloseCapabilities'",
        ),
        (
            "[tool.acp-codegen.v2.enums]\nSessionInfo = {a = 'a'}\n",
            "/tool/acp-codegen/v2/enums/SessionInfo: 'SessionInfo' is a class of v2, not an enum",
        ),
        (
            "[tool.acp-codegen.v3]\naliases = {X = 'SessionInfo'}\n",
            "/tool/acp-codegen/v3: there is no protocol version 3",
        ),
        ("versions = [1, 3]\n", "/tool/acp-codegen/versions: there is no protocol version 3 (versions: 1, 2)"),
        (
            "versions = [1]\nbase-v2 = 'v2.json'\n",
            "/tool/acp-codegen/versions: base-v2 is set, but versions leaves v2 out",
        ),
    ],
)
def test_a_problem_names_the_table_it_was_written_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], table: str, message: str
) -> None:
    out = _project(tmp_path, monkeypatch, table)
    assert main(["generate"]) == 2
    assert f"pyproject.toml: {message}" in capsys.readouterr().err
    assert not out.exists()


def test_versions_lists_the_versions_generated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One version listed: its package alone, no conversions (nothing to convert to), and a
    version table of another version is kept for when it is listed again."""
    out = _project(tmp_path, monkeypatch, "versions = [2]\n[tool.acp-codegen.v1]\nroot-models = ['Nope']\n")
    assert main(["generate"]) == 0, capsys.readouterr().err
    assert "(v2: " in capsys.readouterr().out
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.py") if "/" in p.relative_to(out).as_posix()) == [
        "v2/__init__.py", "v2/dispatch.py", "v2/methods.py", "v2/models.py"
    ]  # fmt: skip
    assert not (out / "convert.py").exists() and not (out / "_convert_runtime.py").exists()
    assert main(["check"]) == 0
    (tmp_path / "pyproject.toml").write_text('[tool.acp-codegen]\nfeatures = ["unstable_session_archive"]\n')
    assert main(["check"]) == 1  # every version now: v1 and convert.py are missing


def test_the_top_level_key_still_applies_where_no_table_replaces_it() -> None:
    """A top-level key is checked against the versions that read it: a class of v2 only is
    fine where v1 has its own class names."""
    settings = Settings(
        ClassNames({"SessionListCursor": "Cursor"}),
        versions={1: Settings(ClassNames({"SessionInfo": "SessionSummary"}, table="v1"))},
    )
    files = generate(ROOT / "schema", ARCHIVE, ROOT, settings=settings).files
    assert "Cursor" in identifiers(files["v2/models.py"]) and "SessionSummary" in identifiers(files["v1/models.py"])
    options = Settings(options=ModelOptions(field_names={"_mta": "x"}), versions={1: Settings()})
    with pytest.raises(SchemaError, match="field-names/_mta"):  # v2 reads it
        generate(ROOT / "schema", ARCHIVE, ROOT, settings=options)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("[tool.acp-codegen.v2]\nout = 'x'\n", "[tool.acp-codegen.v2]: 'out' is set for every version"),
        ("[tool.acp-codegen.v2]\nclass-name = {}\n", "unknown key 'class-name'; did you mean 'class-names'?"),
        ("[tool.acp-codegen]\nv2 = 1\n", "[tool.acp-codegen.v2] must be a table of model settings, not 1"),
        ("[tool.acp-codegen.v2]\nroot-models = 'x'\n", "[tool.acp-codegen.v2].root-models must be a list, not 'x'"),
        ("[tool.acp-codegen.v2]\ndefault-on-null = 'some'\n", "[tool.acp-codegen.v2].default-on-null must be one of"),
        ("[tool.acp-codegen.v0]\naliases = {}\n", "unknown key 'v0'"),
    ],
)
def test_config_errors_of_version_tables(tmp_path: Path, table: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(table, encoding="utf-8")
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("?", r"\?").replace(".", r"\.")):
        load_config(tmp_path)


def test_config_settings_put_each_version_table_over_the_top_level_one(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.acp-codegen]\nunknown-properties = 'drop'\nroot-models = ['SessionUpdate']\n"
        "[tool.acp-codegen.v2]\nroot-models = []\nclass-names = {A = 'B'}\n",
        encoding="utf-8",
    )
    settings = load_config(tmp_path).settings("pyproject.toml", default_on_null="all")
    v1, v2 = settings.of(1), settings.of(2)
    assert v1 is settings and v1.options.root_models == ("SessionUpdate",) and v2.options.root_models == ()
    assert (v1.options.unknown_properties, v2.options.unknown_properties) == ("drop", "drop")
    assert v1.options.default_on_null == v2.options.default_on_null == "all"  # the command line wins everywhere
    assert (dict(v2.class_names.chosen), v2.class_names.table, v1.class_names.table) == ({"A": "B"}, "v2", "")
    assert dict(v2.options.tables) == {"root-models": "v2"}
