"""The SDK's own regeneration command runs acp-codegen.

An SDK that generated its schema module had a command for it, which its maintainers keep
running when the schema advances: a Makefile target (``ACP_SCHEMA_VERSION=<ref> make
gen-all``), a nox session or a tox environment that runs a Python script, or that script
itself where the repository ships none of them (an sdist). Left as it is, that command
rewrites the files adopt moved to acp-codegen with the old pipeline and undoes adopt.

Here the command is found (the target the README names first), and the script it runs
(the *driver*) is changed with libcst: its calls of the old pipeline's steps (functions of
the scripts beside it that write a file acp-codegen writes now: the models module, the meta
module, the wired modules) become one run of ``acp-codegen generate`` (models, meta module
and wiring, with the repository's ``features``); what is still the repository's own stays
(fetching a schema for a ref, its formatters). ``regenerate`` names that command.
"""

from __future__ import annotations

import ast
import configparser
import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from ..render.formatting import format_modules
from ..resources import display_name
from ..style import Style

# The command the driver runs: acp-codegen in the interpreter that runs the script (the
# SDK's development environment, which holds acp-codegen), in the repository's root.
RUN = '[sys.executable, "-m", "acp_codegen", "generate"]'
# The same command written before the package was installed as acp_codegen: moved to the new name.
_OLD_RUN = RUN.replace("acp_codegen", "codegen")
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_RULE = re.compile(r"^([A-Za-z0-9_.-]+)\s*:(?!=)")
_SCRIPT = re.compile(r"(?:^|[\s'\"=])((?:[\w.-]+/)*[\w-]+\.py)\b")
_MODULE = re.compile(r"-m\s+([\w.]+)")
_MAKE = re.compile(r"\bmake\s+([A-Za-z0-9_.-]+)")


@dataclass
class Regeneration:
    """What adopt does to the repository's regeneration command."""

    command: str | None = None  # the command that regenerates the SDK (``make gen-all``); None: none found
    script: Path | None = None  # its driver script, where it is changed
    before: str = ""
    after: str = ""
    changes: list[str] = field(default_factory=list)
    problem: str | None = None  # why the command cannot be made to run acp-codegen
    note: str | None = None

    def write(self) -> None:
        if self.script is not None and self.after != self.before:
            temporary = self.script.with_name(f".{self.script.name}.acp-codegen")
            temporary.write_text(self.after, encoding="utf-8")
            temporary.replace(self.script)

    def report(self) -> list[str]:
        if self.problem:
            return [f"not taken over: {self.command}: {self.problem}"]
        if self.command is None:
            return [f"regeneration: {self.note}"] if self.note else []
        lines = [f"regeneration: `{self.command}` runs acp-codegen"]
        return lines + [f"  {c}" for c in self.changes]

    def diff(self, root: Path) -> str:
        if self.script is None or self.after == self.before:
            return ""
        name = display_name(self.script, root)
        return "".join(
            difflib.unified_diff(self.before.splitlines(True), self.after.splitlines(True), f"a/{name}", f"b/{name}")
        )


def take_over(root: Path, owned: Iterable[Path], style: Style) -> Regeneration:
    """The repository's regeneration command and the change that makes it run acp-codegen.
    ``owned``: the files acp-codegen writes now (the models module, the SDK files it wires)."""
    tails = {_tail(p.relative_to(root)) for p in owned}
    steps = {p for p in _python_files(root) if _names_a_path(p, tails)}
    candidates = list(_commands(root))
    for command, scripts in candidates:  # a command whose script drives the steps (or acp-codegen already)
        for script in scripts:
            text = script.read_text(encoding="utf-8", errors="replace")
            if RUN in text:
                return Regeneration(command, script, text, text)
            if _OLD_RUN in text:
                changes = ["runs acp-codegen by its import name acp_codegen (`-m codegen` is another package's)"]
                return Regeneration(command, script, text, text.replace(_OLD_RUN, RUN), changes)
            calls = _step_calls(script, root, steps)
            if calls:
                return _changed(root, command, script, calls, style)
    for command, scripts in candidates:  # a command that runs a step itself
        step = next((s for s in scripts if s in steps), None)
        if step is not None:
            return Regeneration(
                command,
                problem=f"it runs {display_name(step, root)}, which writes what acp-codegen writes now itself;"
                " make it run `acp-codegen generate` in its place",
            )
    named = _readme_targets(root)
    why = f"the README names `make {named[0]}`, but there is no Makefile here; " if named else ""
    return Regeneration(note=f"{why}no command found that regenerates the schema module")


