"""The polyfill's version bridge, from the built wheel: a protocol 2 client (written from
upstream's migration guide, ``support.acp_v2``) in front of an agent on the official Python
SDK 0.12.1 that speaks protocol 1 only (``tests/agents/sdk_turn_agent.py``). Every message
the client receives is checked against upstream's 2026-11 v2 ``schema.unstable.json``, and
none is protocol 1's alone (no ``fs/*``, ``terminal/*`` request, no ``tool_call``, ``plan`` or
``current_mode_update`` update).

- ``initialize`` and ``session/new`` are protocol 2's (``info``, ``capabilities.session``
  with ``archive``; the modes as a ``mode`` config option);
- a whole turn: the prompt acknowledged with its ``messageId`` before the turn ends, the
  ``user_message``, ``state_update`` running / requires_action / running / idle, message ids
  on every chunk, ``tool_call_update`` creating the tool call with a v2 diff (``changes``, a
  ``git_patch``), ``plan_update``, the permission request with ``title`` and a ``tool_call``
  subject, the mode change as ``config_option_update``, commands tagged ``command``;
- a rejected permission, cancel while a permission waits, cancel of a long turn, a turn the
  agent answers with an error (the ``error`` stop reason);
- ``session/set_config_option`` of the mode (the agent's mode changes), and of an unknown
  option or session (``-32602``, ``-32002``);
- what the schema's descriptions ask beyond the guide: ``session/close`` during a turn
  sends the idle ``cancelled`` before its result; a prompt sent while a turn runs; a
  message replayed by ``session/resume`` keeps its id;
- list, close, resume with replay, archive, unarchive, an unknown method;
- the conformance kit in protocol 2 through the polyfill: no failure;
- a protocol 1 client still gets protocol 1 from the same agent through the polyfill.

No agent process is left after any test. Without upstream's 2026-11 schema
(``nox -s fetch_data``) the tests are skipped.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp_codegen.conformance.scenarios import SCENARIOS
from support import ROOT, SHARED_UPSTREAM, fresh_venv, processes_naming, run_kit
from support.acp_v2 import (
    V1_ONLY_UPDATES,
    Message,
    V2Client,
    V2Schema,
    allow,
    archive_and_unarchive,
    is_response,
    is_state,
    kinds,
    mode_option,
    new_session,
    update_of,
)
from support.reference_data import require

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the processes left from /proc"),
]

AGENT = ROOT / "tests" / "agents" / "sdk_turn_agent.py"
SDK_PIN = "agent-client-protocol==0.12.1"
V2_SCHEMA = SHARED_UPSTREAM / "2026-11" / "v2" / "schema.unstable.json"
TIMEOUT = 20.0
TURN = [{"type": "text", "text": "/turn"}]
# What the turn's work reports (the commands the agent announced after session/new may come
# in the turn too: they are no output of it).
TURN_OUTPUT = {"agent_thought_chunk", "agent_message_chunk", "plan_update", "tool_call_update", "config_option_update"}


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built wheel (not editable) and the SDK as published, pinned; skipped where the SDK
    cannot be installed but the wheel can."""
    try:
        return fresh_venv(tmp_path_factory.mktemp("bridge-venv") / "venv", wheel, SDK_PIN)
    except AssertionError as failed:
        fresh_venv(tmp_path_factory.mktemp("wheel-only") / "venv", wheel)  # (a broken wheel fails here)
        pytest.skip(f"cannot install {SDK_PIN}: {str(failed)[-300:]}")


@pytest.fixture(scope="module")
def schema() -> V2Schema:
    return V2Schema(require(V2_SCHEMA))


