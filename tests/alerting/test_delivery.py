"""Delivery off the tick: a hanging receiver delays only itself; retries, restarts, health (simulated)."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from alerting.conftest import alert
from inferwatch._exceptions import ConfigError, NotifyError
from inferwatch.alerting import (
    Notification,
    Pipeline,
    RecordingNotifier,
    StateDB,
    ThreadExecutor,
)
from inferwatch.alerting._delivery import Job
from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock

BOUND_S = 10.0  # real seconds a call may take before the test calls it blocked


class HangingNotifier:
    """A receiver that accepts the request and does not answer until released."""

    def __init__(self, name: str, clock: SimulatedClock) -> None:
        self.name = name
        self._clock = clock
        self.release = threading.Event()
        self.calls: list[float] = []  # simulated time of each attempt
        self.ids: list[str] = []
        self._cond = threading.Condition()

    def entered(self, n: int) -> bool:
        """Wait (bounded) until ``n`` attempts have called it."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self.calls) >= n, BOUND_S)

    def notify(self, n: Notification) -> None:
        with self._cond:
            self.calls.append(self._clock.now())
            self.ids.append(n.id)
            self._cond.notify_all()
        if not self.release.wait(BOUND_S * 3):
            raise AssertionError("never released")


class Wakes:
    """Counts the pipeline's wake-ups (one per finished attempt) and waits for a number of them."""

    def __init__(self) -> None:
        self.count = 0
        self._cond = threading.Condition()

    def __call__(self) -> None:
        with self._cond:
            self.count += 1
            self._cond.notify_all()

    def wait_for(self, n: int) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.count >= n, BOUND_S)


def _returns_promptly(fn: Callable[[], None]) -> None:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    t.join(BOUND_S)
    assert not t.is_alive(), "blocked behind a hanging receiver"


CFG = """
alerting:
  route: {receiver: slow, group_wait: 0s, group_interval: 1h, routes: [
    {matchers: ['tier="P1"'], receiver: slow, continue: true},
    {matchers: ['tier="P1"'], receiver: fast}]}
  receivers: [{name: slow, type: terminal, max_attempts: 5}, {name: fast, type: terminal}]
  notify: {initial_backoff: 1s, jitter: 0, attempt_timeout: 10s}
"""


class CountingExecutor(ThreadExecutor):
    """Counts the attempts it starts for 'slow', so a test can wait until each has reached the notifier
    (a kept worker takes its job a moment later, when the simulated clock may have moved on)."""

    def __init__(self) -> None:
        super().__init__()
        self.slow = 0

    def start(self, attempt: Job) -> None:
        self.slow += attempt.thread_name == "notify-slow"
        super().start(attempt)


def _pipeline(clock: SimulatedClock, slow: object, db: StateDB | None = None,
              threaded: bool = True, executor: ThreadExecutor | None = None,
              ) -> tuple[Pipeline, RecordingNotifier, Wakes]:
    cfg = parse_config(CFG).alerting
    fast = RecordingNotifier("fast")
    notifiers = {r.name: RecordingNotifier(r.name) for r in cfg.effective_receivers()}
    notifiers.update(slow=slow, fast=fast)  # type: ignore[dict-item]
    p = Pipeline(cfg, clock=clock, db=db, notifiers=notifiers, actions=[], rng=random.Random(0),
                 executor=(executor or ThreadExecutor()) if threaded else None)
    wakes = Wakes()
    p.set_waker(wakes)
    return p, fast, wakes


def test_a_hanging_receiver_delays_only_itself_then_times_out_and_retries_with_backoff() -> None:
    # rule: sends run off the tick; a hung attempt is abandoned at attempt_timeout and retried
    # after the backoff (1 s, 2 s, ...); other receivers and evaluation rounds go on
    clock = SimulatedClock(0)
    slow = HangingNotifier("slow", clock)
    ex = CountingExecutor()
    p, fast, wakes = _pipeline(clock, slow, executor=ex)
    _returns_promptly(lambda: p.send([alert()], now=0))
    assert wakes.wait_for(1) and len(fast.sent) == 1  # 'fast' answered
    p.tick(0)
    sent = [(r.receiver, r.t) for r in p.records.recent() if r.status == "sent"]
    assert sent == [("fast", 0.0)]
    for t in range(1, 30):  # one evaluation round a simulated second: none waits for 'slow'
        assert slow.entered(ex.slow)  # each attempt reached the notifier before the clock moves on
        clock.set(t)
        _returns_promptly(lambda t=t: p.send([alert()], now=t))
    assert slow.entered(ex.slow)
    assert slow.calls == [0.0, 11.0, 23.0]  # timeouts at 10 and 21, backoff 1 s then 2 s
    assert len(set(slow.ids)) == 1  # every attempt carries the same idempotency key
    stats = {q.receiver: q for q in p.queue_stats(29)}
    assert stats["slow"].length == 1 and stats["slow"].oldest_age == 29
    assert stats["fast"].length == 0
    slow.release.set()  # the third attempt answers (the two abandoned ones too, ignored)
    assert wakes.wait_for(4)
    clock.set(30)
    p.tick(30)
    sent = [(r.receiver, r.t) for r in p.records.recent() if r.status == "sent"]
    assert sent == [("fast", 0.0), ("slow", 30.0)]
    assert {q.receiver: q.length for q in p.queue_stats(30)}["slow"] == 0


