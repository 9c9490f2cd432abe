"""Issue 21 #2: a wall-clock step neither stops scraping nor fires `for` alerts early.

The server runs its real threads on a real clock whose wall reading the test
steps (as NTP or an operator would); the monotonic reading goes on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock
from inferwatch.rules import Alert
from inferwatch.server import Server, build_components

from .conftest import FakeTarget


class SteppedClock:
    """The system clock, with a wall-clock offset the test changes at will."""

    def __init__(self) -> None:
        self.offset = 0.0

    def now(self) -> float:
        return time.time() + self.offset

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        raise AssertionError("the server's loops wait on events, they do not sleep")

    def wait(self, event: threading.Event, timeout: float) -> bool:
        return event.wait(max(timeout, 0.0))


class Rounds:
    """An alert sink that counts evaluation rounds and lets the test wait for the next ones."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.rounds = 0
        self.firing: list[str] = []

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        with self.cond:
            self.rounds += 1
            self.firing = [a.name for a in alerts if not a.resolved(now)]
            self.cond.notify_all()

    def wait_rounds(self, n: int, timeout: float = 10.0) -> bool:
        with self.cond:
            goal = self.rounds + n
            return self.cond.wait_for(lambda: self.rounds >= goal, timeout)


def _server(tmp_path: Path, target: FakeTarget, clock: SteppedClock, sink: Rounds) -> Server:
    cfg = parse_config(
        f"server: {{data_dir: '{tmp_path}', evaluation_interval: 200ms}}\n"
        f"scrape: {{targets: [{{job: svc, url: '{target.url}', interval: 200ms, timeout: 200ms}}]}}\n")
    return Server(build_components(cfg, clock=clock, sink=sink), clock=clock)


@pytest.mark.slow
@pytest.mark.parametrize("step", [-3600.0, 3600.0])
def test_scraping_and_evaluation_keep_their_pace_across_a_step(
        tmp_path: Path, target: FakeTarget, step: float, caplog: pytest.LogCaptureFixture) -> None:
    target.status = 503  # down: TargetDown (for: 1m) goes pending and must stay pending
    clock, sink = SteppedClock(), Rounds()
    server = _server(tmp_path, target, clock, sink)
    server.start()
    try:
        assert sink.wait_rounds(2)
        clock.offset = step
        before = target.requests
        with caplog.at_level(logging.WARNING):
            assert sink.wait_rounds(5), "evaluation stopped after the wall clock stepped"
        # the scrape thread's own pace: a loaded runner can run 5 rounds before it scrapes 3 times
        end = time.monotonic() + 60
        while target.requests < before + 3 and time.monotonic() < end:
            sink.wait_rounds(1)  # a condition wait: the scrape thread runs meanwhile
        assert target.requests >= before + 3, "scraping stopped after the wall clock stepped"
        assert "TargetDown" not in sink.firing  # a forward step does not fire `for: 1m` early
        assert any("wall clock stepped by" in r.getMessage() for r in caplog.records)
        (health,) = server.components.scrape.targets()
        assert health.health == "down" and health.last_scrape is not None
        # stamped with the (stepped) wall clock: within a minute of it (a loaded runner's scrape can
        # be seconds old), where the unstepped one is an hour away
        assert abs(health.last_scrape - clock.now()) < 60
    finally:
        server.stop()


def test_a_pending_timer_moves_with_a_step() -> None:
    # rule: `for` counts the time that passed, not how far the wall clock moved
    clock = SimulatedClock(10_000.0)
    cfg = parse_config("storage: {type: memory}\n"
                       "scrape: {targets: [{job: svc, url: 'http://127.0.0.1:1/metrics', interval: 15s}]}\n")
    server = Server(build_components(cfg, clock=clock), clock=clock)
    try:
        server.components.scrape.scrape_once(10_000.0)
        server.tick(10_000.0)
        clock.step(3600.0)
        server.components.evaluator.shift_clock(3600.0)
        server.components.scrape.scrape_once(clock.now())
        server.tick(clock.now())
        (a,) = [a for a in server.components.evaluator.active() if a.alertname == "TargetDown"]
        assert str(a.state) == "pending" and a.active_since == 13_600.0
    finally:
        server.stop()
