"""SDK wiring, run by generate (and by adopt): the SDK's own modules serve and call every method of the base
and of the enabled features, in the SDK's idiom, from an SDK template set
(``docs/dispatch.md``, "SDK template sets").

The SDK's files, each a role, found by what they hold:

- ``meta``: the method tables (``AGENT_METHODS = {...}``, ``PROTOCOL_VERSION``) nearest the
  schema module; rendered whole by the template set;
- ``agent-router`` / ``client-router``: a function that routes one side's methods with its
  table (``router.route_request(AGENT_METHODS["session_fork"], ForkSessionRequest, agent, "fork_session")``);
- ``interface``: the module of the protocol classes those functions take (``agent: Agent``);
- ``client-connection`` / ``agent-connection``: the class that sends the other side's methods
  (``ClientSideConnection`` sends ``AGENT_METHODS``, ``AgentSideConnection`` ``CLIENT_METHODS``).

For each role but ``meta`` the template set renders a module with the SDK's class or
function holding every enabled method; ``edits`` takes from it what the SDK lacks (and
takes out what a feature that is off added). What the SDK wrote itself stays as it is (a
route it gates otherwise than the base is reported, not changed), and running it again
changes nothing. The SDK's existing routes say its naming rule (``session/fork`` ->
``fork_session``) and which methods it counts as unstable; the base's stable meta says
which of the others are served without the SDK's unstable marker.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import libcst as cst

from ...code_text import Code
from ...config.settings import ModelOptions
from ...config.table import Config, generation_arguments
from ...errors import AdoptError, ConfigError, SchemaError
from ...plan.bridge import BridgePlan
from ...protocol.features import gated_off
from ...protocol.ir import Protocol
from ...render.formatting import format_modules
from ...render.templates import environment
from ...resources import TEMPLATES, display_name, schema_location
from ...style import Style
from ..pipeline import Generation, load_protocols
from .bridge import BRIDGE_HOST, bridge_hook
from .edits import Edit, add_imports, locate, merge_class, merge_function, module_of, relative
from .edits import laid_out as laid_out_anew
from .gates import chosen_names, disagreements, stable_methods
from .methods import SdkMethod, meta_listing, method_table
from .roles import (
    ROLES,
    ROUTERS,
    SENDERS,
    SETTING_KEYS,
    SHIPPED,
    TABLES,
    Conventions,
    _key,
    _parsed,
    _routes,
    conventions,
)

_BUILTINS = frozenset(dir(builtins))


@dataclass
class Wiring:
    texts: dict[Path, str] = field(default_factory=dict)  # file -> its new text (changed files only)
    before: dict[Path, str] = field(default_factory=dict)
    changes: list[str] = field(default_factory=list)  # what each file gains or loses, for the report
    problems: dict[str, str] = field(default_factory=dict)  # file -> why it was not changed
    modules: list[str] = field(default_factory=list)  # dotted names of the wired modules (verified to import)
    routes: dict[str, str] = field(default_factory=dict)  # meta key -> wire name, the features' agent methods
    added: list[str] = field(default_factory=list)  # "wire name -> Python name (side)" of each method wired anew
    notes: list[str] = field(default_factory=list)  # where the SDK and the base disagree; nothing changed
    serves: str = ""  # which protocol versions the SDK's agent serves, where the package has v2 (the bridge)

    def write(self) -> None:
        for path, text in self.texts.items():
            temporary = path.with_name(f".{path.name}.acp-codegen")
            temporary.write_text(text, encoding="utf-8")
            temporary.replace(path)

    def report(self) -> list[str]:
        lines = []
        if self.modules:
            routed = f"; routes {', '.join(self.routes.values())}" if self.routes else ""
            lines.append(f"wired: {len(self.modules)} modules of the SDK ({', '.join(self.modules)}){routed}")
            lines += [f"  {change}" for change in self.changes]
        if self.serves:
            lines.append(self.serves)
        if self.added:
            lines.append(f"methods wired anew, {len(self.added)}: {', '.join(self.added)}")
        lines += self.notes
        if self.problems:
            lines.append("not wired:")
            lines += [f"  {name}: {why}" for name, why in sorted(self.problems.items())]
        return lines

    def diff(self, root: Path) -> str:
        out: list[str] = []
        for path, text in self.texts.items():
            name = display_name(path, root)
            before, after = self.before[path].splitlines(True), text.splitlines(True)
            out += difflib.unified_diff(before, after, f"a/{name}", f"b/{name}")
        return "".join(out)


def template_set(name: str, root: Path) -> Path:
    """The folder of the shipped set ``name``, or the repository's folder of that path."""
    shipped = TEMPLATES / "sdk"
    if "/" not in name and "\\" not in name and (shipped / name).is_dir():
        return shipped / name
    folder = root / name
    if not folder.is_dir():
        sets = ", ".join(sorted(p.name for p in shipped.iterdir() if p.is_dir()))
        raise ConfigError(f"sdk templates = {name!r}: neither a shipped template set ({sets}) nor a folder ({folder})")
    return folder


