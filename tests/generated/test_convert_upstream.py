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
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from acp_codegen.errors import SchemaError
from acp_codegen.generate.pipeline import generate
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from support import ROOT, edit_json
from support.reference_data import needs
from support.upstream_messages import (
    COVERAGE_COUNT,
    COVERAGE_THRESHOLD,
    FEATURE,
    PAIRS,
    SUPPLY,
    THRESHOLD_PAIRS,
    MethodPair,
    RandomChooser,
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
    validator,
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


def test_every_method_and_kind_both_versions_define_converts_in_both_directions(
    tallies: dict[tuple[str, int], Tally],
) -> None:
    """Issue 64: at least one message of each, each direction (mcp/message's request and
    notification, the response given the request's method), over upstream's own pairs (the
    SDK's schema-v1.19.0 and 2026-11's v2 name two designs of mcp/message, declared apart)."""
    none = {
        f"{pair} v{source}: {m}"
        for (pair, source), t in tallies.items()
        if pair in THRESHOLD_PAIRS
        for m in t.none_converted
    }
    assert none == set()
    assert {"mcp/message:notification", "mcp/message:request", "mcp/message:response"} <= set(
        tallies[("2026-11", 2)].by_message or {}
    )


def test_v1_to_v2_to_v1_gives_back_the_input_but_where_lossy(tallies: dict[tuple[str, int], Tally]) -> None:
    failed = sum(t.round_trip_failed for (_, source), t in tallies.items() if source == 1)
    assert failed == 0, _groups(tallies, {"round-trip"})


# -- a method in two kinds (issue 64) ---------------------------------------------------------

TWO_KINDS = [("2026-08", "mcp/message"), ("v1.21.0+v2.0.0-alpha.3", "mcp/message"), ("2026-11", "mcp/message"),
             ("2026-11", "proxy/successor")]  # fmt: skip


@pytest.mark.parametrize(("pair", "method"), TWO_KINDS)
def test_a_method_that_is_a_request_and_a_notification_converts_each_kind(
    packages: Packages, pair: str, method: str
) -> None:
    """Both versions define it as both: a request (with an id) converts as the request, a
    notification (without) as the notification, a response given the request's method; each
    output valid against the target's upstream definition of that kind."""
    convert = packages.convert(pair)
    kinds = {mp.kind: mp for mp in pair_methods(pair) if mp.v1_method == method}
    assert set(kinds) == {"request", "notification", "response"}
    for kind, mp in kinds.items():
        for source in (1, 2):
            drawn = (message_for(pair, mp, source, RandomChooser(random.Random(seed))) for seed in range(50))
            message = next(m for m in drawn if m is not None)
            outcome = convert_once(convert, pair, mp, message, source, SUPPLY)
            assert outcome.status == "converted", (kind, source, describe(outcome))


def test_a_kind_one_version_lacks_is_declared_and_refused_with_its_reason(tmp_path: Path) -> None:
    """2026-11's v2 taken as if it had proxy/successor as a request alone: generation names
    the kind v1 alone has until it is declared; then the request converts and v1's
    notification is refused with the declared reason, at /method."""
    v1, v2 = PAIRS["2026-11"]
    base2 = tmp_path / "v2" / "schema.unstable.json"
    base2.parent.mkdir()
    base2.write_text(v2.read_text(encoding="utf-8"), encoding="utf-8")
    edit_json(base2, lambda s: [s["$defs"]["ProxySuccessorNotification"].pop(k) for k in ("x-method", "x-side")])
    bases = {1: v1, 2: base2}
    with pytest.raises(SchemaError) as error:
        generate(ROOT / "schema", frozenset({FEATURE}), tmp_path, bases)
    assert (
        "method proxy/successor as a notification (proxy) exists in v1 only (v2 has it as a request): declare that"
        ' kind in methodsOnlyIn ("kind": "notification")'
    ) in str(error.value)
    ours = tmp_path / "ours.json"
    why = "our v2 forwards requests alone"
    entry = {"method": "proxy/successor", "kind": "notification", "version": 1, "why": why}
    ours.write_text(json.dumps({"versions": [1, 2], "methodsOnlyIn": [entry]}), encoding="utf-8")
    result = generate(ROOT / "schema", frozenset({FEATURE}), tmp_path, bases, declarations=[ours])
    for rel, text in result.files.items():
        (tmp_path / "kinds64" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "kinds64" / rel).write_text(text, encoding="utf-8")
    convert = import_convert(tmp_path, "kinds64")
    request = {"jsonrpc": "2.0", "id": 1, "method": "proxy/successor", "params": {"method": "x/y"}}
    assert convert.convert_message(request, source=1, target=2) == request
    assert convert.convert_message(request, source=2, target=1) == request
    notification = {"jsonrpc": "2.0", "method": "proxy/successor", "params": {"method": "x/y"}}
    with pytest.raises(convert.ConversionError) as refused:
        convert.convert_message(notification, source=1, target=2)
    assert (refused.value.pointer, refused.value.reason) == (
        "/method",
        f"proxy/successor as a notification exists in v1 only: {why}",
    )
    with pytest.raises(convert.ConversionError, match=r"^/: proxy/successor is a request; the message lacks an id$"):
        convert.convert_message(notification, source=2, target=1)


# -- where a refusal points (issue 64) ---------------------------------------------------------

# What a value is made, to make it unconvertible: a relative path (no AbsolutePath, no URI), a
# value of another JSON type, a number out of v2's bounds.
SPOILERS = ("relative/dir", 12345, "x", -5, 7.5)
# Values of any JSON (metadata, unknown properties): carried as they are, whatever they hold.
ANY_VALUE = ("_meta", "extraField")


def _leaves(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() if k not in ANY_VALUE for p in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))]
    return [path] if value is not None else []


