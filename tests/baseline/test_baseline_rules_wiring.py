"""End to end: a ``threshold: dynamic`` rule in the rules evaluator, bands from this package."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from inferwatch.baseline import BaselineSettings, band_provider_factory
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.rules import AlertStateStore, Evaluator
from inferwatch.rules._rule import Rule
from inferwatch.settings._rules import RuleSpec
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
                   band_factory=band_provider_factory(BaselineSettings()))
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
                   band_factory=band_provider_factory(BaselineSettings()), band_save_every=300.0)
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


def _burst_rule(**dynamic: object) -> Rule:
    return Rule.from_spec(RuleSpec.model_validate({
        "name": "cpu_unusual", "dimension": "infrastructure", "tier": "P1",
        "signal": {"type": "metric", "metric": "cpu_percent"}, "for": "10m",
        "threshold": "dynamic", "dynamic": {"direction": "above", "min_history": "1d", **dynamic},
    }))


def _burst_values(peaks: list[float]) -> list[float]:
    # flat 30 % with noise; a 30-minute burst to each peak every 2.6 days after the first 2.5
    rng = np.random.default_rng(5)
    n = int((2 + 2.6 * len(peaks) + 1) * 86400 / STEP)
    values = 30.0 + rng.normal(0.0, 1.0, n)
    for k, peak in enumerate(peaks):
        start = int((2.5 + 2.6 * k) * 86400 / STEP)
        values[start : start + 6] = peak
    return [float(v) for v in values]


def _fired_and_held(ev: Evaluator, store: MemoryStore, values: list[float], since: int = 0,
                    ) -> tuple[list[int], list[int]]:
    labels = Labels({"__name__": "cpu_percent", "instance": "gpu-1"})
    fired, held = [], []
    for i in range(since, len(values)):
        t = i * STEP
        store.append([Sample(labels, t, values[i])])
        before = {a.fingerprint for inst in ev.instances().values() for a in inst.values()
                  if a.state.value == "firing"}
        ev.evaluate(t)
        for inst in ev.instances().values():
            for a in inst.values():
                if a.state.value == "firing" and a.fingerprint not in before:
                    fired.append(i)
        for shown in ev.active():
            if shown.held:
                assert shown.state.value == "pending" and t - shown.active_since >= 600.0
                held.append(i)
    return fired, held


def test_recurring_bursts_stay_pending_and_a_higher_one_fires(tmp_path: Path) -> None:
    # rule: in the evaluator, the third and later bursts to the same height are held (pending
    # past `for`, never firing); a higher burst fires; the remembered bursts survive a restart
    values = _burst_values([100.0] * 4 + [140.0])
    bursts = [int((2.5 + 2.6 * k) * 86400 / STEP) for k in range(5)]
    state = AlertStateStore(tmp_path / "alerts.sqlite")
    store = MemoryStore()
    ev = Evaluator([_burst_rule()], store, clock=SimulatedClock(0.0), state=state,
                   band_factory=band_provider_factory(BaselineSettings()), band_save_every=1e9)
    cut = bursts[3] - 10  # restart before the fourth burst
    fired, held = _fired_and_held(ev, store, values[:cut])
    ev.save_state()
    ev2 = Evaluator([_burst_rule()], store, clock=SimulatedClock(cut * STEP), state=state,
                    band_factory=band_provider_factory(BaselineSettings()))
    fired2, held2 = _fired_and_held(ev2, store, values, since=cut)
    state.close()
    assert [b for b in bursts if any(b <= i < b + 6 for i in fired + fired2)] == [
        bursts[0], bursts[1], bursts[4]]
    assert any(bursts[2] <= i < bursts[2] + 6 for i in held)
    assert any(bursts[3] <= i < bursts[3] + 6 for i in held2)  # remembered across the restart


def test_recurrence_zero_on_the_rule_turns_the_hold_off() -> None:
    # rule: `dynamic: {recurrence: 0}` overrides baseline.recurrence: every burst fires
    values = _burst_values([100.0] * 3)
    ev = Evaluator([_burst_rule(recurrence=0)], MemoryStore(), clock=SimulatedClock(0.0),
                   band_factory=band_provider_factory(BaselineSettings()))
    fired, held = _fired_and_held(ev, ev.store, values)
    assert len(fired) == 3 and not held
