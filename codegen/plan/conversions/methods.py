"""The methods both versions define (by name or a declared rename), each kind apart (a
request, a notification), those of one version only, and the scope conversions cover over
upstream bases: what those methods reach."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ...errors import Problem
from ...protocol.ir import Method, Protocol
from ...schema_terms import message_role, sides_of
from .compare import Comparison
from .declarations import CONVERSIONS_FILE, Declarations
from .plan_types import MethodMap


def every_kind(proto: Protocol) -> Protocol:
    """``proto`` with each method in every kind its schema defines it. The IR lists a method
    that is a request and a notification at once (upstream's ``mcp/message``, 2026-11's
    ``proxy/successor``) as the request; a message says which it is by its id, so each
    kind converts apart."""
    added = []
    have = {(m.name, m.side, m.kind) for m in proto.methods}
    for m in proto.methods:
        carriers = {
            message_role(proto.chosen_names.get(t.name, t.name)): t.name
            for t in proto.types.values()
            if t.method == m.name and m.side in sides_of(t.side)
        }
        for kind in ("request", "notification"):
            if kind in carriers and (m.name, m.side, kind) not in have:
                have.add((m.name, m.side, kind))
                result = carriers.get("response") if kind == "request" else None
                added.append(replace(m, kind=kind, params=carriers[kind], result=result))
    return replace(proto, methods=proto.methods + tuple(added)) if added else proto


def check_methods(cmp: Comparison) -> list[MethodMap]:
    """The methods both versions define (by name, or as declared renames), each kind apart
    and with its counterpart's name; a method, or a kind of one, of one version only must
    be declared."""
    out = []
    decl = cmp.decl

    def alone(m: Method, version: int) -> bool:
        return one_version_only(decl, cmp.v1, cmp.v2, m, version)

    v2_by_kind = {(m.name, m.kind): m for m in cmp.v2.methods if not alone(m, 2)}
    v1_kinds = set()
    renamed_back = {v: k for k, v in decl.method_renames.items()}
    for m in cmp.v1.methods:
        v1_kinds.add((m.name, m.kind))
        name2 = decl.method_renames.get(m.name, m.name)
        m2 = v2_by_kind.get((name2, m.kind)) if not alone(m, 1) else None
        if m2 is None:
            _method_only_in(cmp, m, 1)
            continue
        expected = (decl.type_name(2, m.params), decl.type_name(2, m.result) if m.result else None)
        if (m2.params, m2.result) != expected:
            cmp.problems.append(
                Problem(
                    decl.source.name,
                    "",
                    f"method {m.name}: v1 {m.kind} {m.params} -> {m.result}, v2 {m2.kind} {m2.params} -> {m2.result}",
                )
            )
            continue
        if m.name in decl.method_renames:
            cmp.used.add(("renamedMethods", list(decl.method_renames).index(m.name)))
        out.append(MethodMap(1, m.name, m.kind, m.params, m.result, m2.name))
        out.append(MethodMap(2, m2.name, m2.kind, m2.params, m2.result, m.name))
    for m2 in cmp.v2.methods:
        if (renamed_back.get(m2.name, m2.name), m2.kind) not in v1_kinds or alone(m2, 2):
            _method_only_in(cmp, m2, 2)
    for version, proto in ((1, cmp.v1), (2, cmp.v2)):
        # One method on two sides converts alike when its types are the same (mcp/message).
        specs: dict[tuple[str, str], set[tuple[str, str | None]]] = {}
        for m in proto.methods:
            if not alone(m, version):
                specs.setdefault((m.name, m.kind), set()).add((m.params, m.result))
        for name, kind in sorted(k for k, s in specs.items() if len(s) > 1):
            cmp.problems.append(
                Problem(decl.source.name, "", f"v{version} {kind} {name} exists on two sides; messages cannot tell")
            )
    unique = {(m.version, m.name, m.kind): m for m in out}
    return sorted(unique.values(), key=lambda m: (m.version, m.name, m.kind))


def one_version_only(decl: Declarations, v1: Protocol, v2: Protocol, m: Method, version: int) -> bool:
    """A method declared of one version only, where the other version lacks it in that kind
    or has it in another shape (mcp/message: schema-v1.19.0's request on a connection, 2026-11's
    v2 request naming its server, declared for both). Where a pair has it alike in both versions
    it converts: one file declares what older releases lack (2026-11's session/status before v1
    had it) without refusing it between newer ones."""
    if (version, m.name) not in decl.methods_only_in:
        return False
    other = next((o for o in (v2 if version == 1 else v1).methods if (o.name, o.kind) == (m.name, m.kind)), None)
    if other is None:
        return True
    one, two = (m, other) if version == 1 else (other, m)
    mapped = (decl.type_name(2, one.params), decl.type_name(2, one.result) if one.result else None)
    # The types' kinds too (schema-v1.19.0's mcp/message answers any value, 2026-11's a union of
    # two); declared of both versions, their fields too (schema-v1.19.0's mcp/message names a
    # connection, 2026-11's a server and a request; 2026-11's own v1 and v2 alike convert).
    both = (3 - version, m.name) in decl.methods_only_in
    shapes = [tuple(_shape(p, t, both) for t in (x.params, x.result)) for p, x in ((v1, one), (v2, two))]
    return mapped != (two.params, two.result) or shapes[0] != shapes[1]


def _shape(proto: Protocol, name: str | None, fields: bool) -> tuple[str, tuple[str, ...]] | None:
    found = proto.types.get(name or "")
    if found is None:
        return None
    return found.kind, tuple(sorted(f.name for f in found.fields)) if fields else ()


def _declared_alone(decl: Declarations, m: Method, version: int) -> tuple[int, str] | None:
    """The declaration (index, why) of a method, or of its kind, of one version only."""
    return decl.methods_only_in.get((version, m.name)) or decl.kinds_only_in.get((version, m.name, m.kind))


def _counterpart(decl: Declarations, name: str, version: int) -> str:
    """A method's name in the other version (the same, or a declared rename)."""
    if version == 1:
        return decl.method_renames.get(name, name)
    return next((v1 for v1, v2 in decl.method_renames.items() if v2 == name), name)