def _checked(written: Mapping[str, str], version: int | None = None) -> None:
    unknown = sorted(set(written) - set(SETTING_KEYS))
    if unknown:
        table = f"[tool.acp-codegen.v{version}.sdk]" if version else "sdk"
        raise ConfigError(f"{table}: unknown key {unknown[0]!r}; the keys are {', '.join(SETTING_KEYS)}")


def wiring_of(config: Config, version: int, generation: Generation) -> Wiring | None:
    """The wiring a configuration asks of one version of a generation (its ``sdk`` table),
    or None where it asks none."""
    written = config.sdk(version)
    if not written:
        return None
    if "models" not in written:
        raise ConfigError(f"[tool.acp-codegen.v{version}.sdk]: 'models' is missing (the SDK's module of the models)")
    _checked(written, version)
    arguments = generation_arguments(config)
    settings = arguments["settings"]
    selected = next(p for p in generation.protocols if p.version == version)
    sources = next(s for s in generation.sources if int(s.meta.data["version"]) == version)
    meta = sources.meta.data
    off = gated_off((s.data for s in sources.schemas), selected.features).methods
    every = frozenset(meta.get("features", {}))
    complete = selected
    if every != frozenset(selected.features):
        try:
            with schema_location(config.fragments) as schema_dir:
                protocols, _ = load_protocols(
                    schema_dir, every, config.root, config.bases, settings, arguments["versions"]
                )
            complete = next(p for p in protocols if p.version == version)
        except SchemaError:
            pass  # a base older than what a feature extends: no feature can be on, none to take out
    models = config.root / written["models"]
    if not models.is_file():
        raise ConfigError(f"[tool.acp-codegen.v{version}.sdk]: models = {written['models']!r}: no such file")
    src, _ = locate(models)
    stable, gate_note = stable_methods(config, version)
    options = settings.of(version).options
    served = _bridge_plan(generation, version, written)
    host = f"{module_of(config.out.absolute(), src)}.{BRIDGE_HOST}" if served and served.served else None
    sdk = Sdk(config.root, src, models, written, options, arguments["style"], stable, chosen_names(config), host)
    out = wire(sdk, complete, selected, meta, off)
    if served is not None:
        out.serves = (
            f"serves: protocol 1, and 2 through the version bridge ({served.why})"
            if served.served
            else f"serves: protocol 1 only, no version bridge ({served.why})"
        )
    # said where the listing was read: a method wired anew, or a route the SDK gates itself
    if gate_note and (out.added or out.notes):
        out.notes.insert(0, gate_note)
    return out


def _bridge_plan(generation: Generation, version: int, written: Mapping[str, str]) -> BridgePlan | None:
    """Whether the SDK's agent connection (of protocol 1, which the agent speaks) serves a
    client of protocol 2 through the generated package's version bridge; None where the
    package has no v2 or the SDK no agent connection, and nothing is said."""
    if version != 1 or len(generation.protocols) < 2 or "agent-connection" not in written:
        return None
    return generation.bridge


def _context(before: str) -> dict[str, Any]:
    """What the template sees of the file it replaces: its leading comments, its names."""
    comments = []
    for line in before.splitlines():
        if not line.startswith("#"):
            break
        comments.append(Code(line))
    try:
        tree = ast.parse(before)
    except SyntaxError:
        return {"comments": comments, "names": []}
    names = [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]
    return {"comments": comments, "names": names}


@dataclass(frozen=True)
class Sdk:
    """The SDK a wiring changes: its repository, source root, schema module and settings."""

    root: Path
    src: Path
    schema_module: Path
    setting: Mapping[str, str]
    options: ModelOptions
    style: Style
    stable: frozenset[tuple[str, str]] | None = None  # the base's stable methods (gates.stable_methods)
    names: Mapping[str, str] = field(default_factory=dict)  # method-names: wire name -> Python name
    bridge: str | None = None  # the version bridge's host the agent connection hands its streams to (dotted)


