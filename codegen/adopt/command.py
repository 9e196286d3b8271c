"""``acp-codegen adopt MODULE [--version 1|2] [--python PATH] [--dry-run]``: an SDK's
schema module becomes settings of acp-codegen, in one run.

Run in the SDK's repository, whose ``[tool.acp-codegen]`` names the base schema of that
protocol version (``base-v1``...) and ``out``. Exit status: 0 when every public name of
the module was reproduced (the settings, the output, the moved code and the module are
written); 1 when some were not (listed, each with the reason and the nearest generated
candidate; the settings and the moved code are written, the module and the output are
not); 2 on bad input (nothing is written).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..config.edit import TableEdit, all_names
from ..config.settings import DEFAULT_SETTINGS
from ..config.table import Config, generation_arguments, load_config
from ..errors import AdoptError, ConfigError, SchemaError
from ..generate.pipeline import Generation, conversion_plan, generate, load_protocols, read_declarations
from ..generate.sdk.edits import locate
from ..generate.sdk.roles import ROLES
from ..generate.sdk.wire import Wiring, wiring_of
from ..protocol.features import gated_off
from ..protocol.ir import Protocol
from ..protocol.load import find_version_dirs
from ..render.formatting import format_modules
from ..resources import display_name, schema_location
from ..style import Style
from .carry import Carried, carry
from .corpus import drawn, fixed
from .discover import find_roles, setting, version_modules
from .match import match, reverse
from .pyproject import edit_table
from .read import Module, reading
from .regen import Regeneration, take_over
from .settings import Derived, derive
from .shapes import Generated, Matching
from .verify import Verdict, verify


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("module", type=Path, metavar="MODULE", help="the SDK's schema module, e.g. src/acp/schema.py")
    parser.add_argument("--version", type=int, choices=(1, 2), default=1, help="its protocol version (default: 1)")
    parser.add_argument(
        "--python", metavar="PATH", help="the interpreter the SDK runs in (default: the one acp-codegen runs in)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the settings and the report; write nothing")


@dataclass
class Plan:
    """Everything one run decided, before anything is written."""

    module: Module
    derived: Derived
    carried: Carried
    matching: Matching
    edit: TableEdit
    files: dict[str, str]
    ext_path: Path
    replacement: str
    verdict: Verdict = field(default_factory=Verdict)
    wiring: Wiring = field(default_factory=Wiring)
    regeneration: Regeneration = field(default_factory=Regeneration)
    features: list[str] = field(default_factory=list)  # the report's lines on the features


def run(args: argparse.Namespace) -> int:
    try:
        plan = _plan(args)
    except (AdoptError, ConfigError) as exc:
        print(f"acp-codegen adopt: {exc}", file=sys.stderr)
        return 2
    except SchemaError as exc:
        print(exc, file=sys.stderr)
        return 2
    missing = {
        **{
            n: f"{m.reason}" + (f" (nearest: {m.nearest})" if m.nearest else "")
            for n, m in plan.matching.missing.items()
        },
        **plan.verdict.problems,
    }
    print(_report(plan, missing))
    if args.dry_run:
        print("\n" + plan.edit.shown)
        if plan.wiring.texts:
            print(plan.wiring.diff(plan.edit.config.root))
        print(plan.regeneration.diff(plan.edit.config.root), end="")
        return 1 if missing or plan.wiring.problems or plan.regeneration.problem else 0
    plan.edit.write()
    if plan.carried.text is not None and (not plan.ext_path.exists() or plan.ext_path.read_text() != plan.carried.text):
        plan.ext_path.write_text(plan.carried.text, encoding="utf-8")
    if missing:
        return 1
    from ..write.tree import keep_unchanged, read_tree, write_tree

    out = plan.edit.config.out
    files = keep_unchanged(out, plan.files)
    if read_tree(out) != files:
        write_tree(out, files)
    module_file = plan.module.file
    if module_file.read_text(encoding="utf-8") != plan.replacement:
        if not _tracked(module_file):
            copy = module_file.with_name(module_file.name + ".orig")
            copy.write_text(module_file.read_text(encoding="utf-8"), encoding="utf-8")
            print(f"kept the old module as {copy} (it is not tracked by git)")
        module_file.write_text(plan.replacement, encoding="utf-8")
    plan.wiring.write()
    plan.regeneration.write()
    return 1 if plan.wiring.problems or plan.regeneration.problem else 0


def _tracked(path: Path) -> bool:
    try:
        done = subprocess.run(
            ["git", "ls-files", "--error-unmatch", path.name], cwd=path.parent, capture_output=True, check=False
        )
    except OSError:
        return False
    return done.returncode == 0


def _plan(args: argparse.Namespace) -> Plan:
    """What adopting the module means, decided whole before anything is written: the
    module read in the SDK's interpreter, matched to the generated types, the settings that
    reproduce its names, the generation under them, and the result verified."""
    config = load_config()
    version = args.version
    root, dotted, out_dotted = _where(args, config)
    with reading(root, dotted, args.python) as old:
        # The base is loaded while the SDK's interpreter imports the module.
        with schema_location(config.fragments) as schema_dir:
            every = [int(d.name[1:]) for d in find_version_dirs(schema_dir, config.root)]
            if version not in every:
                raise AdoptError(f"{display_name(schema_dir, config.root)}: no v{version} fragments to adopt against")
            versions, said = _versions(config, version, old.module.file, root, every)
            protocols, sources = load_protocols(
                schema_dir, frozenset(config.features), config.root, config.bases, versions=frozenset(versions)
            )
            conversions_off = _conversions(schema_dir, config, protocols, sources)
        module = old.module
        protocol = next(p for p in protocols if p.version == version)
        gone = _without_features_off(module, sources, protocol, frozenset(config.features))
        if not any(d.kind in ("model", "root") for d in module.names.values()):
            raise AdoptError(f"{args.module}: no pydantic classes among its public names")
        matching = match(module, protocol)
        gen = Generated(protocol)
        derived = derive(module, matching, gen)
        if gone:
            derived.notes.append(f"{', '.join(gone)}: of a feature that is off, not kept")
        if conversions_off:
            derived.notes.append(
                f"conversions = false: the declared v1 <-> v2 differences do not hold: {conversions_off}"
            )
        package, _, stem = dotted.rpartition(".")
        ext_dotted = f"{package}._{stem}_ext" if package else f"_{stem}_ext"
        carried = carry(
            module, module.file.read_text(encoding="utf-8"), matching, gen, ext_dotted, derived.chosen, out_dotted
        )
        values = _values(config, version, module, root, derived, carried)
        style, regeneration = _regeneration(config, module, values)
        if versions != every or config.chosen_versions:  # (a list written before is kept true)
            style["versions"] = versions
        unset = {"conversions": False} if conversions_off else {}
        out = config.out.absolute()
        edit = edit_table(config, version, values, style, unset, out.relative_to(config.root).as_posix())
        generation = _generate(edit.config)
        files = generation.files
        if carried.text is not None:  # laid out as the generated code is, in the repository's style
            carried.text = format_modules({"ext.py": carried.text}, generation_arguments(edit.config)["style"])[
                "ext.py"
            ]
        replacement = _replacement(
            module, version, out_dotted, edit.config["regenerate"], (ext_dotted, carried.base_class), files
        )
        ext_path = module.file.with_name(f"_{stem}_ext.py")
        plan = Plan(module, derived, carried, matching, edit, files, ext_path, replacement)
        plan.regeneration = regeneration
        enabled = frozenset(edit.config.features)
        off = generation.features_off(enabled, "acp-codegen adopt")
        plan.features = [f"features: {', '.join(sorted(enabled)) or 'none'}", *([off] if off else []), said]
        if "sdk" in values:
            plan.wiring = wiring_of(edit.config, version, generation) or Wiring()
        if not matching.missing:
            writes = _writes(plan, root, out)
            messages = _messages(module, matching, protocol, derived, f"v{version}/")
            with tempfile.TemporaryDirectory(prefix="acp-codegen-adopt-") as tmp:
                plan.verdict = verify(
                    old,
                    Path(tmp),
                    writes,
                    messages,
                    {n: m.gained for n, m in matching.classes.items() if m.gained},
                    gen.constants(),
                    args.python,
                    plan.wiring.modules,
                )
            plan.wiring.problems |= plan.verdict.unimportable  # the wiring's problems, not the names
    return plan


def _where(args: argparse.Namespace, config: Config) -> tuple[Path, str, str]:
    """The module's source root and dotted name, and the output's dotted name beside it;
    the configuration must name the base adopt matches against."""
    if args.version not in config.bases:
        where = config.file or "pyproject.toml"
        raise AdoptError(
            f"{where}: [tool.acp-codegen] names no base-v{args.version}: adopt matches against that schema"
        )
    root, dotted = locate(args.module)
    out = config.out.absolute()
    try:
        out_dotted = ".".join(out.relative_to(root).parts)
    except ValueError:
        raise AdoptError(f"out = {out}: not inside {root}, where {dotted} is imported from") from None
    return root, dotted, out_dotted


def _versions(config: Config, version: int, module: Path, root: Path, every: list[int]) -> tuple[list[int], str]:
    """The protocol versions the SDK has, which adopt generates: the one adopted, those the
    settings name (a base, a table of their own, ``versions``), and those the SDK has a schema
    module of; with the report's line on them."""
    listed = {version, *config.bases, *config.versions, *(config.chosen_versions or ())}
    found = version_modules(module, root, sorted(set(every) - listed), config.out.absolute())
    versions = sorted((listed | set(found)) & set(every))
    line = f"versions: {', '.join(map(str, versions))}"
    left = [v for v in every if v not in versions]
    if left:
        named = ", ".join(f"v{v}" for v in left)
        line += (
            f" ({named} not generated: no base-v<N> set and no v<N> schema module in the SDK;"
            " versions in [tool.acp-codegen] lists the versions generated)"
        )
    for v, path in sorted(found.items()):
        if v not in config.bases:
            line += f"\n  v{v}: {path.relative_to(root)} found; adopt it with --version {v} once base-v{v} is set"
    return versions, line


