"""The class names a user chose (``[tool.acp-codegen].class-names``, a ``ClassNames``) and
``rename``, which applies them to the definitions after ``hoist`` named every class:
SDKs keep their public names, derived or not."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import Problem, SchemaError, did_you_mean, pointer
from ..schema_terms import REF_PREFIX, copy_json, schema_nodes
from .hoist import Derived
from .validate import TYPE_NAME, is_class_name


@dataclass(frozen=True)
class ClassNames:
    """Class names a user chose for a protocol version: generated name (derived or from the
    schema) -> chosen name. ``origin`` names the configuration file they were written in
    (their pointer there is ``/tool/acp-codegen/class-names/<name>``, or under ``table``:
    ``/tool/acp-codegen/v2/class-names/<name>`` for ``[tool.acp-codegen.v2]``); None where a
    program passed them to the API (``generate(settings=Settings(ClassNames(...)))``)."""

    chosen: Mapping[str, str] = field(default_factory=dict)
    origin: str | None = None
    table: str = ""  # "v2": written in [tool.acp-codegen.v2], for one version

    @property
    def source(self) -> str:
        """Where the names were chosen, for headers (the summary line names the file alone)."""
        if self.origin is None:
            return "the class_names argument"
        return f"{self.origin} [tool.acp-codegen{'.' + self.table if self.table else ''}].class-names"

    def problem(self, name: str, message: str) -> Problem:
        if self.origin is None:
            return Problem("class_names", pointer(name), message)
        where = ("tool", "acp-codegen", *([self.table] if self.table else []), "class-names", name)
        return Problem(self.origin, pointer(*where), message)

    def unknown(
        self, known: set[str], labels: Mapping[str, set[str]] | None = None, elsewhere: Mapping[str, str] | None = None
    ) -> list[Problem]:
        """Chosen names for classes no version has (after feature selection). ``labels``: a
        union variant's label -> its names; a key spelled as the label of exactly one (the
        bare name hoisting gave before every variant was prefixed) is pointed to it.
        ``elsewhere``: a class of other versions than these names apply to -> those ("v2")."""
        found = dict(elsewhere or {})
        return [
            self.problem(
                old,
                f"no generated class is named {old!r}"
                + (
                    f" in the versions this table applies to"
                    f" ({found[old]} has one, named by the table {found[old]} reads)"
                    if old in found
                    else _closest(old, known, labels or {})
                ),
            )
            for old in sorted(set(self.chosen) - known)
        ]


NO_CLASS_NAMES = ClassNames()


def _closest(name: str, known: set[str], labels: Mapping[str, set[str]]) -> str:
    # A name hoisting once suffixed is now "Tagged" (the one variant kind that still meets its own name).
    retired = name.removesuffix("Variant") + "Tagged"
    named = {retired} if name.endswith("Variant") and retired in known else labels.get(name, set())
    return f"; did you mean {min(named)!r}?" if len(named) == 1 else did_you_mean(name, known)


def rename(
    defs: dict[str, Any], files: dict[str, str], derived: dict[str, Derived], names: ClassNames
) -> tuple[dict[str, Any], dict[str, Derived], dict[str, str]]:
    """Definitions (and ``files``, in place) under the chosen class names, every ``$ref``
    following; and the original name of each renamed class (new -> old), for the rules
    that read a name's meaning (a method's request/response is told by its suffix)."""
    # Checked whether or not this version has the class: the same settings serve all.
    problems = [
        names.problem(
            old,
            f"{new!r} cannot name a generated class: it must match {TYPE_NAME.pattern}"
            " and not be a name Python or pydantic already means (Field, BaseModel, Any, Exception...)",
        )
        for old, new in sorted(names.chosen.items())
        if not is_class_name(new)
    ]
    here = {old: new for old, new in names.chosen.items() if old in defs and old != new}
    claimed: dict[str, str] = {}
    for old, new in sorted(here.items()):
        if new in defs and new not in here:
            problems.append(names.problem(old, f"{new!r} is already the name of another class; choose another"))
        elif new in claimed:
            problems.append(names.problem(old, f"{new!r} is also chosen for {claimed[new]!r}"))
        claimed.setdefault(new, old)
    if problems:
        raise SchemaError(problems)
    if not here:
        return defs, derived, {}
    refs = {REF_PREFIX + old: REF_PREFIX + new for old, new in here.items()}
    out = {}
    for name, schema in defs.items():
        copied = copy_json(schema)
        for _, node in schema_nodes(copied):
            if node.get("$ref") in refs:
                node["$ref"] = refs[node["$ref"]]
        out[here.get(name, name)] = copied
    moved = {new: files.pop(old) for old, new in here.items()}  # (two classes may swap names)
    files.update(moved)
    renamed = {here.get(n, n): replace(d, name=here.get(n, n)) for n, d in derived.items()}
    return dict(sorted(out.items())), dict(sorted(renamed.items())), {new: old for old, new in here.items()}
