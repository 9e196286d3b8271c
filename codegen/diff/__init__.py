"""``acp-codegen diff``: what a schema change means in protocol terms, and whom it breaks.

Modules, in the order a run goes through them: ``inputs`` (what the user named, as schema
directories), ``command`` (load both sides through the one loader, ``protocol.sources``; build the report),
``usage`` (which messages reach each type), ``compare`` (the one entry point: the changes,
judged by ``rules``; types compared in ``definitions``, method tables in ``methods``, both
recorded by ``changes``), ``files`` (which generated files differ),
``report`` (JSON, Markdown for a pull-request comment, GitHub Actions annotations; errors,
such as a side ``generate`` refuses, first).
"""

from __future__ import annotations

from .changes import Change, FileChange, Finding, Report
from .compare import compare
from .files import file_changes
from .rules import RULES, Rule, rules_markdown

__all__ = [
    "RULES",
    "Change",
    "FileChange",
    "Finding",
    "Report",
    "Rule",
    "compare",
    "file_changes",
    "rules_markdown",
]
