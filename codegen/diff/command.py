"""``acp-codegen diff OLD NEW``: load both sides through the pipeline, compare, report.

Exit status: 0 when nothing fails the run; 1 when ``--fail-on`` names a change found (breaking
changes with ``--fail-on breaking``); 2 on bad input on either side (``file: /json/pointer:
message``, no report); 3 when ``generate`` refuses a side, whatever ``--fail-on`` says: the
report lists the errors first, and the comparison is incomplete.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from ..config.table import load_config
from ..errors import ConfigError, Problem, SchemaError
from ..generate.pipeline import generate
from ..protocol.ir import Protocol
from ..protocol.load import Source, VersionSources, find_version_dirs
from ..protocol.sources import load_protocols
from ..resources import display_name
from ..schema_terms import DEFS
from .changes import Change, Report, Which, generation_failed
from .compare import compare
from .files import file_changes
from .inputs import GIT_PREFIX, InputError, Side, VersionUnknown, open_sides
from .report import DEFAULT_MAX_CHARS, locate_error, to_github, to_json, to_markdown


@dataclass(frozen=True)
class Loaded:
    protocols: tuple[Protocol, ...]
    features: frozenset[str]  # enabled on this side (all declared ones unless told otherwise)
    file_names: dict[str, str]  # display name in the pipeline -> name shown to users
    raw_defs: dict[int, dict[str, Any]]  # per version, the $defs as written
    texts: dict[str, tuple[str, str]]  # schema file inside the schema directory -> (name shown, text)
    sources: tuple[VersionSources, ...]  # as validated (an upstream file's method types found by name)


def _inside(side: Side, src: Source) -> str:
    """Where a loaded file is inside the side's schema directory."""
    return PurePosixPath(*Path(os.path.relpath(side.root / src.name, side.schema_dir)).parts).as_posix()


def load_side(side: Side, features: frozenset[str] | None = None) -> Loaded:
    """Every version of one side through the one loader (``protocol.sources``); ``None`` keeps
    every declared feature."""
    try:
        protocols, sources, enabled = load_protocols(side.schema_dir, features, side.root, upstream=side.upstream)
    except SchemaError as exc:
        raise side.translate(exc) from None
    names = {src.name: side.shown(src.name) for s in sources for src in (*s.schemas, s.meta)}
    raw = {
        p.version: {n: d for src in s.schemas for n, d in src.data[DEFS].items()}
        for p, s in zip(protocols, sources, strict=True)
    }
    # Read back only to number lines (the loader has parsed every file), keyed by the path
    # inside the schema directory, which pairs a file with its counterpart on the other side.
    texts = {}
    for src in (src for s in sources for src in s.schemas):
        texts[_inside(side, src)] = (names[src.name], (side.root / src.name).read_text(encoding="utf-8"))
    for declared in sorted(side.schema_dir.glob("*.json")):  # conversions.json: generate's errors point there
        shown = side.shown(display_name(declared, side.root))
        texts[declared.name] = (shown, declared.read_text(encoding="utf-8"))
    return Loaded(protocols, enabled, names, raw, texts, sources)


def generated_files(side: Side, loaded: Loaded, schema_dir: str = "schema") -> dict[str, str]:
    """What ``generate`` would write from this side, as if its schema lived at ``schema_dir``
    of the project: file headers name their inputs, and the two sides must name them alike."""
    with tempfile.TemporaryDirectory(prefix="acp-codegen-diff-gen-") as tmp:
        root = Path(tmp)
        target = root.joinpath(*PurePosixPath(schema_dir).parts)
        shutil.copytree(side.schema_dir, target)
        if side.upstream:  # the schema as load_side completed it (headers are not compared)
            for src in (src for s in loaded.sources for src in s.schemas):
                (target / _inside(side, src)).write_text(json.dumps(src.data), encoding="utf-8")
        try:
            return generate(target, loaded.features, root).files
        except SchemaError as exc:  # already validated by load_side; kept for safety
            names = {
                display_name(target / rel, root): side.shown(display_name(side.schema_dir / rel, side.root))
                for rel in (p.relative_to(target) for p in target.rglob("*.json"))
            }
            raise SchemaError(
                [Problem(names.get(p.file, p.file), p.pointer, p.message) for p in exc.problems]
            ) from None


FAIL_ON = ("never", "breaking", "wire-breaking", "code-breaking", "any")


