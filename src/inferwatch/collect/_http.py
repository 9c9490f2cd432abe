"""A minimal HTTP/1.1 server for ``GET /metrics``: socketserver only, no ``http.server``.

``http.server`` brings ``email``, ``http.client`` and ``html`` (~10 MiB resident); the exporter
answers one request shape, so it reads the request line and headers itself and closes the
connection after each answer (as prometheus-client's server does).
"""

from __future__ import annotations

import socketserver
from collections.abc import Callable

from inferwatch.collect._text import CONTENT_TYPE

__all__ = ["MetricsServer"]

_MAX_HEAD = 64 * 1024  # request line and headers; a scraper sends a few hundred bytes


class MetricsServer(socketserver.ThreadingTCPServer):
    """Serves ``body()`` to every GET (any path, as prometheus-client does); HEAD without the body.

    >>> srv = MetricsServer(("127.0.0.1", 0), lambda: b"up 1\\n")
    >>> srv.server_port > 0
    True
    >>> srv.server_close()
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], body: Callable[[], bytes]) -> None:
        self.body = body
        super().__init__(address, _Handler)

    @property
    def server_port(self) -> int:
        """The bound port (``0`` asked for a free one)."""
        return int(self.server_address[1])


class _Handler(socketserver.StreamRequestHandler):
    server: MetricsServer
    timeout = 30

    def handle(self) -> None:
        line = self.rfile.readline(_MAX_HEAD)
        seen = len(line)
        while seen < _MAX_HEAD:  # the headers: nothing in them changes the answer
            header = self.rfile.readline(_MAX_HEAD)
            seen += len(header)
            if header in (b"\r\n", b"\n", b""):
                break
        parts = line.split()
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/"):
            self._answer(400, "Bad Request", b"bad request\n", "text/plain; charset=utf-8")
        elif parts[0] not in (b"GET", b"HEAD"):
            self._answer(405, "Method Not Allowed", b"only GET\n", "text/plain; charset=utf-8")
        else:
            body = self.server.body()
            self._answer(200, "OK", body, CONTENT_TYPE, head=parts[0] == b"HEAD")

    def _answer(self, code: int, reason: str, body: bytes, ctype: str, *, head: bool = False) -> None:
        head_bytes = (f"HTTP/1.1 {code} {reason}\r\nContent-Type: {ctype}\r\n"
                      f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        self.wfile.write(head_bytes if head else head_bytes + body)
