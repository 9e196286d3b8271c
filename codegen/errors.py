"""The one hierarchy of errors acp-codegen reports to its user (exit status 2, no
traceback): ``CodegenError`` and its kinds. A schema problem always names a file, a JSON
pointer and a reason; a configuration error names ``pyproject.toml`` and the key."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass


def pointer(*parts: str | int) -> str:
    """Build an RFC 6901 JSON pointer from unescaped reference tokens."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    pointer: str
    message: str

    def __str__(self) -> str:
        # Names in the input may hold line breaks or control characters: escaped, so that
        # one problem is always one line and cannot imitate another.
        return _printable(f"{self.file}: {self.pointer or '/'}: {self.message}")


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


class CodegenError(Exception):
    """Bad input or an output that cannot be written: the command prints the message and exits 2."""


class SchemaError(CodegenError):
    """One or more problems in the input; the CLI prints them and exits 2."""

    def __init__(self, problems: list[Problem] | Problem) -> None:
        self.problems = sorted(problems if isinstance(problems, list) else [problems])
        super().__init__("\n".join(map(str, self.problems)))


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``; did you mean 'X'?`` for the closest of ``known``, or nothing."""
    match = difflib.get_close_matches(name, sorted(known), n=1)
    return f"; did you mean {match[0]!r}?" if match else ""


def fail(file: str, ptr: str, message: str) -> SchemaError:
    return SchemaError(Problem(file, ptr, message))


class ConfigError(CodegenError):
    """A ``[tool.acp-codegen]`` table (or a command-line value) that cannot be used."""


class MissingPath(ConfigError):
    """A path the command line or the settings name that does not exist: named as missing,
    not as a problem inside a document (no JSON pointer)."""

    def __init__(self, path: str, what: str) -> None:
        super().__init__(f"{path}: missing: no such {what}")


class OutputError(CodegenError):
    """The output cannot be written (not ours to replace, a path outside it, the disk)."""


class AdoptError(CodegenError):
    """Bad input to adopt (exit 2): the message says what and where."""
