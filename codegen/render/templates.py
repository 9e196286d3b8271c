"""Jinja: every module but the models comes from a template in ``templates/`` (installed as
the package ``acp_codegen.templates``). Schema text reaches generated code only through the
filters below: the environment refuses to print any value that did not pass through one."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jinja2

from .. import resources
from ..code_text import Code, comment, docstring, identifier, py_literal

# The oldest pydantic the generated package supports, checked when it is imported:
# 2.7 - 2.9 fail to build a model whose field is an alias of one model class.
PYDANTIC_MINIMUM = (2, 10)


def _finalize(value: Any) -> Any:
    if isinstance(value, (Code, bool, int)) or value is None:
        return "" if value is None else value
    raise jinja2.TemplateError(
        f"template printed {type(value).__name__} {str(value)[:40]!r} without an escaping filter"
    )


def environment(templates: Path | None = None) -> jinja2.Environment:
    """The Jinja environment of a templates directory (``resources.TEMPLATES``, or an SDK
    template set). ``resources.TEMPLATES`` is read at each call: tests point it elsewhere."""
    return _environment(resources.TEMPLATES if templates is None else templates)


@functools.cache  # compiled templates are kept (edits on disk are still seen): compiling costs more than rendering
def _environment(templates: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    env.filters.update(py=py_literal, ident=identifier, doc=docstring, comment=comment)
    env.globals.update(pydantic_minimum=Code(repr(PYDANTIC_MINIMUM)))
    return env


def render_template(env: jinja2.Environment, name: str, header: str, **context: Any) -> str:
    """A template's module under its header, not yet formatted (see ``format_modules``)."""
    return env.get_template(name).render(header=Code(header), **context)
