"""Every upstream release tag that carries a schema (``upstream/history/`` of the reference data: 92,
v0.0.13 to v1.7.0, ``releases.tsv`` in date order), given as a user gives it:
``generate --no-conversions --base-v1 <tag>/schema.json``. Without the archive feature
each generates as the release it is and its models import on the newest and the oldest
pydantic in range; with the feature, a release that lacks what the RFD extends is refused
in one message naming the types, the others load with it; ``acp-codegen diff`` runs
between each two adjacent releases.

Cheap but faithful: in-process pipeline calls; a release whose files are byte for byte
another's is rendered once (generation is deterministic); ruff's layout (formatting is
tested elsewhere); the v1 fragments alone (the v2 fragments have no base here, so their
output is the same for every release). Skipped without the reference data. The sweeps over
every tag are the ecosystem session's (``nox -s ecosystem``); README's command keeps the
CLI's refusal of one old release with the feature.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.cli import main
from acp_codegen.diff import command
from acp_codegen.diff.inputs import Side
from acp_codegen.errors import SchemaError
from acp_codegen.generate.pipeline import Generation, generate, load_protocols
from acp_codegen.style import Style
from acp_codegen.write import strip_header
from acp_codegen.write.tree import write_tree
from support import LOWEST_PYDANTIC, ROOT, SHARED_UPSTREAM, copy_schema
from support.reference_data import require

HISTORY = SHARED_UPSTREAM / "history"
FEATURE = "unstable_session_archive"
# The types the archive RFD extends: a release without one of them predates it.
EXTENDED = ("ListSessionsRequest", "SessionCapabilities", "SessionInfo", "SessionInfoUpdate")
MAX_SUMMARY = 65_536  # a pull-request comment's limit, the diff's default --max-chars


@dataclass(frozen=True)
class Release:
    tag: str
    schema: Path
    meta: Path | None  # v0.0.13 has none

    @property
    def key(self) -> str:
        """The files' content: releases that share it share one render."""
        files = (self.schema, self.meta) if self.meta else (self.schema,)
        return hashlib.sha256(b"\0".join(p.read_bytes() for p in files)).hexdigest()

    def defs(self) -> dict[str, Any]:
        return dict(json.loads(self.schema.read_text(encoding="utf-8"))["$defs"])

    def listed_methods(self) -> set[tuple[str, str]]:
        """(method, side) of every method its meta file lists."""
        meta = json.loads(self.meta.read_text(encoding="utf-8")) if self.meta else {}
        return {(m, k.removesuffix("Methods")) for k, v in meta.items() if k.endswith("Methods") for m in v.values()}

    def lacks(self) -> list[str]:
        return [name for name in EXTENDED if name not in self.defs()]


