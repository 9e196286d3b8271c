"""The edits adopt's wiring makes to an SDK's hand-written modules, with libcst (which keeps
their formatting and comments): a feature's methods into a class or a function, a feature's
keywords into a method's signature and its params class's call (and, for a method that says
it takes its params class, the fields of the class and no others), the imports the new code
needs; and the same taken out where the feature is off. See ``wire.py``."""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import libcst as cst

from ...errors import AdoptError
from ...render.formatting import format_modules
from ...style import Style
from .methods import SdkMethod

_BUILTINS = frozenset(dir(builtins))


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _keys_in(
    node: cst.CSTNode, keys: Iterable[str], texts: dict[int, tuple[cst.CSTNode, str]] | None = None
) -> set[str]:
    """The meta keys of ``keys`` a statement names (``texts``: statements' code by identity,
    each kept with its node so that no other node takes its id: a body searched once a
    method prints each statement once)."""
    if texts is None:
        text = _code(node)
    elif id(node) in texts:
        text = texts[id(node)][1]
    else:
        text = _code(node)
        texts[id(node)] = (node, text)
    return {k for k in keys if re.search(rf"""\[\s*["']{re.escape(k)}["']\s*\]""", text)}


def _find(body: Iterable[cst.CSTNode], kind: type, name: str) -> Any:
    return next((n for n in body if isinstance(n, kind) and getattr(n, "name").value == name), None)  # noqa: B009


class Edit:
    """One SDK file: its tree, what it gains, and the names the gains need. Statements it
    wrote anew (a def whose signature changed, an import) are laid out by the repository's
    formatter at the end, all files' together (``laid_out``)."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.module = cst.parse_module(text)
        self.changes: list[str] = []
        self.needed: set[str] = set()  # names the new code uses
        self.dropped: set[str] = set()  # names the removed code used
        self.unlaid: list[tuple[cst.CSTNode, bool]] = []  # (statement, whether it sits in a class)

    def relaid(self, node: cst.FunctionDef, *, nested: bool) -> cst.FunctionDef:
        """A def to be laid out anew (one whose signature changed)."""
        node = _without_trailing_comma(node)
        self.unlaid.append((node, nested))
        return node


def laid_out(edits: Sequence[Edit], style: Style) -> None:
    """Each edit's statements written anew, laid out by the formatter in one run."""
    pieces = {}
    for i, edit in enumerate(edits):
        for j, (node, nested) in enumerate(edit.unlaid):
            text = _code(node.with_changes(leading_lines=()))
            if nested:  # laid out where it stands: in a class
                text = "class _:\n" + "".join("    " + line if line.strip() else line for line in text.splitlines(True))
            pieces[f"{i}_{j}.py"] = text
    laid = format_modules(pieces, style) if pieces else {}
    for i, edit in enumerate(edits):
        swaps: dict[int, cst.CSTNode] = {}
        for j, (node, nested) in enumerate(edit.unlaid):
            top = cst.parse_module(laid[f"{i}_{j}.py"]).body[0]
            new = top.body.body[0] if nested and isinstance(top, cst.ClassDef) else top
            swaps[id(node)] = new.with_changes(leading_lines=getattr(node, "leading_lines", ()))
        if swaps:  # one pass: a pass makes new parents, so later nodes would not be found by identity
            edit.module = edit.module.visit(_Swap(swaps))
        edit.unlaid = []


class _Swap(cst.CSTTransformer):
    def __init__(self, swaps: dict[int, cst.CSTNode]) -> None:
        super().__init__()
        self.swaps = swaps

    def on_leave(self, original_node: Any, updated_node: Any) -> Any:
        return self.swaps.get(id(original_node), updated_node)


