"""Actions off the evaluation path: a hung action delays only its own notification, never a round."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from tests.rules._helpers import load

from inferwatch.alerting import Pipeline, PipelineRunner, RecordingNotifier, ThreadExecutor
from inferwatch.config import parse_config
from inferwatch.model import Labels, SimulatedClock, parse_matchers
from inferwatch.rules import Alert, Evaluator, load_rules
from inferwatch.store import MemoryStore

BOUND_S = 10.0  # real seconds a wait may take before the test calls it stuck
# real seconds an evaluation round may take: milliseconds here, seconds on a loaded runner; a round
# that waited for the hung action would take its 30 s
ROUND_S = 10.0

CONFIG = """
rules:
  default_pack: false
  rules:
    - {name: Down, dimension: service, tier: P0, signal: up, comparison: "==", threshold: 0}
alerting:
  route: {receiver: phone, group_wait: 0s, group_interval: 1m}
  receivers: [{name: phone, type: terminal}]
  default_actions: false
  actions:
    - {name: scale_out, type: http, url: "http://127.0.0.1:9/scale", matchers: ['tier="P0"'], timeout: 30s}
"""


class HangingAction:
    """An action that starts and does not return until released (a stuck Kubernetes API)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.matchers = tuple(parse_matchers('tier="P0"'))
        self.started = threading.Event()
        self.release = threading.Event()

    def fire(self, alert: Alert) -> str:
        self.started.set()
        if not self.release.wait(BOUND_S * 3):  # bounded: a broken test never hangs the suite
            raise AssertionError("never released")
        return "scaled (late)"

    def resolve(self, alert: Alert) -> str | None:
        return None


class RunnerClock(SimulatedClock):
    """Simulated time the test moves; the runner's idle wait is a short real wait, not a time jump."""

    def wait(self, event: threading.Event, timeout: float) -> bool:
        return event.wait(min(timeout, 0.02))


def _wait(cond: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + BOUND_S
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)  # polling a condition a thread of the code under test makes true
    return True


@pytest.fixture
def served() -> Iterator[tuple[Evaluator, Pipeline, RecordingNotifier, HangingAction, RunnerClock]]:
    cfg = parse_config(CONFIG)
    clock = RunnerClock(0.0)
    rec = RecordingNotifier("phone")
    action = HangingAction("scale_out")
    p = Pipeline(cfg.alerting, clock=clock, notifiers={"phone": rec}, actions=[action], rng=random.Random(0),
                 executor=ThreadExecutor())
    store: MemoryStore = load({'up{instance="a", service="ranker"}': "0x100"}, 15.0)
    ev = Evaluator(load_rules(cfg), store, clock=clock, sink=p)
    runner = PipelineRunner(p)
    runner.start()
    yield ev, p, rec, action, clock
    action.release.set()
    runner.stop()
    p.close()


def test_a_hanging_action_leaves_evaluation_rounds_on_schedule(
        served: tuple[Evaluator, Pipeline, RecordingNotifier, HangingAction, RunnerClock]) -> None:
    # rule: the action runs on a thread of its own with its timeout (30 s); the evaluator's send
    # only records and wakes the runner, so every round returns at once while the action hangs
    ev, p, rec, action, clock = served
    ev.evaluate(0.0)
    assert action.started.wait(BOUND_S)  # the runner flushed the group and started the action
    took = []
    for t in range(15, 601, 15):  # 40 rounds, 10 simulated minutes, with the action hung throughout
        clock.set(float(t))
        t0 = time.monotonic()
        ev.evaluate(float(t))
        took.append(time.monotonic() - t0)
    assert max(took) < ROUND_S, f"a round waited {max(took):.1f}s for the action"
    assert not action.release.is_set()  # it still hangs: nothing waited for it
    # at its timeout the run is recorded as failed and the held page goes out with that note
    assert _wait(lambda: len(rec.sent) >= 1)
    assert "action scale_out (fire): failed: timed out after 30s" in rec.sent[0].notes
    (r,) = p.act.records()
    assert (r.action, r.phase, r.ok, r.outcome) == ("scale_out", "fire", False, "failed: timed out after 30s")
    action.release.set()  # the late answer is ignored: the ledger keeps the timeout
    assert _wait(lambda: p.act.in_flight() == 0)
    assert [x.outcome for x in p.act.records()] == ["failed: timed out after 30s"]


class SlowAction(HangingAction):
    def fire(self, alert: Alert) -> str:
        super().fire(alert)
        return "scaled deployment default/ranker from 2 to 3 replicas"


def test_the_page_waits_for_its_action_and_carries_the_outcome() -> None:
    # rule: a notification whose action still runs is held (only it), then sent with the outcome
    cfg = parse_config(CONFIG)
    clock = SimulatedClock(0.0)
    rec = RecordingNotifier("phone")
    action = SlowAction("scale_out")
    p = Pipeline(cfg.alerting, clock=clock, notifiers={"phone": rec}, actions=[action], rng=random.Random(0),
                 executor=ThreadExecutor())
    p.send([Alert(Labels({"alertname": "Down", "tier": "P0", "service": "ranker"}), starts_at=0.0)], now=0.0)
    assert action.started.wait(BOUND_S) and rec.sent == []  # held while the action runs
    assert p.next_wakeup() == 30.0  # the run's deadline
    action.release.set()
    assert _wait(lambda: _ticked(p, 5.0))  # the next tick after the run ends releases the page
    assert _wait(lambda: len(rec.sent) == 1)  # sent on a worker thread of its own
    (n,) = rec.sent
    assert "action scale_out (fire): scaled deployment default/ranker from 2 to 3 replicas" in n.notes
    assert [(r.t, r.ok) for r in p.act.records()] == [(0.0, True)]  # t: when it was claimed
    p.close()


def _ticked(p: Pipeline, now: float) -> bool:
    p.tick(now)
    return p.act.in_flight() == 0


def test_a_later_flush_waits_behind_the_running_action() -> None:
    # rule: while an episode's action runs, later flushes of its group are held too: no page
    # goes out without the outcome, whatever the order of the runner's ticks
    cfg = parse_config(CONFIG.replace("group_interval: 1m", "group_interval: 10s"))
    clock = SimulatedClock(0.0)
    rec = RecordingNotifier("phone")
    action = SlowAction("scale_out")
    p = Pipeline(cfg.alerting, clock=clock, notifiers={"phone": rec}, actions=[action], rng=random.Random(0),
                 executor=ThreadExecutor())
    down = Alert(Labels({"alertname": "Down", "tier": "P0", "service": "ranker"}), starts_at=0.0)
    p.send([down], now=0.0)
    assert action.started.wait(BOUND_S)
    for t in (10.0, 20.0):  # two more flushes of the group while the action runs (deadline 30 s)
        clock.set(t)
        p.send([down], now=t)
    assert rec.sent == []
    action.release.set()
    assert _wait(lambda: _ticked(p, 25.0))
    assert _wait(lambda: len(rec.sent) >= 1)  # sent on a worker thread of its own
    assert all("action scale_out (fire): scaled deployment default/ranker from 2 to 3 replicas"
                            in n.notes for n in rec.sent)
    p.close()
