"""Issue 36 #1, SDK and server together: labels POSTed by another process reach the Monitor that
made the predictions through ``Monitor.poll_labels``, on the simulated clock and through a real
``inferwatch serve``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from sklearn import metrics as skm
from starlette.testclient import TestClient
from tests.server._proc import serve, wait_scraped

from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock
from inferwatch.quality import RealizedPerformance
from inferwatch.sdk import Monitor
from inferwatch.server import ServerParts, build

T0 = 1_700_000_000.0
DAY = 86400.0
TOKEN = "t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
LABELS = {"service": "svc", "model": "ctr"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[TestClient, ServerParts, SimulatedClock]]:
    clock = SimulatedClock(T0)
    cfg = parse_config(f"server: {{data_dir: '{tmp_path}/data', api_token: {TOKEN}}}")
    parts = build(cfg, clock=clock, announce=lambda _: None)
    with TestClient(parts.app(), raise_server_exceptions=False) as client:
        yield client, parts, clock
    parts.stop()


def _fetch(client: TestClient) -> Callable[[str, Mapping[str, str], float], bytes]:
    def fetch(url: str, headers: Mapping[str, str], timeout: float) -> bytes:
        r = client.get(url, headers=dict(headers))
        if r.status_code != 200:
            raise OSError(f"{r.status_code}: {r.text}")
        return r.content
    return fetch


def _post(client: TestClient, ids: range, y: np.ndarray, model: str = "ctr") -> None:
    body = {"outcomes": [{"request_id": f"r{i}", "label": int(y[i]), "model": model} for i in ids]}
    r = client.post("/api/v1/outcomes", json=body, headers=AUTH)
    assert r.status_code == 200, r.text


def _value(mon: Monitor, name: str, **labels: str) -> float | None:
    return mon.get_sample_value(name, {**LABELS, **labels})


def test_labels_days_late_join_and_labels_past_max_age_count_as_unmatched(
        server: tuple[TestClient, ServerParts, SimulatedClock]) -> None:
    client, _, clock = server
    rng = np.random.default_rng(7)
    p = np.round(rng.uniform(size=200), 3)
    y = (rng.random(200) < p).astype(int)
    agg = RealizedPerformance(service="svc", model="ctr", window=500, max_age=7 * DAY)
    with Monitor("svc", "ctr", clock=clock, aggregators=[agg]) as mon:
        for i in range(200):  # predictions at T0
            mon.observe_prediction({}, confidence=float(p[i]), request_id=f"r{i}")
        assert mon.flush(60.0)  # stored at T0 (the recorder stamps them when it takes them)
        poller = mon.poll_labels("http://testserver", model="ctr", start=False, fetch=_fetch(client))
        clock.advance(2 * DAY)  # the first half's labels come two days later, from another process
        _post(client, range(100), y)
        _post(client, range(100), 1 - y, model="other")  # another model's labels are not ours
        assert poller.poll_once() == 100 and mon.flush(60.0)
        pred = (p[:100] >= 0.5).astype(int)
        assert _value(mon, "inferwatch_model_realized", metric="accuracy") == pytest.approx(
            skm.accuracy_score(y[:100], pred), abs=1e-12)
        assert _value(mon, "inferwatch_model_realized", metric="roc_auc") == pytest.approx(
            skm.roc_auc_score(y[:100], p[:100]), abs=1e-12)
        assert _value(mon, "inferwatch_model_unlabelled_ratio") == pytest.approx(100 / 200)
        clock.advance(6 * DAY)  # the rest arrive eight days late: past max_age, their predictions are gone
        _post(client, range(100, 200), y)
        assert poller.poll_once() == 100 and mon.flush(60.0)
        assert _value(mon, "inferwatch_model_labels_total", outcome="joined") == 100
        assert _value(mon, "inferwatch_model_labels_total", outcome="unmatched") == 100
        assert _value(mon, "inferwatch_model_labels_total", outcome="expired") == 100
        assert _value(mon, "inferwatch_model_labelled_window_samples") == 100  # the first half only
        assert poller.counts == {"fed": 200, "other_model": 0, "failed_polls": 0, "resets": 0}


def test_labels_no_poller_fetched_within_the_retention_are_dropped_and_counted(
        server: tuple[TestClient, ServerParts, SimulatedClock]) -> None:
    client, parts, clock = server
    agg = RealizedPerformance(service="svc", model="ctr", max_age=30 * DAY)
    with Monitor("svc", "ctr", clock=clock, aggregators=[agg]) as mon:
        mon.observe_prediction({}, confidence=0.8, request_id="r0")
        assert mon.flush(60.0)
        poller = mon.poll_labels("http://testserver", start=False, fetch=_fetch(client))
        _post(client, range(1), np.array([1]))
        clock.advance(8 * DAY)  # the poller was down for longer than server.outcomes.retention (7 days)
        assert poller.poll_once() == 0 and poller.cursor == 1  # the cursor moves past what is gone
        assert parts.outcomes is not None and parts.outcomes.dropped["age"] == 1
        q = client.get("/api/v1/query", params={"query": 'inferwatch_outcomes_dropped_total{reason="age"}',
                                                "time": clock.now()}).json()
        assert q["data"]["result"][0]["value"][1] == "1"
        assert mon.flush(60.0) and _value(mon, "inferwatch_model_labels_total", outcome="joined") == 0


def _query(client: httpx.Client, expr: str) -> list[dict[str, Any]]:
    return list(client.get("/api/v1/query", params={"query": expr}).json()["data"]["result"])


def _realized(client: httpx.Client, labelled: int, within_s: float = 60.0) -> dict[str, float]:
    """The realized metrics of model ctr once a scrape saw ``labelled`` labelled predictions (bounded by time:
    a scrape during the poller's feeding would see part of them)."""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        window = _query(client, 'inferwatch_model_labelled_window_samples{model="ctr"}')
        if window and float(window[0]["value"][1]) == labelled:
            return {s["metric"]["metric"]: float(s["value"][1])
                    for s in _query(client, 'inferwatch_model_realized{model="ctr"}')}
        client.get("/-/healthy")  # a round trip: the scrape thread runs meanwhile
    raise AssertionError(f"no scrape saw {labelled} labelled predictions within {within_s:g} s")


@pytest.mark.slow
def test_serve_takes_outcomes_and_serves_the_realized_accuracy(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    p = np.round(rng.uniform(size=300), 3)
    y = (rng.random(300) < p).astype(int)
    agg = RealizedPerformance(service="svc", model="ctr", window=1000)
    with Monitor("svc", "ctr", aggregators=[agg]) as mon:
        for i in range(300):
            mon.observe_prediction({}, confidence=float(p[i]), request_id=f"r{i}")
        target = mon.serve_metrics()
        try:
            config = (f"server: {{data_dir: '{tmp_path / 'data'}', api_token: {TOKEN}}}\n"
                      f"scrape: {{targets: [{{job: svc, url: '{target.url}', interval: 1s}}]}}\n")
            with serve(config, tmp_path) as served, httpx.Client(base_url=served.url, timeout=10) as client:
                wait_scraped(client)
                assert _query(client, 'inferwatch_model_realized{model="ctr"}') == []  # no label yet
                # another process (a labelling job) posts the labels, in two requests
                for part in (range(0, 150), range(150, 300)):
                    body = {"outcomes": [{"request_id": f"r{i}", "label": int(y[i]), "model": "ctr"}
                                         for i in part]}
                    r = client.post("/api/v1/outcomes", json=body, headers=AUTH)
                    assert r.status_code == 200, r.text
                poller = mon.poll_labels(served.url, model="ctr", start=False)
                assert poller.poll_once() == 300 and mon.flush(60.0)
                got = _realized(client, labelled=300)
                want = skm.accuracy_score(y, (p >= 0.5).astype(int))
                assert got["accuracy"] == pytest.approx(want, abs=1e-9)
                assert got["roc_auc"] == pytest.approx(skm.roc_auc_score(y, p), abs=1e-9)
                q = client.get("/api/v1/query", params={"query": "inferwatch_outcomes_received_total"}).json()
                assert q["data"]["result"][0]["value"][1] == "300"
        finally:
            target.close()
    assert not any("Traceback" in line for line in served.lines), "".join(served.lines)
