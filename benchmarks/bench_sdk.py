"""S1, S2: the models generated over upstream v1 against the official Python SDK's.

Both sides read the corpus (``corpus_v1.txt``) with their own models of the same
upstream schema: ours are generated from upstream v1 ``schema.json`` (2026-08) with the
archive fragments overlaid; the SDK's are ``acp.schema`` of ``agent-client-protocol``
(which ``nox -s bench`` installs, pinned, into the bench environment only).

* S1, cold start: in a fresh interpreter with pydantic already imported, the import of
  the models module plus the first ``model_validate`` of every corpus message. Each round
  is one new process per side; the process times itself (interpreter start-up is not
  counted). The SDK's package ``__init__`` (its connection and transport code) is skipped,
  so only ``acp.schema`` and what it imports count.
* S2, steady state: ``model_validate`` + ``model_dump(mode="json", by_alias=True,
  exclude_unset=True)`` of every corpus message (decoded once beforehand), in this process,
  like for like in both ``unknown-properties`` modes:
  - S2 keep: our default models, which keep unknown properties (DESIGN.md: they survive a
    parse -> emit round trip), against the SDK's models made to keep them too
    (``extra="allow"`` added to a copy of its base model);
  - S2 drop: our models generated with ``unknown-properties = "drop"`` against the SDK's
    models as they are (pydantic's default, ``extra="ignore"``).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from acp_codegen.config.settings import ModelOptions, Settings

from benchmarks import SAMPLE_S, Ratio, compare
from benchmarks.corpus import UPSTREAM_V1, load, write_upstream_v1
from tests.support.reference_data import missing

SDK = "agent-client-protocol"
# Our models parse in 0.72x of the SDK's time and emit in 1.00x; the rest is pydantic-core on
# both sides, so S2 reads 0.83x to 0.86x run to run. 0.90x decides in one run (issue 58):
# a margin more than twice that spread. Beating 0.85x stays a goal for a faster design.
S2_TARGET = 0.90
PACKAGE = "acp_bench_models"
ROUNDS = 7
# The SDK's base model config (agent-client-protocol 0.12.1); S2 keep adds extra="allow" to it.
_SDK_CONFIG = "model_config = ConfigDict(populate_by_name=True, use_attribute_docstrings=True)"

# Run in a fresh interpreter: argv = module, sys.path entry ("" for none), corpus file.
_COLD = """
import importlib, importlib.util, json, sys, time, types
from pydantic import AnyUrl, BaseModel, ConfigDict, Field, RootModel, TypeAdapter, ValidationError, field_validator
module, path, corpus = sys.argv[1:4]
if path:
    sys.path.insert(0, path)
top = module.split(".")[0]
if top == "acp":  # the SDK's models without its package __init__ (connections, transports)
    package = types.ModuleType(top)
    package.__path__ = list(importlib.util.find_spec(top).submodule_search_locations)
    sys.modules[top] = package
messages = [(name, json.loads(text)) for name, text in json.load(open(corpus, encoding="utf-8"))]
start = time.perf_counter()
models = importlib.import_module(module)
for name, data in messages:
    getattr(models, name).model_validate(data)
