"""``inferwatch demo --slo``: the demo service's SLOs page from a burn instead of its static rules."""

from __future__ import annotations

import io

from inferwatch.demo import (
    AlertView,
    DemoComponents,
    DemoOptions,
    Faults,
    Phase,
    PipelineView,
    Story,
    run_demo,
)


def test_the_outage_pages_from_the_availability_burn_not_the_static_rule() -> None:
    story = Story.of([Phase("normal", 0.0), Phase("outage", 60.0, Faults(unavailable_ratio=0.9))],
                     end_s=300.0)
    pipeline = PipelineView()
    view = AlertView(forward=pipeline, slos=True)
    out = io.StringIO()
    run_demo(DemoOptions(duration_s=7.5, speed=40.0, rate=60.0, threads=4, refresh_s=0.5, story=story),
             DemoComponents(parts=[pipeline, view]), out=out, tty=False)
    fired = {name: t for t, name, state in reversed(view.events) if state == "firing"}
    assert "SLODemoAvailabilityFastBurn" in fired, view.events
    assert 60.0 < fired["SLODemoAvailabilityFastBurn"] < 200.0, view.events  # minutes into the outage
    assert "ServiceUnavailable" not in fired and "HighErrorRate" not in fired  # replaced by the SLO
    assert "FIRING   P0 SLODemoAvailabilityFastBurn" in out.getvalue()
    fakes = pipeline.fakes
    assert fakes is not None
    triggers = [e for e in fakes.pagerduty.events if e.event_action == "trigger"]
    assert triggers and triggers[0].alertname == "SLODemoAvailabilityFastBurn", fakes.pagerduty.events
