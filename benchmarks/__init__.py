"""Benchmarks: every figure is a ratio against a baseline measured in the same process.

Each ``bench_*.py`` module defines ``run() -> list[Ratio]``; ``python -m benchmarks``
(``nox -s bench``) runs them all, or only those named on the command line.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from acp_codegen.render.workers import forget_layouts

# For ``compare(sample_s=...)``: a sample long enough that the clock's and the scheduler's
# granularity are a small part of it, short enough for fifteen rounds a side in two seconds.
SAMPLE_S = 0.05


@dataclass(frozen=True)
class Ratio:
    name: str  # e.g. "G1"
    what: str
    subject_s: float
    baseline_s: float
    target: float | None  # the ratio must stay at or below this; None: for information
    paired: float | None = None  # the ratio as measured round by round (compare's sample_s), if so

    @property
    def ratio(self) -> float:
        return self.paired if self.paired is not None else self.subject_s / self.baseline_s

    @property
    def ok(self) -> bool:
        return self.target is None or self.ratio <= self.target

    def line(self) -> str:
        if self.target is None:
            verdict = "no target, for information"
        else:
            verdict = f"target <= {self.target}x, {'ok' if self.ok else 'OVER TARGET'}"
        return (
            f"{self.name:4} {self.ratio:6.3f}x  ({verdict})  "
            f"{self.what}: {self.subject_s * 1e3:.2f} ms vs baseline {self.baseline_s * 1e3:.2f} ms"
        )


def best_of(fn: Callable[[], object], repeat: int = 5, number: int = 1) -> float:
    """Median seconds per call over ``repeat`` rounds of ``number`` calls (after one warm-up),
    each round with no layouts of black remembered, as in a CLI run."""
    fn()
    rounds = []
    for _ in range(repeat):
        forget_layouts()
        start = time.perf_counter()
        for _ in range(number):
            fn()
        rounds.append((time.perf_counter() - start) / number)
    return statistics.median(rounds)


def compare(
    name: str,
    what: str,
    subject: Callable[[], object],
    baseline: Callable[[], object],
    target: float | None,
    repeat: int = 5,
    number: int = 1,
    sample_s: float | None = None,
    children: bool = False,
) -> Ratio:
    """Time subject and baseline interleaved, so that machine noise hits both alike. Each
    round starts with the garbage of the one before collected, so that neither side pays
    for the other's (a generation leaves its garbage to be collected after it), and, as a
    CLI run does, with no layouts of black remembered (see acp_codegen.render.workers.remember).
    The figure is each side's median round.

    ``sample_s`` is for calls far shorter than the machine's noise, which moves a
    sub-millisecond sample by its whole length: each sample is then a batch of as many
    calls as make the faster side's last at least ``sample_s``, timed in this process's CPU
    time (what other processes take from it is not counted), the two sides take turns
    going first, and the figure is the median of the rounds' own ratios (a slow phase of
    the machine slows both samples of a round alike). ``children``: the CPU time of the
    child processes waited for counts too (ruff's runs), for work that starts them."""
    subject()
    baseline()
    if sample_s is not None:
        number = max(number, _calls_lasting(sample_s, subject, baseline))
    clock = time.perf_counter if sample_s is None else _cpu_with_children if children else time.process_time
    s_rounds: list[float] = []
    b_rounds: list[float] = []
    for i in range(repeat):
        sides = [(subject, s_rounds), (baseline, b_rounds)]
        if sample_s is not None and i % 2:
            sides.reverse()
        for fn, rounds in sides:
            gc.collect()
            forget_layouts()
            start = clock()
            for _ in range(number):
                fn()
            rounds.append((clock() - start) / number)
    subject_s, baseline_s = statistics.median(s_rounds), statistics.median(b_rounds)
    if sample_s is None:
        return Ratio(name, what, subject_s, baseline_s, target)
    paired = statistics.median(s / b for s, b in zip(s_rounds, b_rounds, strict=True))
    return Ratio(name, what, subject_s, baseline_s, target, paired)


def _cpu_with_children() -> float:
    """Seconds of CPU this process and the children it waited for have used."""
    import resource  # (Unix; so is the bench)

    own, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime


def _calls_lasting(seconds: float, *fns: Callable[[], object]) -> int:
    """How many calls of the fastest of ``fns`` last at least ``seconds`` (each timed over a
    tenth of that)."""
    fastest = min(_seconds_per_call(fn, seconds / 10) for fn in fns)
    return max(1, math.ceil(seconds / fastest))


def _seconds_per_call(fn: Callable[[], object], seconds: float) -> float:
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        fn()
        calls += 1
    return elapsed / calls
