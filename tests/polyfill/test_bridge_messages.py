"""The version bridge (the runtime's ``_bridge``, as ``generated_upstream`` carries it)
message by message, without processes: a v2 client's messages in, a v1 agent's messages in,
what each side gets out. Where the 2026-11 v2 schema is at hand, every message for the
client is validated against it (``support.bridge``)."""

from __future__ import annotations

import itertools
import json

import pytest
from support.bridge import MODES, SID, TEXT, V1_INIT, bridged, prompt, request, to, update, updates, valid_v2

from generated_upstream.bridge import Bridge


def test_initialize_becomes_v2_and_the_bridge_speaks_only_to_a_v1_agent() -> None:
    bridge = Bridge("agent-cmd")
    params = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}
    bridge.from_client(request(0, "initialize", params))
    (answer,) = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 0, "result": V1_INIT}))
    assert answer["result"] == {
        "protocolVersion": 2,
        "info": {"name": "agent", "title": "Agent", "version": "1.2"},
        "capabilities": {
            "session": {
                "prompt": {"image": {}, "audio": None, "embeddedContext": {}},  # (v1's false: no support)
                "mcp": {"stdio": {}, "http": {}},
                "archive": {},
            }
        },
        "authMethods": [{"methodId": "login", "name": "Log in", "type": "agent"}],
    }
    # An agent that answers 2 is spoken to as it is; a v1 client is never bridged.
    for version, agent_version in ((2, 2), (1, 1)):
        other = Bridge("a")
        init = {"protocolVersion": version, "clientCapabilities": {}}
        assert other.wants(request(0, "initialize", init)) == (version == 2)
        other.from_client(request(0, "initialize", init))
        result = (
            {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "capabilities": {}}
            if agent_version == 2
            else {"protocolVersion": 1, "agentCapabilities": {}}
        )
        assert to("client", other.from_agent({"jsonrpc": "2.0", "id": 0, "result": result}))[0]["result"] == result
        assert not other.active


def test_what_the_client_sends_before_the_agent_answers_initialize_waits_for_the_answer() -> None:
    """A client that writes on without waiting for initialize's answer (a shell's printf)
    gets its messages bridged, not passed to the agent in v2's form."""
    bridge = Bridge("agent-cmd", prefix="bridge-")
    params = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}
    assert len(to("agent", bridge.from_client(request(0, "initialize", params)))) == 1
    early = json.dumps(request(1, "session/new", {"cwd": "/w"})).encode() + b"\n"
    assert bridge.from_client_line(early) == []
    assert bridge.from_client_line(b"[]\n") == []
    actions = bridge.from_agent({"jsonrpc": "2.0", "id": 0, "result": V1_INIT})
    assert [where for where, _ in actions] == ["client", "agent", "client"]
    assert actions[0][1]["result"]["protocolVersion"] == 2
    assert actions[1][1] == request(1, "session/new", {"cwd": "/w", "mcpServers": []})
    assert actions[2][1]["error"]["code"] == -32600  # (the empty batch, in its turn)
    # A v1 client is not held: its lines reach the agent as written.
    plain = Bridge("agent-cmd")
    plain.from_client(request(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
    assert plain.from_client_line(early) == [("agent", early)]


def test_info_is_supplied_where_the_v1_agent_gives_none() -> None:
    bridge = Bridge("agent-cmd")
    params = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}
    bridge.from_client(request(0, "initialize", params))
    (answer,) = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}))
    valid_v2(answer, "initialize")
    assert answer["result"]["info"] == {"name": "agent-cmd", "version": "unknown"}


