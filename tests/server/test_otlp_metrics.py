"""A real ``inferwatch serve`` fed by the real OpenTelemetry SDK's OTLP/HTTP metric exporter.

OpenTelemetry is a dev dependency (the tracing extra): imported, never skipped.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider, UpDownCounter
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource

from inferwatch.rules._signals import signal_promql
from inferwatch.settings._rules import ErrorRatioSignal, LatencyQuantileSignal

from ._proc import Served, serve

TOKEN = "otlp-t0k3n-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("otlp")
    with serve(f"server: {{data_dir: '{tmp}/data', api_token: {TOKEN}}}\n", tmp) as s:
        yield s
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)


def _provider(url: str, service: str, *, delta: bool = False, views: tuple[View, ...] = ()) -> MeterProvider:
    temporality = ({kind: AggregationTemporality.DELTA for kind in (Counter, UpDownCounter, Histogram)}
                   if delta else {})
    exporter = OTLPMetricExporter(endpoint=f"{url}/v1/metrics", headers=AUTH, compression=Compression.Gzip,
                                  preferred_temporality=temporality)
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)  # exports on flush
    resource = Resource.create({"service.name": service, "service.instance.id": "pod-1"})
    return MeterProvider(resource=resource, metric_readers=[reader], views=list(views))


def _query(url: str, promql: str) -> dict[str, float]:
    r = httpx.get(f"{url}/api/v1/query", params={"query": promql}, timeout=30)
    assert r.status_code == 200, r.text
    return {json.dumps(x["metric"], sort_keys=True): float(x["value"][1]) for x in r.json()["data"]["result"]}


def _key(**labels: str) -> str:
    return json.dumps(labels, sort_keys=True)


@pytest.mark.slow
def test_the_sdk_example_counter_a_histogram_and_an_up_down_counter_arrive_translated(server: Served) -> None:
    provider = _provider(server.url, "ranker")
    meter = provider.get_meter("inference")
    requests = meter.create_counter("inference_requests")
    for _ in range(3):
        requests.add(1, {"model": "resnet50"})
    requests.add(1, {"model": "bert"})
    latency = meter.create_histogram("inference.latency", unit="s",
                                     explicit_bucket_boundaries_advisory=[0.1, 0.5, 1.0])
    for v in (0.05, 0.2, 0.7):
        latency.record(v, {"model": "resnet50"})
    inflight = meter.create_up_down_counter("inflight.requests", unit="{request}")
    inflight.add(3)
    inflight.add(-1)
    provider.force_flush()
    provider.shutdown()
    ids = {"job": "ranker", "instance": "pod-1"}
    assert _query(server.url, "inference_requests_total") == {
        _key(__name__="inference_requests_total", model="resnet50", **ids): 3.0,
        _key(__name__="inference_requests_total", model="bert", **ids): 1.0}
    assert _query(server.url, '{__name__=~"inference_latency_seconds.*"}') == {
        _key(__name__="inference_latency_seconds_bucket", le="0.1", model="resnet50", **ids): 1.0,
        _key(__name__="inference_latency_seconds_bucket", le="0.5", model="resnet50", **ids): 2.0,
        _key(__name__="inference_latency_seconds_bucket", le="1", model="resnet50", **ids): 3.0,
        _key(__name__="inference_latency_seconds_bucket", le="+Inf", model="resnet50", **ids): 3.0,
        _key(__name__="inference_latency_seconds_count", model="resnet50", **ids): 3.0,
        _key(__name__="inference_latency_seconds_sum", model="resnet50", **ids): pytest.approx(0.95),
    }
    assert _query(server.url, "inflight_requests") == {_key(__name__="inflight_requests", **ids): 2.0}
    (info,) = _query(server.url, 'target_info{job="ranker"}')
    assert json.loads(info)["telemetry_sdk_language"] == "python"  # the other resource attributes


@pytest.mark.slow
def test_delta_temporality_is_stored_as_cumulative_series(server: Served) -> None:
    provider = _provider(server.url, "ranker-delta", delta=True)
    meter = provider.get_meter("inference")
    tokens = meter.create_counter("generated.tokens", unit="{token}")
    queue = meter.create_up_down_counter("queue.depth")
    latency = meter.create_histogram("step.latency", unit="ms",
                                     explicit_bucket_boundaries_advisory=[10.0, 100.0])
    tokens.add(5, {"model": "llama"})
    queue.add(4)
    latency.record(5.0)
    provider.force_flush()  # the first delta export
    tokens.add(7, {"model": "llama"})
    queue.add(-3)
    latency.record(50.0)
    latency.record(500.0)
    provider.force_flush()  # the second: only what happened since the first
    provider.shutdown()
    ids = {"job": "ranker-delta", "instance": "pod-1"}
    assert _query(server.url, "generated_tokens_total") == {
        _key(__name__="generated_tokens_total", model="llama", **ids): 12.0}
    assert _query(server.url, "queue_depth") == {_key(__name__="queue_depth", **ids): 1.0}
    got = _query(server.url, 'step_latency_milliseconds_bucket')
    assert {json.loads(k)["le"]: v for k, v in got.items()} == {"10": 1.0, "100": 2.0, "+Inf": 3.0}
    assert _query(server.url, "step_latency_milliseconds_sum") == {
        _key(__name__="step_latency_milliseconds_sum", **ids): 555.0}


@pytest.mark.slow
def test_the_default_service_rules_evaluate_on_an_otel_instrumented_service(server: Served) -> None:
    # The HTTP semantic convention's histogram, as OTel's HTTP instrumentations record it.
    buckets = View(instrument_name="http.server.request.duration",
                   aggregation=ExplicitBucketHistogramAggregation([0.1, 0.25, 0.5, 1.0]))
    provider = _provider(server.url, "scorer", views=(buckets,))
    duration = provider.get_meter("http").create_histogram("http.server.request.duration", unit="s")
    ok = {"http.route": "/predict", "http.response.status_code": 200}
    failed = {"http.route": "/predict", "http.response.status_code": 500}
    for _ in range(10):
        duration.record(0.05, ok)
    duration.record(0.05, failed)
    provider.force_flush()
    for _ in range(9):
        duration.record(0.3, ok)
    duration.record(0.3, failed)
    provider.force_flush()
    provider.shutdown()
    # the default rules' own PromQL (HighP99Latency / SevereLatency, HighErrorRate)
    p99 = _query(server.url, signal_promql(LatencyQuantileSignal()))
    errors = _query(server.url, signal_promql(ErrorRatioSignal()))
    # all of the rate is in the (0.25, 0.5] bucket: histogram_quantile interpolates linearly in it
    assert p99 == {_key(service="scorer"): pytest.approx(0.25 + 0.25 * 0.99)}
    assert errors == {_key(service="scorer"): pytest.approx(0.1)}


def _pb_request(kind: str, t_ns: int) -> bytes:
    req = ExportMetricsServiceRequest()
    rm = req.resource_metrics.add()
    kv = rm.resource.attributes.add()
    kv.key, kv.value.string_value = "service.name", "hostile"
    metric = rm.scope_metrics.add().metrics.add()
    metric.name = "odd"
    if kind == "exponential":
        point = metric.exponential_histogram.data_points.add()
        metric.exponential_histogram.aggregation_temporality = 2
        point.count, point.time_unix_nano = 1, t_ns
    else:
        point = metric.gauge.data_points.add()
        point.as_double, point.time_unix_nano = 1.0, t_ns
    ok = rm.scope_metrics[0].metrics.add()
    ok.name = "fine"
    good = ok.gauge.data_points.add()
    good.as_double, good.time_unix_nano = 42.0, time.time_ns()
    return req.SerializeToString()


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "ahead_s", "why"), [
    ("exponential", 0, "exponential histograms are not supported"),
    ("gauge", 3600, "in the future: out of bounds"),
])
def test_refused_points_are_named_in_a_partial_success(server: Served, kind: str, ahead_s: int,
                                                       why: str) -> None:
    body = _pb_request(kind, time.time_ns() + ahead_s * 10**9)
    r = httpx.post(f"{server.url}/v1/metrics", content=body, timeout=30,
                   headers={**AUTH, "Content-Type": "application/x-protobuf"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/x-protobuf"
    answer = ExportMetricsServiceResponse.FromString(r.content)
    assert answer.partial_success.rejected_data_points == 1 and why in answer.partial_success.error_message
    assert _query(server.url, 'fine{job="hostile"}') == {_key(__name__="fine", job="hostile"): 42.0}
    assert _query(server.url, 'odd') == {}


@pytest.mark.slow
@pytest.mark.parametrize(("body", "headers", "status", "says"), [
    (b"\xff\xff\xff\xff", {"Content-Type": "application/x-protobuf"}, 400, b"not an OTLP protobuf"),
    (b"{not json", {"Content-Type": "application/json"}, 400, b"invalid JSON"),
    (b'{"resourceMetrics": 7}', {"Content-Type": "application/json"}, 400,
     b"'resourceMetrics' must be a list"),
    (b"{}", {"Content-Type": "text/plain"}, 415, b"unsupported content type 'text/plain'"),
    (b"not gzip", {"Content-Type": "application/json", "Content-Encoding": "gzip"}, 400, b"invalid gzip"),
    (gzip.compress(b" " * (40 << 20), 9), {"Content-Type": "application/json", "Content-Encoding": "gzip"},
     413, b"once decompressed"),
    (b"{" + b" " * (33 << 20) + b"}", {"Content-Type": "application/json"}, 413, b"larger than"),
    (b"{}", {"Content-Type": "application/json", "Authorization": "Bearer wrong"}, 401, b"Bearer <token>"),
])
def test_hostile_bodies_get_a_clear_4xx(server: Served, body: bytes, headers: dict[str, str], status: int,
                                        says: bytes) -> None:
    r = httpx.post(f"{server.url}/v1/metrics", content=body, headers={**AUTH, **headers}, timeout=60)
    assert r.status_code == status and says in r.content, (r.status_code, r.content[:300])


@pytest.mark.slow
def test_json_exports_are_answered_as_the_spec_says(server: Served) -> None:
    r = httpx.post(f"{server.url}/api/v1/otlp/v1/metrics", json={"resourceMetrics": []}, headers=AUTH,
                   timeout=30)
    assert (r.status_code, r.json()) == (200, {})
    point = {"timeUnixNano": str(time.time_ns()), "asDouble": 0.75, "attributes": [
        {"key": "gpu", "value": {"intValue": "0"}}]}
    doc = {"resourceMetrics": [{"resource": {"attributes": [{"key": "service.name", "value": {
        "stringValue": "json-svc"}}]}, "scopeMetrics": [{"metrics": [
            {"name": "gpu.utilization", "unit": "1", "gauge": {"dataPoints": [point]}},
            {"name": "old", "gauge": {"dataPoints": [{"asInt": "1"}]}}]}]}]}
    r = httpx.post(f"{server.url}/v1/metrics", content=gzip.compress(json.dumps(doc).encode()), timeout=30,
                   headers={**AUTH, "Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.json() == {"partialSuccess": {"rejectedDataPoints": "1",
                                           "errorMessage": "'old': data point without time_unix_nano"}}
    assert _query(server.url, "gpu_utilization_ratio") == {
        _key(__name__="gpu_utilization_ratio", gpu="0", job="json-svc"): 0.75}
    doc: Any = httpx.get(f"{server.url}/api/openapi.json", timeout=30).json()
    assert {"/v1/metrics", "/api/v1/otlp/v1/metrics"} <= set(doc["paths"])


@pytest.mark.slow
def test_openlit_and_openllmetry_exports_land_as_the_sdks_generation_series(server: Served) -> None:
    from .test_otlp_genai import load, restamp

    now_ns = time.time_ns()
    openlit = json.dumps(restamp(load("otlp_genai_openlit"), now_ns, "openlit-app"))
    r = httpx.post(f"{server.url}/v1/metrics", content=openlit, timeout=30,
                   headers={**AUTH, "Content-Type": "application/json"})
    assert r.status_code == 200 and r.json() == {}, r.text
    # OpenLLMetry's exporter sends protobuf (the OTLP/HTTP default)
    openllmetry = json_format.ParseDict(restamp(load("otlp_genai_openllmetry"), now_ns, "openllmetry-app"),
                                        ExportMetricsServiceRequest())
    r = httpx.post(f"{server.url}/v1/metrics", content=openllmetry.SerializeToString(), timeout=30,
                   headers={**AUTH, "Content-Type": "application/x-protobuf"})
    assert r.status_code == 200, r.text
    assert not ExportMetricsServiceResponse.FromString(r.content).HasField("partial_success")
    requests = _query(server.url, 'sum by (service, model, route, code) '
                                  '(inferwatch_generation_requests_total{service=~"open.*"})')
    assert requests == {_key(service=s, model="gpt-4o-mini-2024-07-18", route="chat", code="200"): 3.0
                        for s in ("openlit-app", "openllmetry-app")}
    # the default rules' own shape: a quantile over the SDK's bucket bounds (le="0.5", as it prints them)
    p99 = _query(server.url, 'histogram_quantile(0.99, sum by (service, model, le) '
                             '(inferwatch_generation_time_to_first_token_seconds_bucket{service=~"open.*"}))')
    assert sorted(p99.values()) == pytest.approx([0.5, 0.5], abs=0.01)
    tokens = _query(server.url,
                    'sum by (service) (inferwatch_generation_output_tokens_total{service=~"open.*"})')
    assert sorted(tokens.values()) == [120.0, 120.0]
