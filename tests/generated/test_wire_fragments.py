"""The wire property (see test_wire.py) over the fragments' models. It imports nothing of
the generator, so ``nox -s lowest_pydantic`` runs it on the oldest pydantic too: the
reference is the fragments' JSON as written. With every declared feature enabled, as for
``generated/``, feature selection prunes nothing, and what else the loader does (notes
added to descriptions, inline union variants named) changes no value's validity; an
inline variant is checked through its union."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from typing import Any

import pytest
from support import ROOT
from test_wire import FEATURE, FRAGMENT_EXAMPLES, _property, _type_names

from generated.v1 import models as v1
from generated.v2 import models as v2


def _fragment_schema(version: int) -> dict[str, Any]:
    folder = ROOT / "schema" / f"v{version}"
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    assert set(meta.get("features", {})) == {FEATURE}  # else selection would prune: this reference would not do
    schema: dict[str, Any] = json.loads((folder / "schema.json").read_text(encoding="utf-8"))
    return schema


@pytest.mark.parametrize("version", [1, 2])
def test_fragment_models_accept_what_the_schema_accepts(version: int) -> None:
    schema = _fragment_schema(version)
    models = v1 if version == 1 else v2
    names = _type_names(models, schema)
    assert len(names) >= 20
    for name in names:
        _property(models, schema, name, FRAGMENT_EXAMPLES)


def test_generated_only_tests_import_nothing_of_the_generator() -> None:
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    [listed] = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["GENERATED_ONLY_TESTS"]
    ]
    modules = [ROOT / path for path in ast.literal_eval(listed)]
    assert ROOT / "tests" / "generated" / "test_wire_fragments.py" in modules
    folders = sorted({str(m.parent) for m in modules} | {str(ROOT / "tests")})
    script = (
        f"import sys; sys.path[:0] = {folders!r}\n"
        + "".join(f"import {m.stem}\n" for m in modules)
        + "print(sorted({m.split('.')[0] for m in sys.modules} & {'acp_codegen', 'datamodel_code_generator', 'black'}))"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"imported by {', '.join(m.name for m in modules)}"
