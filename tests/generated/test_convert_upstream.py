"""The generated ``convert.py`` over the three published upstream pairs (issue 57): it
generates, with conversions, feature on and off; over every method pair both versions
define, both directions, a message valid against the source version's upstream schema
converts into one valid against the target version's, or is refused with ConversionError,
and nothing else happens (no other exception, the input untouched); in total at least 90%
of v1 messages convert; v1 -> v2 -> v1 gives back the input except where ``convert.LOSSY``
declares a difference.

The messages come from upstream's schemas (``support.upstream_messages``: hypothesis draws
the property tests' choices and shrinks a failure to a small message; the coverage figures
use seeded draws, the same every run). ``python tests/support/conversion_coverage.py
--failures`` prints the same figures and the failures grouped by method, pointer and reason.

Every test here is ``slow`` (a generation over full upstream schemas takes seconds) and
skips, naming ``nox -s fetch_data``, where the reference data is absent.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from support.reference_data import needs
from support.upstream_messages import (
    COVERAGE_COUNT,
    COVERAGE_THRESHOLD,
    PAIRS,
    SUPPLY,
    THRESHOLD_PAIRS,
    MethodPair,
    Tally,
    convert_once,
    describe,
    hypothesis_chooser,
    import_convert,
    measure,
    message_for,
    package_name,
    pair_methods,
    run_generate,
)

HAVE_PAIRS = all(p.is_file() for pair in PAIRS.values() for p in pair)
pytestmark = [pytest.mark.slow, needs(*(p for pair in PAIRS.values() for p in pair))]


def _cases() -> list[tuple[str, int, MethodPair]]:
    if not HAVE_PAIRS:  # (collected all the same: the mark above skips them)
        return []
    return [(pair, source, mp) for pair in PAIRS for mp in pair_methods(pair) for source in (1, 2)]


CASES = _cases()


class Packages:
    """The package generated over each pair and feature setting, once a module (a
    generation takes seconds), with the generation's outcome kept for the exit-status test."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runs: dict[tuple[str, bool], tuple[int, str]] = {}
        self.modules: dict[str, ModuleType] = {}

    def run(self, pair: str, feature: bool) -> tuple[int, str]:
        if (pair, feature) not in self.runs:
            done = run_generate(pair, self.root / package_name(pair, feature), feature)
            self.runs[(pair, feature)] = (done.returncode, done.stdout + done.stderr)
        return self.runs[(pair, feature)]

    def convert(self, pair: str) -> ModuleType:
        """The convert module of ``pair`` with the feature on; fails where generation did."""
        if pair not in self.modules:
            code, out = self.run(pair, True)
            if code != 0:
                pytest.fail(f"generate over {pair} (feature on) exited {code}:\n{out[-4000:]}")
            self.modules[pair] = import_convert(self.root, package_name(pair, True))
        return self.modules[pair]


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Packages:
    return Packages(tmp_path_factory.mktemp("upstream-pairs"))


@pytest.mark.parametrize("feature", [True, False], ids=["feature-on", "feature-off"])
@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_generate_with_conversions_exits_0(packages: Packages, pair: str, feature: bool) -> None:
    code, out = packages.run(pair, feature)
    assert code == 0, out[-4000:]
    package = packages.root / package_name(pair, feature)
    assert {"convert.py", "v1/models.py", "v2/models.py"} <= {
        p.relative_to(package).as_posix() for p in package.rglob("*.py")
    }


# -- the property: every method pair, both directions -----------------------------------------


@pytest.mark.parametrize(
    ("pair", "source", "mp"), CASES, ids=[f"{pair}-v{source}-{mp.id}" for pair, source, mp in CASES]
)
def test_a_valid_message_converts_to_a_valid_one_or_is_refused(
    packages: Packages, pair: str, source: int, mp: MethodPair
) -> None:
    convert = packages.convert(pair)

    @settings(
        max_examples=20,
        deadline=None,
        database=None,
        derandomize=True,  # the same messages every run: CI and a local run agree
        # No shrinking: a failure is reported as found (the coverage script groups them all), so
        # that a conversion failing many method pairs costs seconds, not a shrink each.
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )
    @given(st.data())
    def check(data: st.DataObject) -> None:
        message = message_for(pair, mp, source, hypothesis_chooser(data))
        assume(message is not None)
        assert message is not None
        # Without the caller's values (the conversion may refuse for want of them), and with them.
        for supply in (None, SUPPLY):
            outcome = convert_once(convert, pair, mp, message, source, supply)
            assert outcome.status in ("converted", "refused"), (
                f"{describe(outcome)}\ninput (supply={supply}): {json.dumps(message, ensure_ascii=False)}"
            )

    check()


def test_convert_message_takes_the_supply_without_changing_it(packages: Packages) -> None:
    pair = "2026-08"
    convert = packages.convert(pair)
    supply = copy.deepcopy(SUPPLY)
    message = {"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}
    convert.convert_message(message, source=1, target=2, supply=supply)
    assert supply == SUPPLY


# -- coverage and round trips ----------------------------------------------------------------


@pytest.fixture(scope="module")
def tallies(packages: Packages) -> dict[tuple[str, int], Tally]:
    return {(pair, source): measure(packages.convert(pair), pair, source) for pair in PAIRS for source in (1, 2)}


def _groups(tallies: dict[tuple[str, int], Tally], statuses: set[str], limit: int = 25) -> str:
    lines = []
    for (pair, source), tally in tallies.items():
        for (status, method, pointer, reason), count in sorted((tally.groups or {}).items(), key=lambda i: -i[1]):
            if status in statuses:
                lines.append(f"{pair} v{source}->v{3 - source} {count}x {status} {method} {pointer or '/'}: {reason}")
    return "\n".join(lines[:limit]) + (f"\n... {len(lines) - limit} more" if len(lines) > limit else "")


def test_nothing_converts_into_an_invalid_message(tallies: dict[tuple[str, int], Tally]) -> None:
    assert sum(t.broken for t in tallies.values()) == 0, _groups(tallies, {"broken"})


def test_ninety_percent_of_v1_messages_convert_in_total(tallies: dict[tuple[str, int], Tally]) -> None:
    forward = Tally()
    for (pair, source), tally in tallies.items():
        if source == 1 and pair in THRESHOLD_PAIRS:
            forward.add(tally)
    # every pair measured, dozens of method pairs each
    assert forward.total >= len(THRESHOLD_PAIRS) * COVERAGE_COUNT * 20
    rate = forward.converted / forward.total
    assert rate >= COVERAGE_THRESHOLD, (
        f"{100 * rate:.1f}% of {forward.total} v1 messages convert; the most frequent failures:\n"
        + _groups({k: v for k, v in tallies.items() if k[1] == 1}, {"refused", "broken"})
    )


def test_v1_to_v2_to_v1_gives_back_the_input_but_where_lossy(tallies: dict[tuple[str, int], Tally]) -> None:
    failed = sum(t.round_trip_failed for (_, source), t in tallies.items() if source == 1)
    assert failed == 0, _groups(tallies, {"round-trip"})
