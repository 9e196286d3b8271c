"""Which generated model checks which agent message, per protocol version."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from ..shipped import ModelsMissing, reference_module

__all__ = ["MessageModels", "ModelsMissing"]


def _models(version: int) -> tuple[ModuleType, ModuleType]:
    """The generated ``models`` and ``methods`` modules of one protocol version."""
    return reference_module(version, "models"), reference_module(version, "methods")


class MessageModels:
    """The result model of each request the kit sends, the params model of each
    notification an agent sends; messages the generated package does not model
    (``session/new``, ``session/prompt``, most ``session/update`` kinds) are not checked."""

    def __init__(self, version: int) -> None:
        models, methods = _models(version)
        self._results: dict[str, Any] = {"initialize": models.InitializeResponse}
        self._notifications: dict[str, Any] = {}
        for spec in methods.METHODS:
            if spec.kind == "request" and spec.side == "agent":
                self._results[spec.name] = spec.result
            elif spec.kind == "notification" and spec.side == "client":
                self._notifications[spec.name] = spec.params
        self._update_kinds = _tags(models)

    def result(self, method: str) -> Any:
        return self._results.get(method)

    def notification(self, method: str, params: Any) -> Any:
        if method == "session/update":
            update = params.get("update") if isinstance(params, dict) else None
            kind = update.get("sessionUpdate") if isinstance(update, dict) else None
            if isinstance(kind, str) and kind not in self._update_kinds:
                return None  # a kind outside the archive surface: not the kit's to judge
        return self._notifications.get(method)


def _tags(models: ModuleType) -> frozenset[str]:
    """The ``sessionUpdate`` values the generated models define."""
    tags: set[str] = set()
    for value in vars(models).values():
        fields = getattr(value, "model_fields", None)
        if isinstance(fields, dict) and "session_update" in fields:
            tags.update(getattr(fields["session_update"].annotation, "__args__", ()))
    return frozenset(tags)
