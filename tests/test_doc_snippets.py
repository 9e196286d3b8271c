"""The Python snippets of README.md and docs/*.md run, as written, against the checkout's
``generated/``. Each ```` ```python ```` block runs alone in a fresh interpreter whose
``generated`` package must be this checkout's. A block that cannot run here (an SDK's
noxfile, say) is preceded by ``<!-- not-run: why -->``; every other block must run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"<!--\s*not-run\b[^>]*-->")
FENCE = re.compile(r"^```(\S*)\s*$")
# Runs each snippet file, after checking that the package it uses is the checkout's (not an
# installed copy); runpy keeps the snippet's own line numbers in tracebacks.
RUNNER = f"""
import pathlib, runpy, sys
import generated
checkout = pathlib.Path({str(ROOT / "generated")!r})
assert pathlib.Path(generated.__file__).resolve().parent == checkout, generated.__file__
runpy.run_path(sys.argv[1], run_name="__main__")
"""


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository root
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    runs: bool


def blocks(path: Path, root: Path = ROOT) -> list[Block]:
    """The fenced blocks of a Markdown page (fences at the start of a line)."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        end = next((i for i in range(index + 1, len(lines)) if lines[i].rstrip() == "```"), None)
        assert end is not None, f"{path.name}:{index + 1}: fence never closed"
        before = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
        found.append(
            Block(
                page=path.relative_to(root).as_posix(),
                line=index + 1,
                language=opening.group(1),
                code="\n".join(lines[index + 1 : end]) + "\n",
                runs=NOT_RUN.search(before) is None,
            )
        )
        index = end + 1
    return found


SNIPPETS = [b for page in PAGES for b in blocks(page) if b.language == "python"]


@pytest.mark.parametrize("block", [b for b in SNIPPETS if b.runs], ids=lambda b: f"{b.page}:{b.line}")
def test_snippet_runs(block: Block, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONSTARTUP")}
    env["PYTHONPATH"] = str(ROOT)  # the checkout's generated/ and examples/, as the docs assume
    script = tmp_path / "snippet.py"
    script.write_text(block.code, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(script)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )
    assert proc.returncode == 0, f"{block.page}:{block.line} fails:\n{proc.stderr}"


def markers(path: Path) -> int:
    """How many not-run markers the page has outside fenced blocks."""
    count, fenced = 0, False
    for line in path.read_text(encoding="utf-8").splitlines():
        if fenced:
            fenced = line.rstrip() != "```"
        elif FENCE.match(line):
            fenced = True
        elif NOT_RUN.search(line):
            count += 1
    return count


def test_the_docs_have_snippets_and_every_not_run_marker_is_on_a_python_block() -> None:
    # Guards the collection itself: a parser that found nothing would pass every test above.
    assert sum(b.runs for b in SNIPPETS) >= 4
    assert {b.page for b in SNIPPETS if b.runs} >= {"README.md", "docs/dispatch.md", "docs/conversions.md"}
    for page in PAGES:
        skipped = [b for b in SNIPPETS if b.page == page.relative_to(ROOT).as_posix() and not b.runs]
        assert markers(page) == len(skipped), f"{page.name}: a not-run marker that is not right before a python block"


def test_a_failing_snippet_fails_and_a_marked_one_is_skipped(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n```python\nraise SystemExit(3)\n```\n\n<!-- not-run: needs a network -->\n"
        "```python\nimport nowhere\n```\n\n```json\n{}\n```\n",
        encoding="utf-8",
    )
    found = [(b.language, b.line, b.runs, b.code) for b in blocks(page, tmp_path)]
    assert found == [
        ("python", 3, True, "raise SystemExit(3)\n"),
        ("python", 8, False, "import nowhere\n"),
        ("json", 12, True, "{}\n"),
    ]
    assert markers(page) == 1
    failing = Block("page.md", 3, "python", "raise SystemExit(3)\n", True)
    with pytest.raises(AssertionError, match=r"page\.md:3 fails"):
        test_snippet_runs(failing, tmp_path)
