"""Target relabelling against the real Prometheus 2.42: same targets and rules, same /api/v1/targets labels.

Both get the same static targets (none reachable: only the labels are compared) and the same
``relabel_configs``, which use every target-side action; active targets must have the same
``discoveredLabels`` and ``labels``, dropped ones the same ``discoveredLabels``.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from ._proc import serve

RULES: list[dict[str, Any]] = [
    {"source_labels": ["__address__"], "regex": "([^:]+):(\\d+)", "target_label": "port",
     "replacement": "${2}"},
    {"source_labels": ["team"], "action": "lowercase", "target_label": "team_lc"},
    {"source_labels": ["team"], "action": "uppercase", "target_label": "TEAM"},
    {"source_labels": ["__address__"], "action": "hashmod", "modulus": 1000, "target_label": "__tmp_shard"},
    {"source_labels": ["__tmp_shard"], "target_label": "shard"},
    {"regex": "__scrape_(.*)__", "action": "labelmap", "replacement": "scrape_$1"},
    {"source_labels": ["job"], "regex": "drop.*", "action": "drop"},
    {"source_labels": ["job"], "regex": "(dropeq)", "target_label": "__tmp_ref"},
    {"source_labels": ["job"], "target_label": "__tmp_ref", "action": "dropequal"},
    {"source_labels": ["team"], "regex": "Ranker", "target_label": "instance", "replacement": "ranker-$1x"},
    {"source_labels": ["__param_module"], "regex": "(.+)", "target_label": "module"},
    {"regex": "team", "action": "labeldrop"},
    {"source_labels": ["__address__", "job"], "separator": "@", "regex": ".*@c",
     "target_label": "__metrics_path__", "replacement": "/moved"},
]
# job: (address, labels, metrics path, params)
TARGETS: dict[str, tuple[str, dict[str, str], str, dict[str, str]]] = {
    "a": ("127.0.0.1:9", {"team": "Ranker"}, "/metrics", {}),
    "b": ("127.0.0.1:10", {"team": "search"}, "/metrics", {"module": "http_2xx"}),
    "c": ("localhost:11", {}, "/probe", {}),
    "drop-me": ("127.0.0.1:12", {"team": "x"}, "/metrics", {}),
    "dropeq": ("127.0.0.1:13", {}, "/metrics", {}),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _prometheus_yml() -> str:
    jobs = [{"job_name": job, "metrics_path": path, "params": {k: [v] for k, v in params.items()},
             "static_configs": [{"targets": [addr], "labels": labels}], "relabel_configs": RULES}
            for job, (addr, labels, path, params) in TARGETS.items()]
    return json.dumps({"global": {"scrape_interval": "1m", "scrape_timeout": "10s"}, "scrape_configs": jobs})


def _inferwatch_yml(data_dir: Path) -> str:
    targets = []
    for job, (addr, labels, path, params) in TARGETS.items():
        query = "".join(f"?{k}={v}" for k, v in params.items())
        url = f"http://{addr}{path}{query}"
        targets.append({"job": job, "url": url, "labels": labels, "relabel_configs": RULES})
    return json.dumps({"storage": {"type": "memory"}, "server": {"data_dir": str(data_dir)},
                       "scrape": {"targets": targets}})


def _shown(data: dict[str, Any]) -> tuple[list[str], list[str]]:
    active = sorted(json.dumps([t["scrapePool"], t["discoveredLabels"], t["labels"], t["scrapeUrl"]],
                               sort_keys=True) for t in data["activeTargets"])
    dropped = sorted(json.dumps(t["discoveredLabels"], sort_keys=True) for t in data["droppedTargets"])
    return active, dropped


def _targets(base: str, within_s: float = 60.0) -> tuple[list[str], list[str]]:
    """``base``'s targets once all five are there (Prometheus's discovery applies them a few seconds late)."""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            data = httpx.get(f"{base}/api/v1/targets", timeout=5).json()["data"]
        except (httpx.HTTPError, ValueError, KeyError):  # not up yet, or not ready (a plain-text 503)
            data = {"activeTargets": [], "droppedTargets": []}
        if len(data["activeTargets"]) + len(data["droppedTargets"]) == len(TARGETS):
            return _shown(data)
        time.sleep(0.2)
    raise AssertionError(f"{base}: not all {len(TARGETS)} targets within {within_s:g} s")


def test_same_active_and_dropped_targets_as_prometheus(
        tmp_path: Path, require_tool: Callable[..., str]) -> None:
    binary = require_tool("prometheus")
    (tmp_path / "prometheus.yml").write_text(_prometheus_yml())
    port = _free_port()
    with (tmp_path / "prometheus.log").open("w") as log:
        args = [binary, f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'prom'}", f"--web.listen-address=127.0.0.1:{port}"]
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    try:
        want = _targets(f"http://127.0.0.1:{port}")
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    with serve(_inferwatch_yml(tmp_path / "data"), tmp_path) as s:
        got = _targets(s.url)
    assert len(want[0]) == 3 and len(want[1]) == 2  # the rules dropped two targets in Prometheus
    assert got == want
