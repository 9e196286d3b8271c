"""``acp-codegen diff OLD NEW``: load both sides through the pipeline, compare, report.

Exit status: 0, or 1 when ``--fail-on`` says the changes found should fail the run;
2 on bad input on either side (``file: /json/pointer: message``, no traceback).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..config import ConfigError, load_config
from ..errors import Problem, SchemaError, fail
from ..features import select
from ..ir import Protocol, build
from ..load import display_name, find_version_dirs, load_version
from ..pipeline import generate
from ..validate import DEFS, declared_features, validate_version
from .compare import Report, compare, file_changes
from .inputs import InputError, Side, open_side
from .report import to_json, to_markdown


@dataclass(frozen=True)
class Loaded:
    protocols: tuple[Protocol, ...]
    features: frozenset[str]  # enabled on this side (all declared ones unless told otherwise)
    file_names: dict[str, str]  # display name in the pipeline -> name shown to users
    raw_names: dict[int, frozenset[str]]  # per version, the $defs names as written


def load_side(side: Side, features: frozenset[str] | None = None) -> Loaded:
    """Load, validate, select and build every version of one side; ``None`` keeps every declared feature."""
    try:
        sources = []
        for directory in find_version_dirs(side.schema_dir, side.root):
            version_sources = load_version(directory, side.root)
            validate_version(version_sources, int(directory.name[1:]))
            sources.append(version_sources)
        declared = {f for s in sources for f in declared_features(s.meta)}
        if features is not None and features - declared:
            unknown = sorted(features - declared)[0]
            raise fail(
                display_name(side.schema_dir, side.root),
                "",
                f"unknown feature {unknown!r}; declared: {', '.join(sorted(declared)) or 'none'}",
            )
        enabled = frozenset(declared) if features is None else features
        protocols = tuple(build(select(s, enabled)) for s in sources)
    except SchemaError as exc:
        raise side.translate(exc) from None
    names = {src.name: side.shown(src.name) for s in sources for src in (*s.schemas, s.meta)}
    raw = {
        p.version: frozenset(n for src in s.schemas for n in src.data[DEFS])
        for p, s in zip(protocols, sources, strict=True)
    }
    return Loaded(protocols, enabled, names, raw)


def generated_files(side: Side, features: frozenset[str], schema_dir: str = "schema") -> dict[str, str]:
    """What ``generate`` would write from this side, as if its schema lived at ``schema_dir``
    of the project: file headers name their inputs, and the two sides must name them alike."""
    with tempfile.TemporaryDirectory(prefix="acp-codegen-diff-gen-") as tmp:
        root = Path(tmp)
        target = root.joinpath(*PurePosixPath(schema_dir).parts)
        shutil.copytree(side.schema_dir, target)
        try:
            return generate(target, features, root).files
        except SchemaError as exc:  # already validated by load_side; kept for safety
            names = {
                display_name(target / rel, root): side.shown(display_name(side.schema_dir / rel, side.root))
                for rel in (p.relative_to(target) for p in target.rglob("*.json"))
            }
            raise SchemaError(
                [Problem(names.get(p.file, p.file), p.pointer, p.message) for p in exc.problems]
            ) from None


def _features(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    return frozenset(f.strip() for f in text.split(",") if f.strip())


def add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("old", metavar="OLD", help="schema file, schema directory, version directory, or git:REF")
    cmd.add_argument("new", metavar="NEW", help="the same kinds of input as OLD")
    cmd.add_argument("--format", choices=("markdown", "json"), default="markdown", help="report format")
    cmd.add_argument(
        "--fail-on",
        choices=("never", "breaking", "any"),
        default="never",
        help="exit 1 when there are breaking changes, or any changes (default: never)",
    )
    cmd.add_argument("--path", help="for git:REF inputs, the schema location in the repository (default: schema-dir)")
    for side in ("old", "new"):
        cmd.add_argument(
            f"--{side}-features",
            metavar="LIST",
            help=f"comma-separated features to enable on the {side} side (default: every declared one; '' for none)",
        )
    cmd.add_argument("--no-generated", action="store_true", help="skip comparing the generated files")


def build_report(args: argparse.Namespace) -> Report:
    config = load_config()
    with ExitStack() as stack:
        old_side = stack.enter_context(open_side(args.old, config.root, config.schema_dir, args.path))
        new_side = stack.enter_context(open_side(args.new, config.root, config.schema_dir, args.path))
        old = load_side(old_side, _features(args.old_features))
        new = load_side(new_side, _features(args.new_features))
        changes = compare(old.protocols, new.protocols, old.file_names, new.file_names, old.raw_names, new.raw_names)
        report = Report(args.old, args.new, changes)
        if not args.no_generated:
            try:
                shown_dir = display_name(config.schema_dir, config.root)
                if PurePosixPath(shown_dir).is_absolute():
                    shown_dir = "schema"
                old_files = generated_files(old_side, old.features, shown_dir)
                new_files = generated_files(new_side, new.features, shown_dir)
            except SchemaError:
                raise
            except Exception as exc:  # the protocol diff stands on its own when a renderer fails
                report.files_note = f"Generated files not compared: generation failed ({type(exc).__name__}: {exc})"
            else:
                report.files = file_changes(old_files, new_files)
    return report


def run(args: argparse.Namespace) -> int:
    try:
        report = build_report(args)
    except SchemaError as exc:
        print(exc, file=sys.stderr)
        return 2
    except (InputError, ConfigError) as exc:
        print(f"acp-codegen diff: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(to_json(report) if args.format == "json" else to_markdown(report))
    if args.fail_on == "any" and report.changes:
        return 1
    if args.fail_on == "breaking" and report.breaking:
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acp-codegen diff")
    add_arguments(parser)
    return run(parser.parse_args(argv))
