"""Drift and confidence across worker processes: sketches add, gauges are computed once on the sum.

Workers are simulated in one process (each with its own multiprocess-store identity), so the
merged view can be compared with one aggregator that saw every row.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from prometheus_client.metrics_core import Metric

from inferwatch.model import SimulatedClock
from inferwatch.quality import ConfidenceAggregator, DriftAggregator, Profile, build_profile
from inferwatch.sdk import Monitor
from inferwatch.sdk._aggregator import merge_sketches
from inferwatch.sdk.multiproc._multiproc import MultiprocStore

QUALITY = ("inferwatch_feature_psi", "inferwatch_feature_psi_critical", "inferwatch_anomalous_samples_ratio",
           "inferwatch_drift_window_samples", "inferwatch_prediction_confidence_mean",
           "inferwatch_low_confidence_ratio", "inferwatch_confidence_psi",
           "inferwatch_prediction_confidence_bucket", "inferwatch_quality_invalid_observations_total")


def _profile() -> Profile:
    rng = np.random.default_rng(11)
    return build_profile({"x": rng.normal(size=5000), "y": rng.exponential(size=5000),
                          "c": np.array(["a", "b", "c"] * 1000 + ["a"] * 2000, dtype=object),
                          "confidence": rng.uniform(0.3, 1.0, size=5000)})


def _samples(families: list[Metric]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in families for s in f.samples if s.name in QUALITY}


def _rows(rng: np.random.Generator, n: int, shift: float) -> list[tuple[object, object, object]]:
    x, y = rng.normal(shift, size=n), rng.exponential(size=n)
    c = rng.choice(np.array(["a", "b", "c", "new"], dtype=object), size=n, p=[0.5, 0.2, 0.2, 0.1])
    conf = rng.uniform(0.2, 1.0, size=n)
    return [({"x": float(x[i]), "y": float(y[i]), "c": c[i]}, float(conf[i]), None) for i in range(n)]


@pytest.fixture
def stores() -> Iterator[list[MultiprocStore]]:
    opened: list[MultiprocStore] = []
    yield opened
    for s in opened:
        s.close()


def _aggregators(profile: Profile) -> tuple[DriftAggregator, ConfidenceAggregator]:
    drift = DriftAggregator(profile, service="svc", model="m", window=60.0, min_samples=500)
    conf = ConfidenceAggregator(service="svc", model="m", window=60.0,
                                reference=profile.feature("confidence"))  # type: ignore[arg-type]
    return drift, conf


def test_merged_window_equals_one_process_on_the_same_rows(
    tmp_path: Path, stores: list[MultiprocStore],
) -> None:
    # Rule: PSI, critical value, anomalous ratio, window size and confidence gauges of three workers'
    # merged sketches equal those of one aggregator that saw every row; no quality series has a pid.
    profile = _profile()
    rng = np.random.default_rng(12)
    one = _aggregators(profile)
    workers = [_aggregators(profile) for _ in range(3)]
    now = [0.0]
    alive = {(pid, 1.0) for pid in (1, 2, 3)}
    for pid, (drift, conf) in enumerate(workers, start=1):
        stores.append(MultiprocStore(
            tmp_path, lambda d=drift, c=conf: [*d.share(now[0]), *c.share(now[0])], lambda _t: True,
            interval_s=None, identity=lambda p=pid: (p, 1.0), alive=lambda p, s: (p, s) in alive))
    for t, n, shift in ((5.0, 300, 0.0), (30.0, 450, 0.4), (59.0, 120, 0.4), (70.0, 50, 0.0)):
        for i, worker in enumerate(workers):  # each worker gets its own, different share
            rows = _rows(rng, n + 37 * i, shift)
            for agg in (*worker, *one):
                agg.consume("prediction", rows, t)
    now[0] = 75.0  # [0, 60) closed; [60, 120) still open
    for s in stores[1:]:
        s.publish()
    merged = merge_sketches(stores[0].families(), [*workers[0]], now[0])
    want = _samples([*one[0].collect(now[0]), *one[1].collect(now[0])])
    got = _samples(merged)
    assert got.keys() == want.keys()
    for key, v in want.items():
        assert got[key] == pytest.approx(v, rel=1e-12, abs=1e-15), key
    window_rows = want["inferwatch_drift_window_samples", (("model", "m"), ("service", "svc"))]
    assert window_rows == 3 * 870 + 3 * 37 * (0 + 1 + 2)
    assert not any(k.startswith("inferwatch_sketch") for k, _ in got)
    assert all("pid" not in dict(labels) for _, labels in got)


def test_monitor_exposes_one_psi_per_feature_and_no_sketch(tmp_path: Path) -> None:
    # Rule: through Monitor with a multiprocess directory, the exposition has the merged gauges
    # (no pid label) and never the sketch families.
    profile = _profile()
    clock = SimulatedClock(0.0)
    drift, conf = _aggregators(profile)
    with Monitor("svc", "m", clock=clock, aggregators=[drift, conf], multiprocess_dir=tmp_path) as mon:
        for row in _rows(np.random.default_rng(13), 600, 1.0):
            mon.observe_prediction(*row)
        assert mon.flush(60.0)
        clock.advance(61.0)
        text = mon.metrics_text()
    assert "inferwatch_sketch" not in text
    psi_lines = [ln for ln in text.splitlines() if ln.startswith("inferwatch_feature_psi{")]
    assert len(psi_lines) == 3 and all("pid=" not in ln for ln in psi_lines)
    assert 'inferwatch_drift_window_samples{model="m",service="svc"} 600.0' in text
