"""The SDK wiring's hand-over to the version bridge (``base-v2``): where the generated
package has the bridge, the SDK's agent connection (the ``agent-connection`` role) hands the
byte streams it builds its connection on to the package's ``bridge.bridged_streams`` (the
runtime's ``_bridge_asyncio``), so that its unchanged protocol 1 agent also serves a client of
protocol 2; where it has not, the hand-over goes again. An edit with libcst, as ``edits``
makes the others (see ``wire.py``)."""

from __future__ import annotations

import itertools

import libcst as cst

from ...errors import AdoptError
from .edits import Edit, _code, _find, _params_of

# The generated package's module whose ``bridged_streams`` (the version bridge's asyncio host)
# an agent's connection hands its byte streams to where the package serves protocol 2.
BRIDGE_HOST = "bridge"
BRIDGE_FUNCTION = "bridged_streams"
_BRIDGE_COMMENT = "# acp-codegen: a client of protocol 2 is served through the version bridge (base-v2)."


def bridge_hook(edit: Edit, name: str, host: str | None) -> None:
    """Class ``name``'s ``__init__`` hands the byte streams it builds its connection on to the
    version bridge's host (``host``: the module, as this file imports it), right before it
    builds it; with ``host`` None, no longer. The streams are the two parameters of
    ``__init__`` that a call there passes side by side (``Connection(handler, input_stream,
    output_stream)``); the host tells the reader from the writer, and leaves anything else
    (a message transport) as it is. The import is local: the SDK imports nothing more until
    a connection is made."""
    cls = _find(edit.module.body, cst.ClassDef, name)
    init = _find(cls.body.body, cst.FunctionDef, "__init__") if isinstance(cls, cst.ClassDef) else None
    if init is None:
        raise AdoptError(f"no {name}.__init__ to hand its streams to the version bridge")
    params = set(_params_of(init)) - {"self"}
    hook = _Hook(params, host)
    new = init.visit(hook)
    if host is not None and not hook.placed:
        raise AdoptError(f"{name}.__init__ passes no two of its parameters side by side to a call (its streams)")
    if new.deep_equals(init):
        return
    assert isinstance(new, cst.FunctionDef)
    body = [new if n is init else n for n in cls.body.body]
    new_cls = cls.with_changes(body=cls.body.with_changes(body=body))
    edit.module = edit.module.with_changes(body=[new_cls if n is cls else n for n in edit.module.body])
    if host is None:
        edit.changes.append(f"{name} no longer serves protocol 2 through the version bridge")
    elif hook.added:
        edit.changes.append(f"{name} serves protocol 2 through the version bridge ({hook.streams})")


def _is_hook(node: cst.CSTNode) -> bool:
    """A statement of the hook: its import of the host's function, or its call."""
    if not isinstance(node, cst.SimpleStatementLine):
        return False
    stmt = node.body[0]
    if isinstance(stmt, cst.ImportFrom) and not isinstance(stmt.names, cst.ImportStar):
        return any(a.name.value == BRIDGE_FUNCTION for a in stmt.names if isinstance(a.name, cst.Name))
    value = stmt.value if isinstance(stmt, cst.Assign) else None
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == BRIDGE_FUNCTION


class _Hook(cst.CSTTransformer):
    """The hook's statements taken out of every block of a def, and (``host`` given) put
    right before the first statement that passes two of ``params`` side by side to a call."""

    def __init__(self, params: set[str], host: str | None) -> None:
        super().__init__()
        self.params, self.host = params, host
        self.placed = self.added = False
        self.streams = ""

    def _streams(self, node: cst.CSTNode) -> tuple[str, str] | None:
        found: list[tuple[str, str]] = []
        params = self.params

        class Calls(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                names = [a.value.value if isinstance(a.value, cst.Name) and not a.keyword else "" for a in call.args]
                found.extend((a, b) for a, b in itertools.pairwise(names) if {a, b} <= params and a != b)

        node.visit(Calls())
        return found[0] if found else None

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = list(updated.body)
        kept = [n for n in body if not _is_hook(n)]
        at = (
            None
            if self.host is None or self.placed
            else next(
                (i for i, n in enumerate(kept) if isinstance(n, cst.SimpleStatementLine) and self._streams(n)), None
            )
        )
        if at is not None:
            streams = self._streams(kept[at])
            assert streams is not None
            self.placed, self.streams = True, ", ".join(streams)
            hook = list(
                cst.parse_module(  # (after a statement: a module's first comment is its header)
                    f"pass\n{_BRIDGE_COMMENT}\nfrom {self.host} import {BRIDGE_FUNCTION}\n\n"
                    f"{streams[0]}, {streams[1]} = {BRIDGE_FUNCTION}({streams[0]}, {streams[1]})\n"
                ).body[1:]
            )
            hook[-1] = hook[-1].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
            kept[at:at] = hook
        if [_code(n) for n in kept] == [_code(n) for n in body]:
            return updated
        self.added = self.added or at is not None
        return updated.with_changes(body=kept)
