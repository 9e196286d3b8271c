"""A reference ACP agent for the session-archive feature: SQLite storage, stdio transport.

Run it with ``python -m examples.archive_agent [--db PATH] [--page-size N] [--protocol 1|2]`` (installed:
``python -m acp_codegen.examples.archive_agent``); see
docs/agent.md.
"""

DEFAULT_DB_NAME = "archive_agent.sqlite3"
"""The database file the agent uses, in the current directory, when ``--db`` is not given."""
