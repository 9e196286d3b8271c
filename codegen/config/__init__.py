"""Settings: the ``[tool.acp-codegen]`` table of ``pyproject.toml`` (``table``), the model
settings it gives (``settings``), their checks against the IR (``checks``) and the edits of
the table a run writes back (``edit``). Imports the shared modules and ``protocol``."""
