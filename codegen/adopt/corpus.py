"""The messages adopt's verification sends through the old module and the new one: a
corpus of realistic v1 messages (``corpus_v1.txt``, also the benchmarks' corpus) and
instances drawn from the base schema, two a class (every property, and the required
ones only), deterministic.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..resources import package_data
from ..schema_terms import ref_target, variants_key

CORPUS_FILE = "corpus_v1.txt"
# How deep optional properties are drawn (required ones always are).
DEPTH = 3
_FORMATS = {
    "uri": "https://example.com/a/b",
    "date-time": "2026-01-02T03:04:05Z",
    "date": "2026-01-02",
    "time": "03:04:05Z",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
}


# Strings tried, in turn, against a property's pattern (ISO codes, identifiers, paths...).
_PATTERNED = ("USD", "abc", "a", "A", "0", "a-b", "_x", "/a", "a.b", "x1", "2026-01-02", "a@b.c")


def _matches(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:  # a pattern Python does not read: leave the string as it is
        return True


def read_corpus(path: Path) -> list[tuple[str, str]]:
    """``(type name, message JSON text)`` per line; ``#`` lines and blank lines are skipped."""
    messages = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, sep, text = line.partition(" ")
        if not sep or not name.isidentifier() or not text.startswith("{"):
            raise ValueError(f"{path.name}:{number}: expected '<TypeName> <JSON object>'")
        messages.append((name, text))
    return messages


def fixed(version: int) -> list[tuple[str, str]]:
    """The realistic corpus of a protocol version (v1 only, today)."""
    if version != 1:
        return []
    with package_data("acp_codegen.adopt") as here:
        return read_corpus(here / CORPUS_FILE)


class _Drawer:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs

    def value(self, schema: Any, depth: int, full: bool) -> Any:
        if not isinstance(schema, dict) or not schema:
            return "any"
        target = ref_target(schema.get("$ref"))
        if target is not None and target in self.defs and not schema.get("properties"):
            return self.value(self.defs[target], depth, full)
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list):
            return next((v for v in schema["enum"] if v is not None), None)
        key = variants_key(schema)
        if key is not None and not schema.get("properties"):
            variants = [v for v in schema[key] if not (isinstance(v, dict) and v.get("type") == "null")]
            return self.value(variants[0], depth, full) if variants else None
        if isinstance(schema.get("allOf"), list) and not schema.get("properties"):
            parts = [self.value(part, depth, full) for part in schema["allOf"]]
            if len(parts) == 1 or not all(isinstance(p, dict) for p in parts):
                return parts[-1] if parts else None
            return {k: v for p in parts for k, v in p.items()}
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object" or "properties" in schema:
            return self.object(schema, depth, full)
        if kind == "array":
            count = max(int(schema.get("minItems", 1)), 1 if depth < DEPTH else 0)
            return [self.value(schema.get("items", {}), depth + 1, full) for _ in range(count)]
        return _scalar(kind, schema)

    def object(self, schema: dict[str, Any], depth: int, full: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for part in schema.get("allOf", []):
            drawn = self.value(part, depth, full)
            if isinstance(drawn, dict):
                out |= drawn
        required = set(schema.get("required", []))
        for name, prop in (schema.get("properties") or {}).items():
            if name in required or (full and depth < DEPTH):
                out[name] = self.value(prop, depth + 1, full)
        return out


def _scalar(kind: Any, schema: dict[str, Any]) -> Any:
    """A valid value of a scalar type: a string within its format, pattern and length, a
    number within its bounds."""
    if kind == "string":
        text = _FORMATS.get(schema.get("format", ""), "text")
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            text = next((t for t in (text, *_PATTERNED) if _matches(pattern, t)), text)
        return text * max(1, -(-int(schema.get("minLength", 0)) // len(text)))
    if kind == "integer":
        return max(int(schema.get("minimum", 1)), min(1, int(schema.get("maximum", 1))))
    if kind == "number":
        return 1.5 if schema.get("maximum", 2) >= 1.5 else schema.get("minimum", 0)
    if kind == "boolean":
        return True
    return None


def drawn(defs: dict[str, Any], names: list[str]) -> list[tuple[str, Any]]:
    """Two instances of each named definition: every property, and the required ones."""
    drawer = _Drawer(defs)
    return [(name, drawer.value(defs[name], 0, full)) for name in names for full in (True, False)]
