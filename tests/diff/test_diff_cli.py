"""``acp-codegen diff``: inputs (directories, files, git refs), formats, exit codes, bad input,
the repository's own feature, and upstream stable vs unstable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.cli import main
from acp_codegen.diff import compare
from acp_codegen.diff.command import load_side
from acp_codegen.diff.inputs import open_sides
from support import ROOT, copy_schema, edit_json

FEATURE = "unstable_session_archive"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _make_archived_required(data: dict[str, Any]) -> None:
    request = data["$defs"]["ListSessionsRequest"]
    request["required"] = [*request.get("required", []), "archived"]


# --- the repository's own fragments ------------------------------------------------------------


def _expected_feature_additions(version_dir: Path) -> set[str]:
    """The RFD's additions, read straight from the fragments: gated types, properties, methods."""
    schema = json.loads((version_dir / "schema.json").read_text(encoding="utf-8"))
    expected = set()
    gated_methods = set()
    for name, definition in schema["$defs"].items():
        if definition.get("x-feature") == FEATURE:
            expected.add(name)
            if "x-method" in definition:
                gated_methods.add(definition["x-method"])
        for prop, sub in definition.get("properties", {}).items():
            if isinstance(sub, dict) and sub.get("x-feature") == FEATURE:
                expected.add(f"{name}.{prop}")
    return expected | gated_methods


def test_own_fragments_without_vs_with_the_feature_are_exactly_the_rfd_additions() -> None:
    with open_sides("schema", ROOT, ROOT / "schema") as sides:
        old = load_side(sides[""], frozenset())
        new = load_side(sides[""])
    changes = compare(old.protocols, new.protocols, old.file_names, new.file_names)
    assert new.features == {FEATURE}
    for version in (1, 2):
        reported = {c.path for c in changes if c.version == version}
        assert reported == _expected_feature_additions(ROOT / "schema" / f"v{version}")
    assert {c.change for c in changes} == {"added"}
    assert [c.as_json() for c in changes if c.breaking] == []
    assert {c.feature for c in changes} == {FEATURE}
    assert all(c.location.startswith("schema/v") and "#/$defs/" in c.location for c in changes)