def _tail(rel: Path) -> tuple[str, ...]:
    """The last two parts of a path: enough to tell ``acp/schema.py`` from any ``schema.py``."""
    return tuple(rel.parts[-2:])


def _python_files(root: Path) -> Iterator[Path]:
    """The repository's scripts: Python files outside the package sources, tests and caches."""
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if parts[0] in ("src", "tests", "test", "docs", "examples") or any(
            p.startswith(".") or p in ("__pycache__", "node_modules", "build", "dist", "venv", "site-packages")
            for p in parts
        ):
            continue
        yield path


def _parsed(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None


def _names_a_path(path: Path, tails: set[tuple[str, ...]]) -> bool:
    """Whether a script names one of the files (``ROOT / "src" / "acp" / "schema.py"`` or
    ``"src/acp/schema.py"``): a step of the old pipeline, which writes or reads it."""
    try:
        text = path.read_text(encoding="utf-8")
        if not any(name in text for _, name in tails):  # (most scripts name none: not parsed)
            return False
        tree = ast.parse(text)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return False
    for node in ast.walk(tree):
        parts: list[str] = []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            parts = _joined(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "/" in node.value:
            parts = node.value.split("/")
        if len(parts) >= 2 and tuple(parts[-2:]) in tails:
            return True
    return False


def _joined(node: ast.expr) -> list[str]:
    """The string parts of a ``/`` chain (``ROOT / "src" / "acp"`` -> ``["src", "acp"]``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _joined(node.left) + _joined(node.right)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split("/")
    return []


def _commands(root: Path) -> Iterator[tuple[str, list[Path]]]:
    """(command, the scripts it runs): the Makefile's targets (those the README names
    first), nox sessions, tox environments, then each script with a ``__main__`` block."""
    named = _readme_targets(root)
    makefile = next((root / m for m in MAKEFILES if (root / m).is_file()), None)
    if makefile is not None:
        targets = _make_targets(makefile)
        order = [t for t in named if t in targets] + [t for t in targets if t not in named]
        for target in order:
            yield f"make {target}", _scripts(root, targets[target])
    yield from _nox_sessions(root)
    yield from _tox_envs(root)
    for path in _python_files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "__main__" in text:
            yield f"python {path.relative_to(root).as_posix()}", [path]


def _readme_targets(root: Path) -> list[str]:
    out: list[str] = []
    for readme in sorted(root.glob("README*")):
        text = readme.read_text(encoding="utf-8", errors="replace")
        for line in text.splitlines():
            if re.search(r"\bgen|schema|regenerat", line, re.I):  # (`make gen-all`, not "agent")
                out += [t for t in _MAKE.findall(line) if t not in out]
    return out


def _make_targets(makefile: Path) -> dict[str, list[str]]:
    """Each rule's target -> its recipe lines (continuations joined)."""
    targets: dict[str, list[str]] = {}
    current: list[str] | None = None
    text = makefile.read_text(encoding="utf-8", errors="replace").replace("\\\n", " ")
    for line in text.splitlines():
        if line.startswith("\t") and current is not None:
            current.append(line.strip())
        elif (found := _RULE.match(line)) and not line.startswith("."):
            current = targets.setdefault(found.group(1), [])
        elif line.strip() and not line.startswith("#"):
            current = None
    return targets


def _scripts(root: Path, lines: Iterable[str]) -> list[Path]:
    """The repository's Python files a command's lines run (``scripts/gen_all.py``, ``-m scripts.gen_all``)."""
    out: list[Path] = []
    for line in lines:
        names = _SCRIPT.findall(line) + [m.replace(".", "/") + ".py" for m in _MODULE.findall(line)]
        for name in names:
            path = root / name
            if path.is_file() and path not in out:
                out.append(path)
    return out


def _nox_sessions(root: Path) -> Iterator[tuple[str, list[Path]]]:
    tree = _parsed(root / "noxfile.py")
    for node in tree.body if tree else ():
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            call = deco if isinstance(deco, ast.Call) else None
            target = call.func if call else deco
            if not (isinstance(target, ast.Attribute) and target.attr == "session") and not (
                isinstance(target, ast.Name) and target.id == "session"
            ):
                continue
            name = next(
                (k.value.value for k in (call.keywords if call else ()) if k.arg == "name"
                 and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)),
                node.name,
            )  # fmt: skip
            words = [" ".join(str(c.value) for c in ast.walk(node) if isinstance(c, ast.Constant))]
            yield f"nox -s {name}", _scripts(root, words)


