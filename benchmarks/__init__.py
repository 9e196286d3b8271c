"""Benchmarks: every figure is a ratio against a baseline measured in the same process.

Each ``bench_*.py`` module defines ``run() -> list[Ratio]``; ``python -m benchmarks``
(``nox -s bench``) runs them all, or only those named on the command line.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from codegen.render.workers import forget_layouts


@dataclass(frozen=True)
class Ratio:
    name: str  # e.g. "G1"
    what: str
    subject_s: float
    baseline_s: float
    target: float | None  # the ratio must stay at or below this; None: for information

    @property
    def ratio(self) -> float:
        return self.subject_s / self.baseline_s

    @property
    def ok(self) -> bool:
        return self.target is None or self.ratio <= self.target

    def line(self) -> str:
        if self.target is None:
            verdict = "no target, for information"
        else:
            verdict = f"target <= {self.target}x, {'ok' if self.ok else 'OVER TARGET'}"
        return (
            f"{self.name:4} {self.ratio:6.2f}x  ({verdict})  "
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
) -> Ratio:
    """Time subject and baseline interleaved, so that machine noise hits both alike. Each
    round starts with the garbage of the one before collected, so that neither side pays
    for the other's (a generation leaves its garbage to be collected after it), and, as a
    CLI run does, with no layouts of black remembered (see codegen.render.workers.remember)."""
    subject()
    baseline()
    s_rounds, b_rounds = [], []
    for _ in range(repeat):
        for fn, rounds in ((subject, s_rounds), (baseline, b_rounds)):
            gc.collect()
            forget_layouts()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            rounds.append((time.perf_counter() - start) / number)
    return Ratio(name, what, statistics.median(s_rounds), statistics.median(b_rounds), target)
