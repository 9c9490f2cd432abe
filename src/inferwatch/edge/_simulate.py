"""What the deadband would save on a recorded device: ``inferwatch edge simulate``.

The samples go through the real :class:`Deadband` (one round per timestamp, as the
agent reads a source: counters as counters, histograms and summaries as units)
and the real encoder (format 3, ``_wire3``: labels and kinds in a series' first
batch, ids after). The naive upload sends every point with the same batching (one
batch per ``batch_interval`` of sample time, at most ``batch_size`` samples) and
the same encoder and compression; ``bytes_remote_write`` is that naive upload as a device
without this agent pushes it: Prometheus remote-write (snappy protobuf, every series' labels in
every request), the same batches. Errors are measured against the server's
reconstruction (``server/ingest/_edge_fill``): a gauge's last sent value holds -- its
error ``|true - held|``, relative to ``max(|held|, floor)`` (at most the band); a
counter is the line between its sent points, filled in at the step as the server
does -- its error is that of ``rate()`` over every 5-minute window, resets
included (``max_rate_rel_error``: ``|rate - raw rate| / max(raw rate, one
increment / 300 s)``, ``_rates``; ``worst_rate`` in ``by_type`` names the series
and the window); a histogram's buckets are counters too, and ``max_quantile_rel_error`` is the worst relative
error of its 0.5, 0.9 and 0.99 quantiles over every 5-minute window
(``_quantiles``), ``max_quantile_rank_error`` the share of observations they are
off by. Points after a
series' last sent one are not measured (the agent sends them later). A point
repeating its predecessor's timestamp is not measured (NAB has a few; no
time-series store keeps two values at one instant, and the deadband drops the
second).
"""

from __future__ import annotations

import csv
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inferwatch._exceptions import InputError
from inferwatch.edge._counters import RATE_WINDOW_S
from inferwatch.edge._deadband import Deadband, DeadbandSettings, kind_of
from inferwatch.edge._quantiles import counter_rebuilt, histogram_units, worst_quantile_error
from inferwatch.edge._rates import RateError, rate_error
from inferwatch.formats import encode_columns, encode_write_request, snappy_encode
from inferwatch.model import Labels, MetricKind, Sample

__all__ = ["SimulationResult", "read_series_csv", "replay", "simulate", "simulate_device", "type_of"]

_LABELS = Labels.of("edge_simulated_value", device="simulated")


@dataclass(frozen=True)
class SimulationResult:
    """The numbers ``edge simulate`` prints."""

    points: int
    sent: int
    bytes_naive: int
    bytes_sent: int
    reduction: float
    max_rel_error: float
    max_abs_error: float
    max_rate_rel_error: float = 0.0  # counters: the increase over 5-minute windows
    max_quantile_rel_error: float = 0.0  # histograms: quantiles over 5-minute windows
    max_quantile_rank_error: float = 0.0  # ... and the share of observations they are off by
    by_type: dict[str, dict[str, Any]] = field(default_factory=dict)  # gauge, counter, histogram, ...
    bytes_remote_write: int = 0  # every point as Prometheus remote-write, the same batches
    reduction_vs_remote_write: float = 0.0  # 1 - bytes_sent / bytes_remote_write

    def to_json(self) -> dict[str, Any]:
        """A plain dict, in the documented key order."""
        return asdict(self)


