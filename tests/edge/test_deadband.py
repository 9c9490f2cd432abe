"""The deadband: what it sends, table-driven, and the reconstruction error bound as a property."""

from __future__ import annotations

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
    # within 10 % of the last *sent* value: held, even when it creeps (no drift past the band)
    ([(0, 100.0), (15, 109.0), (30, 110.0), (45, 110.5)], [(0, 100.0), (45, 110.5)]),
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
    # a steady rate is a straight line: only the first two and the heartbeats
    ([(t, 10.0 * t) for t in range(0, 601, 15)], [(0, 0.0), (15, 150.0), (315, 3150.0)]),
    # a reset sends the top before the drop (held until then) and the drop itself
    ([(0, 0.0), (15, 150.0), (30, 300.0), (45, 5.0)], [(0, 0.0), (15, 150.0), (30, 300.0), (45, 5.0)]),
    # the rate doubling is a move of the line, sent
    ([(0, 0.0), (15, 150.0), (30, 300.0), (45, 600.0)], [(0, 0.0), (15, 150.0), (45, 600.0)]),
])
def test_counter(values: list[tuple[float, float]], want: list[tuple[float, float]]) -> None:
    assert _sent(values, C) == want


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
