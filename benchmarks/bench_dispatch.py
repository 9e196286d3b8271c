"""R1: the generated router's overhead on one request, against plain JSON round-tripping.

Subject: ``Router.handle_json`` for a ``session/archive`` request with a handler that
does nothing but return a response built once (JSON text in, JSON text out: parse,
envelope checks, params validation into the model, the handler call, result emission).
Baseline: ``json.loads`` + ``json.dumps`` of the same message. Both run ``BATCH`` times
per round inside one already-running event loop, so neither pays loop start-up.
One ratio per protocol version.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from typing import Any

from benchmarks import SAMPLE_S, Ratio, compare

BATCH = 2000
MESSAGE = json.dumps({"jsonrpc": "2.0", "id": 17, "method": "session/archive", "params": {"sessionId": "sess_abc123"}})


def _router(version: int) -> Any:
    dispatch = importlib.import_module(f"generated.v{version}.dispatch")
    models = importlib.import_module(f"generated.v{version}.models")

    done = models.ArchiveSessionResponse()  # built once: the handler itself does no work

    class NoOp(dispatch.AgentHandler):
        async def session_archive(self, params: Any) -> Any:
            return done

    return dispatch.Router(NoOp(), unstable_session_archive=True)


def run() -> list[Ratio]:
    loads, dumps = json.loads, json.dumps

    async def baseline() -> None:
        for _ in range(BATCH):
            dumps(loads(MESSAGE))

    results = []
    loop = asyncio.new_event_loop()
    try:
        for version in (1, 2):
            router = _router(version)
            reply = loop.run_until_complete(router.handle_json(MESSAGE))
            assert reply is not None and json.loads(reply) == {"jsonrpc": "2.0", "id": 17, "result": {}}, reply

            async def subject(handle: Any = router.handle_json) -> None:
                for _ in range(BATCH):
                    await handle(MESSAGE)

            results.append(
                compare(
                    "R1",
                    f"v{version} Router.handle_json(session/archive, no-op handler) vs json.loads+json.dumps, x{BATCH}",
                    lambda s=subject: loop.run_until_complete(s()),
                    lambda: loop.run_until_complete(baseline()),
                    target=1.2,
                    repeat=15,
                    sample_s=SAMPLE_S,
                )
            )
    finally:
        loop.close()
    return results
