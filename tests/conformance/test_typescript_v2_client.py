"""The official TypeScript SDK's protocol 2 client (``@agentclientprotocol/sdk`` 2.4.0, its
experimental v2 API, ``ts_agent/v2_client.mjs``) drives an agent written on the official
Python SDK 0.12.1's public API (``tests/agents/sdk_turn_agent.py``: a protocol 1 ``Agent``)
through the scenarios of the one-version-bridge issue: initialize, new session, a turn with
thoughts, message chunks, a tool call with a diff, a permission request, a plan, a mode
change and available commands, cancel, set config option, list, close, resume without and
with replay, archive and unarchive, an unknown method. Served in protocol 2:

- (a) by the SDK adopted with ``base-v2`` (README's table, ``support.sdk``), the agent run
  directly: the version bridge in the SDK's own connection;
- (b) by the SDK as published, the agent behind ``acp-codegen polyfill``.

Both from the built wheel.

No scenario fails, the SDK rejects or drops no message (it says so on its console), and
every message the client received is valid against upstream's 2026-11 v2 schema
(``support.acp_v2``: also none of protocol 1's alone). The agent's processes are gone
afterwards.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support import TS_AGENT, fresh_venv, processes_naming
from support.acp_v2 import Message, V2Client, V2Schema
from support.reference_data import require
from support.sdk import SDK_PIN, TURN_AGENT, V2_DRAFT, adopted_with_v2, the_sdk_sdist, turn_agent

# A peer SDK from npm (npm ci of the pinned release): the ecosystem session's (nox -s ecosystem).
pytestmark = [
    pytest.mark.ecosystem,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the processes left from /proc"),
]

SCENARIOS = (
    "initialize",
    "new session",
    "turn",
    "cancel",
    "set config option",
    "list",
    "close",
    "resume",
    "resume with replay",
    "archive and unarchive",
    "unknown method",
)


class Recorded(V2Client):
    """``V2Client``'s checks of what a client receives, over a recorded exchange: no process."""

    def __init__(self, schema: V2Schema) -> None:  # (V2Client's own starts the agent)
        self.schema, self.check, self.pending, self.agent_requests = schema, True, {}, {}
        self.batches = False


def transcript_problems(schema: V2Schema, transcript: Path) -> list[str]:
    """What each received message of a transcript (``{"dir", "message"}`` lines, in wire
    order) breaks of protocol 2: a response is checked against the method its request asked."""
    checks = Recorded(schema)
    problems = []
    for line in transcript.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        message: Message = entry["message"]
        if entry["dir"] == "out":
            if "method" in message and "id" in message:
                checks.pending[message["id"]] = message["method"]
            continue
        problems += [f"{json.dumps(message)[:500]}\n  {p}" for p in checks.problems_received(message)]
    return problems


def drive(agent: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[dict[str, Any], list[str]]:
    """``v2_client.mjs`` against ``agent`` (``env``: the client's and so the agent's
    environment): what it printed, and the problems of what it received (a run that
    printed nothing fails here, with its output)."""
    transcript = cwd / "transcript.jsonl"
    run = subprocess.run(
        ["node", str(TS_AGENT / "v2_client.mjs"), "--cwd", str(cwd), "--transcript", str(transcript), "--", *agent],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = run.stdout.strip().splitlines()
    assert lines, f"the client printed nothing (exit {run.returncode}):\n{run.stderr[-5000:]}"
    seen = json.loads(lines[-1])
    return seen, transcript_problems(V2Schema(require(V2_DRAFT)), transcript)


@pytest.fixture(scope="module")
def published_sdk(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built wheel (the polyfill) and the SDK as published, pinned."""
    try:
        return fresh_venv(tmp_path_factory.mktemp("ts-v2-venv") / "venv", wheel, SDK_PIN)
    except AssertionError as failed:
        fresh_venv(tmp_path_factory.mktemp("wheel-only") / "venv", wheel)  # (a broken wheel fails here)
        pytest.skip(f"cannot install {SDK_PIN}: {str(failed)[-300:]}")


@pytest.fixture(scope="module")
def adopted_sdk(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """0.12.1 adopted with ``base-v2`` by the built wheel: the wheel's virtualenv, the SDK."""
    venv = fresh_venv(tmp_path_factory.mktemp("adopt-venv") / "venv", wheel, pip=True)
    sdist = the_sdk_sdist(tmp_path_factory.mktemp("sdk-sdist") / "sdk", venv)
    sdk, report = adopted_with_v2(sdist, tmp_path_factory.mktemp("sdk-v2") / "sdk", venv)
    assert "serves:" in report and "protocol 1 only" not in report, report
    return venv, sdk


def assert_served(seen: dict[str, Any], problems: list[str]) -> None:
    """Every scenario passed, nothing rejected, dropped or invalid (all said at once)."""
    failed = [f"{name}: {why}" for name, why in seen["failed"].items()]
    failed += [f"the SDK rejected or dropped: {said}" for said in seen["complaints"]]
    failed += [f"not protocol 2: {problem}" for problem in problems]
    assert not failed, "\n\n".join(failed)
    assert seen["passed"] == list(SCENARIOS) and seen["permissions"] == 1 and seen["exit"] == 0, seen


def test_the_adopted_sdk_agent_directly(ts_sdk: Path, adopted_sdk: tuple[Path, Path], tmp_path: Path) -> None:
    venv, sdk = adopted_sdk
    command, env = turn_agent(venv, sdk, tmp_path / "sessions.json")
    seen, problems = drive(command, tmp_path, env)
    assert_served(seen, problems)
    assert processes_naming(str(tmp_path)) == []


def test_the_published_sdk_agent_behind_the_polyfill(ts_sdk: Path, published_sdk: Path, tmp_path: Path) -> None:
    agent = [str(published_sdk / "python"), str(TURN_AGENT), "--store", str(tmp_path / "sessions.json")]
    polyfill = [str(published_sdk / "acp-codegen"), "polyfill", "--store", str(tmp_path / "state.sqlite3"), "--"]
    seen, problems = drive([*polyfill, *agent], tmp_path)
    assert_served(seen, problems)
    assert processes_naming(str(tmp_path)) == []
