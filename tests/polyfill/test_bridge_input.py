"""What the version bridge (``generated_upstream``'s) does with bad input from a v2 client,
and with v1 answers v2 cannot carry, message by message: nothing bad reaches the agent,
every request gets exactly one answer, and the session goes on afterwards.

- JSON-RPC 2.0: an unparsable line is -32700, a value that is no request object -32600, a
  batch is split for the (v1) agent and answered as one array, an invalid entry getting its
  own -32600 and ``[]`` a single -32600 (the migration guide's Transports section);
- v2 params are validated with the package's v2 models before anything is acknowledged or
  forwarded: -32602 naming the field;
- a v1 result that cannot become valid v2 is an error naming what was wrong.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.bridge import SID, TEXT, bridged, prompt, request, to, valid_v2

from generated_upstream.bridge import Bridge


def line(value: Any) -> bytes:
    return json.dumps(value).encode() + b"\n"


def only_client(actions: list[tuple[str, Any]]) -> Any:
    """The one thing the client gets, where the agent gets nothing."""
    assert to("agent", actions) == [], actions
    (answer,) = to("client", actions)
    return answer


def still_serves(bridge: Bridge) -> None:
    """The session goes on: a prompt is forwarded and acknowledged."""
    _, got = prompt(bridge, "after")
    assert got[0]["id"] == "after" and got[0]["result"]["messageId"], got


@pytest.mark.parametrize(
    "text",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": ',
        b"not json",
        b'{"jsonrpc": "2.0", "id": NaN}',
        b"\xff\xfe{}",
        b"[" * 100_000,
    ],
    ids=["cut", "words", "nan", "not-utf8", "deep"],
)
def test_an_unparsable_line_is_a_parse_error(text: bytes) -> None:
    bridge = bridged()
    answer = only_client(bridge.from_client_line(text + b"\n"))
    assert answer["id"] is None and answer["error"]["code"] == -32700, answer
    assert bridge.from_client_line(b"  \n") == []  # (an empty line is no message)
    still_serves(bridge)


@pytest.mark.parametrize(
    ("value", "answer_id"),
    [
        ("hi", None),
        (5, None),
        (None, None),
        (True, None),
        ({}, None),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "session/list"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "session/list"}, None),
        ({"jsonrpc": "1.0", "id": 3, "method": "session/list"}, 3),
        ({"id": 3, "method": "session/list"}, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": 7}, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": "session/list", "params": "x"}, 3),
        ({"jsonrpc": "2.0", "id": 3}, 3),
        ({"jsonrpc": "2.0", "id": 3, "result": {}, "error": {"code": 1, "message": "m"}}, 3),
    ],
)
def test_a_value_that_is_no_request_is_an_invalid_request(value: Any, answer_id: Any) -> None:
    bridge = bridged()
    answer = only_client(bridge.from_client_line(line(value)))
    assert answer["id"] == answer_id and answer["error"]["code"] == -32600, answer
    assert answer["error"]["data"]["reason"], answer
    still_serves(bridge)


def test_an_empty_batch_is_one_invalid_request() -> None:
    bridge = bridged()
    answer = only_client(bridge.from_client_line(b"[]\n"))
    assert isinstance(answer, dict) and answer["id"] is None and answer["error"]["code"] == -32600, answer
    still_serves(bridge)


def test_a_batch_is_split_for_the_agent_and_answered_as_one_array() -> None:
    bridge = bridged()
    batch = [
        request(10, "session/list", {"cwd": "/w"}),
        5,
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}},
        request(11, "session/new", {"cwd": "/w/other"}),
        request(12, "session/new", {"cwd": "relative"}),
    ]
    actions = bridge.from_client_line(line(batch))
    sent = to("agent", actions)
    # One message at a time for the agent, never an array; the client waits for the whole batch.
    assert [m.get("method") for m in sent] == ["session/list", "session/cancel", "session/new"], sent
    assert to("client", actions) == []
    listed = bridge.from_agent({"jsonrpc": "2.0", "id": 10, "result": {"sessions": []}})
    assert listed == []  # (held: 11 is not answered yet)
    (answers,) = to("client", bridge.from_agent({"jsonrpc": "2.0", "id": 11, "result": {"sessionId": "s2"}}))
    assert isinstance(answers, list), answers
    by_id = {a["id"]: a for a in answers}
    assert sorted(by_id, key=str) == sorted([None, 10, 11, 12], key=str), answers
    assert by_id[None]["error"]["code"] == -32600 and by_id[12]["error"]["code"] == -32602, answers
    assert by_id[10]["result"] == {"sessions": []} and by_id[11]["result"]["sessionId"] == "s2", answers
    for answer, method in ((by_id[10], "session/list"), (by_id[11], "session/new")):
        valid_v2(answer, method)
    still_serves(bridge)


def test_a_batch_the_bridge_answers_itself_is_answered_at_once_and_a_prompt_in_one_is_acknowledged_in_it() -> None:
    bridge = bridged()
    batch = [
        request(20, "session/prompt", {"sessionId": "nowhere", "prompt": [TEXT]}),
        request(21, "session/load", {"sessionId": SID, "cwd": "/w", "mcpServers": []}),
        request(22, "session/prompt", {"sessionId": SID, "prompt": "hi"}),
    ]
    (answers,) = to("client", bridge.from_client_line(line(batch)))
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(20, -32002), (21, -32601), (22, -32602)], answers
    # A prompt in a batch: its acknowledgement is the batch's answer; the turn's updates go on their own.
    (sent,) = to(
        "agent", bridge.from_client_line(line([request(23, "session/prompt", {"sessionId": SID, "prompt": [TEXT]})]))
    )
    said = to("client", bridge.forwarded(sent))
    kinds = [m["params"]["update"]["sessionUpdate"] if "method" in m else "answer" for m in said if isinstance(m, dict)]
    assert kinds == ["user_message", "state_update"], said
    (answers,) = [m for m in said if isinstance(m, list)]
    assert [a["id"] for a in answers] == [23] and answers[0]["result"]["messageId"], answers
    # A notification-only batch has no answer.
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}}
    actions = bridge.from_client_line(line([cancel]))
    assert to("client", actions) == [] and to("agent", actions) == [cancel]


def test_v2_params_are_validated_before_anything_is_acknowledged_or_forwarded() -> None:
    bridge = bridged()
    for method, params, field in (
        ("session/prompt", {"sessionId": SID, "prompt": "hi"}, ["prompt"]),
        ("session/prompt", {"sessionId": SID, "prompt": []}, ["prompt"]),
        ("session/new", {"cwd": "relative/dir"}, ["cwd"]),
        ("session/resume", {"sessionId": SID, "cwd": "w"}, ["cwd"]),
        ("session/set_config_option", {"sessionId": SID, "configId": "mode", "value": "code"}, ["type"]),
        ("session/list", {"cwd": 5}, ["cwd"]),
    ):
        answer = only_client(bridge.from_client_line(line(request(30, method, params))))
        assert answer["error"]["code"] == -32602, (method, answer)
        paths = [e["path"] for e in answer["error"]["data"]["errors"]]
        assert any(p[: len(field)] == field for p in paths), (method, paths)
    still_serves(bridge)


def test_a_v1_result_that_cannot_become_v2_is_an_error_naming_what_was_wrong() -> None:
    bridge = bridged()
    for method, params, result, where in (
        ("session/new", {"cwd": "/w"}, None, []),
        ("session/list", {}, {"sessions": [{"sessionId": "s", "cwd": "relative"}]}, ["sessions", 0, "cwd"]),
    ):
        (sent,) = to("agent", bridge.from_client(request(40, method, params)))
        answer = only_client(bridge.from_agent({"jsonrpc": "2.0", "id": sent["id"], "result": result}))
        assert answer["id"] == 40 and answer["error"]["code"] == -32603, answer
        (problem,) = answer["error"]["data"]["errors"]
        assert problem["path"] == where and problem["message"], answer
    # An error the agent words badly is still a valid error.
    (sent,) = to("agent", bridge.from_client(request(41, "session/list", {})))
    answer = only_client(bridge.from_agent({"jsonrpc": "2.0", "id": 41, "error": "nope"}))
    valid_v2(answer)
    assert answer["error"]["code"] == -32603 and answer["error"]["data"] == {"error": "nope"}, answer
    still_serves(bridge)


def test_a_v1_client_is_not_bridged_and_what_it_sends_passes_as_it_is() -> None:
    bridge = Bridge("agent")
    for text in (
        b"not json\n",
        b"[]\n",
        line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
    ):
        assert bridge.from_client_line(text) == [("agent", text)]
    assert not bridge.active and not bridge.interested


def test_the_client_answer_to_an_agent_request_that_v1_cannot_carry_still_answers_the_agent() -> None:
    bridge = bridged()
    prompt(bridge)
    call = {"toolCallId": "t1", "title": "Run?"}
    options = [{"optionId": "y", "name": "Yes", "kind": "allow_once"}]
    to(
        "client",
        bridge.from_agent(
            request("a1", "session/request_permission", {"sessionId": SID, "toolCall": call, "options": options})
        ),
    )
    # v2 outcomes v1 lacks: the agent gets an error for its request rather than nothing.
    answer = {"jsonrpc": "2.0", "id": "a1", "result": {"outcome": {"outcome": "_custom"}}}
    (told,) = to("agent", bridge.from_client(answer))
    assert told["id"] == "a1" and ("error" in told or told["result"]["outcome"]), told
