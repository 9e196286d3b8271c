"""Reports: JSON (everything), Markdown sized for a pull-request comment, and GitHub Actions
workflow commands that annotate the schema lines a change is at. Errors (a side that
``generate`` refuses) come first in each, and a report with errors calls nothing compatible."""

from __future__ import annotations

import bisect
import dataclasses
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .changes import Change, Finding, Report, subject_of
from .inputs import GIT_PREFIX
from .rules import RULES

# GitHub refuses a comment body longer than this many characters.
DEFAULT_MAX_CHARS = 65536
# The first line of every Markdown report: a workflow finds its earlier comment by it.
MARKER = "<!-- acp-codegen diff -->"


def to_json(report: Report) -> str:
    data: dict[str, Any] = {
        "old": report.old_label,
        "new": report.new_label,
        "summary": {
            "changes": len(report.changes),
            "breaking": len(report.breaking),
            "wireBreaking": sum(c.wire_breaking for c in report.changes),
            "codeBreaking": sum(c.code for c in report.changes),
            "errors": len(report.errors),
        },
        "errors": [e.as_json() for e in report.errors],
        "changes": [c.as_json() for c in report.changes],
    }
    if report.files is not None:
        data["generated"] = [dataclasses.asdict(f) for f in report.files]
    elif report.files_note:
        data["generatedNote"] = report.files_note
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _md(text: str) -> str:
    """Text for a Markdown code span: no backtick or line break may end it early."""
    return text.replace("`", "'").replace("\r", " ").replace("\n", " ")


def _line(text: str) -> str:
    """A detail (schema text in it is already in code spans) kept on one line."""
    return text.replace("\r", " ").replace("\n", " ")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def scope(c: Change) -> str:
    """The protocol version (and for upstream's layout, the surface) a change belongs to."""
    return f"v{c.version}" + (f" {c.surface}" if c.surface else "")


def failed_sides(report: Report) -> str:
    """Where generation failed: "the new side", "the old and new sides"."""
    sides = [s for s in ("old", "new") if any(e.side == s for e in report.errors)]
    return f"the {' and '.join(sides)} side{'s' if len(sides) > 1 else ''}"


def summary_line(report: Report) -> str:
    """One line of counts. With errors, the comparison is incomplete: what no rule calls
    breaking is "other", never "compatible"."""
    changes = report.changes
    breaking = len(report.breaking)
    wire = sum(c.wire_breaking for c in changes)
    code = sum(c.code for c in changes)
    text = ""
    if report.errors:
        text = f"{_plural(len(report.errors), 'error')}: generation failed on {failed_sides(report)}; "
    text += f"{_plural(len(changes), 'change')}: {breaking} breaking ({wire} wire, {code} code)"
    text += f", {len(changes) - breaking} {'other' if report.errors else 'compatible'}"
    scopes = sorted({scope(c) for c in changes}, key=lambda s: (int(s.split()[0][1:]), s))
    if scopes:
        text += " (" + ", ".join(f"{s}: {sum(scope(c) == s for c in changes)}" for s in scopes) + ")"
    if report.files is not None:
        plus = sum(f.added for f in report.files)
        minus = sum(f.removed for f in report.files)
        text += f"; {_plural(len(report.files), 'generated file')} change (+{plus} -{minus})"
    return text


def _order(c: Change) -> tuple[Any, ...]:
    return c.version, c.surface, c.group == "methods", c.group, c.path, c.rule


def _verdicts(c: Change) -> str:
    wire = "breaks " + ", ".join(_line(b) for b in c.breaks) if c.breaks else "compatible"
    code = f"breaks {' and '.join(c.code_breaks)} ({RULES[c.rule].code_why})" if c.code else "compatible"
    return f"wire: {wire}; code: {code}; rule `{c.rule}`"


