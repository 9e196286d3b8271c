"""Run an agent behind the session-archive polyfill: acp-codegen polyfill [--store PATH]
-- AGENT COMMAND... (the command that starts the agent on stdio).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from .. import processes
from ..shipped import upstream_module
from .archive import Polyfill
from .relay import Relay
from .store import Store, default_path

USAGE = 2
STOP_GRACE_S = 5.0  # after the client's input ends, for the agent to save and exit
EXIT_STATUS = """exit status:
  the agent's own, once the client's input has ended and the agent has exited (a signal N: 128+N);
  also the agent's when it exits while the client is still there: the client's requests it had
     not answered get error -32603 naming the exit first
  2  usage error, the agent command cannot be started, or the store cannot be opened
  130, 143  interrupted (Ctrl-C, SIGTERM); the agent and its processes are stopped first"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        type=Path,
        metavar="PATH",
        help=f"the SQLite file that keeps archive state (default: {default_path()})",
    )
    parser.add_argument("agent", nargs=argparse.REMAINDER, help="the agent command, after --")


def _status(code: int) -> tuple[int, str]:
    """(exit status for the polyfill, words for the client) of the agent's return code."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return 128 - code, f"the agent exited: killed by {name}"
    return code, f"the agent exited with status {code}"


def _die_with_parent() -> Any:
    """A preexec function that has the kernel send the agent SIGTERM should the polyfill
    die without stopping it (Linux); None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _watchdog(group: int) -> int | None:
    """A forked helper that stops the agent's process group and its descendants when the
    polyfill dies however it dies (SIGKILL included): it waits for the end of a pipe only
    the polyfill holds. Forked before any thread starts. Returns the pipe's write end."""
    if not hasattr(os, "fork"):
        return None
    read, write = os.pipe()
    pid = os.fork()
    if pid:
        os.close(read)
        return write
    try:  # the helper: no Python-level cleanup, no fds of the polyfill's but its pipe
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        os.closerange(0, read)
        os.closerange(read + 1, 1 << 16)
        os.setsid()  # out of the polyfill's group: a kill of that group leaves it to do its work
        while os.read(read, 1):
            pass
        processes.stop(group, processes.descendants(group), 2.0)
    finally:
        os._exit(0)


class _Interrupted(BaseException):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def run(args: argparse.Namespace) -> int:
    command = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
    if not command:
        print("acp-codegen polyfill: no agent command (put it after --)", file=sys.stderr)
        return USAGE
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="acp-codegen polyfill: %(message)s")
    store_path = args.store or default_path()
    cwd = os.getcwd()
    try:
        agent = processes.spawn(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_die_with_parent(),
        )
    except OSError as exc:
        print(f"acp-codegen polyfill: cannot run {command[0]}: {exc.strerror or exc}", file=sys.stderr)
        return USAGE
    watchdog = _watchdog(agent.pid)
    assert agent.stdin is not None and agent.stdout is not None
    try:
        store = Store(store_path, command, cwd)
    except Exception as exc:  # sqlite3.Error, OSError: a file that is not a database, no permission
        print(f"acp-codegen polyfill: cannot use the store {store_path}: {exc}", file=sys.stderr)
        processes.stop(agent.pid, processes.descendants(agent.pid), 2.0)
        return USAGE
    relay = Relay(agent.stdin, agent.stdout, sys.stdin.buffer, sys.stdout.buffer)
    # The version bridge of the package over upstream's newest release (its models and
    # conversions are imported once a client asks for protocol 2); the store lists the
    # sessions opened through it for an agent that cannot.
    relay.bridge = upstream_module("bridge").Bridge(Path(command[0]).name, index=store)
    polyfill = Polyfill(relay, store)
    stopping = threading.Event()

    def agent_pump() -> None:
        relay.pump_agent()
        if stopping.is_set():
            return
        # The agent exited while the client is still there: answer what waits, and go too.
        others = processes.descendants(agent.pid)
        code, why = _status(agent.wait())
        relay.agent_gone(why)
        for worker in polyfill.workers:
            worker.join(2.0)
        processes.stop(agent.pid, others, 2.0)
        print(f"acp-codegen polyfill: {why}", file=sys.stderr)
        os._exit(code or 1)

    def interrupt(signum: int, frame: Any) -> None:
        raise _Interrupted(signum)

    previous = {s: signal.signal(s, interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    pump = threading.Thread(target=agent_pump, name="agent-pump", daemon=True)
    pump.start()
    grace, status = STOP_GRACE_S, None
    try:
        relay.pump_client()
    except _Interrupted as exc:
        grace, status = 0.5, 128 + exc.signum
    finally:
        stopping.set()
        for signum in previous:
            signal.signal(signum, signal.SIG_IGN)  # a second Ctrl-C does not cut the stopping short
        code = _stop(agent, grace)
        pump.join(2.0)
        store.close()
        if watchdog is not None:
            os.close(watchdog)
    return status if status is not None else code


def _stop(agent: subprocess.Popen[bytes], grace: float) -> int:
    """End of input first (an agent saves and exits on it), ``grace`` seconds, then the
    group and its descendants terminated, then killed. The agent's exit status."""
    others = processes.descendants(agent.pid)
    try:
        assert agent.stdin is not None
        agent.stdin.close()
    except OSError:
        pass
    try:
        agent.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    processes.stop(agent.pid, others, 2.0)
    try:
        return _status(agent.wait(2.0))[0]
    except subprocess.TimeoutExpired:
        return 1
