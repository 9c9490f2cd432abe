"""Where the agent's samples come from: collectors, local scrapes, and a loopback push endpoint.

Each source has an interval and a ``read(now)`` that never raises (a source
that fails is logged and yields nothing this round, the others go on), and
says which metric families are counters.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from inferwatch._exceptions import InputError
from inferwatch.edge._http import HttpClient, Transport, TransportError
from inferwatch.formats import parse_text
from inferwatch.model import CATALOG, Labels, MetricKind, Sample

if TYPE_CHECKING:  # at run time neither: psutil and http.server load only when a source needs them
    import http.server

    from inferwatch.collect import Collector

__all__ = ["CollectorSource", "PushSource", "ScrapeSource", "Source"]

log = logging.getLogger(__name__)
MAX_PUSH_BYTES = 1 << 20


class Source(Protocol):
    """A source of samples, read every ``interval`` seconds."""

    name: str
    interval: float
    kinds: dict[str, MetricKind]

    def read(self, now: float) -> list[Sample]:
        """This round's samples (``[]`` when the source failed; logged)."""
        ...


@dataclass
class CollectorSource:
    """A collector of :mod:`inferwatch.collect` (host, GPU); kinds from the metric catalog."""

    collector: Collector
    interval: float
    name: str = ""
    kinds: dict[str, MetricKind] = field(default_factory=lambda: {n: s.kind for n, s in CATALOG.items()})

    def __post_init__(self) -> None:
        self.name = self.name or self.collector.name

    def read(self, now: float) -> list[Sample]:
        """Collect once."""
        try:
            return self.collector.collect(now)
        except Exception:
            log.warning("source %s failed", self.name, exc_info=True)
            return []


@dataclass
class ScrapeSource:
    """GET a local Prometheus-text endpoint (the camera application's ``/metrics``)."""

    url: str
    interval: float
    timeout: float = 5.0
    transport: Transport | None = None
    name: str = ""
    kinds: dict[str, MetricKind] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.name = self.name or f"scrape {self.url}"
        self.transport = self.transport or HttpClient(self.timeout)

    def read(self, now: float) -> list[Sample]:
        """Scrape once; a failed scrape is logged and yields nothing."""
        assert self.transport is not None
        try:
            status, body = self.transport.request("GET", self.url, None, {"Accept": "text/plain"})
            if status != 200:
                raise InputError(f"HTTP {status}")
            samples, kinds = parse_text(body.decode(errors="replace"), now=now)
        except (TransportError, InputError) as exc:
            log.warning("%s: %s", self.name, exc)
            return []
        self.kinds.update(kinds)
        return samples


class PushSource:
    """``POST /push`` of Prometheus text on loopback; samples wait here until the next round.

    Bad bodies answer 400 naming the line; bodies over 1 MiB answer 413.
    """

    def __init__(self, listen: str, interval: float, *, max_pending: int = 100_000) -> None:
        import http.server

        host, _, port = listen.rpartition(":")
        self.interval, self.name, self.max_pending = interval, f"push {listen}", max_pending
        self.kinds: dict[str, MetricKind] = {}
        self.dropped = 0
        self._pending: list[Sample] = []
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer((host or "127.0.0.1", int(port)), self._handler())
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, name="inferwatch-edge-push",
                                        daemon=True)
        self._thread.start()

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        import http.server

        source = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if self.path.split("?")[0] != "/push":
                    return self._answer(404, "only POST /push")
                size = int(self.headers.get("Content-Length") or 0)
                if size > MAX_PUSH_BYTES:
                    return self._answer(413, f"body over {MAX_PUSH_BYTES} bytes")
                try:
                    text = self.rfile.read(size).decode()
                    samples, kinds = parse_text(text, now=float("nan"))
                except (InputError, UnicodeDecodeError) as exc:
                    return self._answer(400, f"push: {exc}")
                source._accept(samples, kinds)
                self._answer(204, "")

            def _answer(self, status: int, text: str) -> None:
                body = text.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def _accept(self, samples: list[Sample], kinds: dict[str, MetricKind]) -> None:
        with self._lock:
            self.kinds.update(kinds)
            room = self.max_pending - len(self._pending)
            self._pending.extend(samples[:max(room, 0)])
            self.dropped += max(0, len(samples) - max(room, 0))

    def read(self, now: float) -> list[Sample]:
        """What was pushed since the last round (stamped ``now`` unless the push gave a time)."""
        with self._lock:
            pending, self._pending = self._pending, []
        stamped = [s if s.t == s.t else Sample(s.labels, now, s.v) for s in pending]
        latest: dict[tuple[Labels, float], Sample] = {}
        for s in stamped:  # pushed twice in one round: the later value of that instant wins
            latest[(s.labels, s.t)] = s
        return sorted(latest.values(), key=lambda s: s.t)

    def close(self) -> None:
        """Stop listening."""
        self._server.shutdown()
        self._server.server_close()