def _parse_time(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    dt = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()


def read_series_csv(path: Path, *, timestamp_col: str = "timestamp",
                    value_col: str = "value") -> list[tuple[float, float]]:
    """``(t, v)`` points of a CSV file; :class:`InputError` names the file, line and column."""
    try:
        with path.open(newline="") as f:
            rows = csv.DictReader(f)
            for col in (timestamp_col, value_col):
                if col not in (rows.fieldnames or ()):
                    have = ", ".join(rows.fieldnames or ())
                    raise InputError(f"{path}: no column {col!r} (columns: {have})")
            out = [_row(path, rows.line_num, r, timestamp_col, value_col) for r in rows]
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text CSV file") from None
    if not out:
        raise InputError(f"{path}: no data rows")
    return out


def _row(path: Path, line: int, row: dict[str, str], tcol: str, vcol: str) -> tuple[float, float]:
    try:
        t = _parse_time(row[tcol] or "")
    except ValueError:
        raise InputError(f"{path}:{line}: column {tcol!r}: {row[tcol]!r} is not a timestamp") from None
    try:
        v = float(row[vcol] or "")
    except ValueError:
        raise InputError(f"{path}:{line}: column {vcol!r}: {row[vcol]!r} is not a number") from None
    return t, v


def _batches(samples: Sequence[Sample], interval: float, size: int) -> Iterable[Sequence[Sample]]:
    group: list[Sample] = []
    window = None
    for s in samples:
        w = math.floor(s.t / interval)
        if group and (w != window or len(group) >= size):
            yield group
            group = []
        group.append(s)
        window = w
    if group:
        yield group


def _wire_bytes(samples: Sequence[Sample], kinds: Mapping[str, MetricKind], interval: float, size: int,
                settings: DeadbandSettings, step: float) -> int:
    """Bytes of ``samples`` uploaded in format 3 as the agent batches them."""
    ids: dict[Labels, int] = {}
    total = seq = 0
    for b in _batches(samples, interval, size):
        defs: dict[str, dict[str, object]] = {}
        for s in b:
            if s.labels not in ids:
                ids[s.labels] = len(ids) + 1
                d: dict[str, object] = {"l": s.labels.to_dict()}
                if kind_of(s.labels.name, kinds)[0] is MetricKind.COUNTER:
                    d["k"] = "c"
                defs[str(ids[s.labels])] = d
        head: dict[str, object] = {"b": f"5f3a9c0d12e4:{seq + 1}-{seq + len(b)}", "hb": settings.heartbeat,
                                   "hm": settings.heartbeat_max, "st": step}
        if defs:
            head["defs"] = defs
        total += len(encode_columns(head, [ids[s.labels] for s in b], b))
        seq += len(b)
    return total


def _remote_write_bytes(samples: Sequence[Sample], interval: float, size: int) -> int:
    """Bytes of ``samples`` as Prometheus remote-write requests, batched as the agent batches."""
    batches = _batches(samples, interval, size)
    return sum(len(encode_write_request(b, compress=snappy_encode)) for b in batches)


def type_of(name: str, kinds: Mapping[str, MetricKind]) -> str:
    """The type a sample name is counted under: gauge, counter, histogram or summary."""
    got = kinds.get(name)
    if got in (MetricKind.HISTOGRAM, MetricKind.SUMMARY, MetricKind.COUNTER):
        return str(got)
    for suffix in ("_bucket", "_count", "_sum"):
        base = kinds.get(name[: -len(suffix)]) if name.endswith(suffix) else None
        if base in (MetricKind.HISTOGRAM, MetricKind.SUMMARY):
            return str(base)
    return "gauge"


@dataclass
class _Errors:
    rel: float = 0.0
    abs: float = 0.0
    rate: float = 0.0
    quantile: float = 0.0
    rank: float = 0.0
    worst_rate: dict[str, object] = field(default_factory=dict)  # the series and window of `rate`
    skipped: int = 0  # rate windows with an edge in a scrape the trace missed (not measured)

    def add_rate(self, labels: Labels, got: RateError) -> None:
        self.skipped += got.skipped
        if got.error > self.rate or not self.worst_rate:
            self.rate = max(self.rate, got.error)
            if got.error >= self.rate and math.isfinite(got.end):
                self.worst_rate = {"series": str(labels), "window_end": got.end,
                                   "window_s": RATE_WINDOW_S, "raw_rate": got.raw, "rate": got.rebuilt}


def _gauge_errors(raw: Sequence[Sample], sent: Sequence[Sample], floor: float, err: _Errors) -> None:
    i, held, last_t = 0, math.nan, math.nan
    for s in raw:
        while i < len(sent) and sent[i].t <= s.t:
            held = sent[i].v
            i += 1
        repeat, last_t = s.t == last_t, s.t
        if repeat or (math.isnan(held) and i == 0):
            continue
        e = abs(s.v - held)
        if math.isfinite(e):
            err.abs = max(err.abs, e)
            err.rel = max(err.rel, e / max(abs(held), floor))


def _counter_errors(raw: Sequence[Sample], sent: Sequence[Sample], err: _Errors, step: float,
                    max_gap: float) -> None:
    for _, true, rec in counter_rebuilt(raw, sent):  # (t, true, reconstructed)
        err.abs = max(err.abs, abs(true - rec))
    if raw:
        err.add_rate(raw[0].labels, rate_error(raw, sent, step, max_gap, RATE_WINDOW_S))


def replay(samples: Sequence[Sample], kinds: Mapping[str, MetricKind], settings: DeadbandSettings, *,
           batch_interval: float = 60.0, batch_size: int = 1000) -> SimulationResult:
    """Replay a device's samples (any order) through the deadband and the encoder; see the module doc."""
    naive = sorted(samples, key=lambda s: s.t)
    db = Deadband(settings, kinds=dict(kinds))
    sent: list[Sample] = []
    for _, group in itertools.groupby(naive, key=lambda s: s.t):
        sent.extend(db.offer_all(group))
    raw_by: dict[Labels, list[Sample]] = {}
    sent_by: dict[Labels, list[Sample]] = {}
    for s in naive:
        raw_by.setdefault(s.labels, []).append(s)
    for s in sorted(sent, key=lambda s: s.t):
        sent_by.setdefault(s.labels, []).append(s)
    steps = [b.t - a.t for r in raw_by.values() for a, b in itertools.pairwise(r) if b.t > a.t]
    step = sorted(steps)[len(steps) // 2] if steps else 0.0
    per: dict[str, _Errors] = {}
    for labels, raw in raw_by.items():
        kind, _ = kind_of(labels.name, kinds)
        err = per.setdefault(type_of(labels.name, kinds), _Errors())
        if kind is MetricKind.COUNTER:
            _counter_errors(raw, sent_by.get(labels, []), err, step, settings.heartbeat_max)
        else:
            _gauge_errors(raw, sent_by.get(labels, []), settings.floor_of(labels.name, kind), err)
    hist = per.get("histogram", _Errors())
    for unit, buckets in histogram_units(list(raw_by)).items() if "histogram" in per else ():
        # windows with `count`'s floor of observations above the quantile (not the buckets' own floor)
        floor = settings.floor_of(unit.name.removesuffix("_bucket") + "_count", MetricKind.COUNTER)
        q, rank = worst_quantile_error(buckets, raw_by, sent_by, RATE_WINDOW_S, floor)
        hist.quantile, hist.rank = max(hist.quantile, q), max(hist.rank, rank)

    def wire(xs: Sequence[Sample]) -> int:
        return _wire_bytes(sorted(xs, key=lambda s: s.t), kinds, batch_interval, batch_size, settings, step)

    by_type: dict[str, dict[str, Any]] = {}
    types = {ls.name: type_of(ls.name, kinds) for ls in raw_by}  # once per name, not per sample
    for name in sorted(per):
        raw_t = [s for s in naive if types[s.labels.name] == name]
        sent_t = [s for s in sent if types[s.labels.name] == name]
        b0, b1 = wire(raw_t), wire(sent_t)
        e = per[name]
        by_type[name] = {"series": sum(1 for ls in raw_by if types[ls.name] == name),
                         "points": len(raw_t), "sent": len(sent_t), "bytes_naive": b0, "bytes_sent": b1,
                         "reduction": 1.0 - b1 / b0 if b0 else 0.0, "max_rel_error": e.rel,
                         "max_abs_error": e.abs, "max_rate_rel_error": e.rate,
                         **({"worst_rate": e.worst_rate, "rate_windows_skipped": e.skipped}
                            if e.worst_rate else {}),
                         **({"max_quantile_rel_error": e.quantile, "max_quantile_rank_error": e.rank}
                            if name == "histogram" else {})}
    b0, b1 = wire(naive), wire(sent)
    rw = _remote_write_bytes(naive, batch_interval, batch_size)
    gauges = [e for name, e in per.items() if name in ("gauge", "summary")] or [_Errors()]
    return SimulationResult(len(naive), len(sent), b0, b1, 1.0 - b1 / b0 if b0 else 0.0,
                            max(e.rel for e in gauges), max(e.abs for e in per.values()),
                            max((e.rate for e in per.values()), default=0.0),
                            max((e.quantile for e in per.values()), default=0.0),
                            max((e.rank for e in per.values()), default=0.0), by_type,
                            rw, 1.0 - b1 / rw if rw else 0.0)


def simulate(points: Sequence[tuple[float, float]], settings: DeadbandSettings, *,
             batch_interval: float = 60.0, batch_size: int = 1000) -> SimulationResult:
    """Replay ``points`` (one gauge) through the deadband and the encoder; see the module docstring."""
    return simulate_device({"value": points}, settings, batch_interval=batch_interval, batch_size=batch_size)


def simulate_device(series: Mapping[str, Sequence[tuple[float, float]]], settings: DeadbandSettings, *,
                    batch_interval: float = 60.0, batch_size: int = 1000) -> SimulationResult:
    """Like :func:`simulate` for one device with several gauges (named by the keys), batched together."""
    samples = [Sample(_LABELS.with_(series=name) if len(series) > 1 else _LABELS, t, v)
               for name, points in series.items() for t, v in points]
    return replay(samples, {}, settings, batch_interval=batch_interval, batch_size=batch_size)
