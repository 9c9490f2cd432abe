"""The deadband: what it sends, table-driven, and the reconstruction error bound as a property."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch.edge import Deadband, DeadbandSettings
from inferwatch.model import Labels, MetricKind, Sample

G, C = Labels.of("g"), Labels.of("c_total")


def _sent(values: list[tuple[float, float]], labels: Labels = G, **kw: float) -> list[tuple[float, float]]:
    db = Deadband(DeadbandSettings(**kw), kinds={"c_total": MetricKind.COUNTER})
    return [(s.t, s.v) for t, v in values for s in db.offer(Sample(labels, t, v))]


@pytest.mark.parametrize(("values", "want"), [
    # the first sample is always sent
    ([(0, 5.0)], [(0, 5.0)]),
    # within 10 % of the last *sent* value: held, even when it creeps (no drift past the band); a
    # sent value is rounded within an eighth of the band (110.5 -> 110: 1 digit less to send)
    ([(0, 100.0), (15, 109.0), (30, 110.0), (45, 110.5)], [(0, 100.0), (45, 110.0)]),
    # a move beyond the band is sent at once, downward too
    ([(0, 100.0), (15, 89.0)], [(0, 100.0), (15, 89.0)]),
    # near zero the floor makes the band absolute: 0.1 * 0.01 = 0.001
    ([(0, 0.0), (15, 0.0009), (30, 0.0011)], [(0, 0.0), (30, 0.0011)]),
    # the heartbeat: a steady series is sent every 300 s
    ([(t, 7.0) for t in range(0, 661, 15)], [(0, 7.0), (300, 7.0), (600, 7.0)]),
    # NaN after a number, and back, are both sent
    ([(0, 1.0), (15, math.nan), (30, math.nan), (45, 1.0)], [(0, 1.0), (15, math.nan), (45, 1.0)]),
    # the clock stepping back restarts the series at the new time
    ([(100, 1.0), (50, 1.0)], [(100, 1.0), (50, 1.0)]),
])
def test_gauge(values: list[tuple[float, float]], want: list[tuple[float, float]]) -> None:
    got = _sent(values)
    assert len(got) == len(want)
    assert all(g[0] == w[0] and (g[1] == w[1] or (math.isnan(g[1]) and math.isnan(w[1])))
               for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize(("values", "want"), [
    # a steady rate is a straight line: the start and the heartbeats (the server draws the line)
    ([(t, 10.0 * t) for t in range(0, 601, 15)], [(0, 0.0), (300, 3000.0), (600, 6000.0)]),
    # a reset sends the top before the drop (held until then) and the drop itself
    ([(0, 0.0), (15, 150.0), (30, 300.0), (45, 5.0)], [(0, 0.0), (30, 300.0), (45, 5.0)]),
    # the rate doubling bends the line: the corner is sent (once the next point shows it)
    ([(0, 0.0), (15, 150.0), (30, 300.0), (45, 600.0)], [(0, 0.0), (30, 300.0)]),
])
def test_counter(values: list[tuple[float, float]], want: list[tuple[float, float]]) -> None:
    assert _sent(values, C) == want


def test_histogram_is_sent_as_one_unit() -> None:
    # a histogram's buckets, sum and count: when one of them bends, all are sent at that instant
    db = Deadband(DeadbandSettings(), kinds={"lat": MetricKind.HISTOGRAM})
    names = [Labels.of("lat_bucket", le="0.1"), Labels.of("lat_bucket", le="+Inf"), Labels.of("lat_count")]
    sent: list[Sample] = []
    for i in range(40):
        t = i * 15.0
        fast = 10.0 * i if i < 12 else 120.0 + 50.0 * (i - 12)  # only the 0.1 bucket speeds up
        sent += db.offer_all([Sample(names[0], t, fast), Sample(names[1], t, fast + 5.0 * i),
                              Sample(names[2], t, fast + 5.0 * i)])
    by_t: dict[float, set[str]] = {}
    for s in sent:
        by_t.setdefault(s.t, set()).add(str(s.labels))
    assert len(by_t) >= 3
    assert all(len(v) == 3 for v in by_t.values()), by_t


def test_heartbeat_backs_off_for_series_that_never_move_but_not_the_fixed_ones() -> None:
    db = Deadband(DeadbandSettings(heartbeat=300.0, heartbeat_max=1200.0),
                  kinds={"c_total": MetricKind.COUNTER},
                  fixed=frozenset({"beat"}))
    sent: dict[str, list[float]] = {}
    for t in range(0, 3601, 15):
        for s in db.offer_all([Sample(G, t, 1.0), Sample(C, t, 7.0), Sample(Labels.of("beat"), t, 300.0)]):
            sent.setdefault(s.labels.name, []).append(s.t)
    assert sent["g"] == [0, 300, 900, 2100, 3300]  # 300, 600, 1200, 1200 apart
    assert sent["c_total"] == [0, 300, 900, 2100, 3300]
    assert sent["beat"] == list(range(0, 3601, 300))


def test_a_gauge_moving_inside_the_band_backs_off_a_counter_moving_does_not() -> None:
    # the server holds a gauge's value within the band of every point: its heartbeat only says it exists;
    # a moving counter's line reaches the server when a segment closes: the short heartbeat bounds that
    db = Deadband(DeadbandSettings(heartbeat=300.0, heartbeat_max=1200.0),
                  kinds={"c_total": MetricKind.COUNTER})
    sent: dict[str, list[float]] = {}
    for t in range(0, 3601, 15):
        wiggle = 1.0 + 0.05 * ((t // 15) % 2)  # 5 %: inside the 10 % band
        for s in db.offer_all([Sample(G, t, wiggle), Sample(C, t, 7.0 + t)]):
            sent.setdefault(s.labels.name, []).append(s.t)
    assert sent["g"] == [0, 300, 900, 2100, 3300]
    assert sent["c_total"] == list(range(0, 3601, 300))


def test_unit_floors() -> None:
    s = DeadbandSettings()
    assert s.floor_of("node_memory_free_bytes", MetricKind.GAUGE) == 1024.0
    assert s.floor_of("inferwatch_requests_total", MetricKind.COUNTER) == 10.0
    assert s.floor_of("node_cpu_seconds_total", MetricKind.COUNTER) == 10.0
    assert s.floor_of("temp", MetricKind.GAUGE) == 0.01
    # a near-zero bytes gauge does not chatter: 90 bytes of noise around 0 stay held (not so at 0.01)
    db = Deadband(s)
    ls = Labels.of("queue_bytes")
    assert sum(len(db.offer(Sample(ls, t, (t % 45) * 3.0))) for t in range(0, 290, 15)) == 1


@settings(max_examples=150, deadline=None)
@given(rates=st.lists(st.floats(0.0, 50.0), min_size=2, max_size=8), noise=st.floats(0.0, 0.3),
       seed=st.integers(0, 1000))
def test_counter_rate_over_five_minutes_is_within_the_band(rates: list[float], noise: float,
                                                           seed: int) -> None:
    # property: a counter whose rate holds for 10-minute spells (with noise per step), reconstructed
    # as the server does (the line between sent points, at the step), has its increase over every
    # 5-minute window within band * max(true increase, rate change allowance) of the truth
    import random

    rng = random.Random(seed)
    band, step = 0.1, 15.0
    truth: list[tuple[float, float]] = []
    v = 0.0
    for k, r in enumerate(rates):
        for i in range(40):
            truth.append((k * 600.0 + i * step, v))
            v += r * step * (1 + noise * (rng.random() - 0.5))
    db = Deadband(DeadbandSettings(band=band), kinds={"c_total": MetricKind.COUNTER})
    sent = [(s.t, s.v) for t, v in truth for s in db.offer(Sample(C, t, v))]
    sent.append(truth[-1])  # the open segment's end: the next heartbeat or bend would send it
    recon = dict(_interpolate(sent, step))
    window = 20
    for i in range(window, len(truth)):
        t0, v0 = truth[i - window]
        t1, v1 = truth[i]
        got = recon[t1] - recon[t0]
        want = v1 - v0
        # spells whose rate changes inside the window: the allowance is the bigger of the two rates
        near = [r for k, r in enumerate(rates) if k * 600.0 - 300.0 <= t1 and t0 <= (k + 1) * 600.0]
        allowed = band * max(want, max(near) * 300.0, 1.0) * 1.0001 + 1e-6
        assert abs(got - want) <= allowed, (t0, t1, got, want)


def _interpolate(sent: list[tuple[float, float]], step: float) -> list[tuple[float, float]]:
    out = [sent[0]]
    for (t0, v0), (t1, v1) in itertools.pairwise(sent):
        n = round((t1 - t0) / step)
        out += [(t0 + k * step, v0 + (v1 - v0) * k / n) for k in range(1, n + 1)]
    return out


def test_settings_refuse_nonsense() -> None:
    for kw in ({"band": -0.1}, {"floor": 0.0}, {"heartbeat": 0.0}, {"band": math.nan}):
        with pytest.raises(ValueError):
            DeadbandSettings(**kw)


finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(finite, min_size=1, max_size=200), band=st.floats(0.0, 1.0),
       floor=st.floats(1e-6, 10.0), step=st.floats(0.1, 120.0), heartbeat=st.floats(1.0, 600.0))
def test_reconstruction_error_is_within_the_band(values: list[float], band: float, floor: float,
                                                  step: float, heartbeat: float) -> None:
    # property: reconstructing a gauge as "last sent value holds", every point is within
    # band * max(|reconstructed|, floor) of the truth, and no gap between sends reaches
    # heartbeat + one step (a steady series never looks stale)
    s = DeadbandSettings(band, floor, heartbeat)
    db = Deadband(s)
    held, held_t = math.nan, -math.inf
    for i, v in enumerate(values):
        t = i * step
        out = db.offer(Sample(G, t, v))
        if out:
            assert t - held_t < heartbeat + step + 1e-9 or math.isinf(held_t)
            held, held_t = out[-1].v, t
        assert abs(v - held) <= band * max(abs(held), floor) * (1 + 1e-12)
