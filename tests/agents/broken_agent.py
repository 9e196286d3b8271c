"""A deliberately broken agent for the conformance kit's tests.

``python tests/agents/broken_agent.py FAULT --db PATH`` runs the reference agent
behind a proxy that breaks exactly one RFD requirement, named after the kit scenario
that checks it (``ok`` breaks nothing). The proxy keeps a little state (which ids were
created, archived, deleted; which filters each cursor came from) to break only what
that one scenario looks at.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from acp_codegen.processes import spawn

ROOT = Path(__file__).resolve().parents[2]
PAGE_SIZE = 3

FAULTS = (
    "ok",
    "initialize",  # initialize result without protocolVersion
    "capability",  # v1: archive without list; v2: archive outside capabilities.session
    "archive-unarchive",  # archiving an archived session fails
    "unknown-id",  # unknown ids succeed
    "deleted-id",  # ids deleted while unarchived succeed
    "filter-values",  # archived: null lists like include
    "filter-invalid",  # unsupported archived values list like exclude
    "pagination",  # each next page repeats the previous page's last session
    "cursor-filters",  # a cursor keeps the filters it was issued with
    "restoration",  # unarchive also resumes the session
    "history",  # session/load replays no user messages
    "active-archive",  # no session_info_update archived: true
    "load-archived",  # resume and load unarchive first
    "delete-archived",  # delete of an archived session does nothing
    "persistence",  # every process starts with an empty database
    "bad-update",  # session_info_update archived as the string "true" (for a session in a turn)
    "hang-unknown",  # never answers session/archive of an unknown id
    # Not faults of the agent: the environment's (or one that only looks like it).
    "needs-auth",  # offers authMethods, refuses sessions with -32000 until `authenticate` with agent-key works
    "needs-login",  # the same, refused with -32603 naming the auth method agent-login
    "filter-invalid-32000",  # unsupported archived values get -32000, though nothing needs authentication
)
AUTH_METHODS = {"needs-auth": "agent-key", "needs-login": "agent-login"}
KEY_VARIABLE = "BROKEN_AGENT_KEY"  # `authenticate` works when it is set


class Proxy:
    def __init__(self, fault: str, command: list[str]) -> None:
        self.fault = fault
        self.child = spawn(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.lock = threading.Lock()
        self.pending: dict[Any, dict[str, Any]] = {}  # request id -> request, for rewriting answers
        self.created: set[str] = set()
        self.archived: set[str] = set()
        self.deleted_unarchived: set[str] = set()
        self.in_turn: set[str] = set()
        self.cursors: dict[str, tuple[Any, Any, Any]] = {}  # cursor -> (cwd, archived, last session)
        self.own_ids = (f"proxy-{n}" for n in itertools.count())
        self.version = 1
        self.authenticated = False

    # -- plumbing

    def to_client(self, message: dict[str, Any]) -> None:
        with self.lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def to_agent(self, message: dict[str, Any]) -> None:
        assert self.child.stdin is not None
        self.child.stdin.write(json.dumps(message).encode() + b"\n")
        self.child.stdin.flush()

    def answer(
        self, message: dict[str, Any], result: Any = None, error: int | None = None, text: str = "broken on purpose"
    ) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if error is None:
            reply["result"] = result if result is not None else {}
        else:
            reply["error"] = {"code": error, "message": text}
        self.to_client(reply)

    def refuse_unauthenticated(self, message: dict[str, Any]) -> bool:
        """needs-auth, needs-login: ``authenticate`` and the refusals before it."""
        method, auth = message.get("method"), AUTH_METHODS.get(self.fault)
        if auth is None or "id" not in message:
            return False
        if method == "authenticate":
            if (message.get("params") or {}).get("methodId") != auth:
                self.answer(message, error=-32602, text=f"unknown auth method; offered: {auth}")
            elif not os.environ.get(KEY_VARIABLE):
                self.answer(message, error=-32000, text=f"{KEY_VARIABLE} is not set")
            else:
                self.authenticated = True
                self.answer(message)
            return True
        if method == "initialize" or self.authenticated:
            return False
        if self.fault == "needs-auth":
            self.answer(message, error=-32000, text="Authentication required")
        else:
            self.answer(message, error=-32603, text=f"Not logged in: authenticate with {auth} first")
        return True

    def side_request(self, method: str, params: dict[str, Any]) -> None:
        """A request of the proxy's own; its answer is swallowed."""
        self.to_agent({"jsonrpc": "2.0", "id": next(self.own_ids), "method": method, "params": params})

    # -- client -> agent

    def from_client(self, message: dict[str, Any]) -> None:  # noqa: C901 - one independent fault per scenario
        method = message.get("method")
        params = message.get("params") or {}
        sid = params.get("sessionId")
        fault = self.fault
        if method == "initialize":
            self.version = params.get("protocolVersion", 1)
        if self.refuse_unauthenticated(message):
            return None
        if method == "session/prompt":
            self.in_turn.add(sid)
        if method in ("session/archive", "session/unarchive"):
            if fault == "archive-unarchive" and method == "session/archive" and sid in self.archived:
                return self.answer(message, error=-32603)
            if fault == "unknown-id" and sid not in self.created:
                return self.answer(message)
            if fault == "deleted-id" and sid in self.deleted_unarchived:
                return self.answer(message)
            if fault == "hang-unknown" and sid not in self.created:
                return None
        if method == "session/delete":
            if fault == "delete-archived" and sid in self.archived:
                return self.answer(message)
            if sid not in self.archived:
                self.deleted_unarchived.add(sid)
        if method in ("session/resume", "session/load") and fault == "load-archived" and sid in self.archived:
            self.side_request("session/unarchive", {"sessionId": sid})
            self.archived.discard(sid)
        if method == "session/list":
            if fault == "filter-values" and "archived" in params and params["archived"] is None:
                params["archived"] = "include"
            if fault == "filter-invalid" and params.get("archived") not in (None, "exclude", "include", "only"):
                params["archived"] = "exclude"
            if fault == "filter-invalid-32000" and params.get("archived") not in (None, "exclude", "include", "only"):
                return self.answer(message, error=-32000, text="Authentication required")
            issued = self.cursors.get(params.get("cursor"))
            if fault == "cursor-filters" and issued is not None:
                params["cwd"], params["archived"] = issued[0], issued[1]
        if "id" in message:
            self.pending[message["id"]] = message
        self.to_agent(message)
        return None

    # -- agent -> client

    def from_agent(self, message: dict[str, Any]) -> None:  # noqa: C901 - one independent fault per scenario
        if isinstance(message.get("id"), str) and message["id"].startswith("proxy-"):
            return
        fault = self.fault
        if message.get("method") == "session/update":
            update = message["params"]["update"]
            kind = update.get("sessionUpdate")
            sid = message["params"]["sessionId"]
            if fault == "history" and kind == "user_message_chunk":
                return
            if kind == "state_update" and update.get("state") == "idle":
                self.in_turn.discard(sid)
            if kind == "session_info_update" and update.get("archived") is True:
                if fault == "active-archive":
                    return
                if fault == "bad-update" and sid in self.in_turn:
                    update["archived"] = "true"
            return self.to_client(message)
        request = self.pending.pop(message.get("id"), None)
        if request is not None and request["method"] == "session/prompt" and self.version == 1:
            self.in_turn.discard((request.get("params") or {}).get("sessionId"))
        result = message.get("result")
        if request is None or not isinstance(result, dict):
            return self.to_client(message)
        method = request["method"]
        params = request.get("params") or {}
        sid = params.get("sessionId")
        if method == "initialize":
            self.break_initialize(result)
        elif method == "session/new":
            self.created.add(result["sessionId"])
        elif method == "session/archive":
            self.archived.add(sid)
        elif method == "session/unarchive":
            self.archived.discard(sid)
            if fault == "restoration":
                self.side_request("session/resume", {"sessionId": sid})
        elif method == "session/list":
            self.break_list(params, result)
        return self.to_client(message)

    def break_initialize(self, result: dict[str, Any]) -> None:
        if self.fault in AUTH_METHODS:
            name = f"Key in {KEY_VARIABLE}"
            result["authMethods"] = [{"id": AUTH_METHODS[self.fault], "name": name}]
        if self.fault == "initialize":
            del result["protocolVersion"]
        if self.fault == "capability":
            if self.version == 1:
                del result["agentCapabilities"]["sessionCapabilities"]["list"]
            else:
                result["capabilities"]["archive"] = result["capabilities"]["session"].pop("archive")

    def break_list(self, params: dict[str, Any], result: dict[str, Any]) -> None:
        sessions = result["sessions"]
        issued = self.cursors.get(params.get("cursor"))
        same_filters = issued is not None and issued[:2] == (params.get("cwd"), params.get("archived"))
        if self.fault == "pagination" and same_filters and issued is not None:
            sessions.insert(0, issued[2])
        if result.get("nextCursor") and sessions:
            self.cursors[result["nextCursor"]] = (params.get("cwd"), params.get("archived"), sessions[-1])

    def pump_agent(self) -> None:
        assert self.child.stdout is not None
        for line in self.child.stdout:
            self.from_agent(json.loads(line))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("fault", choices=FAULTS)
    parser.add_argument("--db", type=Path, required=True)
    args = parser.parse_args()
    db = args.db
    if args.fault == "persistence":
        db = Path(tempfile.mkdtemp()) / "fresh.sqlite3"
    command = [sys.executable, "-m", "examples.archive_agent", "--db", str(db), "--page-size", str(PAGE_SIZE)]
    proxy = Proxy(args.fault, command)
    reader = threading.Thread(target=proxy.pump_agent, daemon=True)
    reader.start()
    for line in sys.stdin:
        proxy.from_client(json.loads(line))
    assert proxy.child.stdin is not None
    proxy.child.stdin.close()
    proxy.child.wait()
    reader.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
