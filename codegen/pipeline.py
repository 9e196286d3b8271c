"""The whole pipeline in one call: schema directory in, ``{relative path: source}`` out.

Nothing is written here (see ``write``), so a failure at any stage leaves the previous
output untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .code_text import Code
from .conversions import CONVERSIONS_FILE
from .conversions import plan as plan_conversions
from .dispatch import routes as dispatch_routes
from .errors import SchemaError, fail
from .features import select
from .formatting import DEFAULT_STYLE, Style, forks_workers, format_modules, in_background, paused_gc
from .hoist import NO_CLASS_NAMES, VARIANT_RULES, ClassNames
from .ir import Protocol, build
from .load import Source, VersionSources, display_name, find_version_dirs, load_version, read_json
from .options import DEFAULT_OPTIONS, ModelOptions, check_options
from .overlay import feature_types, load_base, overlay
from .render import MODELS_TEMPLATES, Inputs, environment, render_models, render_runtime, render_template
from .schema_terms import KNOWN_SIDES, SIDES
from .validate import not_understood, validate_version
from .write import read_stamps, read_tree, stamp

# Per-version modules rendered from Jinja templates: (template, output file name).
VERSION_TEMPLATES = (
    ("methods.py.jinja", "methods.py"),
    ("dispatch.py.jinja", "dispatch.py"),
    ("version_init.py.jinja", "__init__.py"),
)
# Package-level modules: (template, output path).
PACKAGE_TEMPLATES = (
    ("shared.py.jinja", "_shared.py"),
    ("package_init.py.jinja", "__init__.py"),
    ("convert.py.jinja", "convert.py"),  # only with schema/conversions.json
)
CONVERT_TEMPLATE = "convert.py.jinja"
CONVERT_PATH = "convert.py"
# Package-level modules copied from codegen/runtime/ as they are (the last one only with
# convert.py, which imports it).
RUNTIME_FILES = ("_runtime.py", "_router.py", "_convert_runtime.py")
CONVERT_RUNTIME = "_convert_runtime.py"


@dataclass(frozen=True)
class Generation:
    protocols: tuple[Protocol, ...]
    sources: tuple[VersionSources, ...]
    files: dict[str, str]

    def notes(self) -> list[str]:
        """Lines for the summary: upstream vocabulary carried through without being
        understood, and fragment context that differs from a base (the base wins)."""
        unknown = [
            f"v{p.version}: " + ", ".join(found)
            for p, s in zip(self.protocols, self.sources, strict=True)
            if (found := [f for src in s.schemas for f in not_understood(src)])
        ]
        lines = ["not understood, carried through: " + "; ".join(unknown)] if unknown else []
        return lines + [f"note: {n}" for s in self.sources for n in s.notes]


def load_sources(
    schema_dir: Path, root: Path | None, bases: Mapping[int, Path] | None, *, validate: bool
) -> tuple[VersionSources, ...]:
    """Every version directory's inputs, laid over its base where ``bases`` names one."""
    sources = []
    bases = dict(bases or {})
    dirs = find_version_dirs(schema_dir, root)
    unmatched = sorted(set(bases) - {int(d.name[1:]) for d in dirs})
    if unmatched:
        raise fail(display_name(bases[unmatched[0]], root), "", f"base for v{unmatched[0]}, which has no fragments")
    for directory in dirs:
        version = int(directory.name[1:])
        version_sources = load_version(directory, root)
        if validate:
            validate_version(version_sources, version)
        if version in bases:
            version_sources = overlay(load_base(bases[version], version, root), version_sources)
        sources.append(version_sources)
    return tuple(sources)


def load_protocols(
    schema_dir: Path,
    features: frozenset[str],
    root: Path | None = None,
    bases: Mapping[int, Path] | None = None,
    class_names: ClassNames = NO_CLASS_NAMES,
    options: ModelOptions = DEFAULT_OPTIONS,
) -> tuple[tuple[Protocol, ...], tuple[VersionSources, ...]]:
    """Load, validate, select features and build the IR of every version directory;
    where ``bases`` names an upstream schema for a version, overlay the fragments on it."""
    sources = load_sources(schema_dir, root, bases, validate=True)
    declared = {f for s in sources for f in s.meta.data.get("features", {})}
    unknown = sorted(features - declared)
    if unknown:
        raise fail(
            display_name(schema_dir, root),
            "",
            f"unknown feature {unknown[0]!r}; declared: {', '.join(sorted(declared)) or 'none'}",
        )
    protocols = tuple(build(select(s, features), class_names, options.field_names) for s in sources)

    # Every version with every feature: a chosen name that only a left-out feature has is
    # fine (the same settings serve generations with fewer features). Built once, if asked.
    @functools.cache
    def complete() -> tuple[Protocol, ...]:
        return tuple(
            build(select(s, frozenset(s.meta.data.get("features", {}))), class_names, options.field_names)
            for s in sources
        )

    _check_class_names(class_names, protocols, complete)
    if options != DEFAULT_OPTIONS:
        check_options(options, protocols, complete)
    return protocols, sources


