"""Command line: ``acp-codegen generate``, ``check``, ``diff``, ``adopt``, ``conformance`` and ``polyfill``.

Exit status: 0 success; 1 ``check`` found ``generated/`` out of date; 2 bad input
(the message names the file and JSON pointer; the output is left untouched).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

from . import __version__
from .adopt import command as adopt_command
from .adopt.pyproject import TableEdit, all_names, generated_names, stale_class_names, without_class_names
from .adopt.wire import Wiring, wiring_of
from .config import KEYS, Config, ConfigError, generation_arguments, load_config
from .conformance import command as conformance_command
from .diff import command as diff_command
from .errors import SchemaError
from .formatting import FORMATTERS
from .hoist import RULES
from .load import BUILTIN_FRAGMENTS, display_name, schema_location
from .options import Settings
from .pipeline import Generation, generate, up_to_date
from .polyfill import command as polyfill_command
from .write import OutputError, diff_tree, keep_unchanged, read_tree, write_tree


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
        cmd = sub.add_parser(name, help=text, description=text)
        cmd.add_argument(
            "--schema-dir",
            metavar="DIR",
            help=f"directory of v<N>/ fragment directories, or {BUILTIN_FRAGMENTS} (the fragments shipped"
            " with acp-codegen; the default unless pyproject.toml names another)",
        )
        cmd.add_argument("--out", type=Path, help="the generated package directory")
        cmd.add_argument("--feature", action="append", default=[], metavar="NAME", help="enable a feature (repeatable)")
        cmd.add_argument(
            "--no-default-features", action="store_true", help="ignore the features listed in pyproject.toml"
        )
        cmd.add_argument(
            "--no-conversions",
            action="store_true",
            help="do not generate convert.py (v1 <-> v2 conversions); see conversions = false in pyproject.toml",
        )
        for version in (1, 2):
            cmd.add_argument(
                f"--base-v{version}",
                type=Path,
                metavar="PATH",
                help=f"upstream ACP schema.json or schema.unstable.json to overlay the v{version} fragments on",
            )
        cmd.add_argument("-v", "--verbose", action="store_true", help="say which config file and table were read")
        cmd.add_argument(
            "--formatter",
            choices=FORMATTERS,
            help="lay out the generated code with black (the default) or ruff format (faster, black's style)",
        )
        cmd.add_argument("--line-length", type=_line_length, metavar="N", help="line length of the generated code (88)")
        cmd.add_argument(
            "--default-on-null",
            choices=KEYS["default-on-null"].choices,
            help="where null reads as 'not given': where upstream marks it (the default), or in every optional"
            " field whose schema does not allow null",
        )
        cmd.add_argument(
            "--unknown-properties",
            choices=KEYS["unknown-properties"].choices,
            help="keep unknown properties and emit them again (the default), or drop them",
        )
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
    text = "run an agent behind a proxy that gives it the session archive RFD (see `polyfill --help`)"
    polyfill_command.add_arguments(
        sub.add_parser(
            "polyfill",
            help=text,
            description=polyfill_command.__doc__,
            epilog=polyfill_command.EXIT_STATUS,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )
    return parser


def _line_length(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 40 <= value <= 320:
        raise argparse.ArgumentTypeError(f"must be an integer from 40 to 320, not {text!r}")
    return value


def _bases(args: argparse.Namespace, config: Config) -> dict[int, Path]:
    bases = dict(config.bases)
    for version in (1, 2):
        if getattr(args, f"base_v{version}") is not None:
            bases[version] = getattr(args, f"base_v{version}")
    return bases


def _naming_summary(result: Generation, settings: Settings) -> str:
    """How many class names the generator derived, and by which rule (see codegen.hoist);
    how many entries of the class-names tables took effect."""
    parts = []
    for p in result.protocols:
        rules = Counter(d.rule for d in p.derived_names.values())
        detail = ", ".join(f"{rule} {rules[rule]}" for rule in RULES if rules[rule])
        parts.append(f"v{p.version}: {sum(rules.values())}" + (f" ({detail})" if detail else ""))
    chosen = {
        (settings.of(p.version).class_names.table, old) for p in result.protocols for old in p.chosen_names.values()
    }
    summary = "derived class names: " + "; ".join(parts)
    return summary + (f"; chosen in {settings.class_names.origin}: {len(chosen)}" if chosen else "")


def _settings(args: argparse.Namespace, config: Config) -> tuple[Path | str, Path, frozenset[str]]:
    schema_dir = args.schema_dir or config.fragments
    out = args.out or config.out
    features = set(args.feature)
    if not args.no_default_features:
        features |= set(config.features)
    return schema_dir, out, frozenset(features)


def _generate(
    args: argparse.Namespace,
    config: Config,
    schema_dir: Path,
    features: frozenset[str],
    bases: dict[int, Path],
    notes: list[str],
) -> tuple[Generation, Config, Settings, TableEdit | None]:
    """The generation; where a new base has no class that a class-names entry names and the
    output had (not a typo: a class the base dropped), ``generate`` takes the entry out of
    pyproject.toml (the edit, for the caller to write with the output), says so in
    ``notes``, and generates again. The entry is never pointed at another class; ``check``
    only reports (it writes nothing)."""
    arguments = generation_arguments(config, vars(args))
    try:
        return generate(schema_dir, features, config.root, bases, **arguments), config, arguments["settings"], None
    except SchemaError as exc:
        stale = stale_class_names(config, exc.problems) if args.command == "generate" else {}
        if not stale:
            raise
    edit = without_class_names(config, stale)
    config = edit.config
    arguments = generation_arguments(config, vars(args))
    result = generate(schema_dir, features, config.root, bases, **arguments)
    for (table, name), public in sorted(stale.items()):
        where = f"[tool.acp-codegen{'.' + table if table else ''}.class-names]"
        origin = display_name(config.file, config.root) if config.file else "pyproject.toml"
        notes.append(f"{origin}: {where} {name} = {public!r} taken out: the base has no {name} any more")
    return result, config, arguments["settings"], edit


def _dropped(result: Generation, out: Path, files: dict[str, str]) -> list[str]:
    """The public names the models export no more (a new base dropped their classes)."""
    notes = []
    for p in result.protocols:
        path = f"v{p.version}/models.py"
        gone = generated_names(out, p.version) - all_names(files[path]) if path in files else set()
        if gone:
            notes.append(f"v{p.version}: no longer generated (not in the base): {', '.join(sorted(gone))}")
    return notes


def _write(out: Path, files: dict[str, str], edits: list[Wiring | TableEdit]) -> bool:
    """The output (where it changed: whether it did not), then the edits: the SDK's own files
    after the output they import from, the settings last, with the files they gave."""
    unchanged = read_tree(out) == files
    if not unchanged:
        write_tree(out, files)
    for edit in edits:
        edit.write()
    return unchanged


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
    if args.command == "polyfill":
        return polyfill_command.run(args)
    try:
        config = load_config()
        if args.verbose:  # on stderr, before anything can fail: stdout carries results only
            print(config.describe(), file=sys.stderr)
        spec, out, features = _settings(args, config)
        bases = _bases(args, config)
        arguments = generation_arguments(config, vars(args))
        settings: Settings = arguments["settings"]
        notes: list[str] = []
        with schema_location(spec) as schema_dir:
            # (an SDK's wired files are checked too: no shortcut where the settings name them)
            wires = any(config.sdk(version) for version in (1, 2, *config.versions))
            if (
                args.command == "check"
                and not wires
                and up_to_date(
                    schema_dir,
                    out,
                    features,
                    config.root,
                    bases,
                    **arguments,
                )
            ):
                print(f"{out}: up to date")
                return 0
            result, config, settings, pyproject = _generate(args, config, schema_dir, features, bases, notes)
        wirings = [w for p in result.protocols if (w := wiring_of(config, p.version, result)) is not None]
        if args.command == "check":
            diff = diff_tree(out, result.files, out.name) + "".join(w.diff(config.root) for w in wirings)
            if diff:
                sys.stdout.write(diff)
                print(f"\n{out} is out of date; run `{settings.options.regenerate}` to regenerate it.", file=sys.stderr)
                return 1
            print(f"{out}: up to date ({len(result.files)} files)")
            return 0
        # Files whose content is unchanged keep their bytes (and their header), so that a
        # new acp-codegen or a reformatted fragment rewrites nothing unless the code changes.
        files = keep_unchanged(out, result.files)
        notes += _dropped(result, out, files)
        unchanged = _write(out, files, [*wirings, *([pyproject] if pyproject else [])])
    except SchemaError as exc:
        print(exc, file=sys.stderr)
        return 2
    except (ConfigError, OutputError) as exc:
        print(f"acp-codegen: {exc}", file=sys.stderr)
        return 2
    if not args.verbose:
        print(config.describe())
    summary = "; ".join(f"v{p.version}: {len(p.types)} types, {len(p.methods)} methods" for p in result.protocols)
    action = f"{out}: up to date, nothing written" if unchanged else f"wrote {len(result.files)} files to {out}"
    print(f"{action} ({summary}; features: {', '.join(sorted(features)) or 'none'})")
    print(_naming_summary(result, settings))
    for line in [*result.notes(), *notes]:
        print(line)
    problems = {name: why for w in wirings for name, why in w.problems.items()}
    for wiring in wirings:
        print("\n".join(wiring.report()))
    return 1 if problems else 0
