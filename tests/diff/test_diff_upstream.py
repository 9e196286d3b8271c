"""``acp-codegen diff`` on upstream's own layout and real history: the 2026-08 snapshot
(``upstream/`` of the reference data, with meta files) against the 2026-11 release (``2026-11/``, no meta
files, an ``x-side`` value this tool does not know). Skipped when the snapshots are absent."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest
from acp_codegen.cli import main
from acp_codegen.diff import Report
from acp_codegen.diff.command import add_arguments, build_report
from acp_codegen.diff.report import DEFAULT_MAX_CHARS, github_lines, scope, to_json, to_markdown
from support import SHARED_UPSTREAM, SchemaCopy
from support.reference_data import require

ANNOTATION = re.compile(
    r"::(error|notice) file=([^,:]+),line=([0-9]+),title=[^,:]+%3A ([a-z-]+)::(v[0-9]+(?: [a-z]+)?) (\S+): "
)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def release_report() -> Report:
    require(SHARED_UPSTREAM / "2026-11")
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return build_report(parser.parse_args([str(SHARED_UPSTREAM), str(SHARED_UPSTREAM / "2026-11")]))


def test_upstream_layout_is_one_input_per_release(upstream: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for release in (upstream, upstream / "2026-11"):
        code, out, err = _run(capsys, str(release), str(release), "--format", "json")
        assert (code, err) == (0, "")  # no "also defined in" errors, no unknown x-side
        report = json.loads(out)
        assert report["changes"] == [] and "upstream's layout" in report["generatedNote"]


def test_both_versions_and_surfaces_are_compared(release_report: Report, upstream: Path) -> None:
    scopes = {scope(c) for c in release_report.changes}
    assert scopes == {"v1 stable", "v1 unstable", "v2 stable", "v2 unstable"}
    # The unstable files repeat the stable surface: a change is listed under one surface only.
    keys = [(c.version, c.path, c.rule, c.change, c.detail) for c in release_report.changes]
    assert len(keys) == len(set(keys))
    # 2026-11 has no meta files: its methods come from x-method/x-side. Methods it dropped are
    # removed, with the side 2026-08's meta gave them.
    meta = json.loads((upstream / "v1" / "meta.unstable.json").read_text(encoding="utf-8"))
    new_defs = json.loads((upstream / "2026-11" / "v1" / "schema.unstable.json").read_text(encoding="utf-8"))["$defs"]
    marked = {d["x-method"] for d in new_defs.values() if "x-method" in d}
    gone = {m for m in meta["agentMethods"].values() if m not in marked}
    removed = {c.path for c in release_report.changes if c.rule == "method-removed" and c.version == 1}
    assert gone and gone <= removed
    assert all(c.side == "agent" for c in release_report.changes if c.path in gone and c.version == 1)
    # Proxy methods (an x-side this tool does not know) are types, not methods here.
    assert not any(c.kind == "method" and c.side == "proxy" for c in release_report.changes)
    assert json.loads(to_json(release_report))["summary"]["codeBreaking"] > 0


def test_release_report_fits_a_comment_with_every_breaking_change_first(release_report: Report) -> None:
    text = to_markdown(release_report, DEFAULT_MAX_CHARS, "acp-codegen diff OLD NEW")
    assert len(text) <= DEFAULT_MAX_CHARS
    assert len(to_markdown(release_report)) > DEFAULT_MAX_CHARS  # it had to be cut
    head, other = text.split("\n### Other changes\n")
    breaking_section = head.split("\n### Breaking changes\n")[1]
    listed = set()
    block = ""
    for line in breaking_section.splitlines():
        if re.fullmatch(r"\*\*v[0-9]+(?: [a-z]+)?\*\*", line):
            block = line.strip("*")
        elif line.startswith("- `"):
            listed.add((block, line[3:].split("`", 1)[0]))
    assert listed == {(scope(c), c.path) for c in release_report.breaking}
    assert "BREAKING" not in other and "- `" not in other  # the rest lists no breaking change
    assert "Left out to fit the size limit" in text.splitlines()[-1]


def test_github_annotations_parse_and_point_at_real_lines(release_report: Report) -> None:
    lines = list(github_lines(release_report))
    assert len(lines) == len(release_report.changes)
    levels = [line.split(" ", 1)[0] for line in lines]
    assert levels == sorted(levels)  # every ::error before any ::notice
    where = {(scope(c), c.path, c.rule): c.location for c in release_report.changes}
    assert len(where) == len(release_report.changes)
    # (a file inside the checkout is shown relative to it, as GitHub wants; ../shared is not)
    new_release = Path(release_report.new_label).resolve()
    for line in lines:
        match = ANNOTATION.match(line)
        assert match, line
        file, number = match.group(2), int(match.group(3))
        text = Path(file).read_text(encoding="utf-8").splitlines()
        assert Path(file).resolve().is_relative_to(new_release) and 1 <= number <= len(text)
        location_file, _, pointer = where[(match.group(5), match.group(6), match.group(4))].partition("#")
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
        if location_file == file:  # in the new release: the line of the change itself
            last = tokens[-1]
            assert f'"{last}":' in text[number - 1] if not last.isdigit() else text[number - 1].strip() == "{"
        else:  # a removal: shown in the new file, at a parent that is still there
            old_file = Path(location_file).resolve().relative_to(Path(release_report.old_label).resolve())
            assert new_release / old_file == Path(file).resolve()
            here = text[number - 1]
            assert number == 1 or here.strip() == "{" or any(f'"{t}":' in here for t in tokens if not t.isdigit())


def test_one_upstream_version_directory(upstream: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, str(upstream / "v2"), str(upstream / "2026-11" / "v2"), "--format", "json")
    assert code == 0, err
    assert {(c["version"], c["surface"]) for c in json.loads(out)["changes"]} == {(2, "stable"), (2, "unstable")}


def test_upstream_layout_against_our_layout_is_refused(upstream: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, str(upstream), "schema", "--no-generated")
    assert (code, out) == (2, "")
    assert err.startswith("acp-codegen diff: ") and "upstream's layout" in err


def test_our_fragments_stay_strict_about_x_side(schema_copy: SchemaCopy, capsys: pytest.CaptureFixture[str]) -> None:
    schema = schema_copy(
        edits={"v1/schema.json": lambda d: d["$defs"]["ArchiveSessionRequest"].update({"x-side": "proxy"})}
    )
    code, _, err = _run(capsys, "schema", str(schema), "--no-generated")
    assert code == 2
    assert "/$defs/ArchiveSessionRequest/x-side: x-side must be one of" in err
