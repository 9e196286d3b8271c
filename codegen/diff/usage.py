"""Where each type is used: which messages reach it, who sends and who receives them, and so
whom a wire break there hits in each direction (an old sender to a new receiver, a new
sender to an old receiver)."""

from __future__ import annotations

from dataclasses import dataclass

from ..protocol.ir import Protocol, TypeDef
from ..schema_terms import message_role

REQUEST, RESPONSE, NOTIFICATION = "request", "response", "notification"
OLD_TO_NEW, NEW_TO_OLD = "old-to-new", "new-to-old"  # an old sender to a new receiver, and back
DIRECTIONS = (OLD_TO_NEW, NEW_TO_OLD)

# --- where each type is used ---------------------------------------------------------------


@dataclass(frozen=True)
class Use:
    role: str  # REQUEST (params), RESPONSE (a result) or NOTIFICATION
    old_to_new: str  # who breaks when an old sender's message meets a new receiver, in words
    new_to_old: str  # who breaks when a new sender's message meets an old receiver
    sender: str = ""  # whose code builds the message ("agents", "clients"; "" when any peer's)
    receiver: str = ""  # whose code reads it

    def who(self, direction: str) -> str:
        return self.old_to_new if direction == OLD_TO_NEW else self.new_to_old


OTHER = {"agent": "clients", "client": "agents"}
SELF = {"agent": "agents", "client": "clients"}


def message_use(role: str, message: str, sender: str, receiver: str) -> Use:
    """A message's use, named by the party that sees the failure: a request's sender (its call
    fails or is answered differently), a response's or notification's receiver."""
    parties = (_party(sender), _party(receiver))
    if role == REQUEST:
        return Use(
            role,
            f"old {sender} sending {message} to new {receiver}",
            f"new {sender} sending {message} to old {receiver}",
            *parties,
        )
    return Use(
        role,
        f"new {receiver} receiving {message} from old {sender}",
        f"old {receiver} receiving {message} from new {sender}",
        *parties,
    )


def _party(name: str) -> str:
    """A side whose code a change can break, or "" where any peer's may ("peers")."""
    return name if name in OTHER.values() else ""


def call_use(kind: str, method: str, side: str) -> Use:
    """A method's own use (its table entry): a request's callers, a notification's receivers."""
    handler, caller = SELF.get(side, "peers"), OTHER.get(side, "peers")
    if kind == "request":
        return Use(
            REQUEST,
            f"old {caller} calling `{method}` on new {handler}",
            f"new {caller} calling `{method}` on old {handler}",
            _party(caller),
            _party(handler),
        )
    return message_use(NOTIFICATION, f"`{method}`", caller, handler)


# A type no method reaches: every direction is assumed.
UNREACHED = {
    OLD_TO_NEW: "old senders to new receivers of messages that use it (not reachable from any method)",
    NEW_TO_OLD: "new senders to old receivers of messages that use it (not reachable from any method)",
}


def type_refs(t: TypeDef) -> set[str]:
    out = set(t.bases)
    for f in t.fields:
        out |= set(f.type.refs())
    for v in t.variants:
        out |= set(v.refs())
    out |= set(t.target.refs() if t.target else ())
    return out


def usage(protocol: Protocol) -> dict[str, set[Use]]:
    """For each type, the messages it is reachable from, with who sends and receives them."""
    roots: list[tuple[str, Use]] = []
    for m in protocol.methods:
        handler, caller = SELF.get(m.side, "peers"), OTHER.get(m.side, "peers")
        if m.kind == "request":
            roots.append((m.params, message_use(REQUEST, f"`{m.name}`", caller, handler)))
            if m.result:
                roots.append((m.result, message_use(RESPONSE, f"`{m.name}` results", handler, caller)))
        else:  # a notification goes to the side that handles it
            roots.append((m.params, message_use(NOTIFICATION, f"`{m.name}`", caller, handler)))
    uses = _reach(protocol, roots)
    # Message types without a method entry (upstream's AgentRequest... envelopes, or an
    # InitializeResponse whose method is not declared) decide only for what no method reaches.
    covered = {name for name, _ in roots}
    by_name = []
    for name in sorted(protocol.types):
        role = message_role(name)
        if name not in covered and role is not None:
            by_name.append((name, message_use(role, f"`{name}`", "peers", "peers")))
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
