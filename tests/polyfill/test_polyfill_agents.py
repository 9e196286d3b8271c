"""``acp-codegen polyfill`` from the built wheel, in front of real agents:

- an ordinary agent on the official Python SDK 0.12.1 as published (``sdk_plain_agent.py``:
  list, load, resume, close; no archive; protocol 1 only): the conformance kit (defaults,
  ``--long-prompt``) passes every scenario but the two that need ``session/delete``, in v1
  and, through the version bridge, in v2 (where ``history`` is skipped: the kit replays
  with ``session/load``, which v2 does not have);
- the reference agent, which has archive: the kit's verdicts are the same with and without
  the polyfill (it steps aside);
- the reference agent with its archive hidden (``unarchived_agent.py``; list and delete in
  both versions): every scenario passes in v1 and v2;
- an agent without ``session/list``: archive is not advertised;
- two polyfill processes at once share archive state, and a third sees it after both ended;
- an agent that crashes: the client's pending request gets -32603 naming the exit, and
  the polyfill exits with the agent's status;
- the client going away (end of input, SIGTERM, SIGKILL of the polyfill): the agent, its
  child and its helper in a session of its own are all gone.

No agent process is left after any run (a /proc scan for the run's own paths).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.conformance.scenarios import SCENARIOS
from support import ROOT, fresh_venv, processes_naming, run_kit

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the processes left from /proc"),
]

HERE = ROOT / "tests" / "agents"
SDK_AGENT = HERE / "sdk_plain_agent.py"
UNARCHIVED = HERE / "unarchived_agent.py"
LAUNCHER = HERE / "launcher_agent.py"
SDK_PIN = "agent-client-protocol==0.12.1"
LONG = ("--long-prompt", "/delay 30 a long turn")
DELETE_SCENARIOS = {"deleted-id", "delete-archived"}


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built wheel (not editable) and the SDK as published, pinned. Where the SDK cannot
    be installed (no package index at hand) but the wheel can, the tests are skipped."""
    try:
        return fresh_venv(tmp_path_factory.mktemp("polyfill-venv") / "venv", wheel, SDK_PIN)
    except AssertionError as failed:
        fresh_venv(tmp_path_factory.mktemp("wheel-only") / "venv", wheel)  # (a broken wheel fails here)
        pytest.skip(f"cannot install {SDK_PIN}: {str(failed)[-300:]}")


def left_running(marker: str) -> list[str]:
    """The agent's processes, and the polyfill's watchdog, which names the run's path too and
    exits right after the polyfill."""
    return processes_naming(marker)