def _tox_envs(root: Path) -> Iterator[tuple[str, list[Path]]]:
    tox = root / "tox.ini"
    if not tox.is_file():
        return
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(tox, encoding="utf-8")
    except configparser.Error:
        return
    for section in parser.sections():
        if section.startswith("testenv:") and parser.has_option(section, "commands"):
            yield f"tox -e {section.split(':', 1)[1]}", _scripts(root, parser.get(section, "commands").splitlines())


def _step_calls(script: Path, root: Path, steps: set[Path]) -> dict[str, Path]:
    """The names a driver binds to the old pipeline's steps: a step module it imports
    (``from scripts import gen_schema``) or a function it imports from one -> that step."""
    tree = _parsed(script)
    out: dict[str, Path] = {}
    for node in ast.walk(tree) if tree else ():  # (an import in ``main()`` too)
        if isinstance(node, ast.ImportFrom):
            base = _module_path(root, script, node.module or "", node.level)
            for alias in node.names:
                as_module = _module_path(root, script, f"{node.module or ''}.{alias.name}".strip("."), node.level)
                for candidate in (as_module, base):
                    if candidate in steps:
                        out[alias.asname or alias.name] = candidate
                        break
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found = _module_path(root, script, alias.name, 0)
                if found in steps and alias.asname:
                    out[alias.asname] = found
                elif found in steps and "." not in alias.name:
                    out[alias.name] = found
    return out


def _module_path(root: Path, script: Path, dotted: str, level: int) -> Path | None:
    """The repository file a module name imported in ``script`` is: from the root (the
    package of scripts) or beside the script (run as ``python scripts/x.py``)."""
    if not dotted:
        return None
    rel = Path(*dotted.split("."))
    bases = [script.parents[level - 1]] if level else [root, script.parent]
    for base in bases:
        for path in (base / rel.with_suffix(".py"), base / rel / "__init__.py"):
            if path.is_file():
                return path
    return None


def _changed(root: Path, command: str, script: Path, bound: dict[str, Path], style: Style) -> Regeneration:
    before = script.read_text(encoding="utf-8")
    found = Regeneration(command, script, before, before)
    try:
        module = cst.parse_module(before)
    except cst.ParserSyntaxError as exc:
        found.problem = f"cannot parse {display_name(script, root)} ({str(exc).splitlines()[0]})"
        return found
    finder = _StepCalls(set(bound))
    module.visit(finder)
    name = display_name(script, root)
    if finder.used or len({id(block) for block, _ in finder.calls}) > 1:
        what = (
            f"uses {', '.join(sorted(finder.used))} of the old pipeline otherwise than by calling it"
            if finder.used
            else "calls the old pipeline's steps in more than one place"
        )
        found.problem = f"{name} {what}; make it run `acp-codegen generate` in their place"
        return found
    if not finder.calls:
        return found  # nothing of the old pipeline left to take out
    depth = len(script.parent.relative_to(root).parts)
    run = _laid(_run_statement(_root_name(module, depth)), finder.depth, style)
    replaced = _Replaced({id(stmt) for _, stmt in finder.calls}, run)
    module = module.visit(replaced)
    names = [cst.Module(body=[]).code_for_node(stmt.body[0]).strip() for _, stmt in finder.calls]
    found.changes.append(f"{name}: {', '.join(names)} -> acp-codegen generate")
    # The steps' imports go (a step may import the package it regenerates when imported).
    unused = set(bound) - _other_names(module, set(bound))
    module = module.visit(_Unimported(unused))
    needed = {"subprocess", "sys"} | ({"Path"} if "Path(" in run and not _binds(module, "Path") else set())
    missing = sorted(n for n in needed if not _binds(module, n))
    if missing:
        lines = ["from pathlib import Path\n" if n == "Path" else f"import {n}\n" for n in missing]
        at = max((i for i, n in enumerate(module.body) if _is_import(n)), default=-1) + 1
        new = [cst.parse_statement(line) for line in lines]
        module = module.with_changes(body=[*module.body[:at], *new, *module.body[at:]])
    found.after = module.code
    return found


