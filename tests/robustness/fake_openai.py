"""A loopback (127.0.0.1 only) OpenAI-style server that answers every POST with raw bytes from a list.

    with RawServer([b'[]', b'{"choices": null}']) as server: ...   # then openai:MODEL at server.url

Bounded: each request pops the next body (the last one repeats; or `body_for(headers)` makes it); `server.hits` counts requests, so a
test can assert nothing looped. Optional per-body headers (e.g. Content-Encoding: gzip).
"""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RawServer:
    def __init__(self, bodies: list[bytes | tuple[bytes, dict]], status: int = 200, body_for=None):
        """`body_for(request_headers) -> bytes`, when given, makes every body instead (e.g. one echoing a header)."""
        self.bodies, self.status, self.hits, self.paths = list(bodies), status, 0, []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with owner._lock:
                    owner.hits += 1
                    owner.paths.append(self.path)
                    item = owner.bodies.pop(0) if len(owner.bodies) > 1 else owner.bodies[0] if owner.bodies else b""
                if body_for is not None:
                    item = body_for(self.headers)
                body, headers = item if isinstance(item, tuple) else (item, {})
                self.send_response(owner.status)
                self.send_header("Content-Type", "application/json")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> "RawServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
