"""Where the package's data lives and how files are named to users: the data directories
of the installed package (``acp_codegen.templates``, ``acp_codegen.fragments``, ``acp_codegen.runtime``),
found through ``importlib.resources`` (the same from a wheel or an editable install), the
built-in fragment sets (``builtin:<name>``), and the stable, machine-independent name of a
file that messages and headers show."""

from __future__ import annotations

import atexit
import contextlib
import importlib.resources
import os
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from .errors import fail

# The session-archive fragments shipped inside the package (schema/ of the checkout,
# acp_codegen.fragments once installed), as named in config and on the command line.
BUILTIN_PREFIX = "builtin:"


BUILTIN_FRAGMENTS = BUILTIN_PREFIX + "session-archive"


_BUILTIN_PACKAGES = {BUILTIN_FRAGMENTS: "acp_codegen.fragments"}


# (directory, name) pairs in force: files under such a directory are shown as name/...
_NAMED_DIRS: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("acp_codegen_named_dirs", default=())


@contextlib.contextmanager
def package_data(package: str) -> Iterator[Path]:
    """A data directory of the installed package (``acp_codegen.templates``, ...) as a real
    path, found through the import system: the same from a wheel or an editable install."""
    with importlib.resources.as_file(importlib.resources.files(package)) as path:
        yield Path(path)


@contextlib.contextmanager
def schema_location(spec: str | Path) -> Iterator[Path]:
    """The fragment directory ``spec`` names: a path, or ``builtin:<name>``. Files of the
    built-in fragments are shown (and recorded in headers) as ``builtin:<name>/v1/...``
    within this block, so the output does not depend on where the package is installed."""
    text = str(spec)
    if not text.startswith(BUILTIN_PREFIX):
        yield Path(spec)
        return
    if text not in _BUILTIN_PACKAGES:
        raise fail(text, "", f"no such built-in fragment set; built in: {', '.join(sorted(_BUILTIN_PACKAGES))}")
    with package_data(_BUILTIN_PACKAGES[text]) as directory:
        token = _NAMED_DIRS.set(((os.path.abspath(directory), text), *_NAMED_DIRS.get()))
        try:
            yield directory
        finally:
            _NAMED_DIRS.reset(token)


def display_name(path: Path, root: Path | None = None) -> str:
    """A stable, machine-independent name for a file: relative to root when inside it.
    Paths are normalised lexically (not through symlinks), so a linked checkout names
    files the way its user sees them."""
    path = Path(os.path.abspath(path))
    for directory, name in _NAMED_DIRS.get():
        try:
            return f"{name}/{path.relative_to(directory).as_posix()}".removesuffix("/.")
        except ValueError:
            pass
    if root is not None:
        try:
            return path.relative_to(os.path.abspath(root)).as_posix()
        except ValueError:
            pass
    return path.as_posix()


# Read through the import system (a wheel, an editable install), never beside this file;
# datamodel-code-generator takes a directory, so the templates need a real path. Read as
# ``resources.TEMPLATES`` at each use: tests point it elsewhere.
_resources = contextlib.ExitStack()
atexit.register(_resources.close)
TEMPLATES = _resources.enter_context(package_data("acp_codegen.templates"))
# Runtime modules of the output that do not depend on the schema (see codegen/runtime/).
RUNTIME = _resources.enter_context(package_data("acp_codegen.runtime"))
