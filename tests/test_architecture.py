"""The layering of ``codegen``, as rules between packages: the shared top-level modules import
no package; each stage of generate imports only the stages before it (protocol, config, plan,
render, write, generate); a command package (adopt, diff, conformance, ...) imports shared
modules, stages and generate, never another command. No import cycles (function-level imports
included), and no module grows past what one reader takes in."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from support import ROOT

PACKAGE = ROOT / "codegen"

# generate's stages in the order data flows, each allowed to import the ones before it (and
# the shared top-level modules, "shared"). Every other subpackage of codegen but runtime is
# a command beside the pipeline (adopt, diff, conformance, ... found, not listed).
STAGES = ("protocol", "config", "plan", "render", "write", "generate")
# What each stage may import besides itself: the ones before it, except that write (bytes
# and provenance) needs only the settings that headers record, not protocol, plan or render.
ALLOWED: dict[str, set[str]] = {
    "shared": {"shared"},
    "protocol": {"shared"},
    "config": {"shared", "protocol"},
    "plan": {"shared", "protocol", "config"},
    "render": {"shared", "protocol", "config", "plan"},
    "write": {"shared", "config"},
    "generate": {"shared", *STAGES},
    "runtime": set(),  # copied into the output: imports only itself
}
# The command line: parses and dispatches to every command.
ENTRY = {"acp_codegen.cli", "acp_codegen.__main__"}
# The house's limit: a module past it is split by subject (as codegen/diff/compare.py was).
MAX_LINES = 500


def _layer(module: str) -> str:
    """The room a module lives in: a stage, "runtime", a command package's name, or "shared"
    for the top-level modules (acp_codegen.errors, acp_codegen.resources, ...)."""
    parts = module.split(".")
    if len(parts) == 1 or (len(parts) == 2 and not (PACKAGE / parts[1]).is_dir()):
        return "shared"
    return parts[1]


def _violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that crosses the rules: a stage reaching a later stage or a command; a
    shared module reaching a package; a command reaching another command."""
    out = []
    for module, targets in sorted(graph.items()):
        if module in ENTRY:
            continue
        here = _layer(module)
        # a command may import the shared modules, every stage, runtime, and itself
        allowed = ALLOWED.get(here, {"shared", "runtime", *STAGES})
        out += [f"{module} -> {t}" for t in sorted(targets) if _layer(t) not in allowed | {here}]
    return out


def _module_name(path: Path) -> str:
    """The installed name of a module of the checkout's ``codegen/`` (``acp_codegen.<...>``)."""
    parts = ("acp_codegen", *path.relative_to(PACKAGE).with_suffix("").parts)
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
    assert _imports("acp_codegen.protocol.names", False, source, known) == {"acp_codegen.protocol.validate"}
    found = _imports("acp_codegen.diff.compare", False, "from ..protocol.ir import TypeExpr\n", known)
    assert found == {"acp_codegen.protocol.ir"}
    assert _imports("acp_codegen.cli", False, "from .diff import command\n", known) == {"acp_codegen.diff.command"}
    assert _imports("acp_codegen.generate.sdk.wire", False, "from ...errors import fail\n", known) == {
        "acp_codegen.errors"
    }


def test_rules_find_a_crossing() -> None:
    """The rules flag a stage that reaches a later stage, a shared module that reaches a
    package, and a command that reaches another; they let a command use generate."""
    graph = {
        "acp_codegen.protocol.ir": {"acp_codegen.render.models", "acp_codegen.errors"},
        "acp_codegen.errors": {"acp_codegen.protocol.load"},
        "acp_codegen.diff.command": {"acp_codegen.adopt.read", "acp_codegen.generate.pipeline"},
        "acp_codegen.write.headers": {"acp_codegen.config.settings", "acp_codegen.style"},
        "acp_codegen.cli": {"acp_codegen.adopt.command"},
    }
    assert _violations(graph) == [
        "acp_codegen.diff.command -> acp_codegen.adopt.read",
        "acp_codegen.errors -> acp_codegen.protocol.load",
        "acp_codegen.protocol.ir -> acp_codegen.render.models",
    ]
    assert _layer("acp_codegen.resources") == "shared" and _layer("acp_codegen.protocol.ir") == "protocol"


def test_imports_follow_the_rules_between_packages() -> None:
    graph = _graph()
    layers = {_layer(m) for m in graph}
    assert set(STAGES) | {"shared", "runtime", "adopt", "diff", "conformance"} <= layers
    assert not _violations(graph), "imports across the rules:\n" + "\n".join(_violations(graph))


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles() -> None:
    graph = _graph()
    assert "acp_codegen.schema_terms" in graph and "acp_codegen.diff.compare" in graph
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_no_module_over_the_line_limit() -> None:
    lines = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in _modules().items()}
    assert "acp_codegen.runtime._router" in lines  # runtime modules count too
    over = {name: n for name, n in lines.items() if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines (split them by subject): {over}"


def test_the_vocabulary_and_the_layout_stand_alone() -> None:
    graph = _graph()
    assert graph["acp_codegen.schema_terms"] == set()
    assert graph["acp_codegen.code_text"] == set()
    assert graph["acp_codegen.style"] == set()
    # black's worker processes import them: where processes are spawned, nothing else comes along
    assert graph["acp_codegen.render.workers"] == set()
    assert _reach(graph, "acp_codegen.render.formatting") == {"acp_codegen.style", "acp_codegen.render.workers"}


def test_templates_do_not_compute_plans() -> None:
    """Routes and the conversion plan are made in generate/pipeline.py, not called from templates."""
    from acp_codegen.render.templates import environment

    env = environment()
    assert "dispatch_routes" not in env.globals
    templates = PACKAGE.parent / "templates"
    for template in templates.rglob("*.jinja"):
        assert "dispatch_routes(" not in template.read_text(encoding="utf-8"), template.name
