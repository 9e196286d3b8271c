"""How much of the protocol the generated ``convert.py`` converts over upstream's pairs
(issue 57): messages generated from upstream's schemas, every method pair, both directions,
each converted with the caller's supply (``upstream_messages.SUPPLY``) and judged against the
target version's upstream schema; v1 messages that convert are also round-tripped back and
compared with the input, differences allowed only where ``convert.LOSSY`` declares them.

    python tests/support/conversion_coverage.py                 # the figures
    python tests/support/conversion_coverage.py --failures      # and what fails, grouped
    python tests/support/conversion_coverage.py --pair 2026-08 --count 100 --failures --examples

It generates each pair's package with the ``acp-codegen`` of the Python it runs on (the
fragments shipped with that installation) into a temporary folder, or uses ``--packages DIR``
(kept between runs: ``--reuse`` skips generating where the package is there already).
Exit status 1 where v1 -> v2 converts less than the threshold over upstream's own release
pairs (``THRESHOLD_PAIRS``; the official SDK's older v1 beside the newest v2 is measured
alone), where no message of a method pair of those (a method in one kind:
``mcp/message:notification``) converts in a direction, or anything breaks (an invalid output,
an exception other than ConversionError, a changed input, a failed round trip).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # run as a script: tests/ on the path, as pytest puts it
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.reference_data import missing
from support.upstream_messages import (
    COVERAGE_COUNT,
    COVERAGE_THRESHOLD,
    PAIRS,
    THRESHOLD_PAIRS,
    Tally,
    generated_convert,
    import_convert,
    measure,
    package_name,
)


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "   - "


def report(tallies: dict[tuple[str, int], Tally], failures: bool, examples: bool, limit: int) -> bool:
    """Print the figures (and the failure groups); True where the measurement passes."""
    columns = ("messages", "converted", "refused", "broken", "round trip failed")

    def row(label: str, source: int, tally: Tally) -> str:
        cells = (
            str(tally.total),
            _percent(tally.converted, tally.total),
            str(tally.refused),
            str(tally.broken),
            str(tally.round_trip_failed) if source == 1 else "-",
        )
        direction = f"v{source} -> v{3 - source}"
        return f"{label:26} {direction:9} " + " ".join(f"{c:>{len(h)}}" for c, h in zip(cells, columns, strict=True))

    print(f"{'pair':26} {'direction':9} " + " ".join(columns))
    totals = {1: Tally(), 2: Tally()}
    for (pair, source), tally in tallies.items():
        if pair in THRESHOLD_PAIRS:
            totals[source].add(tally)
        print(row(pair, source, tally))
    for source, tally in totals.items():
        print(row("total", source, tally))  # (of the upstream pairs the threshold is over)
    forward = totals[1]
    rate = forward.converted / forward.total if forward.total else 1.0
    broken = any(t.broken or (s == 1 and t.round_trip_failed) for (_, s), t in tallies.items())
    # Every method and kind both versions define converts at least one message, each direction.
    none = [
        f"{pair} v{source} -> v{3 - source}: {m}"
        for (pair, source), t in tallies.items()
        if pair in THRESHOLD_PAIRS
        for m in t.none_converted
    ]
    for line in none:
        print(f"none converted: {line}")
    ok = rate >= COVERAGE_THRESHOLD and not broken and not none
    verdict = "ok" if ok else "FAILS"
    print(
        f"v1 -> v2 converts {100 * rate:.1f}% in total over {', '.join(THRESHOLD_PAIRS)}"
        f" (threshold {100 * COVERAGE_THRESHOLD:.0f}%); nothing broken: {verdict}"
    )
    every = sum(len(t.by_message or {}) for (pair, _), t in tallies.items() if pair in THRESHOLD_PAIRS)
    print(f"methods in each kind, per pair and direction, converting a message or more: {every - len(none)} of {every}")
    if failures:
        for (pair, source), tally in tallies.items():
            groups = sorted((tally.groups or {}).items(), key=lambda item: (-item[1], item[0]))
            if not groups:
                continue
            print(f"\n== {pair}, v{source} -> v{3 - source}: {len(groups)} groups")
            print(
                "count  status     method                             pointer                                  reason"
            )
            for key, count in groups[:limit]:
                status, method, pointer, reason = key
                print(f"{count:5}  {status:10} {method:34} {pointer or '/':40} {reason[:200]}")
                if examples:
                    print("       e.g. " + json.dumps((tally.examples or {})[key], ensure_ascii=False)[:1000])
            if len(groups) > limit:
                print(f"  ... {len(groups) - limit} more groups (--limit)")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pair", action="append", choices=sorted(PAIRS), help="only this pair (repeatable)")
    parser.add_argument("--count", type=int, default=COVERAGE_COUNT, help="messages per method pair and direction")
    parser.add_argument("--failures", action="store_true", help="list the failures, grouped, with counts")
    parser.add_argument("--examples", action="store_true", help="with --failures: a message of each group")
    parser.add_argument("--limit", type=int, default=60, help="groups listed per pair and direction")
    parser.add_argument("--packages", type=Path, help="generate the packages here (default: a temporary folder)")
    parser.add_argument("--reuse", action="store_true", help="with --packages: use the packages already there")
    args = parser.parse_args(argv)
    pairs = args.pair or list(PAIRS)
    absent = [p for pair in pairs for p in PAIRS[pair] if not p.is_file()]
    if absent:
        print(missing(absent[0]), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        root = (args.packages or Path(tmp)).resolve()
        root.mkdir(parents=True, exist_ok=True)
        tallies: dict[tuple[str, int], Tally] = {}
        for pair in pairs:
            if args.reuse and (root / package_name(pair) / "convert.py").is_file():
                convert = import_convert(root, package_name(pair))
            else:
                try:
                    convert = generated_convert(pair, root)
                except AssertionError as error:
                    print(error, file=sys.stderr)
                    return 1
            for source in (1, 2):
                tallies[(pair, source)] = measure(convert, pair, source, args.count)
        return 0 if report(tallies, args.failures, args.examples, args.limit) else 1


if __name__ == "__main__":
    sys.exit(main())
