"""The embedded server inside the demo: it scrapes the service on compressed time and the
default rules fire on the outage (the P0 rule: 503s for 1 min) and resolve after it."""

from __future__ import annotations

import io

from inferwatch.alerting import ActionRecord
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


def test_outage_fires_the_p0_alert_and_recovery_resolves_it() -> None:
    story = Story.of(
        [Phase("normal", 0.0), Phase("outage", 60.0, Faults(unavailable_ratio=0.9)),
         Phase("recovered", 240.0)],
        end_s=420.0,
    )
    pipeline = PipelineView()
    view = AlertView(forward=pipeline)
    out = io.StringIO()
    run_demo(DemoOptions(duration_s=10.5, speed=40.0, rate=60.0, threads=4, refresh_s=0.5, story=story),
             DemoComponents(parts=[pipeline, view]), out=out, tty=False)
    fired = [t for t, name, state in view.events if name == "ServiceUnavailable" and state == "firing"]
    resolved = [t for t, name, state in view.events if name == "ServiceUnavailable" and state == "resolved"]
    assert fired and 60.0 < fired[0] < 240.0, view.events  # during the outage, after its `for: 1m`
    assert resolved and resolved[0] > 240.0, view.events   # once the 503s stop
    assert "FIRING   P0 ServiceUnavailable" in out.getvalue()
    # the pipeline routed it: the P0 scale-out action ran (skipped: no cluster here) and was shown
    actions = [r for r in pipeline.records if isinstance(r, ActionRecord)]
    assert any(r.action == "scale_out" and r.alertname == "ServiceUnavailable" for r in actions), actions
    assert "ACTION   scale_out (fire) for ServiceUnavailable" in out.getvalue()
