"""R1: the generated router's overhead on one request, against plain JSON round-tripping.

Subject: ``Router.handle_json`` for a ``session/archive`` request with a handler that
does nothing (JSON text in, JSON text out: parse, envelope checks, params validation
into the model, the handler call, result emission). Baseline: ``json.loads`` +
``json.dumps`` of the same message. Both run ``BATCH`` times per round inside one
already-running event loop, so neither pays loop start-up.
"""

from __future__ import annotations

import asyncio
import json

from benchmarks import Ratio, compare
from generated.v1 import dispatch, models

BATCH = 2000
MESSAGE = json.dumps({"jsonrpc": "2.0", "id": 17, "method": "session/archive", "params": {"sessionId": "sess_abc123"}})


class _NoOp(dispatch.AgentHandler):
    async def session_archive(self, params: models.ArchiveSessionRequest) -> models.ArchiveSessionResponse:
        return models.ArchiveSessionResponse()


def run() -> list[Ratio]:
    router = dispatch.Router(_NoOp(), unstable_session_archive=True)
    reply = asyncio.run(router.handle_json(MESSAGE))
    assert reply is not None and json.loads(reply) == {"jsonrpc": "2.0", "id": 17, "result": {}}, reply

    async def subject() -> None:
        handle = router.handle_json
        for _ in range(BATCH):
            await handle(MESSAGE)

    async def baseline() -> None:
        loads, dumps = json.loads, json.dumps
        for _ in range(BATCH):
            dumps(loads(MESSAGE))

    loop = asyncio.new_event_loop()
    try:
        return [
            compare(
                "R1",
                f"Router.handle_json(session/archive, no-op handler) vs json.loads+json.dumps, x{BATCH}",
                lambda: loop.run_until_complete(subject()),
                lambda: loop.run_until_complete(baseline()),
                target=2.5,
                repeat=7,
            )
        ]
    finally:
        loop.close()