def short_location(report: Report, location: str) -> str:
    """A location relative to the input it is in (the report's title names both inputs);
    one in the old input says so."""
    for side_prefix, mark in ((report.new_prefix, ""), (report.old_prefix, "old ")):
        prefix = side_prefix.rstrip("/")
        if prefix and location.startswith(prefix) and location[len(prefix) : len(prefix) + 1] in ("/", ":", "#"):
            rest = location[len(prefix) :]  # a file input's own locations: its name, then the pointer
            return f"{mark}`{_md(prefix.rpartition('/')[2] + rest if rest.startswith('#') else rest[1:])}`"
    return f"`{_md(location)}`"


def _error_item(report: Report, e: Finding) -> str:
    where = short_location(report, e.file) + (f", line {e.line}" if e.line else "") if e.file else ""
    about = f"`{_md(e.subject)}` ({where})" if e.subject else where
    return f"- generation failed on the {e.side} side: {about}{': ' if about else ''}`{_md(e.message)}`"


def _item(report: Report, c: Change, location: bool) -> list[str]:
    head = "" if c.breaking else f"{c.change} "
    feature = f"; feature `{_md(c.feature)}`" if c.feature else ""
    where = f" · {short_location(report, c.location)}" if location and c.location else ""
    if not c.breaking:
        return [f"- {head}`{_md(c.path)}`: {_line(c.detail)}{feature}{where}"]
    return [f"- `{_md(c.path)}`: {_line(c.detail)}{feature}", f"  - {_verdicts(c)}{where}"]


@dataclass(frozen=True)
class _Cut:
    """How much of the report to show; the full report shows everything."""

    breaking: int  # how many breaking changes are listed
    breaking_locations: bool
    files_table: bool
    compatible: int  # how many compatible changes are listed per version (and surface)
    compatible_locations: bool


def _render(report: Report, cut: _Cut, command: str) -> str:
    breaking = sorted(report.breaking, key=_order)
    compatible = sorted((c for c in report.changes if not c.breaking), key=_order)
    lines = [
        MARKER,
        f"## Schema diff: `{_md(report.old_label)}` -> `{_md(report.new_label)}`",
        "",
        f"**{summary_line(report)}**",
    ]
    if report.errors:  # never cut: without them the rest reads as complete
        lines += ["", "### Errors", ""] + [_error_item(report, e) for e in report.errors]
    if breaking:
        lines += ["", "### Breaking changes"]
        block = None
        for c in breaking[: cut.breaking]:
            if scope(c) != block:
                block = scope(c)
                lines += ["", f"**{block}**", ""]
            lines += _item(report, c, cut.breaking_locations)
    if compatible:
        lines += ["", "### Other changes"]
    for block in dict.fromkeys(scope(c) for c in compatible):  # in the order listed
        mine = [c for c in compatible if scope(c) == block]
        listed = mine[: cut.compatible]
        count = _plural(len(mine), "change") + (f", {len(listed)} listed" if len(listed) < len(mine) else "")
        lines += ["", f"<details><summary>{block}: {count}</summary>", ""]
        group: str | None = None
        for c in listed:
            if c.group != group:
                group = c.group
                title = f"`{_md(group)}`" if group not in ("methods", "protocol") else group
                lines += ["", f"**{title}**", ""]
            lines += _item(report, c, cut.compatible_locations)
        lines += ["", "</details>"]
    if report.files is not None:
        lines += ["", "### Generated files", ""]
        if not report.files:
            lines.append("No generated file changes.")
        elif cut.files_table:
            lines += ["| file | status | + | - |", "| --- | --- | ---: | ---: |"]
            lines += [f"| `{_md(f.path)}` | {f.status} | {f.added} | {f.removed} |" for f in report.files]
        else:
            lines.append(", ".join(f"`{_md(f.path)}`" for f in report.files))
    elif report.errors:
        lines += [
            "",
            "### Generated files",
            "",
            f"Not compared: generation failed on {failed_sides(report)} (see Errors).",
        ]
    elif report.files_note:
        lines += ["", "### Generated files", "", _md(report.files_note)]
    left_out = _left_out(cut, len(breaking), compatible, report)
    if left_out:
        lines += [
            "",
            f"> Left out to fit the size limit: {'; '.join(left_out)}. The whole report:"
            f" `{_md(command)} --format json`, or `--max-chars 0` (a file, or the job log).",
        ]
    return "\n".join(lines) + "\n"


