"""A real ``inferwatch serve`` takes OTLP traces from the OpenTelemetry SDK exporter and serves them back."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from tests.server._proc import serve

from inferwatch.model import SimulatedClock
from inferwatch.tracing import setup
from inferwatch.tracing._store import SpanRecord, TraceStore

T0 = time.time_ns() - 60 * 10**9  # a minute ago: within the server's retention
TRACE = "5b8efff798038103d269b633813fc60c"
TOKEN = "t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}  # POST /v1/traces is a write: it needs the server's token


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("serve")
    with serve(f"server: {{data_dir: '{tmp / 'data'}', api_token: t0ken-for-tests}}\n", tmp) as s:
        yield s.url
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)


def test_sdk_exporter_to_serve_then_query_by_service_duration_and_id(
    server_url: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"Authorization=Bearer%20{TOKEN}")  # the exporter's way
    tr = setup("ranker", endpoint=server_url, sample_ratio=1.0, install_global=False)
    try:
        ids = {}
        for label, seconds in (("slow", 1.5), ("fast", 0.02)):
            root = tr.tracer.start_span("GET /predict", kind=SpanKind.SERVER, start_time=T0)
            ctx = trace.set_span_in_context(root)
            for i, stage in enumerate(("feature_store", "model")):
                child = tr.tracer.start_span(stage, context=ctx, start_time=T0 + i)
                child.end(end_time=T0 + int(seconds * 1e9))
            root.end(end_time=T0 + int(seconds * 1e9))
            ids[label] = format(root.get_span_context().trace_id, "032x")
        assert tr.force_flush(60)
        assert tr.exporter is not None and tr.exporter.exported == 6
    finally:
        tr.shutdown()
    with httpx.Client(base_url=server_url, timeout=10) as c:
        listed = c.get("/api/v1/traces", params={"service": "ranker", "min_duration": "1"}).json()["data"]
        assert [t["trace_id"] for t in listed] == [ids["slow"]]
        assert listed[0] | {"start_ns": 0} == {
            "trace_id": ids["slow"], "root_service": "ranker", "root_name": "GET /predict", "start_ns": 0,
            "duration_s": 1.5, "spans": 3, "error": False}
        every = c.get("/api/v1/traces?service=ranker").json()["data"]
        assert {t["trace_id"] for t in every} >= set(ids.values())
        assert c.get("/api/v1/traces?service=nobody").json()["data"] == []
        spans = c.get(f"/api/v1/traces/{ids['slow']}").json()["data"]["spans"]
        root = next(s for s in spans if s["parent_span_id"] == "")
        assert sorted(s["name"] for s in spans if s["parent_span_id"] == root["span_id"]) == [
            "feature_store", "model"]


def _json_body(trace_id: str = TRACE, status: int = 2) -> dict[str, object]:
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "feature-store"}}]},
        "scopeSpans": [{"spans": [{
            "traceId": trace_id, "spanId": "eee19b7ec3c1b174", "name": "lookup", "kind": 2,
            "startTimeUnixNano": str(T0), "endTimeUnixNano": str(T0 + 250_000_000),
            "status": {"code": status}, "attributes": [{"key": "rows", "value": {"intValue": "3"}}]}]}]}]}


def test_json_and_gzip_bodies_are_stored(server_url: str) -> None:
    with httpx.Client(base_url=server_url, timeout=10, headers=AUTH) as c:
        r = c.post("/v1/traces", json=_json_body())
        assert (r.status_code, r.json()) == (200, {})
        other = "1" * 32
        r = c.post("/v1/traces", content=gzip.compress(json.dumps(_json_body(other, 0)).encode()),
                   headers={"content-type": "application/json", "content-encoding": "gzip"})
        assert r.status_code == 200
        (span,) = c.get(f"/api/v1/traces/{TRACE.upper()}").json()["data"]["spans"]
        assert (span["service"], span["name"], span["status_code"], span["duration_s"]) == (
            "feature-store", "lookup", 2, 0.25)
        assert span["attributes"] == {"rows": "3"}
        listed = c.get("/api/v1/traces?service=feature-store").json()["data"]
        assert {(t["trace_id"], t["error"]) for t in listed} == {(TRACE, True), (other, False)}


@pytest.mark.parametrize(("method", "path", "body", "headers", "status"), [
    # malformed protobuf: 400, never 500
    ("POST", "/v1/traces", b"\xff\xff\xff", {"content-type": "application/x-protobuf"}, 400),
    # JSON that is not JSON, or not an export request, or with a bad id
    ("POST", "/v1/traces", b"{", {"content-type": "application/json"}, 400),
    ("POST", "/v1/traces", b'{"resourceSpans": 3}', {"content-type": "application/json"}, 400),
    ("POST", "/v1/traces", json.dumps(_json_body("xyz")).encode(), {"content-type": "application/json"}, 400),
    ("POST", "/v1/traces", b"\x1f\x8bnot gzip", {"content-type": "application/json",
                                                  "content-encoding": "gzip"}, 400),
    # oversized, declared or compressed: 413
    ("POST", "/v1/traces", b"0" * (4 * 1024 * 1024 + 1), {"content-type": "application/x-protobuf"}, 413),
    ("POST", "/v1/traces", gzip.compress(b" " * (5 * 1024 * 1024)),
     {"content-type": "application/json", "content-encoding": "gzip"}, 413),
    # a content type OTLP/HTTP does not define: 415
    ("POST", "/v1/traces", b"x", {"content-type": "text/plain"}, 415),
    # queries: a bad id 400, an unknown one 404, a bad number 400
    ("GET", "/api/v1/traces/not-hex", b"", {}, 400),
    ("GET", "/api/v1/traces/" + "0" * 31 + "1", b"", {}, 404),
    ("GET", "/api/v1/traces?min_duration=abc", b"", {}, 400),
    # no token: anyone on the network could fill the trace store (issue 31)
    ("POST", "/v1/traces", json.dumps(_json_body()).encode(), {"content-type": "application/json",
                                                                "Authorization": ""}, 401),
])
def test_bad_requests_are_4xx_never_500(server_url: str, method: str, path: str, body: bytes,
                                        headers: dict[str, str], status: int) -> None:
    r = httpx.request(method, server_url + path, content=body or None, headers={**AUTH, **headers},
                      timeout=10)
    assert r.status_code == status, r.text


@pytest.mark.parametrize("encoding", ["gzip", ""])
def test_a_damaged_gzip_body_is_reported_as_gzip(server_url: str, encoding: str) -> None:
    # The issue: a corrupt gzip body was reported as "invalid JSON".
    truncated = gzip.compress(json.dumps(_json_body()).encode())[:-12]
    headers = {**AUTH, "content-type": "application/json", "content-encoding": encoding}
    r = httpx.post(server_url + "/v1/traces", content=truncated, headers=headers, timeout=10)
    assert r.status_code == 400 and "invalid gzip body" in r.json()["error"], r.text


def test_genai_spans_count_as_the_sdks_flags_and_scores(server_url: str) -> None:
    # issue 54: a GenAI span's finish reasons and evaluation events, posted as traces, are series
    from tests.server.test_otlp_genai_spans import LIT, _eval
    from tests.server.test_otlp_genai_spans import body as genai_body

    doc = genai_body([({**LIT, "gen_ai.response.finish_reasons": ["length"]}, [_eval("judge", 0.4)])],
                     service="otel-chat", t0=T0)
    r = httpx.post(f"{server_url}/v1/traces", json=doc, headers=AUTH, timeout=60)
    assert (r.status_code, r.json()) == (200, {})
    query = ('sum by (flag, tenant) (inferwatch_generation_flags_total{service="otel-chat"}) or '
             'sum by (name, tenant) (inferwatch_generation_score_sum{service="otel-chat"})')
    got = httpx.get(f"{server_url}/api/v1/query", params={"query": query}, timeout=60).json()
    got = got["data"]["result"]
    assert sorted((tuple(sorted(x["metric"].items())), x["value"][1]) for x in got) == [
        ((("flag", "truncated"), ("tenant", "acme")), "1"), ((("name", "judge"), ("tenant", "acme")), "0.4")]


def test_store_is_bounded_by_age_and_count() -> None:
    clock = SimulatedClock(1000.0)
    store = TraceStore(retention_s=100.0, max_spans=3, clock=clock)

    def span(i: int, t: float) -> SpanRecord:
        return SpanRecord(f"{i:032x}", f"{i:016x}", "", "svc", "op", 2, int(t * 1e9), int(t * 1e9) + 1, 0)

    store.add([span(1, 950.0), span(2, 990.0)])
    assert store.count() == 2
    clock.set(1060.0)  # span 1 is now older than the retention
    store.add([span(3, 1050.0)])
    assert [t.trace_id for t in store.traces()] == [f"{3:032x}", f"{2:032x}"]
    store.add([span(4, 1051.0), span(5, 1052.0)])  # over max_spans: the oldest goes
    assert [t.trace_id[-1] for t in store.traces()] == ["5", "4", "3"]
    store.close()


def _pipeline_traces(service: str, t0_ns: int, n: int, model_s: float) -> dict[str, object]:
    """``n`` traces of ``service``: a root with feature_store (10 ms) and model (``model_s``) stages."""
    spans = []
    for i in range(n):
        tid, root_id, start = f"{i + 1:08x}{t0_ns:024x}"[-32:], f"{i + 1:016x}", t0_ns + i * 1_000_000
        jitter = (i % 10) / 1000
        stages = (("feature_store", 0.010 + jitter), ("model", model_s + jitter))
        end = start + int(sum(d for _, d in stages) * 1e9)
        spans.append({"traceId": tid, "spanId": root_id, "name": "POST /predict", "kind": 2,
                      "startTimeUnixNano": start, "endTimeUnixNano": end})
        for j, (name, d) in enumerate(stages):
            spans.append({"traceId": tid, "spanId": f"{j + 1:04x}{i + 1:012x}", "parentSpanId": root_id,
                          "name": name, "kind": 1, "startTimeUnixNano": start,
                          "endTimeUnixNano": start + int(d * 1e9)})
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{"spans": spans}]}]}


def test_diagnose_latency_names_the_stage_whose_p99_moved(
        server_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    from inferwatch.cli import main

    now = time.time_ns()
    with httpx.Client(base_url=server_url, timeout=10, headers=AUTH) as c:
        for t0, model_s in ((now - 20 * 60 * 10**9, 0.050), (now - 2 * 60 * 10**9, 0.400)):
            assert c.post("/v1/traces", json=_pipeline_traces("scorer", t0, 50, model_s)).status_code == 200
        recent = {"service": "scorer", "start": (now / 1e9) - 300}
        stages = c.get("/api/v1/traces/stages", params=recent).json()
        assert set(stages["data"]) == {"feature_store", "model"}
        assert stages["data"]["model"]["count"] == 50
        assert 0.40 <= stages["data"]["model"]["p99_s"] <= 0.41
    code = main(["diagnose", "latency", "--service", "scorer", "--url", server_url,
                 "--window", "5m", "--baseline", "30m", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["slowed_stage"] == "model"
    model, feature_store = out["stages"]
    assert model["p99_increase_s"] == pytest.approx(0.35, abs=0.001)
    assert abs(feature_store["p99_increase_s"]) < 0.001
    assert len(model["example_traces"]) == 3
    for tid in model["example_traces"]:  # the examples are real, slow traces
        spans = httpx.get(f"{server_url}/api/v1/traces/{tid}", timeout=10).json()["data"]["spans"]
        assert any(s["name"] == "model" and s["duration_s"] >= 0.40 for s in spans)
    assert main(["diagnose", "latency", "--service", "scorer", "--url", server_url, "--window", "5m"]) == 0
    assert "slowed stage: model  p99" in capsys.readouterr().out
