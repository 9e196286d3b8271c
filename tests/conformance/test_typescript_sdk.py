"""Against the official TypeScript SDK (``@agentclientprotocol/sdk``, pinned in
``ts_agent/package-lock.json``, installed by the ``ts_sdk`` fixture):

- the conformance kit, with its default options, passes ``ts_agent/agent.mjs``, an agent
  written on the SDK's agent API from the RFD alone, and fails each of its ``--break`` modes
  naming exactly the scenarios that check the broken rule;
- ``ts_agent/client.mjs``, a client on the SDK, drives the reference agent through the
  RFD's surface in both protocol versions.

Each kit run is a few seconds, mostly spent waiting for node and the agent's turns, so the
broken modes run side by side, a few at a time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from acp_codegen.conformance.scenarios import SCENARIOS
from support import ROOT, TS_AGENT, KitRun, install_ts_sdk, run_kit, selected_params

# A peer SDK from npm (npm ci of the pinned release): the ecosystem session's (nox -s ecosystem).
pytestmark = pytest.mark.ecosystem

BOTH = (1, 2)

# Each --break mode of the agent: the scenarios that must fail, (version, scenario).
BROKEN = {
    "capability-without-list": {(1, "capability")},  # v2 has no separate list capability
    "archive-not-idempotent": {(v, "archive-unarchive") for v in BOTH},
    "unknown-id-succeeds": {(v, "unknown-id") for v in BOTH},
    "archive-of-deleted-succeeds": {(v, "deleted-id") for v in BOTH},
    "null-filter-includes": {(v, "filter-values") for v in BOTH},
    "invalid-filter-excludes": {(v, "filter-invalid") for v in BOTH},
    "offset-cursor": {(v, "pagination") for v in BOTH},
    "cursor-keeps-filters": {(v, "cursor-filters") for v in BOTH},
    "unarchive-resumes": {(v, "restoration") for v in BOTH},
    "archive-drops-history": {(1, "history")},  # v2 has no session/load: history is skipped
    "archive-keeps-turn": {(v, "active-archive") for v in BOTH},
    "no-archived-update": {(v, "active-archive") for v in BOTH},
    "load-unarchives": {(v, "load-archived") for v in BOTH},
    "delete-keeps-archived": {(v, "delete-archived") for v in BOTH},
    "archive-not-saved": {(v, "persistence") for v in BOTH},
}


def kit(store: Path, *agent_options: str) -> KitRun:
    """The kit with its default options: exit status, {(version, scenario): status}, output."""
    return run_kit("--", "node", str(TS_AGENT / "agent.mjs"), "--store", str(store), *agent_options)


@pytest.fixture(scope="module")
def broken_runs(
    ts_sdk: Path, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Future[KitRun]]]:
    """The kit's runs against the broken modes the session selected, three at a time."""
    selected = selected_params(request, "test_the_kit_fails_each_broken_rule", "mode")
    with ThreadPoolExecutor(max_workers=3) as pool:
        yield {
            mode: pool.submit(kit, tmp_path_factory.mktemp(mode) / "store.json", "--break", mode)
            for (mode,) in selected
        }


def test_the_kit_passes_the_sdk_agent_with_its_defaults(ts_sdk, tmp_path):
    code, results, out = kit(tmp_path / "store.json")
    assert code == 0, out
    expected = {(v, s.name): "PASS" for v in BOTH for s in SCENARIOS}
    expected[(2, "history")] = "SKIP"  # v2 has no session/load
    assert results == expected, out


@pytest.mark.slow
@pytest.mark.parametrize("mode", sorted(BROKEN))
def test_the_kit_fails_each_broken_rule(mode, broken_runs):
    code, results, out = broken_runs[mode].result()
    assert code == 1, out
    assert {key for key, status in results.items() if status == "FAIL"} == BROKEN[mode], out
    assert len(results) == 2 * len(SCENARIOS), out
    if mode == "archive-keeps-turn":
        # The failure quotes the messages that show it, in the order they crossed the wire.
        quoted = out[out.index("FAIL  v1  active-archive") :].splitlines()[1:6]
        parts = (
            ("> ", '"session/prompt"'),
            ("> ", '"session/archive"'),
            ("< ", '"archived":true'),
            ("< ", '"result":{}'),
        )
        for line, (direction, part) in zip(quoted, (*parts, ("< ", '"stopReason":"end_turn"')), strict=True):
            assert line.strip().startswith(direction) and part in line, quoted


def test_the_agent_breaks_one_rule_per_mode_and_refuses_others(ts_sdk):
    run = subprocess.run(["node", str(TS_AGENT / "agent.mjs"), "--break", "nope"], capture_output=True, text=True)
    assert run.returncode == 2
    assert set(run.stderr.split("one of: ")[1].strip().split(", ")) == set(BROKEN)


def test_without_node_the_sdk_tests_skip_saying_why(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match="node and npm not found on PATH"):
        install_ts_sdk(tmp_path)


@pytest.mark.parametrize("version", BOTH)
def test_the_sdk_client_drives_the_reference_agent(version, ts_sdk, tmp_path):
    # Two sessions a page, so that every filter's listing follows nextCursor.
    agent = [sys.executable, "-m", "examples.archive_agent", "--db", str(tmp_path / "a.sqlite3"), "--page-size", "2"]
    run = subprocess.run(
        ["node", str(TS_AGENT / "client.mjs"), "--protocol", str(version), "--cwd", str(tmp_path), "--", *agent],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    seen = json.loads(run.stdout)
    assert seen["initialize"]["protocolVersion"] == version
    # Three sessions, two archived: every filter value; include over two pages.
    assert {name: f["listed"] for name, f in seen["filters"].items()} == {
        "omitted": 1,
        "null": 1,
        "exclude": 1,
        "include": 3,
        "only": 2,
    }
    assert seen["filters"]["include"]["pages"] == 2
    assert seen["errors"] == {"invalidFilter": -32602, "archiveUnknown": -32002, "unarchiveUnknown": -32002}
    infos = [e["update"] for e in seen["events"] if e["update"]["update"]["sessionUpdate"] == "session_info_update"]
    # session_info_update archived: true for each session archived while open on this connection.
    assert [(i["sessionId"], i["update"].get("archived")) for i in infos] == [
        (seen["sessions"][0], True),
        (seen["sessions"][1], True),
    ]
