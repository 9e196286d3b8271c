"""The whole pipeline in one call: schema directory in, ``{relative path: source}`` out.

Nothing is written here (see ``write``), so a failure at any stage leaves the previous
output untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import SchemaError, fail
from .features import select
from .ir import Protocol, build
from .load import VersionSources, display_name, find_version_dirs, load_version
from .render import MODELS_TEMPLATES, Code, Inputs, environment, read_stamps, render_models, render_template
from .validate import validate_version
from .write import read_tree

# Per-version modules rendered from Jinja templates: (template, output file name).
VERSION_TEMPLATES = (
    ("methods.py.jinja", "methods.py"),
    ("dispatch.py.jinja", "dispatch.py"),
    ("version_init.py.jinja", "__init__.py"),
)
# Package-level modules: (template, output path).
PACKAGE_TEMPLATES = (
    ("shared.py.jinja", "_shared.py"),
    ("router.py.jinja", "_router.py"),
    ("package_init.py.jinja", "__init__.py"),
)


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


MODELS = "models.py"


def plan(sources: tuple[VersionSources, ...], features: frozenset[str]) -> dict[str, Inputs]:
    """Every output file and what it depends on; cheap, as it renders nothing."""
    enabled = tuple(sorted(features))
    out: dict[str, Inputs] = {}
    for version_sources in sources:
        prefix = f"v{version_sources.meta.data['version']}/"
        out[prefix + MODELS] = Inputs(_files(version_sources), MODELS_TEMPLATES, enabled)
        for template, name in VERSION_TEMPLATES:
            out[prefix + name] = Inputs(_files(version_sources), (template,), enabled)
    all_inputs = tuple(f for s in sources for f in _files(s))
    for template, path in PACKAGE_TEMPLATES:
        out[path] = Inputs(all_inputs, (template,), enabled)
    return dict(sorted(out.items()))


def generate(schema_dir: Path, features: frozenset[str], root: Path | None = None) -> Generation:
    protocols, sources = load_protocols(schema_dir, features, root)
    env = environment()
    manifest = plan(sources, features)
    files: dict[str, str] = {}
    for protocol in protocols:
        prefix = f"v{protocol.version}/"
        files[prefix + MODELS] = render_models(protocol, manifest[prefix + MODELS])
        for template, name in VERSION_TEMPLATES:
            files[prefix + name] = render_template(env, template, manifest[prefix + name], protocol=protocol)
    enabled = tuple(sorted(features))
    for template, path in PACKAGE_TEMPLATES:
        files[path] = render_template(
            env, template, manifest[path], protocols=protocols, features=[Code(repr(f)) for f in enabled]
        )
    return Generation(protocols, sources, dict(sorted(files.items())))


def up_to_date(schema_dir: Path, out: Path, features: frozenset[str], root: Path | None = None) -> bool:
    """True when every file under ``out`` records today's inputs and is unedited.

    Reads and hashes the inputs without validating or rendering them, so ``check`` on an
    unchanged tree costs a fraction of ``generate``. A False answer proves nothing:
    the caller then renders and diffs to find out (and to show) what differs.
    """
    try:
        sources = tuple(load_version(d, root) for d in find_version_dirs(schema_dir, root))
        manifest = plan(sources, features)
    except (SchemaError, KeyError, TypeError):
        return False
    on_disk = read_tree(out)
    if sorted(on_disk) != sorted(manifest):
        return False
    for rel, inputs in manifest.items():
        recorded, intact = read_stamps(on_disk[rel])
        if not intact or recorded != inputs.digest():
            return False
    return True
