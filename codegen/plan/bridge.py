"""Whether a package gets the version bridge, and otherwise why.

The bridge (the runtime's ``_bridge``, bound to the package by ``templates/bridge.py.jinja``)
serves a client of protocol 2 in front of an agent of protocol 1. It speaks the prompt
lifecycle of upstream's 2026-11 draft (a prompt answered with the user message's id, the
session's ``state_update``, ``replayFrom``) and changes every value through the package's
conversions. So a package gets it only where both versions are generated with
conversions, and the v2 draft and the conversions have everything it uses: otherwise it
would serve half a protocol. The plan says which, for ``generate`` and ``adopt`` to report.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..protocol.ir import Protocol
from ..schema_terms import schema_nodes
from .conversions import ConversionPlan

# The methods the bridge converts (both versions define them, and the conversions pair them).
METHODS = (
    "initialize",
    "session/new",
    "session/prompt",
    "session/cancel",
    "session/update",
    "session/request_permission",
    "session/set_config_option",
    "session/resume",
    "session/list",
    "session/close",
)
# v2 session updates the bridge writes, and v1's it reads (the chunks it gives message ids).
V2_UPDATES = ("state_update", "user_message", "config_option_update")
V1_UPDATES = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")
# The values the bridge supplies to the v1 -> v2 conversions: what of v2 v1 does not carry.
SUPPLIES = ("messageId", "planId", "info")
DRAFT = "2026-11"


@dataclass(frozen=True)
class BridgePlan:
    """``served``: the package gets ``bridge.py``; ``why`` says what it serves, or why not."""

    served: bool
    why: str

    def line(self) -> str:
        """The report's line."""
        if self.served:
            return f"bridge: a v2 client in front of a v1 agent ({self.why})"
        return f"bridge: none ({self.why})"


def _fields(protocol: Protocol, type_name: str | None) -> set[str]:
    found = protocol.types.get(type_name or "")
    return {f.name for f in found.fields} if found is not None else set()


def _update_kinds(protocol: Protocol) -> set[str]:
    """The ``sessionUpdate`` tags the version's schema names."""
    kinds = set()
    for _, node in schema_nodes(protocol.schema):
        tag = node.get("properties", {}).get("sessionUpdate")
        if isinstance(tag, dict) and isinstance(tag.get("const"), str):
            kinds.add(tag["const"])
    return kinds


def bridge_plan(protocols: tuple[Protocol, ...], conversions: ConversionPlan | None) -> BridgePlan:
    """The first thing the bridge needs that the package lacks, or what it serves."""
    by_version = {p.version: p for p in protocols}
    if set(by_version) != {1, 2}:
        return BridgePlan(False, "it needs protocol versions 1 and 2 both generated")
    if conversions is None:
        return BridgePlan(False, "it needs the v1 <-> v2 conversions, which are off")
    v1, v2 = by_version[1], by_version[2]
    paired = {m.name for m in conversions.methods if m.version == 2}
    for method in METHODS:
        if method not in paired:
            return BridgePlan(False, f"{method} is not a method both versions define")
    prompt = {m.name: m for m in v2.methods}["session/prompt"]
    if "messageId" not in _fields(v2, prompt.result):
        return BridgePlan(
            False,
            f"v2's session/prompt answers no messageId: the bridge serves the prompt lifecycle of"
            f" upstream's {DRAFT} draft, which this v2 predates",
        )
    resume = {m.name: m for m in v2.methods}["session/resume"]
    if "replayFrom" not in _fields(v2, resume.params):
        return BridgePlan(False, f"v2's session/resume takes no replayFrom (upstream's {DRAFT} draft does)")
    for protocol, kinds in ((v2, V2_UPDATES), (v1, V1_UPDATES)):
        missing = [k for k in kinds if k not in _update_kinds(protocol)]
        if missing:
            return BridgePlan(False, f"v{protocol.version} has no session update {missing[0]!r}")
    supplied = {
        key
        for c in conversions.converters
        if (c.source, c.target) == (1, 2)
        for key in (*(f.supply for f in c.supplies), *(s.supply for s in c.supplied))
    }
    missing = [key for key in SUPPLIES if key not in supplied]
    if missing:
        return BridgePlan(False, f"the v1 -> v2 conversions take no supplied {missing[0]!r}")
    return BridgePlan(True, f"v2 as of upstream's {DRAFT} draft")