def _values(
    config: Config, version: int, module: Module, root: Path, derived: Derived, carried: Carried
) -> dict[str, Any]:
    """The version table's settings: the derived names, the SDK's own modules the template
    set makes or wires (its meta module, router...), the moved base class and mixins."""
    values = dict(derived.values)
    found = find_roles(module.file, root)
    if found:
        values["sdk"] = setting(found, config.sdk(version), module.file, config.root)
    if carried.base_class:
        values["base-class"] = carried.base_class
    if carried.mixins:
        values["mixins"] = carried.mixins
    return values


def _regeneration(config: Config, module: Module, values: dict[str, Any]) -> tuple[dict[str, Any], Regeneration]:
    """The top-level settings (the repository's layout; the command that regenerates, where
    adopt takes over the SDK's own) and that take-over."""
    style = _style(config)
    owned = [module.file, *(config.root / p for r, p in values.get("sdk", {}).items() if r in ROLES)]
    laid = Style(style.get("formatter", config.formatter), style.get("line-length", config.line_length))
    regeneration = take_over(config.root, owned, laid)
    if regeneration.command and not regeneration.problem:
        style["regenerate"] = regeneration.command  # what headers and `check` name
    return style, regeneration


def _writes(plan: Plan, root: Path, out: Path) -> dict[str, str]:
    """Every file the plan writes, by its path under the source root (what verify builds)."""
    rel_out = out.relative_to(root).as_posix()
    writes = {f"{rel_out}/{path}": text for path, text in plan.files.items()}
    writes[plan.module.file.relative_to(root).as_posix()] = plan.replacement
    if plan.carried.text is not None:
        writes[plan.ext_path.relative_to(root).as_posix()] = plan.carried.text
    writes |= {path.relative_to(root).as_posix(): text for path, text in plan.wiring.texts.items()}
    return writes