class _StepCalls(cst.CSTVisitor):
    """The statements that are a bare call of a step (``gen_schema.generate_schema()``),
    each with its block; the step names used otherwise."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.calls: list[tuple[cst.BaseSuite, cst.SimpleStatementLine]] = []
        self.used: set[str] = set()
        self._blocks: list[cst.BaseSuite] = []
        self.depth = 0  # how deep the calls' block is

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        stmt = node.body[0] if len(node.body) == 1 else None
        if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and self._blocks:
            func = stmt.value.func
            head = func.value if isinstance(func, cst.Attribute) else func
            if isinstance(head, cst.Name) and head.value in self.names:
                self.calls.append((self._blocks[-1], node))
                self.depth = len(self._blocks)
                return False
        return not isinstance(node.body[0], (cst.Import, cst.ImportFrom))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names:
            self.used.add(node.value)


class _Replaced(cst.CSTTransformer):
    """The first step call becomes the run of acp-codegen; the others go."""

    def __init__(self, calls: set[int], run: str) -> None:
        super().__init__()
        self.calls, self.run = calls, run
        self.inserted: list[cst.CSTNode] = []

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.RemovalSentinel:
        if id(original_node) not in self.calls:
            return updated_node
        if self.inserted:
            return cst.RemoveFromParent()
        statement = cst.parse_statement(self.run).with_changes(leading_lines=original_node.leading_lines)
        self.inserted.append(statement)
        return statement


class _Unimported(cst.CSTTransformer):
    def __init__(self, names: set[str]) -> None:
        super().__init__()
        self.names = names

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.RemovalSentinel:
        stmt = updated_node.body[0]
        if not isinstance(stmt, (cst.Import, cst.ImportFrom)) or isinstance(stmt.names, cst.ImportStar):
            return updated_node
        kept = [a for a in stmt.names if _alias_name(a) not in self.names]
        if len(kept) == len(stmt.names):
            return updated_node
        if not kept:
            return cst.RemoveFromParent()
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(body=[stmt.with_changes(names=kept)])


def _alias_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return cst.Module(body=[]).code_for_node(alias.name).split(".")[0]


def _other_names(module: cst.Module, names: set[str]) -> set[str]:
    """Which of ``names`` the module uses outside its imports."""
    tree = ast.parse(module.code)
    return {
        n.id
        for stmt in tree.body
        if not isinstance(stmt, (ast.Import, ast.ImportFrom))
        for n in ast.walk(stmt)
        if isinstance(n, ast.Name) and n.id in names
    }


def _binds(module: cst.Module, name: str) -> bool:
    tree = ast.parse(module.code)
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def _is_import(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], (cst.Import, cst.ImportFrom))


def _root_name(module: cst.Module, depth: int) -> str:
    """The driver's own name for the repository root (``ROOT = Path(__file__).resolve().parents[1]``),
    else that expression."""
    tree = ast.parse(module.code)
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if _levels_up(node.value) == depth:
                return node.targets[0].id
    return f"Path(__file__).resolve().parents[{depth}]"


def _levels_up(node: ast.expr) -> int | None:
    """How many directories above the script's a ``Path(__file__)`` expression names
    (``.parent`` once: 0, ``.parents[1]``: 2)."""
    text = ast.unparse(node)
    if not re.match(r"(?:pathlib\.)?Path\(__file__\)(?:\.resolve\(\)|\.absolute\(\))?", text):
        return None
    rest = re.sub(r"^(?:pathlib\.)?Path\(__file__\)(?:\.resolve\(\)|\.absolute\(\))?", "", text)
    if found := re.fullmatch(r"\.parents\[(\d+)\]", rest):
        return int(found.group(1))
    if re.fullmatch(r"(?:\.parent)+", rest):
        return rest.count(".parent") - 1
    return None


def _run_statement(root: str) -> str:
    """The run of acp-codegen, failing as the script's steps did (an error ends the script)."""
    return (
        f'if subprocess.call({RUN}, cwd={root}):\n    sys.exit("acp-codegen generate failed: see its message above")\n'
    )


def _laid(statement: str, depth: int, style: Style) -> str:
    """The statement as the repository's formatter lays it out at that depth of blocks."""
    wrapped = "".join(f"{'    ' * i}class _:\n" for i in range(depth))
    wrapped += "".join(f"{'    ' * depth}{line}\n" for line in statement.splitlines())
    laid = format_modules({"run.py": wrapped}, style)["run.py"]
    lines = [line[4 * depth :] for line in laid.splitlines() if line.startswith("    " * depth) and line.strip()]
    return "".join(line + "\n" for line in lines)
