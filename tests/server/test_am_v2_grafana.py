"""Issue 15, Grafana: the requests Grafana 10's Prometheus and Alertmanager data sources send,
replayed against a real ``inferwatch serve`` that scrapes a loopback target.

Read from Grafana's source: the Prometheus health check (``pkg/tsdb/prometheus``: an instant
``1+1`` by POST), the version probe (``status/buildinfo``), the label browser
(``language_provider.ts``: labels and ``__name__`` values with start and end in seconds, series,
metadata), a panel's ``query_range`` by POST with the step in seconds and ``$__rate_interval``
already expanded by ``models/query.go`` (``max(interval + scrape, 4 * scrape)`` printed as Go
prints durations); the Alertmanager data source's test (``DataSource.ts``: buildinfo,
``/alertmanager/api/v2/status`` must not answer 200 for the "Prometheus" implementation,
``/api/v2/status`` must) and what its alerting pages then read (alert groups, silences, alerts).
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from ._proc import serve, wait_scraped
from .conftest import FakeTarget

pytestmark = pytest.mark.slow

TOKEN = "graf-t0ken"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
# a catalog metric: /api/v1/metadata answers from inferwatch's catalog
BODY = '# HELP inferwatch_requests_total Requests served.\n# TYPE inferwatch_requests_total counter\n' \
       'inferwatch_requests_total{code="200"} %d\ninferwatch_requests_total{code="500"} %d\n'


def _config(target: FakeTarget) -> str:
    return (f"storage: {{type: memory}}\nserver: {{api_token: {TOKEN}}}\n"
            f"scrape: {{targets: [{{job: gpu, url: '{target.url}', interval: 1s}}]}}\n"
            "alerting: {route: {receiver: terminal, group_by: [alertname]}, inhibit_rules: []}\n")


def _scrapes(c: httpx.Client, target: FakeTarget, want: int) -> None:
    # bump the counter until the server holds ``want`` samples (a bounded poll: a real process), so a
    # rate over the panel's window, whose end Grafana aligns down to the step, has two to work on
    deadline, n = time.monotonic() + 90, 0
    while time.monotonic() < deadline:
        n += 1
        target.body = BODY % (100 * n, n)
        query = "count_over_time(inferwatch_requests_total{code='200'}[1m])"
        r = c.get("/api/v1/query", params={"query": query})
        result = r.json()["data"]["result"]
        if result and float(result[0]["value"][1]) >= want:
            return
    raise AssertionError(f"the target was not scraped {want} times in 90 s")


def test_grafana_10_prometheus_and_alertmanager_data_sources(target: FakeTarget, tmp_path: Path) -> None:
    target.body = BODY % (0, 0)
    with serve(_config(target), tmp_path) as s, httpx.Client(base_url=s.url, timeout=10) as c:
        wait_scraped(c)
        _scrapes(c, target, 6)
        now = int(time.time())
        # -- Prometheus data source -------------------------------------------------------
        # 1. "Save & test": POST /api/v1/query with 1+1 at now
        r = c.post("/api/v1/query", data={"query": "1+1", "time": str(now)}, headers=FORM)
        assert r.status_code == 200 and r.json()["data"] == {"resultType": "scalar", "result": [now, "2"]}
        # 2. version probe: a Prometheus version Grafana takes as compatible
        info = c.get("/api/v1/status/buildinfo").json()["data"]
        assert int(info["version"].split(".")[0]) >= 2 and {"revision", "goVersion"} <= set(info)
        # 3. label browser: names and metric names over the picker's range, a metric's series, metadata
        span = {"start": str(now - 3600), "end": str(now)}
        labels = c.get("/api/v1/labels", params=span).json()["data"]
        assert {"__name__", "code", "instance", "job"} <= set(labels)
        names = c.get("/api/v1/label/__name__/values", params=span).json()["data"]
        assert "inferwatch_requests_total" in names and "up" in names
        match = {**span, "match[]": "inferwatch_requests_total"}
        series = c.get("/api/v1/series", params=match).json()["data"]
        assert sorted(x["code"] for x in series) == ["200", "500"]
        meta = c.get("/api/v1/metadata", params={"metric": "inferwatch_requests_total"}).json()["data"]
        assert meta["inferwatch_requests_total"][0]["type"] == "counter"
        # 4. a panel: query_range by POST, start/end aligned down to the step. The data source's
        # "Scrape interval" is 2s (slack over the target's 1 s on a loaded machine), so a 5 min
        # range gets a 2 s step and $__rate_interval = max(2s + 2s, 4 * 2s) = "8s".
        step = 2
        body = {"query": "sum by (code) (rate(inferwatch_requests_total[8s]))",
                "start": str((now - 300) // step * step), "end": str(now // step * step), "step": str(step)}
        data = c.post("/api/v1/query_range", data=body, headers=FORM).json()["data"]
        assert data["resultType"] == "matrix"
        got = {x["metric"]["code"]: [float(v) for _, v in x["values"]] for x in data["result"]}
        assert set(got) == {"200", "500"} and max(got["200"]) > 0 and max(got["500"]) > 0

        # -- Alertmanager data source (implementation "Prometheus") ----------------------
        assert c.get("/api/v1/status/buildinfo").status_code == 200  # feature discovery: no lazy init
        assert c.get("/alertmanager/api/v2/status").status_code != 200  # not Mimir/Cortex
        status = c.get("/api/v2/status").json()
        assert status["versionInfo"]["version"].startswith("0.25")
        assert "route:" in status["config"]["original"]
        alert = {"labels": {"alertname": "GpuHot", "service": "ranker"}, "annotations": {"summary": "hot"}}
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert c.post("/api/v2/alerts", json=[alert], headers=auth).status_code == 200
        (group,) = c.get("/api/v2/alerts/groups").json()
        assert group["labels"] == {"alertname": "GpuHot"} and group["receiver"] == {"name": "terminal"}
        assert c.get("/api/v2/silences").json() == []
        listed = c.get("/api/v2/alerts", params={"filter": 'alertname="GpuHot"', "silenced": "false",
                                                 "inhibited": "false", "active": "true"}).json()
        assert [a["labels"]["service"] for a in listed] == ["ranker"]
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