def gone_soon(marker: str, seconds: float = 10.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := processes_naming(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def polyfill(venv: Path, tmp_path: Path) -> list[str]:
    agent = [str(venv / "python"), str(AGENT), "--store", str(tmp_path / "sessions.json")]
    return [str(venv / "acp-codegen"), "polyfill", "--store", str(tmp_path / "state.sqlite3"), "--", *agent]


@pytest.fixture
def client(schema: V2Schema, venv: Path, tmp_path: Path) -> Iterator[V2Client]:
    """The polyfill in front of the turn agent, spoken to in protocol 2, not yet initialized.
    Afterwards: the polyfill exited 0 at the end of its input, and no process is left."""
    with V2Client(polyfill(venv, tmp_path), schema, cwd=ROOT, timeout=TIMEOUT) as talking:
        yield talking
        assert talking.close() == 0
    assert gone_soon(str(tmp_path)) == []


def test_initialize_and_session_new_are_protocol_2(client: V2Client, tmp_path: Path) -> None:
    init = client.initialize()
    assert init["protocolVersion"] == 2, init
    assert init["info"]["name"] and init["info"]["version"], init
    assert "agentCapabilities" not in init and "agentInfo" not in init, init
    session = init["capabilities"]["session"]
    assert session["archive"] == {}, init  # the polyfill's
    assert isinstance(session["prompt"]["image"], dict) and isinstance(session["prompt"]["embeddedContext"], dict), init
    assert "audio" not in session["prompt"], init  # (v1's false is not support)
    for v1_marker in ("list", "resume", "close", "loadSession"):
        assert v1_marker not in session, init
    sid, result = new_session(client, tmp_path)
    assert sid and "modes" not in result, result
    option = mode_option(result)
    assert option["type"] == "select" and option["currentValue"] == "ask", option
    assert option["configId"] and option["name"], option
    assert [o["value"] for o in option["options"]] == ["ask", "code"], option


def test_a_whole_turn_in_protocol_2(client: V2Client, tmp_path: Path) -> None:
    client.initialize()
    sid, _ = new_session(client, tmp_path)
    before = len(client.received)
    prompt_id = client.send("session/prompt", {"sessionId": sid, "prompt": TURN})
    turn: list[Message] = []
    permission_at = answered_at = None
    while True:
        message = client.next()
        turn.append(message)
        if message.get("method") == "session/request_permission":
            permission_at = len(turn) - 1
            client.answer(message, allow(message))
            answered_at = len(turn)  # (what arrives from here on came after the answer)
        elif "method" in message and "id" in message:
            pytest.fail(f"an agent request the turn does not make: {message}")
        if is_state(message, "idle"):
            break
    shown = kinds(turn)
    idle = update_of(turn[-1])
    assert idle == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}, shown

    # The prompt is acknowledged before the turn ends, with the user message's id.
    (answer_at,) = [i for i, m in enumerate(turn) if is_response(m, prompt_id)]
    assert "result" in turn[answer_at], turn[answer_at]
    user_id = turn[answer_at]["result"]["messageId"]
    (user,) = [update_of(m, "user_message") for m in turn if update_of(m, "user_message")]
    assert user["messageId"] == user_id and user["content"] == TURN, user

    # running before any output; requires_action before the permission request, running after it.
    def at(kind: str) -> list[int]:
        return [i for i, m in enumerate(turn) if update_of(m, kind) is not None]

    states = [(i, update_of(m)["state"]) for i, m in enumerate(turn) if update_of(m, "state_update")]
    output = [i for i, m in enumerate(turn) if (update_of(m) or {}).get("sessionUpdate") in TURN_OUTPUT]
    assert states[0][1] == "running" and states[0][0] < min(output), shown
    assert permission_at is not None and answered_at is not None, shown
    last_state_before = [s for i, s in states if i < permission_at][-1]
    assert last_state_before == "requires_action", shown
    assert "running" in [s for i, s in states if i >= answered_at], shown
    assert [s for _, s in states].count("idle") == 1, shown

    # Message ids: one per message, all chunks of a message share it, a new message a new one.
    thoughts = [update_of(turn[i]) for i in at("agent_thought_chunk")]
    messages = at("agent_message_chunk")
    assert len(thoughts) == 2 and len(messages) == 4, shown
    assert len({t["messageId"] for t in thoughts}) == 1, thoughts
    first, second = ([update_of(turn[i]) for i in messages[:2]], [update_of(turn[i]) for i in messages[2:]])
    assert len({c["messageId"] for c in first}) == 1 and len({c["messageId"] for c in second}) == 1, shown
    ids = [thoughts[0]["messageId"], first[0]["messageId"], second[0]["messageId"], user_id]
    assert len(set(ids)) == 4, ids
    assert "".join(c["content"]["text"] for c in first) == "I will edit notes.txt.", first

    # The plan, sent twice by the agent: one plan (one planId), its entries replaced.
    plan, again = [update_of(turn[i])["plan"] for i in at("plan_update")]
    assert plan["type"] == again["type"] == "items" and plan["planId"] and again["planId"] == plan["planId"], again
    assert plan["entries"] == [
        {"content": "Read notes.txt", "priority": "high", "status": "completed"},
        {"content": "Edit notes.txt", "priority": "medium", "status": "in_progress"},
    ], plan
    assert [e["status"] for e in again["entries"]] == ["completed", "completed"], again

    # The tool call, created by a tool_call_update, with a v2 diff.
    calls = [update_of(turn[i]) for i in at("tool_call_update")]
    created = calls[0]
    call_id = created["toolCallId"]
    assert {c["toolCallId"] for c in calls} == {call_id}, calls
    assert created["title"] and created["kind"] == "edit" and created["status"] == "pending", created
    (diff,) = created["content"]
    path = str(tmp_path / "notes.txt")
    assert diff["type"] == "diff" and "oldText" not in diff and "newText" not in diff, diff
    assert [(c["operation"], c["path"]) for c in diff["changes"]] == [("modify", path)], diff
    assert diff["patch"]["format"] == "git_patch", diff
    patch = diff["patch"]["text"]
    assert patch.startswith("diff --git"), patch
    assert "\n-old line\n" in patch and "\n+new line\n" in patch and path in patch, patch
    completed = [i for i in at("tool_call_update") if update_of(turn[i]).get("status") == "completed"]
    assert len(completed) == 1 and completed[0] > answered_at, shown

    # The permission request: v2's title and tool_call subject.
    request = turn[permission_at]["params"]
    assert request["sessionId"] == sid and request["title"], request
    assert request["subject"]["type"] == "tool_call", request
    assert request["subject"]["toolCall"]["toolCallId"] == call_id, request
    assert "toolCall" not in request, request
    assert {o["kind"] for o in request["options"]} == {"allow_once", "reject_once"}, request

    # The mode change, as a config option.
    (changed,) = [update_of(turn[i]) for i in at("config_option_update")]
    assert mode_option(changed)["currentValue"] == "code", changed

    # The commands the agent announced after session/new, tagged.
    everything = client.received
    announced = [
        update_of(m, "available_commands_update") for m in everything if update_of(m, "available_commands_update")
    ]
    assert announced, kinds(client.received[:before])
    commands = announced[0]["availableCommands"]
    assert [c["type"] for c in commands] == ["command"] * len(commands), commands
    assert {c["name"] for c in commands} == {"turn", "delay"}, commands
    (delay,) = [c for c in commands if c["name"] == "delay"]
    assert delay["input"]["type"] == "text" and delay["input"]["hint"] == "seconds", delay

    # Nothing of protocol 1's alone reached the client.
    assert not [m for m in everything if (update_of(m) or {}).get("sessionUpdate") in V1_ONLY_UPDATES]
    assert not [m for m in everything if str(m.get("method", "")).startswith(("fs/", "terminal/", "session/load"))]


def test_a_rejected_permission_fails_the_tool_call(client: V2Client, tmp_path: Path) -> None:
    client.initialize()
    client.on_request = lambda request: {"outcome": {"outcome": "selected", "optionId": "reject"}}
    sid, _ = new_session(client, tmp_path)
    client.result("session/prompt", {"sessionId": sid, "prompt": TURN})
    turn = client.until(lambda m: is_state(m, "idle"))
    assert update_of(turn[-1])["stopReason"] == "end_turn", kinds(turn)
    statuses = [update_of(m)["status"] for m in turn if update_of(m, "tool_call_update")]
    assert statuses == ["pending", "failed"], statuses


def test_cancel_while_a_permission_waits(client: V2Client, tmp_path: Path) -> None:
    """The guide's order: the client cancels, answers the pending permission request
    ``cancelled``, takes the updates that follow, and the idle state says ``cancelled``."""
    client.initialize()
    sid, _ = new_session(client, tmp_path)
    client.result("session/prompt", {"sessionId": sid, "prompt": TURN})
    before = client.until(lambda m: m.get("method") == "session/request_permission")
    assert is_state([m for m in before if update_of(m, "state_update")][-1], "requires_action"), kinds(before)
    client.notify("session/cancel", {"sessionId": sid})
    client.answer(before[-1], {"outcome": {"outcome": "cancelled"}})
    rest = client.until(lambda m: is_state(m, "idle"))
    assert update_of(rest[-1])["stopReason"] == "cancelled", kinds(rest)
    statuses = [update_of(m)["status"] for m in rest if update_of(m, "tool_call_update")]
    assert statuses == ["failed"], kinds(rest)
    assert not [m for m in rest if update_of(m, "config_option_update")], kinds(rest)  # (the turn stopped first)


def test_a_failed_turn_ends_idle_with_the_error(client: V2Client, tmp_path: Path) -> None:
    """The protocol 1 agent answers the prompt with an error after some output: the prompt
    was acknowledged already, so the turn ends with the schema's ``error`` stop reason,
    which carries the JSON-RPC error."""
    client.initialize()
    sid, _ = new_session(client, tmp_path)
    client.result("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "/fail now"}]})
    turn = client.until(lambda m: is_state(m, "idle"))
    idle = update_of(turn[-1])
    assert idle["stopReason"] == "error" and idle["error"]["code"] == -32603, idle
    assert [update_of(m)["content"]["text"] for m in turn if update_of(m, "agent_message_chunk")] == ["about to fail"]


def test_a_file_read_never_reaches_the_protocol_2_client(client: V2Client, tmp_path: Path) -> None:
    """Protocol 2 has no ``fs/*``: the protocol 1 agent's ``fs/read_text_file`` is answered
    with an error for the client, which never sees it, and the turn goes on."""
    client.initialize()
    sid, _ = new_session(client, tmp_path)
    (tmp_path / "notes.txt").write_text("secret\n")
    prompt = [{"type": "text", "text": f"/read {tmp_path / 'notes.txt'}"}]
    client.result("session/prompt", {"sessionId": sid, "prompt": prompt})
    turn = client.until(lambda m: is_state(m, "idle"))  # (an agent request here fails the test)
    assert update_of(turn[-1])["stopReason"] == "end_turn", kinds(turn)
    (said,) = [update_of(m)["content"]["text"] for m in turn if update_of(m, "agent_message_chunk")]
    assert said.startswith("could not read"), said


def test_cancel_ends_the_turn_with_an_idle_state(client: V2Client, tmp_path: Path) -> None:
    client.initialize()
    sid, _ = new_session(client, tmp_path)
    prompt = [{"type": "text", "text": "/delay 30 a long turn"}]
    started = time.monotonic()
    response, _ = client.call("session/prompt", {"sessionId": sid, "prompt": prompt}, timeout=10)
    assert time.monotonic() - started < 10 and response["result"]["messageId"], response
    client.until(lambda m: is_state(m, "running"), timeout=10)
    client.notify("session/cancel", {"sessionId": sid})
    rest = client.until(lambda m: is_state(m, "idle"), timeout=10)
    assert update_of(rest[-1])["stopReason"] == "cancelled", kinds(rest)
    assert time.monotonic() - started < 20
    # The session takes another prompt.
    response, _ = client.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "/delay 0"}]})
    assert "result" in response, response
    rest = client.until(lambda m: is_state(m, "idle"))
    assert update_of(rest[-1])["stopReason"] == "end_turn", kinds(rest)