def test_the_prompt_is_answered_at_once_and_the_turn_is_told_by_state_updates() -> None:
    bridge = bridged()
    own, got = prompt(bridge)
    ack, user, running = got
    assert ack["id"] == 7 and set(ack["result"]) == {"messageId"}
    valid_v2(ack, "session/prompt")
    assert user["params"]["update"] == {
        "sessionUpdate": "user_message",
        "messageId": ack["result"]["messageId"],
        "content": [TEXT],
    }
    assert running["params"]["update"] == {"sessionUpdate": "state_update", "state": "running"}
    stream = [
        update("agent_thought_chunk", content=TEXT),
        update("agent_thought_chunk", content=TEXT),
        update("agent_message_chunk", content=TEXT),
        update("tool_call", toolCallId="t1", title="Edit", kind="edit", status="pending"),
        update("agent_message_chunk", content=TEXT),
        update("usage_update", used=1, size=10),
        update("agent_message_chunk", content=TEXT),
        update("agent_message_chunk", content=TEXT, messageId="agent-own"),
    ]
    out = [u for message in stream for u in updates(bridge.from_agent(message))]
    ids = [u.get("messageId") for u in out]
    assert ids[0] == ids[1] and ids[2] not in (ids[0], None) and ids[4] == ids[6] != ids[2]
    assert ids[7] == "agent-own" and out[3]["sessionUpdate"] == "tool_call_update"
    (idle,) = updates(bridge.from_agent({"jsonrpc": "2.0", "id": own, "result": {"stopReason": "end_turn"}}))
    assert idle == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}


def test_a_prompt_the_agent_fails_ends_idle_with_the_error_and_one_refused_on_the_way_is_the_clients_error() -> None:
    bridge = bridged()
    own, _ = prompt(bridge)
    failure = {"code": -32603, "message": "boom"}
    (idle,) = updates(bridge.from_agent({"jsonrpc": "2.0", "id": own, "error": failure}))
    assert idle == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error", "error": failure}
    # Refused before it reached the agent (the archive layer's -32002): the client's request fails.
    (sent,) = to("agent", bridge.from_client(request(8, "session/prompt", {"sessionId": SID, "prompt": [TEXT]})))
    refusal = {"code": -32002, "message": "archived"}
    assert to("client", bridge.from_agent({"jsonrpc": "2.0", "id": sent["id"], "error": refusal})) == [
        {"jsonrpc": "2.0", "id": 8, "error": refusal}
    ]
    # A session never opened on this connection.
    (error,) = to("client", bridge.from_client(request(9, "session/prompt", {"sessionId": "other", "prompt": [TEXT]})))
    assert error["error"]["code"] == -32002


def test_a_turn_the_agent_fails_after_the_clients_cancel_ends_cancelled() -> None:
    # v1 asks agents to answer a cancelled prompt `cancelled`; some fail with the aborted request.
    bridge = bridged()
    own, _ = prompt(bridge)
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}}
    assert to("agent", bridge.from_client(cancel)) == [cancel]
    aborted = {"code": -32603, "message": "Internal error", "data": {"details": "Request was aborted."}}
    (idle,) = updates(bridge.from_agent({"jsonrpc": "2.0", "id": own, "error": aborted}))
    assert idle == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
    # The next turn was not cancelled: its failure is an error again.
    own, _ = prompt(bridge, 8)
    (idle,) = updates(bridge.from_agent({"jsonrpc": "2.0", "id": own, "error": aborted}))
    assert idle["stopReason"] == "error"


def test_a_permission_request_waits_as_requires_action_and_runs_again_once_answered() -> None:
    bridge = bridged()
    prompt(bridge)
    call = {"toolCallId": "t1", "title": "Run tests?", "kind": "execute", "status": "pending"}
    options = [{"optionId": "y", "name": "Yes", "kind": "allow_once"}]
    asked = request("a1", "session/request_permission", {"sessionId": SID, "toolCall": call, "options": options})
    waiting, forwarded = to("client", bridge.from_agent(asked))
    assert waiting["params"]["update"]["state"] == "requires_action"
    assert forwarded["id"] == "a1" and forwarded["params"]["title"] == "Run tests?"
    assert forwarded["params"]["subject"] == {"type": "tool_call", "toolCall": call}
    valid_v2(forwarded)
    answer = {"jsonrpc": "2.0", "id": "a1", "result": {"outcome": {"outcome": "selected", "optionId": "y"}}}
    actions = bridge.from_client(answer)
    assert to("agent", actions) == [answer]
    assert [u["state"] for u in updates(actions)] == ["running"]


