"""``acp-codegen diff`` reports: the Markdown comment's order and size limit, GitHub Actions
annotations at real schema lines, JSON pointers mapped to lines, and generated files
compared by content only."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.cli import main
from acp_codegen.diff import Change, Report, file_changes
from acp_codegen.diff.report import MARKER, pointer_lines, to_github, to_markdown
from acp_codegen.write import strip_header
from support import ROOT, SchemaCopy

# ::error file=F,line=N,title=T::message  (properties and message escaped as GitHub expects)
ANNOTATION = re.compile(r"::(error|notice) file=([^,:]+),line=([0-9]+),title=([^,:]+)::(.+)\Z")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _change(index: int, *, breaking: bool, version: int = 1) -> Change:
    return Change(
        version,
        f"Type{index:04d}.field",
        "removed" if breaking else "added",
        "property",
        "property-removed-required" if breaking else "property-added-optional",
        f"property number {index}",
        location=f"schema/v{version}/schema.json#/$defs/Type{index:04d}/properties/field",
        breaks=("clients receiving `thing/do` results",) if breaking else (),
        group=f"Type{index:04d}",
        code=breaking,
    )


def _report(breaking: int, compatible: int) -> Report:
    changes = [_change(i, breaking=False, version=1 + i % 2) for i in range(compatible)]
    changes += [_change(10_000 + i, breaking=True, version=1 + i % 2) for i in range(breaking)]
    return Report("old", "new", changes)


# --- Markdown: order and size ------------------------------------------------------------------


def test_summary_then_breaking_then_the_rest_folded() -> None:
    text = to_markdown(_report(3, 4))
    lines = text.splitlines()
    assert lines[0] == MARKER
    assert lines[3] == "**7 changes: 3 breaking (3 wire, 3 code), 4 compatible (v1: 4, v2: 3)**"
    first_breaking = next(i for i, line in enumerate(lines) if "Type1000" in line)
    first_other = next(i for i, line in enumerate(lines) if "Type000" in line)
    assert lines.index("### Breaking changes") < first_breaking < lines.index("### Other changes") < first_other
    assert "<details><summary>v1: 2 changes</summary>" in lines and "<details><summary>v2: 2 changes</summary>" in lines
    assert text.count("<details>") == text.count("</details>") == 2
    assert "Left out" not in text


def test_over_the_limit_other_changes_go_first_and_the_report_says_so() -> None:
    report = _report(5, 2000)
    full = to_markdown(report)
    assert len(full) > 65536
    text = to_markdown(report, 65536, "acp-codegen diff a b")
    assert len(text) <= 65536
    for i in range(5):  # every breaking change stays, with its location
        assert f"`Type{10_000 + i}.field`" in text
        assert f"schema/v{1 + i % 2}/schema.json#/$defs/Type{10_000 + i}/properties/field" in text
    listed = len(re.findall(r"^- added `Type\d{4}\.field`", text, re.M))
    assert 0 < listed < 2000
    note = text.splitlines()[-1]
    assert note.startswith("> Left out to fit the size limit: ")
    assert f"{2000 - listed} of 2000 other changes" in note and "the schema locations of other changes" in note
    assert "`acp-codegen diff a b --format json`" in note and "`--max-chars 0`" in note
    # both versions keep an equal share
    assert f"<details><summary>v1: 1000 changes, {listed // 2} listed</summary>" in text.splitlines()


def test_breaking_changes_are_cut_last_and_only_from_the_end() -> None:
    report = _report(400, 50)
    text = to_markdown(report, 20_000)
    assert len(text) <= 20_000
    assert "- added `" not in text
    assert "`Type10000.field`" in text
    note = text.splitlines()[-1]
    kept = len(re.findall(r"^- `Type1\d{4}\.field`", text, re.M))
    assert 0 < kept < 400 and f"{400 - kept} of 400 breaking changes" in note
    assert "the schema locations of breaking changes" in note


def test_max_chars_zero_is_no_limit_and_small_limits_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert to_markdown(_report(5, 2000), 0) == to_markdown(_report(5, 2000))
    with pytest.raises(SystemExit):
        main(["diff", "schema", "schema", "--max-chars", "10"])
    assert "--max-chars" in capsys.readouterr().err


# --- JSON pointers to lines, GitHub annotations ------------------------------------------------


def test_pointer_lines_name_the_line_of_each_member_and_item() -> None:
    text = '{\n  "a": {\n    "b/c": [\n      1,\n      {"d~": "x"}\n    ]\n  },\n  "e": "}"\n}\n'
    assert pointer_lines(text) == {
        "": 1,
        "/a": 2,
        "/a/b~1c": 3,
        "/a/b~1c/0": 4,
        "/a/b~1c/1": 5,
        "/a/b~1c/1/d~0": 5,
        "/e": 8,
    }


def test_pointer_lines_cover_a_real_schema(upstream: Path) -> None:
    text = (upstream / "v1" / "schema.unstable.json").read_text(encoding="utf-8")
    lines = text.splitlines()
    found = pointer_lines(text)
    names = [(p, n) for p, n in found.items() if p and not p.rsplit("/", 1)[1].isdigit()]
    assert len(names) > 1000
    for pointer, number in names:
        key = pointer.rsplit("/", 1)[1].replace("~1", "/").replace("~0", "~")
        assert json.dumps(key) + ":" in lines[number - 1].replace('": ', '":'), pointer


def _github(capsys: pytest.CaptureFixture[str], old: str, new: str) -> list[re.Match[str]]:
    code, out, err = _run(capsys, old, new, "--format", "github", "--no-generated")
    assert code == 0, err
    found = [ANNOTATION.match(line) for line in out.splitlines()]
    assert found and all(found), out
    return [m for m in found if m]


def test_github_annotations_point_at_the_changed_line(
    tmp_path: Path, schema_copy: SchemaCopy, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    def change(data: dict[str, Any]) -> None:
        request = data["$defs"]["ListSessionsRequest"]
        request["required"] = [*request.get("required", []), "archived"]  # breaking
        data["$defs"]["SessionInfo"]["properties"]["note"] = {"type": "string"}  # compatible
        del data["$defs"]["ListSessionsResponse"]["properties"]["nextCursor"]  # removed: code-breaking

    schema_copy("old")
    schema_copy("new", edits={"v1/schema.json": change})
    path = Path("new/v1/schema.json")
    found = _github(capsys, "old", "new")
    lines = path.read_text(encoding="utf-8").splitlines()
    by_path = {m.group(5).split(": ", 1)[0]: m for m in found}
    assert [m.group(1) for m in found] == ["error", "error", "notice"]  # breaking first
    required = by_path["v1 ListSessionsRequest.archived"]
    assert (
        required.group(2) == "new/v1/schema.json"
        and required.group(4) == "Breaking schema change (wire%2C code)%3A property-made-required"
    )
    assert lines[int(required.group(3)) - 1].strip().startswith('"archived": {')
    assert lines[int(by_path["v1 SessionInfo.note"].group(3)) - 1].strip().startswith('"note": {')
    # a removed property is shown in the new file, at the nearest line still there
    removed = by_path["v1 ListSessionsResponse.nextCursor"]
    assert removed.group(2) == "new/v1/schema.json"
    assert lines[int(removed.group(3)) - 1].strip() == '"properties": {'


def test_github_annotations_escape_newlines_and_percent() -> None:
    change = Change(1, "T.x", "added", "property", "property-added-optional", "a\nb 100%", group="T")
    [line] = to_github(Report("old", "new", [change])).splitlines()
    assert line == "::notice title=Schema change%3A property-added-optional::v1 T.x: a%0Ab 100%25"


# --- generated files -------------------------------------------------------------------------


def test_generated_files_count_content_changes_only() -> None:
    header = "# Generated by acp-codegen 0.1.0. Do not edit.\n# Inputs sha256: {}\n# Content sha256: {}\n\n"
    old = {"a.py": header.format("1", "2") + "x = 1\n", "b.py": header.format("1", "2") + "y = 1\n"}
    new = {"a.py": header.format("3", "4") + "x = 1\n", "b.py": header.format("3", "4") + "y = 2\n"}
    assert strip_header(new["a.py"]) == "\nx = 1\n"  # the blank line after the header is the body's
    assert strip_header("no header\n") == "no header\n"
    assert [(f.path, f.status, f.added, f.removed) for f in file_changes(old, new)] == [("b.py", "changed", 1, 1)]


def test_a_description_change_reports_only_the_file_whose_content_changes(
    schema_copy: SchemaCopy, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    new = schema_copy(
        edits={"v1/schema.json": lambda d: d["$defs"]["SessionInfo"].update(description="Changed words.")}
    )
    code, out, err = _run(capsys, "schema", str(new), "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["changes"] == []
    # Every file generated from v1 gets a new inputs hash in its header; only the models'
    # docstring changes content.
    assert report["generated"] == [{"path": "v1/models.py", "status": "changed", "added": 1, "removed": 1}]
