"""Which of a base's methods an SDK serves without its unstable marker, and the Python
names a maintainer chose for methods (``method-names``): the settings the wiring reads
besides the SDK's own files (``wire.py``).

Upstream publishes two meta files a release: ``meta.json`` lists the stable methods,
``meta.unstable.json`` every method. An SDK usually keeps only the unstable pair (the
official Python SDK copies it to ``schema/schema.json`` and ``schema/meta.json``), so the
stable listing comes from ``stable-meta-v<N>`` where it is set, else from the upstream
layout (``meta.json`` beside a ``schema.unstable.json`` base), else from the table of
upstream's releases where the base is one of them (``releases.py``). A base that says
nothing of unstable methods is stable as a whole; an unstable base without its stable
listing gates every method the wiring adds, which is safe and reported.
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Collection, Mapping
from pathlib import Path

from ...config.table import Config
from ...errors import ConfigError
from .methods import SdkMethod, listed
from .releases import recognised

UNSTABLE_MARK = "**UNSTABLE**"  # how upstream's descriptions mark what is not in the stable schema


def stable_methods(config: Config, version: int) -> tuple[frozenset[tuple[str, str]] | None, str | None]:
    """(side, wire name) of the base's stable methods, or None where every method the meta
    lists is stable (no base, or a stable one); and a note saying where they came from when
    the table of releases said it, or that they are not known."""
    base = config.bases.get(version)
    if base is None:
        return None, None
    key = f"stable-meta-v{version}"
    given = config[key] if key in config.values else None
    candidates = (
        [Path(given)] if given else [base.with_name("meta.json")] if base.name == "schema.unstable.json" else []
    )
    for path in candidates:
        try:
            return listed(json.loads(path.read_text(encoding="utf-8"))), None
        except (OSError, ValueError, AttributeError) as exc:
            if given:
                raise ConfigError(f"pyproject.toml: [tool.acp-codegen].{key}: cannot read {path}: {exc}") from None
    try:
        unstable_base = UNSTABLE_MARK in base.read_text(encoding="utf-8")
    except OSError:
        unstable_base = False
    if not unstable_base:
        return None, None
    release = recognised(base)
    if release is not None and release.stable is not None:
        return release.stable, f"gates: {base.name} is upstream's {release.label}; what it calls stable is not gated"
    if release is not None:
        which = f"is upstream's {release.label}, whose stable methods acp-codegen does not know"
    else:
        which = "holds unstable methods and is no upstream release acp-codegen knows"
    return frozenset(), f"gates: {base.name} {which} (set {key}); every method wired anew is gated as unstable"


def chosen_names(config: Config) -> dict[str, str]:
    """``method-names``: wire name -> Python name, each an identifier."""
    names = dict(config["method-names"]) if "method-names" in config.values else {}
    for wire, name in names.items():
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ConfigError(
                f"pyproject.toml: [tool.acp-codegen].method-names: {wire!r} = {name!r} is not a Python identifier"
            )
    return names


def disagreements(
    table: Collection[SdkMethod],
    routed: Collection[tuple[str, str]],
    unstable: Collection[str],
    stable: Collection[tuple[str, str]] | None,
    chosen: Mapping[str, str],
) -> list[str]:
    """What the wiring leaves as the SDK wrote it although the base or the settings say
    otherwise: routes the SDK gates that the base calls stable, names the SDK already has."""
    out = []
    for m in table:
        own = (m.side, m.key) in routed
        if own and stable is not None and m.key in unstable and (m.side, m.wire) in stable:
            out.append(f"  {m.wire}: stable in the base, routed as unstable by the SDK itself; left as it is")
        if own and m.wire in chosen and chosen[m.wire] != m.name:
            out.append(f"  {m.wire}: the SDK names it {m.name} itself; method-names = {chosen[m.wire]!r} not applied")
    return ["left as the SDK has it:", *dict.fromkeys(out)] if out else []
