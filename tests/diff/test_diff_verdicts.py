"""``acp-codegen diff`` verdicts over the repository's fragments: a side that ``generate``
refuses is an error in every format and exits 3 whatever ``--fail-on`` says; wire breaks name the party in
the direction that breaks (an old sender to a new receiver, or back), in requests and
responses alike."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.cli import main
from acp_codegen.diff.command import FAIL_ON
from support import copy_schema


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _add_reason_to_v1_archive(data: dict[str, Any]) -> None:
    """Valid schema, but v1-only with no conversion declared: ``generate`` refuses it."""
    data["$defs"]["ArchiveSessionRequest"]["properties"]["reason"] = {"type": "string"}


@pytest.fixture
def ungeneratable_pair(tmp_path: Path) -> tuple[Path, Path]:
    old = copy_schema(tmp_path / "old")
    new = copy_schema(tmp_path / "new", edits={"v1/schema.json": _add_reason_to_v1_archive})
    return old, new


REASON = "/$defs/ArchiveSessionRequest/properties/reason"


def test_a_generation_failure_is_an_error_in_every_format(
    ungeneratable_pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = ungeneratable_pair
    new_file = f"{new.as_posix()}/v1/schema.json"
    code, out, _ = _run(capsys, str(old), str(new), "--format", "json")
    report = json.loads(out)
    assert code == 3  # an error, whatever --fail-on says; the report is still written, for the comment
    [error] = report["errors"]
    assert (error["kind"], error["side"], error["file"], error["pointer"]) == (
        "generation-failed",
        "new",
        new_file,
        REASON,
    )
    assert "no declaration in conversions.json covers it" in error["message"]
    assert report["summary"]["errors"] == 1
    _, out, _ = _run(capsys, str(old), str(new))
    lines = out.splitlines()
    assert "compatible" not in lines[3], lines[3]
    assert lines[3].startswith("**1 error: generation failed on the new side;")
    errors = lines.index("### Errors")
    assert errors < lines.index("### Other changes")
    item = "- generation failed on the new side: `ArchiveSessionRequest.reason` (`v1/schema.json`, line "
    assert lines[errors + 2].startswith(item)
    _, out, _ = _run(capsys, str(old), str(new), "--format", "github")
    first = out.splitlines()[0]
    assert first.startswith(f"::error file={new_file},line=")
    assert "title=Generation failed (new side)" in first and "conversions.json" in first
    text = Path(new_file).read_text(encoding="utf-8").splitlines()
    line = int(first.split("line=", 1)[1].split(",", 1)[0])
    assert text[line - 1].strip().startswith('"reason": {')


@pytest.mark.parametrize("fail_on", FAIL_ON)
def test_a_generation_failure_exits_3_whatever_fail_on_says(
    ungeneratable_pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str], fail_on: str
) -> None:
    old, new = ungeneratable_pair
    code, _, _ = _run(capsys, str(old), str(new), "--fail-on", fail_on)
    assert code == 3


def test_an_error_in_conversions_json_names_the_declaration_and_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A v1 property deleted: its field declaration covers nothing any more. The error names
    `ListSessionsResponse.nextCursor`, not `conversions.json#/fields/11`, and the annotation
    has the line of the declaration."""
    old = copy_schema(tmp_path / "old")
    drop = lambda d: d["$defs"]["ListSessionsResponse"]["properties"].pop("nextCursor")  # noqa: E731
    new = copy_schema(tmp_path / "new", edits={"v1/schema.json": drop})
    code, out, _ = _run(capsys, str(old), str(new), "--format", "json", "--fail-on", "never")
    assert code == 3
    declared = next(e for e in json.loads(out)["errors"] if e["file"].endswith("conversions.json"))
    assert declared["subject"] == "ListSessionsResponse.nextCursor"
    entry = json.loads((new / "conversions.json").read_text(encoding="utf-8"))["fields"]
    index = int(declared["pointer"].rsplit("/", 1)[1])
    assert (entry[index]["type"], entry[index]["v1"]) == ("ListSessionsResponse", "nextCursor")
    lines = (new / "conversions.json").read_text(encoding="utf-8").splitlines()
    assert '"type": "ListSessionsResponse"' in lines[declared["line"] - 1] or lines[declared["line"] - 1].strip() == "{"
    _, out, _ = _run(capsys, str(old), str(new))
    assert "`ListSessionsResponse.nextCursor` (`conversions.json`, line " in out and "#/fields/" not in out
    _, out, _ = _run(capsys, str(old), str(new), "--format", "github")
    errors = [line for line in out.splitlines() if line.startswith("::error ")]
    assert errors and all(re.match(r"::error file=[^,]+,line=[1-9][0-9]*,", line) for line in errors), errors
    declared = "ListSessionsResponse.nextCursor: covers no difference"
    assert any("conversions.json,line=" in e and declared in e for e in errors), errors


def _breaks(capsys: pytest.CaptureFixture[str], tmp_path: Path, edit: Any) -> dict[str, Any]:
    old = copy_schema(tmp_path / "old")
    new = copy_schema(tmp_path / "new", edits={"v1/schema.json": edit})
    code, out, err = _run(capsys, str(old), str(new), "--format", "json", "--no-generated")
    assert code == 0, err
    [change] = json.loads(out)["changes"]
    return dict(change)


def _require(type_name: str, prop: str) -> Any:
    def edit(data: dict[str, Any]) -> None:
        definition = data["$defs"][type_name]
        definition["required"] = [*definition.get("required", []), prop]

    return edit


@pytest.mark.parametrize(("type_name", "prop"), [("ListSessionsResponse", "nextCursor"), ("SessionInfo", "title")])
def test_a_response_property_made_required_breaks_new_clients_with_old_agents(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, type_name: str, prop: str
) -> None:
    change = _breaks(capsys, tmp_path, _require(type_name, prop))
    assert (change["path"], change["rule"]) == (f"{type_name}.{prop}", "property-made-required")
    assert change["wireBreaking"] is True
    assert change["breaks"] == ["new clients receiving `session/list` results from old agents"]
    assert change["directions"] == ["old-to-new"]


def test_a_request_filter_removed_breaks_old_clients_that_send_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    change = _breaks(capsys, tmp_path, lambda d: d["$defs"]["ListSessionsRequest"]["properties"].pop("archived"))
    assert (change["path"], change["rule"]) == ("ListSessionsRequest.archived", "property-removed-optional")
    assert change["wireBreaking"] is True
    assert change["breaks"] == ["old clients sending `session/list` to new agents"]


def test_every_error_annotation_names_a_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A protocol version removed has no schema line of its own: its ::error is still placed,
    at the top of the new side's first file (GitHub drops an annotation without a file)."""
    old = copy_schema(tmp_path / "old")
    new = copy_schema(tmp_path / "new", versions=["v1"])
    code, out, _ = _run(capsys, str(old), str(new), "--format", "github", "--no-generated", "--fail-on", "breaking")
    assert code == 1
    errors = [line for line in out.splitlines() if line.startswith("::error ")]
    assert any("version-removed" in line for line in errors), errors
    assert all(re.match(r"::error file=[^,]+,line=[1-9][0-9]*,", line) for line in errors), errors
