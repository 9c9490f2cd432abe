"""Exposition: parsed back it gives what was recorded; promtool accepts it; HTTP endpoints."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import httpx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families
from sdk_fakes import RecordingAggregator
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from inferwatch.config import SdkConfig
from inferwatch.sdk import Monitor, read_sample

BOUNDS = (0.001, 0.01, 0.1, 1.0)
SVC = {"service": "svc", "model": "m", "version": "v1"}


def buckets_of(text: str, route: str) -> dict[str, float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "inferwatch_request_duration_seconds_bucket" and s.labels["route"] == route:
                out[s.labels["le"]] = s.value
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=20, allow_nan=False), min_size=1, max_size=300))
def test_parsed_buckets_equal_a_direct_count(durations: list[float]) -> None:
    # Rule: bucket le=b counts observations <= b (cumulative); +Inf and _count count all.
    with Monitor("svc", "m", "v1", config=SdkConfig(buckets=BOUNDS)) as monitor:
        for d in durations:
            monitor.record_request("/p", 200, d)
        text = monitor.metrics_text()
    got = buckets_of(text, "/p")
    xs = np.asarray(durations)
    want = {repr(b): float((xs <= b).sum()) for b in BOUNDS} | {"+Inf": float(len(xs))}
    assert got == want
    labels = {**SVC, "route": "/p"}
    assert read_sample(text, "inferwatch_request_duration_seconds_count", labels) == len(xs)
    assert read_sample(text, "inferwatch_request_duration_seconds_sum", labels) == pytest.approx(xs.sum())
    assert read_sample(text, "inferwatch_requests_total", {**labels, "code": "200"}) == len(xs)


def test_counts_by_route_and_code_parse_back() -> None:
    with Monitor("svc", "m", "v1") as monitor:
        plan = {("/a", 200): 7, ("/a", 500): 2, ("/b", 503): 4}
        for (route, code), n in plan.items():
            for _ in range(n):
                monitor.record_request(route, code, 0.02)
        text = monitor.metrics_text()
    for (route, code), n in plan.items():
        assert read_sample(text, "inferwatch_requests_total", {**SVC, "route": route, "code": str(code)}) == n


def test_openmetrics_output_parses_with_the_openmetrics_parser() -> None:
    with Monitor("svc", "m", "v1") as monitor:
        monitor.record_request("/p", 200, 0.2)
        text = monitor.metrics_text(openmetrics=True)
    assert text.endswith("# EOF\n")
    names = {f.name: f.type for f in parse_openmetrics(text)}
    assert names["inferwatch_requests"] == "counter"
    assert names["inferwatch_request_duration_seconds"] == "histogram"


def test_promtool_accepts_the_exposition(require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    rec = RecordingAggregator("prediction")
    with Monitor("svc", "m", "v1", aggregators=[rec]) as monitor:
        monitor.record_request("/predict", 200, 0.012)
        monitor.record_request("/predict", 503, 1.5)
        monitor.observe_prediction([1.0])
        with monitor.track("/explain"):
            pass
        text = monitor.metrics_text()
    out = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == "" and out.stderr.strip() == ""  # no lint complaints either


def test_collector_registers_in_another_registry_once() -> None:
    with Monitor("svc", "m", "v1") as monitor:
        monitor.record_request("/p", 200, 0.01)
        registry = CollectorRegistry()
        registry.register(monitor.collector)
        labels = {**SVC, "route": "/p", "code": "200"}
        assert registry.get_sample_value("inferwatch_requests_total", labels) == 1
        other = Monitor("svc", "m", "v1")
        with pytest.raises(ValueError, match="Duplicated"):
            registry.register(other.collector)  # same families twice would make invalid output
        other.close()
        assert b"inferwatch_sdk_queue_capacity" in generate_latest(registry)


def test_metrics_app_negotiates_openmetrics() -> None:
    with Monitor("svc", "m", "v1") as monitor:
        monitor.record_request("/p", 200, 0.01)
        app = Starlette(routes=[Mount("/metrics", app=monitor.metrics_app())])
        with TestClient(app) as client:
            plain = client.get("/metrics")
            om = client.get("/metrics", headers={"accept": "application/openmetrics-text; version=1.0.0"})
            post = client.post("/metrics")
    assert plain.status_code == 200 and plain.headers["content-type"].startswith("text/plain")
    assert 'inferwatch_requests_total{code="200"' in plain.text
    assert om.headers["content-type"].startswith("application/openmetrics-text")
    assert om.text.endswith("# EOF\n")
    assert post.status_code == 405


def test_serve_metrics_serves_on_loopback_and_closes() -> None:
    with Monitor("svc", "m", "v1") as monitor:
        monitor.record_request("/p", 404, 0.01)
        server = monitor.serve_metrics(port=0)
        try:
            assert server.port > 0 and server.url.startswith("http://127.0.0.1:")
            body = httpx.get(server.url, timeout=10).text
        finally:
            server.close()
        server.close()
    assert read_sample(body, "inferwatch_requests_total", {**SVC, "route": "/p", "code": "404"}) == 1.0


def test_an_outcome_whose_truth_is_ambiguous_is_counted_invalid() -> None:
    rec = RecordingAggregator("outcome")
    with Monitor("svc", aggregators=[rec]) as monitor:
        monitor.observe_outcome("exp", "a", np.array([1, 0]))
        monitor.flush()
        assert rec.seen["outcome"] == []
        invalid = {"service": "svc", "kind": "outcome"}
        assert monitor.get_sample_value("inferwatch_sdk_invalid_total", invalid) == 1
