"""Class names a user chooses (``[tool.acp-codegen].class-names``): applied to every file
that names the class, in both versions; refused, naming the key, when they cannot work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from acp_codegen.cli import main
from acp_codegen.config.settings import Settings
from acp_codegen.errors import SchemaError
from acp_codegen.generate.pipeline import RUNTIME_FILES, generate
from acp_codegen.protocol.class_names import ClassNames
from acp_codegen.write import strip_header
from acp_codegen.write.tree import write_tree
from support import ROOT, identifiers

ARCHIVE = "unstable_session_archive"
# A schema name used by models, methods, dispatch and convert; a request whose chosen name
# loses the "Request" suffix (the method must stay a request); a name hoisting derived.
CHOSEN = {
    "SessionInfo": "SessionSummary",
    "ArchiveSessionRequest": "ArchiveSessionParams",
    "SessionUpdateSessionInfoUpdate": "SessionInfoChanged",
}


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    return generate(ROOT / "schema", frozenset({ARCHIVE}), ROOT, settings=Settings(ClassNames(CHOSEN))).files


def test_every_file_uses_the_chosen_names_only(files: dict[str, str]) -> None:
    plain = generate(ROOT / "schema", frozenset({ARCHIVE}), ROOT).files
    for old, new in CHOSEN.items():
        before = [path for path, text in plain.items() if old in identifiers(text)]
        after = [path for path, text in files.items() if new in identifiers(text)]
        assert "v1/models.py" in before and "v2/models.py" in before, old
        assert after == before, (old, new)  # the same files, now naming the chosen class
        assert not [path for path, text in files.items() if old in identifiers(text)], old
    # The renamed classes reach methods, dispatch and convert.
    assert {"v1/methods.py", "v1/dispatch.py", "convert.py"} <= {
        p for p, t in files.items() if "ArchiveSessionParams" in identifiers(t)
    }


def test_the_generated_package_works_under_the_chosen_names(files: dict[str, str], tmp_path: Path) -> None:
    write_tree(tmp_path / "pkg", files)
    script = """
import asyncio, json
from pkg.v1 import models, methods, dispatch
from pkg import convert

params = models.ArchiveSessionParams.model_validate({"sessionId": "s"})
spec = methods.AGENT_METHODS["session/archive"]
assert spec.kind == "request" and spec.params is models.ArchiveSessionParams, spec

class Agent(dispatch.AgentHandler):
    async def session_archive(self, params):
        assert type(params) is models.ArchiveSessionParams
        return models.ArchiveSessionResponse()

request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/archive", "params": {"sessionId": "s"}})
router = dispatch.Router(Agent(), unstable_session_archive=True)
reply = json.loads(asyncio.run(router.handle_json(request)))
assert reply == {"jsonrpc": "2.0", "id": 1, "result": {}}, reply

listed = models.ListSessionsResponse.model_validate({"sessions": [{"sessionId": "s", "cwd": "/p", "archived": True}]})
assert type(listed.sessions[0]) is models.SessionSummary
moved = convert.list_sessions_response_v1_to_v2(listed)
assert type(moved.sessions[0]) is convert._m2.SessionSummary and moved.sessions[0].archived is True
update = models.SessionNotification.model_validate(
    {"sessionId": "s", "update": {"sessionUpdate": "session_info_update", "archived": True}}
)
assert type(update.update) is models.SessionInfoChanged
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "ok", done.stderr[-3000:]


@pytest.mark.parametrize(
    ("chosen", "key", "message"),
    [
        (
            {"SessionInfoo": "X"},
            "SessionInfoo",
            "no generated class is named 'SessionInfoo'; did you mean 'SessionInfo'?",
        ),
        (
            {"SessionInfo": "SessionInfoUpdate"},
            "SessionInfo",
            "'SessionInfoUpdate' is already the name of another class",
        ),
        (
            {"SessionInfo": "Same", "SessionInfoUpdate": "Same"},
            "SessionInfoUpdate",
            "'Same' is also chosen for 'SessionInfo'",
        ),
        ({"SessionInfo": "session_info"}, "SessionInfo", "'session_info' cannot name a generated class"),
        ({"SessionInfo": "Session-Info"}, "SessionInfo", "'Session-Info' cannot name a generated class"),
        ({"SessionInfo": "None"}, "SessionInfo", "'None' cannot name a generated class"),
        ({"SessionInfo": "Field"}, "SessionInfo", "'Field' cannot name a generated class"),
    ],
)
def test_a_choice_that_cannot_work_names_its_key(chosen: dict[str, str], key: str, message: str) -> None:
    with pytest.raises(SchemaError) as error:
        generate(ROOT / "schema", frozenset({ARCHIVE}), ROOT, settings=Settings(ClassNames(chosen, "pyproject.toml")))
    assert f"pyproject.toml: /tool/acp-codegen/class-names/{key}: {message}" in str(error.value)


