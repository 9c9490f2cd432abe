"""A loopback scrape target whose service fails half its requests: a 500x burn of a 99.9 % SLO."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator

import pytest


class _Target(http.server.BaseHTTPRequestHandler):
    started = time.monotonic()

    def do_GET(self) -> None:
        n = (time.monotonic() - self.started) * 50  # 50 good and 50 failed requests a second
        body = ("# TYPE inferwatch_requests_total counter\n"
                f'inferwatch_requests_total{{service="ranker",code="200"}} {n:.3f}\n'
                f'inferwatch_requests_total{{service="ranker",code="500"}} {n:.3f}\n').encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def target() -> Iterator[str]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Target)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/metrics"
    srv.shutdown()
    srv.server_close()
