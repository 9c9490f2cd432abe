"""``alerting.alertmanagers``: alerts pushed to a real Alertmanager's /api/v2/alerts, as Prometheus does."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from tests.alerting.fakes import FakeService, webhook_handler

from inferwatch.alerting import parse_rfc3339
from inferwatch.config import AlertmanagerSpec, Config, load_config
from inferwatch.model import Labels
from inferwatch.rules import Alert
from inferwatch.server.remote._alertmanager_push import (
    AlertmanagerPush,
    FanoutSink,
    alert_sink,
    alerts_payload,
)

from ._engines import alertmanager, free_port, inferwatch, poll

LABELS = Labels({"alertname": "ServiceUnavailable", "tier": "P0", "service": "ranker", "cluster": "own"})


def _alert(starts: float, ends: float | None = None) -> Alert:
    return Alert(LABELS, {"summary": "ranker is down"}, starts, ends, 1.0, "http://iw/graph")


def test_a_firing_alert_is_valid_for_four_resends_and_external_labels_do_not_override() -> None:
    (body,) = alerts_payload([_alert(1000.0)], 1060.0, {"cluster": "eu-1", "region": "eu"}, valid_for=240.0)
    assert body["labels"]["cluster"] == "own" and body["labels"]["region"] == "eu"
    assert parse_rfc3339(body["startsAt"]) == 1000.0 and parse_rfc3339(body["endsAt"]) == 1300.0
    assert body["generatorURL"] == "http://iw/graph" and body["annotations"] == {"summary": "ranker is down"}


def test_a_resolved_alert_carries_its_end() -> None:
    (body,) = alerts_payload([_alert(1000.0, 1100.0)], 1120.0, {}, valid_for=240.0)
    assert parse_rfc3339(body["endsAt"]) == 1100.0


def test_the_sink_is_the_pipeline_alone_unless_alertmanagers_are_configured(tmp_path: Path) -> None:
    class Recorder:
        def __init__(self) -> None:
            self.got: list[Alert] = []

        def send(self, alerts: Any, now: float) -> None:
            self.got.extend(alerts)

    rec = Recorder()
    assert alert_sink(Config(), rec) == (rec, None)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"server": {"evaluation_interval": "2m"},
                                    "alerting": {"alertmanagers": [{"url": "http://127.0.0.1:1/"}]}}))
    sink, push = alert_sink(load_config(path), rec)
    assert isinstance(sink, FanoutSink) and push is not None
    assert push.valid_for == 4 * 120.0 and push.targets[0].url == "http://127.0.0.1:1"
    sink.send([_alert(1.0)], 2.0)  # the pusher only queues: nothing blocks, the pipeline gets it
    assert rec.got == [_alert(1.0)]


def test_a_down_alertmanager_is_counted_and_never_blocks_send() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    push = AlertmanagerPush([AlertmanagerSpec(url="http://127.0.0.1:1")], external_labels={}, valid_for=240,
                            transport=httpx.MockTransport(refuse), capacity=3)
    push.send([_alert(1.0)] * 5, 2.0)
    assert push.counts.dropped == 2  # the oldest beyond the capacity
    push.start()
    try:
        assert push.flush(10)
    finally:
        push.stop()
    assert (push.counts.failed, push.counts.sent) == (3, 0)


@pytest.fixture
def webhook() -> Iterator[FakeService]:
    fake = FakeService(webhook_handler()).start()
    yield fake
    fake.stop()


@pytest.mark.tools
@pytest.mark.slow
def test_a_real_alertmanager_gets_the_alert_notifies_and_resolves_it(
        tmp_path: Path, webhook: FakeService, require_tool: Callable[..., str]) -> None:
    binary = require_tool("prometheus-alertmanager", "alertmanager")
    am_config = tmp_path / "alertmanager.yml"
    am_config.write_text(yaml.safe_dump({
        "route": {"receiver": "hook", "group_by": ["alertname"], "group_wait": "1s", "group_interval": "1s",
                  "repeat_interval": "1h"},
        "receivers": [{"name": "hook",
                       "webhook_configs": [{"url": webhook.url + "/hook", "send_resolved": True}]}],
    }))
    with alertmanager(binary, am_config, tmp_path) as am:
        push = AlertmanagerPush([AlertmanagerSpec(url=am.url)], external_labels={"region": "eu"},
                                valid_for=240)
        push.start()
        try:
            now = time.time()
            push.send([_alert(now - 60)], now)
            assert push.flush(60) and push.counts.sent == 1
            listed = poll(lambda: am.get("/api/v2/alerts"), timeout=60, what="the alert in Alertmanager")
            assert listed[0]["labels"] == {**dict(LABELS.items()), "region": "eu"}
            assert abs(parse_rfc3339(listed[0]["endsAt"]) - (now + 240)) < 1  # type: ignore[operator]
            firing = poll(lambda: [r.json() for r in webhook.requests if r.json()["status"] == "firing"],
                          timeout=60, what="the firing notification")
            assert firing[0]["alerts"][0]["labels"]["service"] == "ranker"
            # Resolved at the evaluation that found it gone: an end already past when it arrives
            # (Alertmanager keeps the later of two future ends).
            ended = time.time()
            push.send([_alert(now - 60, ended)], ended)
            assert push.flush(60) and push.counts.sent == 2
            resolved = poll(lambda: [r.json() for r in webhook.requests if r.json()["status"] == "resolved"],
                            timeout=60, what="the resolved notification")
            assert parse_rfc3339(resolved[0]["alerts"][0]["endsAt"]) == pytest.approx(ended, abs=0.01)
        finally:
            push.stop()


@pytest.mark.tools
@pytest.mark.slow
def test_inferwatch_serve_pushes_its_alerts_to_the_configured_alertmanager(
        tmp_path: Path, require_tool: Callable[..., str]) -> None:
    binary = require_tool("prometheus-alertmanager", "alertmanager")
    am_config = tmp_path / "alertmanager.yml"
    am_config.write_text(yaml.safe_dump({"route": {"receiver": "null"}, "receivers": [{"name": "null"}]}))
    port = free_port()
    config = tmp_path / "inferwatch.yaml"
    with alertmanager(binary, am_config, tmp_path) as am:
        config.write_text(yaml.safe_dump({
            "server": {"listen": f"127.0.0.1:{port}", "data_dir": str(tmp_path / "data"),
                       "evaluation_interval": "1s", "api_token": "t"},
            "scrape": {"targets": [{"job": "self", "url": f"http://127.0.0.1:{port}/metrics",
                                    "interval": "1s", "timeout": "1s"}]},
            "rules": {"default_pack": False, "rules": [
                {"name": "SelfScraped", "dimension": "service", "tier": "P2",
                 "signal": {"type": "expr", "expr": 'up{job="self"}'}, "comparison": "==", "threshold": 1}]},
            "alerting": {"external_labels": {"cluster": "eu-1"}, "alertmanagers": [{"url": am.url}]},
        }))
        server = inferwatch(["serve", "--config", str(config)], f"http://127.0.0.1:{port}",
                            tmp_path / "serve.log")
        with server:
            (alert,) = poll(lambda: am.get("/api/v2/alerts"), timeout=60, what="the pushed alert")
    assert alert["labels"] == {"alertname": "SelfScraped", "cluster": "eu-1", "dimension": "service",
                               "instance": f"127.0.0.1:{port}", "job": "self", "severity": "warning",
                               "tier": "P2"}
    # Firing: valid for four resends of a minute (the evaluation interval is shorter).
    ends, starts = parse_rfc3339(alert["endsAt"]), parse_rfc3339(alert["startsAt"])
    assert ends is not None and starts is not None and 230 < ends - starts <= 245