def _replacement(
    module: Module, version: int, out_dotted: str, regenerate: str, base: tuple[str, str | None], files: dict[str, str]
) -> str:
    """The new text of the module: the star import of the generated models; the moved base
    class where the module defined it (a public name of it); and what the module imported
    from the SDK's own package that the models do not provide (``BaseModel`` from
    ``_schema_base``, helpers), so that each name its users imported from it stays importable."""
    text = (
        f'"""The ACP protocol v{version} models, generated by acp-codegen into {out_dotted}\n'
        f'(`acp-codegen adopt` moved them there; `{regenerate}` regenerates them)."""\n\n'
        f"from {out_dotted}.v{version}.models import *  # noqa: F403\n"
    )
    provided = all_names(files[f"v{version}/models.py"])
    ext_dotted, base_class = base
    if base_class and base_class.startswith(f"{ext_dotted}:"):
        name = base_class.split(":")[1]
        text += f"from {ext_dotted} import {name}\n"
        provided.add(name)
    for name, (source, original) in sorted(module.imported.items(), key=lambda item: (item[1][0], item[0])):
        if name in provided or source == out_dotted or source.startswith(f"{out_dotted}."):
            continue
        if not original:
            text += f"import {source} as {name}  # noqa: F401\n"
        else:
            text += f"from {source} import {original}{f' as {name}' if name != original else ''}  # noqa: F401\n"
    return text


def _without_features_off(module: Module, sources: Any, protocol: Protocol, enabled: frozenset[str]) -> list[str]:
    """A module adopt wrote with a feature that is now off still exports that feature's
    classes and fields (``x-feature`` definitions and properties): they are the feature's,
    not the SDK's, and go with it. Takes them out of ``module``; returns the classes."""
    mine = next((v for v in sources if int(v.meta.data["version"]) == protocol.version), None)
    off = gated_off((s.data for s in (mine.schemas if mine else ())), enabled)
    keys = off.properties - {f.name for t in protocol.types.values() for f in t.fields}  # a key the selection has stays
    gone = sorted(name for name in module.names if name in off.definitions)
    for name in gone:
        del module.names[name]
    for name, d in module.names.items():
        if any(f.wire in keys for f in d.fields):
            module.names[name] = replace(d, fields=tuple(f for f in d.fields if f.wire not in keys))
    return gone