def test_the_agents_paths_relative_to_its_sessions_cwd_become_absolute_there() -> None:
    """v2 requires absolute paths; a v1 agent that names a file relative to the session's
    working directory (qwen-code's completed write) means the one there: its update is passed
    on with the path resolved, not dropped."""
    bridge = bridged()  # (cwd /w)
    diff = {"type": "diff", "path": "standin.txt", "oldText": None, "newText": "x\n"}
    done = update(
        "tool_call_update", toolCallId="t1", status="completed", content=[diff], locations=[{"path": "a/../b"}]
    )
    (call,) = updates(bridge.from_agent(done))
    assert call["content"][0]["changes"] == [{"operation": "add", "path": "/w/standin.txt"}]
    assert call["locations"] == [{"path": "/w/b"}]
    prompt(bridge)
    tool = {"toolCallId": "t2", "title": "Edit", "locations": [{"path": "src/x.py"}]}
    options = [{"optionId": "y", "name": "Yes", "kind": "allow_once"}]
    asked = request("a1", "session/request_permission", {"sessionId": SID, "toolCall": tool, "options": options})
    _, forwarded = to("client", bridge.from_agent(asked))
    valid_v2(forwarded)
    assert forwarded["params"]["subject"]["toolCall"]["locations"] == [{"path": "/w/src/x.py"}]


def test_tool_call_diffs_plans_commands_and_modes_take_their_v2_form() -> None:
    bridge = bridged()
    diff = {"type": "diff", "path": "/w/a.txt", "oldText": "a\n", "newText": "b\n"}
    (call,) = updates(bridge.from_agent(update("tool_call", toolCallId="t1", title="Edit", content=[diff])))
    (change,) = call["content"]
    assert change["changes"] == [{"operation": "modify", "path": "/w/a.txt"}]
    assert change["patch"]["format"] == "git_patch" and "-a\n+b\n" in change["patch"]["text"]
    entries = [{"content": "x", "priority": "high", "status": "pending"}]
    (plan,) = updates(bridge.from_agent(update("plan", entries=entries)))
    (again,) = updates(bridge.from_agent(update("plan", entries=[])))
    assert plan["plan"]["type"] == "items" and plan["plan"]["entries"] == entries
    assert plan["plan"]["planId"] == again["plan"]["planId"]  # one v1 plan a session
    commands = [{"name": "test", "description": "Run", "input": {"hint": "what"}}]
    (listed,) = updates(bridge.from_agent(update("available_commands_update", availableCommands=commands)))
    assert listed["availableCommands"] == [
        {"type": "command", "name": "test", "description": "Run", "input": {"type": "text", "hint": "what"}}
    ]
    (mode,) = updates(bridge.from_agent(update("current_mode_update", currentModeId="code")))
    assert mode["sessionUpdate"] == "config_option_update"
    assert mode["configOptions"][0] == {
        "configId": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": "code",
        "options": [{"value": "ask", "name": "Ask"}, {"value": "code", "name": "Code"}],
    }


def test_the_mode_option_sets_the_agents_mode_and_other_options_go_as_v1_options() -> None:
    bridge = bridged()
    params = {"sessionId": SID, "configId": "mode", "type": "id", "value": "code"}
    (sent,) = to("agent", bridge.from_client(request(3, "session/set_config_option", params)))
    assert sent["method"] == "session/set_mode" and sent["params"] == {"sessionId": SID, "modeId": "code"}
    (answer,) = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 3, "result": {}}))
    valid_v2(answer, "session/set_config_option")
    assert answer["result"]["configOptions"][0]["currentValue"] == "code"
    params = {"sessionId": SID, "configId": "model", "type": "id", "value": "m2"}
    (unknown,) = to("client", bridge.from_client(request(4, "session/set_config_option", params)))
    assert unknown["error"]["code"] == -32602 and unknown["error"]["data"]["errors"][0]["path"] == ["configId"]
    (elsewhere,) = to(
        "client", bridge.from_client(request(4, "session/set_config_option", {**params, "sessionId": "x"}))
    )
    assert elsewhere["error"]["code"] == -32002
    choices = [{"value": "m1", "name": "M1"}, {"value": "m2", "name": "M2"}]
    option = {"id": "model", "name": "Model", "type": "select", "currentValue": "m1", "options": choices}
    updates(bridge.from_agent(update("config_option_update", configOptions=[option])))
    (sent,) = to("agent", bridge.from_client(request(4, "session/set_config_option", params)))
    assert sent["params"] == {"sessionId": SID, "configId": "model", "value": "m2"}
    option = {**option, "currentValue": "m2"}
    (answer,) = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 4, "result": {"configOptions": [option]}}))
    valid_v2(answer, "session/set_config_option")
    assert [o["configId"] for o in answer["result"]["configOptions"]] == ["mode", "model"]


