"""Stage 6, format: rendered modules laid out as the host repository's formatter would.

Imports are sorted as isort sorts them (``ruff check --select I``), then the code is laid
out by ``ruff format`` and, in the black style, by black after it. One ruff run does each
step for all modules (a process per module would cost more than ruff's work does).

black does most of a run's work. It reads its input twice whenever its first pass changes
anything (its second pass settles trailing commas the first one added), and once when the
input already has its layout. ruff's layout is black's nearly everywhere, so black after
ruff mostly reads once, about half the work of black alone. Where the two differ (ruff
splits a line that ends in a ``# type:`` comment, which black leaves long), black keeps
ruff's split, as it keeps any bracket with a trailing comma: the result is still black's
own layout, which ``black --check`` accepts. What is left is split at top-level classes
and spread over the machine's cores.

The pipeline borrows the worker machinery (``in_background``): the models of the later
versions are rendered and laid out in a worker of their own.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import gc
import itertools
import multiprocessing
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TypeVar

FORMATTERS = ("black", "ruff")
DEFAULT_LINE_LENGTH = 88
# black's input is cut into pieces of at least this many characters (where a cut cannot
# change its layout, see _pieces), small enough to share out evenly over the cores.
BLACK_PIECE = 4_000
# Below this many characters of ruff's draft in all, worker processes cost more than they
# save (`nox -s bench`, F1 and F2, docs/benchmarks.md; an idle two-core machine, three
# runs). Forked workers: 1.01x to 1.02x at 18,700 characters, 0.80x to 0.88x from 27,000
# to 33,500. Workers started afresh (spawn: macOS and Windows; a fork server: Linux from
# Python 3.14) import black first: 1.13x to 1.16x at 84,500, 0.83x to 0.84x at 172,000.
# On a machine busy with other work, workers pay later (F1 read 0.99x at 99,000 there).
BLACK_PARALLEL = 32_000
BLACK_PARALLEL_AFRESH = 160_000
# black's layout of each piece laid out in this process, by line length and piece: black's
# output depends on those two alone, and a process that lays out much of the same code
# again pays for it once (``diff``'s two sides, a build script, a test run). Emptied
# when it would hold more than LAID_OUT_PIECES pieces (a few tens of MB).
LAID_OUT_PIECES = 4_000
_laid_out: dict[tuple[int, str], str] = {}

T = TypeVar("T")


@dataclass(frozen=True)
class Style:
    """How generated code is laid out: black (the default, as the design card says) or
    ``ruff format`` (black's style, faster on upstream-sized output; the two differ in
    a few corners, such as magic trailing commas), at a line length."""

    formatter: str = "black"
    line_length: int = DEFAULT_LINE_LENGTH

    def __post_init__(self) -> None:
        if self.formatter not in FORMATTERS:
            raise ValueError(f"unknown formatter {self.formatter!r}; known: {', '.join(FORMATTERS)}")
        if not 40 <= self.line_length <= 320:
            raise ValueError(f"line length {self.line_length} is outside 40..320")


DEFAULT_STYLE = Style()


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


def format_modules(sources: Mapping[str, str], style: Style) -> dict[str, str]:
    """Lay out generated modules (by any names): imports sorted, ruff format, then black
    in the black style."""
    from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

    with tempfile.TemporaryDirectory(prefix="acp-codegen-") as tmp:
        # Numbered files named one by one: ruff takes a file it is given even where its
        # default excludes (``build``, ``.venv``...) would skip the directory. Run in that
        # directory, no import can be taken for a first-party module.
        paths = {name: Path(tmp) / f"m{i}.py" for i, name in enumerate(sources)}
        for name, path in paths.items():
            path.write_text(sources[name], encoding="utf-8", newline="")

        def ruff(*args: str) -> None:
            common = (
                "--isolated",
                "--no-cache",
                "--quiet",
                "--target-version=py310",
                f"--line-length={style.line_length}",
            )
            command = [find_ruff_bin(), *args, *common, *map(str, paths.values())]
            done = subprocess.run(command, cwd=tmp, capture_output=True, text=True, encoding="utf-8", check=False)
            if done.returncode != 0:
                raise RuntimeError(f"ruff {args[0]} failed on generated code: {(done.stderr or done.stdout).strip()}")

        ruff("check", "--select=I", "--fix")
        ruff("format")
        drafts = {name: path.read_text(encoding="utf-8") for name, path in paths.items()}
    if style.formatter == "ruff":
        return drafts
    try:
        return _black(drafts, style.line_length)
    except Exception as exc:  # any failure is a generator bug: say which tool failed
        raise RuntimeError(f"black failed on generated code: {exc}") from exc


def _black(sources: Mapping[str, str], line_length: int) -> dict[str, str]:
    """black's layout of each module: its pieces laid out (see _map) and joined by the two
    blank lines black puts between top-level blocks (see _pieces)."""
    # Without the blank lines at its end (black drops them), a piece that has black's
    # layout is one black reads once.
    pieces = {name: [p.rstrip("\n") + "\n" for p in _pieces(source, BLACK_PIECE)] for name, source in sources.items()}
    every = [piece for parts in pieces.values() for piece in parts]
    # .get, not `in` then [ ]: another thread's run may empty the dict in between.
    known = {piece: text for piece in every if (text := _laid_out.get((line_length, piece))) is not None}
    todo = list(dict.fromkeys(piece for piece in every if piece not in known))
    if todo:
        # Imported here, before any worker starts: a forked worker inherits it, where it
        # would otherwise import black itself (0.2 s), in every run.
        import black  # noqa: F401

        with paused_gc():
            new = dict(zip(todo, _map(functools.partial(_lay_out, line_length=line_length), todo), strict=True))
        remember(((line_length, piece), text) for piece, text in new.items())
        known |= new
    return {name: "\n\n".join(known[piece] for piece in parts) for name, parts in pieces.items()}


def remember(layouts: Iterable[tuple[tuple[int, str], str]]) -> None:
    """Keep black's ``layouts`` of pieces ((line length, piece), laid out) for later runs."""
    entries = list(layouts)
    if len(_laid_out) + len(entries) > LAID_OUT_PIECES:
        _laid_out.clear()
    _laid_out.update(entries[:LAID_OUT_PIECES])


