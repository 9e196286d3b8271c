"""``acp-codegen conformance`` against the reference agent, against one broken agent per
scenario (``broken_agent.py``: exactly that scenario must fail), and against agents that
exit, write garbage or never answer (clear failures, no hang, no traceback).

The runs against the broken agents are CLI runs, a few at a time: each spends most of its
seconds waiting for agent processes and turns."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from acp_codegen import processes
from acp_codegen.cli import main
from acp_codegen.conformance.scenarios import SCENARIOS
from support import ROOT, KitRun, kit_statuses, run_kit, selected_params

BROKEN = ROOT / "tests" / "agents" / "broken_agent.py"
LONG_PROMPT = "/delay 30 a long turn"  # the reference agent's way to keep a turn running


def kit(
    capsys: pytest.CaptureFixture[str], agent: list[str], *options: str
) -> tuple[int, dict[tuple[int, str], str], str]:
    """Run the kit in this process: exit status, {(version, scenario): status}, stdout."""
    code = main(["conformance", "--timeout", "5", "--long-prompt", LONG_PROMPT, *options, "--", *agent])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, kit_statuses(out), out + err


def broken(fault: str, tmp_path: Path) -> list[str]:
    return [sys.executable, str(BROKEN), fault, "--db", str(tmp_path / "agent.sqlite3")]


def reference(tmp_path: Path, *options: str) -> list[str]:
    """The reference agent as it ships (page size 50), unless options say otherwise."""
    return [sys.executable, "-m", "examples.archive_agent", "--db", str(tmp_path / "agent.sqlite3"), *options]


def test_reference_agent_passes_every_scenario_in_both_versions(capsys, tmp_path):
    # Its page size of 50: pagination and cursor-filters create sessions until a second page.
    junit = tmp_path / "report.xml"
    code, results, out = kit(capsys, reference(tmp_path), "--junit-xml", str(junit))
    assert code == 0, out
    expected = {(v, s.name): "PASS" for v in (1, 2) for s in SCENARIOS}
    expected[(2, "history")] = "SKIP"
    assert results == expected, out
    assert "29 passed, 0 failed, 1 skipped" in out
    suites = ET.parse(junit).getroot()
    assert [s.get("name") for s in suites] == ["acp-conformance.v1", "acp-conformance.v2"]
    assert [(s.get("tests"), s.get("failures"), s.get("skipped")) for s in suites] == [
        ("15", "0", "0"),
        ("15", "0", "1"),
    ]
    skipped = suites.findall("./testsuite/testcase/skipped")
    assert len(skipped) == 1 and "session/load" in skipped[0].get("message", "")


def test_a_turn_over_before_the_archive_was_answered_is_skipped_with_the_messages_in_arrival_order(capsys, tmp_path):
    # The reference agent answers the default long prompts at once: its turn is over before
    # it answers session/archive. Not a failure; the kit tries the longer prompt, then skips
    # quoting the last attempt.
    code = main(["conformance", "--only", "active-archive", "--", *reference(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "FAIL" not in out, out  # 1: nothing was checked
    assert out.count("SKIP") == 2 and "with each of the 2 long prompts: give a --long-prompt" in out, out
    v1 = out[out.index("SKIP  v1") : out.index("SKIP  v2")].splitlines()[1:]
    assert "Count from 1 to 20000" in v1[0] and v1[0].strip().startswith("> ")  # the longer prompt was tried
    received = [line for line in v1 if line.strip().startswith("< ")]
    assert ['"archived":true' in r for r in received] == [False, True, False], v1
    assert '"stopReason":"end_turn"' in received[0] and '"result":{}' in received[2], v1


# Answers a prompt only when the archive comes, and then in this order: archived: true, the
# turn's end (end_turn), the archive's result. The turn may have been over when the archive
# came in: nothing is proven, so active-archive is skipped, never failed.
TURN_ENDS_BETWEEN = """
import json, sys
def send(m): print(json.dumps(m), flush=True)
prompt = None
for line in sys.stdin:
    m = json.loads(line); method, p = m.get("method"), m.get("params", {})
    if method == "initialize":
        caps = {"sessionCapabilities": {"list": {}, "archive": {}}}
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": 1, "agentCapabilities": caps}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"sessionId": "s%d" % m["id"]}})
    elif method == "session/prompt":
        prompt = m["id"]
        chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "1"}}
        send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": p["sessionId"], "update": chunk}})
    elif method == "session/archive":
        info = {"sessionUpdate": "session_info_update", "archived": True}
        send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": p["sessionId"], "update": info}})
        send({"jsonrpc": "2.0", "id": prompt, "result": {"stopReason": "end_turn"}})
        send({"jsonrpc": "2.0", "id": m["id"], "result": {}})
