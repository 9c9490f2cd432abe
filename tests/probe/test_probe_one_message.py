"""One outage, one message: the default inhibit rules around ``ProbeFailing`` (the pipeline's
inhibitor on the default config, no server). The end-to-end story is in test_probe_e2e.py."""

from __future__ import annotations

from inferwatch.alerting.mute import Inhibitor, InhibitRule
from inferwatch.config import parse_config
from inferwatch.model import Labels
from inferwatch.rules import Alert

P0 = {"tier": "P0", "dimension": "service", "service": "ranker"}
PROBE_FAILING = {"alertname": "ProbeFailing", **P0}
TARGET_DOWN = {"alertname": "TargetDown", **P0, "job": "ranker", "instance": "127.0.0.1:8000"}
FAST_BURN = {"alertname": "SLORankerAvailabilityFastBurn", **P0, "slo_alert": "fast_page",
             "sloth_id": "ranker-availability"}
SLOW_BURN = {**FAST_BURN, "alertname": "SLORankerAvailabilitySlowBurn", "tier": "P1",
             "slo_alert": "slow_page"}
LATENCY = {"alertname": "SevereLatency", **P0, "tier": "P1"}


def inhibitor(*alerts: Alert) -> Inhibitor:
    rules = [InhibitRule.build(r) for r in parse_config("{}").alerting.inhibit_rules]
    return Inhibitor(rules, alerts)


def test_probe_failing_mutes_the_down_target_and_the_burns_of_its_service() -> None:
    inh = inhibitor(Alert(Labels(PROBE_FAILING), starts_at=100.0))
    for muted in (TARGET_DOWN, FAST_BURN, SLOW_BURN, LATENCY):
        assert inh.mutes(muted, 200.0), muted
    assert not inh.mutes({**FAST_BURN, "service": "other", "sloth_id": "other-availability"}, 200.0)
    assert not inh.mutes(PROBE_FAILING, 200.0)  # never itself
    # a target down does not mute the probes' page: ProbeFailing is the outage's one message
    assert not inhibitor(Alert(Labels(TARGET_DOWN), starts_at=100.0)).mutes(PROBE_FAILING, 200.0)


def test_the_burns_an_outage_caused_stay_muted_for_their_short_window_after_it() -> None:
    ended = 400.0
    inh = inhibitor(Alert(Labels(PROBE_FAILING), starts_at=100.0, ends_at=ended))
    # the SLO burns keep firing after the outage (its budget spent is in their windows): held 30m
    assert inh.mutes(FAST_BURN, ended + 60) and inh.mutes(SLOW_BURN, ended + 1790)
    assert not inh.mutes(SLOW_BURN, ended + 1801)
    # everything else is muted only while the outage lasts, as in Alertmanager
    assert not inh.mutes(LATENCY, ended + 1) and not inh.mutes(TARGET_DOWN, ended + 1)
