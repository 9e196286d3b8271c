"""Verify: the adopted package, built in a scratch copy of the SDK's
package, against the module as it is, before anything of the SDK's is replaced.

In the copy the module is already the one import of the generated models, beside the
generated output and the moved code; the reader imports it there as the SDK's users
will. Every public name of the old module must be importable from it with the same
attribute names, wire keys and required keys (a class may gain keys, which the match
reported), and every message of the corpus must be accepted alike and dumped alike.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .read import Module, SdkName, Session, reading
from .shapes import single_literal


@dataclass
class Verdict:
    names: int = 0
    messages: int = 0
    problems: dict[str, str] = field(default_factory=dict)  # public name or message -> what differs
    unimportable: dict[str, str] = field(default_factory=dict)  # a wired module -> why it does not import


def scratch_tree(module: Module, tmp: Path, writes: Mapping[str, str]) -> Path:
    """A copy of the module's top-level package under ``tmp`` with ``writes`` (paths
    relative to the source root -> text) applied; returns the copy's source root."""
    top = module.dotted.split(".")[0]
    root = tmp / "src"
    shutil.copytree(
        module.root / top, root / top, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), dirs_exist_ok=True
    )
    for rel, text in writes.items():
        target = root / rel
        if target.is_dir():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def _shape(d: SdkName) -> tuple[dict[str, str], frozenset[str], frozenset[str]]:
    """attribute -> wire key, the required wire keys, and those of single constants."""
    return (
        {f.attr: f.wire for f in d.fields},
        d.required_keys(),
        frozenset(f.wire for f in d.fields if single_literal(f)),
    )


def compare_names(old: Module, new: Module, gained: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    problems: dict[str, str] = {}
    # A second name of a class (``SessionUpdate9 = SessionInfoUpdate``) gains what it gains.
    by_ref = {old.names[n].ref: keys for n, keys in gained.items() if n in old.names and old.names[n].ref}
    for name, was in old.names.items():
        now = new.names.get(name)
        if now is None or (now.kind == "other" and was.kind != "other"):
            problems[name] = "not importable from the new module"
            continue
        if was.kind == "enum":
            if now.kind != "enum" or now.enum_members != was.enum_members:
                problems[name] = f"an Enum of {list(was.enum_members)} before, now {now.kind} {list(now.enum_members)}"
            continue
        if was.kind not in ("model", "root") or not was.fields:
            continue
        if now.kind not in ("model", "root"):
            problems[name] = f"a class before, now {now.kind}"
            continue
        (attrs, required, _), (attrs_now, required_now, tags_now) = _shape(was), _shape(now)
        extra = set(gained.get(name) or by_ref.get(was.ref, ()))
        lost = {a: w for a, w in attrs.items() if attrs_now.get(a) != w}
        added = {a: w for a, w in attrs_now.items() if a not in attrs and w not in extra}
        if lost or added:
            problems[name] = f"fields differ: before {sorted(lost.items())}, now {sorted(added.items())}"
        # acp-codegen defaults a tag to its constant where it is a variant's (reading still
        # requires it): whether a tag is required is no difference.
        elif required - tags_now != required_now - extra - tags_now:
            problems[name] = f"required keys differ: before {sorted(required)}, now {sorted(required_now)}"
    return problems


def _strip(value: Any, keys: frozenset[str], constants: frozenset[tuple[str, str]]) -> Any:
    """``value`` without the ``keys`` (what only the new classes have) and without the
    ``constants`` (a property that can hold one value only: written or left out, it says
    the same; SDK base classes that always write single constants write more of them)."""
    if isinstance(value, dict):
        return {
            k: _strip(v, keys, constants)
            for k, v in value.items()
            if k not in keys and (k, json.dumps(v)) not in constants
        }
    if isinstance(value, list):
        return [_strip(v, keys, constants) for v in value]
    return value


def compare_messages(
    old: Session,
    new: Session,
    messages: list[tuple[str, str, Any]],
    gained: frozenset[str],
    constants: frozenset[tuple[str, str]],
) -> tuple[int, dict[str, str]]:
    """``messages``: (label, public name, data). Outcomes are alike when both refuse, or both
    accept and dump the same JSON (keys only the new classes have aside)."""
    before = old.outcomes([(name, data) for _, name, data in messages])
    after = new.outcomes([(name, data) for _, name, data in messages])
    problems = {}
    for (label, _, data), a, b in zip(messages, before, after, strict=True):
        if a[0] == "ok" and b[0] == "ok":
            alike = _strip(a[1], gained, constants) == _strip(b[1], gained, constants)
        else:
            alike = a[0] == b[0]
        if not alike:
            problems[label] = f"{json.dumps(data)[:300]}: before {json.dumps(a)[:300]}, now {json.dumps(b)[:300]}"
    return len(messages), problems


def verify(
    old: Session,
    tmp: Path,
    writes: Mapping[str, str],
    messages: list[tuple[str, str, Any]],
    gained: Mapping[str, tuple[str, ...]],
    constants: frozenset[tuple[str, str]],
    python: str | None,
    modules: Sequence[str] = (),
) -> Verdict:
    """``modules``: the SDK's modules wiring changed, which must import beside the new module."""
    root = scratch_tree(old.module, tmp, writes)
    verdict = Verdict(names=len(old.module.names))
    with reading(root, old.module.dotted, python, list(old.module.names)) as new:
        verdict.problems = compare_names(old.module, new.module, gained)
        keys = frozenset(k for ks in gained.values() for k in ks)
        verdict.messages, differing = compare_messages(old, new, messages, keys, constants)
        if modules:
            verdict.unimportable = {name: f"does not import: {why}" for name, why in new.imports(modules).items()}
    verdict.problems |= differing
    return verdict