def gone_soon(marker: str, seconds: float = 10.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := left_running(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def polyfill(venv: Path, store: Path, *agent: str | Path) -> list[str]:
    return [str(venv / "acp-codegen"), "polyfill", "--store", str(store), "--", *map(str, agent)]


def kit(venv: Path, *args: str | Path) -> tuple[int, dict[tuple[int, str], str], str]:
    return run_kit(*map(str, args), tool=(venv / "acp-codegen",))


def test_the_sdk_agent_gains_the_rfd_in_protocol_1(venv: Path, tmp_path: Path) -> None:
    agent = (venv / "python", SDK_AGENT, "--store", tmp_path / "sessions.json")
    code, results, out = kit(venv, *LONG, "--", *polyfill(venv, tmp_path / "state.sqlite3", *agent))
    assert code == 0 and "0 failed" in out, out
    v1 = {name: status for (version, name), status in results.items() if version == 1}
    assert v1 == {s.name: "SKIP" if s.name in DELETE_SCENARIOS else "PASS" for s in SCENARIOS}, out
    # It speaks protocol 1 only: the kit's protocol 2 run goes through the version bridge.
    v2 = {name: status for (version, name), status in results.items() if version == 2}
    assert v2 == {s.name: "SKIP" if s.name in {*DELETE_SCENARIOS, "history"} else "PASS" for s in SCENARIOS}, out
    assert out.count("the agent does not advertise session/delete") == 4, out
    assert gone_soon(str(tmp_path)) == []


def test_the_reference_agent_keeps_its_own_verdicts(venv: Path, tmp_path: Path) -> None:
    agent = (venv / "python", "-m", "examples.archive_agent")
    bare = kit(venv, *LONG, "--", *agent, "--db", tmp_path / "bare.sqlite3")
    behind = kit(venv, *LONG, "--", *polyfill(venv, tmp_path / "state.sqlite3", *agent, "--db", tmp_path / "p.sqlite3"))
    assert bare[0] == behind[0] == 0, bare[2] + behind[2]
    assert bare[1] == behind[1], behind[2]
    assert list(bare[1].values()).count("PASS") == 2 * len(SCENARIOS) - 1, bare[2]  # (v2 has no history)
    assert gone_soon(str(tmp_path)) == []


def test_an_agent_of_both_versions_without_archive_gains_it_in_both(venv: Path, tmp_path: Path) -> None:
    agent = (venv / "python", UNARCHIVED, "--", venv / "python", "-m", "examples.archive_agent", "--db")
    bare = kit(venv, "--only", "capability", "--", *agent, tmp_path / "bare.sqlite3")
    assert bare[0] == 4 and bare[1] == {(1, "capability"): "SKIP", (2, "capability"): "SKIP"}, bare[2]
    code, results, out = kit(venv, *LONG, "--", *polyfill(venv, tmp_path / "s.sqlite3", *agent, tmp_path / "a.sqlite3"))
    assert code == 0, out
    assert {key: s for key, s in results.items() if s != "PASS"} == {(2, "history"): "SKIP"}, out
    assert gone_soon(str(tmp_path)) == []


def test_an_agent_that_cannot_list_gets_no_archive(venv: Path, tmp_path: Path) -> None:
    agent = (venv / "python", SDK_AGENT, "--store", tmp_path / "sessions.json", "--no-list")
    code, results, out = kit(venv, "--protocol", "1", "--", *polyfill(venv, tmp_path / "state.sqlite3", *agent))
    assert code == 4 and results[(1, "capability")] == "SKIP", out
    assert "the agent does not advertise archive" in out, out
    with Client(polyfill(venv, tmp_path / "state.sqlite3", *agent)) as client:
        init = client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})["result"]
        assert "archive" not in init["agentCapabilities"]["sessionCapabilities"]
        # Stepped aside: the RFD's methods reach the agent, which does not know them.
        assert client.call("session/archive", {"sessionId": "x"})["error"]["code"] == -32601
    assert gone_soon(str(tmp_path)) == []


class Client:
    """A polyfill process spoken to as an editor does."""

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.ids = iter(range(1, 10_000))
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.inbox.put(json.loads(line))
        self.inbox.put(None)

    def send(self, method: str, params: dict[str, Any]) -> int:
        assert self.proc.stdin is not None
        request_id = next(self.ids)
        self.proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"
        )
        self.proc.stdin.flush()
        return request_id

    def reply(self, request_id: int) -> dict[str, Any]:
        while True:
            message = self.inbox.get(timeout=30)
            assert message is not None, "the polyfill closed its output"
            if message.get("id") == request_id and "method" not in message:
                return message

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.reply(self.send(method, params))

    def listed(self, cwd: str, archived: str) -> dict[str, bool]:
        result = self.call("session/list", {"cwd": cwd, "archived": archived})["result"]
        return {s["sessionId"]: s["archived"] for s in result["sessions"]}

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(30)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.close()


