"""The evaluator's lifecycle, sending and persisted state (restarts mid-`for` and while firing)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.rules._helpers import load

from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock
from inferwatch.rules import Alert, AlertState, AlertStateStore, Evaluator, load_rules

M = 60.0
CONFIG = """
rules:
  default_pack: false
  rules:
    - {name: Down, dimension: service, tier: P0, signal: up, comparison: "==", threshold: 0, for: 5m,
       annotations: {summary: "{{ $labels.instance }} down, value {{ $value }}"}}
"""


class RecordingSink:
    """Keeps every batch the evaluator sends."""

    def __init__(self) -> None:
        self.batches: list[tuple[float, list[Alert]]] = []

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        self.batches.append((now, list(alerts)))

    def sent(self) -> list[tuple[float, str]]:
        return [(t, "resolved" if a.ends_at is not None else "firing") for t, b in self.batches for a in b]


def _evaluator(store: Any, state: AlertStateStore | None, sink: RecordingSink | None = None) -> Evaluator:
    rules = load_rules(parse_config(CONFIG))
    return Evaluator(rules, store, clock=SimulatedClock(0), sink=sink, state=state)


def _run(ev: Evaluator, minutes: range) -> None:
    for m in minutes:
        ev.evaluate(m * M)


def test_restart_mid_for_keeps_the_timer(tmp_path: Path) -> None:
    # rule: `for` counts from the first evaluation that saw the condition, across restarts
    store = load({'up{instance="a"}': "0x20"}, M)
    db = tmp_path / "alerts.db"
    ev = _evaluator(store, AlertStateStore(db))
    _run(ev, range(0, 3))  # pending since 0m
    assert [a.state for a in ev.active()] == [AlertState.PENDING]
    ev.state.close()  # type: ignore[union-attr]

    ev2 = _evaluator(store, AlertStateStore(db))
    assert ev2.active()[0].active_since == 0.0
    _run(ev2, range(3, 5))
    assert ev2.active()[0].state is AlertState.PENDING
    ev2.evaluate(5 * M)  # 5m after 0m, not 5m after the restart
    assert ev2.active()[0].state is AlertState.FIRING


def test_restart_while_firing_does_not_fire_twice(tmp_path: Path) -> None:
    # rule: a restored firing alert keeps its start and is re-sent only after resend_delay
    store = load({'up{instance="a"}': "0x20"}, M)
    db = tmp_path / "alerts.db"
    sink = RecordingSink()
    ev = _evaluator(store, AlertStateStore(db), sink)
    _run(ev, range(0, 6))
    assert sink.sent() == [(5 * M, "firing")]
    ev.state.close()  # type: ignore[union-attr]

    sink2 = RecordingSink()
    ev2 = _evaluator(store, AlertStateStore(db), sink2)
    ev2.evaluate(5 * M + 30)  # restart 30s later: within resend_delay, nothing sent again
    assert sink2.sent() == []
    assert ev2.active()[0].state is AlertState.FIRING
    ev2.evaluate(7 * M)
    (t, [alert]), = [b for b in sink2.batches if b[1]]
    assert (t, alert.starts_at) == (7 * M, 5 * M)  # same episode: fired at 5m


def test_resolved_is_sent_once_then_resent_until_retention() -> None:
    # rule: needsSending: at once after resolution, then every resend_delay, dropped after 15m
    store = load({'up{instance="a"}': "0x6 1x40"}, M)
    sink = RecordingSink()
    ev = _evaluator(store, None, sink)
    _run(ev, range(0, 30))
    sent = sink.sent()
    assert (7 * M, "resolved") in sent
    resolved_times = [t for t, s in sent if s == "resolved"]
    assert resolved_times[0] == 7 * M and max(resolved_times) <= 7 * M + 15 * M
    assert ev.evaluate(30 * M) == []


def test_annotations_are_templated() -> None:
    store = load({'up{instance="a:1"}': "0x10"}, M)
    ev = _evaluator(store, None)
    _run(ev, range(0, 6))
    assert ev.active()[0].annotations == {"summary": "a:1 down, value 0"}
    assert ev.active()[0].labels["severity"] == "critical"


class FakeBand:
    """A band provider learning nothing: a fixed band once 3 points were seen per key."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def band(self, key: str, t: float, value: float) -> tuple[float, float] | None:
        self.seen[key] = self.seen.get(key, 0) + 1
        return (0.0, 10.0) if self.seen[key] > 3 else None

    def held(self, key: str) -> bool:
        return False

    def learned(self) -> dict[str, bool]:
        return {k: n > 3 for k, n in self.seen.items()}

    def export_state(self) -> Any:
        return self.seen

    def restore_state(self, state: Any) -> None:
        self.seen = dict(state)