@pytest.fixture(scope="module")
def releases() -> list[Release]:
    rows = [line.split("\t") for line in require(HISTORY / "releases.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    out = [Release(tag, HISTORY / tag / "schema.json", HISTORY / tag / "meta.json") for tag, *_ in rows]
    return [r if r.meta and r.meta.is_file() else Release(r.tag, r.schema, None) for r in out]


@pytest.fixture(scope="module")
def fragments(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_schema(tmp_path_factory.mktemp("fragments") / "schema", versions=("v1",))


@pytest.fixture(scope="module")
def rendered(
    releases: list[Release], fragments: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, tuple[str, Generation]]]:
    """Each release generated without the feature and written as a package under one
    folder: tag -> (package name, generation)."""
    out = tmp_path_factory.mktemp("releases")
    by_key: dict[str, tuple[str, Generation]] = {}
    packages = {}
    for release in releases:
        if release.key not in by_key:
            result = generate(
                fragments,
                frozenset(),
                fragments.parent,
                {1: release.schema},
                conversions=False,
                style=Style("ruff", 88),
            )
            name = "acp_" + re.sub(r"\W", "_", release.tag)
            write_tree(out / name, result.files)
            by_key[release.key] = (name, result)
        packages[release.tag] = by_key[release.key]
    return out, packages


def _titles(defs: dict[str, Any]) -> set[str]:
    """Titles of inline union variants: a release's names for results it gives no type."""
    return {v["title"] for d in defs.values() for v in d.get("anyOf", []) if "$ref" not in v and "title" in v}


def _class_names(source: str) -> set[str]:
    return set(re.findall(r"^class (\w+)", source, re.M) + re.findall(r"^(\w+)(?:: TypeAlias)? = ", source, re.M))


def _differences(release: Release, result: Generation, context: set[str]) -> list[str]:
    """How a release's generation (without the feature) is not the release itself."""
    [protocol] = result.protocols
    defs, types = release.defs(), set(protocol.types)
    out = []
    generated = {(m.name, m.side) for m in protocol.methods}
    if generated != release.listed_methods():
        out.append(f"methods listed or generated only: {sorted(generated ^ release.listed_methods())}")
    if not set(defs) <= types:
        out.append(f"lost {sorted(set(defs) - types)}")
    # Nothing of the fragments is added to a release too old for the RFD; over a newer one,
    # fragment context that nothing uses is added as before (SessionDeleteCapabilities).
    invented = types - set(protocol.derived_names) - set(defs) - _titles(defs)
    if invented - (set() if release.lacks() else context):
        out.append(f"invented {sorted(invented)}")
    if unknown := _class_names(result.files["v1/models.py"]) - types - {"__all__"}:
        out.append(f"numbered or unknown classes {sorted(unknown)}")
    if {"ArchiveSessionRequest", "SessionArchiveFilter"} & types:
        out.append("archive types without the feature")
    return out


@pytest.mark.slow
@pytest.mark.ecosystem
def test_every_release_generates_without_the_feature_as_the_release_it_is(releases, rendered):
    _, packages = rendered
    context = set(json.loads((ROOT / "schema" / "v1" / "schema.json").read_text(encoding="utf-8"))["$defs"])
    wrong = {r.tag: found for r in releases if (found := _differences(r, packages[r.tag][1], context))}
    assert len(releases) == 92 and wrong == {}


@pytest.mark.slow
@pytest.mark.ecosystem
def test_methods_named_by_the_old_convention_are_generated_with_a_note(rendered):
    _, packages = rendered
    notes = packages["v0.0.14"][1].notes()
    assert any(
        n.startswith("note: ")
        and n.endswith(
            "/history/v0.0.14/meta.json: /agentMethods/authenticate: no type is marked for it; by name: request"
            " AuthenticateRequest, response AuthenticateResponse (null, as the variant of AgentResponse of that"
            " title says)"
        )
        for n in notes
    ), notes
    assert sum("no type is marked for it" in n for n in notes) == 10  # all its methods
    [protocol] = packages["v0.0.14"][1].protocols
    assert protocol.method("session/cancelled", "agent").params == "CancelledNotification"
    assert protocol.method("session/update", "client").params == "SessionNotification"
    [set_mode] = [n for n in packages["v0.2.1"][1].notes() if "session_set_mode" in n]
    assert set_mode.endswith("by name: request SetSessionModeRequest, response SetSessionModeResponse")


@pytest.mark.slow
@pytest.mark.ecosystem
def test_untitled_variants_take_the_names_newer_titles_give(rendered):
    """The official Python SDK 0.7.0 was generated from v0.10.3; v0.10.7 titles the variants."""
    _, packages = rendered
    names = {"AgentResponseResult", "AgentResponseError", "ClientResponseResult", "ClientResponseError"}
    for tag, rule in (("v0.10.3", "required"), ("v0.10.6", "required"), ("v0.10.7", "title")):
        derived = packages[tag][1].protocols[0].derived_names
        assert {n: derived[n].rule for n in names} == dict.fromkeys(names, rule), tag


_IMPORT = """
import importlib, sys
import pydantic
sys.path.insert(0, sys.argv[1])
for name in sys.argv[2:]:
    importlib.import_module(name)
print(pydantic.VERSION, len(sys.argv) - 2)
"""


def _imports(python: Path | str, rendered: tuple[Path, dict[str, tuple[str, Generation]]]) -> list[str]:
    """Every release's models module imported in one interpreter, each text once."""
    out, packages = rendered
    models = {strip_header(result.files["v1/models.py"]): f"{name}.v1.models" for name, result in packages.values()}
    assert len(models) > 50  # most releases change the models
    done = subprocess.run(
        [str(python), "-c", _IMPORT, str(out), *sorted(models.values())], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    version, count = done.stdout.split()
    assert int(count) == len(models)
    return version


@pytest.mark.slow
@pytest.mark.ecosystem
def test_every_release_imports_on_the_newest_pydantic(rendered):
    import pydantic

    assert _imports(sys.executable, rendered) == pydantic.VERSION


@pytest.mark.slow
@pytest.mark.ecosystem
def test_every_release_imports_on_the_oldest_pydantic(rendered, lowest_pydantic_python):
    assert _imports(lowest_pydantic_python, rendered) == LOWEST_PYDANTIC


@pytest.mark.slow
@pytest.mark.ecosystem
def test_with_the_feature_a_release_without_what_it_extends_is_refused_naming_it(releases, fragments):
    refused, loaded = [], []
    for release in {r.key: r for r in releases}.values():
        try:
            [protocol], _ = load_protocols(fragments, frozenset({FEATURE}), fragments.parent, {1: release.schema})
        except SchemaError as error:
            [problem] = error.problems
            assert problem.file.endswith(f"history/{release.tag}/schema.json") and problem.pointer == "/$defs"
            assert problem.message.startswith(f"has no {', '.join(release.lacks())}, which feature {FEATURE} extends")
            assert "the feature needs an ACP release that has them" in problem.message
            refused.append(release.tag)
        else:
            assert not release.lacks(), release.tag
            assert {"session/archive", "session/unarchive"} <= {m.name for m in protocol.methods}
            assert protocol.types["SessionInfo"].field("archived") is not None
            loaded.append(release.tag)
    every = [r.tag for r in releases]
    assert refused and loaded and every.index(max(refused, key=every.index)) < every.index(min(loaded, key=every.index))


def test_the_cli_refuses_an_old_release_with_the_feature_and_generates_it_without(
    releases, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(ROOT)  # this repository's pyproject.toml enables the feature
    base = str(HISTORY / "v0.3.0" / "schema.json")
    args = ["generate", "--no-conversions", "--formatter", "ruff", "--base-v1", base, "--out", str(tmp_path / "out")]
    assert main(args) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.endswith(
        "history/v0.3.0/schema.json: /$defs: has no ListSessionsRequest, SessionCapabilities, SessionInfo,"
        " SessionInfoUpdate, which feature unstable_session_archive extends (schema/v1/schema.json):"
        " the feature needs an ACP release that has them; without the feature, this release's own protocol generates"
    )
    assert main([*args, "--no-default-features"]) == 0
    assert (tmp_path / "out" / "v1" / "models.py").is_file()


@pytest.mark.slow
@pytest.mark.ecosystem
def test_diff_runs_between_each_two_adjacent_releases(releases, capsys, monkeypatch):
    # Each release is the new side of one pair and the old side of the next: loaded once
    # (a load is a function of the input as named).
    loaded: dict[tuple[str, frozenset[str] | None], command.Loaded] = {}
    load_side = command.load_side

    def load_once(side: Side, features: frozenset[str] | None = None) -> command.Loaded:
        if (side.label, features) not in loaded:
            loaded[(side.label, features)] = load_side(side, features)
        return loaded[(side.label, features)]

    monkeypatch.setattr(command, "load_side", load_once)
    sizes = {}
    for old, new in itertools.pairwise(releases):
        code = main(["diff", str(old.schema), str(new.schema), "--no-generated"])
        out, err = capsys.readouterr()
        assert code in (0, 1) and not err, (old.tag, new.tag, err[-2000:])
        sizes[f"{old.tag} -> {new.tag}"] = len(out)
    assert len(sizes) == 91 and max(sizes.values()) <= MAX_SUMMARY
    assert sizes["v0.0.13 -> v0.0.14"] > 1000  # v0.0.13 has no meta file: compared as v0.0.14's version
