"""F1 (workers forked), F2 (workers started afresh, spawn), one row per size: black laid
out over that many characters of ruff's draft in worker processes vs in this process
alone. Below 1x the workers pay for themselves.

F1 times ``formatting._map`` as a run calls it; its row at ``formatting.BLACK_PARALLEL``,
from where a run forks workers, has the target 1x, the others are for information. F2
times a pool as ``_map`` makes it where workers start afresh (spawn: macOS and Windows; a
fork server: Linux from Python 3.14): they import black first; its row at
``formatting.BLACK_PARALLEL_AFRESH``, from where a run starts them, has the target 1x.

The draft is what a run hands black most of: the v1 models in the ruff style (imports
sorted, ``ruff format``), over upstream v1 with the fragments overlaid when the upstream
schemas are present, else over the fragments, cut where ``_black`` cuts them; pieces are
taken in turn (again from the first when all are taken) until the size is reached.

Worker processes pay only where a core is free for them: on a machine whose cores are
busy with other work, these ratios are higher than on an idle one.
"""

from __future__ import annotations

import functools
import itertools
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from unittest import mock

from acp_codegen.render import formatting, workers
from acp_codegen.render.formatting import BLACK_PIECE
from acp_codegen.render.workers import paused_gc
from acp_codegen.style import DEFAULT_LINE_LENGTH, Style

from benchmarks import Ratio, compare
from benchmarks.bench_upstream import BASE
from benchmarks.corpus import generate_upstream_v1

FORKED = (16_000, 24_000, 32_000, 48_000, 64_000, 96_000, 128_000, 192_000, 256_000)
AFRESH = (80_000, 160_000, 240_000, 320_000, 480_000)


def _draft_pieces() -> list[str]:
    files = generate_upstream_v1(BASE if BASE.is_file() else None, style=Style("ruff"))
    return [p.rstrip("\n") + "\n" for p in formatting._pieces(files["v1/models.py"], BLACK_PIECE)]


def _take(pieces: list[str], size: int) -> dict[str, list[str]]:
    taken: list[str] = []
    for piece in itertools.cycle(pieces):
        if sum(map(len, taken)) >= size:
            return {"draft": taken}
        taken.append(piece)
    raise AssertionError("unreachable")


@contextmanager
def _workers(method: str, on: bool) -> Iterator[None]:
    """``_map`` as a run calls it where workers start by ``method``: from no size (on) or
    never (off)."""
    threshold = 0 if on else 10**12
    started = functools.partial(ProcessPoolExecutor, mp_context=multiprocessing.get_context(method))
    with (
        mock.patch.object(formatting, "BLACK_PARALLEL", threshold),
        mock.patch.object(formatting, "BLACK_PARALLEL_AFRESH", threshold),
        mock.patch.object(workers, "_start_method", lambda: method),
        mock.patch.object(workers, "ProcessPoolExecutor", started),
    ):
        yield


def _figure(label: str, method: str, size: int, threshold: int, pieces: list[str]) -> Ratio:
    job = _take(pieces, size)
    lay_out = functools.partial(formatting._lay_out, line_length=DEFAULT_LINE_LENGTH)

    def laid_out(on: bool) -> None:
        with _workers(method, on), paused_gc():
            formatting._map(lay_out, job["draft"])

    workers = "forked workers" if method == "fork" else "spawned workers"
    return compare(
        label,
        f"black over {sum(map(len, job['draft'])):,} characters of ruff's draft "
        f"({len(job['draft'])} pieces), {workers} vs this process alone",
        functools.partial(laid_out, True),
        functools.partial(laid_out, False),
        target=1.0 if size == threshold else None,
        repeat=5,
    )


def run() -> list[Ratio]:
    if workers._cores() < 2:
        print("F1   skipped: one core, no workers")
        return []
    import black  # noqa: F401  (as _black does before workers start)

    pieces = _draft_pieces()
    results = []
    if "fork" in multiprocessing.get_all_start_methods():
        forked = sorted({*FORKED, formatting.BLACK_PARALLEL})
        results += [_figure("F1", "fork", size, formatting.BLACK_PARALLEL, pieces) for size in forked]
    else:
        print("F1   skipped: processes do not fork here")
    afresh = sorted({*AFRESH, formatting.BLACK_PARALLEL_AFRESH})
    results += [_figure("F2", "spawn", size, formatting.BLACK_PARALLEL_AFRESH, pieces) for size in afresh]
    return results
