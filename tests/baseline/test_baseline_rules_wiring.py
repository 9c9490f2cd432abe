"""End to end: a ``threshold: dynamic`` rule in the rules evaluator, bands from this package."""

from __future__ import annotations

import numpy as np

from inferwatch.baseline import BaselineConfig, band_provider_factory
from inferwatch.config._rules import RuleSpec
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.rules import Evaluator
from inferwatch.rules._rule import Rule
from inferwatch.store import MemoryStore

STEP = 300.0


def test_dynamic_rule_fires_on_a_spike_and_not_on_the_daily_swing() -> None:
    # rule: evaluator + injected band provider: quiet through 2 seasonal days, alert on the spike
    spec = RuleSpec.model_validate({
        "name": "latency_unusual", "dimension": "service", "tier": "P1",
        "signal": {"type": "metric", "metric": "latency_seconds"},
        "threshold": "dynamic", "dynamic": {"band": 6, "direction": "above", "min_history": "1d"},
    })
    store = MemoryStore()
    ev = Evaluator([Rule.from_spec(spec)], store, clock=SimulatedClock(0.0),
                   band_factory=band_provider_factory(BaselineConfig()))
    rng = np.random.default_rng(11)
    labels = Labels({"__name__": "latency_seconds", "job": "api"})
    fired_at = []
    n = int(2.5 * 86400 / STEP)
    for i in range(n):
        t = i * STEP
        v = 1.0 + 0.3 * np.sin(2 * np.pi * t / 86400) + rng.normal(0, 0.01)
        if i >= n - 6:
            v += 1.0  # the last half hour: a spike far outside the band
        store.append([Sample(labels, t, float(v))])
        if ev.evaluate(t):
            fired_at.append(i)
    assert fired_at and min(fired_at) >= n - 6
