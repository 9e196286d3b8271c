"""docs/architecture.md against the code: its tree names every package and top-level module of
``codegen/`` and nothing that is not there, every module of the pipeline's packages, and its
one-line order of the pipeline is the order in which ``generate`` calls the stages."""

from __future__ import annotations

import ast
import re

from support import ROOT

DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "codegen"
STAGES = ("protocol", "config", "plan", "render", "write", "generate")
# The width of the tree's name column: a module's name starts a line within it.
NAME_COLUMN = 25


def _tree(text: str) -> list[str]:
    """The lines of the doc's first code block: the tree."""
    return text.split("```\n", 2)[1].splitlines()


def _named(lines: list[str]) -> set[str]:
    """Every path the tree names under codegen/: the top-level entries, and each module or
    folder listed in the name column below a package, relative to it."""
    named: set[str] = set()
    parents: list[tuple[int, str]] = []  # (indent, folder) of the entries above
    for line in lines:
        column = line[:NAME_COLUMN]
        if not column.strip() or (not column[0].strip() and not parents):
            continue
        indent = len(column) - len(column.lstrip())
        if indent == 0:
            parents = [(0, column.split()[0])] if column.startswith("codegen/") else []
            named |= {parents[0][1]} if parents else set()
            continue
        while parents and parents[-1][0] >= indent:
            parents.pop()
        if not parents:
            continue
        for name in re.findall(r"[\w.]+(?:\.py|/)", column):
            named.add(parents[-1][1] + name)
            if name.endswith("/"):
                parents.append((indent, parents[-1][1] + name))
    return named


def _package_entries() -> set[str]:
    """What the tree must name: every package and top-level module of codegen, and every
    module and subpackage of the pipeline's packages."""
    entries = {f"codegen/{p.name}" for p in PACKAGE.glob("*.py")}
    entries |= {f"codegen/{p.parent.name}/" for p in PACKAGE.glob("*/__init__.py")}
    for stage in STAGES:
        for path in (PACKAGE / stage).rglob("*.py"):
            rel = path.relative_to(PACKAGE).as_posix()
            entries.add(f"codegen/{rel.rsplit('/', 1)[0]}/" if path.name == "__init__.py" else f"codegen/{rel}")
    return entries


def _calls_in_order(function: ast.FunctionDef, local: dict[str, ast.FunctionDef], seen: set[str]) -> list[str]:
    """The names a function uses, in source order, with the module's own functions it uses
    expanded where they are used (each once)."""
    names = sorted(
        (n for statement in function.body for n in ast.walk(statement) if isinstance(n, ast.Name)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    out: list[str] = []
    for name in names:
        if name.id in local and name.id not in seen:
            seen.add(name.id)
            out += _calls_in_order(local[name.id], local, seen)
        else:
            out.append(name.id)
    return out


def _stage_order(source: str) -> list[str]:
    """The stages in the order ``generate`` first calls a function of each (records such as
    ``Inputs`` are data, not a stage's work): imports say which stage a name is from."""
    tree = ast.parse(source)
    stage_of = {
        alias.asname or alias.name: node.module.split(".")[0]
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module
        for alias in node.names
    }
    local = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    order: list[str] = []
    for name in _calls_in_order(local["generate"], local, {"generate"}):
        stage = stage_of.get(name)
        if stage in STAGES and name[:1].islower() and stage not in order:
            order.append(stage)
    return order


def _doc_order(text: str) -> list[str]:
    found = re.search(r"Data flows one way: `([^`]+)`", text)
    assert found, "docs/architecture.md gives the pipeline's order as 'Data flows one way: `a -> b`'"
    return [part.strip() for part in found[1].split("->")]


def test_the_tree_names_every_package_and_module() -> None:
    named = _named(_tree(DOC.read_text(encoding="utf-8")))
    missing = sorted(_package_entries() - named)
    assert not missing, f"docs/architecture.md leaves out: {missing}"


def test_the_tree_names_nothing_that_is_not_there() -> None:
    named = _named(_tree(DOC.read_text(encoding="utf-8")))
    assert "codegen/protocol/sources.py" in named and "codegen/plan/conversions/plan.py" in named
    absent = sorted(path for path in named if not (ROOT / path).exists())
    assert not absent, f"docs/architecture.md names what codegen/ does not hold: {absent}"


def test_the_order_is_the_order_generate_calls_the_stages() -> None:
    code = _stage_order((PACKAGE / "generate" / "pipeline.py").read_text(encoding="utf-8"))
    assert code == ["protocol", "config", "plan", "render", "write"]
    assert _doc_order(DOC.read_text(encoding="utf-8")) == code


def test_the_checks_above_can_fail() -> None:
    tree = [
        "codegen/cli.py           the command line",
        "codegen/protocol/        schema text to the IR",
        "  load.py, gone.py       JSON in",
        "  sub/                   a folder",
        "    deep.py              in it",
        "                         load.py named in a description is no entry",
    ]
    assert _named(tree) == {
        "codegen/cli.py",
        "codegen/protocol/",
        "codegen/protocol/load.py",
        "codegen/protocol/gone.py",
        "codegen/protocol/sub/",
        "codegen/protocol/sub/deep.py",
    }
    source = (
        "from ..render.models import render_models\nfrom ..protocol.sources import load_sources\n"
        "from ..write.headers import Inputs, stamp\n"
        "def load(): return load_sources()\n"
        "def generate():\n    Inputs()\n    render_models(load())\n    return stamp()\n"
    )
    assert _stage_order(source) == ["render", "protocol", "write"]
    assert _doc_order("Data flows one way: `protocol -> render`.") == ["protocol", "render"]
