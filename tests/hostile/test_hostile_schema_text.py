"""Hostile schema text in every position that reaches generated code: each case is either
refused (exit 2, ``file: /pointer: message`` naming the case, no traceback, previous output
untouched) or generated into code that compiles, imports in a fresh interpreter, holds the
text only as data, and runs none of it (no canary file, no ``__import__`` in the syntax tree).

One position is one schema holding every payload at once (a type, method or feature of its
own per payload), generated with the CLI; refused cases are dropped and the rest regenerated
until generation succeeds, so each case's outcome is known from a handful of runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.errors import Problem, SchemaError
from acp_codegen.generate.pipeline import load_protocols
from acp_codegen.protocol.ir import Protocol
from acp_codegen.resources import display_name
from hostile_corpus import CANARY, EXPECTED_REFUSED, FILE_NAME_POSITION, POSITIONS, Case, cases, materialise
from hostile_support import (
    FEATURE,
    copy_schema,
    expected_files,
    fake_previous_output,
    generate_args,
    names_in,
    probe,
    read_doc,
    run_cli,
    snapshot,
    write_doc,
)
from support import ROOT

CASES = cases()
PACKAGE = "hostile_pkg"
# Names a payload would have to turn into for its code to run.
PAYLOAD_NAMES = {"__import__", "lipsum", "system", "touch"}


@dataclass
class Outcome:
    canary: Path
    refused: dict[int, list[Problem]] = field(default_factory=dict)  # case index -> problems naming it
    generated: dict[str, str] = field(default_factory=dict)  # rel path -> source
    report: dict[str, Any] = field(default_factory=dict)
    attempts: int = 0
    protocol: Protocol | None = None  # the IR of what was generated
    out: Path | None = None  # the generated package

    def ran(self) -> bool:
        """Whether any payload created its canary, wherever it aimed."""
        return any(self.canary.parent.rglob(self.canary.name))


def _build(alive: set[int], work: Path, canary: Path) -> tuple[dict[int, list[tuple[str, str]]], list[str]]:
    """Write a schema holding the live cases; return each case's (file, pointer) locations
    (a refusal of the case must name one) and the features to enable."""
    schema = copy_schema(work)
    fragment, meta_path = schema / "v1" / "schema.json", schema / "v1" / "meta.json"
    doc, meta = read_doc(fragment), read_doc(meta_path)
    names = {"schema": display_name(fragment, ROOT), "meta": display_name(meta_path, ROOT)}
    locations: dict[int, list[tuple[str, str]]] = {}
    features = [FEATURE]
    for i in sorted(alive):
        case = CASES[i]
        if case.position == FILE_NAME_POSITION:
            # A file name cannot hold "/": these payloads aim at a relative canary (the
            # probe's working directory is inside the tree that ran() searches).
            extra = schema / "v1" / f"{materialise(case.payload, canary.name)}.json"
            write_doc(
                extra, {"$defs": {f"Hostile{i}": {"type": "object", "properties": {"value": {"type": "string"}}}}}
            )
            locations[i] = [(display_name(extra, ROOT), "")]
            continue
        payload = materialise(case.payload, str(canary))
        placed = POSITIONS[case.position](doc, meta, i, payload)
        locations[i] = [(names[kind], ptr) for kind, ptrs in placed.items() for ptr in ptrs]
        if case.position == "feature-name":
            features.append(payload)
        elif case.position == "feature-description":
            features.append(f"hostile_{i}")
    write_doc(fragment, doc)
    write_doc(meta_path, meta)
    return locations, features


def _owns(locations: list[tuple[str, str]], problem: Problem) -> bool:
    return any(
        problem.file == file and (not ptr or problem.pointer == ptr or problem.pointer.startswith(ptr + "/"))
        for file, ptr in locations
    )


def run_corpus(base: Path) -> Outcome:
    """Generate one schema holding every case; drop the refused cases and retry until it succeeds."""
    outcome = Outcome(base / "canary")
    alive = set(range(len(CASES)))
    for attempt in range(1, 11):
        outcome.attempts = attempt
        work = base / f"attempt{attempt}"
        locations, features = _build(alive, work, outcome.canary)
        out = work / PACKAGE
        fake_previous_output(out)
        before = snapshot(out)
        code, _, stderr = run_cli(*generate_args(work / "schema", out, *features))
        assert "Traceback" not in stderr
        if code == 0:
            files = sorted(rel for rel in snapshot(out) if rel.endswith(".py"))
            outcome.generated = {rel: (out / rel).read_text(encoding="utf-8") for rel in files}
            outcome.report = probe(work, PACKAGE)
            outcome.out = out
            outcome.protocol = load_protocols(work / "schema", frozenset(features), ROOT)[0][0]
            return outcome
        assert code == 2, stderr
        assert snapshot(out) == before, "a refused generation changed the previous output"
        with pytest.raises(SchemaError) as refusal:
            load_protocols(work / "schema", frozenset(features), ROOT)
        problems = refusal.value.problems
        # The CLI prints exactly the problems, one per line, in the documented form.
        assert stderr.splitlines() == [str(p) for p in problems]
        for problem in problems:
            owners = [i for i in alive if _owns(locations[i], problem)]
            assert owners, f"a refusal that names no hostile case: {problem}"
            for i in owners:
                outcome.refused.setdefault(i, []).append(problem)
        alive -= set(outcome.refused)
    raise AssertionError("still refused after 10 attempts")


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    return run_corpus(tmp_path_factory.mktemp("hostile"))


def _types(report: dict[str, Any]) -> dict[str, Any]:
    return dict(report["versions"]["1"]["types"])


def _field(report: dict[str, Any], i: int, name: str = "value") -> dict[str, Any]:
    return dict(_types(report)[f"Hostile{i}"]["fields"][name])


def _squash(text: str | None) -> str:
    return " ".join((text or "").split())


def check_kept_as_data(position: str, i: int, payload: str, report: dict[str, Any]) -> None:  # noqa: C901 - one independent check per schema position
    """The payload is in the generated package as the value the schema gave, not altered code."""
    types = _types(report)
    methods = report["versions"]["1"]["methods"]
    if position == "type-description":
        assert _squash(types[f"Hostile{i}"]["doc"]) == _squash(payload)
    elif position == "property-description":
        assert _squash(_field(report, i)["description"]) == _squash(payload)
    elif position == "property-name":
        fields = types[f"Hostile{i}"]["fields"].values()
        assert [f["alias"] for f in fields if f["alias"] is not None] in ([payload], [])
    elif position == "defs-key":
        assert payload in types
    elif position in ("enum-value", "enum-variant-const"):
        hostile = types[f"Hostile{i}"]
        assert payload in (hostile.get("values") or hostile.get("literals") or [])
    elif position == "const":
        assert _field(report, i)["literals"] == [payload]
    elif position == "default":
        assert _field(report, i)["default"] == payload
    elif position == "default-object-key":
        assert _field(report, i)["default"] == {payload: payload}
    elif position == "examples":
        assert _field(report, i)["examples"] in ([payload], None)
    elif position == "pattern":
        assert _field(report, i)["pattern"] == (payload or None)  # an empty pattern is no constraint
    elif position == "discriminator-const":
        kinds = [t["fields"]["kind"]["literals"] for t in types.values() if "kind" in t.get("fields", {})]
        assert [payload] in kinds
    elif position == "gated-param-name":
        fields = types[f"Hostile{i}Request"]["fields"].values()
        assert payload in [f["alias"] for f in fields] or payload in types[f"Hostile{i}Request"]["fields"]
        assert [payload] in report["versions"]["1"]["routes"][f"hostile/m{i}"]["gated"]
    elif position == "param-enum-value":
        assert payload in types[f"Hostile{i}Request"]["fields"]["choice"]["literals"]
        assert [["plain", payload]] == report["versions"]["1"]["routes"][f"hostile/m{i}"]["enums"]
    elif position == "x-method":
        assert payload in [m["name"] for m in methods]
    elif position == "method-key":
        assert payload in [m["key"] for m in methods]
    elif position == "feature-name":
        assert payload in report["features"]
    else:
        assert f"Hostile{i}" in types


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_text_is_refused_or_kept_as_data(case: Case, outcome: Outcome) -> None:
    i = CASES.index(case)
    assert not outcome.ran(), "a payload ran"
    if i in outcome.refused:
        for problem in outcome.refused[i]:
            assert problem.message and "\n" not in str(problem) and "\r" not in str(problem)
        return
    payload = materialise(case.payload, str(outcome.canary))
    check_kept_as_data(case.position, i, payload, outcome.report)


def test_generated_package_holds_hostile_text_only_as_data(outcome: Outcome) -> None:
    assert set(outcome.generated) == expected_files((1,))
    for rel, source in outcome.generated.items():
        compile(source, rel, "exec")
        assert not PAYLOAD_NAMES & names_in(source), f"{rel}: a payload became code"
        assert CANARY not in source
    assert not outcome.ran()


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "--isolated", "--select", "E,F,W,I,B,UP", "--ignore", "E501", "--target-version", "py310"],
        ["mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null"],
    ],
    ids=["ruff", "mypy-strict"],
)
def test_generated_hostile_package_passes_lint(outcome: Outcome, command: list[str]) -> None:
    """Hostile text yields code as clean as the committed package's (E501: long literals)."""
    assert outcome.out is not None
    tool = Path(sys.executable).with_name(command[0])
    if not tool.exists():
        pytest.skip(f"{command[0]} is not installed next to {sys.executable}")
    done = subprocess.run(
        [str(tool), *command[1:], outcome.out.name], cwd=outcome.out.parent, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_ir_names_are_the_generated_names(outcome: Outcome) -> None:
    """Conversions and dispatch address models by the IR's names: hostile input must not
    make the model generator rename a class or a field behind the IR's back."""
    assert outcome.protocol is not None
    types = _types(outcome.report)
    for name, typedef in outcome.protocol.types.items():
        assert name in types, f"IR type {name!r} is not in the generated models"
        if typedef.kind == "object":
            assert {f.py_name for f in typedef.fields} <= set(types[name]["fields"]), name


@pytest.mark.parametrize("position", [*POSITIONS, FILE_NAME_POSITION])
def test_each_position_refuses_exactly_the_documented_payloads(position: str, outcome: Outcome) -> None:
    refused = {c.payload_id for i, c in enumerate(CASES) if c.position == position and i in outcome.refused}
    assert refused == EXPECTED_REFUSED[position]
    # and every position generates some payloads, so the corpus proves more than refusals
    assert any(c.position == position and i not in outcome.refused for i, c in enumerate(CASES))


def test_corpus_reaches_every_position() -> None:
    assert len({c.position for c in CASES}) == len(POSITIONS) + 1
    assert len({c.payload_id for c in CASES}) == len({c.payload_id for c in CASES if c.position == "const"})
    json.dumps([c.payload for c in CASES])  # every payload is representable in a schema
