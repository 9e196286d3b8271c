"""The generated packages this tool ships, found for the commands that speak ACP with
them: ``acp_codegen.reference`` (the committed ``generated/``), whose models the
conformance kit validates agents' messages with and the polyfill the RFD's requests; and
``acp_codegen.upstream`` (``generated_upstream/``, over upstream's newest release), whose
version bridge the polyfill runs.

The one place that knows where they live: the copy inside the installed tool when there
is one, else the package of the checkout this ``codegen`` was imported from.
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


def _package(installed: str = "acp_codegen.reference", checkout_name: str = "generated") -> str:
    if importlib.util.find_spec(installed) is not None:
        return installed
    checkout = str(Path(__file__).resolve().parents[1])
    if importlib.util.find_spec(checkout_name) is None and (Path(checkout) / checkout_name).is_dir():
        sys.path.append(checkout)  # an editable install maps only codegen/
    if importlib.util.find_spec(checkout_name) is None:
        raise ModelsMissing(f"the generated models are not installed (no {installed}, no {checkout_name}/)")
    return checkout_name


def reference_module(version: int | None, name: str) -> ModuleType:
    """A module of the shipped generated package: ``name`` of protocol ``version``
    (``models``, ``methods``, ``dispatch``), or a top-level one (``_runtime``) for None."""
    package = _package()
    where = package if version is None else f"{package}.v{version}"
    try:
        return importlib.import_module(f"{where}.{name}")
    except ModuleNotFoundError:
        raise ModelsMissing(f"{package} has no protocol v{version}") from None


def upstream_module(name: str) -> ModuleType:
    """A top-level module of the package generated over upstream's newest release
    (``bridge``, ``convert``, ...)."""
    return importlib.import_module(f"{_package('acp_codegen.upstream', 'generated_upstream')}.{name}")
