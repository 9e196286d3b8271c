"""Run the scenarios against an agent command, once per protocol version.

One agent process serves the scenarios of a version in turn; after a failed scenario
(which may have left it hung or half-way through a turn) the runner stops it and
starts a fresh one, so one fault fails one scenario and the run goes on.

The ``initialize`` result is read as the version the agent answered before anything
checks it: an agent that answers another version than the one asked does not speak it
(ACP's negotiation), and only a result that claims the asked version is held to that
version's model. A scenario that ends after the agent refused a request for want of
authentication ends the version with that verdict, once a ``session/new`` confirms it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .. import __version__
from ..errors import CodegenError
from .context import Caps, Context, Options
from .driver import AgentProcess, AuthRequired, Failure, Reply, Skip, Verdict, is_auth_refusal, shown
from .models import MessageModels
from .scenarios import Scenario

Status = Literal["pass", "fail", "skip", "auth"]


class CannotStart(CodegenError):
    """The command could not be spawned at all (not found, not executable)."""


@dataclass(frozen=True)
class Outcome:
    version: int
    scenario: Scenario
    status: Status
    reason: str = ""
    exchange: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass
class Tried:
    """What a version's run learnt of the agent, for the run's verdict."""

    version: int
    archive: bool = False  # it speaks the version and advertises the archive capability
    auth: str | None = None  # why the version stopped for want of authentication


def start(command: Sequence[str], version: int, options: Options) -> tuple[AgentProcess, Reply]:
    """A fresh agent process, initialized for ``version`` (and authenticated where the
    options say so); the ``initialize`` reply, whose result is an object. An agent that
    answered another version has no models: the runner does not go on with it."""
    agent = AgentProcess(list(command), options.timeout)
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
        answered = reply.result.get("protocolVersion")
        if _other_version(answered, version):
            return agent, reply
        models = MessageModels(version)
        try:
            AgentProcess._validate(
                models.result("initialize"), reply.received.message, "result", (reply.sent,), "/result/protocolVersion"
            )
        except Failure as exc:
            if answered == version:
                exc.message = (
                    f"the agent answered protocolVersion {version}, but its result does not fit protocol"
                    f" {version}: {exc.message}"
                )
            raise
        agent.models = models
        methods = reply.result.get("authMethods")
        agent.auth_methods = (
            tuple(m["id"] for m in methods if isinstance(m, dict) and isinstance(m.get("id"), str))
            if isinstance(methods, list)
            else ()
        )
        if options.authenticate is not None:
            done = agent.call("authenticate", {"methodId": options.authenticate})
            if done.error is not None:
                raise AuthRequired(
                    f"authenticate with method {options.authenticate!r} was refused: error"
                    f" {done.error.get('code')} ({_error_text(done.error)}); {offered(agent, hint=False)}",
                    done.exchange,
                )
    except Verdict:
        agent.stop()
        raise
    return agent, reply


def _error_text(error: dict[str, Any]) -> str:
    """An error's message, and its data where the agent says more there."""
    text = str(error.get("message"))
    data = error.get("data")
    return shown(text if data is None else f"{text}: {data if isinstance(data, str) else shown(data)}")


def _other_version(answered: Any, version: int) -> bool:
    return type(answered) is int and answered != version


def offered(agent: AgentProcess, hint: bool = True) -> str:
    if not agent.auth_methods:
        return "its initialize offers no authMethods"
    text = f"its initialize offers authMethods {', '.join(agent.auth_methods)}"
    return text + " (--authenticate METHOD_ID runs one)" if hint else text


def needs_auth(agent: AgentProcess, cwd: str) -> str | None:
    """Why the agent needs authentication, if it refused a request for want of it and
    refuses a ``session/new`` (in ``cwd``) too: an agent that creates sessions did not
    refuse for that."""
    if agent.auth_refusal is None:
        return None
    method, error = agent.auth_refusal
    agent.auth_refusal = None
    os.makedirs(cwd, exist_ok=True)
    try:
        probe = agent.call("session/new", {"cwd": cwd, "mcpServers": []})
    except Failure:
        return None
    if probe.error is None or not is_auth_refusal(probe.error, agent.auth_methods):
        return None
    return (
        f"the agent requires authentication: it refused {method} with error {error.get('code')}"
        f" ({_error_text(error)}); {offered(agent)}"
    )


