"""A real HTTP target on loopback whose body and status the test controls."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest


@dataclass
class FakeTarget:
    """What the loopback target serves next."""

    body: str = ""
    status: int = 200
    content_type: str = "text/plain; version=0.0.4"
    url: str = ""
    requests: int = 0
    delay: threading.Event | None = None  # when set, the handler waits on it (for timeouts)


@pytest.fixture
def target() -> Iterator[FakeTarget]:
    state = FakeTarget()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests += 1
            if state.delay is not None:
                state.delay.wait(5.0)
            data = state.body.encode()
            try:
                self.send_response(state.status)
                self.send_header("Content-Type", state.content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the scraper gave up (the timeout test): nothing to answer

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
    yield state
    if state.delay is not None:
        state.delay.set()
    server.shutdown()
    server.server_close()
    th.join(10)