def test_two_polyfill_processes_share_archive_state_and_it_survives_them(venv: Path, tmp_path: Path) -> None:
    agent = (venv / "python", UNARCHIVED, "--", venv / "python", "-m", "examples.archive_agent")
    command = polyfill(venv, tmp_path / "state.sqlite3", *agent, "--db", tmp_path / "agent.sqlite3")
    cwd = str(tmp_path)
    with Client(command) as one, Client(command) as other:
        for client in (one, other):
            client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        # Malformed requests of the RFD's methods get their JSON-RPC errors from the polyfill.
        for method, params, code in (
            ("session/archive", [], -32602),
            ("session/unarchive", {"sessionId": 7}, -32602),
            ("session/list", {"archived": "all"}, -32602),
            ("session/list", {"cursor": "forged.0123"}, -32602),
            ("session/archive", {"sessionId": "sess_never_made"}, -32002),
        ):
            assert other.call(method, params)["error"]["code"] == code, (method, params)
        assert other.proc.stdin is not None
        other.proc.stdin.write(b'{"jsonrpc":"2.0","id":{},"method":"session/archive","params":{"sessionId":"x"}}\n')
        other.proc.stdin.flush()
        assert other.inbox.get(timeout=30) == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "Invalid Request", "data": {"reason": "invalid id"}},
        }
        sid = one.call("session/new", {"cwd": cwd, "mcpServers": []})["result"]["sessionId"]
        assert one.call("session/archive", {"sessionId": sid}) == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert other.listed(cwd, "only") == {sid: True}
        assert other.listed(cwd, "exclude") == {}
        assert "result" in other.call("session/unarchive", {"sessionId": sid})
        assert one.listed(cwd, "exclude") == {sid: False}
        assert "result" in other.call("session/archive", {"sessionId": sid})
        assert one.close() == 0 and other.close() == 0
    with Client(command) as again:
        again.call("initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}, "capabilities": {}})
        assert again.listed(cwd, "include") == {sid: True}
    assert gone_soon(str(tmp_path)) == []


def test_a_crashing_agent_answers_what_waits_and_the_polyfill_exits_with_its_status(venv: Path, tmp_path: Path) -> None:
    agent = (venv / "python", SDK_AGENT, "--store", tmp_path / "sessions.json", "--crash-on", "boom")
    with Client(polyfill(venv, tmp_path / "state.sqlite3", *agent)) as client:
        client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        sid = client.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})["result"]["sessionId"]
        answer = client.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "boom"}]})
        assert answer["error"] == {"code": -32603, "message": "the agent exited with status 3"}
        assert client.proc.wait(30) == 3
    assert gone_soon(str(tmp_path)) == []


@pytest.mark.parametrize("how", ["end of input", "SIGTERM", "SIGKILL"])
def test_when_the_client_goes_away_no_agent_process_is_left(venv: Path, tmp_path: Path, how: str) -> None:
    pids = tmp_path / "pids"
    agent = (sys.executable, LAUNCHER, pids, "v1")  # launcher -> agent (ignores EOF, SIGTERM) -> helper
    client = Client(polyfill(venv, tmp_path / "state.sqlite3", *agent))
    assert client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})["result"]["protocolVersion"] == 1
    deadline = time.monotonic() + 30
    while len(pids.read_text().split()) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 3
    if how == "end of input":
        assert client.close() == 0 or client.proc.returncode is not None
    else:
        client.proc.send_signal(signal.SIGTERM if how == "SIGTERM" else signal.SIGKILL)
        status = client.proc.wait(30)
        assert status == (143 if how == "SIGTERM" else -9)
    assert gone_soon(str(pids)) == []
    assert not [pid for pid in started if Path(f"/proc/{pid}").exists() and _alive(pid)]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def test_the_polyfill_says_what_is_wrong_with_its_command(venv: Path, tmp_path: Path) -> None:
    tool = str(venv / "acp-codegen")
    for command, says in (
        ([tool, "polyfill"], "no agent command"),
        ([tool, "polyfill", "--", str(tmp_path / "missing")], "cannot run"),
        ([tool, "polyfill", "--store", str(tmp_path), "--", sys.executable, "-c", "pass"], "cannot use the store"),
    ):
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, env={**os.environ})
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
