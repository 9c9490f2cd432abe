"""Issue 48 #5, #6 in ``serve``'s build: the heartbeat routes behind the token, the sender's failures
reaching the default pack's HeartbeatSendFailing through the series ``serve`` records every round,
and a missing secret refused at start naming the field (simulated clock, no threads started)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from tests.alerting.fakes import FakeService

from inferwatch._exceptions import ConfigError
from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock
from inferwatch.server import ServerParts, build

NOW = 1_800_000_000.0


@pytest.fixture
def down() -> Iterator[FakeService]:
    svc = FakeService(lambda r: (503, {}, b"")).start()  # the dead man's switch answers 503
    yield svc
    svc.stop()


def _parts(tmp_path: Path, url: str, clock: SimulatedClock) -> ServerParts:
    cfg = parse_config(f"""
server: {{data_dir: '{tmp_path}', api_token: tok}}
storage: {{type: memory}}
heartbeats: [{{name: site-a}}]
alerting:
  heartbeat: {{kind: healthchecks, url: '{url}/ping/abc', interval: 1m}}
""")
    return build(cfg, clock=clock, announce=lambda _: None)


def test_failing_heartbeats_fire_heartbeatsendfailing_and_the_routes_take_beats(
        tmp_path: Path, down: FakeService) -> None:
    clock = SimulatedClock(NOW)
    parts = _parts(tmp_path, down.url, clock)
    assert parts.deadman is not None and parts.deadman.sender is not None
    evaluator = parts.server.components.evaluator
    for _ in range(3):
        parts.deadman.sender.send_once(clock.now())
        parts.server.tick(clock.now())
        clock.advance(60)
    firing = [a for a in evaluator.active() if a.alertname == "HeartbeatSendFailing"]
    assert [(a.state.value, a.labels["kind"], a.value) for a in firing] == [("firing", "healthchecks", 3.0)]
    assert len(down.requests) == 3 and down.requests[0].path == "/ping/abc"
    with TestClient(parts.app()) as c:
        assert c.post("/api/v1/heartbeats/site-a").status_code == 401  # a write: the token
        ok = c.post("/api/v1/heartbeats/site-a", headers={"Authorization": "Bearer tok"})
        assert ok.json() == {"status": "ok"}
        (state,) = c.get("/api/v1/heartbeats").json()["data"]
        metrics = c.get("/metrics").text
    assert state["received"] == 1 and state["last_received"] == clock.now()
    assert 'inferwatch_heartbeat_send_failures_total{kind="healthchecks"} 3.0' in metrics
    parts.stop()


def test_a_missing_key_stops_the_start_naming_the_field(tmp_path: Path) -> None:
    cfg = parse_config(f"""
server: {{data_dir: '{tmp_path}', api_token: tok}}
storage: {{type: memory}}
alerting: {{heartbeat: {{kind: pagerduty}}}}
""")
    with pytest.raises(ConfigError, match=r"alerting.heartbeat \(pagerduty\): no credentials: needs key"):
        build(cfg, clock=SimulatedClock(NOW), announce=lambda _: None)


def test_rounds_skipped_are_recorded_so_rulegroupiterationsmissed_needs_no_self_scrape(
        tmp_path: Path) -> None:
    cfg = parse_config(f"server: {{data_dir: '{tmp_path}', api_token: tok}}\nstorage: {{type: memory}}\n")
    clock = SimulatedClock(NOW)
    parts = build(cfg, clock=clock, announce=lambda _: None)
    server = parts.server
    for step in range(40):  # 20 minutes of rounds at 30 s; one skipped every minute from 2 minutes on
        server.stats.missed = max(0, step // 2 - 2)  # what the evaluation loop counts when rounds run late
        server.tick(clock.now())
        clock.advance(30)
    names = [a.alertname for a in server.components.evaluator.active() if a.state.value == "firing"]
    assert names == ["RuleGroupIterationsMissed"]
    parts.stop()
