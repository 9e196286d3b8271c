"""A local stand-in for a model's HTTP API, so that published agents run here with no
credentials: OpenAI's chat completions (``POST .../chat/completions``) and Anthropic's
messages (``POST .../messages``, ``.../messages/count_tokens``), streamed as server-sent
events or answered whole, as the request asks; ``GET .../models`` lists the one model.

What it answers is scripted by the last message of the conversation:

- a tool's result: :data:`AFTER_TOOL`;
- a user message holding :data:`TOOL` where the request offers the tool the test named
  (``StandIn.tool``; also under a prefix, as agents name an MCP server's tools): a call of
  that tool with its arguments (requests without it, such as an agent's own title or
  summary requests, get the plain reply);
- a user message holding :data:`SLOW`: a reply that streams a word every
  :data:`SLOW_EVERY` seconds until the client goes away (at most :data:`SLOW_FOR`), for a
  turn to be cancelled in;
- anything else: :data:`REPLY`, in a few chunks.

Every request's decoded body is kept in ``requests`` (path, body), in order.

    with StandIn() as model:
        model.tool = ToolCall("write_file", {"file_path": "/abs/x.txt", "content": "hi"})
        ... OPENAI_BASE_URL=model.url("/v1") ...
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "standin-1"
TOOL = "[[tool]]"
SLOW = "[[slow]]"
REPLY = "Hello from the stand-in."
AFTER_TOOL = "Done: the tool ran."
SLOW_EVERY = 0.2
SLOW_FOR = 60.0


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class Answer:
    """What one request gets: text chunks, or a tool call; ``slow``: chunk after chunk until
    the client goes away."""

    chunks: list[str] = field(default_factory=list)
    tool: ToolCall | None = None
    slow: bool = False

    def texts(self) -> Iterator[str]:
        if not self.slow:
            yield from self.chunks
            return
        deadline = time.monotonic() + SLOW_FOR
        tick = 0
        while time.monotonic() < deadline:
            tick += 1
            yield f"tick {tick} "
            time.sleep(SLOW_EVERY)


def _text(content: Any) -> str:
    """The text of a message's content: a string, or a list of parts or blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(_text(part.get("text") or part.get("content")) for part in content if isinstance(part, dict))
    return ""


def _last_is_tool_result(messages: list[Any]) -> bool:
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":  # (OpenAI)
        return True
    content = last.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )  # (Anthropic)


def _offered_tools(body: dict[str, Any]) -> set[str]:
    names = set()
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        names.add((function or tool).get("name"))
    return names


class StandIn:
    """The server, on a free port of 127.0.0.1, in a thread of its own while entered."""

    def __init__(self) -> None:
        self.tool: ToolCall | None = None
        self.requests: list[tuple[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.standin = self  # type: ignore[attr-defined]  # (what the handler answers with)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str = "") -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{path}"

    def answer(self, body: dict[str, Any]) -> Answer:
        messages = body.get("messages") or []
        if _last_is_tool_result(messages):
            return Answer([AFTER_TOOL])
        said = _text(messages[-1].get("content")) if messages else ""
        offered = [name for name in _offered_tools(body) if self.tool and str(name).endswith(self.tool.name)]
        if TOOL in said and self.tool is not None and offered:
            return Answer(tool=ToolCall(min(offered, key=len), self.tool.arguments))
        if SLOW in said:
            return Answer(slow=True)
        return Answer(["Hello ", "from the ", "stand-in."])

    def __enter__(self) -> StandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # (quiet)
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "standin"}]})
        else:
            self._json(404, {"error": {"message": f"no {self.path} here", "type": "not_found"}})

    def do_POST(self) -> None:
        standin: StandIn = self.server.standin  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return self._json(400, {"error": {"message": "not JSON", "type": "invalid_request_error"}})
        path = self.path.split("?")[0].rstrip("/")
        standin.requests.append((path, body))
        if path.endswith("/count_tokens"):
            return self._json(200, {"input_tokens": 10})
        write = _openai if path.endswith("/chat/completions") else _anthropic if path.endswith("/messages") else None
        if write is None:
            return self._json(404, {"error": {"message": f"no {self.path} here", "type": "not_found"}})
        try:
            write(self, body, standin.answer(body))
        except (BrokenPipeError, ConnectionResetError):
            pass  # (the client went away: a cancelled turn)
        return None

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def events(self) -> None:
        """Server-sent events from here on; the body ends with the connection."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def event(self, data: Any, name: str | None = None) -> None:
        head = f"event: {name}\n" if name else ""
        self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()


def _openai(out: _Handler, body: dict[str, Any], answer: Answer) -> None:
    """A chat completion, or its chunks (``stream``)."""
    made = {"id": "chatcmpl-standin", "created": int(time.time()), "model": body.get("model") or MODEL}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    call = None
    if answer.tool is not None:
        function = {"name": answer.tool.name, "arguments": json.dumps(answer.tool.arguments)}
        call = {"id": "call_standin_1", "type": "function", "function": function}
    finish = "tool_calls" if call else "stop"
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": None if call else "".join(answer.texts())}
        if call:
            message["tool_calls"] = [call]
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return out._json(200, {**made, "object": "chat.completion", "choices": [choice], "usage": usage})
    out.events()

    def chunk(delta: dict[str, Any], reason: str | None = None) -> None:
        choice = {"index": 0, "delta": delta, "finish_reason": reason}
        out.event({**made, "object": "chat.completion.chunk", "choices": [choice]})

    chunk({"role": "assistant", "content": ""})
    if call:
        chunk({"tool_calls": [{"index": 0, **call}]})
    for text in answer.texts():
        chunk({"content": text})
    chunk({}, finish)
    if (body.get("stream_options") or {}).get("include_usage"):
        out.event({**made, "object": "chat.completion.chunk", "choices": [], "usage": usage})
    out.wfile.write(b"data: [DONE]\n\n")
    out.wfile.flush()
    return None


def _anthropic(out: _Handler, body: dict[str, Any], answer: Answer) -> None:
    """A message, or its events (``stream``)."""
    message = {"id": "msg_standin", "type": "message", "role": "assistant", "model": body.get("model") or MODEL}
    stop = "tool_use" if answer.tool else "end_turn"
    tool_use = None
    if answer.tool is not None:
        tool_use = {"type": "tool_use", "id": "toolu_standin_1", "name": answer.tool.name, "input": {}}
    if not body.get("stream"):
        if answer.tool is not None:
            content = [{**tool_use, "input": answer.tool.arguments}]
        else:
            content = [{"type": "text", "text": "".join(answer.texts())}]
        usage = {"input_tokens": 10, "output_tokens": 5}
        return out._json(
            200, {**message, "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        )
    out.events()
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    out.event(
        {"type": "message_start", "message": {**start, "usage": {"input_tokens": 10, "output_tokens": 1}}},
        "message_start",
    )
    block = tool_use or {"type": "text", "text": ""}
    out.event({"type": "content_block_start", "index": 0, "content_block": block}, "content_block_start")
    if answer.tool is not None:
        deltas: Iterator[dict[str, Any]] = iter(
            [{"type": "input_json_delta", "partial_json": json.dumps(answer.tool.arguments)}]
        )
    else:
        deltas = ({"type": "text_delta", "text": text} for text in answer.texts())
    for delta in deltas:
        out.event({"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta")
    out.event({"type": "content_block_stop", "index": 0}, "content_block_stop")
    end = {"stop_reason": stop, "stop_sequence": None}
    out.event({"type": "message_delta", "delta": end, "usage": {"output_tokens": 5}}, "message_delta")
    out.event({"type": "message_stop"}, "message_stop")
    return None