@pytest.mark.parametrize(("pair", "source"), [(pair, source) for pair in sorted(PAIRS) for source in (1, 2)])
def test_a_value_made_unconvertible_is_where_the_refusal_points(packages: Packages, pair: str, source: int) -> None:
    """A message that converts, one value of it spoilt: where the conversion refuses it, the
    ConversionError's pointer names that value (within a union, the member the message fits:
    the stdio server's `command`, not the http server's `url`)."""
    convert = packages.convert(pair)
    kinds = pair_methods(pair)

    @settings(
        max_examples=120,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )
    @given(st.data())
    def check(data: st.DataObject) -> None:
        mp = data.draw(st.sampled_from(kinds), label="method")
        message = message_for(pair, mp, source, hypothesis_chooser(data))
        assume(message is not None and convert_once(convert, pair, mp, message, source, SUPPLY).status == "converted")
        assert message is not None
        body = "result" if "result" in message else "params"
        leaves = _leaves(message[body])
        assume(leaves)
        path = data.draw(st.sampled_from(leaves), label="value")
        spoilt = copy.deepcopy(message)
        holder, key = spoilt, (body, *path)
        for part in key[:-1]:
            holder = holder[part]
        holder[key[-1]] = data.draw(st.sampled_from(SPOILERS), label="made")
        outcome = convert_once(convert, pair, mp, spoilt, source, SUPPLY)
        valid = validator(PAIRS[pair][source - 1], mp.side(source)[1]).is_valid(spoilt[body])
        # (a constraint both versions state, such as a minimum, is the models' to check, not
        # the conversion's: invalid input out of bounds may come out as it went in)
        assert outcome.status != "broken" or not valid, describe(outcome)
        assume(outcome.status == "refused")
        expected = "".join(f"/{p}" for p in (body, *path))
        said = f"{describe(outcome)}\nspoilt {expected} of {json.dumps(spoilt)}"
        if valid:
            # Still valid in its version, the object may now be another member of a union
            # (a config option's value no longer a boolean: the string one, whose `type`
            # cannot convert); the refusal is then of a key beside the value.
            assert outcome.pointer.rpartition("/")[0] == expected.rpartition("/")[0], said
        else:
            assert outcome.pointer == expected, said

    check()


# -- value rules where the target states them (issue 64) --------------------------------------

ANNOTATED = {  # a v1 prompt whose text block's annotation holds no timestamp
    "jsonrpc": "2.0",
    "id": 3,
    "method": "session/prompt",
    "params": {
        "sessionId": "sess_1",
        "prompt": [{"type": "text", "text": "hi", "annotations": {"lastModified": "yesterday", "priority": 0.5}}],
    },
}


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_a_value_rule_holds_where_the_target_states_it(packages: Packages, pair: str) -> None:
    """2026-11's v2 takes any string as an annotation's lastModified: the v1 prompt converts
    as it is. alpha.3's and 2026-08's state a date-time, but read an invalid one as absent
    (x-deserialize-default-on-error): it is omitted, and LOSSY says so. Only 2026-11's v2
    requires a prompt to hold an item."""
    convert = packages.convert(pair)
    mp = next(mp for mp in pair_methods(pair) if mp.id == "session/prompt:request")
    outcome = convert_once(convert, pair, mp, ANNOTATED, 1, SUPPLY)
    assert outcome.status == "converted", describe(outcome)  # (valid against the target's upstream schema)
    annotations = outcome.output["params"]["prompt"][0]["annotations"]
    lossy = convert.LOSSY[(1, 2)].get("Annotations", ())
    newest = PAIRS[pair][1] == PAIRS["2026-11"][1]  # (2026-11's v2, beside its own v1 or the SDK's)
    if newest:
        assert annotations == {"lastModified": "yesterday", "priority": 0.5} and "lastModified" not in lossy
    else:
        assert annotations == {"priority": 0.5} and "lastModified" in lossy
    timestamp = copy.deepcopy(ANNOTATED)
    timestamp["params"]["prompt"][0]["annotations"]["lastModified"] = "20261028T0930+0100"
    converted = convert.convert_message(timestamp, source=1, target=2)["params"]["prompt"][0]["annotations"]
    assert converted["lastModified"] == ("20261028T0930+0100" if newest else "2026-10-28T09:30:00+01:00")
    empty = {**ANNOTATED, "params": {"sessionId": "sess_1", "prompt": []}}
    if newest:
        with pytest.raises(convert.ConversionError, match=r"^/params/prompt: v2 requires at least one item here$"):
            convert.convert_message(empty, source=1, target=2)
    else:
        assert convert.convert_message(empty, source=1, target=2)["params"]["prompt"] == []


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_a_stdio_server_with_a_relative_command_is_refused_at_its_command(packages: Packages, pair: str) -> None:
    """The issue's example: valid v1, refused for the stdio server's command (v2 wants an
    absolute path), not for the url the http server would need."""
    convert = packages.convert(pair)
    server = {"name": "files", "command": "npx", "args": ["-y", "server-files"], "env": []}
    message = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": [server]}}
    with pytest.raises(convert.ConversionError) as refused:
        convert.convert_message(message, source=1, target=2)
    assert (refused.value.pointer, refused.value.reason) == (
        "/params/mcpServers/0/command",
        "a relative path cannot become a v2 AbsolutePath",
    )
    server["command"] = "/usr/bin/npx"
    assert convert.convert_message(message, source=1, target=2)["params"]["mcpServers"][0]["command"] == "/usr/bin/npx"
