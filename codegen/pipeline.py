"""The whole pipeline in one call: schema directory in, ``{relative path: source}`` out.

Nothing is written here (see ``write``), so a failure at any stage leaves the previous
output untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .conversions import plan as plan_conversions
from .errors import fail
from .features import select
from .ir import Protocol, build
from .load import VersionSources, display_name, find_version_dirs, load_version
from .render import MODELS_TEMPLATES, Code, Inputs, environment, render_models, render_template
from .validate import validate_version

# Per-version modules rendered from Jinja templates: (template, output file name).
VERSION_TEMPLATES = (
    ("methods.py.jinja", "methods.py"),
    ("version_init.py.jinja", "__init__.py"),
)
# Package-level modules: (template, output path).
PACKAGE_TEMPLATES = (
    ("shared.py.jinja", "_shared.py"),
    ("package_init.py.jinja", "__init__.py"),
    ("convert.py.jinja", "convert.py"),  # only with schema/conversions.json
)
CONVERT_TEMPLATE = "convert.py.jinja"


@dataclass(frozen=True)
class Generation:
    protocols: tuple[Protocol, ...]
    sources: tuple[VersionSources, ...]
    files: dict[str, str]


def load_protocols(
    schema_dir: Path, features: frozenset[str], root: Path | None = None
) -> tuple[tuple[Protocol, ...], tuple[VersionSources, ...]]:
    """Load, validate, select features and build the IR of every version directory."""
    sources = []
    for directory in find_version_dirs(schema_dir, root):
        version_sources = load_version(directory, root)
        validate_version(version_sources, int(directory.name[1:]))
        sources.append(version_sources)
    declared = {f for s in sources for f in s.meta.data.get("features", {})}
    unknown = sorted(features - declared)
    if unknown:
        raise fail(
            display_name(schema_dir, root),
            "",
            f"unknown feature {unknown[0]!r}; declared: {', '.join(sorted(declared)) or 'none'}",
        )
    protocols = tuple(build(select(s, features)) for s in sources)
    return protocols, tuple(sources)


def _files(sources: VersionSources) -> tuple[tuple[str, str], ...]:
    return tuple((s.name, s.sha256) for s in (*sources.schemas, sources.meta))


def generate(schema_dir: Path, features: frozenset[str], root: Path | None = None) -> Generation:
    protocols, sources = load_protocols(schema_dir, features, root)
    env = environment()
    files: dict[str, str] = {}
    all_inputs = tuple(f for s in sources for f in _files(s))
    enabled = tuple(sorted(features))
    for protocol, version_sources in zip(protocols, sources, strict=True):
        prefix = f"v{protocol.version}/"
        files[prefix + "models.py"] = render_models(
            protocol, Inputs(_files(version_sources), MODELS_TEMPLATES, enabled)
        )
        for template, name in VERSION_TEMPLATES:
            inputs = Inputs(_files(version_sources), (template,), enabled)
            files[prefix + name] = render_template(env, template, inputs, protocol=protocol)
    conversions = plan_conversions(protocols, sources, schema_dir, root)
    for template, path in PACKAGE_TEMPLATES:
        extra: tuple[tuple[str, str], ...] = ()
        if template == CONVERT_TEMPLATE:
            if conversions is None:
                continue
            extra = ((conversions.source.name, conversions.source.sha256),)
        inputs = Inputs(all_inputs + extra, (template,), enabled)
        files[path] = render_template(
            env, template, inputs, protocols=protocols, features=[Code(repr(f)) for f in enabled], plan=conversions
        )
    return Generation(protocols, sources, dict(sorted(files.items())))
