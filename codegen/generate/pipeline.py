"""The whole pipeline in one call: schema directory in, ``{relative path: source}`` out.

The stages in the order ``generate`` calls them: ``protocol`` (the one loader: load,
validate, overlay, features, names, IR), ``config`` (the settings checked against the IR),
``plan`` (conversions, dispatch routes), ``render`` (models, templates, runtime modules,
then the layout), ``write`` (headers stamped). Nothing is written here (see
``generate.command``), so a failure at any stage leaves the previous output untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..code_text import Code
from ..config.checks import check_class_names, check_settings
from ..config.settings import DEFAULT_OPTIONS, DEFAULT_SETTINGS, ModelOptions, Settings
from ..errors import Problem, SchemaError, pointer
from ..plan.bridge import BridgePlan, bridge_plan
from ..plan.conversions import CONVERSIONS_FILE, UPSTREAM_DECLARATIONS, ConversionPlan
from ..plan.conversions import plan as plan_conversions
from ..plan.dispatch import routes as dispatch_routes
from ..protocol.class_names import ClassNames
from ..protocol.ir import Protocol
from ..protocol.load import Source, VersionSources, find_version_dirs, read_json
from ..protocol.overlay import feature_types
from ..protocol.sources import build_protocols, declared, enabled, load_sources
from ..protocol.validate import not_understood
from ..render.formatting import format_modules
from ..render.models import MODELS_TEMPLATES, render_models
from ..render.runtime import render_runtime
from ..render.templates import environment, render_template
from ..render.workers import forks_workers, in_background, paused_gc
from ..resources import BUILTIN_FRAGMENTS, schema_location
from ..schema_terms import KNOWN_SIDES, SIDES
from ..style import DEFAULT_STYLE, Style
from ..write.headers import Inputs, read_stamps, stamp
from ..write.tree import read_tree

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
    ("bridge.py.jinja", "bridge.py"),  # only where the bridge plan serves it
)
CONVERT_TEMPLATE = "convert.py.jinja"
CONVERT_PATH = "convert.py"
BRIDGE_TEMPLATE = "bridge.py.jinja"
# Package-level modules copied out of codegen/runtime/ as they are (the conversions' only
# with convert.py, which imports them; the bridge's only with bridge.py).
RUNTIME_FILES = (
    "_runtime.py",
    "_router.py",
    "_convert_rules.py",
    "_convert_runtime.py",
    "_bridge_sessions.py",
    "_bridge_core.py",
    "_bridge_agent.py",
    "_bridge.py",
    "_bridge_asyncio.py",
)
CONVERT_RUNTIME = ("_convert_rules.py", "_convert_runtime.py")  # only where convert.py is
# Listed by ``plan`` wherever convert.py is; ``generate`` leaves them out where the bridge
# plan does not serve the bridge (a function of the same inputs: ``up_to_date`` takes the
# files present or absent together).
BRIDGE_FILES = (
    "bridge.py",
    "_bridge_sessions.py",
    "_bridge_core.py",
    "_bridge_agent.py",
    "_bridge.py",
    "_bridge_asyncio.py",  # its asyncio host, which an SDK's agent connection runs (sdk/wire.py)
)


@dataclass(frozen=True)
class Generation:
    protocols: tuple[Protocol, ...]
    sources: tuple[VersionSources, ...]
    files: dict[str, str]
    bridge: BridgePlan  # whether the package got the version bridge: what it serves, or why not

    def features_off(self, enabled: frozenset[str], again: str = "") -> str | None:
        """One line where a feature the fragments declare is off, naming the settings that turn
        it on (off is the default, which should never go unsaid): the table's ``features``, and
        ``generate``'s option or, where ``again`` names another command, that command run again."""
        off = sorted(declared(self.sources) - enabled)
        if not off:
            return None
        listed = ", ".join(off)
        toml = ", ".join(f'"{name}"' for name in off)
        then = f"then run {again} again" if again else "or " + " ".join(f"--feature {name}" for name in off)
        return (
            f"off: {listed} (nothing it adds is generated); turn it on with features = [{toml}]"
            f" in [tool.acp-codegen] of pyproject.toml, {then}"
        )

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