def test_pending_retries_survive_a_restart_and_are_sent_once(tmp_path: Path) -> None:
    # rule: the outbox is in SQLite: a retry pending at a restart is sent after it, once,
    # with the same idempotency key; a new flush of the same groups does not add a second send
    path = tmp_path / "alerting.sqlite"
    clock = SimulatedClock(0)
    failing = RecordingNotifier("slow")
    failing.fail_next(NotifyError("HTTP 503", retryable=True))
    p, _, _ = _pipeline(clock, failing, StateDB(path), threaded=False)
    p.send([alert()], now=0)  # first attempt fails: a retry is owed at 1 s
    first_id = p.outbox.entries("slow")[0].n.id
    p.db.close()  # the process dies before the retry
    clock.set(5)
    again = RecordingNotifier("slow")
    p2, _, wakes = _pipeline(clock, again, StateDB(path))
    assert {q.receiver: q.length for q in p2.queue_stats(5)}["slow"] == 1
    p2.send([alert()], now=5)  # the evaluator resends: the same group, nothing new
    assert wakes.wait_for(1)  # "slow" answered ("fast" got its notification before the crash)
    p2.tick(5)
    assert len(again.sent) == 1 and again.sent[0].id == first_id
    for t in (6, 60, 600):
        p2.tick(t)
    assert len(again.sent) == 1
    p2.db.close()


def test_a_receiver_that_keeps_failing_raises_notifications_failing_elsewhere() -> None:
    # rule: failing_after (3) failed attempts in a row fire NotificationsFailing{receiver}; the
    # route would send it to the failing receiver, so it goes to notify.fallback_receiver
    cfg = parse_config("""
alerting:
  route: {receiver: wecom, group_wait: 0s}
  receivers: [{name: wecom, type: terminal, max_attempts: 10}]
  notify: {initial_backoff: 1s, jitter: 0, failing_after: 3}
""").alerting
    recs = {r.name: RecordingNotifier(r.name) for r in cfg.effective_receivers()}
    err = NotifyError("HTTP 503", retryable=True)
    recs["wecom"].fail_next(*[err] * 5)
    p = Pipeline(cfg, clock=SimulatedClock(0), notifiers=recs, actions=[], rng=random.Random(0))
    p.send([alert()], now=0)
    for t in range(1, 8):
        p.tick(t)
    (meta,) = [a for n in recs["terminal"].sent for a in n.alerts]
    assert meta.labels["alertname"] == "NotificationsFailing" and meta.labels["receiver"] == "wecom"
    assert [a.name for n in recs["wecom"].sent for a in n.alerts] == []
    for t in range(8, 40):
        p.tick(t)
    assert [a.name for n in recs["wecom"].sent for a in n.alerts] == ["HighLatency"]
    p.tick(400)  # the next flush of its group (group_interval 5m) tells the resolution
    assert [n.groups[0].status for n in recs["terminal"].sent] == ["firing", "resolved"]


def test_a_retry_after_hint_postpones_the_retry() -> None:
    # rule: a 429/503 with Retry-After (NotifyError.retry_after, seconds) waits that long,
    # not just the backoff (1 s here)
    cfg = parse_config("alerting: {route: {receiver: terminal, group_wait: 0s}, "
                       "notify: {initial_backoff: 1s, jitter: 0}}").alerting
    recs = {r.name: RecordingNotifier(r.name) for r in cfg.effective_receivers()}
    err = NotifyError("HTTP 429", retryable=True)
    err.retry_after = 30.0  # type: ignore[attr-defined]  # set by the receivers' classifier
    recs["terminal"].fail_next(err)
    p = Pipeline(cfg, clock=SimulatedClock(0), notifiers=recs, actions=[], rng=random.Random(0))
    p.send([alert()], now=0)
    for t in (1, 2, 29):
        p.tick(t)
    assert recs["terminal"].sent == []
    p.tick(30)
    assert len(recs["terminal"].sent) == 1


@pytest.mark.parametrize(("yaml", "says"), [
    # rule: the fallback for NotificationsFailing must be a known receiver
    ("alerting: {notify: {fallback_receiver: nope}}",
     "notify.fallback_receiver names unknown receiver 'nope'"),
    # rule: an attempt needs time to happen
    ("alerting: {notify: {attempt_timeout: 0s}}", "alerting.notify.attempt_timeout"),
    # rule: NotificationsFailing needs at least one failure
    ("alerting: {notify: {failing_after: 0}}", "alerting.notify.failing_after"),
])
def test_delivery_settings_are_checked_at_load(yaml: str, says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)):
        parse_config(yaml)
