"""Malformed input: every case exits 2 with ``file: /json/pointer: message`` lines, no
traceback, and leaves the previous output byte-for-byte as it was."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acp_codegen.resources import display_name
from hostile_support import (
    FEATURE,
    copy_schema,
    edit,
    fake_previous_output,
    generate_args,
    run_cli,
    snapshot,
)
from support import ROOT

SCHEMA = "v1/schema.json"
META = "v1/meta.json"


def _text(rel: str, text: str | bytes) -> Callable[[Path], None]:
    def change(schema: Path) -> None:
        path = schema / rel
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")

    return change


def _defs(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    return lambda schema: edit(schema / SCHEMA, lambda doc: change(doc["$defs"]))


def _meta(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    return lambda schema: edit(schema / META, change)


def _set(mapping: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split("/")
    for key in parents:
        mapping = mapping[key]
    mapping[last] = value


def _duplicate_def(schema: Path) -> None:
    """The same key twice in one JSON object: only visible in the text."""
    path = schema / SCHEMA
    text = path.read_text(encoding="utf-8")
    text = text.replace('"$defs": {', '"$defs": {\n"SessionId": {"type": "string"},', 1)
    path.write_text(text, encoding="utf-8")


def _second_fragment(schema: Path) -> None:
    (schema / "v1" / "more.json").write_text(json.dumps({"$defs": {"SessionId": {"type": "string"}}}), "utf-8")


def _nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "array", "items": node}
    return node


def _rename_dir(old: str, new: str) -> Callable[[Path], None]:
    return lambda schema: (schema / old).rename(schema / new)


def _copy_dir(old: str, new: str) -> Callable[[Path], None]:
    return lambda schema: shutil.copytree(schema / old, schema / new)


@dataclass(frozen=True)
class Bad:
    id: str
    change: Callable[[Path], None]
    file: str | None  # relative to the schema directory; None: the schema directory itself
    pointer: str  # as printed ("/" for the whole document)
    message: str  # a part of the message
    features: tuple[str, ...] = ()  # --feature values besides the project's own


BAD = [
    # Not JSON.
    Bad("truncated-json", _text(SCHEMA, '{"$defs": {"A": {"type": "str'), SCHEMA, "/", "invalid JSON at line 1"),
    Bad("trailing-comma", _text(SCHEMA, '{"$defs": {"A": {},}}'), SCHEMA, "/", "invalid JSON"),
    Bad("nan", _text(SCHEMA, '{"$defs": {"A": {"default": NaN}}}'), SCHEMA, "/", "NaN is not valid JSON"),
    Bad("infinity", _text(META, '{"version": Infinity}'), META, "/", "Infinity is not valid JSON"),
    Bad("empty-file", _text(SCHEMA, ""), SCHEMA, "/", "invalid JSON"),
    Bad("not-utf8", _text(SCHEMA, b'{"$defs": {"A": {"description": "\xff"}}}'), SCHEMA, "/", "not UTF-8 at byte"),
    Bad("byte-order-mark", _text(SCHEMA, '\ufeff{"$defs": {}}'), SCHEMA, "/", "invalid JSON"),
    Bad(
        "too-deep",
        _defs(lambda d: _set(d, "Deep", _nested(70))),
        SCHEMA,
        "/$defs/Deep" + "/items" * 63,
        "nested deeper",
    ),
    Bad(
        "lone-surrogate", _text(SCHEMA, '{"$defs": {"A": {"title": "\\udfff"}}}'), SCHEMA, "/$defs/A/title", "surrogate"
    ),
    # Wrong keyword types (the JSON Schema meta-schema, meta.json's own schema, our x- keywords).
    Bad("type-not-a-type", _defs(lambda d: _set(d, "SessionId/type", 5)), SCHEMA, "/$defs/SessionId/type", "not valid"),
    Bad(
        "properties-array",
        _defs(lambda d: _set(d, "SessionInfo/properties", [])),
        SCHEMA,
        "/$defs/SessionInfo/properties",
        "not valid JSON Schema",
    ),
    Bad(
        "required-string",
        _defs(lambda d: _set(d, "SessionInfo/required", "cwd")),
        SCHEMA,
        "/$defs/SessionInfo/required",
        "not valid JSON Schema",
    ),
    Bad("enum-object", _defs(lambda d: _set(d, "SessionId/enum", {})), SCHEMA, "/$defs/SessionId/enum", "not valid"),
    Bad("ref-number", _defs(lambda d: _set(d, "SessionId", {"$ref": 5})), SCHEMA, "/$defs/SessionId/$ref", "not valid"),
    Bad("defs-array", _text(SCHEMA, '{"$defs": []}'), SCHEMA, "/$defs", "not valid JSON Schema"),
    Bad("fragment-array", _text(SCHEMA, "[]"), SCHEMA, "/", "non-empty $defs"),
    Bad("version-string", _meta(lambda m: _set(m, "version", "1")), META, "/version", "is not of type"),
    Bad("methods-array", _meta(lambda m: _set(m, "agentMethods", [])), META, "/agentMethods", "is not of type"),
    Bad("meta-unknown-key", _meta(lambda m: _set(m, "agentMethod", {})), META, "/", "'agentMethod' was unexpected"),
    Bad("version-mismatch", _meta(lambda m: _set(m, "version", 2)), META, "/version", "directory says v1"),
    Bad(
        "x-side-number",
        _defs(lambda d: _set(d, "ArchiveSessionRequest/x-side", 1)),
        SCHEMA,
        "/$defs/ArchiveSessionRequest/x-side",
        "x-side must be one of",
    ),
    Bad(
        "x-method-number",
        _defs(lambda d: _set(d, "ArchiveSessionRequest/x-method", 3)),
        SCHEMA,
        "/$defs/ArchiveSessionRequest/x-method",
        "method name must match",
    ),
    Bad(
        "x-lenient-string",
        _defs(lambda d: _set(d, "SessionInfo/properties/cwd/x-deserialize-default-on-error", "1")),
        SCHEMA,
        "/$defs/SessionInfo/properties/cwd/x-deserialize-default-on-error",
        "must be a boolean",
    ),
    Bad(
        "x-null-default-string",
        _defs(lambda d: _set(d, "SessionInfo/properties/cwd/x-deserialize-default-on-null", "yes")),
        SCHEMA,
        "/$defs/SessionInfo/properties/cwd/x-deserialize-default-on-null",
        "must be a boolean",
    ),
    Bad(
        "pattern-lookahead",
        _defs(lambda d: _set(d, "SessionId/pattern", "(?=a)b")),
        SCHEMA,
        "/$defs/SessionId/pattern",
        "pydantic cannot compile this pattern: look-around",
    ),
    # References.
    Bad(
        "ref-undefined",
        _defs(lambda d: _set(d, "SessionInfo/properties/cwd", {"$ref": "#/$defs/Nope"})),
        SCHEMA,
        "/$defs/SessionInfo/properties/cwd/$ref",
        "reference to undefined type 'Nope'",
    ),
    Bad(
        "ref-external",
        _defs(lambda d: _set(d, "SessionInfo/properties/cwd", {"$ref": "other.json#/$defs/A"})),
        SCHEMA,
        "/$defs/SessionInfo/properties/cwd/$ref",
        "only local references",
    ),
    Bad(
        "ref-definitions",
        _defs(lambda d: _set(d, "SessionInfo/properties/cwd", {"$ref": "#/definitions/A"})),
        SCHEMA,
        "/$defs/SessionInfo/properties/cwd/$ref",
        "only local references",
    ),
    Bad(
        "ref-cycle",
        _defs(lambda d: d.update(A={"$ref": "#/$defs/B"}, B={"allOf": [{"$ref": "#/$defs/A"}]})),
        SCHEMA,
        "/$defs/A",
        "circular reference: A -> B -> A",
    ),
    Bad("ref-self", _defs(lambda d: d.update(A={"$ref": "#/$defs/A"})), SCHEMA, "/$defs/A", "circular reference"),
    # Duplicate definitions.
    Bad("duplicate-key", _duplicate_def, SCHEMA, "/$defs/SessionId", "duplicate key"),
    Bad("duplicate-meta-key", _text(META, '{"version": 1, "version": 1}'), META, "/version", "duplicate key"),
    Bad("defined-twice", _second_fragment, "v1/schema.json", "/$defs/SessionId", "also defined in"),
    Bad(
        "colliding-properties",
        _defs(lambda d: _set(d, "SessionInfo/properties/session_id", {"type": "string"})),
        SCHEMA,
        "/$defs/SessionInfo/properties/session_id",
        "'sessionId' and 'session_id' both become",
    ),
    Bad(
        "colliding-after-mangling",
        _defs(lambda d: d["SessionInfo"]["properties"].update({"class": {}, "class_": {}})),
        SCHEMA,
        "/$defs/SessionInfo/properties/class_",
        "'class' and 'class_' both become the Python field 'class_'",
    ),
    Bad(
        "colliding-meta",
        _defs(lambda d: _set(d, "SessionInfo/properties/meta", {"type": "string"})),
        SCHEMA,
        "/$defs/SessionInfo/properties/meta",
        "'_meta' and 'meta' both become the Python field 'meta'",
    ),
    Bad(
        "colliding-with-base",
        _defs(
            lambda d: _set(
                d,
                "Sub",
                {
                    "allOf": [{"$ref": "#/$defs/SessionInfo"}],
                    "type": "object",
                    "properties": {"session_id": {"type": "string"}},
                },
            )
        ),
        SCHEMA,
        "/$defs/Sub/properties/session_id",
        "both become the Python field 'session_id'",
    ),
    # Methods.
    Bad(
        "request-without-response",
        _defs(lambda d: d.pop("ArchiveSessionResponse")),
        META,
        "/agentMethods/session_archive",
        "has a request but no response",
    ),
    Bad(
        "method-without-types",
        _meta(lambda m: _set(m, "agentMethods/session_fork", "session/fork")),
        META,
        "/agentMethods/session_fork",
        "has no request type",
    ),
    Bad(
        "method-not-listed",
        _meta(lambda m: m["agentMethods"].pop("session_archive")),
        SCHEMA,
        "/$defs/ArchiveSessionRequest/x-method",
        "is not listed in",
    ),
    Bad(
        "method-key-keyword",
        _meta(lambda m: _set(m, "agentMethods/import", "session/list")),
        META,
        "/agentMethods/import",
        "is a Python keyword",
    ),
    # Features.
    # (an unknown --feature is the command line's fault, not the schema's: see
    # tests/config/test_first_try_errors.py)
    Bad(
        "unknown-x-feature",
        _defs(lambda d: _set(d, "SessionId/x-feature", "nope")),
        SCHEMA,
        "/$defs/SessionId/x-feature",
        "unknown feature 'nope'",
    ),
    Bad(
        "feature-keyword",
        _meta(lambda m: _set(m, "features/lambda", "a keyword")),
        META,
        "/features/lambda",
        "is a Python keyword",
    ),
    # Files and directories.
    Bad("meta-missing", lambda schema: (schema / META).unlink(), META, "/", "missing"),
    Bad("no-fragments", lambda schema: (schema / SCHEMA).unlink(), "v1", "/", "no schema fragments"),
    Bad("no-versions", _rename_dir("v1", "version1"), None, "/", "no version directories"),
    Bad("leading-zero-version", _copy_dir("v1", "v01"), "v01", "/", "must be named v<N>"),
    Bad("non-ascii-version", _copy_dir("v1", "v\u0661"), "v\u0661", "/", "must be named v<N>"),
]


@pytest.mark.parametrize("bad", BAD, ids=[b.id for b in BAD])
def test_malformed_input_is_refused_with_a_pointer(bad: Bad, tmp_path: Path) -> None:
    schema = copy_schema(tmp_path)
    bad.change(schema)
    out = tmp_path / "generated"
    fake_previous_output(out)
    before = snapshot(out)

    code, stdout, stderr = run_cli(*generate_args(schema, out, FEATURE, *bad.features))

    assert code == 2, stdout + stderr
    assert "Traceback" not in stderr and stdout == ""
    shown = display_name(schema / bad.file if bad.file else schema, ROOT)
    lines = stderr.splitlines()
    assert lines and all(": /" in line for line in lines), stderr
    expected = f"{shown}: {bad.pointer}: "
    assert any(line.startswith(expected) and bad.message in line for line in lines), stderr
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated", "schema"]  # no staging left over


def test_check_refuses_malformed_input_the_same_way(tmp_path: Path) -> None:
    schema = copy_schema(tmp_path)
    _defs(lambda d: d.pop("ArchiveSessionResponse"))(schema)
    code, _, stderr = run_cli("check", "--schema-dir", schema, "--out", tmp_path / "generated")
    assert code == 2 and "has a request but no response" in stderr and "Traceback" not in stderr