def test_set_config_option_changes_the_agents_mode(client: V2Client, tmp_path: Path) -> None:
    client.initialize()
    sid, created = new_session(client, tmp_path)
    config_id = mode_option(created)["configId"]
    params = {"sessionId": sid, "configId": config_id, "type": "id", "value": "code"}
    result = client.result("session/set_config_option", params)
    assert mode_option(result)["currentValue"] == "code", result
    # The agent has it: a resume (its session/resume result's modes) says code.
    resumed = client.result("session/resume", {"sessionId": sid, "cwd": str(tmp_path)})
    assert mode_option(resumed)["currentValue"] == "code", resumed
    # A value the option does not have is refused.
    bad = client.call("session/set_config_option", {**params, "value": "nonsense"})[0]
    assert bad["error"]["code"] == -32602, bad
    assert (
        mode_option(client.result("session/resume", {"sessionId": sid, "cwd": str(tmp_path)}))["currentValue"] == "code"
    )


def test_set_config_option_refuses_an_unknown_config_id_and_session(client: V2Client, tmp_path: Path) -> None:
    """The schema's SetSessionConfigOptionRequest: an unknown ``configId`` or value is
    ``-32602``, and the configuration stays as it was; a session the agent does not have is
    the agent's ``-32002``."""
    client.initialize()
    sid, created = new_session(client, tmp_path)
    config_id = mode_option(created)["configId"]
    unknown = client.call(
        "session/set_config_option", {"sessionId": sid, "configId": "_nope", "type": "id", "value": "code"}
    )
    assert unknown[0].get("error", {}).get("code") == -32602, unknown[0]
    params = {"sessionId": "sess_never_made", "configId": config_id, "type": "id", "value": "code"}
    missing = client.call("session/set_config_option", params)[0]
    assert missing.get("error", {}).get("code") == -32002, missing
    resumed = client.result("session/resume", {"sessionId": sid, "cwd": str(tmp_path)})
    assert mode_option(resumed)["currentValue"] == "ask", resumed


