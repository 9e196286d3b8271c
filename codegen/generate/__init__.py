"""The run: ``pipeline`` strings the stages together (schema directory in, files out),
``command`` is ``acp-codegen generate`` and ``check`` (the retry after stale class names,
the SDK wiring, the report), ``sdk`` wires an SDK's own modules during generate."""
