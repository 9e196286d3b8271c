"""Conversions: declared v1 <-> v2 differences, checked against the IR.

``schema/conversions.json`` declares, as data, how two protocol versions differ (renamed
types, renamed fields, fields or types that exist in one version only, value rules,
invariants), the way Cadwyn declares version changes. This stage compares both versions'
``Protocol`` IRs structurally and refuses to generate when:

- a difference exists that no declaration covers (the message names type and field), or
- a declaration covers no difference, or names something neither version defines.

Declarations about items that feature selection pruned are skipped. The result is a
``ConversionPlan``: one converter per shared type and direction, read by
``templates/convert.py.jinja``. Without a ``conversions.json`` nothing is planned (and no
``convert.py`` generated): conversions are opt-in per schema directory.

The subpackage: ``declarations`` (the file's schema and typed records), ``compare`` (the
two IRs under the declarations), ``plan_types`` and ``plan`` (the converters).
"""

from __future__ import annotations

from .declarations import CONVERSIONS_FILE, UPSTREAM_DECLARATIONS, VALUE_RULES, VERSIONS
from .plan import plan
from .plan_types import ConversionPlan, Converter

__all__ = [
    "CONVERSIONS_FILE",
    "UPSTREAM_DECLARATIONS",
    "VALUE_RULES",
    "VERSIONS",
    "ConversionPlan",
    "Converter",
    "plan",
]
