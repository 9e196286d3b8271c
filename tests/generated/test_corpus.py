"""The benchmark corpus (``codegen/adopt/corpus_v1.txt``): realistic v1 messages, valid
against upstream v1 ``schema.json``, covering every variant the issue names, and each
round-tripping byte for byte through the models generated over that schema."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema_rs
import pytest
from support.reference_data import require

from benchmarks.corpus import UPSTREAM_V1, load, write_upstream_v1

MESSAGES = load()
IDS = [f"{n}-{name}" for n, (name, _) in enumerate(MESSAGES, 1)]
# Unions whose every variant the corpus must show, by upstream $defs name; a string enum
# (a oneOf of constants) names the property its values appear under.
COVERED_UNIONS = {
    "SessionUpdate": None,
    "ContentBlock": None,
    "ToolCallContent": None,
    "RequestPermissionOutcome": None,
    "PermissionOptionKind": "kind",
}


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(require(UPSTREAM_V1).read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def models(schema: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    out = str(write_upstream_v1(tmp_path_factory.mktemp("corpus"), "acp_corpus_models"))
    sys.path.insert(0, out)
    try:
        yield importlib.import_module("acp_corpus_models.v1.models")
    finally:
        sys.path.remove(out)


def _strings(value: Any) -> Iterator[tuple[str, str]]:
    """Every (key, string value) pair anywhere in a message."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str):
                yield key, item
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _variants(schema: dict[str, Any], name: str, enum_key: str | None) -> set[tuple[str, str]]:
    """(property, constant) of each tagged variant of a union, or (enum_key, value) of a string enum."""
    definition = schema["$defs"][name]
    found = set()
    for variant in definition.get("oneOf", []) + definition.get("anyOf", []):
        if "const" in variant and enum_key:
            found.add((enum_key, variant["const"]))
        for prop, sub in variant.get("properties", {}).items():
            if "const" in sub:
                found.add((prop, sub["const"]))
    return found


def test_corpus_is_large_enough_and_covers_every_variant(schema: dict[str, Any]):
    assert len(MESSAGES) >= 30
    seen = {pair for _, text in MESSAGES for pair in _strings(json.loads(text))}
    for union, enum_key in COVERED_UNIONS.items():
        variants = _variants(schema, union, enum_key)
        assert variants, union
        assert variants <= seen, f"{union}: no corpus message has {sorted(variants - seen)}"
    names = {name for name, _ in MESSAGES}
    for name in ("InitializeRequest", "InitializeResponse", "PromptRequest", "PromptResponse"):
        assert name in names


@pytest.mark.parametrize(("name", "text"), MESSAGES, ids=IDS)
def test_message_is_valid_upstream_v1(schema: dict[str, Any], name: str, text: str):
    root = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
    validator = jsonschema_rs.validator_for({**root, "$ref": f"#/$defs/{name}"})
    errors = [f"{e.instance_path}: {e.message}" for e in validator.iter_errors(json.loads(text))]
    assert errors == []


@pytest.mark.parametrize(("name", "text"), MESSAGES, ids=IDS)
def test_message_round_trips_byte_for_byte(models: ModuleType, name: str, text: str):
    cls = getattr(models, name)
    assert cls.model_validate_json(text).model_dump_json(by_alias=True, exclude_unset=True) == text
    # The same through Python objects, as a transport that decodes JSON itself does.
    parsed = cls.model_validate(json.loads(text))
    dumped = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert json.dumps(dumped, ensure_ascii=False, separators=(",", ":")) == text


def test_loader_rejects_a_malformed_line(tmp_path: Path):
    bad = tmp_path / "corpus.txt"
    bad.write_text('# fine\nPromptResponse {"stopReason":"end_turn"}\n{"no":"name"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"corpus.txt:3: expected"):
        load(bad)