def wire(
    sdk: Sdk, complete: Protocol, selected: Protocol, meta: Mapping[str, Any], off: frozenset[tuple[str, str]]
) -> Wiring:
    """The SDK files' new texts. ``complete``/``selected``: the version with every feature /
    with the selected ones, both under the SDK's names; ``meta``: the version's meta file;
    ``off``: the methods of features that are off (``features.gated_off``)."""
    files = {role: sdk.root / path for role, path in sdk.setting.items() if role in ROLES}
    found = conventions(files)
    # the SDK's names: what it routes and sends, else the protocol method that takes the params class
    known = {**{m.key: found.takers[m.params] for m in complete.methods if m.params in found.takers}, **found.known}
    table = method_table(complete, meta, selected.features, sdk.options, known, found.unstable, sdk.stable, sdk.names)
    routers = {side: role for role, side in ROUTERS.items() if role in files and role in found.functions}
    out = Wiring(
        routes={m.key: m.wire for m in table if "agent" in routers and m.side == "agent" and m.feature and m.enabled}
    )
    out.added = [
        f"{m.wire} -> {m.name} ({m.side}{', unstable' if m.unstable else ''})"
        for m in table
        if m.side in routers and m.enabled and not m.union and (m.side, m.key) not in found.routed
    ]
    out.notes = disagreements(table, found.routed, found.unstable, sdk.stable, sdk.names)
    unions = [
        m.wire for m in table if m.side in routers and m.enabled and m.union and (m.side, m.key) not in found.routed
    ]
    if unions:  # (the SDK wires such a method by hand, as 0.12.1 wires session/set_config_option)
        out.notes.append(f"not wired, their params a union (wire them by hand): {', '.join(dict.fromkeys(unions))}")
    listing: dict[str, dict[str, str]] = {"agent": {}, "client": {}, "protocol": {}}
    for side, key, wire_name in meta_listing(complete, meta, off):
        listing.setdefault(side, {})[key] = wire_name
    env = environment(template_set(sdk.setting.get("templates", SHIPPED), sdk.root))
    befores, rendered = {}, {}
    for role, path in files.items():
        name = display_name(path, sdk.root)
        try:
            template = env.get_template(role.replace("-", "_") + ".py.jinja")
            befores[role] = path.read_text(encoding="utf-8")
            context = {
                "methods": list(table),
                "version": selected.version,
                "features": list(selected.features),
                "listing": listing,
                "targets": {
                    "classes": found.classes.get(role, {}),
                    "function": found.functions.get(role, ""),
                    "table": TABLES.get(ROUTERS.get(role) or SENDERS.get(role, ""), ""),
                },
                "existing": _context(befores[role]),
            }
            rendered[f"{role}.py"] = template.render(**context)
        except jinja2.TemplateNotFound:
            continue  # the set makes nothing of this role
        except (OSError, UnicodeDecodeError, jinja2.TemplateError, ValueError) as exc:
            out.problems[name] = f"{exc}; left as it is"
    laid_out = _shadowing_marked(format_modules(rendered, sdk.style), sdk.style)  # all roles in one formatter run
    imports = _Imports(sdk, complete, selected)
    edits: dict[str, Edit | str] = {}  # role -> its edit, or the meta module's new text
    for role, path in files.items():
        if f"{role}.py" not in laid_out:
            continue
        text = laid_out[f"{role}.py"]
        try:
            edits[role] = (
                text if role == "meta" else _merged(sdk, path, befores[role], text, role, found, table, imports)
            )
        except cst.ParserSyntaxError as exc:
            out.problems[display_name(path, sdk.root)] = f"cannot parse it ({str(exc).splitlines()[0]}); left as it is"
        except (AdoptError, ValueError, RuntimeError) as exc:
            out.problems[display_name(path, sdk.root)] = f"{exc}; left as it is"
    laid_out_anew([e for e in edits.values() if isinstance(e, Edit)], sdk.style)  # one formatter run again
    for role, edit in edits.items():
        path = files[role]
        name, before = display_name(path, sdk.root), befores[role]
        after, changes = (
            (edit, ["regenerated by the template set"]) if isinstance(edit, str) else (edit.module.code, edit.changes)
        )
        out.modules.append(module_of(path, sdk.src))
        function = found.functions.get(role, "")
        if role == "agent-router" and (unrouted := _unrouted(after, function, out.routes)):
            out.problems[name] = f"{function} does not route {', '.join(unrouted)} after the wiring"
            continue
        if after != before:
            out.texts[path], out.before[path] = after, before
            out.changes += [f"{name}: {c}" for c in changes]
    return out


