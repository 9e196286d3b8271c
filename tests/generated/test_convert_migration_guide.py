"""The migration guide's before/after examples (upstream ``docs/protocol/v2/migration.mdx``,
read from the reference data) as golden tests of the generated ``convert.py`` over the pair
the guide describes (2026-08): each v1 example converted to v2 and each v2 example to v1
gives the guide's other side.

The guide describes the stable surfaces (``schema.json``); the examples run over those and
over the unstable files (``schema.unstable.json``, issue 57's bases), where v1 has some of
v2's shapes too (``plan_update``): ``UNSTABLE_TARGETS`` says where that changes the target.

The guide's two sides are not always exact translations of each other. For each example
and direction, ``GAPS`` names every part of the guide's target that the conversion cannot
give, with a one-line why:

- ``not_carried``: the guide's target has it, the source does not carry it; the output
  must not have it (or only the given default, where the target version's schema has one);
- ``extra``: the source carries it, the guide's other side leaves it out; the output must have it;
- ``value``: both have it, with values the guide chose for its own side.

Everything else must match the guide exactly. The outputs themselves are golden files
(``tests/golden/migration_guide/``), written by ``--update-goldens`` only.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support import SHARED_UPSTREAM
from support.reference_data import needs
from support.upstream_messages import import_convert, load_schema, methods, package_name, run_generate, validator

GUIDE = SHARED_UPSTREAM / "docs" / "v2-migration.mdx"
PAIR = "2026-08"  # the guide's schemas (the same upstream commit)
SCHEMAS = ("schema.json", "schema.unstable.json")
BASES = {schema: (SHARED_UPSTREAM / "v1" / schema, SHARED_UPSTREAM / "v2" / schema) for schema in SCHEMAS}
pytestmark = [pytest.mark.slow, needs(GUIDE, *BASES[SCHEMAS[0]], *BASES[SCHEMAS[1]])]

SESSION = "sess_abc123"  # the session the guide's other examples use


# -- reading the guide -----------------------------------------------------------------------

FENCE = re.compile(r"^[ \t]*```json([^\n]*)\n(.*?)^[ \t]*```", re.S | re.M)
HEADING = re.compile(r"^#{2,4} (.+)$", re.M)


def _heading_before(text: str, at: int) -> str:
    headings = [m for m in HEADING.finditer(text) if m.start() < at]
    return headings[-1].group(1).strip() if headings else ""


def code_groups(text: str) -> dict[tuple[str, str], dict[int, Any]]:
    """Each ``<CodeGroup>`` of v1/v2 JSON fences: (heading above it, the label's rest, e.g.
    "request") -> {1: the v1 JSON, 2: the v2 JSON}."""
    groups: dict[tuple[str, str], dict[int, Any]] = {}
    for group in re.finditer(r"<CodeGroup>(.*?)</CodeGroup>", text, re.S):
        heading = _heading_before(text, group.start())
        for fence in FENCE.finditer(group.group(1)):
            label = fence.group(1).split()
            if label and label[0] in ("v1", "v2"):
                key = (heading, " ".join(label[1:]))
                groups.setdefault(key, {})[int(label[0][1])] = json.loads(fence.group(2))
    return groups


def versioned_sections(text: str) -> dict[str, dict[int, Any]]:
    """Sections headed "v1: ..." and "v2: ..." one after the other, each with a JSON example:
    the heading's rest of the v1 section -> {1: its first JSON, 2: the v2 section's first}."""
    found: dict[str, dict[int, Any]] = {}
    headings = list(HEADING.finditer(text))
    for this, after in itertools.pairwise(headings):
        first, second = this.group(1), after.group(1)
        if first.startswith("v1:") and second.startswith("v2:"):
            end = headings[headings.index(after) + 1].start() if after is not headings[-1] else len(text)
            v1 = FENCE.search(text, this.end(), after.start())
            v2 = FENCE.search(text, after.end(), end)
            if v1 and v2:
                found[first[3:].strip()] = {1: json.loads(v1.group(2)), 2: json.loads(v2.group(2))}
    return found


def standalone(text: str, heading: str) -> Any:
    """The first JSON example under ``heading``."""
    at = next(m for m in HEADING.finditer(text) if m.group(1).strip() == heading)
    fence = FENCE.search(text, at.end())
    assert fence is not None
    return json.loads(fence.group(2))


# -- the examples, as messages ---------------------------------------------------------------


def _update(update: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SESSION, "update": update}}


def _from_update(message: dict[str, Any]) -> Any:
    return message["params"]["update"]


def _commands(command: dict[str, Any]) -> dict[str, Any]:
    return _update({"sessionUpdate": "available_commands_update", "availableCommands": [command]})


def _from_commands(message: dict[str, Any]) -> Any:
    (command,) = message["params"]["update"]["availableCommands"]
    return command


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Gap:
    kind: str  # "not_carried", "extra" or "value"
    pointer: str  # in the guide's target (not_carried, value) or in the output (extra)
    why: str
    default: Any = None  # not_carried: the one value the output may hold there instead of nothing
    has_default: bool = False


def not_carried(pointer: str, why: str, **default: Any) -> Gap:
    return Gap("not_carried", pointer, why, default.get("default"), "default" in default)


def extra(pointer: str, why: str) -> Gap:
    return Gap("extra", pointer, why)


def value(pointer: str, why: str) -> Gap:
    return Gap("value", pointer, why)


PROTOCOL_VERSION = (
    "each side of the guide negotiates its own version; a conversion carries the number the message holds"
)


@dataclass(frozen=True)
class Example:
    """One before/after pair: where the guide has it, how it is a message, and what each
    direction cannot give of the guide's target (``gaps[source]``)."""

    find: Callable[[str], dict[int, Any]]
    method: str | None = None  # of the request, for a response
    wrap: Callable[[Any], dict[str, Any]] = _same  # the guide's JSON -> the message converted
    unwrap: Callable[[dict[str, Any]], Any] = _same
    supply: dict[int, dict[str, Any]] = field(default_factory=dict)  # by source version
    gaps: dict[int, tuple[Gap, ...]] = field(default_factory=dict)  # by source version