def one_base_versions(schema_dir: Path, root: Path | None, bases: Mapping[int, Path]) -> frozenset[int] | None:
    """The versions a run generates where ``versions`` names none: every one; over upstream
    bases for some of the fragments' versions only, those (upstream's v1 and the fragments'
    own v2 are not one protocol's two versions: they do not convert)."""
    every = {int(d.name[1:]) for d in find_version_dirs(schema_dir, root)}
    if bases and set(bases) < every:
        return frozenset(bases)
    return None


def load_protocols(
    schema_dir: Path,
    features: frozenset[str],
    root: Path | None = None,
    bases: Mapping[int, Path] | None = None,
    settings: Settings = DEFAULT_SETTINGS,
    versions: frozenset[int] | None = None,
) -> tuple[tuple[Protocol, ...], tuple[VersionSources, ...]]:
    """Every version's IR (of ``versions`` only, where given) through the one loader
    (``protocol.sources``), each version built under its own settings
    (``settings.of(version)``), and the settings checked against it."""

    def names(version: int) -> tuple[ClassNames, Mapping[str, str]]:
        of = settings.of(version)
        return of.class_names, of.options.field_names

    every = [int(d.name[1:]) for d in find_version_dirs(schema_dir, root)]
    for key, asked in (("versions", sorted(versions or ())), *((f"v{v}", [v]) for v in sorted(settings.versions))):
        unmatched = [v for v in asked if v not in every]
        if unmatched:
            message = f"there is no protocol version {unmatched[0]} (versions: {', '.join(map(str, every))})"
            raise SchemaError(Problem(settings.options.origin, pointer("tool", "acp-codegen", key), message))
    left_out = sorted(set(bases or ()) - versions) if versions else []
    if left_out:
        message = f"base-v{left_out[0]} is set, but versions leaves v{left_out[0]} out"
        raise SchemaError(Problem(settings.options.origin, pointer("tool", "acp-codegen", "versions"), message))
    descriptions = settings.options.base_descriptions
    sources = load_sources(
        schema_dir, root, bases, features=features, versions=versions, base_descriptions=descriptions
    )
    enabled(sources, features, schema_dir, root)
    protocols = build_protocols(sources, features, names)

    # Every version with every feature: a chosen name that only a left-out feature has is
    # fine (the same settings serve generations with fewer features). Built once, if asked.
    @functools.cache
    def complete() -> tuple[Protocol, ...]:
        return tuple(p for s in sources for p in build_protocols((s,), declared((s,)), names))

    check_class_names(settings, protocols, complete)
    if any(settings.of(p.version).options != DEFAULT_OPTIONS for p in protocols):
        check_settings(settings, protocols, complete)
    # enums: a name no type of the version has, with every feature, is an Enum class of its own
    if any(settings.of(p.version).options.enums for p in protocols):
        types = {p.version: frozenset(p.types) for p in complete()}
        protocols = tuple(replace(p, every_type=types[p.version]) for p in protocols)
    return protocols, sources


def _files(sources: VersionSources) -> tuple[tuple[str, str], ...]:
    return tuple((s.name, s.sha256) for s in (*sources.schemas, sources.meta, *sources.extra_inputs))


MODELS = "models.py"
# A version's models are made in a worker process from this many types: starting one
# (forked) costs about as much as rendering and laying out three.
BACKGROUND_TYPES = 10


def read_declarations(
    schema_dir: Path, root: Path | None, conversions: bool, over_bases: bool = False, extra: Sequence[Path] = ()
) -> tuple[Source, ...]:
    """The declared differences, read once per run (none: no conversions file, or conversions
    off): the fragments' conversions file; over upstream bases, then the declarations of
    upstream's releases that ship with the tool, and the user's own files (``extra``), each
    overriding what the files before it say about the same thing."""
    path = schema_dir / CONVERSIONS_FILE
    if not (conversions and path.is_file()):
        return ()
    found = [read_json(path, root)]
    if over_bases:
        with schema_location(BUILTIN_FRAGMENTS) as builtin:
            found.append(read_json(builtin / UPSTREAM_DECLARATIONS, root))
        found += [read_json(p, root) for p in extra]
    return tuple(found)


