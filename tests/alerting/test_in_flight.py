"""A receiver slower than ``group_interval``: flushes while its send is in flight add no copy, and every
attempt of the notification carries its one id (on the injected clock; sends run on their own threads)."""

from __future__ import annotations

import random
import threading

from alerting.conftest import alert
from inferwatch.alerting import Notification, Pipeline, ThreadExecutor
from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock

BOUND_S = 60.0
CONFIG = """
alerting:
  default_actions: false
  notify: {attempt_timeout: %s}
  receivers: [{name: slow, type: webhook, url: 'http://127.0.0.1:9/hook'}]
  route: {receiver: slow, group_wait: 0s, group_interval: %s, repeat_interval: 4h}
"""


class SlowNotifier:
    """Holds every send until released; records what it was given."""

    name = "slow[test]"

    def __init__(self) -> None:
        self.got: list[Notification] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.lock = threading.Condition()

    def notify(self, n: Notification) -> None:
        with self.lock:
            self.got.append(n)
            self.lock.notify_all()
        self.started.set()
        self.release.wait(BOUND_S)

    def wait_for(self, count: int) -> bool:
        """Whether ``count`` sends have begun, within a generous bound (each runs on its own thread)."""
        with self.lock:
            return self.lock.wait_for(lambda: len(self.got) >= count, BOUND_S)

    def ids(self) -> list[str]:
        with self.lock:
            return [n.id for n in self.got]


def _run(attempt_timeout: str, group_interval: str, times: range, sends: int = 1) -> SlowNotifier:
    clock = SimulatedClock(0.0)
    slow = SlowNotifier()
    p = Pipeline(parse_config(CONFIG % (attempt_timeout, group_interval)).alerting, clock=clock,
                 notifiers={"slow": slow}, actions=[], rng=random.Random(1), executor=ThreadExecutor())
    try:
        p.send([alert("Down", tier="P0")], now=0.0)
        p.tick(0.0)
        assert slow.started.wait(BOUND_S)  # the first send is in flight and stays so
        for t in times:  # the evaluator re-sends the firing alert; the group flushes every interval
            clock.set(float(t))
            p.send([alert("Down", tier="P0")], now=float(t))
            p.tick(float(t))
        assert slow.wait_for(sends)  # the retries' threads have begun their sends
        return slow
    finally:
        slow.release.set()
        p.close()


def test_flushes_during_a_slow_send_add_no_copy() -> None:
    # rule: slower than group_interval, within its attempt's time: one send, whatever flushes meanwhile
    slow = _run("10m", "1m", range(60, 240, 60))
    assert len(slow.ids()) == 1


def test_a_hung_send_is_retried_under_its_own_id_never_as_a_new_notification() -> None:
    # rule: attempts of one notification share its id, so a receiver can drop a repeat; before, a flush
    # during the hung attempt queued a copy with a new id, sent as soon as the attempt timed out
    slow = _run("30s", "10s", range(10, 130, 10), sends=2)
    ids = slow.ids()
    assert len(ids) >= 2 and set(ids) == {ids[0]}, ids
