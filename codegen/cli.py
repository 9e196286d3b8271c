"""Command line: ``acp-codegen generate``, ``check``, ``diff``, ``adopt`` and ``conformance``.
It parses and dispatches; each command runs itself (``generate.command``, ``diff.command``...).

Exit status: 0 success; 1 ``check`` found ``generated/`` out of date; 2 bad input
(the message names the file and JSON pointer; the output is left untouched).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import __version__
from .adopt import command as adopt_command
from .conformance import command as conformance_command
from .diff import command as diff_command
from .generate import command as generate_command


def _parser() -> argparse.ArgumentParser:
    # Raw text: argparse would wrap the --version line at the terminal's width.
    parser = argparse.ArgumentParser(
        prog="acp-codegen", description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    where = f"from {Path(__file__).resolve().parent} (Python {sys.version.split()[0]})"
    parser.add_argument("--version", action="version", version=f"acp-codegen {__version__} {where}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("generate", "write the generated package"),
        ("check", "exit 1 with a diff when the generated package is out of date"),
    ):
        generate_command.add_arguments(sub.add_parser(name, help=text, description=text))
    text = "compare two schema sets in protocol terms (see `diff --help`)"
    diff_command.add_arguments(sub.add_parser("diff", help=text, description=diff_command.__doc__))
    text = "move an SDK's schema module to acp-codegen: settings, moved code, one import (see `adopt --help`)"
    adopt_command.add_arguments(sub.add_parser("adopt", help=text, description=adopt_command.__doc__))
    text = "check an agent's session archive against the RFD (see `conformance --help`)"
    conformance_command.add_arguments(
        sub.add_parser(
            "conformance",
            help=text,
            description=conformance_command.__doc__,
            epilog=conformance_command.EXIT_STATUS,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        return _run(argv)
    except BrokenPipeError:
        # The reader went away (`acp-codegen diff ... | head`): not an error of ours. Point
        # stdout at /dev/null so that the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _run(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "diff":
        return diff_command.run(args)
    if args.command == "conformance":
        return conformance_command.run(args)
    if args.command == "adopt":
        return adopt_command.run(args)
    return generate_command.run(args)