def _shadowing(tree: ast.Module) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.arg]]:
    """(def, parameter) of each parameter that takes a builtin's name."""
    return [
        (fn, a)
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        for a in (*fn.args.args, *fn.args.kwonlyargs)
        if a.arg in _BUILTINS
    ]


def _shadowing_marked(texts: Mapping[str, str], style: Style) -> dict[str, str]:
    """Rendered modules with ``# noqa: A002`` on each line where a parameter takes a
    builtin's name (``id``: the keyword must be the params class's field, as the SDK's
    router passes them), as a maintainer silences the linter there. A def laid out over
    several lines gets one parameter a line first (a trailing comma), so that the comment
    stays on the parameter's line when the SDK's formatter runs."""
    trees = {}
    for name, text in texts.items():
        try:
            trees[name] = ast.parse(text)
        except SyntaxError:
            continue
    again = {}
    for name, tree in trees.items():
        lines = texts[name].splitlines(keepends=True)
        for fn, _ in {id(fn): (fn, a) for fn, a in _shadowing(tree)}.values():
            params = [*fn.args.args, *fn.args.kwonlyargs, *([fn.args.kwarg] if fn.args.kwarg else [])]
            last = params[-1]
            line = lines[last.lineno - 1]
            shared = len({p.lineno for p in params}) < len(params)
            if fn.lineno != last.lineno and shared and not line[last.end_col_offset or 0 :].lstrip().startswith(","):
                at = last.end_col_offset or 0
                lines[last.lineno - 1] = line[:at] + "," + line[at:]
        if "".join(lines) != texts[name]:
            again[name] = "".join(lines)
    out = {**texts, **(format_modules(again, style) if again else {})}
    for name in trees:
        lines = out[name].splitlines(keepends=True)
        for i in sorted({a.lineno - 1 for _, a in _shadowing(ast.parse(out[name]))}):
            if "#" not in lines[i]:
                lines[i] = lines[i].rstrip("\n") + "  # noqa: A002\n"
        out[name] = "".join(lines)
    return out


def _unrouted(text: str, function: str, routes: Mapping[str, str]) -> list[str]:
    """The features' methods (meta key -> wire name) the router function does not route."""
    fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == function)
    routed = {_key(call.args[0]) for call in _routes(fn)}
    return [wire_name for key, wire_name in routes.items() if key not in routed]


class _Imports:
    """Where the names new code uses come from: the models from the SDK's models module,
    the rest from the package module that defines them (looked up only when needed)."""

    def __init__(self, sdk: Sdk, complete: Protocol, selected: Protocol) -> None:
        self.sdk = sdk
        self.schema = module_of(sdk.schema_module, sdk.src)
        self.public = set(complete.types) | _bound_names(sdk.schema_module)
        self.removable = set(complete.types) - set(selected.types)  # a feature's that is off

    @functools.cached_property
    def homes(self) -> dict[str, str]:
        """Each top-level function and class of the package -> the module defining it."""
        top = self.sdk.src / self.schema.split(".")[0]
        out: dict[str, str] = {}
        for file in sorted(top.rglob("*.py")):
            if file == self.sdk.schema_module or "__pycache__" in file.parts:
                continue
            tree = _parsed(file)
            for node in tree.body if tree else ():
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    out.setdefault(node.name, module_of(file, self.sdk.src))
        return out

    def home(self, name: str) -> str | None:
        return self.schema if name in self.public else self.homes.get(name)


def _merged(
    sdk: Sdk,
    path: Path,
    before: str,
    rendered: str,
    role: str,
    found: Conventions,
    table: tuple[SdkMethod, ...],
    imports: _Imports,
) -> Edit:
    edit = Edit(path, before)
    source = cst.parse_module(rendered)
    if role in ROUTERS:
        merge_function(edit, source, found.functions.get(role, ""), ROUTERS[role], table)
    else:
        for side, name in found.classes.get(role, {}).items():
            merge_class(edit, source, name, side, table)
            if role == "agent-connection":
                bridge_hook(edit, name, relative(sdk.bridge, module_of(path, sdk.src)) if sdk.bridge else None)
    if edit.changes:
        add_imports(edit, sdk.src, imports.schema, imports.removable, imports.home)
    return edit


def _bound_names(module: Path) -> set[str]:
    """Names a module imports (the schema module's base class, after adopt)."""
    tree = _parsed(module)
    return {a.asname or a.name for n in (tree.body if tree else ()) if isinstance(n, ast.ImportFrom) for a in n.names}
