"""Issue 40 #5: true status: a print without credentials is not "sent"; the next step is the rule's."""

from __future__ import annotations

import io

from inferwatch.alerting import AlertsHandle, Pipeline
from inferwatch.config import parse_config
from inferwatch.model import Labels, SimulatedClock
from inferwatch.rules import Alert
from inferwatch.server.web._dashboard import response_of


def _alert(name: str, tier: str, clock: SimulatedClock) -> Alert:
    labels = Labels({"alertname": name, "tier": tier, "severity": "critical", "dimension": "service",
                     "service": "chat", "model": "llama-3-8b"})
    return Alert(labels, {"summary": f"{name} of chat"}, starts_at=clock.now(), value=3.0)


def test_a_receiver_without_credentials_records_printed_not_sent() -> None:
    # the default config: the P1 route goes to the wecom robot, which has no key here
    clock = SimulatedClock(10_000.0)
    out = io.StringIO()
    config = parse_config("alerting: {route: {receiver: terminal, group_wait: 0s, routes: "
                          "[{matchers: ['tier=\"P1\"'], receiver: wecom}]}}").alerting
    pipeline = Pipeline(config, clock=clock, stream=out, warn=lambda _: None)
    records: list[object] = []
    pipeline.subscribe(records.append)
    pipeline.send([_alert("GenerationSlowFirstToken", "P1", clock)], clock.now())
    for _ in range(5):
        clock.advance(1)
        pipeline.tick(clock.now())
    notes = [r for r in records if getattr(r, "receiver", "") == "wecom"]
    assert notes and {r.status for r in notes} == {"printed (no credentials)"}  # type: ignore[attr-defined]
    assert "GenerationSlowFirstToken" in out.getvalue()  # it did print


def test_the_next_step_names_only_what_matches_the_alert() -> None:
    clock = SimulatedClock(10_000.0)
    pipeline = Pipeline(parse_config("").alerting, clock=clock, stream=io.StringIO(), warn=lambda _: None)
    ttft = _alert("GenerationSlowFirstToken", "P1", clock).labels.to_dict()
    severe = _alert("SevereLatency", "P1", clock).labels.to_dict()
    # P1: only SevereLatency has the degrade action; the robot without a key only prints
    handle = AlertsHandle(pipeline)
    assert response_of(handle, ttft) == "wecom message, printed (no credentials)"
    assert response_of(handle, severe) == "degrade action + wecom message, printed (no credentials)"
    assert response_of(None, ttft) == ""
