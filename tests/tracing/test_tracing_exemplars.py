"""Exemplars end to end: SDK histograms point to kept traces (OpenMetrics only), the scraper keeps them,
``/api/v1/query_exemplars`` answers them in Prometheus 2.42's shape."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient
from tests.server._proc import serve, wait_scraped

from inferwatch._exceptions import InputError
from inferwatch.config import parse_config
from inferwatch.formats._exposition import ExpositionParser
from inferwatch.model import Labels, SimulatedClock, parse_matchers
from inferwatch.rules import Alert
from inferwatch.sdk import Monitor
from inferwatch.server import build_components
from inferwatch.server._trace_links import TraceLinks
from inferwatch.store import ExemplarStore
from inferwatch.tracing import setup

from .conftest import Receiver

SVC = {"service": "ranker", "model": "ctr", "version": "v3"}
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
OM = "application/openmetrics-text; version=1.0.0; charset=utf-8"


def _exemplars(text: str, family: str) -> dict[str, str]:
    """``le`` -> trace id of each bucket sample of ``family`` that carries an exemplar."""
    fam = next(f for f in text_string_to_metric_families(text) if f.name == family)
    return {s.labels["le"]: s.exemplar.labels["trace_id"] for s in fam.samples if s.exemplar is not None}


def test_request_and_stage_histograms_point_to_kept_traces_in_openmetrics_only(receiver: Receiver) -> None:
    tr = setup("ranker", endpoint=receiver.url, sample_ratio=0.0, install_global=False)
    try:
        with Monitor(**SVC, tracing=tr) as m:
            async def predict(req: Request) -> PlainTextResponse:
                with m.stage("model"):
                    if req.query_params.get("fail"):
                        raise RuntimeError("model failed")
                return PlainTextResponse("ok")

            app = m.asgi(Starlette(routes=[Route("/predict", predict)]))
            client = TestClient(app, raise_server_exceptions=False)
            assert client.get("/predict").status_code == 200  # ratio 0, fast, ok: dropped
            assert client.get("/predict?fail=1").status_code == 500  # failed: always kept
            assert tr.force_flush(60)
            assert receiver.wait_for(lambda spans: len(spans) == 2)
            om, text = m.metrics_text(openmetrics=True), m.metrics_text()
    finally:
        tr.shutdown()
    (kept,) = {s.trace_id for s in receiver.spans}
    requests = _exemplars(om, "inferwatch_request_duration_seconds")
    stages = _exemplars(om, "inferwatch_stage_duration_seconds")
    assert set(requests.values()) == {kept} and set(stages.values()) == {kept}  # never the dropped one
    assert len(requests) == 1  # the latest kept request of its bucket
    assert " # {" not in text  # the text format cannot carry exemplars: none served there


def _stamped(om: str, ts: str = "1700000000") -> str:
    """The exposition with every sample stamped (``promtool tsdb create-blocks-from`` needs times)."""
    out = []
    for line in om.splitlines():
        if line.startswith("#"):
            out.append(line)
        elif " # {" in line:
            sample, exemplar = line.split(" # {", 1)
            out.append(f"{sample} {ts} # {{{exemplar}")
        else:
            out.append(f"{line} {ts}")
    return "\n".join(out) + "\n"


def test_promtool_accepts_the_exposition_with_exemplars(require_tool: Callable[..., str],
                                                        tmp_path: Path) -> None:
    promtool = require_tool("promtool")
    with Monitor(**SVC) as m:
        m.record_request("/predict", 200, 0.3)
        m.record_exemplar("/predict", 0.3, TRACE)
        with m.stage("model"):
            pass
        om, text = m.metrics_text(openmetrics=True), m.metrics_text()
    assert _exemplars(om, "inferwatch_request_duration_seconds") == {"0.5": TRACE}
    lint = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                          timeout=60)
    assert lint.returncode == 0 and not lint.stdout.strip(), lint.stdout + lint.stderr
    # Prometheus's own OpenMetrics parser reads the exemplars (and refuses a broken one)
    for name, body, ok in (("good", _stamped(om), True),
                           ("bad", _stamped(om).replace('trace_id="', "trace_id="), False)):
        (tmp_path / f"{name}.om").write_text(body)
        cmd = [promtool, "tsdb", "create-blocks-from", "openmetrics", str(tmp_path / f"{name}.om"),
               str(tmp_path / f"{name}-blocks")]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert (out.returncode == 0) is ok, (name, out.stdout + out.stderr)


# --- the scraper's parser ---------------------------------------------------------------------------

BODY = f"""# TYPE lat_seconds histogram
lat_seconds_bucket{{le="0.5"}} 3 # {{trace_id="{TRACE}"}} 0.31 1700000000.5
lat_seconds_bucket{{le="+Inf"}} 4 # {{trace_id="{TRACE[::-1]}"}} 2.5
lat_seconds_count 4
lat_seconds_sum 3.2
# EOF
"""


def test_the_parser_reads_openmetrics_samples_and_exemplars() -> None:
    p = ExpositionParser({"job": "api", "instance": "h:1"})
    for _ in range(2):  # the second scrape runs on the warm series cache
        parsed = p.parse(BODY, 100.0, OM)
        assert [(ls["__name__"], v) for ls, v in zip(parsed.labels, parsed.v, strict=True)] == [
            ("lat_seconds_bucket", 3.0), ("lat_seconds_bucket", 4.0), ("lat_seconds_count", 4.0),
            ("lat_seconds_sum", 3.2)]
        bucket = Labels.of("lat_seconds_bucket", instance="h:1", job="api", le="0.5")
        assert parsed.exemplars[0] == (bucket, {"trace_id": TRACE}, 0.31, 1700000000.5)
        assert parsed.exemplars[1][2:] == (2.5, None)  # no time: the scrape's, as Prometheus


@pytest.mark.parametrize(("body", "error"), [
    # rule: an OpenMetrics body ends with '# EOF'
    ('x_total 1\n', "must end with '# EOF'"),
    # rule: a broken exemplar fails the scrape, naming the line
    ('x_total 1 # {trace_id="a"} oops\n# EOF\n', "line 1: bad exemplar value"),
    ('x_total 1 # {trace_id=a} 1\n# EOF\n', "line 1: invalid labels"),
    # rule: OpenMetrics times are seconds; a non-finite one is refused
    ("x_total 1 NaN\n# EOF\n", "line"),
])
def test_the_parser_refuses_bad_openmetrics(body: str, error: str) -> None:
    with pytest.raises(InputError, match=error):
        ExpositionParser({"job": "api"}).parse(body, 100.0, OM)


def test_a_label_value_may_hold_the_exemplar_separator() -> None:
    parsed = ExpositionParser({"job": "api"}).parse('x_total{path=" # {"} 1\n# EOF\n', 100.0, OM)
    assert [ls["path"] for ls in parsed.labels] == [" # {"] and parsed.exemplars == []


def test_openmetrics_timestamps_are_seconds() -> None:
    parsed = ExpositionParser({"job": "api"}).parse("x_total 1 1700000000.25\n# EOF\n", 100.0, OM)
    assert parsed.t == [1700000000.25] and not parsed.tracked  # explicit time: exempt from staleness


# --- the store ---------------------------------------------------------------------------------------

def test_the_store_keeps_a_bounded_ring_per_series_and_drops_repeats() -> None:
    store = ExemplarStore(per_series=2, max_series=2)
    a, b, c = (Labels.of("lat_bucket", le=le) for le in ("0.1", "0.5", "1"))
    ex = {"trace_id": TRACE}
    assert store.add(a, ex, 0.05, 10.0)
    assert not store.add(a, ex, 0.05, 10.0)  # duplicate: the same exemplar scraped again
    assert not store.add(a, ex, 0.07, 9.0)  # out of order
    assert not store.add(a, {"trace_id": "x" * 130}, 0.05, 11.0)  # labels over 128 characters
    assert store.add(a, ex, 0.06, 11.0) and store.add(a, ex, 0.08, 12.0)  # ring of 2: 10.0 goes
    assert [e.t for e in store.select([parse_matchers('{le="0.1"}')], 0, 100)[0].exemplars] == [11.0, 12.0]
    assert store.add(b, ex, 0.3, 10.0) and store.add(c, ex, 0.9, 10.0)  # max 2 series: a goes
    found = store.select([parse_matchers("{__name__='lat_bucket'}")], 0, 100)
    assert [r.series["le"] for r in found] == ["0.5", "1"]  # sorted by labels
    assert store.select([parse_matchers('{le="1"}')], 11.0, 100) == []  # outside the range
    assert len(store) == 2 and store.refused == 1


# --- inferwatch serve ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_serve_scrapes_exemplars_and_answers_query_exemplars_as_prometheus(tmp_path: Path) -> None:
    with Monitor(**SVC) as m, m.serve_metrics() as target:
        m.record_request("/predict", 200, 1.7)
        m.record_exemplar("/predict", 1.7, TRACE)
        m.flush()
        cfg = (f"server: {{data_dir: '{tmp_path}/data'}}\n"
               f"scrape: {{targets: [{{job: ranker, url: '{target.url}', interval: 1s}}]}}\n")
        with serve(cfg, tmp_path) as s, httpx.Client(base_url=s.url, timeout=30) as c:
            wait_scraped(c)
            query = ("histogram_quantile(0.99, sum by (le) "
                     "(rate(inferwatch_request_duration_seconds_bucket[5m])))")
            r = c.get("/api/v1/query_exemplars", params={"query": query})
            none = c.post("/api/v1/query_exemplars", data={"query": "1 + 1"})
            later = c.get("/api/v1/query_exemplars", params={"query": query, "start": "4102444800"})
            backwards = c.get("/api/v1/query_exemplars", params={"query": query, "start": "10", "end": "5"})
            bad_time = c.get("/api/v1/query_exemplars", params={"query": query, "start": "yesterday"})
            bad_query = c.get("/api/v1/query_exemplars", params={"query": "rate(x[5m]"})
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
    assert r.status_code == 200, r.text
    (series,) = r.json()["data"]
    (ex,) = series["exemplars"]
    assert series["seriesLabels"] == {
        "__name__": "inferwatch_request_duration_seconds_bucket", "instance": f"127.0.0.1:{target.port}",
        "job": "ranker", "le": "2.5", "model": "ctr", "route": "/predict", "service": "ranker",
        "version": "v3"}
    assert list(ex) == ["labels", "value", "timestamp"]
    assert ex["labels"] == {"trace_id": TRACE} and ex["value"] == "1.7"
    # a JSON number of seconds, as Prometheus writes it: an integer when the exemplar fell on a whole second
    assert type(ex["timestamp"]) in (int, float) and abs(ex["timestamp"] - time.time()) < 600
    assert none.json() == {"status": "success", "data": None}  # no selector: Prometheus answers null
    assert later.json() == {"status": "success", "data": []}
    assert (backwards.status_code, backwards.json()["error"]) == (
        400, "end timestamp must not be before start timestamp")
    assert bad_time.status_code == 400 and bad_time.json()["error"] == (
        "invalid parameter \"start\": Invalid time value for 'start': cannot parse \"yesterday\" to a valid "
        "timestamp")
    assert bad_query.status_code == 400 and bad_query.json()["errorType"] == "bad_data"


# --- alerts name example slow traces --------------------------------------------------------------------

class RecordingSink:
    def __init__(self) -> None:
        self.sent: list[Alert] = []

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        self.sent.extend(alerts)


def test_latency_alerts_name_the_slowest_traces_of_their_service() -> None:
    clock = SimulatedClock(10_000.0)
    comps = build_components(parse_config("storage: {type: memory}"), clock=clock)
    store = comps.scrape.exemplars
    for service, le, value, trace in (("ranker", "2.5", 1.9, "a" * 32), ("ranker", "2.5", 2.2, "b" * 32),
                                      ("ranker", "0.5", 0.3, "c" * 32), ("other", "5.0", 4.0, "d" * 32),
                                      ("ranker", "0.1", 0.05, "e" * 32)):
        series = Labels.of("inferwatch_request_duration_seconds_bucket", service=service, le=le, job="svc")
        age = 3600 if trace == "e" * 32 else 60  # e: older than the window
        assert store.add(series, {"trace_id": trace}, value, clock.now() - age)
        clock.advance(0.001)
    sink = RecordingSink()
    links = TraceLinks(sink, lambda: comps, base_url="http://iw.example:9464/")
    severe = Alert(Labels({"alertname": "SevereLatency", "tier": "P1", "service": "ranker"}),
                   {"summary": "P99 latency of ranker is over 1s"}, starts_at=clock.now(), value=2.1)
    errors = Alert(Labels({"alertname": "HighErrorRate", "tier": "P2", "service": "ranker"}), {}, value=0.1)
    resolved = replace(severe, ends_at=clock.now() - 1)
    links.send([severe, errors, resolved], clock.now())
    annotated, plain, done = sink.sent
    # the slowest of the alert's service in the window, one per trace: never another service's trace,
    # never one older than the window
    assert annotated.annotations == {
        "summary": "P99 latency of ranker is over 1s",
        "example_traces": f"{'b' * 32} (2.2s), {'a' * 32} (1.9s), {'c' * 32} (0.3s)",
        "trace_url": f"http://iw.example:9464/api/v1/traces/{'b' * 32}"}
    assert plain is errors and done is resolved  # a counter's rule and a resolved alert: unchanged
    comps.close()
