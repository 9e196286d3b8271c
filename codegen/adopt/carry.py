"""Carry: the code the SDK added to its classes moves into a module of
its own beside the old one, wired in through ``base-class`` and ``mixins``.

The classes' common base, when the module defines it, moves whole (its own module's
imports with it). A class's own members (validators, methods, properties, class
variables, a config of its own) and those of the module's private classes it derives
from become a mixin, ``<Class>Mixin``, that the generated class also derives from.
Members acp-codegen already provides are left out, each with the reason: validators that
implement upstream's ``x-deserialize-*`` markers, the catch-all variants' refusal of the
known variants' tags, and a catch-all's ``extra="allow"``.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..protocol.ir import Field
from .read import Module
from .shapes import Generated, Matching

# Config acp-codegen's models have already: descriptions are in each Field (docstrings
# need not be read), and they take attribute names as well as wire names.
_CONFIG_PROVIDED = {
    ("use_attribute_docstrings", True),
    ("populate_by_name", True),
    ("validate_by_name", True),
    ("validate_by_alias", True),
}
# Classes every model's MRO ends in: not the SDK's.
_FOREIGN = ("pydantic.", "builtins:", "typing:")


@dataclass(frozen=True)
class Member:
    owner: str  # the class it is defined in
    name: str
    why: str = ""  # left out: what acp-codegen does instead


@dataclass
class Carried:
    base_class: str | None = None  # "package.module:Name"
    mixins: dict[str, list[str]] = field(default_factory=dict)  # public class -> "package.module:Mixin"...
    text: str | None = None  # the new module's source, when it has anything
    carried: list[Member] = field(default_factory=list)
    left_out: list[Member] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _foreign(ref: str) -> bool:
    return ref.startswith(_FOREIGN)


def common_base(module: Module) -> str | None:
    """The most derived class every non-root model of the module derives from (not
    pydantic's own), as ``module:qualname``."""
    mros = [d.mro[1:] for d in module.names.values() if d.kind == "model" and d.own and d.fields]
    if not mros:
        return None
    shared = set(mros[0]).intersection(*map(set, mros[1:]))
    return next((ref for ref in mros[0] if ref in shared and not _foreign(ref)), None)


class _Source:
    """The module's text, read for its classes' members and its top-level names."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        self.tree = ast.parse(text)
        self.classes = {n.name: n for n in self.tree.body if isinstance(n, ast.ClassDef)}
        self.imports: dict[str, ast.stmt] = {}  # name bound -> the import statement
        self.defined: dict[str, ast.stmt] = {}  # name bound -> its top-level definition
        for node in self.tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    self.imports[(alias.asname or alias.name).split(".")[0]] = node
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defined[node.name] = node
            elif isinstance(node, ast.Assign):
                self.defined.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})

    def text_of(self, node: ast.stmt, indent: str = "") -> str:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        body = textwrap.dedent("".join(self.lines[start - 1 : node.end_lineno]))
        return textwrap.indent(body, indent)

    def import_of(self, name: str) -> str:
        node = self.imports[name]
        if isinstance(node, ast.ImportFrom):
            alias = next(a for a in node.names if (a.asname or a.name) == name)
            spelled = alias.name + (f" as {alias.asname}" if alias.asname else "")
            return f"from {'.' * node.level}{node.module or ''} import {spelled}"
        assert isinstance(node, ast.Import)
        alias = next(a for a in node.names if (a.asname or a.name).split(".")[0] == name)
        return f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")


def _used_names(nodes: Iterable[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def _is_field(stmt: ast.stmt) -> bool:
    """An annotated public attribute that is no ``ClassVar``: pydantic makes it a field."""
    if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
        return False
    annotation = ast.unparse(stmt.annotation)
    return not stmt.target.id.startswith("_") and "ClassVar" not in annotation and stmt.target.id != "model_config"


def _members(node: ast.ClassDef) -> list[ast.stmt]:
    """The class body's members: not its fields, docstrings or ``pass``."""
    return [
        stmt
        for stmt in node.body
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
        and not isinstance(stmt, ast.Pass)
        and not _is_field(stmt)
    ]


def _name(stmt: ast.stmt) -> str:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    return next((t.id for t in targets if isinstance(t, ast.Name)), type(stmt).__name__)


class _Judge:
    """Which members acp-codegen provides already."""

    def __init__(self, module: Module, matching: Matching, gen: Generated) -> None:
        self.module, self.gen = module, gen
        self.generated = {sdk: m.generated for sdk, m in matching.classes.items()}
        self.payload = {
            n
            for n in gen.objects
            if any(f.not_one_of for f in gen.fields[n].values())
            or gen.protocol.schema["$defs"].get(n, {}).get("additionalProperties") is True
        }

    def _fields(self, classes: Iterable[str], attrs: Iterable[str]) -> list[Field]:
        """The generated fields behind ``attrs`` in the SDK's ``classes`` (all that have them)."""
        out = []
        wanted = set(attrs)
        for sdk in classes:
            d, g = self.module.names[sdk], self.generated.get(sdk)
            if g is None:
                continue
            wires = {f.wire for f in d.fields if f.attr in wanted}
            out += [f for w, f in self.gen.fields[g].items() if w in wires]
        return out

    def why_not(self, member: dict[str, Any] | None, classes: list[str], config: dict[str, Any] | None = None) -> str:
        """Why acp-codegen need not carry a member (empty: carry it)."""
        if config is not None:
            rest = {k: v for k, v in config.items() if (k, v) not in _CONFIG_PROVIDED}
            if rest == {"extra": "allow"} and classes and all(self.generated.get(c) in self.payload for c in classes):
                return "a catch-all variant keeps its unknown properties in acp-codegen's models"
            if not rest:
                return "acp-codegen's models say the same (descriptions in Field, population by name)"
            return ""
        if member is None or member.get("kind") != "FieldValidator":
            return ""
        found = self._fields(classes, member["fields"])
        if not found:
            return ""
        if member["mode"] == "wrap" and all(f.lenient or f.skip_invalid_items or f.null_as_default for f in found):
            return "implements upstream's x-deserialize-* markers, which acp-codegen's models read"
        if member["mode"] in ("before", "after", "plain") and all(f.not_one_of for f in found):
            return "refuses the known variants' tags, as acp-codegen's catch-all variants do (NotOneOf)"
        return ""


def carry(
    module: Module, text: str, matching: Matching, gen: Generated, ext: str, public: dict[str, str], package: str
) -> Carried:
    """``ext``: the new module's dotted name; ``public``: generated name -> public name;
    ``package``: the one acp-codegen generates into (its classes are no SDK's mixins)."""
    source = _Source(text)
    judge = _Judge(module, matching, gen)
    ours = f"{package}."
    out = Carried()
    pieces: list[str] = []
    used: set[str] = set()
    base_ref = common_base(module)
    mine = f"{module.dotted}:"
    defined: list[str] = []  # the classes the new module defines
    if base_ref and base_ref.startswith(mine):
        base = base_ref.split(":", 1)[1]
        node = source.classes[base]
        classes = [n for n, d in module.names.items() if d.kind == "model" and base_ref in d.mro[1:]]
        kept = []
        for stmt in _members(node):
            name = _name(stmt)
            described = next((m for m in module.names[base].members if m["name"] == name), None)
            why = judge.why_not(described, classes)
            (out.left_out if why else out.carried).append(Member(base, name, why))
            if not why:
                kept.append(stmt)
        first = node.body[0]
        documented = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        head = source.lines[start - 1 : (first.end_lineno if documented else first.lineno - 1) or 0]
        body = "\n".join(source.text_of(s, "    ") for s in kept) or ("" if documented else "    pass\n")
        pieces.append("".join(head) + ("\n" if documented and body else "") + body)
        defined.append(base)
        used |= _used_names([*node.bases, *kept])
        out.base_class = f"{ext}:{base}"
    elif base_ref:
        out.base_class = base_ref
    mixin_of: dict[str, str] = {}  # in-module class -> its mixin's name
    public_refs = {d.ref for d in module.names.values() if d.ref}
    for sdk, d in sorted(module.names.items()):
        if d.kind not in ("model", "root") or not d.own or sdk not in (*matching.classes, *matching.types):
            continue
        # This class and those between it and the base: the module's own (their members are
        # carried), or classes from elsewhere (mixins an earlier adoption wired in: kept).
        above = d.mro[: d.mro.index(base_ref)] if base_ref in d.mro else d.mro
        names = []
        for ref in above:
            cls = ref.split(":", 1)[1]
            if ref.startswith(mine) and cls in source.classes:
                if cls not in mixin_of:
                    mixin = _mixin(cls, module, source, judge, out, used)
                    mixin_of[cls] = f"{cls.lstrip('_')}Mixin" if mixin else ""
                    if mixin:
                        pieces.append(mixin.replace("__MIXIN__", mixin_of[cls]))
                        defined.append(mixin_of[cls])
                if mixin_of[cls]:
                    names.append(f"{ext}:{mixin_of[cls]}")
            elif not (_foreign(ref) or ref in public_refs or ref.startswith((mine, ours)) or "[" in ref):
                names.append(ref)
        if names:
            generated = matching.generated_of(sdk)
            out.mixins[public.get(str(generated), str(generated))] = names
    if pieces:
        out.text = _module_text(module, source, pieces, used, set(defined), out)
    return out


def _mixin(cls: str, module: Module, source: _Source, judge: _Judge, out: Carried, used: set[str]) -> str | None:
    node = source.classes[cls]
    described = module.described(cls)
    subclasses = [
        n
        for n, d in module.names.items()
        if d.kind in ("model", "root") and d.own and any(r.endswith(f":{cls}") for r in d.mro)
    ]
    kept = []
    for stmt in _members(node):
        name = _name(stmt)
        info = next((m for m in (described.members if described else ()) if m["name"] == name), None)
        config = _config(stmt) if name == "model_config" else None
        why = judge.why_not(info, subclasses, config)
        (out.left_out if why else out.carried).append(Member(cls, name, why))
        if not why:
            kept.append(stmt)
    if not kept:
        return None
    used |= _used_names(kept)
    body = "\n".join(source.text_of(s, "    ") for s in kept)
    return f'class __MIXIN__:\n    """{cls}\'s own members, moved from {module.dotted}."""\n\n{body}'


def _config(stmt: ast.stmt) -> dict[str, Any] | None:
    """The keywords of a ``model_config = ConfigDict(...)`` whose values are constants."""
    value = getattr(stmt, "value", None)
    if not (isinstance(value, ast.Call) and not value.args):
        return None
    if not all(kw.arg and isinstance(kw.value, ast.Constant) for kw in value.keywords):
        return None
    return {str(kw.arg): kw.value.value for kw in value.keywords if isinstance(kw.value, ast.Constant)}


def _module_text(
    module: Module, source: _Source, pieces: list[str], used: set[str], defined_here: set[str], out: Carried
) -> str:
    imports = ["from __future__ import annotations"]
    definitions: list[str] = []
    todo = sorted(used)
    done: set[str] = set()
    public = set(module.names)
    while todo:
        name = todo.pop(0)
        if name in done or name in defined_here:
            continue
        done.add(name)
        if name in source.imports:
            line = source.import_of(name)
            if line != "from __future__ import annotations":
                imports.append(line)
        elif name in source.defined and name not in public:
            node = source.defined[name]
            definitions.append(source.text_of(node))
            todo += sorted(_used_names([node]) - done)
        elif name in public:
            out.problems.append(f"moved code uses {name}, a class of the module itself: import it where it is used")
    head = (
        f'"""What {module.dotted} added to its classes, moved here by `acp-codegen adopt`:\n'
        "the models' base class and, per class, a mixin the generated class derives from.\n"
        '"""\n\n'
    )
    return head + "\n".join(dict.fromkeys(imports)) + "\n\n\n" + "\n\n".join([*definitions, *pieces])