def _without_trailing_comma(fn: cst.FunctionDef) -> cst.FunctionDef:
    """The formatter decides the layout anew: a trailing comma would keep it exploded."""
    p = fn.params
    if isinstance(p.star_kwarg, cst.Param):
        return fn.with_changes(
            params=p.with_changes(star_kwarg=p.star_kwarg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        )
    for attr in ("kwonly_params", "params", "posonly_params"):
        items = list(getattr(p, attr))
        if items:
            items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return fn.with_changes(params=p.with_changes(**{attr: items}))
    return fn


def _names_in(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

        def visit_Arg(self, n: cst.Arg) -> bool:
            n.value.visit(self)
            return False

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            for part in (*n.decorators, n.params, n.returns, n.body):
                if part is not None:
                    part.visit(self)
            return False

        def visit_Param(self, n: cst.Param) -> bool:
            if n.annotation:
                n.annotation.visit(self)
            if n.default:
                n.default.visit(self)
            return False

    node.visit(Names())
    return found


def _params_of(fn: cst.FunctionDef) -> list[str]:
    return [p.name.value for p in (*fn.params.params, *fn.params.kwonly_params)]


def _with_keyword(fn: cst.FunctionDef, param: cst.Param, call_class: str, meta_attr: str | None) -> cst.FunctionDef:
    """``fn`` with ``param`` before its ``**kwargs`` (a required one before the first with a default)
    and ``name=name`` in its calls of ``call_class``."""
    params = list(fn.params.params)
    defaulted = (i for i, p in enumerate(params) if p.default is not None and param.default is None)
    at = next(defaulted, len(params))
    params.insert(
        at, param.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_param=cst.SimpleWhitespace(""))
    )
    name = param.name.value

    class Calls(cst.CSTTransformer):
        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
            if not (isinstance(updated.func, cst.Name) and updated.func.value == call_class):
                return updated
            if any(a.keyword and a.keyword.value == name for a in updated.args):
                return updated
            args = list(updated.args)
            at = next((i for i, a in enumerate(args) if a.keyword and a.keyword.value == meta_attr), len(args))
            args.insert(at, cst.Arg(value=cst.Name(name), keyword=cst.Name(name)))
            return updated.with_changes(args=args)

    changed = fn.with_changes(params=fn.params.with_changes(params=params))
    result = changed.visit(Calls())
    assert isinstance(result, cst.FunctionDef)
    return result


def _without_keyword(fn: cst.FunctionDef, name: str, call_class: str) -> cst.FunctionDef:
    params = [p for p in fn.params.params if p.name.value != name]
    kwonly = [p for p in fn.params.kwonly_params if p.name.value != name]

    class Calls(cst.CSTTransformer):
        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
            if isinstance(updated.func, cst.Name) and updated.func.value == call_class:
                return updated.with_changes(
                    args=[a for a in updated.args if not (a.keyword and a.keyword.value == name)]
                )
            return updated

    result = fn.with_changes(params=fn.params.with_changes(params=params, kwonly_params=kwonly)).visit(Calls())
    assert isinstance(result, cst.FunctionDef)
    return result


def merge_class(edit: Edit, rendered: cst.Module, name: str, side: str, table: tuple[SdkMethod, ...]) -> None:
    """The SDK's class ``name`` gains the rendered methods of the enabled features."""
    cls = _find(edit.module.body, cst.ClassDef, name)
    source = _find(rendered.body, cst.ClassDef, name)
    if cls is None or source is None or not isinstance(cls.body, cst.IndentedBlock):
        raise AdoptError(f"no class {name} to add methods to")
    body = list(cls.body.body)
    for m in table:
        if m.side != side:
            continue
        at = next((i for i, n in enumerate(body) if isinstance(n, cst.FunctionDef) and n.name.value == m.name), None)
        new = _find(source.body.body, cst.FunctionDef, m.name) if m.enabled else None
        if not m.feature and at is None:
            # a method of the base the SDK lacks (one that takes its params class under another name it has)
            if new is not None and not m.union and not any(_takes(n, m.params) for n in body):
                body.insert(_among(body, m, table, side), new)
                edit.needed |= _names_in(new)
                edit.changes.append(f"{name} gains {m.name} ({m.wire})")
            continue
        if not m.featured and (at is None or not _takes(body[at], m.params)):
            continue  # (an SDK's method of its own: only one that takes the params class keeps in step)
        if m.feature:  # the method is the feature's
            if new is None and at is not None:
                edit.dropped |= _names_in(body[at])
                del body[at]
                edit.changes.append(f"{name} loses {m.name} ({m.wire}: {m.feature} is off)")
            elif new is not None and at is None:
                body.insert(_among(body, m, table, side), new)
                edit.needed |= _names_in(new)
                edit.changes.append(f"{name} gains {m.name} ({m.wire})")
            elif new is not None and at is not None and _code(body[at]).strip() != _code(new).strip():
                old = body[at]
                assert isinstance(old, cst.FunctionDef)
                edit.dropped |= _names_in(old)
                body[at] = new.with_changes(leading_lines=old.leading_lines)
                edit.needed |= _names_in(new)
                edit.changes.append(f"{name}.{m.name} as the template set writes it ({m.wire})")
            continue
        if at is not None:
            own = body[at]
            assert isinstance(own, cst.FunctionDef)
            fn = _keywords(edit, f"{name}.{m.name}", m, own, new)
            if fn is not own:
                body[at] = edit.relaid(fn, nested=True)
    if body != list(cls.body.body):
        new_cls = cls.with_changes(body=cls.body.with_changes(body=body))
        edit.module = edit.module.with_changes(body=[new_cls if n is cls else n for n in edit.module.body])


def _among(body: list[Any], m: SdkMethod, table: tuple[SdkMethod, ...], side: str) -> int:
    """Where a new def goes in a class body: beside its siblings (``_beside``)."""
    defs = {n.name.value: i for i, n in enumerate(body) if isinstance(n, cst.FunctionDef)}
    last = max((defs[k.name] for k in table if k.side == side and k.name in defs), default=len(body) - 1)
    return _beside(m, table, side, lambda k: defs.get(k.name), last)


def _keywords(
    edit: Edit, label: str, m: SdkMethod, fn: cst.FunctionDef, new: cst.FunctionDef | None
) -> cst.FunctionDef:
    """An existing method's def with the keywords of the enabled features (as ``new``, the
    rendered def, writes them) and without those of the features that are off. A def that
    takes its params class (``@param_model(NewSessionRequest)``) also gains a keyword for
    each field of the class it lacks, and loses those of fields the class no longer has: the
    signatures follow the models when a newer base changes them, as the SDK's own
    ``gen_signature.py`` kept them."""
    takes = _takes(fn, m.params)
    for k in m.keywords:
        if not k.feature and not takes:
            continue
        present = k.name in _params_of(fn)
        if k.enabled and not present and new is not None:
            param = next((p for p in new.params.params if p.name.value == k.name), None)
            if param is not None:
                fn = _with_keyword(fn, param, m.params, m.meta_attr)
                edit.needed |= _names_in(param)
                why = k.feature or f"a field of {m.params}"
                edit.changes.append(f"{label} gains the keyword {k.name} ({why})")
        elif k.feature and not k.enabled and present:
            edit.dropped |= {n for p in fn.params.params if p.name.value == k.name for n in _names_in(p)}
            fn = _without_keyword(fn, k.name, m.params)
            edit.changes.append(f"{label} loses the keyword {k.name} ({k.feature} is off)")
    fields = {k.name for k in m.keywords}
    for p in (*fn.params.params[1:], *fn.params.kwonly_params) if takes else ():
        if p.name.value not in fields:  # a field the newer base dropped
            edit.dropped |= _names_in(p)
            fn = _without_keyword(fn, p.name.value, m.params)
            edit.changes.append(f"{label} loses the keyword {p.name.value} (no field of {m.params} any more)")
    return fn


def _takes(fn: cst.CSTNode, params: str) -> bool:
    """Whether a def says its keywords are the fields of ``params``: a decorator called with
    that class alone (the SDK's ``@param_model(NewSessionRequest)``)."""
    if not isinstance(fn, cst.FunctionDef):
        return False
    for d in fn.decorators:
        call = d.decorator
        if isinstance(call, cst.Call) and len(call.args) == 1 and not call.args[0].keyword:
            value = call.args[0].value
            if isinstance(value, cst.Name) and value.value == params:
                return True
    return False


def merge_function(edit: Edit, rendered: cst.Module, name: str, side: str, table: tuple[SdkMethod, ...]) -> None:
    """The SDK's function ``name`` gains the rendered statements of the enabled features'
    methods (a statement is a method's when it names its meta key: ``AGENT_METHODS["x"]``)."""
    fn = _find(edit.module.body, cst.FunctionDef, name)
    source = _find(rendered.body, cst.FunctionDef, name)
    if fn is None or source is None or not isinstance(fn.body, cst.IndentedBlock):
        raise AdoptError(f"no function {name} to add routes to")
    assert isinstance(source.body, cst.IndentedBlock)
    body = list(fn.body.body)
    keys = {m.key for m in table if m.side == side}
    texts: dict[int, tuple[cst.CSTNode, str]] = {}
    for m in table:
        if m.side != side:
            continue
        here = [i for i, n in enumerate(body) if m.key in _keys_in(n, [m.key], texts)]
        if not m.feature and (here or m.union):
            continue  # the SDK's own route (or one it wires by hand): as its maintainers wrote it
        new = [n for n in source.body.body if m.key in _keys_in(n, [m.key], texts)] if m.enabled else []
        if not new and here:
            for i in reversed(here):
                edit.dropped |= _names_in(body[i])
                del body[i]
            edit.changes.append(f"{name} no longer routes {m.wire} ({m.feature} is off)")
        elif new and not here:

            def routed(k: SdkMethod) -> int | None:
                return max((i for i, n in enumerate(body) if _keys_in(n, [k.key], texts)), default=None)

            # (no route of its kind: after the last route of any, else before the function's last statement)
            last = max((i for i, n in enumerate(body) if _keys_in(n, keys, texts)), default=len(body) - 2)
            at = _beside(m, table, side, routed, last)
            body[at:at] = new
            for n in new:
                edit.needed |= _names_in(n)
            edit.changes.append(f"{name} routes {m.wire} to {m.name}")
    if body != list(fn.body.body):
        new_fn = fn.with_changes(body=fn.body.with_changes(body=body))
        edit.module = edit.module.with_changes(body=[new_fn if n is fn else n for n in edit.module.body])


def _beside(
    m: SdkMethod, table: Sequence[SdkMethod], side: str, where: Callable[[SdkMethod], int | None], last: int
) -> int:
    """Where a new method's block goes among its siblings (the SDK's methods of the side and
    kind, in the meta's order): after the nearest one before it, else before the nearest
    one after it, else after the last of its kind, else after ``last``."""
    alike = [k for k in table if k.side == side and k.kind == m.kind]
    mine = alike.index(m)
    before = [i for k in reversed(alike[:mine]) if (i := where(k)) is not None]
    if before:
        return before[0] + 1
    after = [i for k in alike[mine + 1 :] if (i := where(k)) is not None]
    return after[0] if after else last + 1


def _bound(tree: ast.Module) -> set[str]:
    """Names the module binds at its top level (imports, defs, classes, assignments)."""
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound |= {t.id for t in targets if isinstance(t, ast.Name)}
    return bound


def _local_names(tree: ast.Module) -> set[str]:
    """Parameters and local variables of every function (``router``, ``agent``, ``self``)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            out |= {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
            out |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return out


def module_of(path: Path, root: Path) -> str:
    rel = path.with_suffix("").relative_to(root).parts
    return ".".join(rel[:-1] if rel[-1] == "__init__" else rel)


def absolute(here: str, level: int, module: str | None) -> str:
    """The dotted module ``from <level dots><module> import ...`` names in module ``here``."""
    base = here.split(".")[:-level] if level else []
    return ".".join([*base, *([module] if module else [])])


def _resolve(node: cst.ImportFrom, here: str) -> str:
    return absolute(here, len(node.relative), _code(node.module).strip() if node.module else None)


def add_imports(edit: Edit, root: Path, schema: str, removable: set[str], where: Callable[[str], str | None]) -> None:
    """The names the new code needs, imported from where ``where`` says each is defined (the
    models from ``schema``); the removed code's ``removable`` names, where nothing else uses them."""
    here = module_of(edit.path, root)
    tree = ast.parse(edit.module.code)
    bound = _bound(tree)
    missing = sorted(edit.needed - bound - _local_names(tree) - _BUILTINS)
    unused = edit.dropped - _names_in(edit.module.with_changes(body=[n for n in edit.module.body if not _is_import(n)]))
    drop = {n for n in unused & removable if n in bound}
    wanted: dict[str, list[str]] = {}
    for name in missing:
        module = where(name)
        if module is None:
            raise AdoptError(
                f"the new code uses {name}, which this file does not import and no module of the package defines"
            )
        wanted.setdefault(module, []).append(name)
    if not wanted and not drop:
        return
    body = list(edit.module.body)
    for source, names in sorted(wanted.items()):
        at = next((i for i, n in enumerate(body) if (f := _from_import(n)) and _resolve(f, here) == source), None)
        line = body[at] if at is not None else None
        if at is None or not isinstance(line, cst.SimpleStatementLine):
            last = max((i for i, n in enumerate(body) if _is_import(n)), default=-1)
            body.insert(last + 1, _unlaid(edit, _import_statement(relative(source, here), names)))
        else:
            body[at] = _unlaid(edit, _rewritten(line, add=names))
    for i, node in enumerate(body):
        if (
            drop
            and isinstance(node, cst.SimpleStatementLine)
            and (f := _from_import(node))
            and _resolve(f, here) == schema
        ):
            body[i] = _unlaid(edit, _rewritten(node, drop=drop))
    edit.module = edit.module.with_changes(body=body)


def _from_import(node: cst.CSTNode) -> cst.ImportFrom | None:
    """The ``from x import a, b`` a statement line is (not a star import), if it is one."""
    if isinstance(node, cst.SimpleStatementLine) and isinstance(stmt := node.body[0], cst.ImportFrom):
        return None if isinstance(stmt.names, cst.ImportStar) else stmt
    return None


def _is_import(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], (cst.Import, cst.ImportFrom))