def test_generated_file_report_counts_lines(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _ = _run(capsys, "schema", "schema", "--old-features", "", "--format", "json")
    assert code == 0
    files = {f["path"]: f for f in json.loads(out)["generated"]}
    models = files["v1/models.py"]
    assert models["status"] == "changed" and models["added"] > 50 and models["added"] > models["removed"]
    assert "v2/methods.py" in files


# --- upstream stable vs unstable ---------------------------------------------------------------


def _methods(meta: Path) -> set[tuple[str, str]]:
    data = json.loads(meta.read_text(encoding="utf-8"))
    sides = {"agentMethods": "agent", "clientMethods": "client", "protocolMethods": "protocol"}
    return {(name, side) for section, side in sides.items() for name in data.get(section, {}).values()}


@pytest.mark.parametrize("version", [1, 2])
def test_upstream_stable_vs_unstable(upstream: Path, version: int) -> None:
    base = upstream / f"v{version}"
    with (
        open_sides(str(base / "schema.json"), ROOT, ROOT / "schema") as a,
        open_sides(str(base / "schema.unstable.json"), ROOT, ROOT / "schema") as b,
    ):
        old, new = load_side(a[""]), load_side(b[""])
    changes = compare(old.protocols, new.protocols, old.file_names, new.file_names)
    methods = {(c.path, c.side, c.change) for c in changes if c.kind == "method"}
    added = _methods(base / "meta.unstable.json") - _methods(base / "meta.json")
    assert added, "the fixture should add methods"
    assert {(name, side, "added") for name, side in added} == methods
    stable = json.loads((base / "schema.json").read_text(encoding="utf-8"))["$defs"]
    unstable = json.loads((base / "schema.unstable.json").read_text(encoding="utf-8"))["$defs"]
    new_types = {
        c.path
        for c in changes
        if c.kind == "type" and c.change in ("added", "changed") and c.rule != "type-kind-changed"
    }
    assert set(unstable) - set(stable) <= new_types
    # (named relative to the checkout where the reference data is inside it, .reference/)
    files = {Path(os.path.abspath(base / name)) for name in ("schema.json", "schema.unstable.json")}
    elsewhere = [
        c.location
        for c in changes
        if Path(os.path.abspath(ROOT / c.location.partition("#")[0])) not in files or "#/$defs/" not in c.location
    ]
    assert not elsewhere, elsewhere
    # Every change names a rule, and a breaking one says whom it breaks.
    assert all(c.breaks for c in changes if c.breaking)


def test_upstream_file_is_named_in_problems(upstream: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "v1" / "schema.json"
    broken.parent.mkdir()
    text = (upstream / "v1" / "schema.json").read_text(encoding="utf-8")
    data = json.loads(text)
    data["$defs"]["SessionId"] = {"$ref": "#/$defs/Nowhere"}
    broken.write_text(json.dumps(data), encoding="utf-8")
    code, _, err = _run(capsys, str(upstream / "v1" / "schema.json"), str(broken), "--no-generated")
    assert code == 2
    assert f"{broken.as_posix()}: /$defs/SessionId/$ref: reference to undefined type 'Nowhere'" in err


# --- formats and exit codes --------------------------------------------------------------------


@pytest.fixture
def breaking_pair(tmp_path: Path) -> tuple[Path, Path]:
    old = copy_schema(tmp_path / "old")
    new = copy_schema(tmp_path / "new")
    edit_json(new / "v1" / "schema.json", _make_archived_required)
    return old, new


def test_json_report_lists_path_change_breaking_detail(
    breaking_pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = breaking_pair
    code, out, _ = _run(capsys, str(old), str(new), "--format", "json", "--no-generated")
    assert code == 0
    report = json.loads(out)
    [change] = report["changes"]
    keys = ("version", "path", "change", "breaking", "wireBreaking", "codeBreaking", "rule")
    assert {k: change[k] for k in keys} == {
        "version": 1,
        "path": "ListSessionsRequest.archived",
        "change": "changed",
        "breaking": True,
        "wireBreaking": True,
        "codeBreaking": True,
        "rule": "property-made-required",
    }
    assert change["breaks"] == ["old clients sending `session/list` to new agents"]
    assert change["directions"] == ["old-to-new"]
    assert change["feature"] == FEATURE
    assert report["summary"] == {"changes": 1, "breaking": 1, "wireBreaking": 1, "codeBreaking": 1, "errors": 0}
    assert report["errors"] == []


def test_markdown_report_groups_by_version_and_type(
    breaking_pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = breaking_pair
    code, out, _ = _run(capsys, str(old), str(new), "--no-generated")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "<!-- acp-codegen diff -->"
    assert lines[3] == "**1 change: 1 breaking (1 wire, 1 code), 0 compatible (v1: 1)**"
    start = lines.index("### Breaking changes")
    assert lines[start : start + 6] == [
        "### Breaking changes",
        "",
        "**v1**",
        "",
        "- `ListSessionsRequest.archived`: now required; feature `unstable_session_archive`",
        "  - wire: breaks old clients sending `session/list` to new agents;"
        " code: breaks clients' code that sets it (constructors must now pass it); rule `property-made-required`"
        " · `v1/schema.json#/$defs/ListSessionsRequest/properties/archived`",
    ]
    assert "### Other changes" not in lines


@pytest.fixture
def code_only_pair(tmp_path: Path) -> tuple[Path, Path]:
    """Removing an optional response property: old peers still interoperate, but code that
    reads the attribute from the generated model no longer type-checks."""
    old = copy_schema(tmp_path / "code-old")
    new = copy_schema(tmp_path / "code-new")
    edit_json(new / "v1" / "schema.json", lambda d: d["$defs"]["ListSessionsResponse"]["properties"].pop("nextCursor"))
    return old, new


def test_an_optional_response_property_removed_breaks_code_not_the_wire(
    code_only_pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = code_only_pair
    _, out, _ = _run(capsys, str(old), str(new), "--format", "json", "--no-generated")
    [change] = json.loads(out)["changes"]
    assert (change["path"], change["rule"]) == ("ListSessionsResponse.nextCursor", "property-removed-optional")
    assert (change["wireBreaking"], change["codeBreaking"], change["breaking"]) == (False, True, True)
    _code, out, _ = _run(capsys, str(old), str(new), "--no-generated")
    # Whose code: the agents' that set the field in their results, the clients' that read it.
    assert change["codeBreaks"] == ["agents' code that sets it", "clients' code that reads it"]
    assert (
        "  - wire: compatible; code: breaks agents' code that sets it and clients' code that reads it"
        " (the attribute disappears); rule `property-removed-optional`"
    ) in out


@pytest.mark.parametrize(
    ("fail_on", "pair", "expected"),
    [
        ("never", "breaking", 0),
        ("breaking", "breaking", 1),
        ("any", "breaking", 1),
        ("breaking", "identical", 0),
        ("any", "identical", 0),
        ("breaking", "code_only", 1),
        ("wire-breaking", "code_only", 0),
        ("code-breaking", "code_only", 1),
        ("wire-breaking", "breaking", 1),
        ("code-breaking", "identical", 0),
    ],
)
def test_fail_on_sets_the_exit_code(
    breaking_pair: tuple[Path, Path],
    code_only_pair: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    fail_on: str,
    pair: str,
    expected: int,
) -> None:
    old, new = {"breaking": breaking_pair, "code_only": code_only_pair, "identical": breaking_pair[:1] * 2}[pair]
    code, _, _ = _run(capsys, str(old), str(new), "--fail-on", fail_on, "--no-generated")
    assert code == expected


def test_fail_on_breaking_passes_non_breaking_changes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = copy_schema(tmp_path / "old")
    code, _, _ = _run(capsys, str(old), str(old), "--old-features", "", "--fail-on", "breaking", "--no-generated")
    assert code == 0
    code, _, _ = _run(capsys, str(old), str(old), "--old-features", "", "--fail-on", "any", "--no-generated")
    assert code == 1


# --- input kinds -------------------------------------------------------------------------------


def test_version_directory_and_single_file_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = copy_schema(tmp_path / "new")
    edit_json(new / "v1" / "schema.json", _make_archived_required)
    lone = tmp_path / "lone" / "v1" / "schema.json"  # no meta.json: methods come from x-method markers
    lone.parent.mkdir(parents=True)
    shutil.copyfile(new / "v1" / "schema.json", lone)
    for old_arg, new_arg in (
        (str(ROOT / "schema" / "v1"), str(new / "v1")),
        (str(ROOT / "schema" / "v1" / "schema.json"), str(new / "v1" / "schema.json")),
        (str(ROOT / "schema" / "v1" / "schema.json"), str(lone)),
    ):
        code, out, err = _run(capsys, old_arg, new_arg, "--format", "json", "--no-generated")
        assert code == 0, err
        assert [c["path"] for c in json.loads(out)["changes"]] == ["ListSessionsRequest.archived"], (old_arg, new_arg)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(repo), *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    copy_schema(repo / "schema")
    copy_schema(repo / "elsewhere" / "schemas")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    edit_json(repo / "schema" / "v1" / "schema.json", _make_archived_required)
    monkeypatch.chdir(repo)
    return repo


def test_git_ref_against_working_tree(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "git:HEAD", "schema", "--format", "json", "--no-generated")
    assert code == 0, err
    assert [c["path"] for c in json.loads(out)["changes"]] == ["ListSessionsRequest.archived"]
    assert json.loads(out)["changes"][0]["location"].startswith("schema/v1/schema.json#")
    code, out, _ = _run(capsys, "git:HEAD", "elsewhere/schemas", "--path", "elsewhere/schemas", "--no-generated")
    assert code == 0 and "**0 changes: 0 breaking (0 wire, 0 code), 0 compatible**" in out


def test_git_side_problems_name_the_ref(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "schema" / "v2" / "schema.json").write_text("{", encoding="utf-8")
    _git(repo, "commit", "-qam", "broken")
    code, _, err = _run(capsys, "git:HEAD", "schema", "--no-generated")
    assert code == 2
    assert err.startswith("git:HEAD:schema/v2/schema.json: /: invalid JSON")


@pytest.mark.parametrize("spec", ["git:no-such-ref", "git:--output=x", "git:"])
def test_bad_git_ref_exits_2(repo: Path, capsys: pytest.CaptureFixture[str], spec: str) -> None:
    code, out, err = _run(capsys, spec, "schema", "--no-generated")
    assert (code, out) == (2, "")
    assert err.startswith("acp-codegen diff: git:") and "Traceback" not in err


# --- malformed input on either side ------------------------------------------------------------

MALFORMED = {
    "invalid-json": (lambda p: p.write_text('{"$defs": ', encoding="utf-8"), "v1/schema.json: /: invalid JSON"),
    "duplicate-key": (
        lambda p: p.write_text('{"$defs": {"A": {"type": "object"}, "A": {"type": "string"}}}', encoding="utf-8"),
        "v1/schema.json: /$defs/A: duplicate key",
    ),
    "bad-ref": (
        lambda p: edit_json(p, lambda d: d["$defs"]["SessionInfo"].update({"$ref": "#/$defs/Missing"})),
        "v1/schema.json: /$defs/SessionInfo/$ref: reference to undefined type 'Missing'",
    ),
    "bad-keyword-type": (
        lambda p: edit_json(p, lambda d: d["$defs"]["SessionInfo"].update({"required": "sessionId"})),
        "v1/schema.json: /$defs/SessionInfo/required: not valid JSON Schema",
    ),
}


@pytest.mark.parametrize("which", ["old", "new"])
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_input_on_either_side_exits_2_with_file_and_pointer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str, case: str
) -> None:
    good = copy_schema(tmp_path / "good")
    bad = copy_schema(tmp_path / "bad")
    damage, message = MALFORMED[case]
    damage(bad / "v1" / "schema.json")
    args = (str(bad), str(good)) if which == "old" else (str(good), str(bad))
    code, out, err = _run(capsys, *args)
    assert (code, out) == (2, "")
    assert f"{bad.as_posix()}/{message}" in err, err
    assert "Traceback" not in err


def test_malformed_input_as_a_process_prints_no_traceback(tmp_path: Path) -> None:
    bad = copy_schema(tmp_path / "bad")
    (bad / "v2" / "meta.json").write_text('{"version": "two"}', encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "acp_codegen", "diff", str(ROOT / "schema"), str(bad)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert f'{bad.as_posix()}/v2/meta.json: /version: "two" is not of type "integer"' in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_input_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, str(tmp_path / "nope"), "schema", "--no-generated")
    assert code == 2 and "no such file or directory" in err


def test_unknown_feature_on_one_side_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code, _, err = _run(capsys, "schema", "schema", "--new-features", "unstable_nope", "--no-generated")
    assert code == 2 and "unknown feature 'unstable_nope'" in err


def test_generation_failure_leaves_the_protocol_diff(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import acp_codegen.diff.command

    def broken(*_: object) -> None:
        raise RuntimeError("renderer exploded")

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(acp_codegen.diff.command, "generate", broken)
    code, out, _ = _run(capsys, "schema", "schema", "--old-features", "", "--format", "json")
    report = json.loads(out)
    assert code == 3 and report["summary"]["changes"] > 0
    assert "generated" not in report and "generatedNote" not in report
    assert report["errors"] == [
        {
            "kind": "generation-failed",
            "side": side,
            "file": "",
            "pointer": "",
            "message": "RuntimeError: renderer exploded",
            "subject": "",
            "line": 0,
        }
        for side in ("old", "new")
    ]
    # An error that names no file is still annotated at a file and line of the pull request.
    code, out, _ = _run(capsys, "schema", "schema", "--old-features", "", "--format", "github")
    errors = [line for line in out.splitlines() if line.startswith("::error ")][:2]
    assert [e.split("::")[1] for e in errors] == [
        f"error file=schema/v1/schema.json,line=1,title=Generation failed ({side} side)" for side in ("old", "new")
    ]


def test_schema_file_of_unknown_version_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lone = tmp_path / "loose.json"
    shutil.copyfile(ROOT / "schema" / "v1" / "schema.json", lone)
    code, _, err = _run(capsys, str(lone), str(lone), "--no-generated")
    assert code == 2
    assert err.startswith(f"{lone.as_posix()}: /: cannot tell the protocol version")


@pytest.mark.parametrize("loose_first", [True, False], ids=["old", "new"])
def test_a_schema_file_of_unknown_version_is_compared_as_the_other_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], loose_first: bool
) -> None:
    """Upstream's first release, v0.0.13, has no meta file and no v<N>/ directory."""
    lone = tmp_path / "loose.json"
    shutil.copyfile(ROOT / "schema" / "v1" / "schema.json", lone)
    inputs = [str(lone), str(ROOT / "schema" / "v1" / "schema.json")]
    code, out, err = _run(capsys, *(inputs if loose_first else inputs[::-1]), "--no-generated", "--format", "json")
    assert (code, err) == (0, "")
    assert json.loads(out)["changes"] == []  # both read as protocol v1


def test_version_directory_problems_name_the_original_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = copy_schema(tmp_path / "bad")
    edit_json(bad / "v2" / "schema.json", lambda d: d["$defs"]["SessionInfo"].update({"$ref": "#/$defs/Missing"}))
    code, _, err = _run(capsys, str(ROOT / "schema" / "v2"), str(bad / "v2"), "--no-generated")
    assert code == 2
    assert f"{(bad / 'v2' / 'schema.json').as_posix()}: /$defs/SessionInfo/$ref: reference to undefined type" in err


def test_identical_schema_elsewhere_changes_no_generated_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    copy = copy_schema(tmp_path / "copy")
    code, out, _ = _run(capsys, "schema", str(copy), "--format", "json")
    assert code == 0
    assert json.loads(out)["generated"] == []  # file headers name inputs alike on both sides


def test_report_is_identical_for_any_hash_seed() -> None:
    outputs = {
        subprocess.run(
            [sys.executable, "-m", "acp_codegen", "diff", "schema", "schema", "--old-features", "", "--no-generated"],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outputs) == 1


def test_the_builtin_fragments_are_a_side_named_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An SDK compares its fragments with the ones acp-codegen ships: `diff builtin:session-archive schema`."""
    code, out, _ = _run(capsys, "builtin:session-archive", str(ROOT / "schema"), "--fail-on", "any")
    assert code == 0 and "**0 changes" in out
    changed = copy_schema(tmp_path / "schema")
    edit_json(changed / "v1" / "schema.json", _make_archived_required)
    code, out, _ = _run(capsys, str(changed), "builtin:session-archive", "--format", "github", "--no-generated")
    assert "file=builtin%3Asession-archive/v1/schema.json,line=" in out and "ListSessionsRequest.archived" in out
    code, _, err = _run(capsys, "builtin:nope", "schema")
    assert code == 2 and "builtin:nope: /: no such built-in fragment set" in err
