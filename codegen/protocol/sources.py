"""The one loader that ``generate``, ``diff`` and ``adopt`` use: every version directory's
fragments read, validated (an upstream release's unmarked method types found first), laid
over a base where one is named, the enabled features checked against those declared, and
each version built into the IR."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ..errors import Problem, SchemaError, did_you_mean, fail
from ..resources import display_name
from .class_names import NO_CLASS_NAMES, ClassNames
from .features import select
from .ir import Protocol, build
from .load import VersionSources, find_version_dirs, load_version
from .method_inference import infer_method_types
from .overlay import load_base, overlay
from .validate import declared_features, validate_version


def load_sources(
    schema_dir: Path,
    root: Path | None,
    bases: Mapping[int, Path] | None = None,
    *,
    validate: bool = True,
    features: frozenset[str] = frozenset(),
    upstream: bool = False,
    versions: frozenset[int] | None = None,
    base_descriptions: bool = True,
) -> tuple[VersionSources, ...]:
    """Every version directory's inputs (those of ``versions`` only, where given, and only
    their bases), laid over its base where ``bases`` names one (a base too old for an enabled feature is refused
    there, see ``overlay``). ``upstream``: the directories hold an upstream release's files,
    whose unmarked method types are found by name before validation (``method_inference``)."""
    sources = []
    bases = {v: path for v, path in (bases or {}).items() if versions is None or v in versions}
    dirs = [d for d in find_version_dirs(schema_dir, root) if versions is None or int(d.name[1:]) in versions]
    unmatched = sorted(set(bases) - {int(d.name[1:]) for d in dirs})
    if unmatched:
        raise fail(display_name(bases[unmatched[0]], root), "", f"base for v{unmatched[0]}, which has no fragments")
    for directory in dirs:
        version = int(directory.name[1:])
        version_sources = load_version(directory, root)
        if upstream:
            version_sources = infer_method_types(version_sources)
        if validate:
            validate_version(version_sources, version)
        if version in bases:
            base = load_base(bases[version], version, root, base_descriptions)
            version_sources = overlay(base, version_sources, features)
        sources.append(version_sources)
    return tuple(sources)


def declared(sources: tuple[VersionSources, ...]) -> frozenset[str]:
    """The features the versions' meta files declare."""
    return frozenset(f for s in sources for f in declared_features(s.meta))


def enabled(
    sources: tuple[VersionSources, ...], features: frozenset[str] | None, schema_dir: Path, root: Path | None
) -> frozenset[str]:
    """The features a run enables (``None``: every declared one); one that no version
    declares is an error naming the schema directory."""
    known = declared(sources)
    if features is None:
        return known
    unknown = sorted(features - known)
    if unknown:
        raise UnknownFeature(display_name(schema_dir, root), unknown, known)
    return features


class UnknownFeature(SchemaError):
    """Features that no version of the schema declares. The schema is not at fault: a command
    that knows where the names were set (``features`` in pyproject.toml, ``--feature``)
    says so with ``where``."""

    def __init__(self, schema: str, unknown: list[str], known: frozenset[str]) -> None:
        self.unknown, self.known = unknown, known
        super().__init__([Problem(schema, "", self.message())])

    def message(self, where: str = "") -> str:
        names = ", ".join(f"{name!r}{did_you_mean(name, self.known)}" for name in self.unknown)
        declared = ", ".join(sorted(self.known)) or "none"
        return f"{where}unknown feature {names}; the schema declares: {declared}"


# A version's names: the class names chosen for it and its fields' Python names (see
# ``config.settings.Settings``); none by default.
NamesOf = Callable[[int], tuple[ClassNames, Mapping[str, str]]]


def _no_names(version: int) -> tuple[ClassNames, Mapping[str, str]]:
    return NO_CLASS_NAMES, {}


def build_protocols(
    sources: tuple[VersionSources, ...], features: frozenset[str], names: NamesOf = _no_names
) -> tuple[Protocol, ...]:
    """Every version's IR with ``features`` selected, under its names."""
    out = []
    for s in sources:
        selection = select(s, features)
        class_names, field_names = names(selection.version)
        out.append(build(selection, class_names, field_names))
    return tuple(out)


def load_protocols(
    schema_dir: Path,
    features: frozenset[str] | None,
    root: Path | None = None,
    bases: Mapping[int, Path] | None = None,
    *,
    upstream: bool = False,
    names: NamesOf = _no_names,
) -> tuple[tuple[Protocol, ...], tuple[VersionSources, ...], frozenset[str]]:
    """Load, validate, select features and build the IR of every version directory (see
    ``load_sources``); ``features`` None: every declared one. Returns the IRs, the sources
    and the features enabled."""
    sources = load_sources(schema_dir, root, bases, features=features or frozenset(), upstream=upstream)
    chosen = enabled(sources, features, schema_dir, root)
    return build_protocols(sources, chosen, names), sources, chosen
