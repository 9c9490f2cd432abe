"""Prometheus 2.42's HTTP API: Grafana 10's data-source requests replayed, GET and POST, errors as 400."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from inferwatch.config import parse_config
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.server import Server, build_components, create_app
from inferwatch.store import MemoryStore

NOW = 10_000.0
REQS = "inferwatch_requests_total"


@pytest.fixture
def client() -> Iterator[TestClient]:
    clock = SimulatedClock(NOW)
    store = MemoryStore()
    for code in ("200", "500"):
        labels = Labels.of(REQS, service="api", code=code, job="demo", instance="h:1")
        store.append([Sample(labels, float(t), t * (1.0 if code == "200" else 0.1))
                      for t in range(int(NOW) - 3600, int(NOW) + 1, 15)])
    server = Server(build_components(parse_config("storage: {type: memory}"), clock=clock, store=store),
                    clock=clock)
    with TestClient(create_app(server), raise_server_exceptions=False) as c:
        yield c
    server.stop()


FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def test_grafana_10_data_source_sequence(client: TestClient) -> None:
    # The requests Grafana 10's Prometheus data source sends (pkg/tsdb/prometheus, language_provider.ts).
    # 1. "Save & test": an instant query of 1+1 by POST form
    r = client.post("/api/v1/query", data={"query": "1+1", "time": str(NOW)}, headers=FORM)
    assert r.status_code == 200 and r.json()["data"] == {"resultType": "scalar", "result": [10000, "2"]}
    # 2. flavour and version detection
    info = client.get("/api/v1/status/buildinfo").json()["data"]
    assert info["version"].startswith("2.42")
    # 3. label browser: label names, metric names, series of a metric, metadata
    span = {"start": str(NOW - 3600), "end": str(NOW)}
    assert client.get("/api/v1/labels", params=span).json()["data"] == [
        "__name__", "code", "instance", "job", "service"]
    assert client.get("/api/v1/label/__name__/values", params=span).json()["data"] == [REQS]
    series = client.get("/api/v1/series", params={**span, "match[]": f'{REQS}{{code="500"}}'}).json()["data"]
    assert series == [{"__name__": REQS, "code": "500", "instance": "h:1", "job": "demo", "service": "api"}]
    meta = client.get("/api/v1/metadata").json()["data"]
    assert meta[REQS][0]["type"] == "counter"
    # 4. a panel: query_range by POST with $__rate_interval expanded as Go prints durations ("1m0s")
    body = {"query": f"sum by (code) (rate({REQS}[1m0s]))", "start": str(NOW - 300), "end": str(NOW),
            "step": "15"}
    data = client.post("/api/v1/query_range", data=body, headers=FORM).json()["data"]
    assert data["resultType"] == "matrix"
    got = {s["metric"]["code"]: s["values"] for s in data["result"]}
    assert len(got["200"]) == 21 and got["200"][-1] == [10000, "1"] and got["500"][0][1] == "0.1"
    # 5. exemplars for the same panel
    r = client.post("/api/v1/query_exemplars", data={"query": f"rate({REQS}[1m0s])", **span}, headers=FORM)
    assert r.json() == {"status": "success", "data": []}


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_get_and_post_answer_the_same(client: TestClient, method: str) -> None:
    params = {"query": f"topk(1, {REQS})", "time": "1970-01-01T02:46:40Z"}
    if method == "GET":
        r = client.get("/api/v1/query", params=params)
    else:
        r = client.post("/api/v1/query", data=params, headers=FORM)
    (s,) = r.json()["data"]["result"]
    assert s["metric"]["code"] == "200" and s["value"] == [10000, "10000"]


@pytest.mark.parametrize(("path", "params", "status", "error"), [
    # Prometheus's wording and position for a parse error
    ("/api/v1/query", {"query": "sum(x"}, 400, 'invalid parameter "query": 1:6: parse error: unclosed left'),
    ("/api/v1/query", {"query": "1 > 2"}, 400, "comparisons between scalars must use BOOL modifier"),
    ("/api/v1/query", {"query": "x", "time": "yesterday"}, 400,
     'cannot parse "yesterday" to a valid timestamp'),
    ("/api/v1/query_range", {"query": "x", "start": "10", "end": "5", "step": "1"}, 400,
     "end timestamp must not be before start time"),
    ("/api/v1/query_range", {"query": "x", "start": "0", "end": "100000", "step": "1"}, 400,
     "exceeded maximum resolution of 11,000 points"),
    ("/api/v1/query_range", {"query": "x[5m]", "start": "0", "end": "10", "step": "1"}, 400,
     'invalid expression type "range vector" for range query'),
    # an execution error is 422, as Prometheus answers it
    ("/api/v1/query", {"query": f"{REQS} + ignoring(code) {REQS}"}, 422, "many-to-many matching not allowed"),
    ("/api/v1/series", {}, 400, "no match[] parameter provided"),
    ("/api/v1/label/1bad/values", {}, 400, 'invalid label name: "1bad"'),
])
def test_bad_requests_get_prometheus_errors(client: TestClient, path: str, params: dict[str, str],
                                            status: int, error: str) -> None:
    r = client.get(path, params=params)
    assert r.status_code == status, r.text
    body = r.json()
    assert body["status"] == "error" and error in body["error"]


def test_deep_expressions_never_500(client: TestClient) -> None:
    # 5,000 `+` terms evaluate (a loop, not recursion); 5,000 nested parentheses are a parse error
    r = client.post("/api/v1/query", data={"query": " + ".join(["1"] * 5000), "time": "0"}, headers=FORM)
    assert r.status_code == 200 and r.json()["data"]["result"][1] == "5000"
    deep = "(" * 5000 + "1" + ")" * 5000
    r = client.post("/api/v1/query", data={"query": deep}, headers=FORM)
    assert r.status_code == 400 and "parse error" in r.json()["error"]


def test_status_endpoints_have_prometheus_shapes(client: TestClient) -> None:
    flags = client.get("/api/v1/status/flags").json()["data"]
    assert flags["query.lookback-delta"] == "5m" and flags["query.max-samples"] == "50000000"
    rt = client.get("/api/v1/status/runtimeinfo").json()["data"]
    assert rt["startTime"].endswith("Z") and rt["reloadConfigSuccess"] is True
    tsdb = client.get("/api/v1/status/tsdb").json()["data"]
    assert tsdb["headStats"]["numSeries"] == 2
    assert tsdb["seriesCountByMetricName"] == [{"name": REQS, "value": 2}]
    assert "scrape_configs" in client.get("/api/v1/status/config").json()["data"]["yaml"]
    formatted = client.get("/api/v1/format_query", params={"query": "sum(x)by(a)"}).json()["data"]
    assert formatted == "sum by (a) (x)"
    group = client.get("/api/v1/rules").json()["data"]["groups"][0]
    assert group["lastEvaluation"] == "0001-01-01T00:00:00Z" and group["rules"][0]["health"] == "ok"


def test_federate_exposes_the_latest_samples(client: TestClient) -> None:
    r = client.get("/federate", params={"match[]": f'{REQS}{{code="500"}}'})
    assert r.status_code == 200
    lines = r.text.splitlines()
    assert lines[0] == f"# TYPE {REQS} untyped"
    assert lines[1] == f'{REQS}{{code="500",instance="h:1",job="demo",service="api"}} 1000 10000000'
