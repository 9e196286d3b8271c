"""A one-tool MCP server over stdio, standard library only: ``write_note`` writes its
``text`` to ``standin.txt`` in the directory the server runs in. For agents whose own
tools ask no permission (fast-agent asks the ACP client before every MCP tool call).

    python mcp_write_tool.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

TOOL = {
    "name": "write_note",
    "description": "Write a note to standin.txt",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}


def answer(request: dict[str, Any]) -> Any:
    method = request["method"]
    if method == "initialize":
        return {
            "protocolVersion": request["params"].get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "standin-notes", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call" and request["params"]["name"] == TOOL["name"]:
        Path("standin.txt").write_text(request["params"]["arguments"]["text"], encoding="utf-8")
        return {"content": [{"type": "text", "text": "written"}], "isError": False}
    if method == "ping":
        return {}
    raise LookupError(method)


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue  # (notifications: initialized, cancelled)
        try:
            reply: dict[str, Any] = {"result": answer(request)}
        except LookupError as unknown:
            reply = {"error": {"code": -32601, "message": f"no method {unknown}"}}
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], **reply}), flush=True)


if __name__ == "__main__":
    main()
