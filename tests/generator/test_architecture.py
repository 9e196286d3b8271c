"""The layering of ``codegen``: no import cycles (function-level imports included), the
schema vocabulary and code-text helpers depend on nothing, no planning stage reaches
the render or write stage, and no module grows past what one reader takes in."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "codegen"

# Stages that decide what to generate; they hand plain data to render.
PLANNING = (
    "codegen.schema_terms",
    "codegen.code_text",
    "codegen.load",
    "codegen.method_inference",
    "codegen.validate",
    "codegen.names",
    "codegen.patterns",
    "codegen.features",
    "codegen.hoist",
    "codegen.models_schema",
    "codegen.ir",
    "codegen.overlay",
    "codegen.dispatch",
    "codegen.conversions",
)
# The house's limit: a module past it is split by subject (as codegen/diff/compare.py was).
MAX_LINES = 500
OUTPUT = ("codegen.render", "codegen.formatting", "codegen.write", "codegen.pipeline", "codegen.cli")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, is_package: bool, source: str, known: set[str]) -> set[str]:
    """The codegen modules one module imports, wherever in the file the import is."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            # ``from .pkg import mod`` imports the module; ``from .mod import name`` the module.
            subs = {f"{target}.{a.name}" for a in node.names} & known
            found |= subs or ({target} & known)
    return found - {name}


@functools.cache  # every test reads the same tree: parse it once a run (read only)
def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {
        name: _imports(name, path.name == "__init__.py", path.read_text(encoding="utf-8"), known)
        for name, path in modules.items()
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        node = todo.pop()
        for nxt in graph.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_graph_sees_function_level_and_relative_imports() -> None:
    # names.py once imported validate inside a function: the checker must see such imports.
    known = set(_modules())
    source = "def f():\n    from .validate import ref_target\n"
    assert _imports("codegen.names", False, source, known) == {"codegen.validate"}
    assert _imports("codegen.diff.compare", False, "from ..ir import TypeExpr\n", known) == {"codegen.ir"}
    assert _imports("codegen.cli", False, "from .diff import command\n", known) == {"codegen.diff.command"}


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles() -> None:
    graph = _graph()
    assert "codegen.schema_terms" in graph and "codegen.diff.compare" in graph
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_no_module_over_the_line_limit() -> None:
    lines = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in _modules().items()}
    assert "codegen.runtime._router" in lines  # runtime modules count too
    over = {name: n for name, n in lines.items() if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines (split them by subject): {over}"


def test_vocabulary_and_code_text_stand_alone() -> None:
    graph = _graph()
    assert graph["codegen.schema_terms"] == set()
    assert graph["codegen.code_text"] == set()
    # black's worker processes import it: where processes are spawned, nothing else comes along
    assert graph["codegen.formatting"] == set()


@pytest.mark.parametrize("module", PLANNING)
def test_planning_does_not_reach_output_stages(module: str) -> None:
    graph = _graph()
    reached = _reach(graph, module) & set(OUTPUT)
    assert not reached, f"{module} imports {sorted(reached)}"


def test_templates_do_not_compute_plans() -> None:
    """Routes and the conversion plan are made in pipeline.py, not called from templates."""
    from codegen.render import models as render

    env = render.environment()
    assert "dispatch_routes" not in env.globals
    templates = PACKAGE.parent / "templates"
    for template in templates.rglob("*.jinja"):
        assert "dispatch_routes(" not in template.read_text(encoding="utf-8"), template.name