def _left_out(cut: _Cut, breaking: int, compatible: list[Change], report: Report) -> list[str]:
    out = []
    if cut.breaking < breaking:
        out.append(f"{breaking - cut.breaking} of {breaking} breaking changes (the last listed)")
    if not cut.breaking_locations and breaking:
        out.append("the schema locations of breaking changes")
    if not cut.files_table and report.files:
        out.append("the line counts of generated files")
    blocks = Counter(scope(c) for c in compatible)
    dropped = sum(max(0, n - cut.compatible) for n in blocks.values())
    if dropped:
        out.append(f"{dropped} of {len(compatible)} other changes (beyond the first {cut.compatible} of each version)")
    if not cut.compatible_locations and cut.compatible:
        out.append("the schema locations of other changes")
    return out


def to_markdown(report: Report, max_chars: int = 0, command: str = "acp-codegen diff OLD NEW") -> str:
    """The report as a pull-request comment: summary, breaking changes, then the rest folded.
    Over ``max_chars`` (0: no limit), the least important detail goes first: locations of
    compatible changes, compatible changes from the end, generated-file line counts,
    locations of breaking changes, and last breaking changes from the end."""
    n_breaking = len(report.breaking)
    per_block = Counter(scope(c) for c in report.changes if not c.breaking)
    full = _Cut(n_breaking, True, True, max(per_block.values(), default=0), True)
    text = _render(report, full, command)
    if not max_chars or len(text) <= max_chars:
        return text
    steps = (
        ("compatible_locations", False),
        ("compatible", None),
        ("files_table", False),
        ("breaking_locations", False),
        ("breaking", None),
    )
    cut = full
    for field, value in steps:
        if value is not None:
            cut = _with(cut, field, value)
        else:
            cut = _most_that_fit(report, cut, field, max_chars, command)
        text = _render(report, cut, command)
        if len(text) <= max_chars:
            break
    return text


def _with(cut: _Cut, field: str, value: int) -> _Cut:
    changes: dict[str, Any] = {field: value}
    return dataclasses.replace(cut, **changes)


def _most_that_fit(report: Report, cut: _Cut, field: str, max_chars: int, command: str) -> _Cut:
    """The cut listing as many items of ``field`` as fit (0 when none does)."""
    low, high = 0, getattr(cut, field)
    while low < high:
        middle = (low + high + 1) // 2
        if len(_render(report, _with(cut, field, middle), command)) <= max_chars:
            low = middle
        else:
            high = middle - 1
    return _with(cut, field, low)