def _conversions(schema_dir: Path, config: Config, protocols: Any, sources: Any) -> str | None:
    """Why conversions go off (``conversions = false``), where they are on and the declared
    differences do not hold between the versions this repository generates (a base for one
    version only, typically): the output would not generate. None: they stay as they are."""
    if not config.conversions or len(protocols) < 2:  # (one version generated: nothing converts)
        return None
    try:
        declared = read_declarations(
            schema_dir, config.root, True, any(s.overlaid for s in sources), config.declarations
        )
        conversion_plan(protocols, sources, declared, DEFAULT_SETTINGS)
    except SchemaError as exc:
        # The differences themselves, not only the summary that asks to declare them.
        found = [p for p in exc.problems if p.pointer not in ("", "/")] or list(exc.problems)
        more = f"; and {len(found) - 3} more (`acp-codegen generate` over both bases lists them)"
        return f"{len(found)} undeclared: " + "; ".join(map(str, found[:3])) + (more if len(found) > 3 else "")
    return None


def _style(config: Config) -> dict[str, Any]:
    """formatter and line-length as the repository's own [tool.black] / [tool.ruff] say."""
    tools = config.tools
    if "black" in tools:
        return {"formatter": "black", "line-length": int(tools["black"].get("line-length", 88))}
    if "ruff" in tools:
        return {"formatter": "ruff", "line-length": int(tools["ruff"].get("line-length", 88))}
    return {}


def _messages(
    module: Module, matching: Matching, protocol: Any, derived: Derived, prefix: str
) -> list[tuple[str, str, Any]]:
    """(label, public name, data): the fixed corpus, then instances drawn from the base."""
    import json

    sdk_of = reverse(matching.classes)
    out = []
    for i, (name, text) in enumerate(fixed(protocol.version)):
        if name in sdk_of:
            out.append((f"corpus:{i}:{name}", sdk_of[name], json.loads(text)))
    defs = protocol.schema["$defs"]
    for i, (name, data) in enumerate(drawn(defs, sorted(n for n in sdk_of if n in defs))):
        out.append((f"drawn:{i}:{sdk_of[name]}", sdk_of[name], data))
    return out


def _generate(config: Config) -> Generation:
    with schema_location(config.fragments) as schema_dir:
        return generate(
            schema_dir, frozenset(config.features), config.root, config.bases, **generation_arguments(config)
        )


def _report(plan: Plan, missing: dict[str, str]) -> str:
    m, module = plan.matching, plan.module
    total = len(module.names)
    lines = [f"adopt {module.dotted}: {total - len(missing)} of {total} public names reproduced", *plan.features]
    renamed = len(plan.derived.chosen)
    lines.append(
        f"  matched: {len(m.classes)} classes ({renamed} renamed), {len(m.types)} unions, aliases and enums,"
        f" {len(m.commons)} common classes, {len(m.unions)} unions of classes, {len(m.enums)} enums,"
        f" {len(m.second)} second names"
    )
    for name, found in sorted(m.classes.items()):
        if found.gained:
            lines.append(f"  {name} gains {', '.join(found.gained)} ({found.generated})")
        if found.others:
            more = len(found.others) - 3
            others = ", ".join(found.others[:3]) + (f" and {more} more" if more > 0 else "")
            lines.append(f"  {name}: {found.generated} of several alike ({others}), by name")
    for note in plan.derived.notes:
        lines.append(f"  {note}")
    if plan.carried.carried:
        lines.append(f"moved to {display_name(plan.ext_path, Path.cwd())}:")
        lines += [f"  {c.owner}.{c.name}" for c in plan.carried.carried]
    reasons = Counter(c.why for c in plan.carried.left_out)
    for why, count in sorted(reasons.items()):
        members = [f"{c.owner}.{c.name}" for c in plan.carried.left_out if c.why == why]
        lines.append(f"left out, {count}: {why}: {', '.join(members[:8])}{', ...' if count > 8 else ''}")
    lines += [f"  problem: {p}" for p in plan.carried.problems]
    if not m.missing:
        lines.append(f"verified: {plan.verdict.names} names, {plan.verdict.messages} messages")
    lines += plan.wiring.report()
    lines += plan.regeneration.report()
    if missing and plan.wiring.texts:
        lines.append("  (the wiring is not written while names are not reproduced)")
    if missing:
        lines.append("not reproduced:")
        lines += [f"  {name}: {why}" for name, why in sorted(missing.items())]
    return "\n".join(lines)
