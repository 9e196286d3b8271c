"""The session-archive schema fragments; data, installed as ``acp_codegen.fragments`` (named
``builtin:session-archive`` in config). A regular package so that editable installs can map it.
"""
