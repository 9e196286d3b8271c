"""Run the session-archive RFD's scenarios against an agent: acp-codegen conformance
[options] -- AGENT COMMAND... (the command that starts the agent on stdio).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from . import report
from .context import Options
from .driver import stop_all
from .models import ModelsMissing
from .runner import CannotStart, Outcome, Tried, run_version
from .scenarios import BY_NAME, SCENARIOS

PASSED, FAILED, USAGE, AUTH, NO_ARCHIVE = 0, 1, 2, 3, 4
EXIT_STATUS = f"""exit status:
  {PASSED}  no scenario failed and at least one passed
  {FAILED}  a scenario failed, or every scenario was skipped (the agent advertising archive)
  {USAGE}  usage error, or the agent command cannot be started
  {AUTH}  the agent requires authentication (a version stopped; see --authenticate)
  {NO_ARCHIVE}  no protocol version tried advertises the archive capability: nothing of
     the RFD was checked (--allow-no-archive: 0 instead)
  130, 143  interrupted (Ctrl-C, SIGTERM); every process the kit started is stopped"""

# Tried in turn by active-archive while a turn ends before the agent answers session/archive.
DEFAULT_LONG_PROMPTS = (
    "Count from 1 to 2000, one number per line, then say done.",
    "Count from 1 to 20000, one number per line, then say done.",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--protocol", choices=("1", "2", "both"), default="both", help="protocol version(s) to check (default: both)"
    )
    parser.add_argument("--junit-xml", type=Path, metavar="FILE", help="also write the results as JUnit XML")
    parser.add_argument(
        "--only", nargs="+", default=[], metavar="NAME", help="run only these scenarios (see --list-scenarios)"
    )
    parser.add_argument("--timeout", type=_seconds, default=10.0, help="seconds to wait for each answer (default: 10)")
    parser.add_argument(
        "--start-timeout",
        type=_seconds,
        default=30.0,
        help="seconds for a freshly started agent to answer initialize (default: 30)",
    )
    parser.add_argument(
        "--turn-timeout", type=_seconds, default=60.0, help="seconds to wait for a prompt turn to end (default: 60)"
    )
    parser.add_argument(
        "--long-prompt",
        action="append",
        metavar="TEXT",
        help="a prompt the agent works on for a while (active-archive archives during its turn); repeat it to"
        " give longer ones, tried in turn when a turn ends before the agent answers the archive"
        " (default: count to 2000, then to 20000)",
    )
    parser.add_argument(
        "--authenticate",
        metavar="METHOD_ID",
        help="after initialize, run ACP authenticate with this id of the agent's authMethods (for agents"
        " that authenticate from their environment, such as an API key in a variable)",
    )
    parser.add_argument(
        "--allow-no-archive",
        action="store_true",
        help=f"exit {PASSED}, not {NO_ARCHIVE}, when no version tried advertises archive (for surveys of agents)",
    )
    parser.add_argument("--list-scenarios", action="store_true", help="print the scenarios and exit")
    parser.add_argument("agent", nargs=argparse.REMAINDER, help="the agent command, after --")


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError("must be between 0 and 3600 seconds")
    return value


def run(args: argparse.Namespace) -> int:
    if args.list_scenarios:
        for scenario in SCENARIOS:
            print(f"{scenario.name:<18} [{scenario.section}] {scenario.summary}")
        return 0
    command = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
    unknown = [name for name in args.only if name not in BY_NAME]
    if not command or unknown:
        problem = f"unknown scenario {', '.join(unknown)}" if unknown else "no agent command (put it after --)"
        print(f"acp-codegen conformance: {problem}; scenarios: {', '.join(BY_NAME)}", file=sys.stderr)
        return 2
    selected = [s for s in SCENARIOS if not args.only or s.name in args.only]
    options = Options(
        args.timeout,
        args.start_timeout,
        args.turn_timeout,
        tuple(args.long_prompt or DEFAULT_LONG_PROMPTS),
        args.authenticate,
    )
    versions = (1, 2) if args.protocol == "both" else (int(args.protocol),)
    began = time.monotonic()
    outcomes: list[Outcome] = []
    tried = [Tried(version) for version in versions]
    try:
        with _interruptible():
            for each in tried:
                with closing(run_version(command, each.version, selected, options, each)) as results:
                    for outcome in results:
                        print(report.line(outcome), flush=True)
                        outcomes.append(outcome)
    except (CannotStart, ModelsMissing) as exc:
        print(f"acp-codegen conformance: {exc}", file=sys.stderr)
        return USAGE
    except _Interrupted as exc:
        print(f"acp-codegen conformance: interrupted ({exc.name}); the agent's processes are stopped", file=sys.stderr)
        return 128 + exc.signum
    stopped = [t for t in tried if t.auth is not None]
    no_archive = not stopped and not any(t.archive for t in tried)
    notes = [f"protocol {t.version}: {t.auth}; its remaining scenarios were not run" for t in stopped]
    if no_archive:
        notes.append(
            "nothing of the session-archive RFD was checked: no protocol version tried advertises the archive"
            " capability"
        )
    print(report.summary(outcomes, time.monotonic() - began, notes))
    if args.junit_xml is not None:
        try:
            report.junit(outcomes, args.junit_xml)
        except OSError as exc:
            print(f"acp-codegen conformance: cannot write {args.junit_xml}: {exc.strerror or exc}", file=sys.stderr)
            return USAGE
    if any(o.status == "fail" for o in outcomes):
        return FAILED
    if stopped:
        return AUTH
    if no_archive and not args.allow_no_archive:
        return NO_ARCHIVE
    if not any(o.status == "pass" for o in outcomes):
        print("nothing was checked: every scenario was skipped", file=sys.stderr)
        return FAILED
    return PASSED


class _Interrupted(BaseException):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.name = signal.Signals(signum).name


@contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C and SIGTERM (a CI job cancelled) end the run as an exception, and whatever
    ends it, every agent still running is stopped (the agents run in sessions of their own:
    a Ctrl-C at the terminal reaches the kit only). Only the main thread can handle
    signals: elsewhere (the kit called from a thread) the handlers stay as they are."""
    main = threading.current_thread() is threading.main_thread()

    def interrupt(signum: int, frame: Any) -> None:
        raise _Interrupted(signum)

    signums = (signal.SIGINT, signal.SIGTERM) if main else ()
    previous = {s: signal.signal(s, interrupt) for s in signums}
    try:
        yield
    finally:
        for signum in signums:
            signal.signal(signum, signal.SIG_IGN)  # a second Ctrl-C does not cut the stopping short
        stop_all()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
