"""The format stage: black's layout of a module cut into pieces (laid out apart, in
worker processes) is byte for byte its layout of the whole, and a run leaves the garbage
collector as it found it."""

from __future__ import annotations

import functools
import gc
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.generate import pipeline
from acp_codegen.render import formatting, workers
from acp_codegen.render.formatting import _black, _lay_out, _pieces, format_modules
from acp_codegen.render.workers import in_background, paused_gc
from acp_codegen.style import Style
from support import ROOT

FEATURES = frozenset({"unstable_session_archive"})

# Each place where a cut would change black's layout, and the places where a cut is safe.
TRICKY = '''"""Module docstring."""
import typing
X = 1
class A:
    x: int = 1
class B(A):
    """Doc."""
    def f(self):  return 1
# a comment about C, which black keeps next to it
class C: pass
@typing.final
class D:
    y=2
class E: ...
class F:
    z = [1,
  2]
Y: typing.TypeAlias = int
class G:
    s = """
class H:
"""
class I(G):
    pass
Z = [
    1,
    2]
class J:
    pass
def k():
    return 1
def m():
    pass
# a comment about n
def n():
    pass
@typing.overload
def o(x: int) -> int: ...
@typing.overload
def o(x: str) -> str: ...
def o(x):
    return x
def p(): ...
def q():
    return 2
class K:
    pass
async def r():
    pass
'''


@pytest.fixture(autouse=True)
def no_layouts_remembered() -> None:
    """Each test starts as a fresh process does: black lays out every piece it is given."""
    workers.forget_layouts()