print(time.perf_counter() - start)
"""


def _cold(module: str, path: str, corpus: Path) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _COLD, module, path, str(corpus)], capture_output=True, text=True, check=True
    )
    return float(done.stdout)


def _cold_start(ours: str, corpus: Path, version: str) -> Ratio:
    """Interleaved rounds of one process per side (after one warm-up each, which writes bytecode)."""
    subject = lambda: _cold(f"{PACKAGE}.v1.models", ours, corpus)  # noqa: E731
    baseline = lambda: _cold("acp.schema", "", corpus)  # noqa: E731
    subject()
    baseline()
    s_rounds, b_rounds = [], []
    for _ in range(ROUNDS):
        s_rounds.append(subject())
        b_rounds.append(baseline())
    return Ratio(
        "S1",
        f"cold start: import upstream v1 models + first parse of {len(load())} corpus messages"
        f" vs acp.schema of {SDK} {version}",
        statistics.median(s_rounds),
        statistics.median(b_rounds),
        target=0.5,
    )


def _steady(models: Any, messages: list[tuple[str, Any]]) -> Any:
    pairs = [(getattr(models, name), data) for name, data in messages]

    def run() -> None:
        for cls, data in pairs:
            cls.model_validate(data).model_dump(mode="json", by_alias=True, exclude_unset=True)

    return run


def _sdk_keeping_unknown(tmp: Path) -> tuple[Any, str]:
    """A second copy of ``acp.schema`` whose base model keeps unknown properties, or the
    reason there is none (the pinned SDK's base model is not as expected)."""
    spec = importlib.util.find_spec("acp.schema")
    assert spec is not None and spec.origin is not None
    source = Path(spec.origin).read_text(encoding="utf-8")
    if source.count(_SDK_CONFIG) != 1:
        return None, f"the base model config of acp.schema is not {_SDK_CONFIG!r}"
    name = "acp_schema_keeping_unknown"
    path = tmp / f"{name}.py"
    path.write_text(source.replace(_SDK_CONFIG, _SDK_CONFIG[:-1] + ', extra="allow")'), encoding="utf-8")
    copy_spec = importlib.util.spec_from_file_location(name, path)
    assert copy_spec is not None and copy_spec.loader is not None
    module = importlib.util.module_from_spec(copy_spec)
    sys.modules[name] = module  # pydantic resolves the annotations through it
    copy_spec.loader.exec_module(module)
    probe = {"sessionId": "sess_1", "notInTheSchema": 1}
    if module.CancelNotification.model_validate(probe).model_dump(by_alias=True, exclude_unset=True) != probe:
        return None, "the copy still drops unknown properties"
    return module, ""


def run() -> list[Ratio]:
    if not UPSTREAM_V1.is_file():
        print(f"S1   skipped: {missing(UPSTREAM_V1)}")
        print("S2   skipped: same")
        return []
    if importlib.util.find_spec("acp") is None:
        reason = f"{SDK} is not installed here (`nox -s bench` installs it into its own environment)"
        print(f"S1   skipped: {reason}")
        print(f"S2   skipped: {reason}")
        return []
    from importlib.metadata import version

    sdk_version = version(SDK)
    messages = load()
    with tempfile.TemporaryDirectory() as tmp:
        out = str(write_upstream_v1(Path(tmp), PACKAGE))
        dropping_out = str(
            write_upstream_v1(
                Path(tmp) / "drop",
                f"{PACKAGE}_drop",
                settings=Settings(options=ModelOptions(unknown_properties="drop")),
            )
        )
        corpus = Path(tmp) / "corpus.json"
        corpus.write_text(json.dumps(messages), encoding="utf-8")
        results = [_cold_start(out, corpus, sdk_version)]

        ours = _imported(out, PACKAGE)
        dropping = _imported(dropping_out, f"{PACKAGE}_drop")
        sdk = importlib.import_module("acp.schema")
        decoded = [(name, json.loads(text)) for name, text in messages]
        steady = f"steady state: model_validate + model_dump(mode='json') of {len(messages)} corpus messages"
        keeping, reason = _sdk_keeping_unknown(Path(tmp))
        if keeping is None:
            print(f"S2 keep  skipped: {reason}")
        else:
            results.append(
                compare(
                    "S2 keep",
                    f"{steady}, unknown properties kept, vs acp.schema of {SDK} {sdk_version} keeping them"
                    " (extra='allow')",
                    _steady(ours, decoded),
                    _steady(keeping, decoded),
                    target=S2_TARGET,
                    repeat=15,
                    sample_s=SAMPLE_S,
                )
            )
        results.append(
            compare(
                "S2 drop",
                f"{steady}, unknown-properties = 'drop', vs acp.schema of {SDK} {sdk_version} as it is",
                _steady(dropping, decoded),
                _steady(sdk, decoded),
                target=S2_TARGET,
                repeat=15,
                sample_s=SAMPLE_S,
            )
        )
    return results


def _imported(path: str, package: str) -> Any:
    """``package.v1.models`` from ``path`` (it stays imported: pydantic resolves the
    models' annotations through the module when they are first used)."""
    sys.path.insert(0, path)
    try:
        return importlib.import_module(f"{package}.v1.models")
    finally:
        sys.path.remove(path)