def test_dynamic_threshold_uses_the_band_and_persists_its_state(tmp_path: Path) -> None:
    # rule: no band yet -> fallback threshold; with a band -> outside it; band state survives restarts
    cfg = parse_config("""
rules:
  default_pack: false
  rules:
    - {name: Odd, dimension: service, tier: P2, signal: {type: metric, metric: g},
       threshold: dynamic, dynamic: {direction: above, fallback: 100}}
""")
    store = load({"g": "50 50 50 50 50 20 20"}, M)
    bands: list[FakeBand] = []

    def factory(name: str, spec: Any) -> FakeBand:
        bands.append(FakeBand())
        return bands[-1]

    db = tmp_path / "alerts.db"
    ev = Evaluator(load_rules(cfg), store, clock=SimulatedClock(0), state=AlertStateStore(db),
                   band_factory=factory)
    _run(ev, range(0, 3))
    assert ev.active() == []  # 50 < fallback 100
    ev.evaluate(3 * M)  # the band (0, 10) exists now and 50 is above it
    assert [a.alertname for a in ev.active()] == ["Odd"]
    # band state is saved every band_save_every (300 s): a crash now restores the first save
    Evaluator(load_rules(cfg), store, clock=SimulatedClock(0), state=AlertStateStore(db),
              band_factory=factory)
    assert bands[-1].seen == {"Odd{}": 1}
    ev.save_state()  # what a shutdown or reload does
    ev.state.close()  # type: ignore[union-attr]
    Evaluator(load_rules(cfg), store, clock=SimulatedClock(0), state=AlertStateStore(db),
              band_factory=factory)
    assert bands[-1].seen == {"Odd{}": 4}


def test_evaluation_error_keeps_other_rules_going(caplog: pytest.LogCaptureFixture) -> None:
    # rule: many-to-many matching is an error for that rule only
    cfg = parse_config("""
rules:
  default_pack: false
  rules:
    - {name: Bad, dimension: service, tier: P2, threshold: 0,
       signal: {type: expr, expr: 'a / {__name__=~"b|c"}'}}
    - {name: Good, dimension: service, tier: P2, signal: {type: metric, metric: a}, threshold: 0}
""")
    store = load({'a{x="1"}': "1", 'b{x="1"}': "1", 'c{x="1"}': "1"}, M)
    ev = Evaluator(load_rules(cfg), store, clock=SimulatedClock(0))
    ev.evaluate(0.0)
    assert [a.alertname for a in ev.active()] == ["Good"]
    assert "Bad" in caplog.text


class FailingSink:
    """A pipeline that always fails."""

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        raise RuntimeError("pipeline down")


def test_a_failing_sink_does_not_stop_evaluation(caplog: pytest.LogCaptureFixture) -> None:
    # rule: background work catches and logs; the alert state still advances
    store = load({'up{instance="a"}': "0x10"}, M)
    ev = Evaluator(load_rules(parse_config(CONFIG)), store, clock=SimulatedClock(0), sink=FailingSink())
    _run(ev, range(0, 6))
    assert ev.active()[0].state is AlertState.FIRING
    assert "alert sink failed" in caplog.text


def test_a_held_pending_alert_waits_past_for_and_fires_when_released(tmp_path: Path) -> None:
    # rule: step_alerts keeps a held instance pending past `for` (marked held), fires it the
    # first round it is not held (fired_at then, active_at kept), and the mark is persisted
    from inferwatch.model import Labels
    from inferwatch.rules._lifecycle import step_alerts

    labels = Labels({"alertname": "CpuUnusual", "instance": "gpu-1"})
    fp = labels.fingerprint()
    result = [(labels, {}, 100.0)]
    a = step_alerts({}, result, 0.0, 300.0, 0.0, {fp})
    a = step_alerts(a, result, 300.0, 300.0, 0.0, {fp})
    assert a[fp].state is AlertState.PENDING and a[fp].held
    state = AlertStateStore(tmp_path / "alerts.sqlite")
    state.save({"CpuUnusual": a}, {})
    assert state.load()[0]["CpuUnusual"][fp].held
    state.close()
    a = step_alerts(a, result, 600.0, 300.0, 0.0)
    assert a[fp].state is AlertState.FIRING and not a[fp].held
    assert (a[fp].active_at, a[fp].fired_at) == (0.0, 600.0)