def relative(home: str, here: str) -> str:
    """``home`` as a relative import from module ``here``, where they share a package."""
    a, b = home.split("."), here.split(".")[:-1]
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    if not common:
        return home
    return "." * (len(b) - common + 1) + ".".join(a[common:])


def _rewritten(
    line: cst.SimpleStatementLine, add: Iterable[str] = (), drop: Iterable[str] = ()
) -> cst.SimpleStatementLine:
    """An import statement of the file with the names ``add`` and without ``drop``, as the formatter
    lays it out (without a trailing comma, so that a list that shrinks fits a line again)."""
    stmt = line.body[0]
    assert isinstance(stmt, cst.ImportFrom) and not isinstance(stmt.names, cst.ImportStar)
    present = [_code(a).strip().rstrip(",").strip() for a in stmt.names]
    source = _code(stmt).split(" import ", 1)[0][len("from ") :]
    names = [n for n in present if n not in set(drop)] + list(add)
    return _import_statement(source, names).with_changes(leading_lines=line.leading_lines)


def _unlaid(edit: Edit, node: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    edit.unlaid.append((node, False))
    return node


def _import_statement(source: str, names: list[str]) -> cst.SimpleStatementLine:
    """``from source import names``, to be sorted and laid out by the repository's formatter."""
    node = cst.parse_statement(f"from {source} import ({', '.join(dict.fromkeys(names))})\n")
    assert isinstance(node, cst.SimpleStatementLine)
    return node


def locate(module_file: Path) -> tuple[Path, str]:
    """The source root a module file is imported from, and its dotted name: the first
    directory upwards that is no package (has no ``__init__.py``)."""
    path = module_file.absolute()
    if not path.exists():
        raise AdoptError(f"{module_file}: missing: no such file")
    if path.suffix != ".py" or not path.is_file():
        raise AdoptError(f"{module_file}: not a Python module file")
    parts = [path.stem] if path.stem != "__init__" else []
    directory = path.parent
    while (directory / "__init__.py").is_file():
        parts.insert(0, directory.name)
        directory = directory.parent
    if not parts:
        raise AdoptError(f"{module_file}: a package's __init__.py without a package")
    return directory, ".".join(parts)
