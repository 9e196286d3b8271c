"""Run the benchmarks: ``python -m benchmarks [NAME ...]`` (module names without ``bench_``)."""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from pathlib import Path

import benchmarks


def main(argv: list[str]) -> int:
    names = sorted(
        m.name[len("bench_") :]
        for m in pkgutil.iter_modules([str(Path(benchmarks.__file__).parent)])
        if m.name.startswith("bench_")
    )
    chosen = argv or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        print(f"unknown benchmark {unknown[0]!r}; have: {', '.join(names)}", file=sys.stderr)
        return 2
    over = 0
    for name in chosen:
        # The load, with each module: rows that use a core the baseline does not (F1, F2) read
        # higher on a busy machine, and a run's figures are read against it.
        print(f"-- {name} (load {os.getloadavg()[0]:.2f})", flush=True)
        module = importlib.import_module(f"benchmarks.bench_{name}")
        for result in module.run():
            print(result.line(), flush=True)
            over += not result.ok
    print(f"-- done (load {os.getloadavg()[0]:.2f}): {over} over target", flush=True)
    return 1 if over else 0


raise SystemExit(main(sys.argv[1:]))
