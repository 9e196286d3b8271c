"""The benchmarks (``nox -s bench``) still reach what they measure after code moves: every
module imports, and the worker settings the formatting bench replaces exist where the
pipeline reads them (a moved attribute made ``nox -s bench`` stop with a traceback)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from acp_codegen.render import formatting, workers

import benchmarks
from benchmarks import bench_formatting


@pytest.mark.parametrize(
    "name", sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name != "__main__")
)
def test_every_benchmark_module_imports_and_has_its_run(name: str) -> None:
    module = importlib.import_module(f"benchmarks.{name}")
    if name.startswith("bench_"):
        assert callable(module.run)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_the_formatting_bench_sets_the_workers_the_pipeline_uses(method: str) -> None:
    before = (formatting.BLACK_PARALLEL, workers._start_method)
    with bench_formatting._workers(method, True):
        assert (formatting.BLACK_PARALLEL, formatting.BLACK_PARALLEL_AFRESH) == (0, 0)
        assert workers._start_method() == method
    assert (formatting.BLACK_PARALLEL, workers._start_method) == before
