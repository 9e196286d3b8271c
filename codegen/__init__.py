"""acp-codegen: ACP JSON Schema fragments in, typed and vendorable Python out.

The pipeline of ``generate``, one package per stage: ``protocol`` (schema text to the IR)
-> ``config`` (settings) -> ``plan`` (what the IR becomes) -> ``render`` (text) -> ``write``
(bytes); ``generate`` strings them together and runs them as a command. Beside it the
commands ``adopt``, ``diff`` and ``conformance``; at the top the shared vocabulary and
``cli``, the command line (docs/architecture.md).
"""

__version__ = "0.1.0"  # as pyproject.toml's [project].version
