"""The generated package this tool ships (``acp_codegen.reference``, the committed
``generated/``), found for the commands that speak ACP with it: the conformance kit
validates agents' messages with its models, the polyfill validates the RFD's requests.

The one place that knows where it lives: the copy inside the installed tool when there is
one, else the ``generated/`` package of the checkout this ``codegen`` was imported from.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from .errors import CodegenError


class ModelsMissing(CodegenError):
    pass


def _package() -> str:
    if importlib.util.find_spec("acp_codegen.reference") is not None:
        return "acp_codegen.reference"
    checkout = str(Path(__file__).resolve().parents[1])
    if importlib.util.find_spec("generated") is None and (Path(checkout) / "generated").is_dir():
        sys.path.append(checkout)  # an editable install maps only codegen/
    if importlib.util.find_spec("generated") is None:
        raise ModelsMissing("the generated models are not installed (no acp_codegen.reference, no generated/)")
    return "generated"


def reference_module(version: int | None, name: str) -> ModuleType:
    """A module of the shipped generated package: ``name`` of protocol ``version``
    (``models``, ``methods``, ``dispatch``), or a top-level one (``_runtime``) for None."""
    package = _package()
    where = package if version is None else f"{package}.v{version}"
    try:
        return importlib.import_module(f"{where}.{name}")
    except ModuleNotFoundError:
        raise ModelsMissing(f"{package} has no protocol v{version}") from None
