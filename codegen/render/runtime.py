"""The output modules that do not depend on the schema (``codegen/runtime/``), copied as
they are under the usual header."""

from __future__ import annotations

from .. import resources


def render_runtime(name: str, header: str) -> str:
    """A runtime module under the usual header. Its source is kept in the default style's
    layout, so a default run copies this as it is; another style lays it out with the
    rest of the run (see ``generate.pipeline.generate``)."""
    return header + "\n\n" + (resources.RUNTIME / name).read_text(encoding="utf-8")
