"""Restarting the server keeps the store and the alert state: no timer restart, no second episode."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from inferwatch.config import Config, parse_config
from inferwatch.model import SimulatedClock
from inferwatch.rules import Alert
from inferwatch.server import Server, build_components
from inferwatch.store import parse_selector

from .conftest import FakeTarget


class RecordingSink:
    def __init__(self) -> None:
        self.sent: list[tuple[float, Alert]] = []

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        self.sent.extend((now, a) for a in alerts)


def _config(tmp_path: Path, target: FakeTarget) -> Config:
    return parse_config(
        f"server: {{data_dir: '{tmp_path}', evaluation_interval: 15s}}\n"
        f"scrape: {{targets: [{{job: svc, url: '{target.url}', interval: 15s}}]}}\n"
    )


def _run(cfg: Config, clock: SimulatedClock, sink: RecordingSink, times: list[float]) -> list[dict]:
    """Start a server generation, scrape + evaluate at each time, stop it; return its active alerts."""
    server = Server(build_components(cfg, clock=clock, sink=sink), clock=clock)
    try:
        for t in times:
            clock.set(t)
            server.components.scrape.tick(t)
            server.tick(t)
        return [
            {"name": a.alertname, "state": str(a.state), "since": a.active_since}
            for a in server.components.evaluator.active() if a.alertname == "TargetDown"
        ]
    finally:
        server.stop()


def test_restart_in_the_for_period_and_while_firing(tmp_path: Path, target: FakeTarget) -> None:
    target.status = 503  # the target is down: TargetDown (up == 0, for 1m) goes pending at t0
    cfg = _config(tmp_path, target)
    clock = SimulatedClock(10_000.0)
    sink = RecordingSink()

    first = _run(cfg, clock, sink, [10_000.0, 10_015.0, 10_030.0])
    assert first == [{"name": "TargetDown", "state": "pending", "since": 10_000.0}]

    # restart in the middle of the for period: the timer is not restarted, so it fires at t0 + 1m
    second = _run(cfg, clock, sink, [10_045.0, 10_060.0])
    assert second == [{"name": "TargetDown", "state": "firing", "since": 10_000.0}]
    fired = [(t, a.starts_at) for t, a in sink.sent if a.name == "TargetDown" and not a.resolved(t)]
    assert fired and fired[0][0] == 10_060.0

    # restart while firing: still the same episode (same start), not a second one
    third = _run(cfg, clock, sink, [10_075.0, 10_090.0])
    assert third == [{"name": "TargetDown", "state": "firing", "since": 10_000.0}]
    starts = {a.starts_at for t, a in sink.sent if a.name == "TargetDown" and not a.resolved(t)}
    assert len(starts) == 1


def test_samples_survive_a_restart(tmp_path: Path, target: FakeTarget) -> None:
    target.body = "a 1\n"
    cfg = _config(tmp_path, target)
    clock = SimulatedClock(5_000.0)
    _run(cfg, clock, RecordingSink(), [5_000.0, 5_015.0])
    server = Server(build_components(cfg, clock=clock), clock=clock)
    try:
        (s,) = server.components.store.select(parse_selector("a"), 0, 1e12)
        assert s.t.tolist() == [5_000.0, 5_015.0]
    finally:
        server.stop()
