"""Layout: rendered modules laid out as the host repository's formatter would.

Imports are sorted as isort sorts them (``ruff check --select I``), then the code is laid
out by ``ruff format`` and, in the black style, by black after it. One ruff run does each
step for all modules (a process per module would cost more than ruff's work does).

black does most of a run's work. It reads its input twice whenever its first pass changes
anything (its second pass settles trailing commas the first one added), and once when the
input already has its layout. ruff's layout is black's nearly everywhere, so black after
ruff mostly reads once, about half the work of black alone. Where the two differ (ruff
splits a line that ends in a ``# type:`` comment, which black leaves long), black keeps
ruff's split, as it keeps any bracket with a trailing comma: the result is still black's
own layout, which ``black --check`` accepts. What is left is split at top-level classes
and spread over the machine's cores.

The pieces are laid out over worker processes (``workers.map_pieces``); each layout black
made is kept for the process (``workers.remember``).
"""

from __future__ import annotations

import ast
import functools
import itertools
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..style import Style
from .workers import map_pieces, paused_gc, recalled, remember

# black's input is cut into pieces of at least this many characters (where a cut cannot
# change its layout, see _pieces), small enough to share out evenly over the cores.
BLACK_PIECE = 4_000
# Below this many characters of ruff's draft in all, worker processes cost more than they
# save (`nox -s bench`, F1 and F2, docs/benchmarks.md; an idle two-core machine, three
# runs). Forked workers: 1.01x to 1.02x at 18,700 characters, 0.80x to 0.88x from 27,000
# to 33,500. Workers started afresh (spawn: macOS and Windows; a fork server: Linux from
# Python 3.14) import black first: 1.13x to 1.16x at 84,500, 0.83x to 0.84x at 172,000.
# On a machine busy with other work, workers pay later (F1 read 0.99x at 99,000 there).
BLACK_PARALLEL = 32_000
BLACK_PARALLEL_AFRESH = 160_000


def format_modules(sources: Mapping[str, str], style: Style) -> dict[str, str]:
    """Lay out generated modules (by any names): imports sorted, ruff format, then black
    in the black style."""
    from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

    with tempfile.TemporaryDirectory(prefix="acp-codegen-") as tmp:
        # Numbered files named one by one: ruff takes a file it is given even where its
        # default excludes (``build``, ``.venv``...) would skip the directory. Run in that
        # directory, no import can be taken for a first-party module.
        paths = {name: Path(tmp) / f"m{i}.py" for i, name in enumerate(sources)}
        for name, path in paths.items():
            path.write_text(sources[name], encoding="utf-8", newline="")

        def ruff(*args: str) -> None:
            common = (
                "--isolated",
                "--no-cache",
                "--quiet",
                "--target-version=py310",
                f"--line-length={style.line_length}",
            )
            command = [find_ruff_bin(), *args, *common, *map(str, paths.values())]
            done = subprocess.run(command, cwd=tmp, capture_output=True, text=True, encoding="utf-8", check=False)
            if done.returncode != 0:
                raise RuntimeError(f"ruff {args[0]} failed on generated code: {(done.stderr or done.stdout).strip()}")

        ruff("check", "--select=I", "--fix")
        ruff("format")
        drafts = {name: path.read_text(encoding="utf-8") for name, path in paths.items()}
    if style.formatter == "ruff":
        return drafts
    try:
        return _black(drafts, style.line_length)
    except Exception as exc:  # any failure is a generator bug: say which tool failed
        raise RuntimeError(f"black failed on generated code: {exc}") from exc


def _black(sources: Mapping[str, str], line_length: int) -> dict[str, str]:
    """black's layout of each module: its pieces laid out (see _map) and joined by the two
    blank lines black puts between top-level blocks (see _pieces)."""
    # Without the blank lines at its end (black drops them), a piece that has black's
    # layout is one black reads once.
    pieces = {name: [p.rstrip("\n") + "\n" for p in _pieces(source, BLACK_PIECE)] for name, source in sources.items()}
    every = [piece for parts in pieces.values() for piece in parts]
    known = {piece: text for piece in every if (text := recalled((line_length, piece))) is not None}
    todo = list(dict.fromkeys(piece for piece in every if piece not in known))
    if todo:
        # Imported here, before any worker starts: a forked worker inherits it, where it
        # would otherwise import black itself (0.2 s), in every run.
        import black  # noqa: F401

        with paused_gc():
            lay_out = functools.partial(_lay_out, line_length=line_length)
            new = dict(zip(todo, _map(lay_out, todo), strict=True))
        remember(((line_length, piece), text) for piece, text in new.items())
        known |= new
    return {name: "\n\n".join(known[piece] for piece in parts) for name, parts in pieces.items()}


def _lay_out(source: str, line_length: int) -> str:
    import black
    from black.mode import TargetVersion

    return black.format_str(source, mode=black.Mode(target_versions={TargetVersion.PY310}, line_length=line_length))


def _pieces(source: str, size: int) -> list[str]:
    """``source`` cut into pieces of at least ``size`` characters, only where black's
    layout of the whole is the pieces' layouts joined by two blank lines: before a
    top-level class or function that follows a class or function whose last line is
    indented, with nothing but blank lines between them (no comment, no decorator). black
    starts a file at its first line, ends it with one newline, and always puts two blank
    lines there."""
    if len(source) < 2 * size or "\r" in source:  # ast counts a lone \r as a line end, str.split does not
        return [source]
    try:
        body = ast.parse(source).body
    except SyntaxError:  # black says what is wrong
        return [source]
    lines = source.split("\n")
    offsets = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    cuts = [0]
    blocks = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for previous, node in itertools.pairwise(body):
        end, cut = previous.end_lineno or previous.lineno, node.lineno - 1
        if (
            isinstance(node, blocks)
            and isinstance(previous, blocks)
            and lines[end - 1].startswith((" ", "\t"))
            and not any(line.strip() for line in lines[end:cut])
            and offsets[cut] - offsets[cuts[-1]] >= size
            and len(source) - offsets[cut] >= size
        ):
            cuts.append(cut)
    cuts.append(len(lines))
    return [source[offsets[a] : offsets[b]] for a, b in itertools.pairwise(cuts)]


def _map(function: functools.partial[str], jobs: Sequence[str]) -> list[str]:
    """black's pieces over worker processes, from black's thresholds (``workers.map_pieces``)."""
    return map_pieces(function, jobs, BLACK_PARALLEL, BLACK_PARALLEL_AFRESH)