"""


def test_a_turn_that_ends_between_the_archived_update_and_the_archive_result_proves_nothing(capsys):
    code = main(
        ["conformance", "--protocol", "1", "--only", "active-archive", "--", sys.executable, "-c", TURN_ENDS_BETWEEN]
    )
    out = capsys.readouterr().out
    assert code == 1 and "SKIP  v1  active-archive" in out and "FAIL" not in out, out
    quoted = out.splitlines()[1:6]
    parts = ['"session/prompt"', '"session/archive"', '"archived":true', '"end_turn"', '"result":{}']
    assert [part in line for line, part in zip(quoted, parts, strict=True)] == [True] * 5, quoted


def test_pagination_is_skipped_only_past_the_bound_saying_how_many_sessions_were_made(capsys, tmp_path):
    code = main(
        ["conformance", "--protocol", "1", "--only", "pagination", "--", *reference(tmp_path, "--page-size", "500")]
    )
    out = capsys.readouterr().out
    assert code == 1, out
    assert "SKIP  v1  pagination" in out
    assert (
        "after creating 200 sessions (100 archived) in one cwd, archived=exclude and only still fit on one page" in out
    )


# v2 runs for the scenarios whose v2 exchanges differ from v1's (capability placement,
# turns that end with state_update, no session/load); the others share the v1 code path.
V2_DIFFERENT = ("initialize", "capability", "restoration", "active-archive", "load-archived")
FAULT_RUNS = [pytest.param(s.name, 1, id=f"{s.name}-v1") for s in SCENARIOS] + [
    pytest.param(name, 2, id=f"{name}-v2", marks=pytest.mark.slow) for name in V2_DIFFERENT
]


def kit_process(folder: Path, fault: str, version: int) -> tuple[KitRun, Path]:
    """``kit`` as a CLI run against a broken agent, and the JUnit report it wrote."""
    junit = folder / "report.xml"
    options = ("--timeout", "5", "--long-prompt", LONG_PROMPT, "--protocol", str(version), "--junit-xml", str(junit))
    return run_kit(*options, "--", *broken(fault, folder)), junit


@pytest.fixture(scope="module")
def fault_runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[tuple[str, int], Future[tuple[KitRun, Path]]]]:
    """The kit's runs against the broken agents the session selected, three at a time."""
    selected = selected_params(request, "test_each_scenario_fails_against_its_broken_agent", "scenario", "version")
    with ThreadPoolExecutor(max_workers=3) as pool:
        yield {
            (fault, version): pool.submit(kit_process, tmp_path_factory.mktemp(f"{fault}-v{version}"), fault, version)
            for fault, version in selected
        }


@pytest.mark.parametrize(("scenario", "version"), FAULT_RUNS)
def test_each_scenario_fails_against_its_broken_agent(scenario, version, fault_runs):
    (code, results, out), junit = fault_runs[scenario, version].result()
    assert code == 1, out
    assert [key for key, status in results.items() if status == "FAIL"] == [(version, scenario)], out
    assert len(results) == len(SCENARIOS), out
    # The JUnit report carries the same failure, with the RFD section.
    (case,) = ET.parse(junit).getroot().findall(f"./testsuite/testcase[@name='{scenario}']/failure")
    section = next(s.section for s in SCENARIOS if s.name == scenario)
    assert section in (case.text or "")


def test_an_invalid_message_fails_its_scenario_with_the_json_pointer(capsys, tmp_path):
    code, results, out = kit(capsys, broken("bad-update", tmp_path))
    assert code == 1
    assert {k for k, s in results.items() if s == "FAIL"} == {(1, "active-archive"), (2, "active-archive")}, out
    assert "does not accept the message at /params/update/archived: Input should be a valid boolean" in out
    assert '"archived":"true"' in out  # the offending message is quoted


