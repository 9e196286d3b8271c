"""R2: converting a v1 ``ListSessionsResponse`` of 10,000 sessions to v2 (parse, convert,
emit JSON) against one ``model_validate_json`` + ``model_dump_json`` of the same payload."""

from __future__ import annotations

import json

from benchmarks import Ratio, compare
from generated import convert
from generated.v1 import models as v1

SESSIONS = 10_000


def payload(count: int = SESSIONS) -> str:
    """A realistic page: every field set on most sessions, some ``_meta`` and unknown keys."""
    sessions = []
    for i in range(count):
        session: dict[str, object] = {
            "sessionId": f"sess_{i:06d}",
            "cwd": f"/home/user/project-{i % 37}",
            "title": f"Session number {i}",
            "updatedAt": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:07Z",
            "archived": i % 3 == 0,
        }
        if i % 4 == 0:
            session["additionalDirectories"] = ["/srv/shared", f"/home/user/lib-{i % 5}"]
        if i % 10 == 0:
            session["_meta"] = {"vendor.example/pinned": True}
        sessions.append(session)
    return json.dumps({"sessions": sessions, "nextCursor": "page-2"})


def run() -> list[Ratio]:
    data = payload()

    def subject() -> str:
        return convert.convert_json("ListSessionsResponse", data, source=1, target=2)

    def baseline() -> str:
        return v1.ListSessionsResponse.model_validate_json(data).model_dump_json(by_alias=True, exclude_unset=True)

    return [
        compare(
            "R2",
            f"ListSessionsResponse of {SESSIONS:,} sessions v1 -> v2 (parse, convert, emit)"
            " vs model_validate_json + model_dump_json",
            subject,
            baseline,
            target=1.5,
            repeat=7,
        )
    ]
