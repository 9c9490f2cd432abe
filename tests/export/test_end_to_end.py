"""The scale path end to end: the same outage story through the embedded server and through the
real engines, with the same notifications and the same actions.

On loopback: the demo model service (with its load generator) and ``inferwatch exporter``.
Path A, embedded: ``inferwatch serve`` scrapes them, evaluates and delivers.
Path B, engines: a real Prometheus with the exported ``prometheus.yml`` and rules scrapes the
same targets and sends to a real Alertmanager with the exported ``alertmanager.yml``, which pages
PagerDuty itself and posts the rest to an ``inferwatch serve`` with the exported
``inferwatch-behind-alertmanager.yaml`` (WeCom, scale-out, degrade).
Each path has its own fakes (PagerDuty, WeCom, Kubernetes, the degrade endpoint), so the two
can be compared. The story advances on what the fakes received (bounded polling), not on sleeps.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from tests.alerting.fakes import FakeService, wecom_handler

from inferwatch.demo import (
    FakeKubernetes,
    FakePagerDuty,
    FeatureGenerator,
    LoadGenerator,
    ServerThread,
    train_model,
)
from inferwatch.demo._service import DemoService, Faults
from inferwatch.sdk import Monitor

from ._engines import alertmanager, free_port, inferwatch, poll, prometheus
from ._helpers import dashboard_targets, interpolate

pytestmark = [pytest.mark.tools, pytest.mark.slow, pytest.mark.timeout(240)]

TOKEN = "e2e-api-token"
WECOM_KEY = "e2e-robot-key"
PHASE_TIMEOUT = 60.0


@dataclass
class Fakes:
    """One path's outside world."""

    pagerduty: FakePagerDuty
    wecom: FakeService
    kube: FakeKubernetes
    degrade: FakeService

    def stop(self) -> None:
        for f in (self.pagerduty, self.wecom, self.kube, self.degrade):
            f.stop()


def _fakes() -> Fakes:
    return Fakes(FakePagerDuty(), FakeService(wecom_handler(WECOM_KEY)).start(),
                 FakeKubernetes({"default/demo": 1}),
                 FakeService(lambda r: (200, {"Content-Type": "application/json"}, b"{}")).start())


def _config(listen: str, data_dir: Path, targets: list[dict[str, Any]], f: Fakes) -> dict[str, Any]:
    """One inferwatch config for both paths: short windows so the story takes seconds."""
    return {
        "server": {"listen": listen, "data_dir": str(data_dir), "evaluation_interval": "1s",
                   "api_token": TOKEN},
        "scrape": {"targets": targets},
        "rules": {"default_pack": False, "rules": [
            {"name": "SevereLatency", "dimension": "service", "tier": "P1",
             "signal": {"type": "p99_latency", "window": "5s"}, "threshold": 1, "for": "2s"},
            {"name": "ServiceUnavailable", "dimension": "service", "tier": "P0",
             "signal": {"type": "unavailable_ratio", "window": "5s"}, "comparison": ">=", "threshold": 0.5,
             "for": "2s"},
        ]},
        "alerting": {
            "route": {"receiver": "terminal", "group_by": ["alertname", "service"], "group_wait": "1s",
                      "group_interval": "1s", "repeat_interval": "1h", "routes": [
                          {"matchers": ['tier="P0"'], "receiver": "phone"},
                          {"matchers": ['tier="P1"'], "receiver": "wecom"},
                          {"matchers": ['tier="P2"'], "receiver": "digest"}]},
            "receivers": [
                {"name": "phone", "type": "pagerduty", "routing_key": f.pagerduty.routing_key,
                 "url": f.pagerduty.url},
                {"name": "wecom", "type": "wecom", "key": WECOM_KEY, "url": f.wecom.url, "rate_limit": None},
            ],
            "actions": [
                {"name": "scale_out", "type": "kubernetes_scale", "matchers": ['tier="P0"'],
                 "api_server": f.kube.url, "token": f.kube.token, "verify_tls": False},
                {"name": "degrade", "type": "degrade", "matchers": ['alertname="SevereLatency"'],
                 "url": f.degrade.url + "/admin/degrade"},
            ],
        },
    }


