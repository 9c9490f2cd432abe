"""ExecutionProviderFallback end to end: two services with real ONNX Runtime sessions, one asked for
CUDAExecutionProvider on the CPU wheel (it falls back), one for the CPU; a real ``inferwatch serve``
scrapes both and the default rule pages for the first only."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from tests._onnx import GPU_ASK, session
from tests.server._proc import serve, wait_query, wait_scraped

from inferwatch.sdk import Monitor

pytestmark = pytest.mark.slow
RULE = "ExecutionProviderFallback"
FOR_S = 3.0


def _alerts(client: httpx.Client) -> list[dict[str, object]]:
    alerts = client.get("/api/v1/alerts").json()["data"]["alerts"]
    return [a for a in alerts if a["labels"]["alertname"] == RULE]


def _wait_firing(client: httpx.Client, within_s: float = 60.0) -> list[dict[str, object]]:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        alerts = _alerts(client)
        if any(a["state"] == "firing" for a in alerts):
            return alerts
        client.get("/-/healthy")  # a round trip: the evaluation thread runs meanwhile
    raise AssertionError(f"{RULE} did not fire within {within_s:g} s")


def test_a_session_that_fell_back_pages_and_one_on_what_it_asked_for_does_not(tmp_path: Path) -> None:
    with Monitor("ranker", "ctr", "v3") as gpu, Monitor("scorer", "tiny", "v1") as cpu:
        for m, providers in ((gpu, GPU_ASK), (cpu, ["CPUExecutionProvider"])):
            m.instrument_onnx(session(providers)).run(None, {"x": np.ones((2, 5), np.float32)})
        targets = [gpu.serve_metrics(), cpu.serve_metrics()]
        try:
            config = (f"server: {{data_dir: '{tmp_path / 'data'}', evaluation_interval: 1s}}\n"
                      f"scrape: {{targets: [{{job: ranker, url: '{targets[0].url}', interval: 1s}},\n"
                      f"                    {{job: scorer, url: '{targets[1].url}', interval: 1s}}]}}\n"
                      f"rules: {{overrides: {{{RULE}: {{for: {FOR_S:g}s}}}}}}\n")
            with serve(config, tmp_path) as served, httpx.Client(base_url=served.url, timeout=10) as client:
                wait_scraped(client, count=2)
                info = wait_query(client, "count(inferwatch_onnx_session_info) == 2")
                assert info
                alerts = _wait_firing(client)
                firing = [a for a in alerts if a["state"] == "firing"]
                assert len(firing) == 1 and len(alerts) == 1, alerts  # the CPU session: not even pending
                labels = firing[0]["labels"]
                assert isinstance(labels, dict)
                assert (labels["service"], labels["model"], labels["tier"]) == ("ranker", "ctr", "P1")
                assert (labels["requested_provider"], labels["provider"]) == (
                    "CUDAExecutionProvider", "CPUExecutionProvider")
                annotations = firing[0]["annotations"]
                assert isinstance(annotations, dict)
                assert "prob" in str(annotations["cpu_nodes"]).split(",")  # the nodes on the CPU, named
                assert "asked for CUDAExecutionProvider and runs on the CPU" in str(annotations["summary"])
                # the CPU service is scraped and evaluated all along: still no alert for it
                assert wait_query(client, 'inferwatch_onnx_session_info{model="tiny"}')
                assert [a for a in _alerts(client) if a["labels"]["model"] == "tiny"] == []
        finally:
            for t in targets:
                t.close()