def _method_only_in(cmp: Comparison, m: Method, version: int) -> None:
    declared = _declared_alone(cmp.decl, m, version)
    if declared is not None:
        cmp.used.add(("methodsOnlyIn", declared[0]))
        return
    there = _counterpart(cmp.decl, m.name, version)
    kinds = sorted({o.kind for o in (cmp.v2 if version == 1 else cmp.v1).methods if o.name == there} - {m.kind})
    what = (
        f"method {m.name} as a {m.kind} ({m.side}) exists in v{version} only (v{3 - version} has it as a"
        f' {" and a ".join(kinds)}): declare that kind in methodsOnlyIn ("kind": "{m.kind}")'
        if kinds
        else f"method {m.name} ({m.side}) exists in v{version} only: declare it in methodsOnlyIn (or a rename in "
        "renamedMethods)"
    )
    cmp.problems.append(Problem(cmp.decl.source.name, "", f"{what} in {CONVERSIONS_FILE}"))


def refused_methods(cmp: Comparison) -> dict[int, dict[str, str]]:
    """Per version, the methods it alone has that the declarations explain, and the methods
    it alone has in one kind: why they cannot convert (a method converting in another kind
    is refused in this one only)."""
    out: dict[int, dict[str, str]] = {1: {}, 2: {}}
    for version, proto in ((1, cmp.v1), (2, cmp.v2)):
        there = {(o.name, o.kind) for o in (cmp.v2 if version == 1 else cmp.v1).methods}
        for m in proto.methods:
            whole = cmp.decl.methods_only_in.get((version, m.name))
            kind = cmp.decl.kinds_only_in.get((version, m.name, m.kind))
            if whole is not None and one_version_only(cmp.decl, cmp.v1, cmp.v2, m, version):
                out[version][m.name] = whole[1]
            elif kind is not None and (_counterpart(cmp.decl, m.name, version), m.kind) not in there:
                out[version][m.name] = kind[1]
    return out


def _reach(proto: Protocol, roots: set[str], decl: Declarations) -> set[str]:
    """Every type the roots reach. A field declared to exist in this version only is
    dropped on conversion, so what it alone reaches is out of scope."""
    dropped = {
        (d.type, d.name(proto.version))
        for d in decl.fields
        if d.name(proto.version) is not None and d.name(3 - proto.version) is None
    }
    v1_name = {v2: v1 for v1, v2 in decl.renames.items()} if proto.version == 2 else {}
    seen: set[str] = set()
    todo = sorted(r for r in roots if r in proto.types)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        td = proto.types[name]
        refs = [*td.bases, *(td.target.refs() if td.target else ())]
        v1 = v1_name.get(name, name)
        if decl.transform(1, v1) and decl.transform(2, decl.type_name(2, v1)):
            continue  # converted by functions both ways: what its fields name is not compared
        for variant in td.variants:
            alone = (proto.version, variant.ref) in decl.only_in and variant.ref not in decl.one_way.values()
            if not (variant.kind == "ref" and alone):
                refs += variant.refs()  # (a variant of this version only does not convert)
        for f in td.fields:
            if (v1_name.get(name, name), f.name) not in dropped:
                refs += f.type.refs()
        todo += [r for r in refs if r in proto.types and r not in seen]
    return seen


def method_scope(protocols: Mapping[int, Protocol], decl: Declarations) -> dict[int, Protocol]:
    """Over full upstream bases, conversions cover the messages of the methods both versions
    define: the types their params and results reach (in either version), and nothing else
    (the message envelopes, the types of a method one version alone has)."""
    reached: set[str] = set()  # by v1 name
    found: dict[int, set[str]] = {}
    v1_name = {v2: v1 for v1, v2 in decl.renames.items()}
    for version, proto in protocols.items():
        roots = {
            t
            for m in proto.methods
            if not one_version_only(decl, protocols[1], protocols[2], m, version)
            and (version, m.name, m.kind) not in decl.kinds_only_in
            for t in (m.params, m.result)
            if t is not None
        }
        found[version] = _reach(proto, roots, decl)
        reached |= {v1_name.get(n, n) for n in found[version]} if version == 2 else found[version]
    out = {}
    for version, proto in protocols.items():
        # A type of either version's reach, in its counterpart's name; and what this version's
        # own reach has under its own names (a base of only this version's hierarchy).
        names = {decl.type_name(version, n) for n in reached} | found[version]
        if version == 1:
            names |= {n for n in reached if n in decl.one_way}
        out[version] = replace(
            proto,
            types={n: t for n, t in proto.types.items() if n in names},
            methods=tuple(m for m in proto.methods if m.params in names or _declared_alone(decl, m, version)),
        )
    return out
