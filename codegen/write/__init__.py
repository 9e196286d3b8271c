"""Bytes: provenance headers (``headers``) and the output directory replaced atomically,
read back and compared (``tree``). ``acp_codegen.write.strip_header`` is public (the docs show it)."""

from .headers import strip_header

__all__ = ["strip_header"]
