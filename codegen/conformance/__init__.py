"""``acp-codegen conformance``: check an agent's session archive against the RFD over stdio.

``driver`` speaks to the spawned agent and checks each message against the generated
models; ``context`` and ``scenarios`` hold the checks; ``runner`` runs them per protocol
version; ``report`` prints them and writes JUnit XML; ``command`` is the CLI.
"""
