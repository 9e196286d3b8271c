"""G1 (per formatter): ``generate`` vs bare datamodel-code-generator on the same
fragments, formatting with the same tool (its own ``formatters``: black and isort, or
ruff format and ruff check); G2: ``check`` on an unchanged tree vs a full ``generate``.

G1 compares the work each side does: both in one process (no black workers, no background
worker: what they gain where a core is free is F1's and F2's to say), timed in CPU time
with the ruff processes each side runs, round by round (``compare(children=True)``). Timed
on the wall clock with workers, G1 depended on a free core, which the baseline never needs:
on this two-core machine it read 1.27x to 1.57x idle and over 2x at a load of 3."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from unittest import mock

from acp_codegen.generate.pipeline import generate, up_to_date
from acp_codegen.render import workers
from acp_codegen.style import FORMATTERS, Style
from acp_codegen.write.tree import write_tree

from benchmarks import SAMPLE_S, Ratio, compare

ROOT = Path(__file__).resolve().parent.parent
FEATURES = frozenset({"unstable_session_archive"})
# Set where one run decides (docs/benchmarks.md: the margin against the measured spread).
G1_TARGET = {"black": 2.4, "ruff": 1.5}


def bare_formatters(formatter: str) -> list[object]:
    """datamodel-code-generator's own formatters closest to ours."""
    from datamodel_code_generator import Formatter  # type: ignore[attr-defined]

    if formatter == "black":
        return [Formatter.BLACK, Formatter.ISORT]  # its default
    return [Formatter.RUFF_FORMAT, Formatter.RUFF_CHECK]


def _bare_datamodel_codegen(formatter: str) -> None:
    from datamodel_code_generator import DataModelType, InputFileType  # type: ignore[attr-defined]
    from datamodel_code_generator import generate as dmcg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for version in ("v1", "v2"):
            dmcg(
                ROOT / "schema" / version / "schema.json",
                input_file_type=InputFileType.JsonSchema,
                output_model_type=DataModelType.PydanticV2BaseModel,
                formatters=bare_formatters(formatter),
            )


def run() -> list[Ratio]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "generated"
        for formatter in FORMATTERS:
            style = Style(formatter)

            def full_generate(style: Style = style) -> None:
                write_tree(out, generate(ROOT / "schema", FEATURES, ROOT, style=style).files)

            with mock.patch.object(workers, "_cores", lambda: 1):  # one process, as the baseline
                results.append(
                    compare(
                        f"G1 {formatter}",
                        f"CPU of generate (both fragments, written, {formatter}, one process) vs bare"
                        " datamodel-code-generator, same formatter",
                        full_generate,
                        lambda formatter=formatter: _bare_datamodel_codegen(formatter),
                        target=G1_TARGET[formatter],
                        repeat=15,
                        sample_s=SAMPLE_S,
                        children=True,
                    )
                )

        def default_generate() -> None:
            write_tree(out, generate(ROOT / "schema", FEATURES, ROOT).files)

        def check_unchanged() -> None:
            assert up_to_date(ROOT / "schema", out, FEATURES, ROOT)

        default_generate()
        results.append(
            compare(
                "G2", "check on an unchanged tree vs full generate", check_unchanged, default_generate, 0.2, repeat=5
            )
        )
    return results
