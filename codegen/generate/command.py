"""``acp-codegen generate`` and ``check``: the pipeline run from the command line's and
``pyproject.toml``'s settings, then the output written (or, for ``check``, compared).

Where a new base has no class that a class-names entry names and the output had, generate
takes the entry out of ``pyproject.toml`` and runs again; the SDK's own files are wired
after the output they import from (``generate.sdk``); the report says what was written,
what the names came from, and what the output no longer exports.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ..config.edit import TableEdit, all_names, generated_names, stale_class_names, without_class_names
from ..config.settings import Settings
from ..config.table import KEYS, Config, generation_arguments, load_config
from ..errors import ConfigError, OutputError, SchemaError
from ..protocol.hoist import RULES
from ..protocol.sources import UnknownFeature
from ..resources import BUILTIN_FRAGMENTS, display_name, schema_location
from ..style import FORMATTERS
from ..write.tree import diff_tree, keep_unchanged, read_tree, write_tree
from .pipeline import Generation, generate, one_base_versions, up_to_date
from .sdk.wire import Wiring, wiring_of


def add_arguments(cmd: argparse.ArgumentParser) -> None:
    """The options ``generate`` and ``check`` share."""
    cmd.add_argument(
        "--schema-dir",
        metavar="DIR",
        help=f"directory of v<N>/ fragment directories, or {BUILTIN_FRAGMENTS} (the fragments shipped"
        " with acp-codegen; the default unless pyproject.toml names another)",
    )
    cmd.add_argument("--out", type=Path, help="the generated package directory")
    cmd.add_argument("--feature", action="append", default=[], metavar="NAME", help="enable a feature (repeatable)")
    cmd.add_argument("--no-default-features", action="store_true", help="ignore the features listed in pyproject.toml")
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
    """How many class names the generator derived, and by which rule (see acp_codegen.protocol.hoist);
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


def _arguments(args: argparse.Namespace, config: Config, schema_dir: Path, bases: dict[int, Path]) -> dict[str, Any]:
    """``generate``'s keyword arguments; over a base for some versions only, and where
    ``versions`` names none, the versions with a base."""
    arguments = generation_arguments(config, vars(args))
    arguments["versions"] = arguments["versions"] or one_base_versions(schema_dir, config.root, bases)
    return arguments


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
    arguments = _arguments(args, config, schema_dir, bases)
    try:
        return generate(schema_dir, features, config.root, bases, **arguments), config, arguments["settings"], None
    except SchemaError as exc:
        stale = stale_class_names(config, exc.problems) if args.command == "generate" else {}
        if not stale:
            raise
    edit = without_class_names(config, stale)
    config = edit.config
    arguments = _arguments(args, config, schema_dir, bases)
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


def feature_origin(config: Config, unknown: list[str]) -> str:
    """Where the unknown features were asked for: the table's ``features``, else ``--feature``."""
    if config.file is not None and set(unknown) & set(config.features):
        return f"{config.file}: [tool.acp-codegen] features: "
    return "--feature: "


def run(args: argparse.Namespace) -> int:
    """``generate`` or ``check`` (``args.command``): exit 0, 1 (check: out of date; an SDK
    file not wired) or 2 (bad input, named)."""
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
                    **_arguments(args, config, schema_dir, bases),
                )
            ):
                print(f"{out}: up to date")
                return 0
            result, config, settings, pyproject = _generate(args, config, schema_dir, features, bases, notes)
            notes += _one_base(config, result, bases)
        wirings = [w for p in result.protocols if (w := wiring_of(config, p.version, result)) is not None]
        if args.command == "check":
            return _compare(out, result, wirings, config.root, settings.options.regenerate)
        # Files whose content is unchanged keep their bytes (and their header), so that a
        # new acp-codegen or a reformatted fragment rewrites nothing unless the code changes.
        files = keep_unchanged(out, result.files)
        notes += _dropped(result, out, files)
        unchanged = _write(out, files, [*wirings, *([pyproject] if pyproject else [])])
    except UnknownFeature as exc:
        print(f"acp-codegen: {exc.message(feature_origin(config, exc.unknown))}", file=sys.stderr)
        return 2
    except SchemaError as exc:
        print(exc, file=sys.stderr)
        return 2
    except (ConfigError, OutputError) as exc:
        print(f"acp-codegen: {exc}", file=sys.stderr)
        return 2
    if not args.verbose:
        print(config.describe())
    _report(out, result, settings, features, unchanged, over_a_base=bool(bases), notes=notes)
    for wiring in wirings:
        print("\n".join(wiring.report()))
    return 1 if any(w.problems for w in wirings) else 0


def _one_base(config: Config, result: Generation, bases: dict[int, Path]) -> list[str]:
    """Where a base is set for some versions only and ``versions`` names none: which were
    generated, and how to have the others."""
    generated = sorted(p.version for p in result.protocols)
    if config.chosen_versions or not bases or set(generated) != set(bases):
        return []
    left = [v for v in (1, 2) if v not in bases]
    if not left:
        return []
    other = left[0]
    return [
        f"versions: {', '.join(map(str, generated))} (v{other} not generated: only "
        f"{', '.join(f'base-v{v}' for v in sorted(bases))} is set; base-v{other} adds upstream's v{other} "
        f"with conversions, versions = [1, 2] with conversions = false the fragments' own)"
    ]


def _compare(out: Path, result: Generation, wirings: list[Wiring], root: Path, regenerate: str) -> int:
    """``check``: the differences from what generate would write (exit 1), or none (0)."""
    diff = diff_tree(out, result.files, out.name) + "".join(w.diff(root) for w in wirings)
    if diff:
        sys.stdout.write(diff)
        print(f"\n{out} is out of date; run `{regenerate}` to regenerate it.", file=sys.stderr)
        return 1
    print(f"{out}: up to date ({len(result.files)} files)")
    return 0


def _report(
    out: Path,
    result: Generation,
    settings: Settings,
    features: frozenset[str],
    unchanged: bool,
    *,
    over_a_base: bool,
    notes: list[str],
) -> None:
    """What generate wrote, the names it derived, a feature left off (over a base, where
    the SDK's users would miss it) and the notes of the run."""
    summary = "; ".join(f"v{p.version}: {len(p.types)} types, {len(p.methods)} methods" for p in result.protocols)
    action = f"{out}: up to date, nothing written" if unchanged else f"wrote {len(result.files)} files to {out}"
    print(f"{action} ({summary}; features: {', '.join(sorted(features)) or 'none'})")
    print(_naming_summary(result, settings))
    if over_a_base and (off := result.features_off(features)):
        print(off)
    if over_a_base and len(result.protocols) == 2:
        print(result.bridge.line())
    for line in [*result.notes(), *notes]:
        print(line)