def _rendered(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The fragments' modules as rendered, before any formatting."""
    seen: dict[str, str] = {}

    def keep(sources: dict[str, str], style: Any) -> dict[str, str]:
        seen.update(sources)
        return dict(sources)

    monkeypatch.setattr(pipeline, "format_modules", keep)
    monkeypatch.setattr(pipeline, "BACKGROUND_TYPES", 10**6)  # every module made in this process, where it is seen
    pipeline.generate(ROOT / "schema", FEATURES, ROOT)
    return seen


def _joined(pieces: list[str]) -> str:
    return "\n\n".join(_lay_out(piece, 88) for piece in pieces)


def test_cuts_only_where_black_puts_two_blank_lines() -> None:
    pieces = _pieces(TRICKY, 1)  # every safe place is a cut
    assert [piece.splitlines()[0] for piece in pieces] == [
        '"""Module docstring."""',
        "class B(A):",
        "class E: ...",
        "def k():",
        "def m():",
        "def p(): ...",
        "class K:",
        "async def r():",
    ]
    assert "".join(pieces) == TRICKY
    assert _joined(pieces) == _lay_out(TRICKY, 88)


def test_pieces_of_the_rendered_modules_lay_out_as_the_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered = _rendered(monkeypatch)
    cut = 0
    for name in ("v1/models.py", "v2/models.py", "convert.py", "v1/dispatch.py"):
        source = rendered[name]
        pieces = _pieces(source, 1)
        cut += len(pieces) - 1
        assert "".join(pieces) == source, name
        assert _joined(pieces) == _lay_out(source, 88), name
    assert cut > 20  # the models modules are cut at most of their classes
    sized = _pieces(rendered["v1/models.py"], 3_000)
    assert len(sized) > 2 and all(len(piece) >= 3_000 for piece in sized)


def test_small_or_unparsable_sources_stay_whole() -> None:
    assert _pieces(TRICKY, len(TRICKY) // 2 + 1) == [TRICKY]
    assert _pieces("class A:\n    x = (\n" * 50, 1) == ["class A:\n    x = (\n" * 50]
    assert _pieces(TRICKY.replace("\n", "\r\n"), 1) == [TRICKY.replace("\n", "\r\n")]


def test_worker_processes_give_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered = _rendered(monkeypatch)
    serial = {name: _lay_out(source, 88) for name, source in rendered.items()}
    monkeypatch.setattr(formatting, "BLACK_PIECE", 2_000)  # many pieces
    monkeypatch.setattr(workers, "_cores", lambda: 2)  # workers on a one-core machine too
    monkeypatch.setattr(workers, "_start_method", lambda: "fork")  # and on macOS
    ran: list[int] = []
    real_map = formatting._map

    def counting_map(function: Any, jobs: list[str]) -> list[str]:
        ran.append(len(jobs))
        return real_map(function, jobs)

    made: list[int] = []

    def pool(workers: int, **kwargs: Any) -> ProcessPoolExecutor:
        made.append(workers)
        return ProcessPoolExecutor(workers, **kwargs)

    monkeypatch.setattr(formatting, "_map", counting_map)
    monkeypatch.setattr(workers, "ProcessPoolExecutor", pool)
    assert _black(rendered, 88) == serial
    assert ran and ran[0] > len(rendered)
    assert made == [2]


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_workers_started_afresh_give_the_same_bytes(method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS and Windows start workers by spawning them, Linux from Python 3.14 by a fork
    server: they import only ``acp_codegen.render.formatting`` (and what it imports) and get their work by pickling."""
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"{method} is not available on this platform")  # forkserver: not on Windows
    made: list[int] = []

    def pool(workers: int, **kwargs: Any) -> ProcessPoolExecutor:
        made.append(workers)
        return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method), **kwargs)

    monkeypatch.setattr(workers, "ProcessPoolExecutor", pool)
    monkeypatch.setattr(workers, "_cores", lambda: 2)
    monkeypatch.setattr(workers, "_start_method", lambda: method)
    monkeypatch.setattr(formatting, "BLACK_PIECE", 100)
    monkeypatch.setattr(formatting, "BLACK_PARALLEL_AFRESH", 200)
    assert _black({"m.py": TRICKY}, 88) == {"m.py": _lay_out(TRICKY, 88)}
    assert made == [2]


@pytest.mark.parametrize(
    ("method", "scale", "in_a_worker", "pool"),
    [
        ("fork", 1.0, False, True),
        ("fork", 0.9, False, False),
        ("spawn", 1.0, False, True),
        ("spawn", 0.9, False, False),
        ("forkserver", 1.0, False, True),
        ("forkserver", 0.9, False, False),
        ("fork", 8.0, True, False),
    ],
)
def test_workers_start_for_enough_work_for_their_start_method(
    method: str, scale: float, in_a_worker: bool, pool: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forked workers pay from BLACK_PARALLEL characters (benchmark F1); workers that
    start afresh and import black first, from BLACK_PARALLEL_AFRESH (F2). A worker process
    (the models of a later version, see pipeline.generate) lays out its own pieces: the
    other cores are busy already."""
    if in_a_worker:
        monkeypatch.setattr(multiprocessing, "parent_process", object)
    made: list[int] = []

    def counting(workers: int, **kwargs: Any) -> ProcessPoolExecutor:
        made.append(workers)
        return ProcessPoolExecutor(workers, **kwargs)

    monkeypatch.setattr(workers, "ProcessPoolExecutor", counting)
    monkeypatch.setattr(workers, "_cores", lambda: 2)
    monkeypatch.setattr(workers, "_start_method", lambda: method)
    threshold = formatting.BLACK_PARALLEL if method == "fork" else formatting.BLACK_PARALLEL_AFRESH
    assert formatting.BLACK_PARALLEL < formatting.BLACK_PARALLEL_AFRESH
    size = int(threshold * scale)
    pieces = ["#" * (size // 20 + 1)] * 20  # 20 pieces, `size` characters in all (at least)
    assert formatting._map(functools.partial(len), pieces) == [len(p) for p in pieces]
    assert made == ([2] if pool else [])


def test_the_start_method_is_not_fixed_for_the_host() -> None:
    """Asking which start method applies leaves the host program free to set its own
    (in a fresh process: this one has made pools already)."""
    script = (
        "import multiprocessing\n"
        "from acp_codegen.render import workers\n"
        "assert workers._start_method() == multiprocessing.get_all_start_methods()[0]\n"
        "assert multiprocessing.get_start_method(allow_none=True) is None\n"
        "multiprocessing.set_start_method('spawn')\n"
        "assert workers._start_method() == 'spawn'\n"
    )
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True)


@pytest.mark.parametrize("failure", ["workers die", "no processes"])
def test_without_working_processes_black_runs_here(failure: str, monkeypatch: pytest.MonkeyPatch) -> None:
    tried: list[str] = []

    class BrokenPool(ProcessPoolExecutor):
        def map(self, *args: Any, **kwargs: Any) -> Any:
            tried.append(failure)
            raise BrokenProcessPool("a worker was killed")

    def no_processes(*args: object, **kwargs: object) -> None:
        tried.append(failure)
        raise OSError("no semaphores in this sandbox")

    monkeypatch.setattr(workers, "ProcessPoolExecutor", no_processes if failure == "no processes" else BrokenPool)
    monkeypatch.setattr(workers, "_cores", lambda: 4)
    monkeypatch.setattr(workers, "_start_method", lambda: "fork")
    monkeypatch.setattr(formatting, "BLACK_PIECE", 100)
    monkeypatch.setattr(formatting, "BLACK_PARALLEL", 200)
    assert _black({"m.py": TRICKY}, 88) == {"m.py": _lay_out(TRICKY, 88)}
    assert tried == [failure]  # workers were tried, and this process did the work


def test_a_black_failure_names_black(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(source: str, line_length: int) -> str:
        raise ValueError("cannot parse")

    monkeypatch.setattr(formatting, "_lay_out", fail)
    with pytest.raises(RuntimeError, match=r"^black failed on generated code: cannot parse$"):
        format_modules({"m.py": "x = 1\n"}, Style())


def test_a_process_lays_out_each_piece_once_a_line_length(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "_cores", lambda: 1)  # pieces laid out here, where they are seen
    monkeypatch.setattr(formatting, "BLACK_PIECE", 100)
    seen: list[tuple[int, str]] = []

    def lay_out(source: str, line_length: int) -> str:
        seen.append((line_length, source))
        return _lay_out(source, line_length)

    monkeypatch.setattr(formatting, "_lay_out", lay_out)
    first = _black({"a.py": TRICKY}, 88)
    assert first == {"a.py": _lay_out(TRICKY, 88)}
    pieces = len(seen)
    assert pieces > 2
    longer = TRICKY + "class Z:\n    pass\n"  # its last piece differs from TRICKY's
    again = _black({"b.py": TRICKY, "c.py": longer}, 88)
    assert again == {"b.py": first["a.py"], "c.py": _lay_out(longer, 88)}
    assert len(seen) == pieces + 1
    assert _black({"a.py": TRICKY}, 100) == {"a.py": _lay_out(TRICKY, 100)}
    assert len(seen) == 2 * pieces + 1 and {length for length, _ in seen[-pieces:]} == {100}


def test_the_layouts_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "_cores", lambda: 1)
    monkeypatch.setattr(formatting, "BLACK_PIECE", 100)
    monkeypatch.setattr(workers, "LAID_OUT_PIECES", 2)
    assert len(_pieces(TRICKY, 100)) > 2
    for line_length in (88, 100):
        assert _black({"m.py": TRICKY}, line_length) == {"m.py": _lay_out(TRICKY, line_length)}
        assert 0 < len(workers._laid_out) <= 2


def _pid_and_layout(source: str) -> tuple[int, dict[str, str]]:
    return os.getpid(), _black({"m.py": source}, 88)


def test_layouts_made_in_a_background_worker_are_known_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "_start_method", lambda: "fork")
    monkeypatch.setattr(workers, "_cores", lambda: 2)
    monkeypatch.setattr(formatting, "BLACK_PIECE", 100)
    with in_background({"m": functools.partial(_pid_and_layout, TRICKY)}) as result:
        pid, laid_out = result("m")
    assert pid != os.getpid() and laid_out == {"m.py": _lay_out(TRICKY, 88)}

    def nothing_here(source: str, line_length: int) -> str:
        raise AssertionError("laid out again here")

    monkeypatch.setattr(formatting, "_lay_out", nothing_here)
    assert _black({"m.py": TRICKY}, 88) == laid_out


def test_the_collector_is_left_as_it_was(tmp_path: Path) -> None:
    assert gc.isenabled()
    with pytest.raises(KeyError), paused_gc():
        assert not gc.isenabled()
        raise KeyError("x")
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()
    pipeline.generate(ROOT / "schema", FEATURES, ROOT)
    assert gc.isenabled()


def test_black_lays_out_ruffs_draft_reading_most_of_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """black reads its input a second time only when its first pass changed it; after ruff
    format, nearly every piece already has black's layout."""
    rendered = _rendered(monkeypatch)
    monkeypatch.setattr(workers, "_cores", lambda: 1)  # pieces laid out here, where they are seen
    seen: list[tuple[str, str]] = []

    def lay_out(source: str, line_length: int) -> str:
        seen.append((source, _lay_out(source, line_length)))
        return seen[-1][1]

    monkeypatch.setattr(formatting, "_lay_out", lay_out)
    laid_out = format_modules(rendered, Style())
    unchanged = sum(len(source) for source, out in seen if source == out)
    assert unchanged >= 0.9 * sum(len(source) for source, _ in seen)
    for name, text in laid_out.items():
        assert _lay_out(text, 88) == text, name


def test_where_ruff_and_black_differ_blacks_layout_keeps_ruffs_split() -> None:
    """black leaves a long line that ends in a ``# type:`` comment as it is; ruff splits it,
    with trailing commas black then keeps. Either way the result is black's own layout."""
    line = (
        "class M:\n"
        "    capabilities: Annotated[Capabilities, Field(description='What the agent supports.',"
        " validate_default=True)] = {}  # type: ignore[assignment]\n"
    )
    assert _lay_out(line, 88).count("\n") == 2  # black alone: still one long line
    laid_out = format_modules({"m.py": line}, Style())["m.py"]
    assert laid_out.splitlines()[1:4] == [
        "    capabilities: Annotated[",
        "        Capabilities,",
        '        Field(description="What the agent supports.", validate_default=True),',
    ]
    assert _lay_out(laid_out, 88) == laid_out


def _exit_unless_in(parent: int) -> int:
    """This process's id; in any process but ``parent``, ends it at once."""
    if os.getpid() != parent:
        os._exit(3)
    return parent


def _pid_unless_in(parent: int) -> int:
    """This process's id; raises in any process but ``parent``."""
    if os.getpid() != parent:
        raise ValueError("raised in a worker")
    return parent


@pytest.mark.parametrize(
    ("method", "cores", "in_a_worker", "elsewhere"),
    [("fork", 2, False, True), ("fork", 1, False, False), ("spawn", 2, False, False), ("fork", 2, True, False)],
)
def test_calls_in_background_run_in_a_forked_worker_where_one_helps(
    method: str, cores: int, in_a_worker: bool, elsewhere: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workers, "_start_method", lambda: method)
    monkeypatch.setattr(workers, "_cores", lambda: cores)
    if in_a_worker:  # a worker of some pool (perhaps daemonic, which may not start processes)
        monkeypatch.setattr(multiprocessing, "parent_process", object)
    with in_background({"a": os.getpid, "b": functools.partial(len, "abc")}) as result:
        assert (result("a") != os.getpid()) is elsewhere
        assert result("b") == 3


def test_a_call_that_fails_in_the_worker_is_made_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its error, if it raises one here, is this process's own; a worker that dies or
    cannot start changes nothing but the time."""
    monkeypatch.setattr(workers, "_start_method", lambda: "fork")
    monkeypatch.setattr(workers, "_cores", lambda: 2)
    here = os.getpid()
    with in_background({"a": functools.partial(_pid_unless_in, here), "b": os.getpid}) as result:
        assert result("a") == here  # the worker raised; made again here
        assert result("b") != here  # the worker went on
    with in_background({"a": functools.partial(int, "x")}) as result, pytest.raises(ValueError, match="'x'"):
        result("a")
    with in_background({"a": functools.partial(_exit_unless_in, here), "b": os.getpid}) as result:
        assert result("b") == here  # the worker died before it: both made here
        assert result("a") == here

    def no_processes(method: str) -> None:
        raise OSError("no semaphores in this sandbox")

    monkeypatch.setattr(multiprocessing, "get_context", no_processes)
    with in_background({"a": os.getpid}) as result:
        assert result("a") == here


def _make_a_temporary_directory_and_wait(marker: str) -> None:
    """In the worker: a temporary directory made as format_modules makes one, its path
    written to ``marker``, then the call goes on until the worker is killed."""
    made = tempfile.mkdtemp(prefix="acp-codegen-probe-")
    Path(marker).write_text(made, encoding="utf-8")
    time.sleep(60)


def test_a_worker_killed_mid_call_leaves_no_temporary_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process failed while the worker worked (a bad conversions file, say): the
    worker is killed and cleans up nothing itself; its temporary files go all the same."""
    monkeypatch.setattr(workers, "_start_method", lambda: "fork")
    monkeypatch.setattr(workers, "_cores", lambda: 2)
    marker = tmp_path / "made"
    call = functools.partial(_make_a_temporary_directory_and_wait, str(marker))
    with pytest.raises(RuntimeError, match="failed here"), in_background({"a": call}):
        for _ in range(200):  # until the worker has made its directory (at most 10 s)
            if marker.exists() and marker.read_text(encoding="utf-8"):
                break
            time.sleep(0.05)
        made = Path(marker.read_text(encoding="utf-8"))
        assert made.is_dir()
        raise RuntimeError("failed here")
    assert not made.exists()


def test_models_rendered_in_a_worker_are_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "_start_method", lambda: "fork")
    monkeypatch.setattr(workers, "_cores", lambda: 2)
    made: list[str] = []
    real = workers.in_background

    def spying(calls: dict[str, Any]) -> Any:
        made.extend(calls)
        return real(calls)

    monkeypatch.setattr(pipeline, "in_background", spying)
    in_worker = pipeline.generate(ROOT / "schema", FEATURES, ROOT).files
    assert made == ["v2/models.py"]
    workers.forget_layouts()  # laid out here again, not taken from what the worker sent
    monkeypatch.setattr(pipeline, "BACKGROUND_TYPES", 10**6)
    assert pipeline.generate(ROOT / "schema", FEATURES, ROOT).files == in_worker
    assert made == ["v2/models.py"]  # the second run used no worker
