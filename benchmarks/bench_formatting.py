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
import gc
import itertools
import multiprocessing
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from benchmarks import Ratio, compare
from codegen import formatting
from codegen.formatting import BLACK_PIECE, DEFAULT_LINE_LENGTH, Style, paused_gc

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT.parent / "shared" / "upstream" / "v1" / "schema.unstable.json"
FEATURES = frozenset({"unstable_session_archive"})
FORKED = (16_000, 24_000, 32_000, 48_000, 64_000, 96_000, 128_000, 192_000, 256_000)
AFRESH = (80_000, 160_000, 240_000, 320_000, 480_000)


def _draft_pieces() -> list[str]:
    from codegen.pipeline import generate

    with tempfile.TemporaryDirectory() as tmp:
        schema_dir = Path(tmp) / "schema"
        shutil.copytree(ROOT / "schema" / "v1", schema_dir / "v1")
        bases = {1: BASE} if BASE.is_file() else None
        files = generate(schema_dir, FEATURES, ROOT, bases, style=Style("ruff")).files
    return [p.rstrip("\n") + "\n" for p in formatting._pieces(files["v1/models.py"], BLACK_PIECE)]


def _take(pieces: list[str], size: int) -> dict[str, list[str]]:
    taken: list[str] = []
    for piece in itertools.cycle(pieces):
        if sum(map(len, taken)) >= size:
            return {"draft": taken}
        taken.append(piece)
    raise AssertionError("unreachable")


@contextmanager
def _forked_workers(on: bool) -> Iterator[None]:
    """``_map`` forks workers from no size (on) or never (off)."""
    saved = formatting.BLACK_PARALLEL
    formatting.BLACK_PARALLEL = 0 if on else 10**12
    try:
        yield
    finally:
        formatting.BLACK_PARALLEL = saved


def _spawned(job: list[str]) -> list[str]:
    """The pieces laid out as ``_map`` does, by spawned workers."""
    order = sorted(range(len(job)), key=lambda i: -len(job[i]))
    context = multiprocessing.get_context("spawn")
    lay_out = functools.partial(formatting._lay_out, line_length=DEFAULT_LINE_LENGTH)
    with ProcessPoolExecutor(min(len(job), formatting._cores()), mp_context=context, initializer=gc.disable) as pool:
        done = dict(zip(order, pool.map(lay_out, [job[i] for i in order]), strict=True))
    return [done[i] for i in range(len(job))]


def run() -> list[Ratio]:
    if not formatting.forks_workers():
        print("F1   skipped: no forked workers here (one core, or no fork)")
        return []
    import black  # noqa: F401  (as _black does before workers start)

    pieces = _draft_pieces()
    lay_out = functools.partial(formatting._lay_out, line_length=DEFAULT_LINE_LENGTH)
    results = []
    for size in sorted({*FORKED, formatting.BLACK_PARALLEL}):
        job = _take(pieces, size)

        def forked(on: bool, job: dict[str, list[str]] = job) -> None:
            with _forked_workers(on), paused_gc():
                formatting._map(lay_out, job)

        results.append(
            compare(
                "F1",
                f"black over {sum(map(len, job['draft'])):,} characters of ruff's draft "
                f"({len(job['draft'])} pieces), forked workers vs this process alone",
                functools.partial(forked, True),
                functools.partial(forked, False),
                target=1.0 if size == formatting.BLACK_PARALLEL else None,
                repeat=5,
            )
        )
    for size in sorted({*AFRESH, formatting.BLACK_PARALLEL_AFRESH}):
        spawn_job = _take(pieces, size)["draft"]

        def spawned(on: bool, job: list[str] = spawn_job) -> None:
            with paused_gc():
                _spawned(job) if on else [lay_out(piece) for piece in job]

        results.append(
            compare(
                "F2",
                f"black over {sum(map(len, spawn_job)):,} characters of ruff's draft ({len(spawn_job)} pieces), "
                "spawned workers vs this process alone",
                functools.partial(spawned, True),
                functools.partial(spawned, False),
                target=1.0 if size == formatting.BLACK_PARALLEL_AFRESH else None,
                repeat=5,
            )
        )
    return results
