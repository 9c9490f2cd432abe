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

Counters are sent as counters: the ends of straight segments, closed where the
line would leave the budget of a point in between, so the ``rate()`` the server
computes over any 5 minutes stays within the band of the raw one, or of one
increment per window (``_counters``, measured by ``_rates``); the
server fills in the points between two sent ones at the device's step
(gauges: the last value holds; counters: the line). The counters of one
histogram or summary (``_bucket``, ``_sum``, ``_count`` of one label set)
are sent as one unit: when one is sent, all are, at the same instant, so
the server's ``histogram_quantile`` never sees buckets from different times.

A gauge's sent value is rounded to the fewest decimal digits within an
eighth of the band (``round_within``; the server holds the rounded value, and
every point stays within the band of it): ``12345678`` goes as ``12300000``,
which the encoder writes in a byte or two instead of eight.

Near zero the band is absolute: ``floor`` by the unit the metric's name
ends with (``floors``; bytes, seconds, ratios, counts) or the default
``floor``. A series that is not sent backs its heartbeat off, doubling up to
``heartbeat_max`` (here no back-off by default; the agent's config: 30 min,
for format 3 uploads only, whose server holds a quiet gauge's value up to
each batch's last instant). A gauge that moves inside the band backs off too:
the value the server holds is within the band of every point anyway, so its
heartbeat only says the series still exists (about a fifth of a recorded
device's gauge heartbeats went to gauges wiggling inside the band). A counter
that moves is back on the short heartbeat at once: its line reaches the
server only when a segment closes, and the heartbeat bounds that delay. The names in ``Deadband.fixed``
(the agent's own heartbeat) keep theirs, so the server always knows the
device is alive.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from inferwatch.edge._counters import CounterState, cut_previous, offer_counter, send_current
from inferwatch.model import Labels, MetricKind, Sample

__all__ = ["DEFAULT_BAND", "DEFAULT_FLOOR", "DEFAULT_FLOORS", "DEFAULT_HEARTBEAT_MAX_S",
           "DEFAULT_HEARTBEAT_S", "Deadband",
           "DeadbandSettings", "kind_of", "unit_of"]

DEFAULT_BAND = 0.10  # the source's "only metrics that changed by more than 10 %"
DEFAULT_FLOOR = 0.01  # below this magnitude the band is absolute: band * floor
DEFAULT_HEARTBEAT_S = 300.0  # = Prometheus's 5 m lookback, so "last value holds" in PromQL too
DEFAULT_HEARTBEAT_MAX_S = 1800.0  # the agent's back-off cap (serve holds quiet gauges; not remote-write)
# the floor by unit (the metric name's last word, before _total/_bucket/...): a gauge of bytes
# near zero moving by 100 bytes, or of seconds by 0.1 ms, is not news. A counter's floor is that
# of its increase over 5 minutes: "<unit>_total", else "count": an error of one event, 1 s of CPU
# time or 1 KiB in 5 minutes where fewer than 10 (10 KiB) went by is not news
DEFAULT_FLOORS: Mapping[str, float] = {"bytes": 1024.0, "seconds": 0.001, "ratio": 0.01, "celsius": 0.5,
                                       "bytes_total": 10240.0, "count": 10.0}
_SUFFIXES = ("_total", "_bucket", "_count", "_sum", "_created")
_UNIT_MEMBERS = ("_bucket", "_count", "_sum")


@dataclass(frozen=True)
class DeadbandSettings:
    """The band (relative), its absolute floors near zero, the heartbeat and its back-off cap.

    >>> DeadbandSettings(band=0.1, floor=0.01, heartbeat=300.0).threshold(50.0)
    5.0
    """

    band: float = DEFAULT_BAND
    floor: float = DEFAULT_FLOOR
    heartbeat: float = DEFAULT_HEARTBEAT_S
    heartbeat_max: float = 0.0  # 0: the heartbeat itself (no back-off)
    floors: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_FLOORS))

    def __post_init__(self) -> None:
        if not (0.0 <= self.band < 10.0) or not math.isfinite(self.band):
            raise ValueError(f"deadband must be in [0, 10), got {self.band}")
        if not (self.floor > 0.0) or not math.isfinite(self.floor):
            raise ValueError(f"deadband floor must be positive, got {self.floor}")
        if not (self.heartbeat > 0.0) or not math.isfinite(self.heartbeat):
            raise ValueError(f"heartbeat must be positive, got {self.heartbeat}")
        if not math.isfinite(self.heartbeat_max) or 0.0 < self.heartbeat_max < self.heartbeat:
            raise ValueError(f"heartbeat_max must be at least the heartbeat ({self.heartbeat}), "
                             f"got {self.heartbeat_max}")
        for unit, f in self.floors.items():
            if not (f > 0.0) or not math.isfinite(f):
                raise ValueError(f"deadband floor of {unit!r} must be positive, got {f}")
        if self.heartbeat_max == 0.0:
            object.__setattr__(self, "heartbeat_max", self.heartbeat)

    def threshold(self, reference: float, floor: float | None = None) -> float:
        """How far a value may move from ``reference`` and still not be sent."""
        return self.band * max(abs(reference), self.floor if floor is None else floor)

    def floor_of(self, name: str, kind: MetricKind) -> float:
        """The floor of a metric: its unit's (counters: ``<unit>_total``'s first, else ``count``'s)."""
        unit = unit_of(name)
        if kind is MetricKind.COUNTER:
            got = self.floors.get(unit + "_total", self.floors.get("count"))
        else:
            got = self.floors.get(unit)
        return self.floor if got is None else got


def unit_of(name: str) -> str:
    """The unit word of a metric name: ``node_network_receive_bytes_total`` -> ``bytes``."""
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name.rpartition("_")[2]


def kind_of(name: str, kinds: Mapping[str, MetricKind]) -> tuple[MetricKind, bool]:
    """How the deadband treats a sample name: (kind, member of a histogram/summary unit)."""
    got = kinds.get(name)
    if got is MetricKind.COUNTER:
        return got, False
    for suffix in _UNIT_MEMBERS:
        if name.endswith(suffix) and kinds.get(name[: -len(suffix)]) in (MetricKind.HISTOGRAM,
                                                                       MetricKind.SUMMARY):
            return MetricKind.COUNTER, True
    return MetricKind.GAUGE, False


@dataclass(slots=True)  # one per gauge series: ~200 bytes less each than a __dict__
class _State:
    t: float  # last sent
    v: float
    raw_t: float  # last seen (sent or not)
    hb: float  # this series' current heartbeat
    floor: float


def _moved(settings: DeadbandSettings, held: float, v: float, floor: float) -> bool:
    if math.isfinite(held) != math.isfinite(v):
        return True
    if not math.isfinite(v):
        return not (held == v or (math.isnan(held) and math.isnan(v)))
    return abs(v - held) > settings.threshold(held, floor)


def _unit_key(labels: Labels) -> tuple[str, ...]:
    name = labels.name
    for suffix in _UNIT_MEMBERS:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return (name, *(f"{k}={v}" for k, v in sorted(labels.without("le", "quantile").to_dict().items())
                    if k != "__name__"))


@dataclass
class Deadband:
    """Filters samples per series; :meth:`offer_all` returns the samples of a round to send.

    >>> from inferwatch.model import Labels, Sample
    >>> db = Deadband(DeadbandSettings(band=0.1, heartbeat=300.0))
    >>> ls = Labels.of("temp")
    >>> [len(db.offer(Sample(ls, t, v))) for t, v in [(0, 50.0), (15, 54.0), (30, 56.0), (45, 56.1)]]
    [1, 0, 1, 0]
    """

    settings: DeadbandSettings = field(default_factory=DeadbandSettings)
    kinds: dict[str, MetricKind] = field(default_factory=dict)  # family name -> kind (default gauge)
    fixed: frozenset[str] = frozenset()  # names whose heartbeat never backs off
    _series: dict[Labels, _State | CounterState] = field(default_factory=dict)

    def offer(self, s: Sample) -> list[Sample]:
        """The samples to send because ``s`` arrived (``[]`` when the deadband holds it)."""
        return self._offer(s)[0]

    def _offer(self, s: Sample) -> tuple[list[Sample], _State | CounterState]:
        st = self._series.get(s.labels)
        if type(st) is _State:  # the common case first (the agent's CPU per sample)
            if s.t > st.raw_t:
                return self._gauge(st, s), st
            if s.t == st.raw_t:
                return [], st  # a repeat of the same instant carries nothing new
        elif isinstance(st, CounterState) and s.t >= st.rt:  # a counter
            if s.t == st.rt:
                return [], st
            cfg = self.settings
            cap = cfg.heartbeat if s.labels.name in self.fixed else cfg.heartbeat_max
            return [Sample(s.labels, t, v)
                    for t, v in offer_counter(st, s.t, s.v, cfg.band, st.floor, cfg.heartbeat, cap)], st
        # first sample, or the clock stepped back: start over
        st = self._series[s.labels] = self._new(s)
        return ([s] if isinstance(st, CounterState) else [Sample(s.labels, s.t, st.v)]), st

    def offer_all(self, samples: Iterable[Sample]) -> list[Sample]:
        """:meth:`offer` for one round; the counters of a histogram or summary are sent together."""
        out: list[Sample] = []
        units: dict[tuple[str, ...], set[float]] = {}
        members: list[tuple[Labels, CounterState]] = []
        for s in samples:
            got, st = self._offer(s)
            if got:
                out.extend(got)
            if isinstance(st, CounterState) and st.unit is not None:
                members.append((s.labels, st))
                if got:
                    units.setdefault(st.unit, set()).update(x.t for x in got)
        for labels, st in members:
            due = units.get(st.unit or ())
            if due:
                out.extend(self._join(labels, st, due))
        return out

    def _join(self, labels: Labels, st: CounterState, due: set[float]) -> list[Sample]:
        """Send this member's points at the instants another member of its unit was sent."""
        out: list[Sample] = []
        band = self.settings.band
        if not st.psent and st.pt in due:
            t, v = cut_previous(st, band, st.floor)
            st.fits(st.rt, st.rv)
            out.append(Sample(labels, t, v))
        if not st.rsent and st.rt in due:
            t, v = send_current(st, band, st.floor)
            out.append(Sample(labels, t, v))
        return out

    def _new(self, s: Sample) -> _State | CounterState:
        kind, member = kind_of(s.labels.name, self.kinds)
        floor = self.settings.floor_of(s.labels.name, kind)
        hb = self.settings.heartbeat
        if kind is MetricKind.COUNTER:
            st = CounterState(s.t, s.v, s.t, s.v, True, hb=hb, floor=floor,
                              unit=_unit_key(s.labels) if member else None)
            st.restart(s.t, s.v, self.settings.band, floor)
            return st
        return _State(s.t, self._round(s.v, floor), s.t, hb, floor)

    def _round(self, v: float, floor: float) -> float:
        """``v`` to the fewest decimal digits within ``band / 8`` (cheap to encode, within the band)."""
        return round_within(v, self.settings.band / 8.0, floor)

    def _gauge(self, st: _State, s: Sample) -> list[Sample]:
        st.raw_t = s.t
        d = abs(s.v - st.v)
        if (d > self.settings.band * max(abs(st.v), st.floor)) if d - d == 0 else \
                _moved(self.settings, st.v, s.v, st.floor):
            st.t, st.v, st.hb = s.t, self._round(s.v, st.floor), self.settings.heartbeat
            return [Sample(s.labels, s.t, st.v)]
        if s.t - st.t >= st.hb:  # a heartbeat backs off (not the fixed ones): see the module doc
            cap = self.settings.heartbeat if s.labels.name in self.fixed else self.settings.heartbeat_max
            st.hb = min(st.hb * 2.0, cap)
            st.t, st.v = s.t, self._round(s.v, st.floor)
            return [Sample(s.labels, s.t, st.v)]
        return []

    def forget_before(self, t: float) -> int:
        """Drop the state of series not seen since ``t`` (a target went away); returns how many."""
        gone = [ls for ls, st in self._series.items() if st_time(st) < t]
        for ls in gone:
            del self._series[ls]
        return len(gone)

    def __len__(self) -> int:
        return len(self._series)


def round_within(v: float, tol: float, floor: float) -> float:
    """``v`` rounded to a power of ten no coarser than ``2 * tol * max(|v|, floor)``: error <= tol of it.

    >>> round_within(12345678.0, 0.0125, 1024.0), round_within(0.4567, 0.0125, 0.01)
    (12300000.0, 0.46)
    """
    if not tol > 0 or not math.isfinite(v) or v == 0:
        return v
    k = math.floor(math.log10(2 * tol * max(abs(v), floor)))
    got = round(v, -k) if k < 0 else float(round(v / 10**k) * 10**k)
    return got if abs(got - v) <= tol * max(abs(v), floor) else v


def st_time(st: _State | CounterState) -> float:
    """When a series' state last saw a sample."""
    return st.raw_t if isinstance(st, _State) else st.rt
