"""The two places a batch can go: the inferwatch ingest endpoint and Prometheus remote-write 1.0.

Both classify the answer the same way (:func:`classify`): 2xx delivered;
network errors, 5xx, 429 and a refused token (401/403: a token fixed on the
server must not have cost the data) retried; any other 4xx rejected. The
token is sent as ``Authorization: Bearer`` and never written to a log line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inferwatch import __version__
from inferwatch.edge._deadband import kind_of
from inferwatch.edge._http import HttpClient, Transport, TransportError
from inferwatch.edge._spool import Spool, SpoolBatch
from inferwatch.edge._uploader import Outcome
from inferwatch.formats import (
    REMOTE_WRITE_HEADERS,
    WIRE_VERSION_COLUMNS,
    AgentStats,
    Batch,
    encode_batch,
    encode_columns,
    encode_compact,
    encode_write_request,
)
from inferwatch.model import Clock, Labels, MetricKind, SystemClock

__all__ = ["INGEST_PATH", "IngestTarget", "RemoteWriteTarget", "classify"]

INGEST_PATH = "/api/v1/edge/ingest"
_USER_AGENT = "inferwatch-edge/0.1"


def classify(status: int) -> Outcome:
    """An HTTP status as an :class:`Outcome`."""
    if 200 <= status < 300:
        return Outcome.OK
    if status == 413:
        return Outcome.TOO_LARGE  # the batch is fine, only too big: the uploader splits it
    if status >= 500 or status in (401, 403, 408, 429):
        return Outcome.RETRY
    return Outcome.REJECT


def _post(http: Transport, url: str, body: bytes, headers: Mapping[str, str]) -> tuple[Outcome, str]:
    return _answer(http, url, body, headers)[:2]


def _answer(http: Transport, url: str, body: bytes, headers: Mapping[str, str]) -> tuple[Outcome, str, int]:
    try:
        status, answer = http.request("POST", url, body, dict(headers))
    except TransportError as exc:
        return Outcome.RETRY, str(exc), 0
    return classify(status), f"HTTP {status}: {answer[:200].decode(errors='replace')}", status


@dataclass
class IngestTarget:
    """``POST {url}/api/v1/edge/ingest`` with the device's token; gzip'ed JSON (see ``_wire``).

    Sends version 3 (``_wire3``; version 2 with ``version=2``): a batch carries the labels (and
    kinds) of the series the server has not acknowledged yet (remembered per spool while the agent
    runs; after a restart the
    first batches carry them again). A 409 (the server has lost them) resends the
    batch at once, same id, with every definition it needs.
    """

    url: str
    device: str
    token: str = field(repr=False)
    heartbeat_s: float = 300.0
    timeout: float = 10.0
    transport: Transport | None = None
    name: str = "ingest"
    version: int = WIRE_VERSION_COLUMNS
    kinds: Mapping[str, MetricKind] = field(default_factory=dict)  # the deadband's: counters marked "c"
    step: float = 0.0  # the device's collection step (the server fills in between sent points at it)
    heartbeat_max: float = 0.0
    labels: Mapping[str, str] = field(default_factory=dict)  # the device's own (the fleet page)
    clock: Clock = field(default_factory=SystemClock)  # the agent's: the server reads its offset
    config_hash: str = ""  # the configuration the agent applied
    config_error: str = ""  # why it refused the last one the server sent
    errors: int = 0  # failed uploads since the start (reported with every batch)
    last_error: str = ""

    def __post_init__(self) -> None:
        self.transport = self.transport or HttpClient(self.timeout)
        self._known: dict[str, set[int]] = {}  # spool id -> series ids the server acknowledged

    def send(self, batch: SpoolBatch, spool: Spool) -> tuple[Outcome, str]:
        """Encode ``batch`` with the spool's and the agent's stats and POST it; count a failure."""
        outcome, reason = self._send(batch, spool)
        if outcome is not Outcome.OK:
            self.errors += 1
            self.last_error = f"{outcome.value}: {reason}"[:200]
        return outcome, reason

    def _send(self, batch: SpoolBatch, spool: Spool) -> tuple[Outcome, str]:
        # what waits behind this batch: a healthy device, sending as fast as it reads, reports 0
        stats = AgentStats(backlog=max(0, spool.backlog() - len(batch.samples)), dropped=spool.dropped(),
                           version=__version__, labels=self.labels, sent_at=self.clock.now(),
                           errors=self.errors, last_error=self.last_error, config_hash=self.config_hash,
                           config_error=self.config_error)
        one = Batch(self.device, batch.batch_id, batch.samples, self.heartbeat_s, stats)
        headers = {"Authorization": f"Bearer {self.token}", "Content-Encoding": "gzip",
                   "Content-Type": "application/json", "User-Agent": _USER_AGENT}
        assert self.transport is not None
        url = self.url.rstrip("/") + INGEST_PATH
        if len(batch.series_ids) != len(batch.samples):  # no series ids: version 1
            return _post(self.transport, url, encode_batch(one), headers)
        known = self._known.setdefault(batch.spool_id, set())
        fresh = spool.labels_of(i for i in set(batch.series_ids) if i not in known)
        body = self._encode(one, batch.series_ids, fresh)
        outcome, reason, status = _answer(self.transport, url, body, headers)
        if status == 409:  # the server lost the definitions (its state was reset): all of them, once more
            known.clear()
            body = self._encode(one, batch.series_ids, spool.labels_of(set(batch.series_ids)))
            outcome, reason, status = _answer(self.transport, url, body, headers)
        if outcome is Outcome.OK:
            known.update(batch.series_ids)
        return outcome, reason

    def _encode(self, batch: Batch, ids: Sequence[int], labels: Mapping[int, Labels]) -> bytes:
        if self.version == 2:
            return encode_compact(batch, ids, labels)
        return encode_columns(column_header(batch, labels, self.kinds, self.step,
                                            self.heartbeat_max or self.heartbeat_s), ids, batch.samples)

    def close(self) -> None:
        """Close the connections."""
        close = getattr(self.transport, "close", None)
        if close is not None:
            close()


def column_header(batch: Batch, labels: Mapping[int, Labels], kinds: Mapping[str, MetricKind], step: float,
                  heartbeat_max: float) -> dict[str, Any]:
    """The JSON header of a format-3 batch (``encode_columns`` adds the times' base and unit)."""
    head: dict[str, Any] = {"b": batch.batch_id, "hb": batch.heartbeat_s, "hm": heartbeat_max, "st": step}
    if batch.agent != AgentStats():
        head["a"] = batch.agent.to_json()
    defs: dict[str, Any] = {}
    for i in sorted(labels):
        d: dict[str, Any] = {"l": labels[i].to_dict()}
        if kind_of(labels[i].name, kinds)[0] is MetricKind.COUNTER:
            d["k"] = "c"
        defs[str(i)] = d
    if defs:
        head["defs"] = defs
    return head


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
