"""An agent behind a launcher, as npm packages ship them, for the kit's process tests.

``python launcher_agent.py PIDS MODE [--exit-early]``: the launcher starts the agent as
its child (stdin and stdout shared) and waits for it, or with ``--exit-early`` exits at
once and leaves it running. The agent ignores the end of its input and
SIGTERM, and starts a helper in a session of its own (out of the kit's process group)
that sleeps. Each process appends its pid to the file PIDS. MODE is what the agent
answers to ``initialize``: ``v1`` (protocol 1, no capabilities), ``garbage`` (a line
that is not JSON) or ``silent`` (nothing).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


def note_pid(path: str) -> None:
    with open(path, "a") as pids:
        pids.write(f"{os.getpid()}\n")


def agent(path: str, mode: str) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    helper = [sys.executable, __file__, path, "helper"]
    subprocess.Popen(helper, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)
    note_pid(path)
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") != "initialize" or mode == "silent":
            continue
        if mode == "garbage":
            print("not json", flush=True)
            continue
        result = {"protocolVersion": 1, "agentCapabilities": {}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
    while True:  # end of input: ignored
        time.sleep(1)


def main() -> None:
    path, mode, *options = sys.argv[1:]
    if mode == "helper":
        note_pid(path)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    note_pid(path)
    child = subprocess.Popen([sys.executable, __file__, path, "agent", mode])
    if "--exit-early" not in options:
        child.wait()


if __name__ == "__main__":
    if sys.argv[2:3] == ["agent"]:
        agent(sys.argv[1], sys.argv[3])
    else:
        main()