def _group(heading: str, rest: str) -> Callable[[str], dict[int, Any]]:
    return lambda text: code_groups(text)[(heading, rest)]


def _auth_login(text: str) -> dict[int, Any]:
    # The guide shows auth/login alone and says its params are unchanged from authenticate:
    # the v1 side is the same message under the v1 name.
    v2 = standalone(text, "Authentication")
    return {1: {**v2, "method": "authenticate"}, 2: v2}


INITIALIZE = "Role-agnostic `info` and `capabilities`"
EXAMPLES: dict[str, Example] = {
    "initialize-request": Example(
        _group(INITIALIZE, "request"),
        gaps={
            1: (
                value("/params/protocolVersion", PROTOCOL_VERSION),
                not_carried("/params/info/title", "the v1 clientInfo has no title"),
            ),
            2: (
                value("/params/protocolVersion", PROTOCOL_VERSION),
                not_carried("/params/clientCapabilities/fs", "v2 has no client file system capability", default={}),
                not_carried(
                    "/params/clientCapabilities/terminal", "v2 has no client terminal capability", default=False
                ),
                extra("/params/clientInfo/title", "the v2 info has a title the guide's v1 side leaves out"),
            ),
        },
    ),
    "initialize-response": Example(
        _group(INITIALIZE, "response"),
        method="initialize",
        gaps={
            1: (
                value("/result/protocolVersion", PROTOCOL_VERSION),
                not_carried("/result/info/title", "the v1 agentInfo has no title"),
                not_carried("/result/capabilities/session/delete", "the v1 side does not advertise session/delete"),
                not_carried(
                    "/result/capabilities/session/additionalDirectories",
                    "the v1 side does not advertise additional directories",
                ),
            ),
            2: (
                value("/result/protocolVersion", PROTOCOL_VERSION),
                not_carried("/result/agentCapabilities/loadSession", "v2 has no session/load", default=False),
                not_carried("/result/agentCapabilities/mcpCapabilities/sse", "v2 has no SSE transport", default=False),
                extra("/result/agentCapabilities/sessionCapabilities/delete", "the v2 side advertises session/delete"),
                extra(
                    "/result/agentCapabilities/sessionCapabilities/additionalDirectories",
                    "the v2 side advertises additional directories",
                ),
                extra("/result/agentInfo/title", "the v2 info has a title the guide's v1 side leaves out"),
            ),
        },
    ),
    "plan": Example(
        _group("Plans", ""),
        wrap=_update,
        unwrap=_from_update,
        # The v1 plan has no identity: the caller names the plan (the guide's planId).
        supply={1: {"planId": "plan-1"}},
    ),
    "slash-command": Example(_group("Slash commands", ""), wrap=_commands, unwrap=_from_commands),
    "prompt-response": Example(
        lambda text: versioned_sections(text)["the response is the turn"],
        method="session/prompt",
        # A v2 prompt response does not end the turn: the caller says how the turn ended.
        supply={2: {"stopReason": "end_turn"}},
    ),
    "auth-login-request": Example(_auth_login),
}


# -- the comparison --------------------------------------------------------------------------


def _tokens(pointer: str) -> list[str]:
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def _get(doc: Any, pointer: str) -> tuple[bool, Any]:
    for token in _tokens(pointer):
        if isinstance(doc, list) and token.isdigit() and int(token) < len(doc):
            doc = doc[int(token)]
        elif isinstance(doc, dict) and token in doc:
            doc = doc[token]
        else:
            return False, None
    return True, doc


def _drop(doc: Any, pointer: str) -> Any:
    doc = json.loads(json.dumps(doc))
    *parents, last = _tokens(pointer)
    node = doc
    for token in parents:
        node = node[int(token)] if isinstance(node, list) else node.get(token, {})
    if isinstance(node, dict):
        node.pop(last, None)
    return doc


