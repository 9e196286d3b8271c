"""G3 (per formatter): the whole pipeline on upstream ACP v1 ``schema.unstable.json``
with the archive fragments overlaid, against bare datamodel-code-generator on the same
base file formatting with the same tool.

The subject does everything ``acp-codegen generate --base-v1`` does for v1 (load,
validate the base and the fragments, overlay, feature selection, naming, models,
method table, formatting) except writing files. The baseline is
``datamodel_code_generator.generate`` with its default options, as an SDK repository
calls it today, and its ``formatters`` set to the same tool (black and isort, its
default, or ruff format and ruff check).
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path

from benchmarks import Ratio, compare
from tests.support.reference_data import missing, reference_dir

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = reference_dir() / "upstream"
BASE = UPSTREAM / "v1" / "schema.unstable.json"
FEATURES = frozenset({"unstable_session_archive"})


def run() -> list[Ratio]:
    if not BASE.is_file():
        print(f"G3   skipped: {missing(BASE)}")
        return []
    from acp_codegen.generate.pipeline import generate as acp_generate
    from acp_codegen.style import FORMATTERS, Style
    from datamodel_code_generator import DataModelType, InputFileType, generate

    from benchmarks.bench_generate import bare_formatters

    text = BASE.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        schema_dir = Path(tmp) / "schema"
        shutil.copytree(ROOT / "schema" / "v1", schema_dir / "v1")  # v1 only, like the baseline

        results = []
        for formatter in FORMATTERS:

            def subject(formatter: str = formatter) -> object:
                return acp_generate(schema_dir, FEATURES, ROOT, {1: BASE}, style=Style(formatter))

            def baseline(formatter: str = formatter) -> object:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # its notice about changing default formatters
                    return generate(
                        text,
                        input_file_type=InputFileType.JsonSchema,
                        output_model_type=DataModelType.PydanticV2BaseModel,
                        formatters=bare_formatters(formatter),
                    )

            results.append(
                compare(
                    f"G3 {formatter}",
                    f"upstream v1 schema.unstable.json + overlay vs bare datamodel-codegen, {formatter}",
                    subject,
                    baseline,
                    target=1.3,
                    repeat=3,
                )
            )
        return results
