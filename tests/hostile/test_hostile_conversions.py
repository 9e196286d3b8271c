"""Hostile text in conversion declarations (``schema/conversions.json``).

Free text (every ``why``, ``$comment``) and ``fill`` values reach ``convert.py`` as
literals: generated with every payload at once, the module must compile, import, run
none of it, and give the text back exactly (the invariant's reason, the filled value).
Names (types, fields, conditions) must name something the fragments define: a hostile
name is refused with a pointer into the declarations file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.resources import display_name
from hostile_corpus import PAYLOADS, materialise
from hostile_support import FEATURE, copy_schema, edit, generate_args, names_in, read_doc, run_cli, snapshot
from support import ROOT

pytest.importorskip("acp_codegen.plan.conversions", reason="conversions (issue 3) are not merged")

CONVERSIONS = "conversions.json"
PAYLOAD_NAMES = {"__import__", "lipsum", "system", "touch"}
# Surrogates cannot be in a UTF-8 file at all (the loader refuses them; see test_malformed_input).
TEXTS = [text for _, text in PAYLOADS if "\ud800" not in text and "\udcff" not in text]

PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from hostile_pkg.convert import ConversionError, convert
try:
    convert("SessionCapabilities", {"archive": {}}, source=1, target=2)
    reason = None
except ConversionError as exc:
    reason = exc.reason
filled = convert("SessionCapabilities", {"archive": {}}, source=2, target=1)
json.dump({"reason": reason, "filled": filled}, sys.stdout)
"""


def _conversions(schema: Path) -> Path:
    (schema / CONVERSIONS).write_bytes((ROOT / "schema" / CONVERSIONS).read_bytes())
    return schema / CONVERSIONS


def _fill(doc: dict[str, Any]) -> dict[str, Any]:
    return next(f for f in doc["fields"] if "fill" in f)


def test_free_text_and_fill_values_stay_data(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    text = "\n".join(materialise(t, str(canary)) for t in TEXTS)
    fill_value = {materialise(t, str(canary)): [materialise(t, str(canary))] for t in TEXTS}
    schema = copy_schema(tmp_path, ("v1", "v2"))

    def hostile(doc: dict[str, Any]) -> None:
        doc["$comment"] = text
        for section in ("renamedTypes", "typesOnlyIn", "fields", "invariants"):
            for entry in doc[section]:
                entry["why"] = text
        _fill(doc)["fill"]["value"] = fill_value

    edit(_conversions(schema), hostile)
    out = tmp_path / "hostile_pkg"
    code, _, stderr = run_cli(*generate_args(schema, out, FEATURE))
    assert code == 0, stderr
    source = (out / "convert.py").read_text(encoding="utf-8")
    compile(source, "convert.py", "exec")
    assert not PAYLOAD_NAMES & names_in(source)
    done = subprocess.run(
        [sys.executable, "-I", "-c", PROBE, str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["reason"] == text
    assert seen["filled"]["list"] == fill_value
    assert not canary.exists()


# Where a name is (pointer) and how to put one there. Type names are checked by the
# declarations' own schema, which reports before field names are looked at: two groups.
NAME_GROUPS: dict[str, dict[str, Any]] = {
    "type-names": {
        "/renamedTypes/0": lambda doc, p: doc["renamedTypes"][0].__setitem__("v1", p),
        "/typesOnlyIn/0": lambda doc, p: doc["typesOnlyIn"][0].__setitem__("type", p),
        "/fields/0": lambda doc, p: doc["fields"][0].__setitem__("type", p),
    },
    "field-names": {
        "/fields/0": lambda doc, p: doc["fields"][0].__setitem__("v1", p),
        "/fields/{fill}/fill/when": lambda doc, p: _fill(doc)["fill"].__setitem__("when", p),
        "/invariants/0/then": lambda doc, p: doc["invariants"][0].__setitem__("then", p),
    },
}
NAME_PAYLOADS = dict(PAYLOADS)
NAME_IDS = ["dq-breakout", "newline", "keyword"]


@pytest.mark.parametrize("payload_id", NAME_IDS)
@pytest.mark.parametrize("group", NAME_GROUPS)
def test_hostile_names_in_declarations_are_refused(tmp_path: Path, group: str, payload_id: str) -> None:
    schema = copy_schema(tmp_path, ("v1", "v2"))
    path = _conversions(schema)
    fill_index = next(i for i, f in enumerate(read_doc(path)["fields"]) if "fill" in f)
    payload = materialise(NAME_PAYLOADS[payload_id], "canary")

    def hostile(doc: dict[str, Any]) -> None:
        for place in NAME_GROUPS[group].values():
            place(doc, payload)

    edit(path, hostile)
    out = tmp_path / "out"
    code, _, stderr = run_cli(*generate_args(schema, out, FEATURE))
    assert code == 2 and "Traceback" not in stderr
    for ptr in NAME_GROUPS[group]:
        assert f"{display_name(path, ROOT)}: {ptr.format(fill=fill_index)}" in stderr, ptr
    assert snapshot(out) == {} and not list(tmp_path.rglob("canary"))
