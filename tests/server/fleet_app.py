"""One replica of a fleet for the outlier end-to-end test: ``/metrics`` on loopback.

``python fleet_app.py CONTROL``: serves ``app_p99_seconds{model="ranker"}`` (the value in the file
CONTROL, re-read on every scrape, so the test slows this replica by writing it) on an ephemeral
port of 127.0.0.1, printed as its first line.
"""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CONTROL = Path(sys.argv[1])


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        value = float(CONTROL.read_text().strip())
        body = (f"# TYPE app_p99_seconds gauge\napp_p99_seconds{{model=\"ranker\"}} {value}\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
