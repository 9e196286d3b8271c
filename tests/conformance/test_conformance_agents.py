"""The conformance kit, installed from the built wheel and run with its defaults, against
ACP agents as people install them from npm and PyPI (pinned exactly here, never a
dependency of the tool):

- ``@zed-industries/codex-acp`` 0.16.0 (npm: a node launcher that starts the real binary,
  which ignores the end of its input, as a child): speaks protocol 1 only, advertises no
  archive, needs a login for sessions. No FAIL, protocol 2 skipped, and no process left.
- ``fast-agent-mcp`` 0.10.48 (PyPI, ``fast-agent-acp --model passthrough``; Python 3.12 to
  3.15, the newest found on PATH or in pyenv's versions): answers a protocol 2
  ``initialize`` with ``protocolVersion`` 2 and a protocol 1 result, a true FAIL that
  names both. Through ``acp-codegen polyfill`` (the same wheel) both versions gain the RFD:
  every scenario passes but ``persistence`` (fast-agent forgets sessions that never had a
  prompt when it restarts) and those that need ``session/delete``. Protocol 2 goes through
  the polyfill's version bridge, which takes fast-agent's protocol 1 result claimed as 2 for
  what it is: a protocol 2 client (every message checked against upstream's 2026-11 v2
  schema) initializes, makes a session and has a turn.

Each is installed once into ``.agent_cache/`` beside this file (git-ignored; see
``support.published_agents``), and runs with a ``HOME`` of its own and no credentials. Where the registry
cannot be reached (or no Python the agent needs is at hand), the test is skipped saying so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_codegen.conformance.scenarios import SCENARIOS
from support import SHARED_UPSTREAM, KitRun, fresh_venv, processes_naming, run_kit
from support.acp_v2 import V2Client, V2Schema, is_state, update_of
from support.published_agents import npm_agent, pypi_agent, setup_env
from support.reference_data import require

pytestmark = pytest.mark.ecosystem

CODEX_ACP = ("@zed-industries/codex-acp", "0.16.0")
FAST_AGENT = ("fast-agent-mcp", "0.10.48")
FAST_AGENT_PYTHONS = ((3, 12), (3, 16))  # its Requires-Python: >=3.12, <3.16
SPEAKS_1_ONLY = "the agent speaks protocol 1 only (it answered protocolVersion 1 to an initialize for protocol 2)"


@pytest.fixture(scope="module")
def codex_acp() -> Path:
    return npm_agent(*CODEX_ACP, "codex-acp")


@pytest.fixture(scope="module")
def fast_agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return pypi_agent(*FAST_AGENT, "fast-agent-acp", FAST_AGENT_PYTHONS, tmp_path_factory.mktemp("probe"))


@pytest.fixture(scope="module")
def kit_tool(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``acp-codegen`` installed from the built wheel, not this checkout."""
    return fresh_venv(tmp_path_factory.mktemp("kit-venv") / "venv", wheel) / "acp-codegen"


def run_agent(kit_tool: Path, home: Path, *agent: str | Path) -> KitRun:
    """The kit with its defaults, the agent with a HOME of its own and no credentials."""
    home.mkdir()
    env = {**setup_env(), "HOME": str(home)}
    return run_kit("--", *map(str, agent), tool=(kit_tool,), env=env)


def processes_under(prefix: Path) -> list[str]:
    """Processes (not zombies) whose command line names a file under ``prefix``."""
    return processes_naming(str(prefix))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the processes left from /proc")
def test_codex_acp_speaks_protocol_1_only_no_failure_and_no_process_left(codex_acp, kit_tool, tmp_path):
    code, results, out = run_agent(kit_tool, tmp_path / "home", codex_acp)
    assert "FAIL" not in out, out
    assert results[(1, "initialize")] == "PASS", out
    assert [s for (v, _), s in results.items() if v == 2] == ["SKIP"] * len(SCENARIOS), out
    assert out.count(SPEAKS_1_ONLY) == len(SCENARIOS), out
    # It advertises no archive: the run checked nothing of the RFD and its exit says so.
    assert code == 4 and "nothing of the session-archive RFD was checked" in out, out
    assert processes_under(codex_acp.parents[1]) == []


def test_fast_agent_fails_protocol_2_for_a_protocol_1_result_claimed_as_2(fast_agent, kit_tool, tmp_path):
    code, results, out = run_agent(kit_tool, tmp_path / "home", fast_agent, "--model", "passthrough")
    assert code == 1, out
    assert [key for key, status in results.items() if status == "FAIL"] == [(2, "initialize")], out
    assert "the agent answered protocolVersion 2, but its result does not fit protocol 2" in out, out
    # What does not fit: v2's required `info` (0.10.48 sends v1's `agentInfo`), and the quote
    # keeps the version it claimed.
    assert "InitializeResponse does not accept the message at /result/info: Field required" in out, out
    (answer,) = [line for line in out.splitlines() if line.lstrip().startswith("< ")]
    assert '"protocolVersion":2' in answer, out
    assert processes_under(fast_agent.parents[1]) == []