def forget_layouts() -> None:
    """Start as a fresh process does, laying out every piece (benchmarks time CLI runs)."""
    _laid_out.clear()


def _map(function: functools.partial[str], jobs: Sequence[str]) -> list[str]:
    """``function`` over every piece, in order: in worker processes when there is enough
    work for their start method and this is no worker itself, else (or when workers cannot
    start or die) here."""
    threshold = BLACK_PARALLEL if _start_method() == "fork" else BLACK_PARALLEL_AFRESH
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


def _lay_out(source: str, line_length: int) -> str:
    import black
    from black.mode import TargetVersion

    return black.format_str(source, mode=black.Mode(target_versions={TargetVersion.PY310}, line_length=line_length))


def _pieces(source: str, size: int) -> list[str]:
    """``source`` cut into pieces of at least ``size`` characters, only where black's
    layout of the whole is the pieces' layouts joined by two blank lines: before a
    top-level class or function that follows a class or function whose last line is
    indented, with nothing but blank lines between them (no comment, no decorator). black
    starts a file at its first line, ends it with one newline, and always puts two blank
    lines there."""
    if len(source) < 2 * size or "\r" in source:  # ast counts a lone \r as a line end, str.split does not
        return [source]
    try:
        body = ast.parse(source).body
    except SyntaxError:  # black says what is wrong
        return [source]
    lines = source.split("\n")
    offsets = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    cuts = [0]
    blocks = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for previous, node in itertools.pairwise(body):
        end, cut = previous.end_lineno or previous.lineno, node.lineno - 1
        if (
            isinstance(node, blocks)
            and isinstance(previous, blocks)
            and lines[end - 1].startswith((" ", "\t"))
            and not any(line.strip() for line in lines[end:cut])
            and offsets[cut] - offsets[cuts[-1]] >= size
            and len(source) - offsets[cut] >= size
        ):
            cuts.append(cut)
    cuts.append(len(lines))
    return [source[offsets[a] : offsets[b]] for a, b in itertools.pairwise(cuts)]