@dataclass
class Story:
    """The demo service under load, and the two paths' fakes and servers."""

    service: DemoService
    a: Fakes
    b: Fakes
    embedded: Any
    behind: Any
    prometheus: Any

    def until(self, what: str, check: Callable[[Fakes], bool]) -> None:
        try:
            poll(lambda: check(self.a) and check(self.b), timeout=PHASE_TIMEOUT, what=f"both paths: {what}")
        except AssertionError as exc:
            seen = {name: (sorted(_pages(f)), _degrade_calls(f), f.kube.changes, len(_wecom_texts(f)))
                    for name, f in (("embedded", self.a), ("engines", self.b))}
            raise AssertionError(
                f"{exc}; seen (pages, degrade calls, scale changes, WeCom messages): {seen}; "
                f"embedded alerts {self.embedded.get('/api/v1/alerts')}"
            ) from None


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.fixture
def story(tmp_path: Path, require_tool: Callable[..., str]) -> Iterator[Story]:
    prom_bin, am_bin = require_tool("prometheus"), require_tool("prometheus-alertmanager", "alertmanager")
    with ExitStack() as stack:
        a, b = _fakes(), _fakes()
        stack.callback(a.stop)
        stack.callback(b.stop)
        monitor = Monitor("demo", "ctr-logreg", "v1")
        stack.callback(monitor.close)
        rng = np.random.default_rng(7)
        service = DemoService(train_model(FeatureGenerator(rng)), monitor, rng)
        demo = ServerThread(service.app).start()
        stack.callback(demo.stop)
        exporter_port = free_port()
        (tmp_path / "exporter.yaml").write_text("collect: {interval: 1s}\n")
        stack.enter_context(inferwatch(
            ["exporter", "--port", str(exporter_port), "--config", str(tmp_path / "exporter.yaml")],
            f"http://127.0.0.1:{exporter_port}", tmp_path / "exporter.log", ready_path="/metrics"))
        targets = [
            {"job": "demo", "url": demo.url + "/metrics", "interval": "1s", "timeout": "1s"},
            {"job": "exporter", "url": f"http://127.0.0.1:{exporter_port}/metrics",
             "dimension": "infrastructure", "interval": "1s", "timeout": "1s"},
        ]
        # Path A: the embedded server.
        port_a = free_port()
        cfg_a = _write(tmp_path / "a.yaml", _config(f"127.0.0.1:{port_a}", tmp_path / "a-data", targets, a))
        embedded = stack.enter_context(inferwatch(["serve", "--config", str(cfg_a)],
                                                  f"http://127.0.0.1:{port_a}", tmp_path / "a.log"))
        # Path B: exported files on the real engines.
        port_b, am_port = free_port(), free_port()
        cfg_b = _write(tmp_path / "b.yaml", _config(f"127.0.0.1:{port_b}", tmp_path / "b-data", targets, b))
        out = tmp_path / "export"
        from inferwatch.cli import main

        assert main(["export", "prometheus", "-c", str(cfg_b), "-o", str(out / "prometheus"),
                     "--alertmanager", f"127.0.0.1:{am_port}"]) == 0
        assert main(["export", "alertmanager", "-c", str(cfg_b), "-o", str(out / "alertmanager")]) == 0
        behind = stack.enter_context(inferwatch(
            ["serve", "--config", str(out / "alertmanager" / "inferwatch-behind-alertmanager.yaml")],
            f"http://127.0.0.1:{port_b}", tmp_path / "b.log"))
        stack.enter_context(alertmanager(am_bin, out / "alertmanager" / "alertmanager.yml", tmp_path,
                                         port=am_port))
        prom = stack.enter_context(prometheus(prom_bin, out / "prometheus" / "prometheus.yml", tmp_path))
        load = LoadGenerator(demo.url + "/predict", FeatureGenerator(np.random.default_rng(8)), rate=40,
                             threads=12, timeout_s=5)
        load.start()
        stack.callback(load.stop)
        yield Story(service, a, b, embedded, behind, prom)


def _wecom_texts(f: Fakes) -> list[str]:
    return [r.json()["markdown"]["content"] for r in f.wecom.requests if r.path == "/cgi-bin/webhook/send"]


def _degrade_calls(f: Fakes) -> list[bool]:
    return [bool(json.loads(r.body)["enabled"]) for r in f.degrade.requests if r.path == "/admin/degrade"]


def _pages(f: Fakes) -> set[tuple[str, str, str]]:
    # A resolve event has no severity (inferwatch sends none, Alertmanager repeats the trigger's).
    return {(e.event_action, e.severity if e.event_action == "trigger" else "", e.alertname)
            for e in f.pagerduty.events if e.status == 202}