def test_a_hung_request_fails_its_scenario_and_the_kit_restarts_the_agent(capsys, tmp_path):
    code, results, out = kit(capsys, broken("hang-unknown", tmp_path), "--protocol", "1", "--timeout", "1")
    assert code == 1
    assert [k for k, s in results.items() if s == "FAIL"] == [(1, "unknown-id")], out
    assert "no answer to session/archive within 1s" in out
    assert results[(1, "persistence")] == "PASS"  # scenarios after the hang ran on a fresh agent


def test_options_select_scenarios_and_version(capsys, tmp_path):
    code, results, out = kit(capsys, broken("ok", tmp_path), "--protocol", "2", "--only", "unknown-id", "capability")
    assert code == 0, out
    assert results == {(2, "capability"): "PASS", (2, "unknown-id"): "PASS"}


def test_skipped_scenarios_name_what_the_agent_does_not_advertise(capsys, tmp_path):
    # v2: history needs session/load, which v2 does not have; skipped, never passed.
    code, results, out = kit(capsys, broken("ok", tmp_path), "--protocol", "2", "--only", "history")
    assert results == {(2, "history"): "SKIP"}
    assert "does not advertise session/load" in out
    assert code == 1  # nothing was checked
    assert "nothing was checked" in out


STUBS = {
    "exits at start": ("import sys; sys.stderr.write('boom\\n'); sys.exit(3)", "closed its output (exit status 3"),
    "writes non-JSON": ("import sys\nfor line in sys.stdin: print('hello there', flush=True)", "not JSON"),
    "never answers": ("import sys\nfor line in sys.stdin: pass", "no answer to initialize within 1s"),
}


