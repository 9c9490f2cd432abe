"""The OTel → Prometheus translation rules, as pure functions (no server)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from inferwatch.model import Labels, is_stale_nan
from inferwatch.server.ingest._otlp_decode import OtlpError, decode_metrics_json
from inferwatch.server.ingest._otlp_delta import DeltaState
from inferwatch.server.ingest._otlp_translate import label_name, metric_name, translate

NOW = 1_700_000_000.0
T1, T2, T3 = (int((NOW - d) * 1e9) for d in (30, 20, 10))


@pytest.mark.parametrize(("name", "unit", "kind", "monotonic", "want"), [
    # "." and other invalid characters become "_"
    ("http.server.active_requests", "", "gauge", False, "http_server_active_requests"),
    ("a..b--c", "", "gauge", False, "a_b_c"),
    # unit suffixes from the UCUM map
    ("http.server.request.duration", "s", "histogram", False, "http_server_request_duration_seconds"),
    ("rpc.server.duration", "ms", "histogram", False, "rpc_server_duration_milliseconds"),
    ("system.memory.usage", "By", "gauge", False, "system_memory_usage_bytes"),
    ("jvm.memory.used", "MiBy", "gauge", False, "jvm_memory_used_mebibytes"),
    ("device.temperature", "Cel", "gauge", False, "device_temperature_celsius"),
    ("queue.length", "custom_unit", "gauge", False, "queue_length_custom_unit"),
    # a unit already a word of the name is not repeated
    ("request_duration_seconds", "s", "histogram", False, "request_duration_seconds"),
    # "per" units
    ("network.io", "By/s", "gauge", False, "network_io_bytes_per_second"),
    ("packets.rate", "{packet}/s", "gauge", False, "packets_rate_per_second"),
    # {annotations} are dropped
    ("http.server.active_requests", "{request}", "sum", False, "http_server_active_requests"),
    # monotonic sums end in _total (moved to the end), non-monotonic sums do not
    ("inference_requests", "", "sum", True, "inference_requests_total"),
    ("requests.total.count", "{request}", "sum", True, "requests_count_total"),
    ("inflight.requests", "", "sum", False, "inflight_requests"),
    # unit "1": _ratio for gauges only
    ("system.cpu.utilization", "1", "gauge", False, "system_cpu_utilization_ratio"),
    ("ratio.of.hits", "1", "gauge", False, "of_hits_ratio"),
    ("errors", "1", "sum", True, "errors_total"),
    ("queue.fill", "1", "histogram", False, "queue_fill"),
    # a leading digit gets "_"; non-ASCII letters are separators (the store's charset is ASCII)
    ("2xx.responses", "", "gauge", False, "_2xx_responses"),
    ("système.cpu", "s", "gauge", False, "syst_me_cpu_seconds"),
    ("...", "", "gauge", False, ""),
])
def test_metric_names_follow_the_compatibility_rules(name: str, unit: str, kind: str, monotonic: bool,
                                                     want: str) -> None:
    assert metric_name(name, unit, kind, monotonic) == want


@pytest.mark.parametrize(("key", "want"), [
    ("model", "model"), ("http.response.status_code", "http_response_status_code"),
    ("k8s-pod/name", "k8s_pod_name"), ("2xx", "key_2xx"),  # a leading digit: "key_"
    ("_private", "key_private"),  # a leading "_": "key"
    ("__reserved", "key__reserved"),  # "__" is the store's: not kept as Prometheus does
])
def test_label_names_follow_the_compatibility_rules(key: str, want: str) -> None:
    assert label_name(key) == want


def _attrs(**kv: Any) -> list[dict[str, Any]]:
    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        return {"doubleValue": v} if isinstance(v, float) else {"stringValue": v}
    return [{"key": k.replace("__", "."), "value": value(v)} for k, v in kv.items()]


def _request(*metrics: dict[str, Any], resource: dict[str, Any] | None = None) -> Any:
    res = resource if resource is not None else {"service__name": "ranker", "service__instance__id": "pod-1"}
    return {"resourceMetrics": [{"resource": {"attributes": _attrs(**res)},
                                 "scopeMetrics": [{"scope": {"name": "t"}, "metrics": list(metrics)}]}]}


def _run(doc: Any, delta: DeltaState | None = None, now: float = NOW) -> Any:
    return translate(decode_metrics_json(doc), now=now, delta=delta if delta is not None else DeltaState())


def _values(result: Any) -> dict[str, float]:
    return {str(s.labels): s.v for s in result.samples}


def test_a_counter_gets_total_job_and_instance_and_attributes_as_labels() -> None:
    doc = _request({"name": "inference_requests", "sum": {
        "aggregationTemporality": 2, "isMonotonic": True,
        "dataPoints": [{"attributes": _attrs(model="resnet50"), "timeUnixNano": str(T1), "asInt": "3"}]}})
    result = _run(doc)
    (s,) = result.samples
    assert s.labels == Labels.of("inference_requests_total", job="ranker", instance="pod-1", model="resnet50")
    assert (s.t, s.v) == ((T1 // 1_000_000) / 1000, 3.0)
    assert result.accepted == 1 and result.rejected == 0


def test_service_namespace_joins_job_and_other_resource_attributes_go_to_target_info() -> None:
    doc = _request({"name": "up.ish", "gauge": {"dataPoints": [{"timeUnixNano": T1, "asDouble": 1.5}]}},
                   resource={"service__name": "ranker", "service__namespace": "search",
                             "deployment__environment": "prod", "host__name": "gpu-1"})
    got = _values(_run(doc))
    assert got == {'up_ish{job="search/ranker"}': 1.5,
                   'target_info{deployment_environment="prod",host_name="gpu-1",job="search/ranker"}': 1.0}


def test_colliding_attributes_are_joined_and_resource_identity_overrides_point_attributes() -> None:
    doc = _request({"name": "g", "gauge": {"dataPoints": [{"timeUnixNano": T1, "asDouble": 1, "attributes":
                   _attrs(**{"a.b": "x", "a_b": "y", "job": "spoofed", "flag": True, "ratio": 0.5})}]}})
    (s,) = _run(doc).samples
    assert dict(s.labels) == {"__name__": "g", "a_b": "x;y", "job": "ranker", "instance": "pod-1",
                              "flag": "true", "ratio": "0.5"}


def test_a_histogram_becomes_cumulative_buckets_sum_and_count() -> None:
    doc = _request({"name": "inference.latency", "unit": "s", "histogram": {
        "aggregationTemporality": 2, "dataPoints": [{
            "timeUnixNano": str(T1), "count": "6", "sum": 2.5, "explicitBounds": [0.1, 0.5, 1.0],
            "bucketCounts": ["1", "2", "0", "3"]}]}})
    got = _values(_run(doc))
    base = 'inference_latency_seconds'
    lb = 'instance="pod-1",job="ranker"'
    assert got == {f'{base}_sum{{{lb}}}': 2.5, f'{base}_count{{{lb}}}': 6.0,
                   f'{base}_bucket{{{lb},le="0.1"}}': 1.0, f'{base}_bucket{{{lb},le="0.5"}}': 3.0,
                   f'{base}_bucket{{{lb},le="1"}}': 3.0, f'{base}_bucket{{{lb},le="+Inf"}}': 6.0}


def test_a_summary_becomes_quantile_series() -> None:
    doc = _request({"name": "rpc.latency", "unit": "ms", "summary": {"dataPoints": [{
        "timeUnixNano": str(T1), "count": "4", "sum": 10.0,
        "quantileValues": [{"quantile": 0.5, "value": 2.0}, {"quantile": 0.99, "value": 4.0}]}]}})
    got = _values(_run(doc))
    lb = 'instance="pod-1",job="ranker"'
    assert got == {f'rpc_latency_milliseconds_sum{{{lb}}}': 10.0,
                   f'rpc_latency_milliseconds_count{{{lb}}}': 4.0,
                   f'rpc_latency_milliseconds{{{lb},quantile="0.5"}}': 2.0,
                   f'rpc_latency_milliseconds{{{lb},quantile="0.99"}}': 4.0}


def _delta_sum(t_start: int, t: int, v: int) -> dict[str, Any]:
    return {"name": "tokens", "sum": {"aggregationTemporality": 1, "isMonotonic": True, "dataPoints": [
        {"startTimeUnixNano": str(t_start), "timeUnixNano": str(t), "asInt": str(v)}]}}


def test_delta_sums_accumulate_per_stream_and_a_retried_export_does_not_count_twice() -> None:
    state = DeltaState()
    assert [s.v for s in _run(_request(_delta_sum(T1 - 10**9, T1, 5)), state).samples] == [5.0]
    assert [s.v for s in _run(_request(_delta_sum(T1, T2, 7)), state).samples] == [12.0]
    retried = _run(_request(_delta_sum(T1, T2, 7)), state)  # the same export again (the exporter retried)
    assert retried.samples == [] and retried.rejected == 1
    assert "sent twice or out of order" in retried.error_message
    other = _run(_request(_delta_sum(T1, T2, 1), resource={"service__name": "other"}), state)
    assert [s.v for s in other.samples] == [1.0]  # another stream starts from its own value
    assert len(state) == 2


def test_delta_histograms_accumulate_buckets_count_and_sum() -> None:
    def point(t0: int, t: int, counts: list[int], total: float) -> dict[str, Any]:
        return {"name": "lat", "unit": "s", "histogram": {"aggregationTemporality": 1, "dataPoints": [{
            "startTimeUnixNano": str(t0), "timeUnixNano": str(t), "count": str(sum(counts)), "sum": total,
            "explicitBounds": [0.1, 1.0], "bucketCounts": [str(c) for c in counts]}]}}
    state = DeltaState()
    _run(_request(point(T1 - 1, T1, [1, 1, 0], 0.6)), state)
    got = _values(_run(_request(point(T1, T2, [2, 0, 1], 2.1)), state))
    lb = 'instance="pod-1",job="ranker"'
    assert got[f'lat_seconds_bucket{{{lb},le="0.1"}}'] == 3.0
    assert got[f'lat_seconds_bucket{{{lb},le="1"}}'] == 4.0
    assert got[f'lat_seconds_bucket{{{lb},le="+Inf"}}'] == got[f'lat_seconds_count{{{lb}}}'] == 5.0
    assert got[f'lat_seconds_sum{{{lb}}}'] == pytest.approx(2.7)


def test_the_delta_state_is_bounded_and_forgets_idle_streams() -> None:
    state = DeltaState(max_streams=2, max_idle_s=100)
    for job in ("a", "b"):
        assert _run(_request(_delta_sum(0, T1, 1), resource={"service__name": job}), state).rejected == 0
    full = _run(_request(_delta_sum(0, T1, 1), resource={"service__name": "c"}), state)
    assert full.rejected == 1 and "delta state full (2 streams)" in full.error_message
    later = _run(_request(_delta_sum(0, T2, 1), resource={"service__name": "c"}), state, now=NOW + 200)
    assert later.rejected == 0 and len(state) == 1  # a and b were idle for 200 s > 100 s


@pytest.mark.parametrize(("metric", "why"), [
    ({"name": "e", "exponentialHistogram": {"aggregationTemporality": 2, "dataPoints": [
        {"timeUnixNano": str(T1), "count": "1", "scale": 0}]}}, "exponential histograms are not supported"),
    ({"name": "h", "histogram": {"aggregationTemporality": 2, "dataPoints": [
        {"timeUnixNano": str(T1), "count": "1", "explicitBounds": [1.0], "bucketCounts": ["1"]}]}},
     "1 bucket counts for 1 bounds"),
    ({"name": "h", "histogram": {"aggregationTemporality": 2, "dataPoints": [
        {"timeUnixNano": str(T1), "count": "9", "explicitBounds": [1.0], "bucketCounts": ["1", "1"]}]}},
     "bucket counts add up to 2, not to the count 9"),
    ({"name": "h", "histogram": {"aggregationTemporality": 2, "dataPoints": [
        {"timeUnixNano": str(T1), "count": "2", "explicitBounds": [2.0, 1.0],
         "bucketCounts": ["1", "1", "0"]}]}},
     "explicit bounds must be increasing"),
    ({"name": "s", "sum": {"aggregationTemporality": 0,
                           "dataPoints": [{"timeUnixNano": str(T1), "asInt": "1"}]}},
     "aggregation temporality 0 is neither delta nor cumulative"),
    ({"name": "g", "gauge": {"dataPoints": [{"asInt": "1"}]}}, "data point without time_unix_nano"),
    ({"name": "g", "gauge": {"dataPoints": [{"timeUnixNano": str(int((NOW + 3600) * 1e9)), "asInt": "1"}]}},
     "3600s in the future: out of bounds"),
    ({"name": "!!!", "gauge": {"dataPoints": [{"timeUnixNano": str(T1), "asInt": "1"}]}},
     "no ASCII letter or digit"),
])
def test_bad_points_are_refused_alone_with_a_reason(metric: dict[str, Any], why: str) -> None:
    good = {"name": "ok", "gauge": {"dataPoints": [{"timeUnixNano": str(T1), "asInt": "7"}]}}
    result = _run(_request(metric, good))
    assert result.rejected == 1 and why in result.error_message, result.error_message
    assert [(s.labels.name, s.v) for s in result.samples if s.labels.name != "target_info"] == [("ok", 7.0)]


def test_no_recorded_value_is_written_as_a_staleness_marker() -> None:
    point = {"timeUnixNano": str(T1), "flags": 1, "asInt": "0"}
    doc = _request({"name": "g", "gauge": {"dataPoints": [point]}})
    (s,) = _run(doc).samples
    assert is_stale_nan(s.v)


def test_the_http_semconv_histogram_also_feeds_the_default_service_rules() -> None:
    doc = _request({"name": "http.server.request.duration", "unit": "s", "histogram": {
        "aggregationTemporality": 2, "dataPoints": [{
            "timeUnixNano": str(T1), "count": "2", "sum": 0.4, "explicitBounds": [0.5],
            "bucketCounts": ["2", "0"],
            "attributes": _attrs(**{"http__route": "/predict", "http__response__status_code": 503})}]}})
    got = _values(_run(doc))
    lb = 'code="503",http_response_status_code="503",http_route="/predict",instance="pod-1",job="ranker"'
    assert got[f'inferwatch_requests_total{{{lb},route="/predict",service="ranker"}}'] == 2.0
    bucket = f'inferwatch_request_duration_seconds_bucket{{{lb},le="0.5",route="/predict",service="ranker"}}'
    assert got[bucket] == 2.0
    plain = 'http_response_status_code="503",http_route="/predict",instance="pod-1",job="ranker"'
    assert got[f'http_server_request_duration_seconds_count{{{plain}}}'] == 2.0  # the OTel series stays too


@pytest.mark.parametrize("doc", [
    [], {"resourceMetrics": {}}, {"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": 5}]}]}]},
    {"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": "g", "gauge": {"dataPoints": [
        {"timeUnixNano": "soon", "asInt": "1"}]}}]}]}]},
    {"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": "g", "gauge": {"dataPoints": [
        {"timeUnixNano": "1", "asDouble": {"x": 1}}]}}]}]}]},
    {"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": "g", "gauge": {"dataPoints": [
        {"timeUnixNano": str(2**70), "asInt": "1"}]}}]}]}]},
])
def test_json_of_the_wrong_shape_is_an_otlp_error(doc: Any) -> None:
    with pytest.raises(OtlpError, match="not an OTLP JSON ExportMetricsServiceRequest"):
        decode_metrics_json(doc)


def test_json_special_floats_and_string_integers_are_read() -> None:
    doc = _request({"name": "g", "gauge": {"dataPoints": [
        {"timeUnixNano": str(T1), "asDouble": "Infinity", "attributes": _attrs(k=1)},
        {"timeUnixNano": T1, "asDouble": "NaN", "attributes": _attrs(k=2)}]}})
    values = sorted(_run(doc).samples, key=lambda s: s.labels["k"])
    assert values[0].v == math.inf and math.isnan(values[1].v)


def test_protobuf_and_its_json_mapping_decode_to_the_same_records() -> None:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    from inferwatch.server.ingest._otlp_decode import decode_metrics_protobuf

    req = ExportMetricsServiceRequest()
    rm = req.resource_metrics.add()
    kv = rm.resource.attributes.add()
    kv.key, kv.value.string_value = "service.name", "ranker"
    sm = rm.scope_metrics.add()
    s = sm.metrics.add()
    s.name, s.unit = "tokens", "{token}"
    s.sum.aggregation_temporality, s.sum.is_monotonic = 1, True
    p = s.sum.data_points.add()
    p.start_time_unix_nano, p.time_unix_nano, p.as_int = T1, T2, 9
    tags = p.attributes.add()
    tags.key = "tags"
    tags.value.array_value.values.add().string_value = "a"
    tags.value.array_value.values.add().int_value = 2
    h = sm.metrics.add()
    h.name = "lat"
    h.histogram.aggregation_temporality = 2
    hp = h.histogram.data_points.add()
    hp.time_unix_nano, hp.count, hp.sum = T3, 3, 1.5
    hp.explicit_bounds.extend([0.5, 1.0])
    hp.bucket_counts.extend([1, 1, 1])
    from_pb = decode_metrics_protobuf(req.SerializeToString())
    assert from_pb == decode_metrics_json(MessageToDict(req))
    assert from_pb[0].metrics[0].points[0].attributes == {"tags": '["a",2]'}
    assert from_pb[0].metrics[1].points[0].sum == 1.5 and from_pb[0].metrics[1].temporality == 2


def test_a_request_with_too_many_points_is_refused_before_translation() -> None:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    from inferwatch.server.ingest._otlp_decode import MAX_POINTS, TooManyPoints, decode_metrics_protobuf

    points = [{"timeUnixNano": "1", "asInt": "1"}] * (MAX_POINTS // 2 + 1)
    doc = _request({"name": "a", "gauge": {"dataPoints": points}},
                   {"name": "b", "gauge": {"dataPoints": points}})
    with pytest.raises(TooManyPoints, match=f"{MAX_POINTS + 2} data points in one request"):
        decode_metrics_json(doc)
    req = ExportMetricsServiceRequest()
    gauge = req.resource_metrics.add().scope_metrics.add().metrics.add().gauge
    for _ in range(MAX_POINTS + 1):
        gauge.data_points.add()
    with pytest.raises(TooManyPoints, match="over the limit of 200000"):
        decode_metrics_protobuf(req.SerializeToString())


def test_the_delta_state_bounds_the_histogram_buckets_it_holds() -> None:
    state = DeltaState(max_buckets=10)

    def point(job: str, bounds: list[float]) -> Any:
        return _request({"name": "lat", "histogram": {"aggregationTemporality": 1, "dataPoints": [{
            "timeUnixNano": str(T1), "count": "0", "explicitBounds": bounds,
            "bucketCounts": ["0"] * (len(bounds) + 1)}]}}, resource={"service__name": job})
    assert _run(point("a", [1.0, 2.0, 3.0, 4.0, 5.0]), state).rejected == 0  # 6 buckets held
    full = _run(point("b", [1.0, 2.0, 3.0, 4.0]), state)  # 6 + 5 > 10
    assert full.rejected == 1 and "delta state full (10 histogram buckets)" in full.error_message
    assert _run(point("c", [1.0, 2.0, 3.0]), state).rejected == 0  # 6 + 4 fits
