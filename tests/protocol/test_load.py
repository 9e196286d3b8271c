"""The load stage: JSON in, strictly (duplicate keys, NaN, lone surrogates, too deep, not
UTF-8 are refused with file and JSON pointer), version directories found in numeric order,
and files named relative to the project."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from acp_codegen.errors import SchemaError
from acp_codegen.protocol.load import MAX_DEPTH, find_version_dirs, load_version, parse_json, read_json
from support import SCHEMA


def _problems(error: pytest.ExceptionInfo[SchemaError]) -> list[str]:
    return [str(p) for p in error.value.problems]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": {"b": 1, "b": 2}}', "f.json: /a/b: duplicate key (JSON objects must not repeat a name)"),
        ('{"a": [NaN]}', "f.json: /: invalid JSON: NaN is not valid JSON"),
        ('{"a": Infinity}', "f.json: /: invalid JSON: Infinity is not valid JSON"),
        ('{"a": "\\ud800"}', "f.json: /a: string holds a lone surrogate"),
        ('{"\\udcff": 1}', "f.json: /\\udcff: name holds a lone surrogate"),
        ('{"a": 1,}', "f.json: /: invalid JSON at line 1, column 9"),
        ("[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2), f"nested deeper than {MAX_DEPTH} levels"),
    ],
    ids=["duplicate", "nan", "infinity", "surrogate-value", "surrogate-name", "syntax", "depth"],
)
def test_bad_json_is_refused_with_file_and_pointer(text: str, expected: str) -> None:
    with pytest.raises(SchemaError) as error:
        parse_json(text, "f.json")
    assert any(expected in line for line in _problems(error)), _problems(error)


def test_good_json_keeps_key_order_and_values() -> None:
    data = parse_json('{"z": 1, "a": [true, null, 1.5, "\\u00e9"]}', "f.json")
    assert list(data) == ["z", "a"] and data["a"] == [True, None, 1.5, "\u00e9"]


def test_read_json_names_the_file_relative_to_root_and_hashes_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "v1" / "schema.json"
    path.parent.mkdir()
    path.write_bytes(b'{"$defs": {}}')
    source = read_json(path, tmp_path)
    assert (source.name, source.data) == ("v1/schema.json", {"$defs": {}})
    assert source.sha256 == hashlib.sha256(b'{"$defs": {}}').hexdigest()
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(SchemaError) as error:
        read_json(path, tmp_path)
    assert _problems(error) == ["v1/schema.json: /: not UTF-8 at byte 7"]


def test_load_version_reads_fragments_and_meta(tmp_path: Path) -> None:
    sources = load_version(SCHEMA / "v1", SCHEMA)
    assert [s.name for s in sources.schemas] == ["v1/schema.json"]
    assert sources.meta.name == "v1/meta.json" and "agentMethods" in sources.meta.data
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "schema.json").write_text("{}", encoding="utf-8")
    with pytest.raises(SchemaError) as error:
        load_version(tmp_path / "v1", tmp_path)
    assert _problems(error) == ["v1/meta.json: /: missing: every version directory needs a meta.json"]


def test_version_directories_come_in_numeric_order_and_odd_names_are_refused(tmp_path: Path) -> None:
    for name in ("v10", "v2", "v1", "notes"):
        (tmp_path / name).mkdir()
    assert [p.name for p in find_version_dirs(tmp_path, tmp_path)] == ["v1", "v2", "v10"]
    (tmp_path / "v01").mkdir()
    with pytest.raises(SchemaError) as error:
        find_version_dirs(tmp_path, tmp_path)
    assert _problems(error) == ["v01: /: a version directory must be named v<N> (ASCII digits, no leading 0)"]
