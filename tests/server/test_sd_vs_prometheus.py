"""File and HTTP discovery against the real Prometheus 2.42: the same prometheus.yml, the same targets.

``serve`` reads Prometheus's own ``prometheus.yml`` (``scrape.prometheus_config``); both read the
same file_sd files (JSON and YAML, through a glob) and the same HTTP SD endpoint (a
loopback server), with the same ``relabel_configs``; ``/api/v1/targets`` must show the same active
targets (discovered labels, labels, scrape URL) and the same dropped ones — first as started, then
after the files are edited while both run (a target added, one removed, one dropped by the rules).
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
from .test_relabel_vs_prometheus import _free_port, _shown

pytestmark = pytest.mark.slow

RULES: list[dict[str, Any]] = [
    {"regex": "__meta_(.*)", "action": "labelmap", "replacement": "meta_$1"},
    {"source_labels": ["__meta_filepath"], "regex": ".*/b\\.yml", "target_label": "format",
     "replacement": "yaml"},
    {"source_labels": ["tier"], "regex": "canary", "action": "drop"},
    {"source_labels": ["__address__"], "regex": "([^:]+)(:\\d+)?", "target_label": "host"},
    {"regex": "meta_url", "action": "labeldrop"},
]
HTTP_GROUPS = [{"targets": ["127.0.0.1:21", "db:5432"], "labels": {"svc": "ranker"}},
               {"targets": ["127.0.0.1:22"], "labels": {"tier": "canary"}}]


@pytest.fixture
def http_sd() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = json.dumps(HTTP_GROUPS).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/sd"
    server.shutdown()
    server.server_close()
    th.join(10)


def _files(sd: Path, edited: bool) -> None:
    a = [{"targets": ["127.0.0.1:11", "127.0.0.1:12"], "labels": {"team": "search"}},
         {"targets": ["localhost"], "labels": {"tier": "canary"}}]
    if edited:  # one target removed, one added, the canary gone
        a = [{"targets": ["127.0.0.1:11", "127.0.0.1:13"], "labels": {"team": "search"}}]
    (sd / "a.json").write_text(json.dumps(a))
    (sd / "b.yml").write_text("- targets: ['10.1.2.3:9100']\n  labels: {zone: eu}\n")


def _jobs(sd: Path, url: str) -> list[dict[str, Any]]:
    return [{"job_name": "files", "file_sd_configs": [{"files": [str(sd / "*.json"), str(sd / "*.yml")]}],
             "relabel_configs": RULES, "metrics_path": "/m", "params": {"module": ["x"]}},
            {"job_name": "http", "http_sd_configs": [{"url": url, "refresh_interval": "5s"}],
             "relabel_configs": RULES}]


def _targets(base: str, want: int, within_s: float = 60.0, *, unlike: Any = None) -> Any:
    """``base``'s targets once there are ``want`` of them (and they differ from ``unlike``)."""
    end = time.monotonic() + within_s
    shown = None
    while time.monotonic() < end:
        try:
            data = httpx.get(f"{base}/api/v1/targets", timeout=5).json()["data"]
            shown = _shown(data)
        except (httpx.HTTPError, ValueError, KeyError):  # not up yet, or not ready (a plain-text 503)
            shown = None
        if shown is not None and len(shown[0]) + len(shown[1]) == want and shown != unlike:
            return shown
        time.sleep(0.2)
    raise AssertionError(f"{base}: not {want} targets within {within_s:g} s (last: {shown})")


def test_same_discovered_targets_as_prometheus_before_and_after_an_edit(
        tmp_path: Path, http_sd: str, require_tool: Callable[..., str]) -> None:
    binary = require_tool("prometheus")
    sd = tmp_path / "sd"  # both read the same files
    sd.mkdir()
    _files(sd, edited=False)
    (tmp_path / "prometheus.yml").write_text(json.dumps(
        {"global": {"scrape_interval": "1m", "scrape_timeout": "10s"}, "scrape_configs": _jobs(sd, http_sd)}))
    port = _free_port()
    # serve reads the very same prometheus.yml, as it is
    config = json.dumps({"storage": {"type": "memory"}, "server": {"data_dir": str(tmp_path / "data")},
                         "scrape": {"prometheus_config": "prometheus.yml"}})
    with (tmp_path / "prometheus.log").open("w") as log:
        args = [binary, f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'prom'}", f"--web.listen-address=127.0.0.1:{port}"]
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    try:
        with serve(config, tmp_path) as s:
            prom = f"http://127.0.0.1:{port}"
            want, got = _targets(prom, 7), _targets(s.url, 7)
            assert (len(want[0]), len(want[1])) == (5, 2)  # the canaries dropped by the rules
            assert got == want
            _files(sd, edited=True)
            want2, got2 = _targets(prom, 6, unlike=want), _targets(s.url, 6, unlike=got)
            assert (len(want2[0]), len(want2[1])) == (5, 1)
            assert got2 == want2
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