def plan(
    sources: tuple[VersionSources, ...],
    features: frozenset[str],
    declarations: tuple[Source, ...],
    *,
    style: Style = DEFAULT_STYLE,
    settings: Settings = DEFAULT_SETTINGS,
) -> dict[str, Inputs]:
    """Every output file and what it depends on; cheap, as it renders nothing. A version's
    files record that version's settings; the package's files those of every version."""
    enabled = tuple(sorted(features))
    out: dict[str, Inputs] = {}
    by_version = {int(s.meta.data["version"]): s for s in sources}
    for version, version_sources in by_version.items():
        of = settings.of(version)
        for templates, name in ((MODELS_TEMPLATES, MODELS), *(((t,), n) for t, n in VERSION_TEMPLATES)):
            out[f"v{version}/{name}"] = Inputs(
                _files(version_sources), templates, enabled, style, *_chosen(of), options=of.options
            )
    # A runtime file is copied as it is: of the settings, only the command its header names counts.
    copied = ModelOptions(regenerate=settings.options.regenerate)
    # Where every version has the same settings, the package's files record them once.
    first = settings.of(min(by_version, default=0))
    alike = all(
        (of.class_names.chosen, of.options) == (first.class_names.chosen, first.options)
        for of in map(settings.of, by_version)
    )
    per_version = () if alike else tuple((v, settings.of(v)) for v in sorted(by_version))
    all_inputs = tuple(f for s in sources for f in _files(s))
    for template, path in PACKAGE_TEMPLATES:
        extra: tuple[tuple[str, str], ...] = ()
        if template in (CONVERT_TEMPLATE, BRIDGE_TEMPLATE):
            if not declarations or len(by_version) < 2:  # one version: nothing to convert to
                continue
            extra = tuple((d.name, d.sha256) for d in declarations)
        if alike:
            out[path] = Inputs(all_inputs + extra, (template,), enabled, style, *_chosen(first), options=first.options)
        else:
            out[path] = Inputs(all_inputs + extra, (template,), enabled, style, options=copied, versions=per_version)
    for name in RUNTIME_FILES:
        if name not in (*CONVERT_RUNTIME, *BRIDGE_FILES) or CONVERT_PATH in out:
            out[name] = Inputs((), (), enabled, style, runtime=(name,), options=copied)
    return dict(sorted(out.items()))


def _chosen(of: Settings) -> tuple[tuple[tuple[str, str], ...], str]:
    """A version's chosen class names as headers record them, and where they were chosen."""
    chosen = tuple(sorted(of.class_names.chosen.items()))
    return chosen, of.class_names.source if chosen else ""


def _feature_types(sources: tuple[VersionSources, ...], settings: Settings) -> dict[int, set[str]] | None:
    """Over bases, per version, the fragment types conversions start from (None: no base),
    under the class names chosen for them; from the fragments as loaded (not read again)."""
    if not any(s.overlaid for s in sources):
        return None
    out = {}
    for s in sources:
        version = int(s.meta.data["version"])
        chosen = settings.of(version).class_names.chosen
        out[version] = {chosen.get(t, t) for t in feature_types(s.fragments or s)}
    return out


def conversion_plan(
    protocols: tuple[Protocol, ...],
    sources: tuple[VersionSources, ...],
    declarations: tuple[Source, ...],
    settings: Settings,
) -> ConversionPlan | None:
    """The v1 <-> v2 converters, or the declarations' problems (SchemaError)."""
    return plan_conversions(
        protocols,
        sources,
        declarations[0] if declarations else None,
        _feature_types(sources, settings),
        {p.version: settings.of(p.version).class_names for p in protocols},
        more=declarations[1:],
    )