def test_resume_with_replay_is_load_and_the_replay_arrives_as_v2_updates() -> None:
    bridge = bridged()
    params = {"sessionId": SID, "cwd": "/w", "replayFrom": {"type": "start"}}
    (sent,) = to("agent", bridge.from_client(request(5, "session/resume", params)))
    assert sent["method"] == "session/load" and sent["params"] == {"sessionId": SID, "cwd": "/w", "mcpServers": []}
    replay = [update("user_message_chunk", content=TEXT), update("agent_message_chunk", content=TEXT)]
    out = [u for message in replay for u in updates(bridge.from_agent(message))]
    assert out[0]["messageId"] != out[1]["messageId"]
    state, answer = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 5, "result": {"modes": MODES}}))
    assert state["params"]["update"] == {"sessionUpdate": "state_update", "state": "idle"}  # (before the result)
    valid_v2(answer, "session/resume")
    assert "modes" not in answer["result"] and answer["result"]["configOptions"][0]["configId"] == "mode"
    # Without replay: v1's resume. Another replay point cannot be said in v1.
    (sent,) = to("agent", bridge.from_client(request(6, "session/resume", {"sessionId": SID, "cwd": "/w"})))
    assert sent["method"] == "session/resume"
    bad = {"sessionId": SID, "cwd": "/w", "replayFrom": {"type": "message", "messageId": "m"}}
    (error,) = to("client", bridge.from_client(request(7, "session/resume", bad)))
    assert error["error"]["code"] == -32602 and error["error"]["data"]["errors"][0]["path"] == ["replayFrom", "type"]


def test_a_resume_without_replay_over_load_passes_no_replay_on() -> None:
    bridge = bridged({**V1_INIT, "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}}})
    (sent,) = to("agent", bridge.from_client(request(5, "session/resume", {"sessionId": SID, "cwd": "/w"})))
    assert sent["method"] == "session/load"
    line = json.dumps(update("agent_message_chunk", content=TEXT)).encode() + b"\n"
    assert bridge.fast_lines(line) is None and bridge.from_agent(json.loads(line)) == []
    to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 5, "result": {}}))
    assert updates(bridge.from_agent(json.loads(line)))[0]["messageId"]


def test_what_v1_cannot_say_is_refused_to_the_side_that_said_it() -> None:
    bridge = bridged()
    for method in ("session/load", "session/set_mode", "terminal/cancel", "tool_call/cancel"):
        (error,) = to("client", bridge.from_client(request(1, method, {"sessionId": SID})))
        assert error["error"]["code"] == -32601 and error["error"]["data"]["method"] == method
    sse = {"cwd": "/w", "mcpServers": [{"type": "acp", "name": "x", "id": "y"}]}
    (error,) = to("client", bridge.from_client(request(2, "session/new", sse)))
    assert error["error"]["code"] == -32602 and error["error"]["data"]["errors"][0]["path"] == ["mcpServers", 0, "type"]
    (error,) = to("agent", bridge.from_agent(request("f", "fs/read_text_file", {"sessionId": SID, "path": "/w/a"})))
    assert error["id"] == "f" and error["error"]["code"] == -32601
    (login,) = to("agent", bridge.from_client(request(3, "auth/login", {"methodId": "login"})))
    assert login["method"] == "authenticate"
    # An agent without v1's logout answers it -32601 naming `logout`: the client hears of its own method.
    (logout,) = to("agent", bridge.from_client(request(5, "auth/logout", {})))
    refusal = {"code": -32601, "message": "Method not found", "data": {"method": "logout"}}
    (answer,) = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": logout["id"], "error": refusal}))
    assert answer["error"] == {**refusal, "data": {"method": "auth/logout"}}
    unknown = request(4, "foo/bar", {})
    assert to("agent", bridge.from_client(unknown)) == [unknown]  # the agent's own -32601 comes back as it is


