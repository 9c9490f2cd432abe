"""The embedded server inside the demo: it scrapes the service on compressed time and the
default rules fire on the outage (the P0 rule: 503s for 1 min) and resolve after it; the P0
path pages the loopback PagerDuty fake and scales the Kubernetes fake's Deployment."""

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
    # Story minutes at x40 are 1.5 s of wall time, and a loaded runner can starve a scrape (its
    # timeout is 190 ms of wall time) or an evaluation round, restarting the rule's `for: 1m`. The
    # rule fires near 163 s and resolves near 268 s here: a 5-minute outage and 4 minutes after it
    # leave each about 5 s of wall time to spare (a 3-minute outage and a 420 s story left 2 and 4).
    story = Story.of(
        [Phase("normal", 0.0), Phase("outage", 60.0, Faults(unavailable_ratio=0.9)),
         Phase("recovered", 360.0)],
        end_s=600.0,
    )
    pipeline = PipelineView()
    view = AlertView(forward=pipeline)
    out = io.StringIO()
    run_demo(DemoOptions(duration_s=15.0, speed=40.0, rate=60.0, threads=4, refresh_s=0.5, story=story),
             DemoComponents(parts=[pipeline, view]), out=out, tty=False)
    fired = [t for t, name, state in view.events if name == "ServiceUnavailable" and state == "firing"]
    resolved = [t for t, name, state in view.events if name == "ServiceUnavailable" and state == "resolved"]
    assert fired and 60.0 < fired[0] < 360.0, view.events  # during the outage, after its `for: 1m`
    assert resolved and resolved[0] > 360.0, view.events   # once the 503s stop
    assert "FIRING   P0 ServiceUnavailable" in out.getvalue()
    # the pipeline routed it: the P0 scale-out action ran once for the episode, against the fake API
    actions = [r for r in pipeline.records if isinstance(r, ActionRecord)]
    scale = [r for r in actions if r.action == "scale_out" and r.alertname == "ServiceUnavailable"]
    assert len(scale) == 1 and scale[0].ok, actions
    fakes = pipeline.fakes
    assert fakes is not None
    # the fake Kubernetes API server's Deployment went up by the default step of one
    assert fakes.kubernetes.replicas["default/demo"] == 2, fakes.kubernetes.changes
    assert [(c.before, c.after) for c in fakes.kubernetes.changes] == [(1, 2)]
    # the phone path: PagerDuty got a P0 trigger as critical (the urgency that phones the on-call)
    triggers = [e for e in fakes.pagerduty.events if e.event_action == "trigger"]
    assert triggers and triggers[0].severity == "critical", fakes.pagerduty.events
    assert triggers[0].alertname == "ServiceUnavailable" and triggers[0].status == 202
    assert fakes.pagerduty.incidents[triggers[0].dedup_key] in ("triggered", "resolved")
    text = out.getvalue()
    assert "PHONE    pagerduty trigger ServiceUnavailable (dedup_key " in text, text
    assert "ACTION   scale_out for ServiceUnavailable: deployment default/demo replicas 1 -> 2 (max 10)" \
        in text
    # the credentials the demo handed its receiver and action are never shown
    assert fakes.pagerduty.routing_key not in text and fakes.kubernetes.token not in text
    assert fakes.pagerduty.routing_key not in pipeline.receiver_output.getvalue()
