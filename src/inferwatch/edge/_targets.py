"""The two places a batch can go: the inferwatch ingest endpoint and Prometheus remote-write 1.0.

Both classify the answer the same way (:func:`classify`): 2xx delivered;
network errors, 5xx, 429 and a refused token (401/403: a token fixed on the
server must not have cost the data) retried; any other 4xx rejected. The
token is sent as ``Authorization: Bearer`` and never written to a log line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from inferwatch.edge._http import HttpClient, Transport, TransportError
from inferwatch.edge._remote_write import REMOTE_WRITE_HEADERS, encode_write_request
from inferwatch.edge._spool import Spool, SpoolBatch
from inferwatch.edge._uploader import Outcome
from inferwatch.edge._wire import AgentStats, Batch, encode_batch
from inferwatch.model import Labels

__all__ = ["INGEST_PATH", "IngestTarget", "RemoteWriteTarget", "classify"]

INGEST_PATH = "/api/v1/edge/ingest"
_USER_AGENT = "inferwatch-edge/0.1"


def classify(status: int) -> Outcome:
    """An HTTP status as an :class:`Outcome`."""
    if 200 <= status < 300:
        return Outcome.OK
    if status >= 500 or status in (401, 403, 408, 429):
        return Outcome.RETRY
    return Outcome.REJECT


def _post(http: Transport, url: str, body: bytes, headers: Mapping[str, str]) -> tuple[Outcome, str]:
    try:
        status, answer = http.request("POST", url, body, dict(headers))
    except TransportError as exc:
        return Outcome.RETRY, str(exc)
    return classify(status), f"HTTP {status}: {answer[:200].decode(errors='replace')}"


@dataclass
class IngestTarget:
    """``POST {url}/api/v1/edge/ingest`` with the device's token; gzip'ed JSON (see ``_wire``)."""

    url: str
    device: str
    token: str = field(repr=False)
    heartbeat_s: float = 300.0
    timeout: float = 10.0
    transport: Transport | None = None
    name: str = "ingest"

    def __post_init__(self) -> None:
        self.transport = self.transport or HttpClient(self.timeout)

    def send(self, batch: SpoolBatch, spool: Spool) -> tuple[Outcome, str]:
        """Encode ``batch`` with the spool's stats and POST it."""
        stats = AgentStats(backlog=spool.backlog(), dropped=spool.dropped())
        body = encode_batch(Batch(self.device, batch.batch_id, batch.samples, self.heartbeat_s, stats))
        headers = {"Authorization": f"Bearer {self.token}", "Content-Encoding": "gzip",
                   "Content-Type": "application/json", "User-Agent": _USER_AGENT}
        assert self.transport is not None
        return _post(self.transport, self.url.rstrip("/") + INGEST_PATH, body, headers)

    def close(self) -> None:
        """Close the connections."""
        close = getattr(self.transport, "close", None)
        if close is not None:
            close()


@dataclass
class RemoteWriteTarget:
    """Prometheus remote-write 1.0 to ``url`` (e.g. ``http://prom:9090/api/v1/write``).

    Every series gets the ``device`` label (as Prometheus's ``external_labels``).
    """

    url: str
    device: str
    token: str | None = field(default=None, repr=False)
    timeout: float = 10.0
    transport: Transport | None = None
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    name: str = "remote_write"

    def __post_init__(self) -> None:
        self.transport = self.transport or HttpClient(self.timeout)

    def send(self, batch: SpoolBatch, spool: Spool) -> tuple[Outcome, str]:
        """Encode ``batch`` as a ``WriteRequest`` and POST it."""
        assert self.transport is not None
        headers: dict[str, str] = {**REMOTE_WRITE_HEADERS, "User-Agent": _USER_AGENT, **self.extra_headers}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        body = encode_write_request(batch.samples, extra=Labels({"device": self.device}))
        return _post(self.transport, self.url, body, headers)

    def close(self) -> None:
        """Close the connections."""
        close = getattr(self.transport, "close", None)
        if close is not None:
            close()
