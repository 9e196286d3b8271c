"""Generated files compared: which differ in content, headers left out."""

from __future__ import annotations

import difflib
from typing import Literal

from ..write.headers import strip_header
from .changes import FileChange


def file_changes(old: dict[str, str], new: dict[str, str]) -> list[FileChange]:
    """Which generated files differ in content (headers with their hashes left out), with
    added/removed line counts."""
    out = []
    for path in sorted(set(old) | set(new)):
        a, b = (strip_header(t) if t is not None else None for t in (old.get(path), new.get(path)))
        if a == b:
            continue
        added = removed = 0
        for line in difflib.unified_diff((a or "").splitlines(), (b or "").splitlines(), n=0, lineterm=""):
            if line.startswith(("+++", "---", "@@")):
                continue
            added += line.startswith("+")
            removed += line.startswith("-")
        status: Literal["added", "removed", "changed"] = "added" if a is None else "removed" if b is None else "changed"
        out.append(FileChange(path, status, added, removed))
    return out
