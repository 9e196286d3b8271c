"""G1: ``generate`` vs bare datamodel-code-generator on the same fragments;
G2: ``check`` on an unchanged tree vs a full ``generate``."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

from benchmarks import Ratio, compare
from codegen.pipeline import generate, up_to_date
from codegen.write import write_tree

ROOT = Path(__file__).resolve().parent.parent
FEATURES = frozenset({"unstable_session_archive"})


def _bare_datamodel_codegen() -> None:
    from datamodel_code_generator import DataModelType, InputFileType  # type: ignore[attr-defined]
    from datamodel_code_generator import generate as dmcg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for version in ("v1", "v2"):
            dmcg(
                ROOT / "schema" / version / "schema.json",
                input_file_type=InputFileType.JsonSchema,
                output_model_type=DataModelType.PydanticV2BaseModel,
            )


def run() -> list[Ratio]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "generated"

        def full_generate() -> None:
            write_tree(out, generate(ROOT / "schema", FEATURES, ROOT).files)

        def check_unchanged() -> None:
            assert up_to_date(ROOT / "schema", out, FEATURES, ROOT)

        full_generate()
        g1 = compare(
            "G1", "generate (both fragments, written) vs bare datamodel-code-generator API", full_generate,
            _bare_datamodel_codegen, target=1.5, repeat=5,
        )  # fmt: skip
        g2 = compare("G2", "check on an unchanged tree vs full generate", check_unchanged, full_generate, 0.2, repeat=5)
    return [g1, g2]
