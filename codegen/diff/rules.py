"""The breaking-change rules: one per kind of change, with its wire and code verdicts.

On the wire every change is judged in both directions a message can travel between an old
and a new peer: an old sender's message read by a new receiver, and a new sender's message
read by an old receiver. A rule says, per direction, in which message roles it breaks:
every role (the receiver refuses or misreads the message), requests only (the receiver
silently ignores something only the old side knows, so the old caller's answer changes),
or none. ``usage`` says which roles reach a type and who sends and receives them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .usage import NOTIFICATION, OLD_TO_NEW, REQUEST, RESPONSE

ALL = frozenset({REQUEST, RESPONSE, NOTIFICATION})
REQUESTS = frozenset({REQUEST})
NO: frozenset[str] = frozenset()
SETS, READS = frozenset({"sets"}), frozenset({"reads"})
# The code-breaking rules that break one side's code only; the others break both.
_CODE_HITS = {
    "property-added-required": SETS,  # constructors must now pass it
    "property-added-required-closed": SETS,
    "property-made-required": SETS,
    "nullable-removed": SETS,  # code that passes None
    "enum-value-removed": SETS,
    "enum-closed": SETS,
    "variant-removed": SETS,  # code that builds it
    "property-made-optional": READS,  # readers get None
    "nullable-added": READS,
    "enum-opened": READS,
    "extra-closed": READS,  # parsing refuses unknown keys
    "default-changed": READS,  # an omitted attribute reads as another value
}


@dataclass(frozen=True)
class Rule:
    id: str
    what: str  # the change, as the table in docs/diff.md says it
    old_to_new: frozenset[str]  # message roles in which an old sender's message breaks with a new receiver
    new_to_old: frozenset[str]  # message roles in which a new sender's message breaks with an old receiver
    why: str
    code: bool  # breaks code written against the generated package (imports, type-checks, behaviour)
    code_why: str

    @property
    def code_hits(self) -> frozenset[str]:
        """Whose code a code break hits: code that sets the item (the message's sender's), code
        that reads it (its receiver's), or both."""
        return _CODE_HITS.get(self.id, SETS | READS) if self.code else NO

    def roles(self, direction: str) -> frozenset[str]:
        return self.old_to_new if direction == OLD_TO_NEW else self.new_to_old

    @property
    def wire(self) -> bool:
        """Breaks some message in some direction."""
        return bool(self.old_to_new or self.new_to_old)


RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("type-added", "type added", NO, NO, "nothing used it before", False, "a new class"),
        Rule(
            "type-removed",
            "type removed",
            NO,
            NO,
            "not on the wire; its users' changes are reported there",
            True,
            "imports of the class fail",
        ),
        Rule(
            "type-renamed",
            "type renamed, same shape",
            NO,
            NO,
            "type names never reach the wire",
            True,
            "the class has a new name",
        ),
        Rule(
            "type-kind-changed",
            "type becomes another kind (object, enum, union, alias)",
            ALL,
            ALL,
            "incompatible",
            True,
            "a different class shape",
        ),
        Rule(
            "property-added-optional",
            "optional property added",
            NO,
            NO,
            "old senders omit it; old receivers ignore it",
            False,
            "a new attribute with a default",
        ),
        Rule(
            "property-added-required",
            "required property added",
            ALL,
            NO,
            "old senders omit it; old receivers ignore it",
            True,
            "constructors must now pass it",
        ),
        Rule(
            "property-added-closed",
            "optional property added to an object that refuses unknown properties",
            NO,
            ALL,
            "old receivers refuse it",
            False,
            "a new attribute with a default",
        ),
        Rule(
            "property-added-required-closed",
            "required property added to an object that refuses unknown properties",
            ALL,
            ALL,
            "old senders omit it; old receivers refuse it",
            True,
            "constructors must now pass it",
        ),
        Rule(
            "property-removed-optional",
            "optional property removed",
            REQUESTS,
            NO,
            "old senders may still send it and new receivers ignore it: a request's answer no longer honours it",
            True,
            "the attribute disappears",
        ),
        Rule(
            "property-removed-required",
            "required property removed",
            REQUESTS,
            ALL,
            "old receivers expect it; old senders of a request still send it and new receivers ignore it",
            True,
            "the attribute disappears",
        ),
        Rule(
            "property-removed-closed",
            "optional property removed from an object that refuses unknown properties",
            ALL,
            NO,
            "old senders may still send it",
            True,
            "the attribute disappears",
        ),
        Rule(
            "property-removed-required-closed",
            "required property removed from an object that refuses unknown properties",
            ALL,
            ALL,
            "old senders still send it; old receivers expect it",
            True,
            "the attribute disappears",
        ),
        Rule(
            "property-made-required",
            "property becomes required",
            ALL,
            NO,
            "old senders may omit it",
            True,
            "constructors must now pass it",
        ),
        Rule(
            "property-made-optional",
            "property becomes optional",
            NO,
            ALL,
            "old receivers expect it",
            True,
            "readers get `None` where the type said a value",
        ),
        Rule(
            "nullable-added",
            "`null` becomes allowed",
            NO,
            ALL,
            "old receivers refuse `null`",
            True,
            "readers get `None` where the type said a value",
        ),
        Rule(
            "nullable-removed",
            "`null` no longer allowed",
            ALL,
            NO,
            "old senders may send `null`",
            True,
            "code that passes `None` no longer type-checks",
        ),
        Rule(
            "type-changed",
            "value type changed (e.g. string to integer)",
            ALL,
            ALL,
            "incompatible",
            True,
            "the attribute's type changes",
        ),
        Rule(
            "format-changed",
            "string/number format changed",
            ALL,
            ALL,
            "values valid for one may not be valid",
            True,
            "the attribute's Python type or validation changes",
        ),
        Rule(
            "ref-changed",
            "reference to another type (not a rename)",
            ALL,
            ALL,
            "a different shape",
            True,
            "the attribute holds another class",
        ),
        Rule("const-changed", "constant value changed", ALL, ALL, "incompatible", True, "the literal changes"),
        Rule(
            "enum-value-added",
            "value added to a closed enum",
            NO,
            ALL,
            "old receivers refuse it",
            False,
            "the `Literal` gains a member",
        ),
        Rule(
            "enum-value-removed",
            "value removed from a closed enum",
            ALL,
            NO,
            "old senders may send it",
            True,
            "code that passes it no longer type-checks",
        ),
        Rule(
            "enum-value-added-open",
            "value added to an open enum",
            NO,
            NO,
            "any string was accepted",
            False,
            "the `Literal` gains a member; any string was accepted",
        ),
        Rule(
            "enum-value-removed-open",
            "value removed from an open enum",
            REQUESTS,
            NO,
            "any string is accepted, but a request's old senders may send it and get the fallback's answer",
            False,
            "any string is still accepted",
        ),
        Rule(
            "enum-opened",
            "closed enum becomes open",
            NO,
            ALL,
            "old receivers refuse other strings",
            True,
            "readers get `str` where the type said a `Literal`",
        ),
        Rule(
            "enum-closed",
            "open enum becomes closed",
            ALL,
            NO,
            "old senders may send other strings",
            True,
            "code that passes other strings no longer type-checks",
        ),
        Rule(
            "variant-added",
            "union variant added",
            NO,
            ALL,
            "old receivers cannot parse it",
            False,
            "the union gains a member",
        ),
        Rule(
            "variant-removed",
            "union variant removed",
            ALL,
            NO,
            "old senders may send it",
            True,
            "code that builds it no longer type-checks",
        ),
        Rule(
            "message-variant-added",
            "a method's message added to a union of messages",
            NO,
            NO,
            "reported as the method; nobody sees it before using the method",
            False,
            "reported as the method",
        ),
        Rule(
            "message-variant-removed",
            "a method's message removed from a union of messages",
            NO,
            NO,
            "reported as the method, where it breaks",
            False,
            "reported as the method",
        ),
        Rule(
            "discriminator-changed",
            "union discriminator changed",
            ALL,
            ALL,
            "variants are told apart differently",
            True,
            "variants are told apart by another field",
        ),
        Rule(
            "bases-changed",
            "object extends other types",
            ALL,
            ALL,
            "a different shape",
            True,
            "a different class hierarchy",
        ),
        Rule(
            "extra-closed",
            "object stops accepting unknown properties",
            ALL,
            NO,
            "old senders may add some",
            True,
            "unknown keys now fail validation",
        ),
        Rule(
            "extra-opened",
            "object starts accepting unknown properties",
            NO,
            ALL,
            "old receivers refuse them",
            False,
            "more input is accepted",
        ),
        Rule(
            "default-changed",
            "default value changed",
            ALL,
            ALL,
            "an omitted value means something else",
            True,
            "an omitted attribute holds another value",
        ),
        Rule(
            "default-extended",
            "object default gains keys, the old ones unchanged",
            NO,
            NO,
            "defaults of properties added beside it",
            False,
            "the old keys keep their values",
        ),
        Rule(
            "feature-gated",
            "item becomes gated by a feature",
            ALL,
            ALL,
            "it leaves the stable surface",
            True,
            "it is absent unless the feature is enabled",
        ),
        Rule(
            "feature-stabilised",
            "item no longer gated by a feature",
            NO,
            NO,
            "it joins the stable surface",
            False,
            "it is present with or without the feature",
        ),
        Rule(
            "method-added",
            "method added",
            NO,
            NO,
            "old callers never call it; new callers learn from capabilities whether the peer has it",
            False,
            "a new handler method with a default",
        ),
        Rule(
            "method-removed",
            "method removed",
            ALL,
            NO,
            "old callers get -32601 (method not found); new callers never call it",
            True,
            "its handler, tables and types disappear",
        ),
        Rule(
            "method-side-changed",
            "method moves to the other side (x-side)",
            ALL,
            ALL,
            "the other peer handles it",
            True,
            "its handler moves to the other side's interface",
        ),
        Rule(
            "method-kind-changed",
            "request becomes notification or back",
            ALL,
            ALL,
            "a reply is expected or not",
            True,
            "a handler returns a result or nothing",
        ),
        Rule(
            "method-type-changed",
            "method's params or result type replaced",
            ALL,
            ALL,
            "a different shape",
            True,
            "its handler takes or returns another class",
        ),
        Rule(
            "version-added",
            "protocol version added",
            NO,
            NO,
            "old peers never negotiate it",
            False,
            "a new package beside the old",
        ),
        Rule(
            "version-removed",
            "protocol version removed",
            ALL,
            ALL,
            "peers that speak only it are cut off",
            True,
            "its package disappears",
        ),
    )
}


def _roles(roles: frozenset[str]) -> str:
    return "breaks" if roles == ALL else "requests" if roles == REQUESTS else "no"


def rules_markdown() -> str:
    """The table of rules in docs/diff.md, from ``RULES``."""
    lines = [
        "| rule | change | old sender, new receiver | new sender, old receiver | why | code: breaks | why |",
        "| --- | --- | :---: | :---: | --- | :---: | --- |",
    ]
    for r in RULES.values():
        code = "yes" if r.code else "no"
        wire = f"{_roles(r.old_to_new)} | {_roles(r.new_to_old)}"
        lines.append(f"| `{r.id}` | {r.what} | {wire} | {r.why} | {code} | {r.code_why} |")
    return "\n".join(lines) + "\n"
