"""A client on the official Python SDK (``agent-client-protocol``) as ``acp-codegen adopt``
leaves it with the feature ``unstable_session_archive`` on: it starts an agent with the
SDK's ``spawn_agent_process`` and drives the session-archive RFD through the
``ClientSideConnection`` (``archive_session``, ``unarchive_session``,
``list_sessions(..., archived=...)``). Public API only.

    python client.py --cwd DIR [--agent-cwd DIR] -- AGENT COMMAND ...

Creates three sessions in ``--cwd`` (a directory no other client lists), archives the first
(twice: archiving is idempotent), lists under each ``archived`` value (omitted, ``exclude``,
``include``, ``only``) following ``nextCursor``, unarchives it (twice) and lists again, then
archives and unarchives an id no agent knows, and lists with a value outside the filter's
three. Prints one JSON object of what it saw: each listing's ids (in the order listed), their
``archived`` flags and pages, the error codes the SDK raised (``RequestError.code``), and the
``session_info_update`` notifications received.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from typing import Any

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.schema import ClientCapabilities, Implementation, SessionInfoUpdate
from acp.stdio import spawn_agent_process
from pydantic import BaseModel

FILTERS: dict[str, dict[str, Any]] = {
    "omitted": {},
    "exclude": {"archived": "exclude"},
    "include": {"archived": "include"},
    "only": {"archived": "only"},
}


class RecordingClient(Client):
    """Offers no client capabilities; keeps every ``session/update``."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    def on_connect(self, conn: Any) -> None:
        return None

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("session/request_permission")


async def listing(conn: Any, cwd: str, archived: dict[str, Any]) -> dict[str, Any]:
    """Every session in ``cwd`` under one filter, following ``nextCursor``."""
    ids: list[str] = []
    flags: dict[str, Any] = {}
    cursor: str | None = None
    pages = 0
    while True:
        page = await conn.list_sessions(cwd=cwd, cursor=cursor, **archived)
        pages += 1
        for info in page.sessions:
            ids.append(info.session_id)
            flags[info.session_id] = info.archived
        cursor = page.next_cursor
        if cursor is None or pages > 100:
            return {"ids": ids, "archived": flags, "pages": pages}


def dumped(result: BaseModel | None) -> dict[str, Any] | None:
    """A result as the wire had it (``None`` where the agent answered ``null``)."""
    return None if result is None else result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def error_code(call: Any) -> int | None:
    try:
        await call
    except RequestError as exc:
        return exc.code
    return None


async def drive(cwd: str, agent: list[str], agent_cwd: str | None) -> dict[str, Any]:
    client = RecordingClient()
    async with spawn_agent_process(client, agent[0], *agent[1:], cwd=agent_cwd) as (conn, _process):
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="sdk-archive-client", version="1"),
        )
        sessions = [(await conn.new_session(cwd=cwd, mcp_servers=[])).session_id for _ in range(3)]
        target = sessions[0]
        seen: dict[str, Any] = {
            "initialize": dumped(init),
            "sessions": sessions,
        }
        seen["archive"] = [dumped(await conn.archive_session(session_id=target)) for _ in range(2)]
        seen["archived"] = {name: await listing(conn, cwd, f) for name, f in FILTERS.items()}
        seen["unarchive"] = [dumped(await conn.unarchive_session(session_id=target)) for _ in range(2)]
        seen["unarchived"] = {name: await listing(conn, cwd, f) for name, f in FILTERS.items()}
        unknown = f"sess_unknown_{uuid.uuid4().hex}"
        seen["errors"] = {
            "archiveUnknown": await error_code(conn.archive_session(session_id=unknown)),
            "unarchiveUnknown": await error_code(conn.unarchive_session(session_id=unknown)),
            "invalidFilter": await error_code(conn.list_sessions(cwd=cwd, archived="all")),
        }
        seen["infos"] = [
            [sid, update.archived] for sid, update in client.updates if isinstance(update, SessionInfoUpdate)
        ]
        return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cwd", required=True, help="the working directory of the sessions it creates")
    parser.add_argument("--agent-cwd", help="where the agent runs")
    parser.add_argument("agent", nargs="+", help="the agent command, after --")
    options = parser.parse_args()
    seen = asyncio.run(drive(options.cwd, options.agent, options.agent_cwd))
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    main()