def _generated_names(protocols: Iterable[Protocol]) -> set[str]:
    return {p.chosen_names.get(n, n) for p in protocols for n in p.types}


def _labels(protocols: Iterable[Protocol]) -> dict[str, set[str]]:
    """The label of each union variant (see ``hoist.Derived``) -> the name it has in the
    versions where no other variant has that label (where hoisting once named it bare)."""
    out: dict[str, set[str]] = {}
    for p in protocols:
        named: dict[str, list[str]] = {}
        for name, derived in p.derived_names.items():
            if derived.rule in VARIANT_RULES:
                named.setdefault(derived.label, []).append(p.chosen_names.get(name, name))
        for label, names in named.items():
            out.setdefault(label, set()).update(names if len(names) == 1 else ())
    return out


def _check_class_names(
    names: ClassNames, protocols: tuple[Protocol, ...], complete: Callable[[], tuple[Protocol, ...]]
) -> None:
    """Every chosen name must name a class of some version, with every feature."""
    if not names.unknown(_generated_names(protocols)):
        return
    every = complete()
    problems = names.unknown(_generated_names(every), _labels(every))
    if problems:
        raise SchemaError(problems)


def _files(sources: VersionSources) -> tuple[tuple[str, str], ...]:
    return tuple((s.name, s.sha256) for s in (*sources.schemas, sources.meta, *sources.extra_inputs))


MODELS = "models.py"
# A version's models are made in a worker process from this many types: starting one
# (forked) costs about as much as rendering and laying out three.
BACKGROUND_TYPES = 10


def read_declarations(schema_dir: Path, root: Path | None, conversions: bool) -> Source | None:
    """The conversions file, read once per run (None: absent, or conversions off)."""
    path = schema_dir / CONVERSIONS_FILE
    return read_json(path, root) if conversions and path.is_file() else None


def plan(
    sources: tuple[VersionSources, ...],
    features: frozenset[str],
    declarations: Source | None,
    *,
    style: Style = DEFAULT_STYLE,
    class_names: ClassNames = NO_CLASS_NAMES,
    options: ModelOptions = DEFAULT_OPTIONS,
) -> dict[str, Inputs]:
    """Every output file and what it depends on; cheap, as it renders nothing."""
    enabled = tuple(sorted(features))
    chosen = tuple(sorted(class_names.chosen.items()))
    source = class_names.source if chosen else ""
    out: dict[str, Inputs] = {}
    for version_sources in sources:
        prefix = f"v{version_sources.meta.data['version']}/"
        out[prefix + MODELS] = Inputs(
            _files(version_sources), MODELS_TEMPLATES, enabled, style, chosen, source, options=options
        )
        for template, name in VERSION_TEMPLATES:
            out[prefix + name] = Inputs(
                _files(version_sources), (template,), enabled, style, chosen, source, options=options
            )
    all_inputs = tuple(f for s in sources for f in _files(s))
    for template, path in PACKAGE_TEMPLATES:
        extra: tuple[tuple[str, str], ...] = ()
        if template == CONVERT_TEMPLATE:
            if declarations is None:
                continue
            extra = ((declarations.name, declarations.sha256),)
        out[path] = Inputs(all_inputs + extra, (template,), enabled, style, chosen, source, options=options)
    # A runtime file is copied as it is: of the settings, only the command its header names counts.
    copied = ModelOptions(regenerate=options.regenerate)
    for name in RUNTIME_FILES:
        if name != CONVERT_RUNTIME or CONVERT_PATH in out:
            out[name] = Inputs((), (), enabled, style, runtime=(name,), options=copied)
    return dict(sorted(out.items()))


def _feature_types(sources: tuple[VersionSources, ...], class_names: ClassNames) -> dict[int, set[str]] | None:
    """Over bases, per version, the fragment types conversions start from (None: no base),
    under the class names chosen for them; from the fragments as loaded (not read again)."""
    if not any(s.overlaid for s in sources):
        return None
    return {
        int(s.meta.data["version"]): {class_names.chosen.get(t, t) for t in feature_types(s.fragments or s)}
        for s in sources
    }