def test_list_goes_to_an_agent_that_lists_and_is_served_from_the_sessions_opened_for_one_that_does_not() -> None:
    # v2's `session` capability promises list; a v1 agent promises it only with `list`.
    lister = bridged()
    (sent,) = to("agent", lister.from_client(request(2, "session/list", {"cwd": "/w"})))
    assert sent["method"] == "session/list"
    silent = bridged({**V1_INIT, "agentCapabilities": {"loadSession": True}})
    assert to("agent", silent.from_client(request(2, "session/list", {"cwd": "/w"}))) == []
    (answer,) = to("client", silent.from_client(request(3, "session/list", {"cwd": "/w"})))
    valid_v2(answer, "session/list")
    assert [(s["sessionId"], s["cwd"]) for s in answer["result"]["sessions"]] == [(SID, "/w")]
    (other,) = to("client", silent.from_client(request(4, "session/list", {"cwd": "/elsewhere"})))
    assert other["result"] == {"sessions": []}


def test_a_read_of_plain_chunks_gets_the_ids_line_by_line_decoding_would_give() -> None:
    tag_first = [update("agent_message_chunk", content={"type": "text", "text": f"{i} \\n \u00e9"}) for i in range(50)]
    tag_last = [  # (as pydantic writes the official Python SDK's)
        {**m, "params": {"sessionId": SID, "update": {"content": TEXT, "sessionUpdate": "agent_thought_chunk"}}}
        for m in tag_first
    ]
    for lines, separators in itertools.product((tag_first, tag_last), ((",", ":"), (", ", ": "))):
        data = b"".join(json.dumps(m, separators=separators).encode() + b"\n" for m in lines)
        fast, slow = bridged(), bridged()
        out = fast.fast_lines(data)
        assert out is not None
        got = [json.loads(line) for line in out.splitlines()]
        expected = [m for line in lines for m in to("client", slow.from_agent(line))]
        assert got == expected
    # A read holding anything else (a response, another kind, an id given) is looked at line by line.
    for line in (tag_first[0], tag_last[0]):
        chunk = json.dumps(line).encode() + b"\n"
        for other in (
            {"jsonrpc": "2.0", "id": 3, "result": {}},
            update("tool_call", toolCallId="t"),
            update("agent_message_chunk", content=TEXT, messageId="m"),
            {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID, "update": {"content": TEXT}}},
        ):
            assert bridged().fast_lines(chunk + json.dumps(other).encode() + b"\n" + chunk) is None
        assert bridged().fast_lines(b" " + chunk + chunk) is None


@pytest.mark.parametrize("kind", ["agent_message_chunk", "agent_thought_chunk"])
def test_a_single_chunk_line_is_written_in_without_decoding(kind: str) -> None:
    bridge = bridged()
    line = json.dumps(update(kind, content=TEXT), separators=(",", ":")).encode() + b"\n"
    out = bridge.fast(line)
    assert out is not None and json.loads(out)["params"]["update"]["messageId"]
    assert bridge.fast(line) == out  # the same message goes on
    assert bridge.fast(json.dumps(update("tool_call", toolCallId="t")).encode()) is None
    # What the conversions may change is decoded: the user's chunks (an echo during a turn),
    # annotations, another block than text.
    for other in (
        update("user_message_chunk", content=TEXT),
        update(kind, content={**TEXT, "annotations": {"lastModified": "yesterday"}}),
        update(kind, content={"type": "resource_link", "uri": "file:///w/a", "name": "a"}),
    ):
        assert bridge.fast(json.dumps(other, separators=(",", ":")).encode() + b"\n") is None


