"""Command line: ``acp-codegen generate``, ``check``, ``diff``, ``adopt``, ``conformance`` and ``polyfill``.
It parses and dispatches; each command runs itself (``generate.command``, ``diff.command``...).

Exit status: 0 success; 1 ``check`` found ``generated/`` out of date; 2 bad input
(the message names the file and JSON pointer; the output is left untouched).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from . import __version__

# Every command: its name, its line in the help, and the package whose ``command`` module
# runs it, imported only when that command runs (``generate`` loads no other command's code).
COMMANDS = (
    ("generate", "write the generated package", "generate"),
    ("check", "exit 1 with a diff when the generated package is out of date", "generate"),
    ("diff", "compare two schema sets in protocol terms (see `diff --help`)", "diff"),
    (
        "adopt",
        "move an SDK's schema module to acp-codegen: settings, moved code, one import (see `adopt --help`)",
        "adopt",
    ),
    ("conformance", "check an agent's session archive against the RFD (see `conformance --help`)", "conformance"),
    (
        "polyfill",
        "run an agent behind a proxy that gives it the session archive RFD and bridges a protocol-2 client"
        " to a protocol-1 agent (see `polyfill --help`)",
        "polyfill",
    ),
)


def _command(package: str) -> ModuleType:
    return importlib.import_module(f"acp_codegen.{package}.command")


def _plain(text: str | None) -> str:
    """A docstring as --help shows it: plain text, without reST's literal markup."""
    return (text or "").replace("``", "")


def _parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The command line: where a command is ``chosen``, only its options are read (and its
    code imported); else every command's."""
    # Raw text: argparse would wrap the --version line at the terminal's width.
    parser = argparse.ArgumentParser(
        prog="acp-codegen",
        description="The Agent Client Protocol's session archive (RFD) as code: generate typed models, dispatch\n"
        "and v1 <-> v2 conversions from JSON Schema, review schema changes, move an SDK to it, check an\n"
        "agent against the RFD, and put the RFD and the v2-to-v1 bridge in front of an agent.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = f"from {Path(__file__).resolve().parent} (Python {sys.version.split()[0]})"
    parser.add_argument("--version", action="version", version=f"acp-codegen {__version__} {where}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text, package in COMMANDS:
        if chosen is not None and name != chosen:
            sub.add_parser(name, help=text)
            continue
        module = _command(package)
        options: dict[str, Any] = {"description": text if package == "generate" else _plain(module.__doc__)}
        if hasattr(module, "EXIT_STATUS"):  # (conformance: its exit statuses after the options)
            options |= {"epilog": _plain(module.EXIT_STATUS), "formatter_class": argparse.RawDescriptionHelpFormatter}
        module.add_arguments(sub.add_parser(name, help=text, **options))
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
    argv = sys.argv[1:] if argv is None else argv
    chosen = next((arg for arg in argv if not arg.startswith("-")), None)
    args = _parser(chosen).parse_args(argv)
    package = next(package for name, _, package in COMMANDS if name == args.command)
    return int(_command(package).run(args))