@pytest.mark.parametrize("name", STUBS)
def test_agents_that_cannot_talk_fail_clearly_without_hanging(name, tmp_path):
    code, expected = STUBS[name]
    run = subprocess.run(
        [sys.executable, "-m", "acp_codegen", "conformance", "--start-timeout", "1", "--", sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    results = kit_statuses(run.stdout)
    # The first scenario of each version fails saying why; the rest are skipped, not passed.
    assert results[(1, "initialize")] == results[(2, "initialize")] == "FAIL"
    assert set(results.values()) == {"FAIL", "SKIP"}
    assert expected in run.stdout


def test_usage_errors_exit_2(capsys):
    assert main(["conformance", "--only", "nope", "--", "true"]) == 2
    assert "unknown scenario nope" in capsys.readouterr().err
    assert main(["conformance"]) == 2
    assert "no agent command" in capsys.readouterr().err
    assert main(["conformance", "--", "/nonexistent/agent"]) == 2
    assert "cannot run /nonexistent/agent" in capsys.readouterr().err


def test_list_scenarios_names_each_rfd_section(capsys):
    assert main(["conformance", "--list-scenarios"]) == 0
    out = capsys.readouterr().out
    for scenario in SCENARIOS:
        assert f"{scenario.name:<18} [{scenario.section}]" in out


def test_an_oversized_line_fails_without_being_held_whole_and_the_next_line_still_reads():
    from acp_codegen.conformance.driver import AgentProcess, Failure

    reply = '{"jsonrpc":"2.0","id":1,"result":{}}'
    script = (
        f"import sys, time; sys.stdout.write('x' * 5000 + '\\n' + {reply!r} + '\\n'); sys.stdout.flush(); time.sleep(5)"
    )
    agent = AgentProcess([sys.executable, "-c", script], timeout=10, max_line=1024)
    agent.start()
    try:
        with pytest.raises(Failure, match="a line of 5001 bytes; the kit reads lines up to 1024"):
            agent.call("initialize", {})
        assert agent.wait_reply(1).result == {}  # the line after it is read as usual
    finally:
        agent.stop()


def test_a_value_a_lenient_reader_would_drop_still_fails_the_kit():
    # `loadSession` carries upstream's default-on-error marker: the models, read as usual,
    # drop "yes"; the kit holds the agent to the schema's types.
    from acp_codegen.conformance.driver import AgentProcess, Failure
    from acp_codegen.conformance.models import MessageModels

    model = MessageModels(1).result("initialize")
    result = {"protocolVersion": 1, "agentCapabilities": {"loadSession": "yes"}}
    assert "load_session" not in model.model_validate(result).agent_capabilities.model_fields_set
    with pytest.raises(Failure, match="at /result/agentCapabilities/loadSession: Input should be a valid boolean"):
        AgentProcess._validate(model, {"result": result}, "result", ())


# -- what the agent answered, what the environment lacks, what was checked at all

# The stand-in for the agents that speak protocol 1 only: it answers every
# initialize with protocol 1 and no capabilities, as ACP's negotiation has them do.
STAND_IN = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        reply = {"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}}
        print(json.dumps(reply), flush=True)
"""
SPEAKS_1_ONLY = "the agent speaks protocol 1 only (it answered protocolVersion 1 to an initialize for protocol 2)"
NOTHING_OF_THE_RFD = "nothing of the session-archive RFD was checked: no protocol version tried advertises the archive"


def test_an_agent_that_answers_protocol_1_to_protocol_2_is_skipped_there_not_failed(capsys):
    code, results, out = kit(capsys, [sys.executable, "-c", STAND_IN])
    assert "FAIL" not in out, out
    assert results[(1, "initialize")] == "PASS"
    assert [s for (v, _), s in results.items() if v == 2] == ["SKIP"] * len(SCENARIOS), out
    assert out.count(SPEAKS_1_ONLY) == len(SCENARIOS), out
    # The initialize skip quotes the answer that decided it.
    v2 = out[out.index("SKIP  v2  initialize") :].splitlines()
    assert v2[1].strip().startswith("> ") and '"protocolVersion":2' in v2[1], v2
    assert v2[2].strip().startswith("< ") and '"protocolVersion":1' in v2[2], v2
    # No version advertises archive: nothing of the RFD was checked, and the exit says so.
    assert code == 4 and NOTHING_OF_THE_RFD in out, out
    assert main(["conformance", "--allow-no-archive", "--", sys.executable, "-c", STAND_IN]) == 0
    assert NOTHING_OF_THE_RFD in capsys.readouterr().out  # the summary still says it


# Speaks protocol 2 only: answers 2 to any initialize, with a protocol 2 result.
SPEAKS_2 = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    result = {"protocolVersion": 2, "info": {"name": "v2-only", "version": "1"}, "capabilities": {}}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": result}), flush=True)
"""
# (agent, {(version, scenario): status} of initialize and capability, the skip's reason, exit)
ONE_VERSION = {
    # TURN_ENDS_BETWEEN answers protocol 1 to any initialize and advertises archive and list.
    "protocol 1 with archive": (
        TURN_ENDS_BETWEEN,
        ("PASS", "PASS", "SKIP", "SKIP"),
        "the agent speaks protocol 1 only (it answered protocolVersion 1 to an initialize for protocol 2)",
        0,
    ),
    "protocol 2 without archive": (
        SPEAKS_2,
        ("SKIP", "SKIP", "PASS", "SKIP"),
        "the agent does not speak protocol 1 (it answered protocolVersion 2 to an initialize for protocol 1)",
        4,
    ),
}


@pytest.mark.parametrize("name", ONE_VERSION)
def test_an_agent_that_speaks_one_version_runs_there_and_is_skipped_in_the_other(capsys, name):
    agent, statuses, reason, exit_status = ONE_VERSION[name]
    code, results, out = kit(capsys, [sys.executable, "-c", agent], "--only", "initialize", "capability")
    keys = [(1, "initialize"), (1, "capability"), (2, "initialize"), (2, "capability")]
    assert results == dict(zip(keys, statuses, strict=True)), out
    assert reason in out and "FAIL" not in out, out
    assert code == exit_status and (NOTHING_OF_THE_RFD in out) == (exit_status == 4), out


# Claims whichever version it is asked for, with a protocol 1 result (no `info`), its
# protocolVersion after a long capability object: past where a plain cut would end.
CLAIMS_EVERY_VERSION = """
import json, sys
caps = {"promptCapabilities": {"image": True}, "_meta": {"note": "x" * 400}}
for line in sys.stdin:
    m = json.loads(line)
    result = {"agentCapabilities": caps, "protocolVersion": m["params"]["protocolVersion"]}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": result}), flush=True)
"""


def test_an_agent_that_claims_protocol_2_with_a_protocol_1_result_fails_naming_both(capsys):
    code, results, out = kit(capsys, [sys.executable, "-c", CLAIMS_EVERY_VERSION], "--only", "initialize")
    assert results == {(1, "initialize"): "PASS", (2, "initialize"): "FAIL"}, out
    assert code == 1
    assert (
        "starting the agent: the agent answered protocolVersion 2, but its result does not fit protocol 2:"
        " InitializeResponse does not accept the message at /result/info: Field required" in out
    ), out
    quoted = out[out.index("FAIL  v2") :].splitlines()[2]
    assert quoted.strip().startswith('< {"jsonrpc":"2.0","id":1,"result":{') and '"protocolVersion":2' in quoted
    assert len(quoted.strip()) <= 2 + 320, quoted  # still cut


def test_a_cut_quote_keeps_the_member_the_verdict_names():
    from acp_codegen.conformance.driver import MAX_SHOWN, shown

    message = {"jsonrpc": "2.0", "id": 7, "result": {"a": "x" * 500, "b/c": {"deep": [0, {"v": 42}]}, "z": "y" * 500}}
    plain = shown(message)
    assert len(plain) == MAX_SHOWN and plain.endswith("...") and '"v":42' not in plain
    kept = shown(message, "/result/b~1c/deep/1/v")
    assert kept.startswith('{"jsonrpc":"2.0","id":7') and '"v":42' in kept and len(kept) <= MAX_SHOWN, kept
    # A missing member: the object that lacks it is where the cut keeps.
    missing = shown(message, "/result/b~1c/info")
    assert '"b/c":{"deep":[0,{"v":42}]}' in missing, missing
    assert shown({"short": 1}, "/short") == '{"short":1}'  # short messages whole, as before


@pytest.mark.parametrize(
    ("fault", "refusal"),
    [
        ("needs-auth", "it refused session/new with error -32000 (Authentication required)"),
        (
            "needs-login",
            "it refused session/new with error -32603 (Not logged in: authenticate with agent-login first)",
        ),
    ],
)
def test_an_agent_that_needs_authentication_stops_each_version_with_one_line_not_a_failure(
    capsys, tmp_path, fault, refusal
):
    method = {"needs-auth": "agent-key", "needs-login": "agent-login"}[fault]
    junit = tmp_path / "report.xml"
    code, results, out = kit(capsys, broken(fault, tmp_path), "--junit-xml", str(junit))
    assert code == 3 and "FAIL" not in out, out
    why = f"the agent requires authentication: {refusal}; its initialize offers authMethods {method}"
    stops = [line for line in out.splitlines() if line.startswith("AUTH")]
    assert len(stops) == 2 and all(why in line for line in stops), out
    # Each version stops at the scenario that met the refusal: nothing after it is reported.
    assert [(v, s) for (v, _), s in results.items()] == [(v, s) for v in (1, 2) for s in ("PASS", "PASS", "AUTH")], out
    assert "4 passed, 0 failed, 0 skipped, 2 stopped (authentication required)" in out
    errors = ET.parse(junit).getroot().findall("./testsuite/testcase/error")
    assert len(errors) == 2 and all(why in e.get("message", "") for e in errors)


def test_authenticate_runs_the_method_the_user_names_after_initialize(capsys, tmp_path, monkeypatch):
    agent = broken("needs-auth", tmp_path)
    only = ("--protocol", "1", "--only", "archive-unarchive", "persistence")  # persistence starts it again
    code, results, out = kit(capsys, agent, "--authenticate", "agent-key", *only)
    assert (
        code == 3
        and "authenticate with method 'agent-key' was refused: error -32000 (BROKEN_AGENT_KEY is not set)" in out
    )
    monkeypatch.setenv("BROKEN_AGENT_KEY", "set")  # the agent reads its key from the environment
    code, results, out = kit(capsys, agent, "--authenticate", "agent-key", *only)
    assert code == 0, out
    assert results == {(1, "archive-unarchive"): "PASS", (1, "persistence"): "PASS"}, out


def test_error_32000_from_an_agent_that_creates_sessions_is_a_failure(capsys, tmp_path):
    # The kit asks for a session/new before it calls a refusal the environment's.
    code, results, out = kit(capsys, broken("filter-invalid-32000", tmp_path), "--protocol", "1")
    assert code == 1, out
    assert [k for k, s in results.items() if s == "FAIL"] == [(1, "filter-invalid")], out
    assert "expected error -32602, got error -32000" in out and "AUTH" not in out


# -- no process left behind

LAUNCHER = ROOT / "tests" / "agents" / "launcher_agent.py"
# (agent mode, launcher options, kit options, signal sent to the kit once all started, exit)
PROCESS_RUNS = {
    "passed": ("v1", (), (), None, 4),
    "passed, the launcher gone": ("v1", ("--exit-early",), (), None, 4),
    "failed": ("garbage", (), (), None, 1),
    "timed out": ("silent", (), ("--start-timeout", "1"), None, 1),
    "interrupted": ("silent", (), (), signal.SIGINT, 130),
    "terminated": ("silent", ("--exit-early",), (), signal.SIGTERM, 143),
}


def running(pid: int) -> bool:
    """Whether the process runs (a zombie, left for its parent to reap, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def launched_run(folder: Path, name: str) -> tuple[int, str, list[int]]:
    """The kit (a process) against the launcher agent: its exit status, output, and the pids
    of the launcher, the agent and the agent's helper in a session of its own."""
    mode, launcher, options, signum, _ = PROCESS_RUNS[name]
    pids = folder / "pids"
    agent = [sys.executable, str(LAUNCHER), str(pids), mode, *launcher]
    kit = subprocess.Popen(
        [sys.executable, "-m", "acp_codegen", "conformance", "--protocol", "1", *options, "--", *agent],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if signum is not None:
        deadline = time.monotonic() + 60
        while not (pids.exists() and len(pids.read_text().split()) == 3) and time.monotonic() < deadline:
            time.sleep(0.05)
        kit.send_signal(signum)
    out, _ = kit.communicate(timeout=120)
    return kit.returncode, out, [int(pid) for pid in pids.read_text().split()]


@pytest.fixture(scope="module")
def process_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future[tuple[int, str, list[int]]]]]:
    # Each run waits seconds for processes that ignore end of input and SIGTERM: side by side.
    with ThreadPoolExecutor(max_workers=3) as pool:
        yield {name: pool.submit(launched_run, tmp_path_factory.mktemp("launcher"), name) for name in PROCESS_RUNS}


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
@pytest.mark.parametrize("name", PROCESS_RUNS)
def test_no_process_the_kit_started_is_left_whatever_ended_the_run(name, process_runs):
    code, out, pids = process_runs[name].result()
    assert code == PROCESS_RUNS[name][4], out
    assert "Traceback" not in out
    assert len(pids) == 3, pids  # launcher, agent, helper: each started
    assert [pid for pid in pids if running(pid)] == [], out
    if code > 128:
        assert "interrupted" in out and "the agent's processes are stopped" in out


@pytest.mark.parametrize(
    ("errors", "spawned"),
    [((), True), ((errno.EFAULT,), True), ((errno.EAGAIN, errno.EFAULT), True), ((errno.EFAULT,) * 3, False)],
)
def test_a_spawn_that_fails_for_a_transient_reason_is_tried_again(monkeypatch, errors, spawned):
    """EFAULT (seen once from execve on a loaded machine) and EAGAIN say nothing about the
    command: up to three tries. Any other error is the command's, and raised at once."""
    calls = []

    def popen(command, **options):
        calls.append(command)
        if len(calls) <= len(errors):
            raise OSError(errors[len(calls) - 1], os.strerror(errors[len(calls) - 1]))
        return "process"

    monkeypatch.setattr(processes.subprocess, "Popen", popen)
    monkeypatch.setattr(processes.time, "sleep", lambda seconds: None)
    if spawned:
        assert processes.spawn(["agent"]) == "process"
        assert len(calls) == len(errors) + 1
    else:
        with pytest.raises(OSError) as raised:
            processes.spawn(["agent"])
        assert raised.value.errno == errno.EFAULT and len(calls) == 3


def test_a_spawn_that_fails_for_the_command_is_not_tried_again(monkeypatch):
    calls = []

    def popen(command, **options):
        calls.append(command)
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", command[0])

    monkeypatch.setattr(processes.subprocess, "Popen", popen)
    with pytest.raises(FileNotFoundError):
        processes.spawn(["no-such-agent"])
    assert len(calls) == 1
