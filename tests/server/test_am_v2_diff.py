"""Issue 15 #3, differential: the same alerts and silence sent to a real Alertmanager 0.25 and to
``inferwatch serve``; the API v2 answers have the same JSON shapes and the same fingerprints,
statuses (silenced, inhibited by which alert), receivers and groups.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests._require import require_tool

from export._engines import alertmanager, poll, prometheus

from ._proc import serve

AM_BINARY = require_tool("prometheus-alertmanager", "alertmanager")  # the oracle: CI must have it
pytestmark = [pytest.mark.slow]
Clients = tuple[httpx.Client, httpx.Client]

TOKEN = "diff-t0ken"
ROUTING = """\
  route:
    receiver: terminal
    group_by: [alertname]
    group_wait: 30s
    routes:
      - matchers: ['service="embedder"']
        receiver: phone
  inhibit_rules:
    - source_matchers: ['severity="critical"']
      target_matchers: ['severity="warning"']
      equal: [alertname]
"""
AM_CONFIG = "".join(line[2:] + "\n" for line in ROUTING.splitlines()) + \
    "receivers: [{name: terminal}, {name: phone}]\n"
IW_CONFIG = f"storage: {{type: memory}}\nserver: {{api_token: {TOKEN}}}\nalerting:\n{ROUTING}"


def _iso(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


NOW = datetime.now(UTC)
ALERTS = [
    {"labels": {"alertname": "GpuHot", "service": "ranker", "severity": "warning", "job": "dcgm",
                "instance": "h1"}, "annotations": {"summary": "GPU hot"}},
    {"labels": {"alertname": "GpuHot", "service": "ranker", "severity": "warning", "job": "dcgm",
                "instance": "h0", "empty": ""}},  # an empty label is dropped, as Alertmanager drops it
    {"labels": {"alertname": "GpuHot", "service": "embedder", "severity": "critical", "job": "dcgm",
                "instance": "h2"}, "generatorURL": "http://prometheus.test/graph"},
    {"labels": {"alertname": "QueueDeep", "service": "ranker", "severity": "warning"}},
]
for _a in ALERTS:
    _a["startsAt"] = _iso(NOW - timedelta(minutes=1))
SILENCE = {"matchers": [{"name": "alertname", "value": "QueueDeep", "isRegex": False, "isEqual": True}],
           "startsAt": _iso(NOW), "endsAt": _iso(NOW + timedelta(hours=1)), "createdBy": "ops",
           "comment": "queue migration"}


def shape(x: Any) -> Any:
    """Keys and value types, recursively (a list by the shape of its first item)."""
    if isinstance(x, dict):
        return {k: shape(v) for k, v in sorted(x.items())}
    if isinstance(x, list):
        return [shape(x[0])] if x else []
    return type(x).__name__


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    tmp = tmp_path_factory.mktemp("am-diff")
    (tmp / "am.yml").write_text(AM_CONFIG)
    with alertmanager(AM_BINARY, tmp / "am.yml", tmp) as am, serve(IW_CONFIG, tmp) as iw, \
            httpx.Client(base_url=am.url, timeout=10) as a, \
            httpx.Client(base_url=iw.url, timeout=10, headers={"Authorization": f"Bearer {TOKEN}"}) as i:
        for c in (a, i):
            assert c.post("/api/v2/alerts", json=ALERTS).status_code == 200
            assert c.post("/api/v2/silences", json=SILENCE).status_code == 200
        # Alertmanager's inhibitor learns sources asynchronously: wait until it mutes
        poll(lambda: all(x["status"]["state"] == "suppressed" and (x["status"]["inhibitedBy"]
                                                                   or x["status"]["silencedBy"])
                         for x in a.get("/api/v2/alerts").json() if x["labels"]["severity"] == "warning"),
             timeout=30, what="Alertmanager's inhibitions")
        yield a, i
    assert not any("Traceback" in line for line in iw.lines), "".join(iw.lines)


def _fingerprints(c: httpx.Client, **params: Any) -> list[str]:
    r = c.get("/api/v2/alerts", params=params)
    assert r.status_code == 200, r.text
    return [x["fingerprint"] for x in r.json()]


def test_alerts_have_the_same_shape_ids_status_and_receivers(both: Clients) -> None:
    a, i = both
    am, iw = a.get("/api/v2/alerts").json(), i.get("/api/v2/alerts").json()
    assert len(am) == len(iw) == 4
    for x, y in zip(am, iw, strict=True):  # both sorted by fingerprint
        assert shape(x) == shape(y), (x, y)
        for key in ("fingerprint", "labels", "annotations", "receivers", "startsAt"):
            assert x[key] == y[key], key
        assert x["status"]["state"] == y["status"]["state"]
        assert x["status"]["inhibitedBy"] == y["status"]["inhibitedBy"]  # the source's fingerprint
        assert len(x["status"]["silencedBy"]) == len(y["status"]["silencedBy"])  # ids differ
    assert {x["status"]["state"] for x in iw} == {"active", "suppressed"}


@pytest.mark.parametrize("params", [
    {"filter": 'service="ranker"'},
    {"filter": ["alertname=~Gpu.*", "instance!=h1"]},
    {"filter": 'empty=""'},  # an empty value matches where the label is absent
    {"active": "false"},
    {"silenced": "false", "inhibited": "false"},
    {"inhibited": "false"},
    {"receiver": "pho.*"},
    {"receiver": "terminal", "silenced": "false"},
])
def test_filters_select_the_same_alerts(both: Clients, params: dict[str, Any]) -> None:
    a, i = both
    assert _fingerprints(a, **params) == _fingerprints(i, **params)


def test_groups_have_the_same_shape_order_and_members(both: Clients) -> None:
    a, i = both
    for params in ({}, {"receiver": "terminal"}, {"silenced": "false"}):
        am, iw = (c.get("/api/v2/alerts/groups", params=params).json() for c in (a, i))
        summary = [[(g["receiver"]["name"], g["labels"], [x["fingerprint"] for x in g["alerts"]])
                    for g in got] for got in (am, iw)]
        assert summary[0] == summary[1], params
        assert [shape(g) for g in am] == [shape(g) for g in iw]


def test_silences_status_and_receivers_have_the_same_shapes(both: Clients) -> None:
    a, i = both
    (sa,), (si,) = a.get("/api/v2/silences").json(), i.get("/api/v2/silences").json()
    assert shape(sa) == shape(si) and sa["matchers"] == si["matchers"] and si["status"]["state"] == "active"
    for path in (f"/api/v2/silence/{sa['id']}", f"/api/v2/silence/{si['id']}"):
        c = a if sa["id"] in path else i
        assert shape(c.get(path).json()) == shape(si)
    for params in ({"filter": "alertname=QueueDeep"}, {"filter": "alertname=~QueueDeep"}):
        assert len(a.get("/api/v2/silences", params=params).json()) == len(
            i.get("/api/v2/silences", params=params).json())
    status_am, status_iw = a.get("/api/v2/status").json(), i.get("/api/v2/status").json()
    assert shape(status_am) == shape(status_iw)
    assert status_iw["cluster"] == status_am["cluster"] == {"peers": [], "status": "disabled"}
    versions = (s["versionInfo"]["version"].split(".")[:2] for s in (status_iw, status_am))
    assert next(versions) == next(versions)
    assert shape(a.get("/api/v2/receivers").json()) == shape(i.get("/api/v2/receivers").json())


@pytest.mark.parametrize(("method", "path", "body", "params"), [
    ("POST", "/api/v2/alerts", [{"labels": {}}], None),
    ("POST", "/api/v2/alerts", [{"labels": {"alertname": "X"}, "startsAt": _iso(NOW),
                                 "endsAt": _iso(NOW - timedelta(hours=1))}], None),
    ("POST", "/api/v2/silences", {**SILENCE, "endsAt": _iso(NOW - timedelta(hours=1)),
                                  "startsAt": _iso(NOW - timedelta(hours=2))}, None),
    ("POST", "/api/v2/silences", {**SILENCE, "id": "00000000-0000-4000-8000-000000000000"}, None),
    ("GET", "/api/v2/alerts", None, {"receiver": "("}),
    ("GET", "/api/v2/alerts", None, {"filter": "not a matcher"}),
])
def test_errors_have_the_same_status_and_shape(both: Clients, method: str, path: str,
                                               body: Any, params: Any) -> None:
    a, i = both
    ra, ri = (c.request(method, path, json=body, params=params) for c in (a, i))
    assert ra.status_code == ri.status_code, (ra.text, ri.text)
    assert isinstance(ra.json(), str) and isinstance(ri.json(), str)


def test_the_same_alert_resolved_leaves_both(both: Clients) -> None:
    a, i = both
    gone = {**ALERTS[3], "endsAt": _iso(datetime.now(UTC) - timedelta(seconds=1))}
    for c in (a, i):
        assert c.post("/api/v2/alerts", json=[gone]).status_code == 200
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(_fingerprints(a)) != 3:
        a.get("/-/ready")  # Alertmanager applies a post at once; a bounded wait, not a sleep
    assert _fingerprints(a) == _fingerprints(i) and len(_fingerprints(i)) == 3


def test_a_real_prometheus_sends_its_alerts_to_inferwatch_as_to_an_alertmanager(tmp_path: Path) -> None:
    with serve(IW_CONFIG, tmp_path) as iw, httpx.Client(base_url=iw.url, timeout=10) as i:
        host = iw.url.removeprefix("http://")
        (tmp_path / "rules.yml").write_text(
            "groups:\n- name: g\n  interval: 1s\n  rules:\n"
            # pending for 10 s: by then Prometheus has found its Alertmanager (discovery updates
            # come every 5 s; a send before is dropped, and the next comes only after the 1 min
            # resend delay)
            "  - alert: GpuHot\n    expr: vector(1)\n    for: 10s\n"
            "    labels: {service: ranker, severity: warning}\n"
            "    annotations: {summary: from prometheus}\n")
        (tmp_path / "prometheus.yml").write_text(
            f"global: {{evaluation_interval: 1s}}\nrule_files: [{tmp_path / 'rules.yml'}]\n"
            "alerting:\n  alertmanagers:\n  - api_version: v2\n"
            f"    authorization: {{credentials: {TOKEN}}}\n"
            f"    static_configs: [{{targets: ['{host}']}}]\n")
        with prometheus(require_tool("prometheus"), tmp_path / "prometheus.yml", tmp_path):
            (alert,) = poll(lambda: i.get("/api/v2/alerts").json(), timeout=60, what="Prometheus's alert")
    labels = {"alertname": "GpuHot", "service": "ranker", "severity": "warning"}
    assert alert["labels"] == labels and alert["annotations"] == {"summary": "from prometheus"}
    assert alert["generatorURL"].startswith("http") and alert["status"]["state"] == "active"
    assert not any("Traceback" in line for line in iw.lines), "".join(iw.lines)
