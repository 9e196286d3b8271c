"""Run the scenarios against an agent command, once per protocol version.

One agent process serves the scenarios of a version in turn; after a failed scenario
(which may have left it hung or half-way through a turn) the runner stops it and
starts a fresh one, so one fault fails one scenario and the run goes on.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .. import __version__
from .context import Caps, Context, Options
from .driver import AgentProcess, Failure, Skip, Verdict
from .models import MessageModels
from .scenarios import Scenario

Status = Literal["pass", "fail", "skip"]


class CannotStart(Exception):
    """The command could not be spawned at all (not found, not executable)."""


@dataclass(frozen=True)
class Outcome:
    version: int
    scenario: Scenario
    status: Status
    reason: str = ""
    exchange: tuple[str, ...] = ()
    seconds: float = 0.0


def start(command: Sequence[str], version: int, options: Options) -> tuple[AgentProcess, dict[str, Any]]:
    """A fresh agent process, initialized for ``version``."""
    agent = AgentProcess(list(command), options.timeout, models=MessageModels(version))
    try:
        agent.start()
    except OSError as exc:
        raise CannotStart(f"cannot run {command[0]}: {exc.strerror or exc}") from None
    try:
        # Each version's own InitializeRequest: v2 requires `info` and names the capabilities
        # `capabilities`, so an agent that validates its input strictly accepts it.
        client = {"name": "acp-codegen-conformance", "version": __version__}
        params: dict[str, Any] = (
            {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": client}
            if version == 1
            else {"protocolVersion": version, "capabilities": {}, "info": client}
        )
        reply = agent.call("initialize", params, options.start_timeout)
        if reply.error is not None:
            raise Failure("initialize failed", reply.exchange)
        if not isinstance(reply.result, dict):
            raise Failure("initialize: the result must be an object", reply.exchange)
    except Failure:
        agent.stop()
        raise
    return agent, reply.result


def run_version(
    command: Sequence[str], version: int, scenarios: Sequence[Scenario], options: Options
) -> Iterator[Outcome]:
    """Each scenario's outcome as soon as it is known."""
    root = tempfile.mkdtemp(prefix=f"acp-conformance-v{version}-")
    agent: AgentProcess | None = None
    init: dict[str, Any] = {}
    cannot: str | None = None  # why the agent cannot be brought up: every later scenario is skipped

    def restart() -> tuple[AgentProcess, dict[str, Any]]:
        nonlocal agent
        if agent is not None:
            agent.stop(options.timeout)  # time to save its state: a restart must not depend on speed
            agent = None
        return start(command, version, options)

    try:
        for scenario in scenarios:
            began = time.monotonic()
            status: Status = "pass"
            reason = ""
            exchange: tuple[str, ...] = ()
            try:
                if cannot is not None:
                    raise Skip(cannot)
                if agent is None:
                    try:
                        agent, init = start(command, version, options)
                    except Failure as exc:
                        cannot = "the agent could not be initialized (see the first failure)"
                        raise Failure(f"starting the agent: {exc.message}", exc.exchange) from None
                if scenario.name != "initialize" and init.get("protocolVersion") != version:
                    raise Skip(f"the agent does not speak protocol {version}")
                if scenario.needs_archive and not Caps.read(version, init).archive:
                    raise Skip("the agent does not advertise the archive capability")
                cwd = os.path.join(root, scenario.name)
                os.makedirs(cwd)
                ctx = Context(agent, version, init, cwd, options, restart)
                try:
                    scenario.run(ctx)
                    ctx.agent.pump(time.monotonic())  # whatever else it sent is checked too
                finally:
                    agent, init = ctx.agent, ctx.init
            except Verdict as exc:
                status, reason, exchange = exc.status, exc.message, exc.exchange
            except CannotStart:
                raise
            except Exception as exc:  # the agent sent something the kit did not foresee
                status, reason = "fail", f"unexpected {type(exc).__name__}: {exc}"
            if status == "fail" and agent is not None:
                agent.stop()
                agent = None
            yield Outcome(version, scenario, status, reason, exchange, time.monotonic() - began)
    finally:
        if agent is not None:
            agent.stop()
        shutil.rmtree(root, ignore_errors=True)
