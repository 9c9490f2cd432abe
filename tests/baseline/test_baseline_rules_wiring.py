"""End to end: a ``threshold: dynamic`` rule in the rules evaluator, bands from this package."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from inferwatch.baseline import BaselineConfig, band_provider_factory
from inferwatch.config._rules import RuleSpec
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.rules import AlertStateStore, Evaluator
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


def test_baseline_state_is_saved_every_few_minutes_and_on_demand(tmp_path: Path) -> None:
    # rule: alert state is saved every round, the (large) baseline state every band_save_every
    # seconds, and save_state() writes it at once (reload, shutdown)
    spec = RuleSpec.model_validate({
        "name": "latency_unusual", "dimension": "service", "tier": "P1",
        "signal": {"type": "metric", "metric": "latency_seconds"},
        "threshold": "dynamic", "dynamic": {"band": 6, "min_history": 0},
    })
    store = MemoryStore()
    state = AlertStateStore(tmp_path / "alerts.sqlite")
    clock = SimulatedClock(0.0)
    ev = Evaluator([Rule.from_spec(spec)], store, clock=clock, state=state,
                   band_factory=band_provider_factory(BaselineConfig()), band_save_every=300.0)
    labels = Labels({"__name__": "latency_seconds", "job": "api"})

    def stored() -> object:
        return state.load()[1].get("latency_unusual")

    snapshots = []
    for i in range(25):  # every 15 s for 6 minutes
        t = i * 15.0
        store.append([Sample(labels, t, 1.0 + 0.01 * i)])
        ev.evaluate(t)
        snapshots.append(stored())
    assert snapshots[0] is not None  # the first round saves
    assert all(s == snapshots[0] for s in snapshots[1:20])  # unchanged until 300 s
    assert snapshots[20] != snapshots[0]  # saved again at t = 300
    clock.set(370.0)
    store.append([Sample(labels, 370.0, 2.0)])
    ev.evaluate(370.0)
    assert stored() == snapshots[20]
    ev.save_state()
    assert stored() != snapshots[20]  # forced
    state.close()