def test_close_during_a_turn_ends_it_before_the_close_result(client: V2Client, tmp_path: Path) -> None:
    """The schema's CloseSessionRequest: closing cancels the foreground work, and its final
    updates and the idle ``state_update`` with ``cancelled`` come before the close result."""
    client.initialize()
    sid, _ = new_session(client, tmp_path)
    client.result("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "/delay 30 a long turn"}]})
    client.until(lambda m: is_state(m, "running"))
    response, before = client.call("session/close", {"sessionId": sid})
    assert response.get("result") == {}, response
    idle = [update_of(m) for m in before if is_state(m, "idle")]
    assert idle == [{"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}], kinds(before)


def test_archive_while_a_permission_waits_ends_the_turn_before_its_result(client: V2Client, tmp_path: Path) -> None:
    """Archiving an open session cancels its turn in the client's stead: the permission
    request the agent waits on is answered ``cancelled`` for it, the turn ends idle
    ``cancelled`` before the archive result, and the client's own late answer goes nowhere."""
    client.initialize()
    sid, _ = new_session(client, tmp_path)
    client.result("session/prompt", {"sessionId": sid, "prompt": TURN})
    asked = client.until(lambda m: m.get("method") == "session/request_permission")[-1]
    response, before = client.call("session/archive", {"sessionId": sid})
    assert response.get("result") == {}, response
    idle = [update_of(m) for m in before if is_state(m, "idle")]
    assert idle == [{"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}], kinds(before)
    client.answer(asked, allow(asked))
    assert client.gather(1.0) == []


def test_a_prompt_sent_while_a_turn_runs_and_then_cancel(client: V2Client, tmp_path: Path) -> None:
    """A second prompt while the first turn runs (the protocol 1 agent takes both at once);
    ``session/cancel`` then ends the work (the agent answers both prompts): the client is
    told, with an idle ``state_update`` ``cancelled``, and is never told the session is
    idle while the first prompt still runs in the agent."""
    client.initialize()
    sid, _ = new_session(client, tmp_path)
    client.result("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "/delay 30 first"}]})
    client.until(lambda m: is_state(m, "running"))
    client.result("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "/delay 0.5 second"}]})
    early = client.gather(3)
    assert not [m for m in early if is_state(m, "idle")], f"idle while the first prompt runs: {kinds(early)}"
    client.notify("session/cancel", {"sessionId": sid})
    rest = client.until(lambda m: is_state(m, "idle") and update_of(m).get("stopReason") == "cancelled", timeout=10)
    assert rest, kinds(rest)


@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed-first"])
def test_a_replayed_message_keeps_its_id(client: V2Client, tmp_path: Path, closed: bool) -> None:
    """The schema's PromptResponse: the user message's ``messageId`` ... "If retained and
    replayed, the message keeps this identifier." The protocol 1 agent replays it (on
    ``session/load``) without an id: in the connection that saw it live, the bridge knows
    the id it gave, whether the session was closed before the resume or not."""
    client.initialize()
    sid, _ = new_session(client, tmp_path)
    prompt = [{"type": "text", "text": "/delay 0 remember me"}]
    user_id = client.result("session/prompt", {"sessionId": sid, "prompt": prompt})["messageId"]
    turn = client.until(lambda m: is_state(m, "idle"))
    (agent_id,) = {update_of(m)["messageId"] for m in turn if update_of(m, "agent_message_chunk")}
    if closed:
        assert client.result("session/close", {"sessionId": sid}) == {}
    params = {"sessionId": sid, "cwd": str(tmp_path), "replayFrom": {"type": "start"}}
    _, replay = client.call("session/resume", params)
    *history, state = [update_of(m) for m in replay if update_of(m)]
    replayed = [(u["sessionUpdate"], u["messageId"]) for u in history]
    assert replayed == [("user_message_chunk", user_id), ("agent_message_chunk", agent_id)], replayed
    assert state == {"sessionUpdate": "state_update", "state": "idle"}, kinds(replay)  # (after the replay)


def test_list_close_resume_with_replay_archive_and_an_unknown_method(client: V2Client, tmp_path: Path) -> None:
    client.initialize()
    client.on_request = allow
    sid, _ = new_session(client, tmp_path)
    client.result("session/prompt", {"sessionId": sid, "prompt": TURN})
    client.until(lambda m: is_state(m, "idle"))

    listed = client.result("session/list", {"cwd": str(tmp_path)})["sessions"]
    assert [s["sessionId"] for s in listed] == [sid], listed
    assert [s["archived"] for s in listed] == [False], listed
    assert client.result("session/close", {"sessionId": sid}) == {}

    # Resume with replay: the history as v2 updates, before the result.
    params = {"sessionId": sid, "cwd": str(tmp_path), "replayFrom": {"type": "start"}}
    response, replay = client.call("session/resume", params)
    assert "result" in response, response
    assert mode_option(response["result"])["currentValue"] == "code", response  # (the turn changed it)
    history = [update_of(m) for m in replay if update_of(m)]
    chunks = [u for u in history if u["sessionUpdate"].endswith("_chunk")]
    assert {u["sessionUpdate"] for u in chunks} == {"user_message_chunk", "agent_message_chunk"}, kinds(replay)
    # By message id, in order. (The agent's two messages, replayed one chunk each and without
    # ids, may be one v2 message: protocol 1 does not say where one ends.)
    by_id: dict[str, list[str]] = {}
    for u in chunks:
        by_id.setdefault(u["messageId"], []).append(u["content"]["text"])
    user, *agent = ["".join(texts) for texts in by_id.values()]
    assert user == "/turn" and "".join(agent) == "I will edit notes.txt.Done: notes.txt edited.", by_id
    assert len(agent) in (1, 2) and all(by_id), by_id

    # Archive and unarchive, and an unknown method.
    archive_and_unarchive(client, sid, tmp_path)


def test_the_conformance_kit_passes_protocol_2_through_the_bridge(venv: Path, tmp_path: Path) -> None:
    code, results, out = run_kit(
        "--protocol", "2", "--long-prompt", "/delay 30 a long turn", "--", *polyfill(venv, tmp_path),
        tool=(venv / "acp-codegen",),
    )  # fmt: skip
    v2 = {name: status for (version, name), status in results.items() if version == 2}
    # No session/delete; no session/load in protocol 2 for the kit's history scenario.
    skipped = {"deleted-id", "delete-archived", "history"}
    assert v2 == {s.name: "SKIP" if s.name in skipped else "PASS" for s in SCENARIOS}, out
    assert code == 0 and "0 failed" in out, out
    assert gone_soon(str(tmp_path)) == []


def test_a_protocol_1_client_still_gets_protocol_1(venv: Path, tmp_path: Path) -> None:
    with V2Client(polyfill(venv, tmp_path), None, cwd=ROOT, timeout=TIMEOUT, check=False) as v1:
        init = v1.result("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert init["protocolVersion"] == 1 and "info" not in init, init
        assert init["agentCapabilities"]["sessionCapabilities"]["archive"] == {}, init
        created = v1.result("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert created["modes"]["currentModeId"] == "ask" and "configOptions" not in created, created
        v1.on_request = allow
        response, turn = v1.call("session/prompt", {"sessionId": created["sessionId"], "prompt": TURN})
        assert response["result"] == {"stopReason": "end_turn"}, response
        shown = kinds(turn)
        assert {"tool_call", "plan", "current_mode_update"} <= set(shown), shown
        assert not {"state_update", "user_message", "plan_update", "config_option_update"} & set(shown), shown
        (call,) = [update_of(m, "tool_call") for m in turn if update_of(m, "tool_call")]
        assert call["content"][0]["oldText"] and call["content"][0]["newText"], call
        (asked,) = [m for m in v1.received if m.get("method") == "session/request_permission"]
        assert asked["params"]["toolCall"]["toolCallId"] == call["toolCallId"] and "subject" not in asked["params"]
        chunks = [update_of(m) for m in turn if update_of(m, "agent_message_chunk")]
        assert chunks and not [c for c in chunks if "messageId" in c], chunks  # passed through as written
        assert v1.close() == 0
    assert gone_soon(str(tmp_path)) == []
