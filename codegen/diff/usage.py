"""Where each type is used: which messages reach it, and so whom a wire break there hits."""

from __future__ import annotations

from dataclasses import dataclass

from ..protocol.ir import Protocol, TypeDef
from ..schema_terms import message_role

SENDER = "request"
RECEIVER = "response"

# --- where each type is used ---------------------------------------------------------------


@dataclass(frozen=True)
class Use:
    position: str  # SENDER (in request params) or RECEIVER (in a result or a notification)
    who: str  # the affected party, in words


OTHER = {"agent": "clients", "client": "agents"}
SELF = {"agent": "agents", "client": "clients"}


def type_refs(t: TypeDef) -> set[str]:
    out = set(t.bases)
    for f in t.fields:
        out |= set(f.type.refs())
    for v in t.variants:
        out |= set(v.refs())
    out |= set(t.target.refs() if t.target else ())
    return out


def usage(protocol: Protocol) -> dict[str, set[Use]]:
    """For each type, the positions it is reachable from and whom a breaking change there hits."""
    roots: list[tuple[str, Use]] = []
    for m in protocol.methods:
        caller = OTHER.get(m.side, "peers")
        if m.kind == "request":
            roots.append((m.params, Use(SENDER, f"{caller} sending `{m.name}`")))
            if m.result:
                roots.append((m.result, Use(RECEIVER, f"{caller} receiving `{m.name}` results")))
        else:
            roots.append((m.params, Use(RECEIVER, f"{SELF.get(m.side, 'peers')} receiving `{m.name}`")))
    uses = _reach(protocol, roots)
    # Message types without a method entry (upstream's AgentRequest... envelopes, or an
    # InitializeResponse whose method is not declared) decide only for what no method reaches.
    covered = {name for name, _ in roots}
    by_name = []
    for name in sorted(protocol.types):
        role = message_role(name)
        if name not in covered and role is not None:
            position = SENDER if role == "request" else RECEIVER
            verb = "sending" if position == SENDER else "receiving"
            by_name.append((name, Use(position, f"peers {verb} `{name}`")))
    for name, found in _reach(protocol, by_name).items():
        uses.setdefault(name, found)
    return uses


def _reach(protocol: Protocol, roots: list[tuple[str, Use]]) -> dict[str, set[Use]]:
    uses: dict[str, set[Use]] = {}
    for root, use in roots:
        stack = [root]
        while stack:
            name = stack.pop()
            if name not in protocol.types or use in uses.get(name, ()):
                continue
            uses.setdefault(name, set()).add(use)
            stack.extend(type_refs(protocol.types[name]))
    return uses
