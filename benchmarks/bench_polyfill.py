"""P1: ``session/update`` notifications through ``acp-codegen polyfill`` against the same
stream through a bare line relay, in one run. P2: the same turn bridged to a protocol 2
client (every line decoded, translated and written again) against P1's polyfill run, which
passes the lines through.

An agent process (written here) answers ``initialize`` advertising ``session/list`` (so
the polyfill serves it, not steps aside) and answers each ``session/prompt`` with
``UPDATES`` ``agent_message_chunk`` notifications (rendered once, written at once: the
relays are what is measured), then the prompt's response. The bench
is the client: a round sends a prompt and reads every line up to the response. The
baseline relay has the polyfill's process model (the agent in a session of its own, a
thread copying its output line by line, the main thread copying the client's input) and
does nothing else.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

from benchmarks import Ratio, compare

ROOT = Path(__file__).resolve().parent.parent
UPDATES = 20_000
PROMPT = [{"type": "text", "text": "go"}]  # (v2 refuses an empty prompt)

AGENT = r"""
import json, sys
out = sys.stdout.buffer
text = "a streamed chunk of the agent's answer, about as long as one token run " * 2
streams = {}
for line in sys.stdin.buffer:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if method == "initialize":
        caps = {"sessionCapabilities": {"list": {}}}
        result = {"protocolVersion": 1, "agentCapabilities": caps}
    elif method == "session/new":
        result = {"sessionId": "sess_bench"}
    elif method == "session/prompt":
        sid = message["params"]["sessionId"]
        if sid not in streams:  # rendered once: the relays, not this agent, are measured
            lines = []
            for i in range(int(sys.argv[1])):
                update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"{i} {text}"}}
                note = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": update}}
                lines.append(json.dumps(note).encode() + b"\n")
            streams[sid] = b"".join(lines)
        out.write(streams[sid])
        result = {"stopReason": "end_turn"}
    else:
        continue
    out.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n")
    out.flush()
"""

BARE_RELAY = r"""
import subprocess, sys, threading
agent = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
def pump():
    for line in agent.stdout:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
threading.Thread(target=pump, daemon=True).start()
for line in sys.stdin.buffer:
    agent.stdin.write(line)
    agent.stdin.flush()
agent.stdin.close()
agent.wait()
"""


class _Client:
    """A client of ``command`` (``env``: its environment) whose turns stream ``updates``."""

    def __init__(
        self, command: list[str], version: int = 1, updates: int = UPDATES, env: dict[str, str] | None = None
    ) -> None:
        self.proc = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.ids = 0
        self.updates = updates
        if version == 1:
            self.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        else:
            info = {"name": "bench", "version": "1"}
            self.call("initialize", {"protocolVersion": 2, "info": info, "capabilities": {}})
            self.call("session/new", {"cwd": str(ROOT)})

    def call(self, method: str, params: dict[str, object]) -> int:
        """Send a request, read up to its response; how many lines came before it."""
        stdin: IO[bytes] | None = self.proc.stdin
        stdout: IO[bytes] | None = self.proc.stdout
        assert stdin is not None and stdout is not None
        self.ids += 1
        stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}).encode() + b"\n")
        stdin.flush()
        before = 0
        for line in stdout:
            if b'"method"' not in line and json.loads(line).get("id") == self.ids:
                return before
            before += 1
        raise RuntimeError(f"the relay closed its output during {method}")

    def turn(self) -> None:
        streamed = self.call("session/prompt", {"sessionId": "sess_bench", "prompt": PROMPT})
        assert streamed == self.updates, streamed

    def bridged_turn(self) -> None:
        """v2: the prompt is answered at once; the turn ends with the idle state update."""
        assert self.call("session/prompt", {"sessionId": "sess_bench", "prompt": PROMPT}) == 0
        assert self.proc.stdout is not None
        streamed = 0
        for line in self.proc.stdout:
            if b'"state_update"' in line and json.loads(line)["params"]["update"]["state"] == "idle":
                break
            streamed += 1
        assert streamed == self.updates + 2, streamed  # (the user message and the running state first)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


def run() -> list[Ratio]:
    agent = [sys.executable, "-c", AGENT, str(UPDATES)]
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp, "polyfill.sqlite3"))
        command = [sys.executable, "-m", "acp_codegen", "polyfill", "--store", store, "--", *agent]
        polyfill = _Client(command)
        bridged = _Client(command, version=2)
        bare = _Client([sys.executable, "-c", BARE_RELAY, *agent])
        try:
            return [
                compare(
                    "P1",
                    f"{UPDATES} session/update notifications of one turn through the polyfill vs a bare line relay",
                    polyfill.turn,
                    bare.turn,
                    target=1.3,
                    repeat=9,
                ),
                compare(
                    "P2",
                    f"the same {UPDATES} notifications bridged from a protocol 1 agent to a protocol 2 client vs"
                    " passed through the polyfill (protocol 1 on both sides)",
                    bridged.bridged_turn,
                    polyfill.turn,
                    target=2.0,
                    repeat=21,  # (the baseline's dozen milliseconds move by a few from round to round)
                ),
            ]
        finally:
            polyfill.close()
            bridged.close()
            bare.close()
