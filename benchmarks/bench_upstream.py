"""G3: the whole pipeline on upstream ACP v1 ``schema.unstable.json`` with the archive
fragments overlaid, against bare datamodel-code-generator on the same base file.

The subject does everything ``acp-codegen generate --base-v1`` does for v1 (load,
validate the base and the fragments, overlay, feature selection, naming, models,
method table, formatting) except writing files. The baseline is
``datamodel_code_generator.generate`` with its default options (its default
formatters included), as an SDK repository calls it today.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path

from benchmarks import Ratio, compare

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = ROOT.parent / "shared" / "upstream"
BASE = UPSTREAM / "v1" / "schema.unstable.json"
FEATURES = frozenset({"unstable_session_archive"})


def run() -> list[Ratio]:
    if not BASE.is_file():
        print(f"G3   skipped: upstream schemas not present at {UPSTREAM}")
        return []
    from datamodel_code_generator import DataModelType, InputFileType, generate

    from codegen.pipeline import generate as acp_generate

    text = BASE.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        schema_dir = Path(tmp) / "schema"
        shutil.copytree(ROOT / "schema" / "v1", schema_dir / "v1")  # v1 only, like the baseline

        def subject() -> object:
            return acp_generate(schema_dir, FEATURES, ROOT, {1: BASE})

        def baseline() -> object:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # its notice about changing default formatters
                return generate(
                    text,
                    input_file_type=InputFileType.JsonSchema,
                    output_model_type=DataModelType.PydanticV2BaseModel,
                )

        return [
            compare(
                "G3",
                "upstream v1 schema.unstable.json + overlay vs bare datamodel-codegen",
                subject,
                baseline,
                target=1.3,
                repeat=3,
            )
        ]
