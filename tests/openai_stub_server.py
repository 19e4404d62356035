"""A scripted OpenAI-compatible chat server on 127.0.0.1 for tests (no network, stdlib only).

    python tests/openai_stub_server.py --port 8011 --reply "Final answer: 42"   # then point openai:stub at it

    sys.path.insert(0, "tests"); from openai_stub_server import StubServer   # or: from tests.openai_stub_server import …
    with StubServer(script=[{"status": 429, "retry_after": "0.05"}, {"status": 500}, {"drop": True}],
                    responder=lambda body: {"content": "4"}, latency=0.01) as server:
        sampler = make_sampler("openai:stub", base_url=server.url)

Each request to POST /v1/chat/completions takes the next action from `script` (FIFO, shared by all
connections); when the script is empty, `responder(body)` gives the action (default: echo "ok").
An action is a dict:
- `{"content": str, "reasoning_content": str?, "tool_calls": [...]?, "finish_reason": "stop"|"length"?, "latency": s?}`
- `{"status": 429|500|…, "retry_after": "seconds"?, "latency": s?}` — an error reply
- `{"drop": True}` — close the connection without replying
`latency` (per action, or the server default) delays the reply. `server.requests` keeps every
request body received and `server.actions` the action each got, in arrival order.
"""
from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Action = dict[str, Any]


class StubServer:
    def __init__(self, script: list[Action] | None = None, responder: Callable[[dict], Action] | None = None,
                 latency: float = 0.0, port: int = 0):
        self.script = list(script or [])
        self.responder = responder or (lambda body: {"content": "ok"})
        self.latency = latency
        self.requests: list[dict] = []
        self.actions: list[Action] = []
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def next_action(self, body: dict) -> Action:
        with self._lock:
            self.requests.append(body)
            action = self.script.pop(0) if self.script else None
        if action is None:
            action = self.responder(body)
        with self._lock:
            self.actions.append(action)
        return action

    def start(self) -> "StubServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "StubServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: 32 clients connecting at once overflow it, and the
    # dropped SYNs are retried by the kernel after 1 s, 3 s (measured: 1.07-2.6 s stalls at --concurrency 32).
    request_queue_size = 128
    daemon_threads = True


def completion_payload(body: dict, action: Action) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": action.get("content")}
    if action.get("reasoning_content") is not None:
        message["reasoning_content"] = action["reasoning_content"]
    if action.get("tool_calls"):
        message["tool_calls"] = action["tool_calls"]
    finish = action.get("finish_reason") or ("tool_calls" if action.get("tool_calls") else "stop")
    content = action.get("content") or ""
    prompt_chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
    return {
        "id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()), "model": body.get("model", "stub"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": max(1, len(content) // 4),
                  "total_tokens": prompt_chars // 4 + max(1, len(content) // 4)},
    }


def _handler_for(server: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in two sends; no 40 ms delayed-ACK stall

        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:  # /v1/models, for clients that probe it
            self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            action = server.next_action(body)
            delay = action.get("latency", server.latency)
            if delay:
                time.sleep(delay)
            if action.get("drop"):
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            status = int(action.get("status", 200))
            if status != 200:
                headers = {"Retry-After": str(action["retry_after"])} if "retry_after" in action else {}
                self._send(status, {"error": {"message": f"scripted {status}", "type": "stub"}}, headers)
                return
            self._send(200, completion_payload(body, action))

        def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--reply", default="ok", help="content of every reply")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    args = parser.parse_args()
    stub = StubServer(responder=lambda body: {"content": args.reply}, latency=args.latency, port=args.port)
    print(f"serving {stub.url}/chat/completions (Ctrl-C stops)")
    stub._httpd.serve_forever()
