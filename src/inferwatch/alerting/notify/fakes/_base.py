"""A loopback HTTP server for fakes, and what the platform fakes share (a request, a rate window).

``LoopbackServer(handler).start()`` serves on 127.0.0.1 (a free port); ``handler``
takes a ``FakeRequest`` and returns ``(status, headers, body)``.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Clock", "FakeRequest", "LoopbackServer", "Reply", "Window", "json_reply"]

Clock = Callable[[], float]
Reply = tuple[int, dict[str, str], bytes]


@dataclass
class FakeRequest:
    """One request as a fake sees it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names in lower case
    body: bytes

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.body)

    def form(self) -> dict[str, list[str]]:
        """The body as a form."""
        return urllib.parse.parse_qs(self.body.decode())


@dataclass
class LoopbackServer:
    """An HTTP server on 127.0.0.1 answering with ``handler``; ``requests`` records what came.

    ``replies``, when not empty, answer the next requests instead (a test's scripted failures).
    Like a real service it sends ``Date``; a reply may set its own, or ``""`` to leave it out.
    """

    handler: Callable[[FakeRequest], Reply]
    requests: list[FakeRequest] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)
    got: threading.Event = field(default_factory=threading.Event)

    def start(self) -> LoopbackServer:
        """Serve on a thread of its own."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _do(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                u = urllib.parse.urlsplit(self.path)
                req = FakeRequest(self.command, u.path, urllib.parse.parse_qs(u.query),
                                  {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(n))
                fake.requests.append(req)
                status, headers, body = fake.replies.pop(0) if fake.replies else fake.handler(req)
                self.send_response_only(status)
                for k, v in {"Date": self.date_time_string(), **headers}.items():
                    if v:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                fake.got.set()

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _do

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server = self._server
        self._thread = threading.Thread(target=lambda: server.serve_forever(poll_interval=0.05), daemon=True)
        self._thread.start()
        return self

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def json_reply(obj: Any, status: int = 200) -> Reply:
    """A JSON answer (UTF-8, not escaped: as the platforms write Chinese)."""
    return status, {"Content-Type": "application/json"}, json.dumps(obj, ensure_ascii=False).encode()


class Window:
    """At most ``count`` in any ``per`` seconds; ``penalty``: refused for that long once over."""

    def __init__(self, count: int, per: float, penalty: float = 0.0) -> None:
        self.count, self.per, self.penalty = count, per, penalty
        self.sent: list[float] = []
        self.blocked_until = float("-inf")

    def allow(self, now: float) -> bool:
        """Whether one more may pass at ``now`` (counted when it does)."""
        if now < self.blocked_until:
            return False
        self.sent = [t for t in self.sent if t > now - self.per]
        if len(self.sent) >= self.count:
            self.blocked_until = now + self.penalty
            return False
        self.sent.append(now)
        return True
