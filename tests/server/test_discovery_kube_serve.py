"""`inferwatch serve` with ``kubernetes_sd_configs`` (role ``endpoints``) against the local API fake.

One serve for the story of a scale-out and a scale-in: a service's endpoints name one replica
(a pod), serve lists and watches endpoints, services and pods, keeps the target by the service's
label and scrapes it; a second replica added to the endpoints while serve runs is scraped too,
with its pod's labels; removed again, its ``up`` goes stale at once (no ``up == 0`` to page on).
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ._kube_fake import FakeKube, fake_kube, pod
from ._proc import serve
from .conftest import FakeTarget
from .test_discovery_serve import _until

pytestmark = pytest.mark.slow


@pytest.fixture
def second() -> Iterator[int]:
    """Another replica's /metrics on loopback; its port."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = b"req_total 7\n"
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
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()
    th.join(10)


def _endpoints(ports: list[int]) -> dict[str, Any]:
    subsets = []
    for i, port in enumerate(ports):
        ref = {"kind": "Pod", "name": f"ranker-{i + 1}", "namespace": "ml"}
        subsets.append({"addresses": [{"ip": "127.0.0.1", "nodeName": "gpu-node-1", "targetRef": ref}],
                        "ports": [{"name": "metrics", "port": port, "protocol": "TCP"}]})
    return {"metadata": {"name": "ranker", "namespace": "ml"}, "subsets": subsets}


def _pods(c: httpx.Client) -> list[str]:
    result = c.get("/api/v1/query", params={"query": 'up{job="ranker"} == 1'}).json()["data"]["result"]
    return sorted(r["metric"].get("pod", "") for r in result)


def test_replicas_added_and_removed_in_the_endpoints_are_scraped_then_go_stale(
        tmp_path: Path, target: FakeTarget, second: int) -> None:
    target.body = "req_total 3\n"
    first = int(target.url.split("/")[2].rsplit(":", 1)[1])
    kube: FakeKube
    with fake_kube() as kube:
        kube.put("services", {"metadata": {"name": "ranker", "namespace": "ml", "labels": {"app": "ranker"}},
                              "spec": {}})
        kube.put("services", {"metadata": {"name": "other", "namespace": "ml"}, "spec": {}})
        for i, port in enumerate((first, second)):
            kube.put("pods", pod(f"ranker-{i + 1}", "127.0.0.1", namespace="ml", ports=(port,)))
        kube.put("endpoints", _endpoints([first]))
        job = {"job": "ranker", "interval": "1s", "timeout": "1s",
               "kubernetes_sd_configs": [{"role": "endpoints", "api_server": kube.url,
                                          "namespaces": {"names": ["ml"]}}],
               "relabel_configs": [
                   {"source_labels": ["__meta_kubernetes_service_label_app"], "regex": "ranker",
                    "action": "keep"},
                   {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
                   {"source_labels": ["__meta_kubernetes_pod_container_port_name"], "target_label": "port"}]}
        config = json.dumps({"storage": {"type": "memory"}, "server": {"data_dir": str(tmp_path / "data")},
                             "scrape": {"jobs": [job]}})
        with serve(config, tmp_path) as s, httpx.Client(base_url=s.url, timeout=10) as c:
            _until(c, lambda cl: _pods(cl) == ["ranker-1"], "the first replica scraped")
            kube.put("endpoints", _endpoints([first, second]))  # scale out
            _until(c, lambda cl: _pods(cl) == ["ranker-1", "ranker-2"], "the added replica scraped")
            (r2,) = [t for t in c.get("/api/v1/targets").json()["data"]["activeTargets"]
                     if t["labels"].get("pod") == "ranker-2"]
            assert r2["labels"]["port"] == "metrics" and r2["scrapeUrl"] == f"http://127.0.0.1:{second}/metrics"
            assert r2["discoveredLabels"]["__meta_kubernetes_endpoint_node_name"] == "gpu-node-1"
            kube.put("endpoints", _endpoints([first]))  # scale in
            _until(c, lambda cl: _pods(cl) == ["ranker-1"], "the removed replica gone")
            up = c.get("/api/v1/query", params={"query": 'up{job="ranker"}'}).json()["data"]["result"]
            assert [r["metric"]["pod"] for r in up] == ["ranker-1"]  # stale: no up == 0 left to page on
    log = "".join(s.lines)
    assert "(0 targets, 1 discovery job," in log and "Traceback" not in log
    watched = {path for path, q in kube.requests if q.get("watch") == "true"}
    assert watched == {"/api/v1/namespaces/ml/endpoints", "/api/v1/namespaces/ml/services",
                       "/api/v1/namespaces/ml/pods"}