def _render_templates(
    protocols: tuple[Protocol, ...],
    sources: tuple[VersionSources, ...],
    manifest: Mapping[str, Inputs],
    declarations: Source | None,
    features: frozenset[str],
    class_names: ClassNames,
) -> dict[str, str]:
    """Every module a Jinja template makes, unformatted."""
    env = environment()
    texts: dict[str, str] = {}
    for protocol in protocols:
        prefix = f"v{protocol.version}/"
        # Plans are made here, once; templates only print them.
        routes = dispatch_routes(protocol)
        for template, name in VERSION_TEMPLATES:
            texts[prefix + name] = render_template(
                env, template, manifest[prefix + name], protocol=protocol, routes=routes
            )
    convert_plan = (
        plan_conversions(protocols, sources, declarations, _feature_types(sources, class_names), class_names)
        if CONVERT_PATH in manifest
        else None
    )
    enabled = [Code(repr(f)) for f in sorted(features)]
    # MethodSpec.side: the known sides, then any a base brought that this tool does not know.
    extra_sides = sorted({m.side for p in protocols for m in p.methods} - set(KNOWN_SIDES))
    sides = [*SIDES.values(), *extra_sides]
    for template, path in PACKAGE_TEMPLATES:
        if path in manifest:
            texts[path] = render_template(
                env, template, manifest[path], protocols=protocols, features=enabled, plan=convert_plan, sides=sides
            )
    return texts


def _rendered_and_laid_out(name: str, render: functools.partial[str], style: Style) -> str:
    """One module rendered and laid out (in a worker process, see generate)."""
    return format_modules({name: render()}, style)[name]


@paused_gc()  # the run's garbage is collected after it, see paused_gc
def generate(
    schema_dir: Path,
    features: frozenset[str],
    root: Path | None = None,
    bases: Mapping[int, Path] | None = None,
    *,
    conversions: bool = True,
    style: Style = DEFAULT_STYLE,
    class_names: ClassNames = NO_CLASS_NAMES,
    options: ModelOptions = DEFAULT_OPTIONS,
) -> Generation:
    protocols, sources = load_protocols(schema_dir, features, root, bases, class_names, options)
    declarations = read_declarations(schema_dir, root, conversions)
    manifest = plan(sources, features, declarations, style=style, class_names=class_names, options=options)
    models = {
        f"v{p.version}/{MODELS}": functools.partial(render_models, p, manifest[f"v{p.version}/{MODELS}"])
        for p in protocols
    }
    # datamodel-code-generator and black do most of a run's work: where worker processes
    # fork, the models of every version after the first are rendered and laid out in one
    # while this process does the rest.
    later = {
        name: functools.partial(_rendered_and_laid_out, name, models[name], style)
        for name, p in zip(models, protocols, strict=True)
        if p is not protocols[0] and len(p.types) >= BACKGROUND_TYPES and forks_workers()
    }
    with in_background(later) as done:
        texts = {name: render() for name, render in models.items() if name not in later}
        texts |= _render_templates(protocols, sources, manifest, declarations, features, class_names)
        # The runtime modules' sources are kept in the default style's layout: only another
        # style lays them out (with the rest, in the same pass).
        laid_out: dict[str, str] = {}
        for name in RUNTIME_FILES:
            if name in manifest:
                (laid_out if style == DEFAULT_STYLE else texts)[name] = render_runtime(name, manifest[name])
        laid_out |= format_modules(texts, style)
        laid_out |= {name: done(name) for name in later}
    files = {path: stamp(text) for path, text in laid_out.items()}
    return Generation(protocols, sources, dict(sorted(files.items())))


def up_to_date(
    schema_dir: Path,
    out: Path,
    features: frozenset[str],
    root: Path | None = None,
    bases: Mapping[int, Path] | None = None,
    *,
    conversions: bool = True,
    style: Style = DEFAULT_STYLE,
    class_names: ClassNames = NO_CLASS_NAMES,
    options: ModelOptions = DEFAULT_OPTIONS,
) -> bool:
    """True when every file under ``out`` records today's inputs and is unedited.

    Reads and hashes the inputs without validating or rendering them, so ``check`` on an
    unchanged tree costs a fraction of ``generate``. A False answer proves nothing:
    the caller then renders and compares contents (headers aside) to find out, and to
    show, what differs.
    """
    try:
        sources = load_sources(schema_dir, root, bases, validate=False)
        declarations = read_declarations(schema_dir, root, conversions)
        manifest = plan(sources, features, declarations, style=style, class_names=class_names, options=options)
    except Exception:  # unreadable or invalid input: the full run that follows reports it
        return False
    on_disk = read_tree(out)
    if sorted(on_disk) != sorted(manifest):
        return False
    for rel, inputs in manifest.items():
        recorded, intact = read_stamps(on_disk[rel])
        if not intact or recorded != inputs.digest():
            return False
    return True
