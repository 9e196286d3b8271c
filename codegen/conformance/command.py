"""``acp-codegen conformance [options] -- AGENT COMMAND...``: run the RFD scenarios.

Exit status: 0 when no scenario failed (and at least one passed); 1 when one failed or
none could run; 2 on a usage error or an agent command that cannot be started.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import report
from .context import Options
from .models import ModelsMissing
from .runner import CannotStart, Outcome, run_version
from .scenarios import BY_NAME, SCENARIOS

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
        args.timeout, args.start_timeout, args.turn_timeout, tuple(args.long_prompt or DEFAULT_LONG_PROMPTS)
    )
    versions = (1, 2) if args.protocol == "both" else (int(args.protocol),)
    began = time.monotonic()
    outcomes: list[Outcome] = []
    try:
        for version in versions:
            for outcome in run_version(command, version, selected, options):
                print(report.line(outcome), flush=True)
                outcomes.append(outcome)
    except (CannotStart, ModelsMissing) as exc:
        print(f"acp-codegen conformance: {exc}", file=sys.stderr)
        return 2
    print(report.summary(outcomes, time.monotonic() - began))
    if args.junit_xml is not None:
        try:
            report.junit(outcomes, args.junit_xml)
        except OSError as exc:
            print(f"acp-codegen conformance: cannot write {args.junit_xml}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    if any(o.status == "fail" for o in outcomes):
        return 1
    if not any(o.status == "pass" for o in outcomes):
        print("nothing was checked: every scenario was skipped", file=sys.stderr)
        return 1
    return 0
