"""Text that may be placed in generated Python source: literals, identifiers, docstrings
and comments built from schema values, escaped by construction.

Planning stages (conversions) build code fragments with these, and ``render`` hands them
to templates as filters; keeping them here lets planning not depend on rendering.
"""

from __future__ import annotations

import keyword
from typing import Any


class Code(str):
    """Text that is safe to place in generated source as it is."""


def py_literal(value: Any) -> Code:
    """A Python literal for any JSON value (strings are escaped by ``repr``)."""
    if isinstance(value, dict):
        return Code("{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}")
    if isinstance(value, list):
        return Code("[" + ", ".join(py_literal(v) for v in value) + "]")
    if value is None or isinstance(value, (bool, int, str)):
        return Code(repr(value))
    if isinstance(value, float):
        return Code(repr(value))
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def identifier(value: Any) -> Code:
    text = str(value)
    if not text.isidentifier() or keyword.iskeyword(text) or not text.isascii():
        raise ValueError(f"not a safe Python identifier: {text!r}")
    return Code(text)


def docstring(text: Any, indent: int = 0) -> Code:
    """A docstring literal: triple-quoted when the text needs no escaping, else ``repr``."""
    text = str(text).strip()
    plain = text.isprintable() or all(c.isprintable() or c == "\n" for c in text)
    if plain and '"""' not in text and "\\" not in text and not text.endswith('"'):
        pad = " " * indent
        body = text.replace("\n", "\n" + pad) if "\n" in text else text
        return Code(f'"""{body}\n{pad}"""' if "\n" in text else f'"""{text}"""')
    return Code(repr(text))


def comment(text: Any) -> Code:
    """Text for a ``#`` comment: one line, no control characters."""
    return Code(" ".join("".join(c if c.isprintable() else " " for c in str(text)).split()))