def test_a_result_claiming_2_in_protocol_1s_shape_is_bridged_as_protocol_1() -> None:
    """fast-agent 0.10.48 echoes the client's 2 with a v1 result, and speaks 1 after."""
    claimed = {**V1_INIT, "protocolVersion": 2}
    bridge = bridged(claimed)
    assert bridge.active
    # A real v2 result (info, capabilities) is the agent's own version.
    other = Bridge("a")
    params = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}
    other.from_client(request(0, "initialize", params))
    v2 = {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "capabilities": {}, "agentCapabilities": {}}
    assert to("client", other.from_agent({"jsonrpc": "2.0", "id": 0, "result": v2}))[0]["result"] == v2
    assert not other.active


def test_a_replay_gives_each_message_the_id_it_had_live() -> None:
    bridge = bridged()
    own, (ack, *_) = prompt(bridge)
    live = [
        update("agent_thought_chunk", content=TEXT),
        update("agent_message_chunk", content=TEXT),
        update("agent_message_chunk", content=TEXT),
    ]
    thought, message, _ = (u["messageId"] for m in live for u in updates(bridge.from_agent(m)))
    updates(bridge.from_agent({"jsonrpc": "2.0", "id": own, "result": {"stopReason": "end_turn"}}))

    def replay(request_id: int) -> list[str]:
        params = {"sessionId": SID, "cwd": "/w", "replayFrom": {"type": "start"}}
        to("agent", bridge.from_client(request(request_id, "session/resume", params)))
        # v1's replay has no thoughts here, and a message of its own at the end.
        replayed = [live[1], update("user_message_chunk", content=TEXT), update("agent_message_chunk", content=TEXT)]
        replayed.insert(0, update("user_message_chunk", content=TEXT))
        ids = [u["messageId"] for m in replayed for u in updates(bridge.from_agent(m))]
        to("client", bridge.from_agent({"jsonrpc": "2.0", "id": request_id, "result": {}}))
        return ids

    first = replay(20)
    assert first[:2] == [ack["result"]["messageId"], message] and thought not in first
    assert len(set(first)) == 4
    assert replay(21) == first  # (what the first replay added, the second keeps)


@pytest.mark.parametrize("has_close", [True, False])
def test_close_ends_the_turns_and_answers_what_waits_before_its_result(has_close: bool) -> None:
    caps = {**V1_INIT["agentCapabilities"], "sessionCapabilities": {"list": {}, "close": {}} if has_close else {}}
    bridge = bridged({**V1_INIT, "agentCapabilities": caps})
    own, _ = prompt(bridge)
    prompt(bridge, 8)  # a second prompt while the first runs: one turn, idle once both are answered
    assert updates(bridge.from_agent({"jsonrpc": "2.0", "id": own, "result": {"stopReason": "end_turn"}})) == []
    call = {"toolCallId": "t1", "title": "Run?"}
    options = [{"optionId": "y", "name": "Yes", "kind": "allow_once"}]
    bridge.from_agent(
        request("a1", "session/request_permission", {"sessionId": SID, "toolCall": call, "options": options})
    )
    actions = bridge.from_client(request(9, "session/close", {"sessionId": SID}))
    cancelled = {"jsonrpc": "2.0", "id": "a1", "result": {"outcome": {"outcome": "cancelled"}}}
    if has_close:
        assert to("agent", actions) == [request(9, "session/close", {"sessionId": SID})]
        actions = bridge.from_agent({"jsonrpc": "2.0", "id": 9, "result": {}})
        assert to("agent", actions) == [cancelled]
    else:  # the bridge closes it: the turn cancelled in the agent
        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}}
        assert to("agent", actions) == [cancel, cancelled]
    idle, closed = to("client", actions)
    assert idle["params"]["update"] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
    assert closed == {"jsonrpc": "2.0", "id": 9, "result": {}}
    # The client's late answer, and the agent's late end of the turn, go nowhere.
    late = {"jsonrpc": "2.0", "id": "a1", "result": {"outcome": {"outcome": "selected", "optionId": "y"}}}
    assert bridge.from_client(late) == []
    (error,) = to("client", bridge.from_client(request(10, "session/prompt", {"sessionId": SID, "prompt": [TEXT]})))
    assert error["error"]["code"] == -32002