def _render_templates(
    protocols: tuple[Protocol, ...],
    sources: tuple[VersionSources, ...],
    manifest: Mapping[str, Inputs],
    convert_plan: ConversionPlan | None,
    bridge: BridgePlan,
    features: frozenset[str],
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
                env, template, manifest[prefix + name].header(), protocol=protocol, routes=routes
            )
    enabled = [Code(repr(f)) for f in sorted(features)]
    # MethodSpec.side: the known sides, then any a base brought that this tool does not know.
    extra_sides = sorted({m.side for p in protocols for m in p.methods} - set(KNOWN_SIDES))
    sides = [*SIDES.values(), *extra_sides]
    for template, path in PACKAGE_TEMPLATES:
        if path in manifest:
            texts[path] = render_template(
                env,
                template,
                manifest[path].header(),
                protocols=protocols,
                features=enabled,
                plan=convert_plan,
                bridge=bridge,
                sides=sides,
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
    declarations: Sequence[Path] = (),
    style: Style = DEFAULT_STYLE,
    settings: Settings = DEFAULT_SETTINGS,
    versions: frozenset[int] | None = None,
) -> Generation:
    """Every output file of the fragments in ``schema_dir`` (over ``bases``; of ``versions``
    only, where given), with the ``features`` enabled, under the model ``settings`` (see
    ``config.settings.Settings``)."""
    protocols, sources = load_protocols(schema_dir, features, root, bases, settings, versions)
    declared = read_declarations(schema_dir, root, conversions, bool(bases), declarations)
    manifest = plan(sources, features, declared, style=style, settings=settings)
    # Planned before anything is rendered: a conversions file that does not hold fails fast.
    convert_plan = conversion_plan(protocols, sources, declared, settings) if CONVERT_PATH in manifest else None
    bridge = bridge_plan(protocols, convert_plan)
    if not bridge.served:
        manifest = {path: inputs for path, inputs in manifest.items() if path not in BRIDGE_FILES}
    models = {
        f"v{p.version}/{MODELS}": functools.partial(
            render_models, p, manifest[f"v{p.version}/{MODELS}"].options, manifest[f"v{p.version}/{MODELS}"].header()
        )
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
        texts |= _render_templates(protocols, sources, manifest, convert_plan, bridge, features)
        # The runtime modules' sources are kept in the default style's layout: only another
        # style lays them out (with the rest, in the same pass).
        laid_out: dict[str, str] = {}
        for name in RUNTIME_FILES:
            if name in manifest:
                (laid_out if style == DEFAULT_STYLE else texts)[name] = render_runtime(name, manifest[name].header())
        laid_out |= format_modules(texts, style)
        laid_out |= {name: done(name) for name in later}
    files = {path: stamp(text) for path, text in laid_out.items()}
    return Generation(protocols, sources, dict(sorted(files.items())), bridge)


def up_to_date(
    schema_dir: Path,
    out: Path,
    features: frozenset[str],
    root: Path | None = None,
    bases: Mapping[int, Path] | None = None,
    *,
    conversions: bool = True,
    declarations: Sequence[Path] = (),
    style: Style = DEFAULT_STYLE,
    settings: Settings = DEFAULT_SETTINGS,
    versions: frozenset[int] | None = None,
) -> bool:
    """True when every file under ``out`` records today's inputs and is unedited.

    Reads and hashes the inputs without validating or rendering them, so ``check`` on an
    unchanged tree costs a fraction of ``generate``. A False answer proves nothing:
    the caller then renders and compares contents (headers aside) to find out, and to
    show, what differs.
    """
    try:
        sources = load_sources(schema_dir, root, bases, validate=False, features=features, versions=versions)
        declared = read_declarations(schema_dir, root, conversions, bool(bases), declarations)
        manifest = plan(sources, features, declared, style=style, settings=settings)
    except Exception:  # unreadable or invalid input: the full run that follows reports it
        return False
    on_disk = read_tree(out)
    if not any(path in on_disk for path in BRIDGE_FILES):
        manifest = {path: inputs for path, inputs in manifest.items() if path not in BRIDGE_FILES}
    if sorted(on_disk) != sorted(manifest):
        return False
    for rel, inputs in manifest.items():
        recorded, intact = read_stamps(on_disk[rel])
        if not intact or recorded != inputs.digest():
            return False
    return True
