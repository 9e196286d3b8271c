"""Published protocol 1 agents, from npm and PyPI as people install them (pinned exactly
here, never a dependency of the tool), each run against a local stand-in for its model's
API (``support.model_standin``: no credentials, a ``HOME`` of its own) twice: in protocol 1
directly, and in protocol 2 through ``acp-codegen polyfill`` from the built wheel, whose
version bridge translates. The same four checks each time, each in a session of its own:

- ``plain``: a prompt the stand-in answers with text; the turn ends ``end_turn`` with that
  text. In protocol 2: the prompt acknowledged with its ``messageId``, the user's message
  sent once under that id (an agent that echoes the prompt as ``user_message_chunk`` must
  not show it twice), ``running`` before the output, every chunk of the reply under one id;
- ``tool``: the stand-in calls a tool of the agent's that asks permission; the client
  allows it once, the tool runs (its file is written), the agent's tool call reaches the
  client and the turn ends ``end_turn``. In protocol 2: ``requires_action`` before the
  permission request, which carries ``title`` and a ``tool_call`` subject, and ``running``
  again after the client's answer;
- ``cancel``: ``session/cancel`` while the stand-in streams; the turn ends ``cancelled``;
- ``list``: ``session/list`` with the session's ``cwd`` names the ``plain`` check's session.

Every message the protocol 2 client receives is checked against upstream's 2026-11 v2
schema (``support.acp_v2``); one that is not valid fails the check it came in. The bar is
the issue's: no check fails through the bridge that does not also fail against the agent
in protocol 1 directly (and the protocol 1 ``plain`` turn passes: the stand-in works). The
polyfill exits at the end of its input and leaves no process of its group behind.

Agents (each installed once into ``tests/conformance/.agent_cache/``, see
``support.published_agents``; skipped where its registry cannot be reached):

- ``@qwen-code/qwen-code`` 0.15.10 (npm; OpenAI's API): ``write_file``;
- ``@zed-industries/claude-code-acp`` 0.16.2 (npm; Anthropic's API, the Claude Agent SDK's
  bundled CLI): ``Write``;
- ``mistral-vibe`` 3.0.2 (PyPI, on the official Python SDK 0.11.0; OpenAI's API through a
  ``generic`` provider): ``bash`` (it writes files without asking); it echoes the prompt;
- ``fast-agent-mcp`` 0.10.48 (PyPI; OpenAI's API as its ``generic`` model): an MCP tool
  (``tests/agents/mcp_write_tool.py``: fast-agent asks before every MCP tool call; its
  own file tools ask nothing).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support import ROOT, SHARED_UPSTREAM, fresh_venv
from support.acp_v2 import Message, V2Client, V2Schema, is_response, is_state, update_of
from support.model_standin import AFTER_TOOL, REPLY, SLOW, TOOL, StandIn, ToolCall
from support.published_agents import npm_agent, pypi_agent, setup_env
from support.reference_data import require

pytestmark = [
    pytest.mark.ecosystem,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="runs each agent in a process group of its own"),
]

V2_SCHEMA = SHARED_UPSTREAM / "2026-11" / "v2" / "schema.unstable.json"
TIMEOUT = 60.0
CHECKS = ("plain", "tool", "cancel", "list")
WRITTEN = "written by the stand-in tool call\n"
MCP_TOOL = ROOT / "tests" / "agents" / "mcp_write_tool.py"


@dataclass
class Run:
    """How an agent is started against the stand-in: its command, its environment (beyond
    the user's, with ``HOME`` its own), and the tool call the stand-in makes."""

    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    tool: ToolCall | None = None


def qwen_code(launcher: Path, model: StandIn, home: Path, work: Path) -> Run:
    env = {"OPENAI_API_KEY": "standin", "OPENAI_BASE_URL": model.url("/v1"), "OPENAI_MODEL": "standin-1"}
    tool = ToolCall("write_file", {"file_path": str(work / "standin.txt"), "content": WRITTEN})
    return Run([str(launcher), "--acp", "--auth-type", "openai"], env, tool)


def claude_code_acp(launcher: Path, model: StandIn, home: Path, work: Path) -> Run:
    env = {
        "ANTHROPIC_API_KEY": "standin",
        "ANTHROPIC_BASE_URL": model.url(),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        # The Claude CLI refuses to start as root outside a sandbox (CI runs as root).
        "IS_SANDBOX": "1",
    }
    tool = ToolCall("Write", {"file_path": str(work / "standin.txt"), "content": WRITTEN})
    return Run([str(launcher)], env, tool)


def mistral_vibe(launcher: Path, model: StandIn, home: Path, work: Path) -> Run:
    (home / ".vibe").mkdir()
    (home / ".vibe" / "config.toml").write_text(
        'active_model = "standin"\n\n'
        f'[[providers]]\nname = "standin"\napi_base = "{model.url("/v1")}"\n'
        'api_key_env_var = ""\nbackend = "generic"\n\n'
        '[[models]]\nname = "standin-1"\nprovider = "standin"\nalias = "standin"\n',
        encoding="utf-8",
    )
    return Run([str(launcher)], {}, ToolCall("bash", {"command": f"echo '{WRITTEN.strip()}' > standin.txt"}))


def fast_agent(launcher: Path, model: StandIn, home: Path, work: Path) -> Run:
    env = {"GENERIC_BASE_URL": model.url("/v1"), "GENERIC_API_KEY": "standin"}
    tool_server = f"{launcher.parent / 'python'} {MCP_TOOL}"
    return Run(
        [str(launcher), "--model", "generic.standin-1", "--stdio", tool_server],
        env,
        ToolCall("write_note", {"text": WRITTEN}),
    )


@dataclass
class Agent:
    install: Callable[[pytest.TempPathFactory], Path]
    run: Callable[[Path, StandIn, Path, Path], Run]


AGENTS = {
    "qwen-code": Agent(lambda _: npm_agent("@qwen-code/qwen-code", "0.15.10", "qwen"), qwen_code),
    "claude-code-acp": Agent(
        lambda _: npm_agent("@zed-industries/claude-code-acp", "0.16.2", "claude-code-acp"), claude_code_acp
    ),
    "mistral-vibe": Agent(
        lambda tmp: pypi_agent("mistral-vibe", "3.0.2", "vibe-acp", ((3, 12), (3, 15)), tmp.mktemp("probe")),
        mistral_vibe,
    ),
    "fast-agent": Agent(
        lambda tmp: pypi_agent("fast-agent-mcp", "0.10.48", "fast-agent-acp", ((3, 12), (3, 16)), tmp.mktemp("probe")),
        fast_agent,
    ),
}


@pytest.fixture(scope="module")
def polyfill_tool(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``acp-codegen`` installed from the built wheel, not this checkout."""
    return fresh_venv(tmp_path_factory.mktemp("polyfill-venv") / "venv", wheel) / "acp-codegen"


@pytest.fixture(scope="module")
def schema() -> V2Schema:
    return V2Schema(require(V2_SCHEMA))


def said_now(message: Message) -> str:
    """The text of an agent message chunk (an agent may send an empty one first)."""
    chunk = update_of(message, "agent_message_chunk")
    return str(chunk["content"].get("text") or "") if chunk else ""


# -- one version's side of each check ----------------------------------------------------


class Talk:
    """One connection to the agent in one protocol version, and what each check asks of it.
    A check raises AssertionError saying what failed."""

    def __init__(self, client: V2Client, version: int, work: Path) -> None:
        self.client, self.version, self.work = client, version, work
        self.asked: list[Message] = []  # the agent's permission requests
        self.prompted: str | None = None  # a session that has had a prompt
        client.on_request = self._permission

    def _permission(self, request: Message) -> Any:
        assert request["method"] == "session/request_permission", f"an agent request no check expects: {request}"
        self.asked.append(request)
        (once, *_) = [o for o in request["params"]["options"] if o["kind"] == "allow_once"]
        return {"outcome": {"outcome": "selected", "optionId": once["optionId"]}}

    def initialize(self) -> dict[str, Any]:
        if self.version == 2:
            return self.client.initialize()
        info = {"name": "published-agents-test", "version": "1"}
        return self.client.result("initialize", {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": info})

    def new_session(self) -> str:
        params: dict[str, Any] = {"cwd": str(self.work)}
        if self.version == 1:
            params["mcpServers"] = []
        sid: str = self.client.result("session/new", params, timeout=TIMEOUT)["sessionId"]
        return sid

    def turn(self, sid: str, text: str, cancel: bool = False) -> tuple[str, list[Message]]:
        """A prompt's turn: its stop reason and what was received meanwhile, less other
        sessions' updates (``cancel``: ``session/cancel`` once the reply's text has begun)."""
        prompt = [{"type": "text", "text": text}]
        prompt_id = self.client.send("session/prompt", {"sessionId": sid, "prompt": prompt})

        def of_this(m: Message) -> bool:
            return m.get("method") != "session/update" or m["params"].get("sessionId") == sid

        got: list[Message] = []
        if cancel:
            got += self.client.until(lambda m: of_this(m) and bool(said_now(m)), TIMEOUT)
            self.client.notify("session/cancel", {"sessionId": sid})
        if self.version == 1:
            got += self.client.until(lambda m: is_response(m, prompt_id), TIMEOUT)
            assert "result" in got[-1], f"the prompt failed: {got[-1]}"
            return got[-1]["result"]["stopReason"], [m for m in got if of_this(m)]
        got += self.client.until(lambda m: of_this(m) and is_state(m, "idle"), TIMEOUT)
        got = [m for m in got if of_this(m)]
        return self.v2_turn(prompt_id, prompt, got), got

    def v2_turn(self, prompt_id: int, prompt: list[Any], got: list[Message]) -> str:
        """What protocol 2 asks of every turn: the prompt acknowledged with the user
        message's id before the turn ends, that message sent once, ``running`` before any
        output; the idle state's stop reason."""
        (answer,) = [m for m in got if is_response(m, prompt_id)]
        assert "result" in answer, f"the prompt was refused: {answer}"
        user_id = answer["result"]["messageId"]
        users = [u for m in got if (u := update_of(m)) and u["sessionUpdate"] in ("user_message", "user_message_chunk")]
        # (user_message holds the whole content, user_message_chunk a block of it)
        sent = [
            (u.get("messageId"), c)
            for u in users
            for c in (u["content"] if isinstance(u["content"], list) else [u["content"]])
        ]
        assert sent == [(user_id, c) for c in prompt], f"the user's message is not sent once under {user_id}: {users}"
        states = [(i, u["state"]) for i, m in enumerate(got) if (u := update_of(m, "state_update"))]
        output = [i for i, m in enumerate(got) if str((update_of(m) or {}).get("sessionUpdate")).startswith("agent_")]
        assert states and states[0][1] == "running", f"not running first: {states}"
        assert not output or states[0][0] < output[0], "output before the running state"
        stop: str = update_of(got[-1])["stopReason"]  # type: ignore[index]
        return stop

    @staticmethod
    def said(got: list[Message]) -> tuple[str, set[str]]:
        """The agent's message text of a turn, and (protocol 2) the ids it came under."""
        chunks = [u for m in got if (u := update_of(m, "agent_message_chunk")) and u["content"].get("text")]
        return "".join(c["content"]["text"] for c in chunks), {c.get("messageId", "") for c in chunks}

    # -- the checks ------------------------------------------------------------------------

    def plain(self) -> None:
        self.prompted = self.new_session()
        stop, got = self.turn(self.prompted, "hi there")
        assert stop == "end_turn", f"stop reason {stop}"
        text, ids = self.said(got)
        assert text.strip() == REPLY, f"the reply was {text!r}"
        assert self.version == 1 or len(ids) == 1, f"one reply under {len(ids)} message ids"

    def tool(self) -> None:
        sid = self.new_session()
        asked = len(self.asked)
        stop, got = self.turn(sid, f"please {TOOL}")
        assert stop == "end_turn", f"stop reason {stop}"
        assert len(self.asked) == asked + 1, f"{len(self.asked) - asked} permission requests"
        assert (self.work / "standin.txt").read_text(encoding="utf-8") == WRITTEN, "the tool did not run"
        assert AFTER_TOOL in self.said(got)[0], f"no reply after the tool: {self.said(got)[0]!r}"
        request = self.asked[-1]["params"]
        if self.version == 1:
            call_id = request["toolCall"]["toolCallId"]
            calls = [u for m in got if (u := update_of(m)) and u["sessionUpdate"] in ("tool_call", "tool_call_update")]
        else:
            assert request.get("title") and request["subject"]["type"] == "tool_call", f"permission request {request}"
            call_id = request["subject"]["toolCall"]["toolCallId"]
            calls = [u for m in got if (u := update_of(m, "tool_call_update"))]
            at = next(i for i, m in enumerate(got) if m.get("method") == "session/request_permission")
            states = [u["state"] for m in got[:at] if (u := update_of(m, "state_update"))]
            assert states[-1:] == ["requires_action"], f"states before the permission request: {states}"
            after = [u["state"] for m in got[at:] if (u := update_of(m, "state_update"))]
            assert after[:1] == ["running"], f"states after the client's answer: {after}"
        assert call_id in {c["toolCallId"] for c in calls}, f"the tool call {call_id} never reported: {calls}"

    def cancel(self) -> None:
        stop, _ = self.turn(self.new_session(), f"go on {SLOW}", cancel=True)
        assert stop == "cancelled", f"stop reason {stop}"

    def list(self) -> None:
        """The plain check's session (some agents list a session only once it has had a
        prompt; each session of claude-code-acp is a process of its own, seconds to start)."""
        sid = self.prompted
        if sid is None:
            sid = self.new_session()
            self.turn(sid, "hi there")
        listed = self.client.result("session/list", {"cwd": str(self.work)}, timeout=TIMEOUT)["sessions"]
        assert sid in [s["sessionId"] for s in listed], f"{sid} not listed: {listed}"


def run_checks(command: list[str], env: dict[str, str], version: int, work: Path, schema: V2Schema) -> dict[str, str]:
    """Each check against a fresh agent connection's sessions: ``{check: "" or why it
    failed}``. The agent runs in a process group of its own (setsid), ended afterwards."""
    verdicts = {}
    client = V2Client(["setsid", *command], schema, cwd=work, env=env, timeout=TIMEOUT, check=version == 2)
    try:
        talk = Talk(client, version, work)
        init = talk.initialize()
        assert init["protocolVersion"] == version, init
        for check in CHECKS:
            (work / "standin.txt").unlink(missing_ok=True)
            started = time.monotonic()
            try:
                getattr(talk, check)()
                verdicts[check] = ""
            except AssertionError as failed:
                verdicts[check] = str(failed)[:1500] or repr(failed)
            print(f"v{version} {check}: {time.monotonic() - started:.1f} s", file=sys.stderr)
        if version == 2:
            # It exits with the agent's status (143 where it had to end an agent that
            # outlives its input, as claude-code-acp does), and leaves nothing behind.
            client.close(timeout=TIMEOUT)
            assert group_gone(client.proc.pid, 15.0), "the polyfill left processes behind"
    finally:
        end_group(client)
    return verdicts


def group_gone(group: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def end_group(client: V2Client) -> None:
    """End what is left of the run's process group (an agent that outlives the end of its
    input, as some do in protocol 1 directly)."""
    if client.proc.stdin and not client.proc.stdin.closed:
        client.proc.stdin.close()
    try:
        client.proc.wait(5)
    except Exception:
        pass
    try:
        os.killpg(client.proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    client.proc.wait()


@pytest.mark.parametrize("name", list(AGENTS))
def test_no_check_fails_through_the_bridge_that_passes_in_protocol_1(
    name: str, polyfill_tool: Path, schema: V2Schema, tmp_path_factory: pytest.TempPathFactory
) -> None:
    agent = AGENTS[name]
    launcher = agent.install(tmp_path_factory)
    roots = {version: tmp_path_factory.mktemp(f"{name}-v{version}") for version in (1, 2)}

    def run_version(version: int) -> dict[str, str]:
        """One version's run, with a stand-in of its own (its tool call names the run's folder)."""
        root = roots[version]
        home, work = root / "home", root / "work"
        home.mkdir()
        work.mkdir()
        with StandIn() as model:
            run = agent.run(launcher, model, home, work)
            model.tool = run.tool
            env = {**setup_env(), "HOME": str(home), **run.env}
            command = run.command
            if version == 2:
                command = [str(polyfill_tool), "polyfill", "--store", str(root / "state.sqlite3"), "--", *command]
            return run_checks(command, env, version, work, schema)

    # Both at once: most of a run is the agent starting.
    with ThreadPoolExecutor(2) as pool:
        verdicts = dict(zip((1, 2), pool.map(run_version, (1, 2)), strict=True))
    shown = "\n".join(
        f"{check}: v1 {verdicts[1][check] or 'PASS'} | v2 {verdicts[2][check] or 'PASS'}" for check in CHECKS
    )
    print(f"{name}\n{shown}", file=sys.stderr)
    assert not verdicts[1]["plain"], f"the stand-in's plain turn fails in protocol 1 already:\n{shown}"
    bridge_only = [check for check in CHECKS if verdicts[2][check] and not verdicts[1][check]]
    assert not bridge_only, f"fails through the bridge only: {bridge_only}\n{shown}"