def test_times_without_an_offset_get_the_local_one() -> None:
    bridge = bridged()
    (info,) = updates(bridge.from_agent(update("session_info_update", updatedAt="2026-12-04T08:48:30.328992")))
    assert info["updatedAt"].startswith("2026-12-04T") and info["updatedAt"][-6] in "+-"
    to("agent", bridge.from_client(request(3, "session/list", {})))
    listed = {
        "sessions": [
            {"sessionId": SID, "cwd": "/w", "updatedAt": "2026-12-04T08:48:30"},
            {"sessionId": "b", "cwd": "/w"},
        ]
    }
    (answer,) = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 3, "result": listed}))
    first, second = answer["result"]["sessions"]
    assert first["updatedAt"][-6] in "+-" and second == listed["sessions"][1]


@pytest.mark.parametrize("running", [False, True], ids=["idle", "during-a-turn"])
def test_resume_without_replay_sends_the_current_state_before_its_result(running: bool) -> None:
    """2026-11's ResumeSessionResponse: "The agent MUST send a current `state_update` after any
    requested history replay and before this response, even without replay."""
    bridge = bridged()
    if running:
        prompt(bridge)
    (sent,) = to("agent", bridge.from_client(request(5, "session/resume", {"sessionId": SID, "cwd": "/w"})))
    assert sent["method"] == "session/resume"
    state, answer = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 5, "result": {}}))
    assert state["params"]["update"] == {"sessionUpdate": "state_update", "state": "running" if running else "idle"}
    assert answer["id"] == 5 and "result" in answer
    valid_v2(state)
    valid_v2(answer, "session/resume")


def test_an_agent_without_the_baseline_methods_still_gets_the_session_capability_and_each_is_served() -> None:
    """v2's ``capabilities.session`` promises list, resume and close: where the v1 agent has
    none of them, the bridge serves each (list: the sessions opened through it; close: the
    turn ended and the session forgotten; resume: a session the agent still has open)."""
    bare = {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": {"name": "a", "version": "1"}}
    bridge = Bridge("agent-cmd", prefix="bridge-")
    params = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}
    bridge.from_client(request(0, "initialize", params))
    (answer,) = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 0, "result": bare}))
    valid_v2(answer, "initialize")
    assert isinstance(answer["result"]["capabilities"]["session"], dict), answer
    to("agent", bridge.from_client(request(1, "session/new", {"cwd": "/w"})))
    to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": SID}}))
    served = []
    for request_id, method, params in (
        (2, "session/list", {}),
        (3, "session/close", {"sessionId": SID}),
        (4, "session/resume", {"sessionId": SID, "cwd": "/w"}),
        (5, "session/resume", {"sessionId": "never-opened", "cwd": "/w"}),
    ):
        actions = bridge.from_client(request(request_id, method, params))
        assert [m.get("method") for m in to("agent", actions)] in ([], ["session/cancel"]), (method, actions)
        (answer,) = [m for m in to("client", actions) if "method" not in m]
        valid_v2(answer, method)
        served.append(answer.get("result", answer.get("error")))
    listed, closed, resumed, unknown = served
    assert [s["sessionId"] for s in listed["sessions"]] == [SID] and closed == {} and "code" not in resumed
    assert unknown["code"] == -32002, unknown
    # Replay needs the agent's load: -32602 on replayFrom, the method itself is served.
    replay = {"sessionId": SID, "cwd": "/w", "replayFrom": {"type": "start"}}
    (refused,) = to("client", bridge.from_client(request(6, "session/resume", replay)))
    assert refused["error"]["code"] == -32602 and refused["error"]["data"]["errors"][0]["path"] == ["replayFrom"]


def test_the_agents_echo_of_a_live_prompt_is_not_shown_twice_and_a_replay_keeps_it() -> None:
    bridge = bridged()
    own, got = prompt(bridge)
    user_id = got[0]["result"]["messageId"]
    assert [m["params"]["update"]["sessionUpdate"] for m in got[1:]] == ["user_message", "state_update"]
    echo = update("user_message_chunk", content=TEXT)
    assert to("client", bridge.from_agent(echo)) == []  # (the client has it as user_message)
    assert bridge.fast(json.dumps(echo, separators=(",", ":")).encode() + b"\n") is None
    updates(bridge.from_agent({"jsonrpc": "2.0", "id": own, "result": {"stopReason": "end_turn"}}))
    params = {"sessionId": SID, "cwd": "/w", "replayFrom": {"type": "start"}}
    to("agent", bridge.from_client(request(8, "session/resume", params)))
    (replayed,) = updates(bridge.from_agent(echo))
    assert replayed == {"sessionUpdate": "user_message_chunk", "content": TEXT, "messageId": user_id}


