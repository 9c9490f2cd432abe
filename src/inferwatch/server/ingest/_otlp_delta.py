"""Delta temporality made cumulative: running totals per stream, in memory, bounded.

An OTLP exporter with delta temporality sends, per stream (one output series:
metric name plus labels), what happened since its previous export. Prometheus
series are cumulative, so each delta point is added to the stream's running
total and the total is stored (as OpenTelemetry's ``deltatocumulative``
processor does). A point not later than the stream's last one (a retried
export, or one out of order) is refused, so a retry never counts twice.

The state is bounded: at most ``max_streams`` streams and ``max_buckets``
histogram bucket counts over all streams (a new stream past either is refused,
named in the partial-success message), and a stream not updated for
``max_idle_s`` is forgotten, so its next point starts again from its own value
(a counter reset, which ``rate()`` handles). A stream costs about 250 bytes
plus about 40 per bucket, so the defaults (100,000 streams, 2,000,000 buckets)
hold the state under about 110 MB. The state is lost at a restart, which reads
as a counter reset as well.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from dataclasses import dataclass

__all__ = ["MAX_BUCKETS", "MAX_IDLE_S", "MAX_STREAMS", "DeltaRefused", "DeltaState"]

MAX_STREAMS = 100_000
MAX_BUCKETS = 2_000_000
MAX_IDLE_S = 600.0


class DeltaRefused(Exception):
    """A delta point that cannot be added (its message goes into the partial-success answer)."""


@dataclass(slots=True)
class _Stream:
    time_ns: int
    seen: float  # server clock seconds, for idle expiry
    count: float  # the running sum (sums) or count (histograms)
    total: float = 0.0  # histograms' running sum
    bounds: tuple[float, ...] = ()
    buckets: list[int] | None = None


class DeltaState:
    """Running totals of delta streams (see the module docstring); safe across threads."""

    def __init__(self, max_streams: int = MAX_STREAMS, max_idle_s: float = MAX_IDLE_S,
                 max_buckets: int = MAX_BUCKETS) -> None:
        self.max_streams, self.max_idle_s, self.max_buckets = max_streams, max_idle_s, max_buckets
        self._streams: dict[Hashable, _Stream] = {}
        self._buckets = 0  # bucket counts held over all streams
        self._lock = threading.Lock()
        self._swept = 0.0

    def __len__(self) -> int:
        return len(self._streams)

    def add_sum(self, key: Hashable, start_ns: int, time_ns: int, value: float, now: float) -> float:
        """The stream's running total after adding ``value`` (raises ``DeltaRefused``)."""
        with self._lock:
            s = self._stream(key, start_ns, time_ns, now, ())
            s.count += value
            return s.count

    def add_histogram(self, key: Hashable, start_ns: int, time_ns: int, count: int, total: float,
                      bounds: tuple[float, ...], buckets: tuple[int, ...],
                      now: float) -> tuple[float, float, list[int]]:
        """The stream's running (count, sum, bucket counts) after adding this point."""
        with self._lock:
            s = self._stream(key, start_ns, time_ns, now, bounds)
            if s.buckets is None or len(s.buckets) != len(buckets):
                self._buckets += len(buckets) - len(s.buckets or ())
                s.buckets = [0] * len(buckets)
            s.count += count
            s.total += total
            s.buckets = [a + b for a, b in zip(s.buckets, buckets, strict=True)]
            return s.count, s.total, list(s.buckets)

    def _stream(self, key: Hashable, start_ns: int, time_ns: int, now: float,
                bounds: tuple[float, ...]) -> _Stream:
        self._sweep(now)
        s = self._streams.get(key)
        if s is not None and time_ns <= s.time_ns:
            raise DeltaRefused(f"delta point at {time_ns} ns is not after its stream's last one "
                               f"({s.time_ns} ns): sent twice or out of order")
        if s is not None and 0 < start_ns < s.time_ns:
            raise DeltaRefused(f"delta point starting at {start_ns} ns overlaps its stream's last one "
                               f"(ending at {s.time_ns} ns)")
        if s is None or s.bounds != bounds:  # new stream, or the bucket layout changed: start again
            if s is None and len(self._streams) >= self.max_streams:
                raise DeltaRefused(f"delta state full ({self.max_streams} streams): new delta stream refused")
            held = len(s.buckets or ()) if s is not None else 0
            if bounds and self._buckets - held + len(bounds) + 1 > self.max_buckets:
                raise DeltaRefused(f"delta state full ({self.max_buckets} histogram buckets): "
                                   "new delta stream refused")
            if s is not None:
                self._buckets -= held
            s = _Stream(time_ns, now, 0.0, bounds=bounds)
            self._streams[key] = s
        s.time_ns, s.seen = time_ns, now
        return s

    def _sweep(self, now: float) -> None:
        if now - self._swept < min(60.0, self.max_idle_s):
            return
        self._swept = now
        idle = [k for k, s in self._streams.items() if now - s.seen > self.max_idle_s]
        for k in idle:
            self._buckets -= len(self._streams.pop(k).buckets or ())
