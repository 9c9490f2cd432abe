"""Declaring SLOs (config shorthands, Sloth specs) and the rules they generate."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inferwatch._exceptions import ConfigError
from inferwatch.config import parse_config
from inferwatch.model import Tier
from inferwatch.settings._slo import TTFT_BUCKETS
from inferwatch.slo import burn_factor, load_rule_set, parse_sloth_spec
from inferwatch.slo._generate import ALERT_WINDOWS

SPECS = Path(__file__).parent / "specs"
AVAIL = "slos: [{service: ranker, type: availability, objective: 99.9}]"
SLOTH_WINDOWS = ["5m", "30m", "1h", "2h", "6h", "1d", "3d"]


def _rules(text: str):
    return load_rule_set(parse_config(text))


def test_workbook_factors_for_30_and_28_days() -> None:
    # SRE Workbook table 5-8 (30 days): 14.4x, 6x, 3x, 1x; Sloth's 28-day windows: 13.44, 5.6, 2.8, 0.933.
    pairs = [w for _, _, ws in ALERT_WINDOWS for w in ws]
    assert [burn_factor(w, 30 * 86400) for w in pairs] == [14.4, 6.0, 3.0, 1.0]
    assert [round(burn_factor(w, 28 * 86400), 4) for w in pairs] == [13.44, 5.6, 2.8, 0.9333]
    assert [(w.short, w.long) for w in pairs] == [(300, 3600), (1800, 21600), (7200, 86400), (21600, 259200)]


def test_recordings_have_sloths_names_and_labels() -> None:
    rs = _rules(AVAIL)
    names = [r.record for r in rs.recordings]
    assert names == [*(f"slo:sli_error:ratio_rate{w}" for w in SLOTH_WINDOWS), "slo:sli_error:ratio_rate30d",
                     "slo:objective:ratio", "slo:error_budget:ratio", "slo:time_period:days",
                     "slo:current_burn_rate:ratio", "slo:period_burn_rate:ratio",
                     "slo:period_error_budget_remaining:ratio", "sloth_slo_info"]
    five = rs.recordings[0]
    assert dict(five.labels) == {"sloth_id": "ranker-availability", "sloth_service": "ranker",
                                 "sloth_slo": "availability", "sloth_window": "5m"}
    # the SDK's 5xx and the requests lost while `up{service="ranker"}` was 0 (docs/probes.md)
    assert str(five.expr).startswith(
        '(((sum(rate(inferwatch_requests_total{service="ranker",code=~"5.."}[5m]))'
        ' or vector(0)) + ((1 - (avg(avg_over_time(up{service="ranker"}[5m]))')
    bare = _rules(AVAIL.replace("objective: 99.9", "objective: 99.9, downtime: none")).recordings[0]
    assert str(bare.expr) == ('((sum(rate(inferwatch_requests_total{service="ranker",code=~"5.."}[5m])) or '
                              'vector(0))) / (sum(rate(inferwatch_requests_total{service="ranker"}[5m])))')
    period = rs.recordings[7]
    assert "sum_over_time(slo:sli_error:ratio_rate5m{" in period.promql
    assert "[30d])\n/ ignoring (sloth_window)\ncount_over_time(" in period.promql
    assert rs.recordings[8].promql == "vector(0.9990000000000001)"
    info = rs.recordings[-1]
    assert info.labels["sloth_objective"] == "99.9" and info.labels["sloth_spec"] == "prometheus/v1"


def test_alerts_use_the_workbook_windows_and_map_onto_tiers() -> None:
    alerts = {a.labels["slo_alert"]: a for a in _rules(AVAIL).slo.alerts}
    budget = "0.0009999999999999432"  # (100 - 99.9) / 100, as Sloth writes it
    fast, slow, ticket = alerts["fast_page"].promql, alerts["slow_page"].promql, alerts["ticket"].promql
    assert "slo:sli_error:ratio_rate5m{" in fast and f"> (14.4 * {budget})" in fast
    assert "slo:sli_error:ratio_rate1h{" in fast and "ratio_rate6h" not in fast
    assert re.findall(r"ratio_rate(\w+)\{", slow) == ["30m", "6h"] and f"(6 * {budget})" in slow
    assert re.findall(r"ratio_rate(\w+)\{", ticket) == ["2h", "1d", "6h", "3d"]
    assert f"(3 * {budget})" in ticket and f"(1 * {budget})" in ticket
    assert [alerts[k].tier for k in ("fast_page", "slow_page", "ticket")] == [Tier.P0, Tier.P1, Tier.P2]
    assert {a.labels["sloth_severity"] for a in alerts.values()} == {"page", "ticket"}
    assert all("max without (sloth_window)" in a.promql for a in alerts.values())
    # The minimum-traffic guard: events in the long window (rate x seconds) >= 100 by default.
    assert "* 3600 >= 100" in fast and "* 21600 >= 100" in slow and "* 259200 >= 100" in ticket


def test_tiers_and_guard_are_configurable() -> None:
    rs = _rules("slos: [{service: r, type: availability, objective: 99, min_events: 0, "
                "tiers: {fast_page: P1, slow_page: P2, ticket: P2}}]")
    assert [a.tier for a in rs.slo.alerts] == [Tier.P1, Tier.P2, Tier.P2]
    assert all(">=" not in a.promql for a in rs.slo.alerts)


def test_latency_threshold_must_be_a_bucket_boundary() -> None:
    with pytest.raises(ConfigError, match=r"threshold 0.3 is not a bucket boundary.*0.25, 0.5, 1, 2.5"):
        parse_config("slos: [{service: ranker, type: latency, objective: 99, threshold: 0.3}]")
    rs = _rules("slos: [{service: ranker, type: latency, objective: 99, threshold: 0.5}]")
    assert 'inferwatch_request_duration_seconds_bucket{service="ranker",le="0.5"}[5m]' in str(
        rs.recordings[0].expr)
    assert rs.slos[0].name == "latency-500ms"


def test_time_to_first_token_uses_the_generation_histogram() -> None:
    from inferwatch.sdk._generation import TTFT_BUCKETS as SDK_TTFT

    assert TTFT_BUCKETS == SDK_TTFT  # config keeps a copy: it cannot import the SDK
    with pytest.raises(ConfigError, match="time-to-first-token buckets"):
        parse_config("slos: [{service: chat, type: time_to_first_token, objective: 95, threshold: 0.3}]")
    rs = _rules("slos: [{service: chat, type: time_to_first_token, objective: 95, threshold: 1}]")
    assert 'inferwatch_generation_time_to_first_token_seconds_bucket{service="chat",le="1.0"}' in str(
        rs.recordings[0].expr)


@pytest.mark.parametrize(("text", "message"), [
    ("slos: [{service: r, type: availability, objective: 100}]", "slos[0].objective"),
    ("slos: [{service: r, type: availability, objective: 99, period: 7d}]", "period must be 30d or 28d"),
    ("slos: [{service: r, type: latency, objective: 99}]", "needs threshold"),
    ("slos: [{service: r, type: availability, objective: 99, threshold: 1}]", "takes no threshold"),
    ("slos: [{service: r, type: availability, objective: 99}, {service: r, type: availability, "
     "objective: 98}]", "declared twice"),
    ("slos: [{service: 'r x', type: availability, objective: 99}]", "letters, digits"),
])
def test_bad_shorthands_name_the_field(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config(text)


def test_a_sloth_spec_is_read_as_it_is() -> None:
    rs = _rules(f"slo_files: [{SPECS / 'payments.yaml'}]")
    assert [s.id for s in rs.slos] == ["payments-charges-availability", "payments-refunds-latency"]
    # Sloth's names: the spec's alerting.name, told apart by sloth_severity; the page's two
    # window pairs are two rules of that name, whose tier follows slo_alert (P0 fast, P1 slow)
    got = [(a.name, a.labels["sloth_severity"], a.labels["slo_alert"], a.tier.value) for a in rs.slo.alerts]
    assert got == [("PaymentsChargesErrors", "page", "fast_page", "P0"),
                   ("PaymentsChargesErrors", "page", "slow_page", "P1"),
                   ("PaymentsChargesErrors", "ticket", "ticket", "P2"),
                   ("PaymentsRefundsSlow", "ticket", "ticket", "P2")]  # page disabled
    assert len({a.uid for a in rs.slo.alerts}) == 4
    five = rs.recordings[0]
    assert dict(five.labels)["owner"] == "payments-team" and five.labels["sloth_window"] == "5m"
    assert 'code=~"(5..|429)"}[5m]' in str(five.expr)
    fast = rs.slo.alerts[0]
    assert fast.labels["routing_key"] == "payments" and fast.labels["category"] == "availability"
    assert fast.alert_labels["severity"] == "pageteam"  # the spec's own, as Sloth keeps it
    assert fast.alert_labels["tier"] == "P0"
    assert rs.slo.alerts[2].alert_labels["severity"] == "slack"
    assert fast.annotations == {"summary": "Charges of payments fail too often",
                                "title": "(page) {{$labels.sloth_service}} {{$labels.sloth_slo}} SLO error "
                                         "budget burn rate is too fast."}
    raw_ticket = rs.slo.alerts[-1].promql
    assert ">= 100" not in raw_ticket  # a raw SLI has no event count: no guard


@pytest.mark.parametrize(("text", "message"), [
    ("version: prometheus/v2\nservice: a\nslos: []", "version"),
    ("version: prometheus/v1\nservice: a\nslos: [{name: x, objective: 99, sli: {events: "
     "{error_query: 'sum(rate(a[5m]))', total_query: 'sum(rate(b[{{.window}}]))'}}, "
     "alerting: {name: A}}]", "has no {{.window}}"),
    ("version: prometheus/v1\nservice: a\nslos: [{name: x, objective: 99, sli: {}, alerting: {name: A}}]",
     "exactly one of events"),
    ("version: prometheus/v1\nservice: a\nslos: [{name: x, objective: 99, sli: {raw: "
     "{error_ratio_query: 'a{{.window}}'}}}]", "slos[0].alerting: Field required"),
    ("version: prometheus/v1\nservice: a\nslos: [{name: x, objective: 99, sli: {raw: "
     "{error_ratio_query: 'rate(a[{{.window}}]'}}, alerting: {name: A}}]", "spec.yaml: slos[0] (x)"),
    ("version: prometheus/v1\nservice: a\nslos: [{name: x, objective: 99, bogus: 1, sli: {raw: "
     "{error_ratio_query: 'a[{{.window}}]'}}, alerting: {name: A}}]", "slos[0].bogus: unknown field"),
])
def test_bad_sloth_specs_name_the_file_and_field(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        from inferwatch.slo import slo_rules

        slo_rules(parse_sloth_spec(text, source="spec.yaml"))


def test_slo_replaces_static_drops_the_services_default_rules() -> None:
    base = "slos: [{service: ranker, type: availability, objective: 99.9}]\n"
    kept = {r.name: r.promql for r in _rules(base).alerts}
    assert 'service!~"ranker"' not in kept["HighErrorRate"]
    replaced = {r.name: r.promql for r in _rules(base + "rules: {slo_replaces_static: true}").alerts}
    assert 'service!~"ranker"' in replaced["HighErrorRate"]
    assert 'service!~"ranker"' in replaced["ServiceUnavailable"]
    assert 'service!~"ranker"' not in replaced["HighP99Latency"]  # no latency SLO for ranker


def _alert(kind: str, sloth_id: str, t: float):  # an Alert
    from inferwatch.model import Labels
    from inferwatch.rules import Alert

    # dimension "quality": outside the default P0-mutes-service-alerts rule, so only slo_alert decides
    return Alert(Labels({"alertname": f"Burn{kind}", "slo_alert": kind, "sloth_id": sloth_id,
                         "tier": "P1", "dimension": "quality", "service": sloth_id}), starts_at=t)


def test_the_faster_slo_alert_inhibits_the_slower_of_the_same_slo() -> None:
    from inferwatch.alerting import ReplayPipeline
    from inferwatch.config import Config

    pipeline = ReplayPipeline(Config().alerting)
    sent = [_alert("slow_page", "a", 0), _alert("ticket", "a", 0), _alert("ticket", "b", 0)]
    for t in range(0, 120, 10):
        pipeline.send(sent, float(t))
        pipeline.evaluated(float(t))
    notified = {(a["labels"]["slo_alert"], a["labels"]["sloth_id"])
                for n in pipeline.notifications for a in n["alerts"]}
    # a's ticket is muted by a's slow page; b's ticket has no faster alert of its own
    assert notified == {("slow_page", "a"), ("ticket", "b")}


def test_slo_files_are_read_from_the_config_files_directory(tmp_path: Path) -> None:
    from inferwatch.config import load_config

    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "p.yaml").write_text((SPECS / "payments.yaml").read_text())
    (tmp_path / "inferwatch.yaml").write_text("slo_files: [specs/p.yaml]\n")
    rs = load_rule_set(load_config(tmp_path / "inferwatch.yaml"))  # from any working directory
    assert [s.id for s in rs.slos] == ["payments-charges-availability", "payments-refunds-latency"]


def test_a_custom_bucket_makes_its_threshold_valid() -> None:
    rs = _rules("sdk: {buckets: [0.1, 0.3, 1]}\n"
                "slos: [{service: r, type: latency, objective: 99, threshold: 0.3}]")
    assert 'le="0.3"' in str(rs.recordings[0].expr)
