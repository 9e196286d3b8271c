"""How generated code is laid out (formatter, line length): a setting that the command
line and ``[tool.acp-codegen]`` give, the headers record and ``render.formatting`` applies;
imports nothing, so that formatting's worker processes bring nothing else along."""

from __future__ import annotations

from dataclasses import dataclass

FORMATTERS = ("black", "ruff")
DEFAULT_LINE_LENGTH = 88


@dataclass(frozen=True)
class Style:
    """How generated code is laid out: black (the default, as the design card says) or
    ``ruff format`` (black's style, faster on upstream-sized output; the two differ in
    a few corners, such as magic trailing commas), at a line length."""

    formatter: str = "black"
    line_length: int = DEFAULT_LINE_LENGTH

    def __post_init__(self) -> None:
        if self.formatter not in FORMATTERS:
            raise ValueError(f"unknown formatter {self.formatter!r}; known: {', '.join(FORMATTERS)}")
        if not 40 <= self.line_length <= 320:
            raise ValueError(f"line length {self.line_length} is outside 40..320")


DEFAULT_STYLE = Style()
