"""The breaking-change rules: one per kind of change, with its wire and code verdicts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    id: str
    what: str  # the change, as the table in docs/diff.md says it
    sender: bool  # breaks whoever sends a request that uses the type
    receiver: bool  # breaks whoever receives a response or notification that uses the type
    why: str


RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("type-added", "type added", False, False, "nothing used it before"),
        Rule("type-removed", "type removed", False, False, "not on the wire; its users' changes are reported there"),
        Rule("type-renamed", "type renamed, same shape", False, False, "type names never reach the wire"),
        Rule("type-kind-changed", "type becomes another kind (object, enum, union, alias)", True, True, "incompatible"),
        Rule("property-added-optional", "optional property added", False, False, "old peers omit or ignore it"),
        Rule("property-added-required", "required property added", True, False, "old senders omit it"),
        Rule("property-removed-optional", "optional property removed", False, False, "unknown properties are kept"),
        Rule("property-removed-required", "required property removed", False, True, "old receivers expect it"),
        Rule(
            "property-removed-closed",
            "optional property removed from an object that refuses unknown properties",
            True,
            False,
            "old senders may still send it",
        ),
        Rule(
            "property-removed-required-closed",
            "required property removed from an object that refuses unknown properties",
            True,
            True,
            "old senders still send it; old receivers expect it",
        ),
        Rule("property-made-required", "property becomes required", True, False, "old senders may omit it"),
        Rule("property-made-optional", "property becomes optional", False, True, "old receivers expect it"),
        Rule("nullable-added", "`null` becomes allowed", False, True, "old receivers refuse `null`"),
        Rule("nullable-removed", "`null` no longer allowed", True, False, "old senders may send `null`"),
        Rule("type-changed", "value type changed (e.g. string to integer)", True, True, "incompatible"),
        Rule("format-changed", "string/number format changed", True, True, "values valid for one may not be valid"),
        Rule("ref-changed", "reference to another type (not a rename)", True, True, "a different shape"),
        Rule("const-changed", "constant value changed", True, True, "incompatible"),
        Rule("enum-value-added", "value added to a closed enum", False, True, "old receivers refuse it"),
        Rule("enum-value-removed", "value removed from a closed enum", True, False, "old senders may send it"),
        Rule("enum-value-added-open", "value added to an open enum", False, False, "any string was accepted"),
        Rule("enum-value-removed-open", "value removed from an open enum", False, False, "any string is accepted"),
        Rule("enum-opened", "closed enum becomes open", False, True, "old receivers refuse other strings"),
        Rule("enum-closed", "open enum becomes closed", True, False, "old senders may send other strings"),
        Rule("variant-added", "union variant added", False, True, "old receivers cannot parse it"),
        Rule("variant-removed", "union variant removed", True, False, "old senders may send it"),
        Rule(
            "message-variant-added",
            "a method's message added to a union of messages",
            False,
            False,
            "reported as the method; nobody sees it before using the method",
        ),
        Rule(
            "message-variant-removed",
            "a method's message removed from a union of messages",
            False,
            False,
            "reported as the method, where it breaks",
        ),
        Rule("discriminator-changed", "union discriminator changed", True, True, "variants are told apart differently"),
        Rule("bases-changed", "object extends other types", True, True, "a different shape"),
        Rule("extra-closed", "object stops accepting unknown properties", True, False, "old senders may add some"),
        Rule("extra-opened", "object starts accepting unknown properties", False, True, "old receivers refuse them"),
        Rule("default-changed", "default value changed", True, True, "an omitted value means something else"),
        Rule(
            "default-extended",
            "object default gains keys, the old ones unchanged",
            False,
            False,
            "defaults of properties added beside it",
        ),
        Rule("feature-gated", "item becomes gated by a feature", True, True, "it leaves the stable surface"),
        Rule("feature-stabilised", "item no longer gated by a feature", False, False, "it joins the stable surface"),
        Rule("method-added", "method added", False, False, "old peers never call it"),
        Rule("method-removed", "method removed", True, True, "calls get -32601 (method not found)"),
        Rule("method-side-changed", "method moves to the other side (x-side)", True, True, "the other peer handles it"),
        Rule("method-kind-changed", "request becomes notification or back", True, True, "a reply is expected or not"),
        Rule("method-type-changed", "method's params or result type replaced", True, True, "a different shape"),
        Rule("version-added", "protocol version added", False, False, "old peers never negotiate it"),
        Rule("version-removed", "protocol version removed", True, True, "peers that speak only it are cut off"),
    )
}


def rules_markdown() -> str:
    """The table of breaking-change rules in docs/diff.md, from ``RULES``."""
    lines = [
        "| rule | change | breaks a sender of requests | breaks a receiver of responses / notifications | why |",
        "| --- | --- | :---: | :---: | --- |",
    ]
    for r in RULES.values():
        yes = {True: "yes", False: "no"}
        lines.append(f"| `{r.id}` | {r.what} | {yes[r.sender]} | {yes[r.receiver]} | {r.why} |")
    return "\n".join(lines) + "\n"