def _first_start(
    command: Sequence[str], version: int, options: Options, tried: Tried
) -> tuple[AgentProcess, dict[str, Any]]:
    """The version's first agent and its initialize result; ``Skip`` (quoting the exchange)
    when it answered another version, ``Failure`` when it could not be initialized."""
    try:
        agent, reply = start(command, version, options)
    except Failure as exc:
        raise Failure(f"starting the agent: {exc.message}", exc.exchange) from None
    answered = reply.result.get("protocolVersion")
    if _other_version(answered, version):
        agent.stop()
        shown_init = ("> " + shown(reply.sent), "< " + shown(reply.received.message, "/result/protocolVersion"))
        raise Skip(_not_spoken(answered, version), shown_init)
    tried.archive = Caps.read(version, reply.result).archive
    return agent, reply.result


def run_version(
    command: Sequence[str], version: int, scenarios: Sequence[Scenario], options: Options, tried: Tried | None = None
) -> Generator[Outcome, None, None]:
    """Each scenario's outcome as soon as it is known; ``tried`` learns what the agent
    answered. A version that stops for want of authentication yields one ``auth`` outcome
    (for the scenario in progress) and no more."""
    run = _VersionRun(command, version, options, tried or Tried(version))
    try:
        for scenario in scenarios:
            outcome = run.outcome(scenario)
            yield outcome
            if outcome.status == "auth":
                return
    finally:
        run.close()


class _VersionRun:
    """One version's agent (restarted after a failure) and its scenarios' directories."""

    def __init__(self, command: Sequence[str], version: int, options: Options, tried: Tried) -> None:
        self.command, self.version, self.options, self.tried = command, version, options, tried
        self.root = tempfile.mkdtemp(prefix=f"acp-conformance-v{version}-")
        self.agent: AgentProcess | None = None
        self.init: dict[str, Any] = {}
        self.cannot: str | None = None  # why the scenarios cannot run: every later one is skipped

    def close(self) -> None:
        if self.agent is not None:
            self.agent.stop()
            self.agent = None
        shutil.rmtree(self.root, ignore_errors=True)

    def restart(self) -> tuple[AgentProcess, dict[str, Any]]:
        if self.agent is not None:
            self.agent.stop(self.options.timeout)  # time to save its state: a restart must not depend on speed
            self.agent = None
        fresh, reply = start(self.command, self.version, self.options)
        if _other_version(reply.result.get("protocolVersion"), self.version):
            fresh.stop()
            raise Failure("after a restart, the agent answered another protocolVersion", reply.exchange)
        return fresh, reply.result

    def outcome(self, scenario: Scenario) -> Outcome:
        began = time.monotonic()
        status: Status = "pass"
        reason = ""
        exchange: tuple[str, ...] = ()
        try:
            self.run(scenario)
        except Verdict as exc:
            status, reason, exchange = exc.status, exc.message, exc.exchange
        except CannotStart:
            raise
        except Exception as exc:  # the agent sent something the kit did not foresee
            status, reason = "fail", f"unexpected {type(exc).__name__}: {exc}"
        agent = self.agent
        if status in ("fail", "skip") and agent is not None and agent.auth_refusal is not None:
            why = needs_auth(agent, os.path.join(self.root, f"{scenario.name}-auth"))
            if why is not None:
                status, reason, exchange = "auth", why, ()
        if status == "auth":
            self.tried.auth = reason
        if status in ("fail", "auth") and agent is not None:
            agent.stop()
            self.agent = None
        return Outcome(self.version, scenario, status, reason, exchange, time.monotonic() - began)

    def run(self, scenario: Scenario) -> None:
        if self.cannot is not None:
            raise Skip(self.cannot)
        if self.agent is None:
            try:
                self.agent, self.init = _first_start(self.command, self.version, self.options, self.tried)
            except Verdict as exc:
                self.cannot = (
                    exc.message
                    if isinstance(exc, Skip)
                    else "the agent could not be initialized (see the first failure)"
                )
                raise
        if scenario.needs_archive and not Caps.read(self.version, self.init).archive:
            raise Skip("the agent does not advertise the archive capability")
        cwd = os.path.join(self.root, scenario.name)
        os.makedirs(cwd)
        ctx = Context(self.agent, self.version, self.init, cwd, self.options, self.restart)
        try:
            scenario.run(ctx)
            ctx.agent.pump(time.monotonic())  # whatever else it sent is checked too
        finally:
            self.agent, self.init = ctx.agent, ctx.init


def _not_spoken(answered: int, version: int) -> str:
    """ACP's negotiation: an agent answers the version asked when it speaks it, else the
    latest it speaks."""
    said = f"it answered protocolVersion {answered} to an initialize for protocol {version}"
    if answered < version:
        return f"the agent speaks protocol {answered} only ({said})"
    return f"the agent does not speak protocol {version} ({said})"