# --- GitHub Actions annotations -----------------------------------------------------------------

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def pointer_lines(text: str) -> dict[str, int]:
    """Every JSON pointer in a (valid) JSON text, with the line its value is written on:
    an object member's line is the line of its name."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    found: dict[str, int] = {"": 1}

    def line(pos: int) -> int:
        return bisect.bisect_left(newlines, pos) + 1

    def skip(pos: int) -> int:
        end = _SPACE.match(text, pos)
        return end.end() if end else pos

    def value(pos: int, here: str) -> int:
        pos = skip(pos)
        opener = text[pos]
        if opener not in "{[":  # a string, number, true, false or null
            end: int = _DECODER.raw_decode(text, pos)[1]
            return end
        closer, index = ("}" if opener == "{" else "]"), 0
        pos = skip(pos + 1)
        while text[pos] != closer:
            if opener == "{":
                start = pos
                key, pos = _DECODER.raw_decode(text, pos)
                child = here + "/" + key.replace("~", "~0").replace("/", "~1")
                pos = skip(pos) + 1  # the colon
            else:
                start = skip(pos)
                child = f"{here}/{index}"
            found[child] = line(start)
            pos = skip(value(pos, child))
            index += 1
            if text[pos] == ",":
                pos = skip(pos + 1)
        return pos + 1

    try:
        value(0, "")
    except (ValueError, IndexError):  # the loader has parsed the file; keep what was found
        pass
    return found


def _nearest(lines: dict[str, int], pointer: str) -> int:
    """The line of ``pointer``, or of its nearest ancestor in the file (a removed item's parent)."""
    while pointer not in lines:
        pointer = pointer.rpartition("/")[0]
    return lines[pointer]


class _Locator:
    """Turns a change's ``file#/pointer`` into the file and line to annotate. A location in
    the old side (a removal) is shown in the new side's file, at the nearest line that is
    still there, since annotations attach to the files of the pull request."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.names = sorted(report.texts, key=len, reverse=True)
        self.cache: dict[str, dict[str, int]] = {}

    def lines(self, name: str) -> dict[str, int]:
        if name not in self.cache:
            self.cache[name] = pointer_lines(self.report.texts[name])
        return self.cache[name]

    def __call__(self, location: str) -> tuple[str, int] | None:
        for name in self.names:
            if location.startswith(name + "#"):
                pointer = location[len(name) + 1 :]
                new_name = self.report.counterparts.get(name, name)
                if new_name in self.report.texts:
                    return _repo_path(new_name), _nearest(self.lines(new_name), pointer)
                return _repo_path(name), _nearest(self.lines(name), pointer)
        return None


def _repo_path(name: str) -> str:
    """``git:REF:path`` names a file of the repository at a ref; annotations want ``path``."""
    if name.startswith(GIT_PREFIX):
        return name.split(":", 2)[-1]
    return name


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _props(where: tuple[str, int] | None, title: str) -> str:
    props = [f"file={_escape_property(where[0])}", f"line={where[1]}"] if where else []
    return ",".join([*props, f"title={_escape_property(title)}"])


def locate_error(report: Report, e: Finding) -> Finding:
    """An error with what it is about by name (``Type.field``, not ``conversions.json#/fields/11``)
    and the line its pointer is at, read from the file's text (``report.texts``)."""
    text = report.texts.get(e.file)
    if text is None:
        return e
    try:
        document = json.loads(text)
    except ValueError:
        return e
    line = _nearest(pointer_lines(text), e.pointer)
    return dataclasses.replace(e, subject=subject_of(document, e.pointer), line=line)


def github_lines(report: Report) -> Iterable[str]:
    locate = _Locator(report)
    # Every ::error names a file and line: one that no file text locates (an error that names no
    # file, a protocol version removed) is shown at the top of the new side's first schema file.
    first = next((n for n in report.texts if n not in report.counterparts), next(iter(report.texts), ""))
    for e in report.errors:
        at: tuple[str, int] = (_repo_path(e.file), e.line) if e.line else (_repo_path(e.file or first), 1)
        about = e.subject or (f"{e.file}: {e.pointer}" if e.file else "")
        message = f"generation failed on the {e.side} side: {about}{': ' if about else ''}{e.message}"
        yield f"::error {_props(at, f'Generation failed ({e.side} side)')}::{_escape_data(message)}"
    for c in sorted(report.changes, key=lambda c: (not c.breaking, _order(c))):
        where = locate(c.location) if c.location else None
        if where is None and c.breaking:
            where = (_repo_path(first), 1)
        level = "error" if c.breaking else "notice"
        kinds = [k for k, hit in (("wire", c.wire_breaking), ("code", c.code)) if hit]
        title = (f"Breaking schema change ({', '.join(kinds)})" if kinds else "Schema change") + f": {c.rule}"
        message = f"{scope(c)} {c.path}: {c.detail}"
        if c.feature:
            message += f"; feature {c.feature}"
        if c.breaking:
            message += f". {_verdicts(c)}"
        yield f"::{level} {_props(where, title)}::{_escape_data(message)}"


def to_github(report: Report) -> str:
    """GitHub Actions workflow commands: an error per error (a side ``generate`` refuses) and
    per breaking change, a notice per other change, each at the schema file and line it is
    at; errors first, then breaking changes."""
    return "".join(line + "\n" for line in github_lines(report))
