"""Delta (deadband) reporting: send a sample only when it moved enough, or a heartbeat is due.

The reconstruction the server makes is *last value holds*: between two sent
samples of a gauge the value is the earlier one. A gauge sample at ``t`` is
sent when

* it is the series' first sample, or
* ``|v - last_sent| > band * max(|last_sent|, floor)``, or
* ``t - last_sent_t >= heartbeat`` (a quiet series still reports, so a
  steady series and a dead one differ: no sample for ``2 * heartbeat`` is
  stale), or
* it is not finite while the last sent value was, or the other way round.

So every sample *not* sent satisfies ``|v - reconstructed| <= band *
max(|reconstructed|, floor)``: the relative reconstruction error is at most
``band`` (the absolute error at most ``band * floor`` near zero). The
property test ``tests/edge/test_deadband.py`` checks exactly this bound.

Counters are handled as counters, not as jumping gauges: the reconstruction
of a counter is the straight line through the last two sent samples (its
rate holds), and a counter sample is sent when its increase since the last
sent sample differs from that line's by more than ``band`` of the increase
(with the floor), when a heartbeat is due, or when it went down (a reset:
then the last sample before the reset is sent too, so the server's
``rate()``/``increase()`` see the reset exactly as Prometheus would).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from inferwatch.model import Labels, MetricKind, Sample

__all__ = ["DEFAULT_BAND", "DEFAULT_FLOOR", "DEFAULT_HEARTBEAT_S", "Deadband", "DeadbandSettings"]

DEFAULT_BAND = 0.10  # the source's "only metrics that changed by more than 10 %"
DEFAULT_FLOOR = 0.01  # below this magnitude the band is absolute: band * floor
DEFAULT_HEARTBEAT_S = 300.0  # = Prometheus's 5 m lookback, so "last value holds" in PromQL too


@dataclass(frozen=True)
class DeadbandSettings:
    """The band (relative), its absolute floor near zero, and the heartbeat in seconds.

    >>> DeadbandSettings(band=0.1, floor=0.01, heartbeat=300.0).threshold(50.0)
    5.0
    """

    band: float = DEFAULT_BAND
    floor: float = DEFAULT_FLOOR
    heartbeat: float = DEFAULT_HEARTBEAT_S

    def __post_init__(self) -> None:
        if not (0.0 <= self.band < 10.0) or not math.isfinite(self.band):
            raise ValueError(f"deadband must be in [0, 10), got {self.band}")
        if not (self.floor > 0.0) or not math.isfinite(self.floor):
            raise ValueError(f"deadband floor must be positive, got {self.floor}")
        if not (self.heartbeat > 0.0) or not math.isfinite(self.heartbeat):
            raise ValueError(f"heartbeat must be positive, got {self.heartbeat}")

    def threshold(self, reference: float) -> float:
        """How far a value may move from ``reference`` and still not be sent."""
        return self.band * max(abs(reference), self.floor)


@dataclass(slots=True)  # one per series: ~200 bytes less each than a __dict__
class _State:
    t: float  # last sent
    v: float
    raw_t: float  # last seen (sent or not)
    raw_v: float
    raw_sent: bool
    rate: float = 0.0  # counters: slope through the last two sent samples


def _moved(settings: DeadbandSettings, held: float, v: float) -> bool:
    if math.isfinite(held) != math.isfinite(v):
        return True
    if not math.isfinite(v):
        return not (held == v or (math.isnan(held) and math.isnan(v)))
    return abs(v - held) > settings.threshold(held)


@dataclass
class Deadband:
    """Filters samples per series; :meth:`offer` returns the samples to send (0, 1 or 2).

    >>> from inferwatch.model import Labels, Sample
    >>> db = Deadband(DeadbandSettings(band=0.1, heartbeat=300.0))
    >>> ls = Labels.of("temp")
    >>> [len(db.offer(Sample(ls, t, v))) for t, v in [(0, 50.0), (15, 54.0), (30, 56.0), (45, 56.1)]]
    [1, 0, 1, 0]
    """

    settings: DeadbandSettings = field(default_factory=DeadbandSettings)
    kinds: dict[str, MetricKind] = field(default_factory=dict)  # metric name -> kind (default gauge)
    _series: dict[Labels, _State] = field(default_factory=dict)

    def offer(self, s: Sample) -> list[Sample]:
        """The samples to send because ``s`` arrived (``[]`` when the deadband holds it)."""
        st = self._series.get(s.labels)
        if st is None or s.t < st.raw_t:  # first sample, or the clock stepped back: start over
            self._series[s.labels] = _State(s.t, s.v, s.t, s.v, True)
            return [s]
        if s.t == st.raw_t:
            return []  # a repeat of the same instant carries nothing new
        if self.kinds.get(s.labels.name) is MetricKind.COUNTER:
            out = self._counter(st, s)
        else:
            out = self._gauge(st, s)
        st.raw_t, st.raw_v, st.raw_sent = s.t, s.v, bool(out)
        return out

    def _gauge(self, st: _State, s: Sample) -> list[Sample]:
        if s.t - st.t >= self.settings.heartbeat or _moved(self.settings, st.v, s.v):
            st.t, st.v = s.t, s.v
            return [s]
        return []

    def _counter(self, st: _State, s: Sample) -> list[Sample]:
        out: list[Sample] = []
        if s.v < st.raw_v:  # reset: the server must see the top before the drop
            if not st.raw_sent:
                out.append(Sample(s.labels, st.raw_t, st.raw_v))
            st.t, st.v, st.rate = s.t, s.v, 0.0
            return [*out, s]
        predicted = st.v + st.rate * (s.t - st.t)
        due = s.t - st.t >= self.settings.heartbeat
        if due or abs(s.v - predicted) > self.settings.threshold(s.v - st.v):
            st.rate = (s.v - st.v) / (s.t - st.t)
            st.t, st.v = s.t, s.v
            return [s]
        return []

    def forget_before(self, t: float) -> int:
        """Drop the state of series not seen since ``t`` (a target went away); returns how many."""
        gone = [ls for ls, st in self._series.items() if st.raw_t < t]
        for ls in gone:
            del self._series[ls]
        return len(gone)

    def __len__(self) -> int:
        return len(self._series)