def _max_chars(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0 or 0 < value < 1000:
        raise argparse.ArgumentTypeError(f"expected 0 (no limit) or a number of characters >= 1000: {text!r}")
    return value


EXIT_STATUS = """exit status:
  0  nothing fails the run (with --fail-on never, the default: no error)
  1  a change that --fail-on names (breaking, wire-breaking, code-breaking or any)
  2  bad input on either side (file: /json/pointer: message); no report
  3  an error: generate refuses a side, whatever --fail-on says (the report lists it first)
"""


def exit_status(report: Report, fail_on: str) -> int:
    """3 on any error (the comparison is incomplete, so nothing may pass), else 1 where
    ``--fail-on`` names a change found, else 0."""
    if report.errors:
        return 3
    test: dict[str, Callable[[Change], bool]] = {
        "never": lambda c: False,
        "any": lambda c: True,
        "breaking": lambda c: c.breaking,
        "wire-breaking": lambda c: c.wire_breaking,
        "code-breaking": lambda c: c.code,
    }
    return 1 if any(test[fail_on](c) for c in report.changes) else 0


def _features(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    return frozenset(f.strip() for f in text.split(",") if f.strip())


def add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "old",
        metavar="OLD",
        help="schema file, schema directory, version directory, directory in upstream's layout, or git:REF",
    )
    cmd.add_argument("new", metavar="NEW", help="the same kinds of input as OLD")
    cmd.add_argument(
        "--format",
        choices=("markdown", "json", "github"),
        default="markdown",
        help="markdown (a pull-request comment), json (everything), github (GitHub Actions annotations)",
    )
    cmd.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="never",
        help="exit 1 on breaking changes (wire or code), on wire- or code-breaking ones only, or on any"
        " change (default: never); an error (generate refuses a side) exits 3 whatever this says",
    )
    cmd.add_argument(
        "--max-chars",
        type=_max_chars,
        default=DEFAULT_MAX_CHARS,
        metavar="N",
        help=f"markdown: cut the least important detail to stay under N characters"
        f" (default {DEFAULT_MAX_CHARS}, a pull-request comment's limit; 0: no limit)",
    )
    cmd.add_argument(
        "--markdown-file",
        type=Path,
        metavar="PATH",
        help="also write the Markdown report to PATH (one run gives a workflow its annotations and its comment)",
    )
    cmd.add_argument("--path", help="for git:REF inputs, the schema location in the repository (default: schema-dir)")
    for side in ("old", "new"):
        cmd.add_argument(
            f"--{side}-features",
            metavar="LIST",
            help=f"comma-separated features to enable on the {side} side (default: every declared one; '' for none)",
        )
    cmd.add_argument("--no-generated", action="store_true", help="skip comparing the generated files")


def _prefix(spec: str, root: Path, schema_dir: Path, git_path: str | None) -> str:
    """How the names of the files of an input start, as the report shows them."""
    if spec.startswith(GIT_PREFIX):
        inside = git_path or display_name(schema_dir, root)
        return f"{spec}:{inside}"
    return display_name(Path(spec), root)


def _only_version(sides: dict[str, Side]) -> int | None:
    """The protocol version of an input that has one only."""
    versions = {int(d.name[1:]) for side in sides.values() for d in find_version_dirs(side.schema_dir, side.root)}
    return versions.pop() if len(versions) == 1 else None


def _key(c: Change) -> tuple[object, ...]:
    return c.version, c.path, c.rule, c.change, c.detail


def build_report(args: argparse.Namespace) -> Report:
    config = load_config()
    with ExitStack() as stack:

        def opened(spec: str, version: int | None = None) -> dict[str, Side]:
            return stack.enter_context(open_sides(spec, config.root, config.schema_dir, args.path, version))

        try:
            old_sides = opened(args.old)
        except VersionUnknown:  # compared as the new input's version, if it tells one
            new_sides = opened(args.new)
            old_sides = opened(args.old, _only_version(new_sides))
        else:
            new_sides = opened(args.new, _only_version(old_sides))
        # Upstream's layout pairs its surfaces (a release may lack unstable files); another
        # kind of input has no surfaces to pair with them.
        surfaces = [s for s in old_sides if s in new_sides]
        if not surfaces:
            raise InputError(
                f"{args.old} and {args.new}: cannot compare one directory in upstream's layout (schema.json,"
                " schema.unstable.json) with another kind of input; name matching files instead"
            )
        report = Report(args.old, args.new, [])
        report.old_prefix = _prefix(args.old, config.root, config.schema_dir, args.path)
        report.new_prefix = _prefix(args.new, config.root, config.schema_dir, args.path)
        seen: set[tuple[object, ...]] = set()
        for surface in surfaces:  # "" alone, or "stable" before "unstable"
            old = load_side(old_sides[surface], _features(args.old_features))
            new = load_side(new_sides[surface], _features(args.new_features))
            found = compare(old.protocols, new.protocols, old.file_names, new.file_names, old.raw_defs, new.raw_defs)
            # The unstable files repeat the stable surface: list only what they add to it.
            changes = [replace(c, surface=surface) for c in found if _key(c) not in seen]
            seen |= {_key(c) for c in changes}
            report.changes += changes
            for rel, (shown, text) in old.texts.items():
                report.texts[shown] = text
                if rel in new.texts:
                    report.counterparts[shown] = new.texts[rel][0]
            report.texts.update(new.texts.values())
        if "" not in old_sides and not args.no_generated:
            report.files_note = (
                "Generated files not compared for upstream's layout: generate over a release with --base-v1/--base-v2"
            )
        elif not args.no_generated:
            shown_dir = display_name(config.schema_dir, config.root)
            if PurePosixPath(shown_dir).is_absolute():
                shown_dir = "schema"
            generated = {}
            pairs: tuple[tuple[Which, Side, Loaded], ...] = (("old", old_sides[""], old), ("new", new_sides[""], new))
            for which, side, loaded in pairs:
                try:
                    generated[which] = generated_files(side, loaded, shown_dir)
                except Exception as exc:  # the protocol diff stands; the failure is an error of its own
                    report.errors += [locate_error(report, e) for e in generation_failed(which, exc)]
            if not report.errors:
                report.files = file_changes(generated["old"], generated["new"])
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
    markdown = to_markdown(report, args.max_chars, shlex.join(["acp-codegen", "diff", args.old, args.new]))
    if args.markdown_file is not None:
        try:
            args.markdown_file.write_text(markdown, encoding="utf-8")
        except OSError as exc:
            print(f"acp-codegen diff: --markdown-file: {exc}", file=sys.stderr)
            return 2
    if args.format == "json":
        sys.stdout.write(to_json(report))
    elif args.format == "github":
        sys.stdout.write(to_github(report))
    else:
        sys.stdout.write(markdown)
    return exit_status(report, args.fail_on)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acp-codegen diff")
    add_arguments(parser)
    return run(parser.parse_args(argv))
