"""acp-codegen: ACP JSON Schema fragments in, typed and vendorable Python out.

The pipeline, one module per stage: ``load`` -> ``validate`` -> ``features`` ->
``ir`` -> ``render`` -> ``formatting`` -> ``write``; ``pipeline`` strings them together
and ``cli`` is the command line.
"""

__version__ = "0.1.0"  # as pyproject.toml's [project].version
