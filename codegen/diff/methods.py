"""Method tables compared: methods added, removed, moved to the other side, gated or
stabilised, made a request or a notification, or given other message types."""

from __future__ import annotations

from typing import Literal

from ..protocol.ir import Method
from .changes import ChangeKind, Recorder
from .usage import call_use


class MethodComparer(Recorder):
    def compare_methods(self) -> None:
        old = {(m.name, m.side): m for m in self.old.methods}
        new = {(m.name, m.side): m for m in self.new.methods}
        # A method that left one side and appeared on another (x-side changed) is one change.
        gone = [k for k in sorted(old) if k not in new]
        came = [k for k in sorted(new) if k not in old]
        moved = set()
        for name in {k[0] for k in gone} & {k[0] for k in came}:
            was = [k for k in gone if k[0] == name]
            now = [k for k in came if k[0] == name]
            if len(was) == 1 and len(now) == 1:
                moved |= {was[0], now[0]}
                detail = f"now handled by the {now[0][1]} side (was the {was[0][1]} side)"
                self._method_change("method-side-changed", new[now[0]], "changed", detail, was[0][1], now[0][1])
        for key in sorted(set(old) | set(new)):
            o, n = old.get(key), new.get(key)
            if key in moved:
                continue
            if o is None and n is not None:
                self._method_change("method-added", n, "added", f"new {n.kind} handled by the {n.side} side")
            elif n is None and o is not None:
                self._method_change("method-removed", o, "removed", f"{o.kind} handled by the {o.side} side removed")
            elif o is not None and n is not None:
                if o.feature != n.feature:
                    rule = "feature-stabilised" if n.feature is None else "feature-gated"
                    detail = f"feature marker `{o.feature or 'none'}` -> `{n.feature or 'none'}`"
                    self._method_change(rule, n, "changed", detail)
                if o.kind != n.kind:  # its message types change with it; that is the one change
                    self._method_change("method-kind-changed", n, "changed", f"now a {n.kind} (was a {o.kind})")
                    continue
                for role, old_type, new_type in (("params", o.params, n.params), ("result", o.result, n.result)):
                    if self.renames.get(old_type or "", old_type) != new_type:
                        detail = f"{role} type `{new_type}` (was `{old_type}`)"
                        self._method_change("method-type-changed", n, "changed", detail, old=old_type, new=new_type)

    def _method_change(
        self, rule: str, m: Method, change: ChangeKind, detail: str, old: str | None = None, new: str | None = None
    ) -> None:
        side: Literal["old", "new"] = "old" if change == "removed" else "new"
        carrier = (self.old if side == "old" else self.new).types.get(m.params)
        location = self.location(carrier, side=side) if carrier else ""
        # A request change hits its callers; a notification change hits whoever receives it.
        use = call_use(m.kind, m.name, m.side)
        self.emit(
            rule,
            "method",
            m.name,
            change,
            detail,
            group="methods",
            uses=frozenset({use}),
            feature=m.feature,
            location=location,
            old=old,
            new=new,
            side=m.side,
        )