@pytest.mark.parametrize(
    ("labels", "hint"),
    [
        ({"Text": {"ContentBlockText"}}, "; did you mean 'ContentBlockText'?"),
        # Two names share the label: no guess; the closest name is not close enough.
        ({"Text": {"ContentBlockText", "AvailableCommandInputText"}}, ""),
        ({}, ""),
    ],
    ids=["one", "two", "none"],
)
def test_a_key_spelled_as_the_label_of_one_derived_name_is_pointed_to_it(labels, hint) -> None:
    known = {"ContentBlockText", "AvailableCommandInputText", "ContentBlock"}
    [problem] = ClassNames({"Text": "Plain"}, "pyproject.toml").unknown(known, labels)
    assert (
        str(problem) == f"pyproject.toml: /tool/acp-codegen/class-names/Text: no generated class is named 'Text'{hint}"
    )


def test_headers_say_where_the_names_were_chosen(files: dict[str, str]) -> None:
    # Passed to the API (the fixture): nothing was read from a pyproject.toml.
    line = f"# Class names chosen: {len(CHOSEN)} (in the class_names argument)"
    assert [path for path, text in files.items() if line in text] == [p for p in files if p not in RUNTIME_FILES]
    assert not [path for path, text in files.items() if "pyproject" in text.split('"""', 1)[0]]
    chosen = ClassNames(CHOSEN, "tools/acp.toml")
    models = generate(ROOT / "schema", frozenset({ARCHIVE}), ROOT, settings=Settings(chosen)).files["v1/models.py"]
    assert f"# Class names chosen: {len(CHOSEN)} (in tools/acp.toml [tool.acp-codegen].class-names)" in models


def test_a_choice_passed_to_the_api_is_named_as_such_in_errors() -> None:
    with pytest.raises(SchemaError) as error:
        generate(ROOT / "schema", frozenset({ARCHIVE}), ROOT, settings=Settings(ClassNames({"Nope": "Other"})))
    assert str(error.value).startswith("class_names: /Nope: no generated class is named 'Nope'")


def test_a_class_only_a_left_out_feature_has_is_no_error() -> None:
    chosen = ClassNames({"ArchiveSessionRequest": "ArchiveSessionParams"})
    stable = generate(ROOT / "schema", frozenset(), ROOT, settings=Settings(chosen)).files
    plain = generate(ROOT / "schema", frozenset(), ROOT).files
    assert {p: strip_header(t) for p, t in stable.items()} == {p: strip_header(t) for p, t in plain.items()}


def test_two_classes_may_swap_names() -> None:
    chosen = ClassNames(
        {"ArchiveSessionRequest": "UnarchiveSessionRequest", "UnarchiveSessionRequest": "ArchiveSessionRequest"}
    )
    models = generate(ROOT / "schema", frozenset({ARCHIVE}), ROOT, settings=Settings(chosen)).files["v1/models.py"]
    archive = models.split("class UnarchiveSessionRequest(", 1)[1].split("\nclass ", 1)[0]
    assert "archive" in archive.lower() and "unarchive" not in archive.split('"""')[1].lower()


def test_cli_reads_them_from_pyproject_and_check_follows_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject = tmp_path / "pyproject.toml"
    table = '[tool.acp-codegen]\nfeatures = ["unstable_session_archive"]\n[tool.acp-codegen.class-names]\n'
    pyproject.write_text(table + 'SessionInfo = "SessionSummary"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["generate"]) == 0
    assert "chosen in pyproject.toml: 1" in capsys.readouterr().out
    assert "class SessionSummary(BaseModel):" in (tmp_path / "generated" / "v1" / "models.py").read_text()
    assert main(["check"]) == 0
    pyproject.write_text(table + 'SessionInfo = "SessionRecord"\n', encoding="utf-8")
    assert main(["check"]) == 1
    assert "+class SessionRecord(BaseModel):" in capsys.readouterr().out
    pyproject.write_text(table + 'Nope = "SessionRecord"\n', encoding="utf-8")
    assert main(["generate"]) == 2
    assert (
        "pyproject.toml: /tool/acp-codegen/class-names/Nope: no generated class is named 'Nope'"
        in capsys.readouterr().err
    )
    assert "class SessionSummary(BaseModel):" in (tmp_path / "generated" / "v1" / "models.py").read_text()


@pytest.mark.parametrize(
    ("value", "message"),
    [('["SessionInfo"]', "must be a table"), ("{ SessionInfo = 1 }", "must be a table of strings")],
)
def test_the_table_itself_is_checked_when_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str, message: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.acp-codegen]\nclass-names = {value}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["generate"]) == 2
    assert f"[tool.acp-codegen].class-names {message}" in capsys.readouterr().err