def test_after_close_the_agents_messages_for_the_session_are_not_passed_on() -> None:
    """2026-11's CloseSessionRequest: "After the close response, the Agent sends no other
    messages for the session on that connection." A v1 agent may still: the bridge holds them."""
    bridge = bridged(
        {
            **V1_INIT,
            "agentCapabilities": {**V1_INIT["agentCapabilities"], "sessionCapabilities": {"list": {}, "close": {}}},
        }
    )
    to("agent", bridge.from_client(request(9, "session/close", {"sessionId": SID})))
    to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 9, "result": {}}))
    assert bridge.from_agent(update("agent_message_chunk", content=TEXT)) == []
    asked = request(
        "late", "session/request_permission", {"sessionId": SID, "toolCall": {"toolCallId": "t"}, "options": []}
    )
    assert bridge.from_agent(asked) == [
        ("agent", {"jsonrpc": "2.0", "id": "late", "result": {"outcome": {"outcome": "cancelled"}}})
    ]


@pytest.mark.parametrize("load", [True, False], ids=["then-load", "then-the-bridge"])
def test_an_agent_that_advertises_resume_but_has_none_is_resumed_another_way(load: bool) -> None:
    """qwen-code 0.15.10 advertises ``sessionCapabilities.resume`` and answers -32601: v2's
    ``session`` capability promised resume, so the bridge resumes through load, or itself."""
    caps = {"loadSession": load, "sessionCapabilities": {"list": {}, "resume": {}}}
    bridge = bridged({**V1_INIT, "agentCapabilities": caps})
    params = {"sessionId": SID, "cwd": "/w"}
    (sent,) = to("agent", bridge.from_client(request(5, "session/resume", params)))
    assert sent["method"] == "session/resume"
    missing = {"jsonrpc": "2.0", "id": 5, "error": {"code": -32601, "message": "Method not found"}}
    actions = bridge.from_agent(missing)
    if load:
        (again,) = to("agent", actions)
        assert again["method"] == "session/load" and to("client", actions) == []
        actions = bridge.from_agent({"jsonrpc": "2.0", "id": 5, "result": {}})
    state, answer = to("client", actions)
    assert state["params"]["update"] == {"sessionUpdate": "state_update", "state": "idle"}
    assert answer["id"] == 5 and "result" in answer, answer
    valid_v2(answer, "session/resume")


def test_archive_closes_an_open_session_before_its_result() -> None:
    """The RFD: archiving a session open on the connection ends its turn and closes it (the
    idle ``cancelled`` before the result); a prompt then is -32002, and unarchive does not
    reopen it: a resume does. An agent's refusal closes nothing."""
    bridge = bridged()
    prompt(bridge)
    (sent,) = to("agent", bridge.from_client(request(9, "session/archive", {"sessionId": SID})))
    refused = {"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32603, "message": "no"}}
    assert [m.get("error", {}).get("code") for m in to("client", bridge.from_agent(refused))] == [-32603]
    (sent,) = to("agent", bridge.from_client(request(10, "session/archive", {"sessionId": SID})))
    idle, archived = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": sent["id"], "result": {}}))
    assert idle["params"]["update"] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
    assert archived == {"jsonrpc": "2.0", "id": 10, "result": {}}
    (sent,) = to("agent", bridge.from_client(request(11, "session/unarchive", {"sessionId": SID})))
    assert to("client", bridge.from_agent({"jsonrpc": "2.0", "id": sent["id"], "result": {}}))[0]["result"] == {}
    (closed,) = to("client", bridge.from_client(request(12, "session/prompt", {"sessionId": SID, "prompt": [TEXT]})))
    assert closed["error"]["code"] == -32002, closed
