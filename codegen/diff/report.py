"""Reports: JSON, Markdown for a pull-request comment, GitHub Actions annotations."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from .compare import Report

# --- output ------------------------------------------------------------------------------------


def to_json(report: Report) -> str:
    data: dict[str, Any] = {
        "old": report.old_label,
        "new": report.new_label,
        "summary": {"changes": len(report.changes), "breaking": len(report.breaking)},
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


def summary_line(report: Report) -> str:
    versions = sorted({c.version for c in report.changes})
    per = ", ".join(f"v{v}: {sum(c.version == v for c in report.changes)}" for v in versions)
    text = f"{len(report.changes)} change{'s' if len(report.changes) != 1 else ''}, {len(report.breaking)} breaking"
    if per:
        text += f" ({per})"
    if report.files is not None:
        plus = sum(f.added for f in report.files)
        minus = sum(f.removed for f in report.files)
        text += f"; {len(report.files)} generated file{'s' if len(report.files) != 1 else ''} change (+{plus} -{minus})"
    return text


def to_markdown(report: Report) -> str:
    lines = [
        f"## Schema diff: `{_md(report.old_label)}` -> `{_md(report.new_label)}`",
        "",
        f"**{summary_line(report)}**",
    ]
    for version in sorted({c.version for c in report.changes}):
        lines += ["", f"### Protocol v{version}"]
        group: str | None = None
        for c in (c for c in report.changes if c.version == version):
            if c.group != group:
                group = c.group
                lines += ["", f"#### `{_md(group)}`" if group not in ("methods", "protocol") else f"#### {group}", ""]
            flag = "**BREAKING**" if c.breaking else c.change
            extra = f"; feature `{_md(c.feature)}`" if c.feature else ""
            lines.append(f"- {flag} `{_md(c.path)}`: {_line(c.detail)}{extra}")
            if c.breaking:
                lines.append(f"  - breaks {', '.join(_line(b) for b in c.breaks)} (rule `{c.rule}`)")
            if c.location:
                lines.append(f"  - at `{_md(c.location)}`")
    if report.files is not None:
        lines += ["", "### Generated files", ""]
        if report.files:
            lines += ["| file | status | + | - |", "| --- | --- | ---: | ---: |"]
            lines += [f"| `{_md(f.path)}` | {f.status} | {f.added} | {f.removed} |" for f in report.files]
        else:
            lines.append("No generated file changes.")
    elif report.files_note:
        lines += ["", "### Generated files", "", _md(report.files_note)]
    return "\n".join(lines) + "\n"
