"""The server's own /metrics: evaluation rounds, targets, alerts, storage, deliveries."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

import inferwatch
from inferwatch._exceptions import NotifyError
from inferwatch.alerting import Pipeline, RecordingNotifier
from inferwatch.config import parse_config
from inferwatch.model import Labels, SimulatedClock
from inferwatch.rules import Alert
from inferwatch.server import DeliveryCounts, Server, build_components, create_app


def _values(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def _server(tmp_path: Path, clock: SimulatedClock) -> Server:
    cfg = parse_config(f"server: {{data_dir: '{tmp_path}'}}\n"
                       "scrape: {targets: [{job: gone, url: 'http://127.0.0.1:1/metrics'}]}")
    return Server(build_components(cfg, clock=clock), clock=clock)


def test_metrics_report_evaluations_targets_alerts_and_storage(tmp_path: Path) -> None:
    # rule: each evaluation round is counted; a refused scrape makes a down target, whose
    # TargetDown alert goes pending; the SQLite store's bytes on disk are reported
    clock = SimulatedClock(1000.0)
    server = _server(tmp_path, clock)
    server.components.scrape.scrape_once(1000.0)
    server.tick(1000.0)
    server.tick(1015.0)
    with TestClient(create_app(server)) as c:
        v = _values(c.get("/metrics").text)
    server.stop()
    assert v[("inferwatch_rule_evaluations_total", ())] == 2
    assert v[("inferwatch_rule_evaluation_failures_total", ())] == 0
    assert v[("inferwatch_rule_group_last_evaluation_timestamp_seconds", ())] == 1015.0
    assert v[("inferwatch_rule_group_rules", ())] == len(server.components.rules) > 0
    assert v[("inferwatch_targets", (("health", "down"),))] == 1
    assert v[("inferwatch_targets", (("health", "up"),))] == 0
    assert v[("inferwatch_alerts", (("state", "pending"),))] >= 1  # TargetDown for job gone
    assert v[("inferwatch_storage_bytes", ())] > 0
    assert v[("inferwatch_storage_checkpoints_total", ())] >= 0  # the store checkpoints in the background
    assert v[("inferwatch_storage_checkpoint_failures_total", ())] == 0
    info = [k for k in v if k[0] == "inferwatch_build_info"]
    assert info and ("version", inferwatch.__version__) in info[0][1]
    assert ("process_cpu_seconds_total", ()) in v  # the process collectors are still there


def test_a_failed_round_is_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = SimulatedClock(0.0)
    server = _server(tmp_path, clock)

    def boom(now: float | None = None) -> list[Alert]:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(server.components.evaluator, "evaluate", boom)
    server.tick(0.0)  # never raises
    with TestClient(create_app(server)) as c:
        v = _values(c.get("/metrics").text)
    server.stop()
    assert v[("inferwatch_rule_evaluations_total", ())] == 1
    assert v[("inferwatch_rule_evaluation_failures_total", ())] == 1


def test_deliveries_count_notifications_and_action_results(tmp_path: Path) -> None:
    # rule: notifications by receiver/status and actions by result, deduplicated runs apart
    cfg = parse_config("alerting: {route: {receiver: phone, group_wait: 0s, group_by: [alertname]}}")
    rec = RecordingNotifier("phone")
    pipeline = Pipeline(cfg.alerting, notifiers={r.name: rec for r in cfg.alerting.effective_receivers()})
    counts = DeliveryCounts()
    pipeline.subscribe(counts)
    drift = [Alert(Labels({"alertname": "FeatureDriftRollback", "tier": "P1", "service": "s",
                           "model": "m", "feature": f}), {}, 0.0, None, 1.0) for f in ("a", "b")]
    pipeline.send(drift, now=0.0)
    clock = SimulatedClock(0.0)
    server = _server(tmp_path, clock)
    with TestClient(create_app(server, deliveries=counts)) as c:
        v = _values(c.get("/metrics").text)
    server.stop()
    assert v[("inferwatch_notifications_total", (("receiver", "phone"), ("status", "sent")))] == len(rec.sent)
    assert v[("inferwatch_actions_total", (("action", "rollback"), ("result", "ok")))] == 1
    assert v[("inferwatch_actions_total", (("action", "rollback"), ("result", "deduplicated")))] == 1


def test_queue_length_and_oldest_age_per_receiver(tmp_path: Path) -> None:
    # rule: a receiver that fails keeps its notification owed (retrying); the gauges show how
    # many are owed and how long the oldest has waited; a healthy receiver owes nothing
    cfg = parse_config("alerting: {route: {receiver: phone, group_wait: 0s, routes: ["
                       "{receiver: wecom, continue: true}, {receiver: phone}]}}")
    recs = {r.name: RecordingNotifier(r.name) for r in cfg.alerting.effective_receivers()}
    recs["wecom"].fail_next(*[NotifyError("HTTP 503", retryable=True)] * 3)
    pclock = SimulatedClock(0.0)
    pipeline = Pipeline(cfg.alerting, clock=pclock, notifiers=recs, actions=[])
    pipeline.send([Alert(Labels({"alertname": "Down", "tier": "P1", "service": "s"}), {}, 0.0, None, 1.0)],
                  now=0.0)
    pipeline.tick(1.5)  # the retry (due at about 1 s) fails too
    pclock.set(42.0)
    counts = DeliveryCounts(queues=lambda: pipeline.queue_stats(pclock.now()))
    clock = SimulatedClock(0.0)
    server = _server(tmp_path, clock)
    with TestClient(create_app(server, deliveries=counts)) as c:
        v = _values(c.get("/metrics").text)
    server.stop()
    assert v[("inferwatch_notification_queue_length", (("receiver", "wecom"),))] == 1
    assert v[("inferwatch_notification_queue_oldest_age_seconds", (("receiver", "wecom"),))] == 42
    assert v[("inferwatch_notification_queue_length", (("receiver", "phone"),))] == 0
    assert v[("inferwatch_notification_queue_oldest_age_seconds", (("receiver", "phone"),))] == 0


def test_promtool_accepts_the_self_metrics(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    clock = SimulatedClock(0.0)
    server = _server(tmp_path, clock)
    server.tick(0.0)
    with TestClient(create_app(server, deliveries=DeliveryCounts())) as c:
        text = c.get("/metrics").text
    server.stop()
    out = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


def test_every_self_metric_is_in_the_catalog(tmp_path: Path) -> None:
    # rule: DESIGN.md: every metric inferwatch emits is listed in one place, with its help text
    from inferwatch.model import CATALOG

    clock = SimulatedClock(0.0)
    server = _server(tmp_path, clock)
    with TestClient(create_app(server, deliveries=DeliveryCounts())) as c:
        fams = list(text_string_to_metric_families(c.get("/metrics").text))
    server.stop()
    ours = [f for f in fams if f.name.startswith("inferwatch_")]
    assert len(ours) >= 12
    for f in ours:
        spec = CATALOG.get(f.name) or CATALOG.get(f.name + "_total")
        assert spec is not None, f.name
        assert f.documentation == spec.help