def test_fast_agent_through_the_polyfill(fast_agent, kit_tool, tmp_path):
    """``acp-codegen polyfill`` (same wheel) in front of fast-agent: protocol 1 gains the RFD.
    fast-agent lists a session only after its first prompt and forgets one that never had
    a prompt when it restarts (its session/resume and session/load then answer -32002): the
    polyfill lists such a session while the connection that created it lasts, so every
    scenario passes but ``persistence``, whose sessions had no prompt and are gone after the
    restart. ``active-archive`` passes or is skipped: the passthrough model's turns end
    before or after the archive arrives, and the kit proves nothing from a turn already over.
    Protocol 2 goes through the version bridge (fast-agent's protocol 1 result claimed as 2
    is taken for protocol 1): the same verdicts, and ``history`` skipped (protocol 2 has no
    ``session/load``)."""
    polyfill = (kit_tool.parent / "acp-codegen", "polyfill", "--store", tmp_path / "state.sqlite3", "--")
    code, results, out = run_agent(kit_tool, tmp_path / "home", *polyfill, fast_agent, "--model", "passthrough")
    assert code == 1, out
    expected = {s.name: "PASS" for s in SCENARIOS if s.name != "active-archive"}
    expected.update({"deleted-id": "SKIP", "delete-archived": "SKIP", "persistence": "FAIL"})
    for version in (1, 2):
        verdicts = {name: status for (v, name), status in results.items() if v == version}
        assert verdicts.pop("active-archive") in ("PASS", "SKIP"), out
        assert verdicts == {**expected, **({"history": "SKIP"} if version == 2 else {})}, out
    assert out.count("after restarting the agent:") == 2, out
    assert out.count("missing from session/list (archived=only)") == 2, out
    assert processes_under(fast_agent.parents[1]) == []


def test_fast_agent_through_the_polyfill_to_a_protocol_2_client(fast_agent, kit_tool, tmp_path):
    """fast-agent 0.10.48 answers a protocol 2 ``initialize`` with ``protocolVersion`` 2 and
    a protocol 1 result (``agentCapabilities``, ``agentInfo``, auth methods with ``id``);
    the polyfill's bridge takes it for protocol 1 and speaks protocol 2 to the client. A
    protocol 2 client's ``initialize``, ``session/new`` (no ``mcpServers``, which fast-agent
    needs: the bridge adds them) and a prompt ("hello", which the passthrough model says
    back) until the idle ``state_update``: every message valid against the 2026-11 v2
    schema, and none of protocol 1's alone."""
    schema = V2Schema(require(SHARED_UPSTREAM / "2026-11" / "v2" / "schema.unstable.json"))
    home = tmp_path / "home"
    home.mkdir()
    polyfill = [str(kit_tool.parent / "acp-codegen"), "polyfill", "--store", str(tmp_path / "state.sqlite3"), "--"]
    command = [*polyfill, str(fast_agent), "--model", "passthrough"]
    env = {**setup_env(), "HOME": str(home)}
    with V2Client(command, schema, cwd=tmp_path, env=env, timeout=60) as client:
        init = client.initialize()
        assert init["protocolVersion"] == 2 and init["info"]["name"] == "fast-agent-acp", init
        assert "agentInfo" not in init and "agentCapabilities" not in init, init
        assert init["capabilities"]["session"]["archive"] == {}, init  # (the polyfill's)
        sid = client.result("session/new", {"cwd": str(tmp_path)})["sessionId"]
        prompt = [{"type": "text", "text": "hello"}]
        user_id = client.result("session/prompt", {"sessionId": sid, "prompt": prompt})["messageId"]
        turn = client.until(lambda m: is_state(m, "idle"), timeout=60)
        assert update_of(turn[-1])["stopReason"] == "end_turn", turn[-1]
        (user,) = [update_of(m) for m in turn if update_of(m, "user_message")]
        assert user["messageId"] == user_id and user["content"] == prompt, user
        chunks = [update_of(m) for m in turn if update_of(m, "agent_message_chunk")]
        assert "".join(c["content"]["text"] for c in chunks) == "hello", chunks  # (the passthrough model)
        assert len({c["messageId"] for c in chunks}) == 1, chunks
        assert client.close() == 0
    assert processes_under(fast_agent.parents[1]) == []
    assert processes_naming(str(tmp_path)) == []
