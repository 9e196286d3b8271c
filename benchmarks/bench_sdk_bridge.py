"""B1: the official Python SDK adopted with ``base-v2`` serving one turn to a protocol 2
client (through the version bridge in its own agent connection) against the same SDK, the
same agent process model, serving the same turn to a protocol 1 client.

The SDK is ``agent-client-protocol`` 0.12.1 (``nox -s bench`` installs it, pinned, into the
bench environment only): its ``acp`` package is copied into a scratch repository with
README's table (``base-v1``: upstream ``schema-v1.19.0``, ``base-v2``: 2026-11's v2) and
adopted once. An agent on the SDK's public API (``run_agent``, ``session_update``) answers
each ``session/prompt`` with ``UPDATES`` ``agent_message_chunk`` notifications, each sent as
an agent sends them (a model, validated and written by the SDK's connection), then the
prompt's response. Two such agent processes, one spoken to in protocol 1, one in protocol 2
(P2's client: it reads up to the idle ``state_update``); each side's figure is its median
round. Both sides pay the SDK's own cost per update; the subject pays the bridge on top (a
chunk gets its ``messageId`` written into its line undecoded). Target: at most 2x.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks import Ratio, compare
from benchmarks.bench_adopt import BASE, _repository, adopted
from benchmarks.bench_polyfill import _Client
from tests.support.reference_data import missing, reference_dir

UPDATES = 5_000
V2_BASE = reference_dir() / "upstream" / "2026-11" / "v2" / "schema.unstable.json"

AGENT = r"""
import asyncio, sys
from acp import PROTOCOL_VERSION, Agent, run_agent, update_agent_message_text
from acp.schema import InitializeResponse, NewSessionResponse, PromptResponse

TEXT = "a streamed chunk of the agent's answer, about as long as one token run " * 2


class Streaming(Agent):
    def on_connect(self, conn):
        self._conn = conn

    async def initialize(self, protocol_version, **kwargs):
        return InitializeResponse(protocol_version=PROTOCOL_VERSION)

    async def new_session(self, cwd, mcp_servers=None, **kwargs):
        return NewSessionResponse(session_id="sess_bench")

    async def prompt(self, prompt, session_id, **kwargs):
        for i in range(int(sys.argv[1])):
            await self._conn.session_update(session_id, update_agent_message_text(f"{i} {TEXT}"))
        return PromptResponse(stop_reason="end_turn")


asyncio.run(run_agent(Streaming()))
"""


def run() -> list[Ratio]:
    spec = importlib.util.find_spec("acp")
    if spec is None or not spec.submodule_search_locations:
        print("B1   skipped: needs agent-client-protocol installed")
        return []
    absent = [p for p in (BASE / "schema.unstable.json", V2_BASE) if not p.is_file()]
    if absent:
        print(f"B1   skipped: {missing(absent[0])}")
        return []
    sdk = Path(next(iter(spec.submodule_search_locations)))
    with tempfile.TemporaryDirectory() as tmp:
        repository = _repository(Path(tmp) / "adopted", sdk)
        (repository / "schema" / "v2").mkdir()
        shutil.copyfile(V2_BASE, repository / "schema" / "v2" / "schema.json")
        with open(repository / "pyproject.toml", "a", encoding="utf-8") as table:
            table.write('base-v2 = "schema/v2/schema.json"\n')
        code, report = adopted(repository)
        if code != 0 or "serves: protocol 1, and 2 through the version bridge" not in report:
            print(f"B1   skipped: adopt exited {code} (or serves no v2):\n{report[-2000:]}")
            return []
        agent = [sys.executable, "-c", AGENT, str(UPDATES)]
        env = {**os.environ, "PYTHONPATH": str(repository / "src")}
        v1 = _Client(agent, updates=UPDATES, env=env)
        v2 = _Client(agent, version=2, updates=UPDATES, env=env)
        try:
            return [
                compare(
                    "B1",
                    f"one turn of {UPDATES} session/update notifications from agent-client-protocol 0.12.1"
                    " adopted with base-v2, to a protocol 2 client (the bridge in its connection) vs to a"
                    " protocol 1 client",
                    v2.bridged_turn,
                    v1.turn,
                    target=2.0,
                    repeat=15,  # (processes on shared cores: the median of more rounds holds better)
                )
            ]
        finally:
            v1.close()
            v2.close()
