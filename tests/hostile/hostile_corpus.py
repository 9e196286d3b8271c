"""The hostile corpus: payload strings, and the positions in a schema where schema text
can reach generated code.

Every payload that tries to run code calls ``__import__`` to create the file ``CANARY``
(replaced by an absolute path per test run), so two independent oracles tell whether it
became code: the canary file, and the name ``__import__`` in the generated syntax tree.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CANARY = "@CANARY@"
_DQ = '__import__("pathlib").Path("@CANARY@").touch()'
_SQ = "__import__('pathlib').Path('@CANARY@').touch()"

# (id, text). Ids name the technique; the text is what a schema author would write.
PAYLOADS: tuple[tuple[str, str], ...] = (
    # String literals.
    ("dq-breakout", f'x"); {_DQ}; ("'),
    ("sq-breakout", f"x'); {_SQ}; ('"),
    ("dq-breakout-newline", f'x"\n{_DQ}\n"'),
    ("escaped-quote", f'\\"); {_DQ}; ("\\'),
    # Docstrings.
    ("docstring-dq", f'"""\n{_DQ}\n"""'),
    ("docstring-sq", f"'''\n{_SQ}\n'''"),
    ("docstring-escaped", f'\\"""\n{_DQ}\n\\"""'),
    ("trailing-quote", 'ends with a quote"'),
    ("trailing-backslash", "ends with a backslash\\"),
    ("backslash-n", "a literal \\n and \\x00 and \\N{BULLET} and \\u2028"),
    # Line breaks Python, str.splitlines and editors disagree about, followed by code.
    ("newline", f"x\n{_DQ}\n#"),
    ("carriage-return", f"x\r{_DQ}\r#"),
    ("crlf", f"x\r\n{_DQ}\r\n#"),
    ("line-separator", f"x\u2028{_DQ}\u2028#"),
    ("paragraph-separator", f"x\u2029{_DQ}"),
    ("next-line", f"x\x85{_DQ}"),
    ("form-feed", f"x\x0c{_DQ}"),
    ("vertical-tab", f"x\x0b{_DQ}"),
    ("nul", "a\x00b"),
    ("bidi-override", f"x\u202e #\u2066 {_DQ} \u2069"),
    # Comments.
    ("comment-newline", f"# comment\n{_DQ}"),
    # f-strings, str.format and %-formatting.
    ("fstring", "{" + _DQ + "}"),
    ("format-field", "{0.__class__.__mro__} {x!r:>{y}}"),
    ("percent-format", "%s %(name)s %%"),
    # Jinja (our environment and datamodel-code-generator's).
    ("jinja-expression", '{{ lipsum.__globals__["os"].system("touch @CANARY@") }}'),
    ("jinja-statement", "{% for x in [1] %}{{ x }}{% endfor %}{% raw %}"),
    ("jinja-comment", "{# unterminated"),
    # Identifiers and names.
    ("keyword", "class"),
    ("none", "None"),
    ("dunder", "__init__"),
    ("pydantic-attribute", "model_config"),
    ("basemodel", "BaseModel"),
    ("nfkc-lookalike", "\uff46oo"),  # fullwidth f: NFKC makes it the identifier "foo"
    ("spaces-and-dots", "a b-c.d"),
    ("leading-digit", "1st"),
    ("empty", ""),
    ("path-traversal", "../../escaped"),
    ("absolute-path", "/tmp/escaped"),
    # Size and encoding.
    ("long", "A" * 5_000),
    ("lone-surrogate", "\ud800"),
    ("undecodable-byte", "\udcff"),  # a file name byte that is not UTF-8 (os.fsdecode(b"\\xff"))
)


def materialise(text: str, canary: str) -> str:
    return text.replace(CANARY, canary)


_ALL = frozenset(pid for pid, _ in PAYLOADS)
_NOT_NAMES = _ALL - {"keyword", "none", "dunder", "pydantic-attribute", "basemodel", "long"}

# --- positions ---------------------------------------------------------------------------
# A placement edits a copy of the schema fragment (``doc``) and ``meta.json`` (``meta``) to
# put one payload into one position, using names derived from the case number ``i`` so
# that cases never share a type, property or method. It returns the JSON pointers (per
# input file: "schema" or "meta") a refusal of this case must name one of.

Place = Callable[[dict[str, Any], dict[str, Any], int, str], dict[str, tuple[str, ...]]]


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def _type(doc: dict[str, Any], i: int, schema: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    doc["$defs"][f"Hostile{i}"] = schema
    return {"schema": (f"/$defs/Hostile{i}",)}


def _method(doc: dict[str, Any], meta: dict[str, Any], i: int, key: str, method: str) -> dict[str, tuple[str, ...]]:
    for role in ("Request", "Response"):
        doc["$defs"][f"Hostile{i}{role}"] = {**_obj(value={"type": "string"}), "x-method": method, "x-side": "agent"}
    meta["agentMethods"][key] = method
    from acp_codegen.errors import pointer

    return {
        "schema": (f"/$defs/Hostile{i}Request", f"/$defs/Hostile{i}Response"),
        "meta": (pointer("agentMethods", key),),
    }


def _params(doc: dict[str, Any], meta: dict[str, Any], i: int, props: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """A method whose request params hold ``props``: what dispatch.py turns into route checks."""
    placed = _method(doc, meta, i, f"hostile_{i}", f"hostile/m{i}")
    doc["$defs"][f"Hostile{i}Request"]["properties"] = props
    return placed


def _param_enum(doc: dict[str, Any], meta: dict[str, Any], i: int, p: str) -> dict[str, tuple[str, ...]]:
    """An open enum (a named type, as the router checks those) with a gated hostile value."""
    doc["$defs"][f"Hostile{i}Choice"] = {
        "anyOf": [
            {"const": "plain", "type": "string"},
            {"const": p, "type": "string", "x-feature": "unstable_session_archive"},
            {"type": "string", "title": "other"},
        ]
    }
    placed = _params(doc, meta, i, {"choice": {"$ref": f"#/$defs/Hostile{i}Choice"}})
    return {**placed, "schema": (*placed["schema"], f"/$defs/Hostile{i}Choice")}


def _feature(doc: dict[str, Any], meta: dict[str, Any], i: int, name: str, text: str) -> dict[str, tuple[str, ...]]:
    from acp_codegen.errors import pointer

    meta["features"][name] = text
    doc["$defs"][f"Hostile{i}"] = {**_obj(value={"type": "string"}), "x-feature": name}
    return {"schema": (f"/$defs/Hostile{i}",), "meta": (pointer("features", name),)}


def _defs_key(doc: dict[str, Any], meta: dict[str, Any], i: int, p: str) -> dict[str, tuple[str, ...]]:
    from acp_codegen.errors import pointer

    doc["$defs"][p] = _obj(value={"type": "string"})
    return {"schema": (pointer("$defs", p),)}


def _property_name(doc: dict[str, Any], meta: dict[str, Any], i: int, p: str) -> dict[str, tuple[str, ...]]:
    from acp_codegen.errors import pointer

    doc["$defs"][f"Hostile{i}"] = {**_obj(**{p: {"type": "string"}}), "required": [p]}
    return {"schema": (f"/$defs/Hostile{i}", pointer("$defs", f"Hostile{i}", "properties", p))}


POSITIONS: dict[str, Place] = {
    "type-description": lambda d, m, i, p: _type(d, i, {**_obj(value={"type": "string"}), "description": p}),
    "type-title": lambda d, m, i, p: _type(d, i, {**_obj(value={"type": "string"}), "title": p}),
    "property-description": lambda d, m, i, p: _type(d, i, _obj(value={"type": "string", "description": p})),
    "property-title": lambda d, m, i, p: _type(d, i, _obj(value={"type": "string", "title": p})),
    "inline-object-title": lambda d, m, i, p: _type(d, i, _obj(value={"title": p, **_obj(inner={"type": "string"})})),
    "property-name": _property_name,
    "defs-key": _defs_key,
    "enum-value": lambda d, m, i, p: _type(d, i, {"type": "string", "enum": ["plain", p]}),
    "enum-variant-const": lambda d, m, i, p: _type(
        d, i, {"oneOf": [{"const": "plain", "type": "string"}, {"const": p, "type": "string"}]}
    ),
    "enum-variant-description": lambda d, m, i, p: _type(
        d, i, {"oneOf": [{"const": "a", "description": p}, {"const": "b"}]}
    ),
    "union-variant-title": lambda d, m, i, p: _type(
        d, i, {"anyOf": [{"title": p, **_obj(inner={"type": "string"})}, {"type": "string"}]}
    ),
    "discriminator-const": lambda d, m, i, p: _type(
        d,
        i,
        {
            "oneOf": [
                {**_obj(kind={"const": p, "type": "string"}, inner={"type": "string"}), "required": ["kind"]},
                {**_obj(kind={"const": "plain", "type": "string"}), "required": ["kind"]},
            ],
            "discriminator": {"propertyName": "kind"},
        },
    ),
    "const": lambda d, m, i, p: _type(d, i, _obj(value={"const": p})),
    "default": lambda d, m, i, p: _type(d, i, _obj(value={"type": "string", "default": p})),
    "default-object-key": lambda d, m, i, p: _type(d, i, _obj(value={"type": "object", "default": {p: p}})),
    "examples": lambda d, m, i, p: _type(d, i, _obj(value={"type": "string", "examples": [p]})),
    "pattern": lambda d, m, i, p: _type(d, i, _obj(value={"type": "string", "pattern": p})),
    "format": lambda d, m, i, p: _type(d, i, _obj(value={"type": "string", "format": p})),
    # Params of a routed method: gated property names and enum values become route checks.
    "gated-param-name": lambda d, m, i, p: _params(
        d, m, i, {p: {"type": "string", "x-feature": "unstable_session_archive"}}
    ),
    "param-enum-value": _param_enum,
    "x-method": lambda d, m, i, p: _method(d, m, i, f"hostile_{i}", p),
    "method-key": lambda d, m, i, p: _method(d, m, i, p, f"hostile/m{i}"),
    "feature-name": lambda d, m, i, p: _feature(d, m, i, p, "a feature"),
    "feature-description": lambda d, m, i, p: _feature(d, m, i, f"hostile_{i}", p),
}
# The fragment's file name is a position too (it is named in every file header); it is
# handled by the test, since it is not an edit of a JSON document.
FILE_NAME_POSITION = "fragment-file-name"


@dataclass(frozen=True)
class Case:
    position: str
    payload_id: str
    payload: str

    @property
    def id(self) -> str:
        return f"{self.position}-{self.payload_id}"


def file_name_representable(payload: str) -> bool:
    """A Linux file name cannot hold "/" or NUL, nor be empty; those payloads cannot be tried."""
    try:
        os.fsencode(payload + ".json")
    except UnicodeEncodeError:
        return False
    return bool(payload) and "/" not in payload and "\x00" not in payload and len(payload) < 200


def cases() -> list[Case]:
    out = [Case(pos, pid, text) for pos in POSITIONS for pid, text in PAYLOADS]
    out += [Case(FILE_NAME_POSITION, pid, text) for pid, text in PAYLOADS if file_name_representable(text)]
    return out


# What each position yields, pinned by a test: the ids of the payloads that are refused (all
# others generate). Free text and literal values are escaped, so only text that is not
# Unicode is refused there; names must fit a grammar (property names: map to an ASCII
# attribute, distinct within their object).
EXPECTED_REFUSED: dict[str, frozenset[str]] = {
    **{position: frozenset({"lone-surrogate", "undecodable-byte"}) for position in POSITIONS},
    # Property names are mangled by the model generator (class -> class_, a"b -> a_b); only
    # a name that stays non-ASCII (NFKC would merge it with another) is refused.
    "property-name": frozenset({"nfkc-lookalike", "lone-surrogate", "undecodable-byte"}),
    "gated-param-name": frozenset({"nfkc-lookalike", "lone-surrogate", "undecodable-byte"}),
    # A union variant is named by its title or tag: one with no letters or digits names nothing.
    "union-variant-title": frozenset({"empty", "lone-surrogate", "undecodable-byte"}),
    "discriminator-const": frozenset({"empty", "lone-surrogate", "undecodable-byte"}),
    "defs-key": _ALL - {"long"},  # type names: [A-Z][A-Za-z0-9]*, no keyword, nothing reserved
    "pattern": frozenset(  # regular expressions that pydantic's engine cannot compile
        {
            "dq-breakout",
            "sq-breakout",
            "escaped-quote",
            "trailing-backslash",
            "backslash-n",
            "fstring",
            "format-field",
            "jinja-expression",
            "jinja-statement",
            "jinja-comment",
            "lone-surrogate",
            "undecodable-byte",
        }
    ),
    "x-method": _NOT_NAMES | {"none", "dunder", "basemodel", "long"},  # the JSON-RPC method grammar
    "method-key": _NOT_NAMES | {"keyword", "none", "dunder", "basemodel", "long"},
    "feature-name": _NOT_NAMES | {"keyword", "none", "dunder", "basemodel", "long"},
    FILE_NAME_POSITION: frozenset(),  # file names only reach comments, which are sanitised
}
