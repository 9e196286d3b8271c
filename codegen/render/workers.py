"""Worker processes: the scheduler that render and the pipeline share. ``map_pieces`` spreads
pieces of work over the cores (a pool, longest first), ``in_background`` makes calls in one
forked worker while this process goes on, ``paused_gc`` pauses the cyclic collector for a
run. What a worker lays out it sends back with its result: black's layouts, kept per
process (``remember``), travel with the scheduler. Imports nothing of acp_codegen: black's
worker processes import it.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection
from typing import TypeVar

# black's layout of each piece laid out in this process, by line length and piece: black's
# output depends on those two alone, and a process that lays out much of the same code
# again pays for it once (``diff``'s two sides, a build script, a test run). Emptied
# when it would hold more than LAID_OUT_PIECES pieces (a few tens of MB).
LAID_OUT_PIECES = 4_000


_laid_out: dict[tuple[int, str], str] = {}


T = TypeVar("T")


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection for the duration. A run builds many short-lived
    cyclic structures (black's syntax trees, datamodel-code-generator's models); the
    collector's passes over them took about a quarter of black's time, more than the
    memory they hold until the end is worth (about 50 MB over an upstream schema)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def remember(layouts: Iterable[tuple[tuple[int, str], str]]) -> None:
    """Keep black's ``layouts`` of pieces ((line length, piece), laid out) for later runs."""
    entries = list(layouts)
    if len(_laid_out) + len(entries) > LAID_OUT_PIECES:
        _laid_out.clear()
    _laid_out.update(entries[:LAID_OUT_PIECES])


def recalled(key: tuple[int, str]) -> str | None:
    """black's layout of a piece at a line length, if this process made or received it."""
    # .get, not `in` then [ ]: another thread's run may empty the dict in between.
    return _laid_out.get(key)


def forget_layouts() -> None:
    """Start as a fresh process does, laying out every piece (benchmarks time CLI runs)."""
    _laid_out.clear()


def map_pieces(function: functools.partial[str], jobs: Sequence[str], forked: int, afresh: int) -> list[str]:
    """``function`` over every piece, in order: in worker processes when there is enough
    work for their start method (from ``forked`` characters in all where they fork, from
    ``afresh`` where they start afresh) and this is no worker itself, else (or when workers
    cannot start or die) here."""
    threshold = forked if _start_method() == "fork" else afresh
    workers = min(len(jobs), _cores()) if sum(map(len, jobs)) >= threshold and not _in_a_worker() else 1
    if workers > 1:
        # Longest first, so that no worker is left with a long piece when the others are done.
        order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i]))
        try:
            with ProcessPoolExecutor(workers, initializer=gc.disable) as pool:
                done = dict(zip(order, pool.map(function, [jobs[i] for i in order]), strict=True))
            return [done[i] for i in range(len(jobs))]
        except (OSError, ImportError, NotImplementedError, BrokenProcessPool):
            pass  # no working processes here (a sandbox, a killed worker): this one does it all
    return [function(job) for job in jobs]


def forks_workers() -> bool:
    """Whether a worker process here starts at once (forked, with what this one has
    imported) and has a core of its own."""
    return _start_method() == "fork" and _cores() > 1 and not _in_a_worker()


def _in_a_worker() -> bool:
    """A worker process starts none of its own: its siblings have the other cores, and a
    daemonic one may not start processes at all."""
    return multiprocessing.parent_process() is not None


@contextlib.contextmanager
def in_background(calls: Mapping[str, Callable[[], T]]) -> Iterator[Callable[[str], T]]:
    """``calls`` made one after another in a forked worker process while this one goes on;
    each result is then asked for by name. Where no worker forks (see forks_workers), or
    the worker fails, a call is made here when its result is asked for: its error, if it
    raises one, is raised here as a run without workers raises it.

    A bare process and a pipe, not a pool: a pool's thread would still run here when
    black's workers fork, and forking a process with threads is unsafe."""
    received: dict[str, tuple[T] | None] = {}
    worker = None
    # The worker's temporary files go under a directory of this process's, removed here:
    # a worker killed mid-call (its results no longer wanted: this process failed) cleans
    # up nothing itself.
    scratch = None
    if calls and forks_workers():
        try:
            scratch = tempfile.mkdtemp(prefix="acp-codegen-worker-")
            context = multiprocessing.get_context("fork")
            reader, writer = context.Pipe(duplex=False)
            worker = context.Process(target=_send_results, args=(calls, writer, scratch), daemon=True)
            worker.start()
            writer.close()
        except OSError:
            worker = None

    def result(name: str) -> T:
        while worker is not None and name not in received:
            try:
                sent, value, layouts = reader.recv()
            except (EOFError, OSError):  # the worker died: what is left is made here
                break
            received[sent] = value
            remember(layouts)
        value = received.get(name)
        return value[0] if value is not None else calls[name]()

    try:
        yield result
    finally:
        if worker is not None:
            worker.kill()  # done, or its results are no longer wanted
            worker.join()
            reader.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _send_results(calls: Mapping[str, Callable[[], object]], connection: Connection, scratch: str) -> None:
    """A background worker's work: each call's result, or None where it raised or cannot
    be sent (``send`` pickles before it writes); the parent then makes that call itself.
    With each, the layouts black made for it (see remember). Temporary files go under
    ``scratch``, which the parent removes."""
    gc.disable()
    tempfile.tempdir = scratch
    for name, call in calls.items():
        known = set(_laid_out)
        try:
            value = call()
            made = [(key, text) for key, text in _laid_out.items() if key not in known]
            connection.send((name, (value,), made))
        except Exception:
            connection.send((name, None, []))
    connection.close()


def _cores() -> int:
    """The cores this process may run on (Linux: its affinity mask, not the machine's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _start_method() -> str:
    """How worker processes would start: the one set, else the platform's default (the
    first listed), without fixing it for the host program as asking for it would."""
    return multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]
