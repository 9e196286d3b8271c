"""The reference agent with its session archive hidden: an agent of both protocol versions,
with ``session/list``, ``session/delete``, ``session/close`` and ``session/resume`` (v1 also
``session/load``), that the polyfill can serve in either version.

    python unarchived_agent.py [--no-list] -- python -m examples.archive_agent --db PATH

Between the client and the agent, a proxy takes ``archive`` out of the capabilities (and
``list`` too with ``--no-list``), answers ``session/archive`` and ``session/unarchive``
-32601 itself, and drops ``archived`` from ``session/list`` requests and results.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from acp_codegen.processes import spawn

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = ("session/archive", "session/unarchive")


def _write(out: Any, lock: threading.Lock, message: dict[str, Any]) -> None:
    with lock:
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-list", action="store_true")
    parser.add_argument("agent", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    command = options.agent[1:] if options.agent[:1] == ["--"] else options.agent
    child = spawn(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    out, lock = sys.stdout.buffer, threading.Lock()
    lists: dict[Any, str] = {}  # ids of client requests whose answers are rewritten

    def from_agent() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            message = json.loads(line)
            kind = lists.pop(json.dumps(message.get("id")), None) if "method" not in message else None
            result = message.get("result")
            if kind == "initialize" and isinstance(result, dict):
                v1 = result.get("agentCapabilities", {}).get("sessionCapabilities")
                for session in (v1, result.get("capabilities", {}).get("session")):
                    if isinstance(session, dict):
                        session.pop("archive", None)
                        if options.no_list:
                            session.pop("list", None)
                if options.no_list and isinstance(result.get("capabilities"), dict):
                    result["capabilities"].pop("session", None)
            elif kind == "session/list" and isinstance(result, dict):
                for info in result.get("sessions", []):
                    info.pop("archived", None)
            _write(out, lock, message)

    pump = threading.Thread(target=from_agent, daemon=True)
    pump.start()
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method = message.get("method")
        if method in HIDDEN and "id" in message:
            refusal = {"code": -32601, "message": "Method not found"}
            _write(out, lock, {"jsonrpc": "2.0", "id": message["id"], "error": refusal})
            continue
        if method in ("initialize", "session/list") and "id" in message:
            lists[json.dumps(message["id"])] = method
            if method == "session/list" and isinstance(message.get("params"), dict):
                message["params"].pop("archived", None)
        child.stdin.write(json.dumps(message).encode() + b"\n")
        child.stdin.flush()
    child.stdin.close()
    pump.join(10)
    return child.wait(10)


if __name__ == "__main__":
    raise SystemExit(main())
