"""Differential: inferwatch's prober and the real blackbox_exporter (Debian's) on the same local
targets, the exporter configured by the ``blackbox.yml`` that ``inferwatch export`` writes."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from tests.probe._app import free_port
from tests.probe._targets import targets

from inferwatch.config import Config, parse_config
from inferwatch.export import ExportOptions
from inferwatch.export._blackbox import blackbox_config, module_name
from inferwatch.export._files import dump_yaml
from inferwatch.export._prometheus import prometheus_config
from inferwatch.server.ingest.probe import run_probe

pytestmark = pytest.mark.tools

CASES = [  # name, path, extra config, on the TLS server?
    ("ok", "/ok", "", False),
    ("e500", "/500", "", False),
    ("slow", "/slow", "", False),
    ("redirect", "/redirect", "", False),
    ("nofollow", "/redirect", "follow_redirects: false", False),
    ("mismatch", "/text", "expect: {body_regex: bye}", False),
    ("json", "/ok", 'expect: {json_path: "$.label", equals: dog}', False),
    ("tls", "/ok", "tls: {insecure_skip_verify: true}", True),
    ("tls-strict", "/ok", "", True),
]


def _config(plain: str, tls: str) -> Config:
    lines = [f"  - {{name: {n}, url: '{tls if on_tls else plain}{path}', timeout: 5s, {extra}}}"
             for n, path, extra, on_tls in CASES]
    return parse_config("probes:\n" + "\n".join(lines))


@contextmanager
def exporter(binary: str, config_file: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen([binary, f"--config.file={config_file}",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + 60
        while True:  # bounded by time: the exporter listens within a second
            try:
                httpx.get(url + "/-/healthy", timeout=5)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < end, "blackbox_exporter did not start"
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


def _metrics(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        m = re.match(r'^([a-z_]+)(\{phase="(\w+)"\})? (\S+)$', line)
        if m:
            out[m.group(1) + (f":{m.group(3)}" if m.group(3) else "")] = float(m.group(4))
    return out


def test_same_success_and_status_as_blackbox_exporter(tmp_path: Path,
                                                       require_tool: Callable[..., str]) -> None:
    binary = require_tool("prometheus-blackbox-exporter", "blackbox_exporter")
    with targets() as plain, targets(tmp_path) as tls:
        config = _config(plain.url, tls.url)
        bb_file = tmp_path / "blackbox.yml"
        bb_file.write_text(dump_yaml(blackbox_config(config)))
        ours = {p.name: run_probe(p) for p in config.probes}
        with exporter(binary, bb_file) as url:
            theirs = {p.name: _metrics(httpx.get(f"{url}/probe", timeout=30, params={
                "module": module_name(p), "target": p.url}).text) for p in config.probes}
    for name, r in ours.items():
        bb = theirs[name]
        theirs_seen = (bb["probe_success"] == 1, bb["probe_http_status_code"])
        assert (r.success, float(r.exchange.status)) == theirs_seen, (name, r.reason, bb)
        assert r.exchange.redirects == bb.get("probe_http_redirects", 0), name
        if name == "slow":  # the target answers after 0.3 s: both see it in processing, and in total
            assert r.exchange.phases["processing"] >= 0.29
            assert bb["probe_http_duration_seconds:processing"] >= 0.29
            assert abs(r.duration - bb["probe_duration_seconds"]) < 1.0  # loaded runners: a wide margin
    assert ours["tls"].exchange.cert_expiry == theirs["tls"]["probe_ssl_earliest_cert_expiry"]
    failed = [n for n, r in ours.items() if not r.success]
    assert failed == ["e500", "nofollow", "mismatch", "json", "tls-strict"]


def test_the_exported_blackbox_yml_passes_config_check(tmp_path: Path,
                                                       require_tool: Callable[..., str]) -> None:
    binary = require_tool("prometheus-blackbox-exporter", "blackbox_exporter")
    config = parse_config("""
probes:
  - {name: ranker-predict, url: 'http://127.0.0.1:8000/predict', method: POST, headers: {X-Key: s3cret},
     body: '{"x": 1}', labels: {service: ranker},
     expect: {status: [200], json_path: "$.label", equals: "cat"}}
  - {name: site, url: 'https://example.org/', follow_redirects: false, tls: {insecure_skip_verify: true},
     expect: {body_not_regex: "error"}}
""")
    path = tmp_path / "blackbox.yml"
    path.write_text(dump_yaml(blackbox_config(config)))
    out = subprocess.run([binary, "--config.check", f"--config.file={path}"], capture_output=True,
                         text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    jobs = {j["job_name"]: j for j in prometheus_config(config, ExportOptions())["scrape_configs"]}
    job = jobs["probe-ranker-predict"]
    assert job["params"] == {"module": ["inferwatch_ranker_predict"]} and job["metrics_path"] == "/probe"
    assert job["static_configs"] == [{"targets": ["http://127.0.0.1:8000/predict"],
                                      "labels": {"service": "ranker", "probe": "ranker-predict"}}]
    assert job["relabel_configs"][-1] == {"target_label": "__address__", "replacement": "127.0.0.1:9115"}
