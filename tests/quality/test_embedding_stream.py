"""Streaming embedding drift: the SDK path, the evidence rule, bounded memory, bad vectors counted."""

from __future__ import annotations

import numpy as np
import pytest

from inferwatch import InputError
from inferwatch.model import SimulatedClock
from inferwatch.quality import EmbeddingDriftAggregator, Reservoir
from inferwatch.sdk import Monitor

LABELS = {"service": "svc", "model": "m", "embedding": "query"}


def _monitor_run(shift: float, rows: int, seed: int = 0) -> Monitor:
    rng = np.random.default_rng(seed)
    clock = SimulatedClock(0.0)
    agg = EmbeddingDriftAggregator({"query": rng.normal(size=(400, 24))}, service="svc", model="m",
                                   window=60.0, sample_size=300, min_samples=100, permutations=100)
    mon = Monitor("svc", "m", clock=clock, aggregators=[agg])
    for v in rng.normal(shift, 1.0, size=(rows, 24)):
        mon.observe_embedding("query", v)
    assert mon.flush(60.0)
    clock.advance(61.0)  # the window [0, 60) closes at the next scrape
    return mon


def test_drifted_window_crosses_through_the_monitor() -> None:
    with _monitor_run(0.5, 500) as mon:
        mmd = mon.get_sample_value("inferwatch_embedding_drift_mmd", LABELS)
        crit = mon.get_sample_value("inferwatch_embedding_drift_mmd_critical", LABELS)
        auc = mon.get_sample_value("inferwatch_embedding_drift_auc", LABELS)
        assert mmd is not None and crit is not None and mmd > crit
        assert auc is not None and auc > (mon.get_sample_value("inferwatch_embedding_drift_auc_critical",
                                                               LABELS) or 1.0)
        assert mon.get_sample_value("inferwatch_embedding_window_samples", LABELS) == 500


def test_stable_window_stays_below() -> None:
    with _monitor_run(0.0, 500, seed=1) as mon:
        mmd = mon.get_sample_value("inferwatch_embedding_drift_mmd", LABELS)
        crit = mon.get_sample_value("inferwatch_embedding_drift_mmd_critical", LABELS)
        assert mmd is not None and crit is not None and mmd < crit


def test_small_window_publishes_only_its_size() -> None:
    """The evidence rule: 50 embeddings (min_samples 100), even far off, give no score to page on."""
    with _monitor_run(3.0, 50) as mon:
        assert mon.get_sample_value("inferwatch_embedding_drift_mmd", LABELS) is None
        assert mon.get_sample_value("inferwatch_embedding_drift_auc", LABELS) is None
        assert mon.get_sample_value("inferwatch_embedding_window_samples", LABELS) == 50


def test_bad_vectors_are_counted_never_raised() -> None:
    agg = EmbeddingDriftAggregator({"q": np.zeros((20, 4)) + np.arange(4)}, service="s", window=60.0)
    agg.consume("embedding", [("q", [1, 2, 3]), ("q", [1, 2, 3, float("nan")]), ("other", [1, 2, 3, 4]),
                              ("q", "text"), "not a pair", ("q", [1.0, 2.0, 3.0, 4.0])], now=1.0)
    assert agg.invalid == 5
    agg.consume("embedding", [], now=61.0)
    assert agg.last_samples == {"q": 1} and agg.last == {}


def test_memory_is_fixed_by_the_sample_size() -> None:
    rng = np.random.default_rng(2)
    agg = EmbeddingDriftAggregator({"q": rng.normal(size=(50, 8))}, service="s", sample_size=100)
    before = agg.window_bytes
    agg.consume("embedding", [("q", v) for v in rng.normal(size=(5000, 8))], now=1.0)
    assert agg.window_bytes == before == 100 * 8 * 8


def test_reservoir_is_uniform() -> None:
    """Each of 1000 offered values is kept with probability 100/1000: the kept mean is the stream's."""
    kept = []
    for seed in range(20):
        r = Reservoir(100, dim=1, seed=seed)
        for i in range(1000):
            r.add(np.array([float(i)]))
        kept.append(r.sample().mean())
    assert np.mean(kept) == pytest.approx(499.5, abs=25)  # sd of the mean of 2000 draws: ~6.5


def test_reference_must_be_usable() -> None:
    with pytest.raises(InputError, match="at least one"):
        EmbeddingDriftAggregator({}, service="s")
    with pytest.raises(InputError, match="reference 'q'"):
        EmbeddingDriftAggregator({"q": [1.0, 2.0]}, service="s")