Record = tuple[str, tuple[tuple[str, str], ...], str, str]


def _records(server: Any) -> set[Record]:
    """(receiver, group labels, tier, status) of every delivered notification group of a server."""
    out = set()
    for r in server.get("/api/v1/notifications"):
        if r["status"] == "sent":
            for g in r["groups"]:
                for a in g["alerts"]:
                    out.add((r["receiver"], tuple(sorted(g["group_labels"].items())),
                             a["labels"].get("tier", ""), a["status"]))
    return out


def test_the_outage_story_notifies_and_acts_the_same_on_both_paths(story: Story) -> None:
    # Latency: P1 SevereLatency -> WeCom group message and the degrade action; then it recovers,
    # which resolves the message and undoes the degrade. (Recovered before the outage: a P1 that
    # resolves while the P0 of its service fires is inhibited at that flush, on both paths, and
    # its resolution goes out with the next resend of the resolved alert, a minute later.)
    story.service.set_faults(Faults(latency_ms=1500.0))
    story.until("SevereLatency on WeCom and degraded",
                lambda f: any("SevereLatency" in t for t in _wecom_texts(f)) and True in _degrade_calls(f))
    story.service.set_faults(Faults())
    story.until("SevereLatency resolved on WeCom and the degrade restored",
                lambda f: len(_wecom_texts(f)) >= 2 and False in _degrade_calls(f))
    # Outage: P0 ServiceUnavailable -> PagerDuty (critical) and one scale-out step; then recovery.
    story.service.set_faults(Faults(unavailable_ratio=0.8))
    story.until("ServiceUnavailable paged and scaled out",
                lambda f: ("trigger", "critical", "ServiceUnavailable") in _pages(f) and bool(f.kube.changes))
    story.service.set_faults(Faults())
    story.until("the page resolved", lambda f: any(p[0] == "resolve" for p in _pages(f)))

    assert _pages(story.a) == _pages(story.b) == {
        ("trigger", "critical", "ServiceUnavailable"), ("resolve", "", "ServiceUnavailable")}
    # One incident per path: the alerts of the outage form one group (alertname, service).
    assert len(story.a.pagerduty.incidents) == len(story.b.pagerduty.incidents) == 1
    assert [(c.deployment, c.before, c.after) for c in story.a.kube.changes] == \
        [(c.deployment, c.before, c.after) for c in story.b.kube.changes] == [("default/demo", 1, 2)]
    assert _degrade_calls(story.a) == _degrade_calls(story.b) == [True, False]
    # The same notifications by receiver, group and tier: WeCom for the P1 (delivered by each
    # inferwatch), the phone for the P0 (embedded: sent; behind Alertmanager: only logged,
    # Alertmanager paged).
    group = (("alertname", "ServiceUnavailable"), ("service", "demo"))
    slow = (("alertname", "SevereLatency"), ("service", "demo"))
    expected = {("phone", group, "P0", "firing"), ("phone", group, "P0", "resolved"),
                ("wecom", slow, "P1", "firing"), ("wecom", slow, "P1", "resolved")}

    def logged(server: Any) -> set[Record]:
        return {r for r in _records(server) if r[0] in ("phone", "wecom")}

    # Sends run on delivery workers: a server records its last notification a moment after the
    # fake has it, so wait (bounded) for both logs to hold the four, then compare them exactly.
    poll(lambda: logged(story.embedded) >= expected and logged(story.behind) >= expected,
         timeout=PHASE_TIMEOUT, what="both servers' notification logs")
    wanted = logged(story.embedded)
    assert wanted == expected
    assert logged(story.behind) == wanted
    assert all("P1" in t for t in _wecom_texts(story.a) + _wecom_texts(story.b))
    # Prometheus scraped both loopback targets with the exported jobs, and every dashboard query
    # runs on it (the service dashboard's with data from the demo service).
    up = {r["metric"]["job"]: r["value"][1] for r in story.prometheus.get("/api/v1/query", query="up")
          ["data"]["result"]}
    assert up == {"demo": "1", "exporter": "1", "inferwatch": "1"}
    for path, panel, target in dashboard_targets():
        answer = story.prometheus.get("/api/v1/query", query=interpolate(target["expr"]))
        assert answer["status"] == "success", (path, panel["title"])
        with_data = ("Requests per second", "P99 latency")
        if path.endswith("inferwatch-service.json") and panel["title"] in with_data:
            assert answer["data"]["result"], (path, panel["title"])
