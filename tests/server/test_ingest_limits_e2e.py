"""Limits on every way in, against a real ``inferwatch serve`` (issue 31's findings 2, 3, 5, 6).

Each way in (remote write, OTLP metrics, edge ingest, scrape, the Alertmanager webhook and
alerts API) refuses a request over a label, length, sample or series limit whole, naming the
limit, and stores nothing of it; a scrape over one fails with ``up`` 0 and the reason in
``/api/v1/targets``; ``inferwatch_discarded_samples_total{reason}`` counts the samples.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from inferwatch.edge import REMOTE_WRITE_HEADERS, encode_write_request
from inferwatch.model import Labels, Sample
from inferwatch.sdk import read_sample

from ._proc import Served, serve, wait_scraped
from .conftest import FakeTarget

pytestmark = pytest.mark.slow

TOKEN = "l1m1ts-t0ken"
DEVICE_TOKEN = "cam-1-upload-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
LIMITS = "{max_series: 400, max_series_per_metric: 100, sample_limit: 1000}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("limits")
    cfg = (f"server: {{data_dir: '{tmp}/data', api_token: {TOKEN}, limits: {LIMITS}}}\n"
           f"edge: {{devices: {{cam-1: {DEVICE_TOKEN}}}}}\n")
    with serve(cfg, tmp) as s:
        yield s
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)


def push(url: str, samples: list[Sample]) -> httpx.Response:
    return httpx.post(f"{url}/api/v1/write", content=encode_write_request(samples), timeout=60,
                      headers={**REMOTE_WRITE_HEADERS, **AUTH})


def series_of(url: str, metric: str) -> list[dict[str, str]]:
    r = httpx.get(f"{url}/api/v1/series", params={"match[]": metric}, timeout=30)
    assert r.status_code == 200
    return list(r.json()["data"])


def discarded(url: str, reason: str) -> float:
    text = httpx.get(f"{url}/metrics", timeout=30).text
    return read_sample(text, "inferwatch_discarded_samples_total", {"reason": reason}) or 0.0


def refused(r: httpx.Response, limit: str) -> str:
    assert r.status_code == 400, (r.status_code, r.text[:300])
    error = str(r.json()["error"])
    assert limit in error, error
    return error


def test_remote_write_refuses_each_limit_whole_and_counts_it(server: Served) -> None:
    now = time.time()
    wide = Labels({"__name__": "wide", **{f"l{i}": "x" for i in range(40)}})
    refused(push(server.url, [Sample(wide, now, 1.0)]),
            "label_limit exceeded (metric: wide, number of labels: 41")
    long_value = Labels.of("long_value", a="v" * 10_000)
    refused(push(server.url, [Sample(long_value, now, 1.0)]), "label_value_length_limit exceeded")
    long_name = Labels({"__name__": "long_name", "n" * 2000: "x"})
    refused(push(server.url, [Sample(long_name, now, 1.0)]), "label_name_length_limit exceeded")
    many = [Sample(Labels.of("many", i=str(i)), now, 1.0) for i in range(1001)]
    refused(push(server.url, many), "sample_limit exceeded: 1001 samples")
    per_metric = [Sample(Labels.of("card_boom", id=str(i)), now, 1.0) for i in range(101)]
    refused(push(server.url, per_metric), "max_series_per_metric limit exceeded (metric: card_boom")
    for metric in ("wide", "long_value", "long_name", "many", "card_boom"):
        assert series_of(server.url, metric) == []  # nothing of a refused request is stored
    ok = [Sample(Labels.of("card_boom", id=str(i)), now, 1.0) for i in range(100)]
    assert push(server.url, ok).status_code == 204
    assert len(series_of(server.url, "card_boom")) == 100
    assert discarded(server.url, "label_limit") == 1
    assert discarded(server.url, "sample_limit") == 1001
    assert discarded(server.url, "max_series_per_metric") == 101


def test_the_global_series_limit_and_its_gauges(server: Served) -> None:
    now = time.time()
    text = httpx.get(f"{server.url}/metrics", timeout=30).text
    held = read_sample(text, "inferwatch_storage_series", {}) or 0
    assert read_sample(text, "inferwatch_storage_series_limit", {}) == 400
    room = int(400 - held)
    batches = [[Sample(Labels.of(f"fill_{b}", i=str(i)), now, 1.0) for i in range(90)]
               for b in range(room // 90 + 1)]
    codes = [push(server.url, batch).status_code for batch in batches]
    assert codes[-1] == 400 and all(c == 204 for c in codes[:-1])
    refused(push(server.url, batches[-1]), "max_series limit exceeded")
    assert series_of(server.url, f"fill_{len(batches) - 1}") == []


def otlp_gauge(attributes: int) -> dict[str, Any]:
    attrs = [{"key": f"a{i}", "value": {"stringValue": "x"}} for i in range(attributes)]
    point = {"timeUnixNano": str(time.time_ns()), "asDouble": 1.0, "attributes": attrs}
    return {"resourceMetrics": [{"resource": {"attributes": []}, "scopeMetrics": [{"metrics": [
        {"name": "otlp_wide", "gauge": {"dataPoints": [point]}}]}]}]}


def test_otlp_metrics_refuses_a_point_with_too_many_attributes(server: Served) -> None:
    r = httpx.post(f"{server.url}/v1/metrics", json=otlp_gauge(200), headers=AUTH, timeout=60)
    refused(r, "label_limit exceeded")
    assert series_of(server.url, "otlp_wide") == []
    ok = httpx.post(f"{server.url}/v1/metrics", json=otlp_gauge(3), headers=AUTH, timeout=60)
    assert ok.status_code == 200 and len(series_of(server.url, "otlp_wide")) == 1
    truncated = gzip.compress(json.dumps(otlp_gauge(3)).encode())[:-12]  # said "invalid JSON" before
    for encoding in ("gzip", ""):
        r = httpx.post(f"{server.url}/v1/metrics", content=truncated, timeout=60, headers={
            **AUTH, "Content-Type": "application/json", "Content-Encoding": encoding})
        assert r.status_code == 400 and "invalid gzip body" in r.json()["error"], r.text


def edge_body(series: list[dict[str, Any]], batch: str, pad: int = 0, level: int = 6) -> bytes:
    doc = {"version": 1, "device": "cam-1", "batch": batch, "heartbeat_s": 300.0,
           "agent": {"backlog": 0, "dropped": {}}, "series": series}
    return gzip.compress((json.dumps(doc) + " " * pad).encode(), compresslevel=level)


def edge_post(url: str, body: bytes) -> httpx.Response:
    return httpx.post(f"{url}/api/v1/edge/ingest", content=body, timeout=60, headers={
        "Authorization": f"Bearer {DEVICE_TOKEN}", "Content-Encoding": "gzip",
        "Content-Type": "application/json"})


def test_edge_ingest_refuses_the_future_and_the_past_and_takes_a_batch_just_under_its_body_limit(
    server: Served,
) -> None:
    now_ms = int(time.time() * 1000)
    ahead = [{"labels": {"__name__": "edge_temp", "sensor": "a"}, "t": [now_ms + 3_600_000], "v": [41.5]}]
    error = refused(edge_post(server.url, edge_body(ahead, "s:1-1")), "more than 600s ahead")
    assert 'edge_temp{device="cam-1", sensor="a"}' in error or "edge_temp" in error  # names the sample
    past = [{"labels": {"__name__": "edge_temp", "sensor": "a"}, "t": [990_000], "v": [41.5]}]
    refused(edge_post(server.url, edge_body(past, "s:2-2")), "before 2000-01-01")
    wide = [{"labels": {"__name__": "edge_wide", **{f"l{i}": "x" for i in range(40)}}, "t": [now_ms],
             "v": [1.0]}]
    refused(edge_post(server.url, edge_body(wide, "s:3-3")), "label_limit exceeded")
    assert series_of(server.url, "edge_temp") == [] and series_of(server.url, "edge_wide") == []
    # a batch just under edge.max_body_bytes (4 MiB by default): taken (the guard used to cut at 1 MiB)
    limit = 4 << 20
    now_series = [{"labels": {"__name__": "edge_temp", "sensor": "a"}, "t": [now_ms - 60_000, 15_000],
                   "v": [41.5, 42.0]}]
    bare = len(edge_body(now_series, "s:4-4", level=0))
    body = edge_body(now_series, "s:4-4", pad=limit - bare - 2048, level=0)
    assert limit - 4096 < len(body) <= limit
    r = edge_post(server.url, body)
    assert r.status_code == 200, r.text[:300]
    assert len(series_of(server.url, "edge_temp")) == 1
    over = edge_body(now_series, "s:5-5", pad=limit, level=0)
    assert edge_post(server.url, over).status_code == 413


def test_alerts_over_the_label_limits_are_refused_on_both_alert_apis(server: Served) -> None:
    labels = {"alertname": "Wide", **{f"l{i}": "x" for i in range(40)}}
    r = httpx.post(f"{server.url}/api/v2/alerts", json=[{"labels": labels}], headers=AUTH, timeout=30)
    assert r.status_code == 400 and "label_limit exceeded" in r.text
    webhook = {"version": "4", "status": "firing", "alerts": [
        {"status": "firing", "labels": {"alertname": "Long", "a": "v" * 5000}, "annotations": {}}]}
    r = httpx.post(f"{server.url}/api/v1/alertmanager", json=webhook, headers=AUTH, timeout=30)
    refused(r, "label_value_length_limit exceeded")
    names = {a["labels"]["alertname"] for a in httpx.get(f"{server.url}/api/v2/alerts", timeout=30).json()}
    assert not names & {"Wide", "Long"}


def test_the_million_label_request_is_refused_cheaply(server: Served) -> None:
    # The issue: one series of 1,000,000 labels (14 MB) was stored; RSS 87 MB -> 1.1 GB, still there
    # after a restart, /api/v1/labels answered 9.9 MB.
    proc = psutil.Process(server.proc.pid)
    before = proc.memory_info().rss
    huge = Labels({"__name__": "huge", **{f"l{i:07d}": "v" for i in range(1_000_000)}})
    body = encode_write_request([Sample(huge, time.time(), 1.0)])
    t0 = time.perf_counter()
    r = httpx.post(f"{server.url}/api/v1/write", content=body, timeout=120,
                   headers={**REMOTE_WRITE_HEADERS, **AUTH})
    took = time.perf_counter() - t0
    refused(r, "label_limit exceeded (number of labels: 1000001, limit: 30")
    after = proc.memory_info().rss
    labels = httpx.get(f"{server.url}/api/v1/labels", timeout=30)
    assert len(labels.content) < 10_000 and "l0000001" not in labels.text
    print(f"1,000,000-label request ({len(body) / 1e6:.1f} MB): refused in {took:.2f} s; "
          f"server RSS {before / 1e6:.0f} MB -> {after / 1e6:.0f} MB; /api/v1/labels {len(labels.content)} B")
    assert series_of(server.url, "huge") == []


def test_a_scrape_over_a_limit_fails_as_prometheus_s_does(target: FakeTarget, tmp_path: Path) -> None:
    wide = ",".join(f'l{i}="x"' for i in range(40))
    target.body = f"wide_metric{{{wide}}} 1\nfine 1\n"
    cfg = (f"storage: {{type: memory}}\nserver: {{api_token: {TOKEN}}}\n"
           f"scrape: {{targets: [{{job: wide, url: '{target.url}', interval: 1s}}]}}\n")
    with serve(cfg, tmp_path) as s, httpx.Client(base_url=s.url, timeout=30) as c:
        (active,) = wait_scraped(c, health="down")
        want = "label_limit exceeded (metric: wide_metric, number of labels: 43, limit: 30)"
        assert want in active["lastError"]
        up = c.get("/api/v1/query", params={"query": "up"}).json()["data"]["result"]
        assert [r["value"][1] for r in up] == ["0"]
        assert c.get("/api/v1/query", params={"query": "fine"}).json()["data"]["result"] == []
        assert discarded(s.url, "label_limit") >= 2  # the scrape's samples, refused whole


def test_query_deadlines_hold_whatever_the_shape(tmp_path: Path) -> None:
    # The issue: `card_boom + on(id) group_left card_boom` with timeout=100ms answered 200 after 9.9 s;
    # a range query with timeout=1s answered 503 after 5.6 s.
    with serve(f"storage: {{type: memory}}\nserver: {{api_token: {TOKEN}}}\n", tmp_path) as s:
        now = time.time()
        for b in range(20):  # 100,000 series
            batch = [Sample(Labels.of("card_boom", id=str(b * 5000 + i)), now - 30, 1.0) for i in range(5000)]
            assert push(s.url, batch).status_code == 204
        cases = [("/api/v1/query", {"query": "card_boom + on(id) group_left card_boom", "timeout": "100ms"}),
                 ("/api/v1/query", {"query": "sum by (id) (card_boom + on(id) group_left card_boom) "
                                             "* on(id) group_left card_boom", "timeout": "1s"}),
                 ("/api/v1/query_range", {"query": "card_boom + on(id) group_left card_boom", "timeout": "1s",
                                          "start": str(now - 3600), "end": str(now), "step": "15"})]
        proc = psutil.Process(s.proc.pid)
        for path, params in cases:
            cpu0, t0 = sum(proc.cpu_times()[:2]), time.monotonic()
            r = httpx.get(f"{s.url}{path}", params=params, timeout=60)
            took, cpu = time.monotonic() - t0, sum(proc.cpu_times()[:2]) - cpu0
            limit = float(params["timeout"].removesuffix("ms")) / 1000 if params["timeout"].endswith("ms") \
                else float(params["timeout"].removesuffix("s"))
            print(f"{path} timeout={params['timeout']}: {r.status_code} after {took:.3f} s, "
                  f"server CPU {cpu:.3f} s")
            assert r.status_code == 503 and r.json()["errorType"] == "timeout", r.text[:200]
            # The work done past the deadline, in the server's CPU time (a loaded runner's wall clock
            # measures the other processes too): 0.14-0.19 s at 100 ms, 1.05-1.17 s at 1 s, where the
            # old engine worked on for 9.9 s and 5.6 s.
            assert cpu < 1.5 * limit + 0.35, f"{path} {params['timeout']}: {cpu:.3f} s of server CPU"
            # The answer's wall-clock time: 3x the timeout still tells it from the old 9.9 s and 5.6 s
            # (1.62 s against 1.5x was seen on a loaded runner; 0.36 s at 100 ms at load 9).
            assert took < 3 * limit + 0.5, f"{path} {params['timeout']}: answered after {took:.3f} s"
        ok = httpx.get(f"{s.url}/api/v1/query", params={"query": "count(card_boom)"}, timeout=60)
        assert ok.status_code == 200  # the cut queries' workers stopped: the server answers


def test_every_write_in_the_openapi_document_refuses_a_missing_token(server: Served) -> None:
    from inferwatch.server.api._openapi import OPENAPI_PATH

    doc = httpx.get(f"{server.url}{OPENAPI_PATH}", timeout=30).json()
    writes = [(method.upper(), path) for path, ops in doc["paths"].items() for method in ops
              if method.lower() in ("post", "put", "delete", "patch")]
    assert ("POST", "/v1/traces") in writes and len(writes) >= 8
    answered = {}
    for method, path in writes:
        url = server.url + path.replace("{id}", "0").replace("{", "").replace("}", "")
        r = httpx.request(method, url, content=b"{}", timeout=30,
                          headers={"content-type": "application/json"})
        answered[(method, path)] = r.status_code
    open_ = {k: v for k, v in answered.items() if v != 401}
    assert not open_, f"writes answered without a token: {open_}"
