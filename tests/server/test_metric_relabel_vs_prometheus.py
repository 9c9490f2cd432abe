"""``metric_relabel_configs`` against the real Prometheus 2.42: the same target, rules and stored series.

Both read one ``prometheus.yml`` (``serve`` through ``scrape.prometheus_config``) whose job
scrapes one loopback exposition every second with ``metric_relabel_configs`` that use every
action (drop, keep, replace with ``${1}`` and an empty result, a metric renamed through
``__name__``, labelmap, labeldrop, labelkeep, lowercase, uppercase, hashmod, keepequal,
dropequal) on the labels of each sample, the target's ``job`` and ``instance`` included. The
stored series (``/api/v1/series`` for the job) must have the same label sets in both, and
``scrape_samples_post_metric_relabeling`` the same value.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ._proc import serve
from .test_relabel_vs_prometheus import _free_port

pytestmark = pytest.mark.slow

EXPOSITION = """\
# TYPE http_requests_total counter
http_requests_total{method="GET",code="200",pod_name="r-1",zone="EU-West"} 10
http_requests_total{method="GET",code="200",pod_name="r-2",zone="eu"} 11
http_requests_total{method="POST",code="503",pod_name="r-2",zone="eu"} 2
# TYPE go_goroutines gauge
go_goroutines 12
# TYPE model_latency_seconds histogram
model_latency_seconds_bucket{model="ranker",le="0.1"} 3
model_latency_seconds_bucket{model="ranker",le="+Inf"} 5
model_latency_seconds_sum{model="ranker"} 0.7
model_latency_seconds_count{model="ranker"} 5
# TYPE gpu_memory_used_bytes gauge
gpu_memory_used_bytes{gpu="0",a="x",b="x"} 1
gpu_memory_used_bytes{gpu="1",a="x",b="y"} 2
# TYPE tenant_tokens_total counter
tenant_tokens_total{tenant="Acme",instance_id="i-1",extra="1"} 5
tenant_tokens_total{tenant="beta",instance_id="i-2",extra="2"} 6
# TYPE unlisted_total counter
unlisted_total 1
"""

RULES: list[dict[str, Any]] = [
    {"source_labels": ["__name__"], "regex": "go_.*", "action": "drop"},
    {"source_labels": ["__name__", "method"], "regex": "http_requests_total;(.*)", "target_label": "verb",
     "replacement": "${1}_x"},
    {"regex": "pod_(.+)", "action": "labelmap", "replacement": "k8s_$1"},
    {"regex": "pod_.*", "action": "labeldrop"},
    {"source_labels": ["zone"], "target_label": "zone_raw"},
    {"source_labels": ["zone"], "action": "lowercase", "target_label": "zone"},
    # keeps the series without zone ("" == "") and eu; drops EU-West (lowercased, no longer equal)
    {"source_labels": ["zone_raw"], "target_label": "zone", "action": "keepequal"},
    {"source_labels": ["tenant"], "action": "uppercase", "target_label": "TENANT"},
    {"source_labels": ["instance_id"], "action": "hashmod", "modulus": 4, "target_label": "shard"},
    # equal actions compare the joined source values with the target's ("" for a missing label, so
    # a series with neither is "equal"): a helper label makes gpu 0 the only equal one
    {"source_labels": ["b", "__name__"], "regex": "(.+);(.*)", "target_label": "__tmp_b",
     "replacement": "$1;$2"},
    {"source_labels": ["a", "__name__"], "target_label": "__tmp_b", "action": "dropequal"},  # drops gpu 0
    {"source_labels": ["__name__"], "regex": "model_latency_seconds_(.*)", "target_label": "__name__",
     "replacement": "inference_latency_seconds_$1"},
    {"source_labels": ["code"], "regex": "5..", "target_label": "code", "replacement": ""},  # removed
    {"source_labels": ["__name__"], "regex": "(http|inference|gpu|tenant)_.*", "action": "keep"},
    {"source_labels": ["job", "instance"], "separator": "@", "regex": "m@127\\.0\\.0\\.1:(\\d+)",
     "target_label": "port", "replacement": "p$1"},
    {"regex": "__name__|job|instance|method|code|verb|k8s_.*|zone.*|model|le|gpu|a|b|tenant|TENANT|shard|"
              "port", "action": "labelkeep"},  # drops instance_id, extra and __tmp_b
]


@pytest.fixture
def exposition() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = EXPOSITION.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    th.join(10)


def _series(base: str, within_s: float = 60.0) -> tuple[list[str], float]:
    """The job's stored series (sorted, the scrape's own left out) and its post-relabel sample count."""
    end = time.monotonic() + within_s
    last: Any = None
    while time.monotonic() < end:
        try:
            series = httpx.get(f"{base}/api/v1/series", params={"match[]": '{job="m"}'},
                               timeout=5).json()["data"]
            query = {"query": "scrape_samples_post_metric_relabeling"}
            post = httpx.get(f"{base}/api/v1/query", params=query, timeout=5).json()["data"]["result"]
        except (httpx.HTTPError, ValueError, KeyError):  # not up yet
            series, post = [], []
        mine = sorted(json.dumps(s, sort_keys=True) for s in series
                      if not s["__name__"].startswith("scrape_") and s["__name__"] != "up")
        last = (mine, post)
        if mine and post:
            return mine, float(post[0]["value"][1])
        time.sleep(0.2)
    raise AssertionError(f"{base}: no relabelled series within {within_s:g} s (last: {last})")


def test_same_series_after_metric_relabel_configs_as_prometheus(
        tmp_path: Path, exposition: str, require_tool: Callable[..., str]) -> None:
    binary = require_tool("prometheus")
    job = {"job_name": "m", "scrape_interval": "1s", "static_configs": [{"targets": [exposition]}],
           "metric_relabel_configs": RULES}
    (tmp_path / "prometheus.yml").write_text(json.dumps({"scrape_configs": [job]}))
    port = _free_port()
    config = json.dumps({"storage": {"type": "memory"}, "server": {"data_dir": str(tmp_path / "data")},
                         "scrape": {"prometheus_config": "prometheus.yml"}})
    with (tmp_path / "prometheus.log").open("w") as log:
        args = [binary, f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'prom'}", f"--web.listen-address=127.0.0.1:{port}"]
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    try:
        with serve(config, tmp_path) as s:
            want, got = _series(f"http://127.0.0.1:{port}"), _series(s.url)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    names = sorted(json.loads(x)["__name__"] for x in want[0])
    # what Prometheus kept: 2 http (EU-West dropped by keepequal), 4 renamed histogram series,
    # gpu 1 (gpu 0 dropped by dropequal), 2 tenants; go_* and unlisted_total dropped
    assert names == ["gpu_memory_used_bytes", "http_requests_total", "http_requests_total",
                     *["inference_latency_seconds_bucket"] * 2, "inference_latency_seconds_count",
                     "inference_latency_seconds_sum", "tenant_tokens_total", "tenant_tokens_total"]
    assert want[1] == 9.0
    assert got == want
