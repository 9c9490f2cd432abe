"""The HTTP API through Starlette's TestClient: shapes, bad input as 400, never 500."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from inferwatch.config import parse_config
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.server import Server, build_components, create_app
from inferwatch.store import MemoryStore

UP_A = Labels.of("up", job="a", instance="h:1")
UP_B = Labels.of("up", job="b", instance="h:2")


@pytest.fixture
def client() -> Iterator[tuple[TestClient, Server]]:
    clock = SimulatedClock(1000.0)
    store = MemoryStore()
    store.append([Sample(UP_A, t, 1.0) for t in (940.0, 970.0, 1000.0)])
    store.append([Sample(UP_B, t, 0.0) for t in (940.0, 970.0, 1000.0)])
    cfg = parse_config("storage: {type: memory}")
    server = Server(build_components(cfg, clock=clock, store=store), clock=clock)
    with TestClient(create_app(server), raise_server_exceptions=False) as c:
        yield c, server
    server.stop()


def test_health_and_readiness(client: tuple[TestClient, Server]) -> None:
    c, server = client
    assert c.get("/-/healthy").status_code == 200
    assert c.get("/-/ready").status_code == 503  # not started
    server.ready.set()
    assert c.get("/-/ready").status_code == 200


def test_instant_query_selector(client: tuple[TestClient, Server]) -> None:
    c, _ = client
    r = c.get("/api/v1/query", params={"query": 'up{job="a"}', "time": "1000"})
    assert r.status_code == 200
    assert r.json() == {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"__name__": "up", "instance": "h:1", "job": "a"}, "value": [1000.0, "1"]}
    ]}}


def test_instant_query_uses_the_five_minute_lookback(client: tuple[TestClient, Server]) -> None:
    c, _ = client
    # Prometheus: the newest sample within 5m before t; none after 1000 + 300.
    assert len(c.get("/api/v1/query", params={"query": "up", "time": "1299"}).json()["data"]["result"]) == 2
    assert c.get("/api/v1/query", params={"query": "up", "time": "1301"}).json()["data"]["result"] == []


def test_query_expression_and_scalar(client: tuple[TestClient, Server]) -> None:
    c, _ = client
    r = c.get("/api/v1/query", params={"query": "up == 0", "time": "1000"}).json()
    assert [x["metric"]["job"] for x in r["data"]["result"]] == ["b"]


def test_range_query_matrix(client: tuple[TestClient, Server]) -> None:
    c, _ = client
    params = {"query": 'up{job="a"}', "start": "940", "end": "1000", "step": "30s"}
    r = c.get("/api/v1/query_range", params=params)
    assert r.status_code == 200
    (series,) = r.json()["data"]["result"]
    assert series["values"] == [[940.0, "1"], [970.0, "1"], [1000.0, "1"]]


# (rule, endpoint, params) — every one answers 400 bad_data, never 500
BAD = [
    ("unparsable query", "/api/v1/query", {"query": "up{"}),
    ("missing query", "/api/v1/query", {}),
    ("non-numeric time", "/api/v1/query", {"query": "up", "time": "soon"}),
    ("non-finite time", "/api/v1/query", {"query": "up", "time": "inf"}),
    ("end before start", "/api/v1/query_range", {"query": "up", "start": "10", "end": "5", "step": "1"}),
    ("zero step", "/api/v1/query_range", {"query": "up", "start": "0", "end": "5", "step": "0"}),
    ("too many points", "/api/v1/query_range", {"query": "up", "start": "0", "end": "1e9", "step": "1"}),
    ("series without match[]", "/api/v1/series", {}),
    ("series with a bad selector", "/api/v1/series", {"match[]": "{job=~\"(\"}"}),
    ("selector matching everything", "/api/v1/series", {"match[]": '{job=""}'}),
]


@pytest.mark.parametrize(("rule", "path", "params"), BAD, ids=[b[0] for b in BAD])
def test_bad_requests_are_400_bad_data(
    client: tuple[TestClient, Server], rule: str, path: str, params: dict
) -> None:
    c, _ = client
    r = c.get(path, params=params)
    assert r.status_code == 400, rule
    body = r.json()
    assert body["status"] == "error" and body["errorType"] == "bad_data" and body["error"]


def test_unknown_endpoint_is_json_404(client: tuple[TestClient, Server]) -> None:
    c, _ = client
    r = c.get("/api/v1/nope")
    assert r.status_code == 404 and r.json()["status"] == "error"


def test_series_and_label_values(client: tuple[TestClient, Server]) -> None:
    c, _ = client
    r = c.get("/api/v1/series", params={"match[]": 'up{job="b"}'}).json()
    assert r["data"] == [{"__name__": "up", "instance": "h:2", "job": "b"}]
    assert c.get("/api/v1/label/job/values").json()["data"] == ["a", "b"]


def test_rules_and_alerts_after_an_evaluation(client: tuple[TestClient, Server]) -> None:
    c, server = client
    server.tick(1000.0)  # TargetDown (up == 0 for 1m) goes pending for job b
    rules = c.get("/api/v1/rules").json()["data"]["groups"][0]["rules"]
    target_down = next(r for r in rules if r["name"] == "TargetDown")
    assert target_down["state"] == "pending" and target_down["query"] == "up == 0"
    alerts = c.get("/api/v1/alerts").json()["data"]["alerts"]
    assert [(a["labels"]["alertname"], a["labels"]["job"], a["state"], a["activeAt"]) for a in alerts] == [
        ("TargetDown", "b", "pending", "1970-01-01T00:16:40Z")
    ]


def test_targets_lists_configured_targets() -> None:
    clock = SimulatedClock(0.0)
    cfg = parse_config("storage: {type: memory}\nscrape: {targets: [{job: x, url: 'http://127.0.0.1:1/metrics'}]}")
    server = Server(build_components(cfg, clock=clock), clock=clock)
    with TestClient(create_app(server)) as c:
        (t,) = c.get("/api/v1/targets").json()["data"]["activeTargets"]
    server.stop()
    assert t["labels"] == {"instance": "127.0.0.1:1", "job": "x"} and t["health"] == "unknown"
    assert t["scrapeInterval"] == "1m" and t["scrapePool"] == "x"
    assert t["lastScrape"] == "0001-01-01T00:00:00Z"


def test_server_serves_its_own_metrics(client: tuple[TestClient, Server]) -> None:
    # A scrape of the server itself must succeed (up == 1), as with Prometheus.
    from prometheus_client.parser import text_string_to_metric_families

    c, _ = client
    r = c.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    names = {f.name for f in text_string_to_metric_families(r.text)}
    assert "python_info" in names
