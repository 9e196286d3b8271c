"""Jinja templates of the generator; data, installed as the package ``acp_codegen.templates``
(a regular package so that editable installs can map it: setuptools cannot map a namespace).
"""