def compare(output: Any, target: Any, gaps: tuple[Gap, ...]) -> list[str]:
    """How ``output`` differs from the guide's ``target`` beyond ``gaps``."""
    problems = []
    for gap in gaps:
        in_target, _ = _get(target, gap.pointer)
        in_output, got = _get(output, gap.pointer)
        if gap.kind == "not_carried":
            assert in_target, f"the guide has nothing at {gap.pointer}: a stale gap"
            if in_output and not (gap.has_default and got == gap.default):
                problems.append(f"{gap.pointer}: {got!r} where the source carries nothing ({gap.why})")
        elif gap.kind == "extra":
            assert not in_target, f"the guide has {gap.pointer}: a stale gap"
            if not in_output:
                problems.append(f"{gap.pointer}: missing, though the source carries it ({gap.why})")
        else:
            assert in_target, f"the guide has nothing at {gap.pointer}: a stale gap"
        output, target = _drop(output, gap.pointer), _drop(target, gap.pointer)
    if output != target:
        problems.append(
            "the rest differs from the guide:\n  converted: "
            + json.dumps(output, sort_keys=True)
            + "\n  guide:     "
            + json.dumps(target, sort_keys=True)
        )
    return problems


# Over the unstable files, where the target differs from the guide's (stable) other side:
# (example, source version) -> the target, from the guide's two sides.
UNSTABLE_TARGETS: dict[tuple[str, int], Callable[[dict[int, Any]], Any]] = {
    # v1's unstable schema has plan_update too: the v2 update is carried as it is.
    ("plan", 2): lambda sides: sides[2],
}


def schema_errors(message: dict[str, Any], version: int, method: str | None, schema: str = SCHEMAS[0]) -> list[str]:
    """Where ``message`` is not valid against the upstream ``schema`` of ``version``."""
    kind = "response" if "result" in message else "request" if "id" in message else "notification"
    path = BASES[schema][version - 1]
    name = methods(load_schema(path))[(method or message["method"], kind)]
    body = message["result"] if kind == "response" else message["params"]
    return [f"{e.instance_path}: {e.message[:200]}" for e in validator(path, name).iter_errors(body)]


# -- the tests -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


@pytest.fixture(scope="module", params=SCHEMAS, ids=["stable", "unstable"])
def convert(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ModuleType]:
    """(schema file, the convert module generated over the 2026-08 pair of those files)."""
    schema: str = request.param
    root: Path = tmp_path_factory.mktemp("guide-pair")
    package = package_name(f"{PAIR} {schema}")
    done = run_generate(PAIR, root / package, True, BASES[schema])
    if done.returncode != 0:
        pytest.fail(f"generate over {PAIR} {schema} exited {done.returncode}:\n{(done.stdout + done.stderr)[-4000:]}")
    return schema, import_convert(root, package)


def test_every_before_after_pair_of_the_guide_is_an_example(guide: str) -> None:
    groups = code_groups(guide)
    assert len(groups) >= 4
    found = {key: [v for v in (1, 2) if v in sides] for key, sides in groups.items()}
    assert all(sides == [1, 2] for sides in found.values()), found
    covered = [key for key in groups if any(e.find(guide) == groups[key] for e in EXAMPLES.values())]
    assert sorted(covered) == sorted(groups), f"examples of the guide not covered: {set(groups) - set(covered)}"
    assert list(versioned_sections(guide)) == ["the response is the turn"]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_guide_examples_are_valid_messages_of_their_version(guide: str, name: str) -> None:
    example = EXAMPLES[name]
    for version, side in example.find(guide).items():
        message = example.wrap(side)
        assert schema_errors(message, version, example.method) == [], (version, message)


@pytest.mark.parametrize("source", [1, 2], ids=["v1-to-v2", "v2-to-v1"])
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_guide_example_converts_as_the_guide_shows(
    guide: str, convert: tuple[str, ModuleType], golden: Callable[[str, str], None], name: str, source: int
) -> None:
    schema, module = convert
    example = EXAMPLES[name]
    sides = example.find(guide)
    target = 3 - source
    message = example.wrap(sides[source])
    out = module.convert_message(
        message, source=source, target=target, method=example.method, supply=example.supply.get(source)
    )
    expected = sides[target]
    gaps = example.gaps.get(source, ())
    if schema != SCHEMAS[0] and (name, source) in UNSTABLE_TARGETS:
        expected, gaps = UNSTABLE_TARGETS[(name, source)](sides), ()
    problems = compare(example.unwrap(out), expected, gaps)
    problems += schema_errors(out, target, example.method, schema)
    assert not problems, "\n".join(problems)
    # The output pinned, once it agrees with the guide (written by --update-goldens only).
    kind = "stable" if schema == SCHEMAS[0] else "unstable"
    golden(
        f"migration_guide/{kind}/{name}.v{source}-to-v{target}.json",
        json.dumps(out, indent=2, ensure_ascii=False) + "\n",
    )
