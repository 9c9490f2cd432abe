"""`inferwatch serve` runs the config's probes: their series in the store, their state in the API."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
from tests.probe._targets import targets
from tests.server._proc import serve, wait_query


def test_serve_probes_a_target_and_shows_it(tmp_path: Path) -> None:
    with targets() as t:
        config = f"""
storage: {{type: memory}}
server: {{data_dir: '{tmp_path / "data"}'}}
probes:
  - name: ranker-predict
    url: {t.url}/ok
    headers: {{X-Api-Key: hunter2}}
    interval: 1s
    timeout: 1s
    labels: {{service: ranker}}
    expect: {{status: [200], json_path: "$.label", equals: "cat"}}
  - name: ranker-broken
    url: {t.url}/500
    interval: 1s
    timeout: 1s
    labels: {{service: ranker}}
"""
        with serve(config, tmp_path) as s, httpx.Client(base_url=s.url, timeout=30) as client:
            ok = wait_query(client, 'probe_success{probe="ranker-predict",service="ranker"} == 1')
            bad = wait_query(client, 'probe_http_status_code{probe="ranker-broken"} == 500')
            probes = client.get("/api/v1/probes").json()["data"]
    assert ok[0]["metric"]["instance"] == t.url.split("//")[1]
    assert bad[0]["metric"]["service"] == "ranker"
    by_name = {p["name"]: p for p in probes}
    assert by_name["ranker-predict"]["success"] is True
    assert by_name["ranker-broken"]["last_failure_reason"] == "status 500, expected 2xx"
    assert "hunter2" not in "".join(s.lines)  # the header's secret never reaches the log


def test_serve_refuses_a_bad_golden_file_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "golden.jsonl").write_text('{"body": {"x": 1}, "expect": {"equals": "cat", "regex": "c"}}\n')
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text("storage: {type: memory}\nprobes:\n  - name: g\n    url: http://127.0.0.1:9/predict\n"
                   "    golden: {file: golden.jsonl}\n")
    out = subprocess.run([sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg),
                          "--listen", "127.0.0.1:0"], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)  # its default data directory (./data) is the test's own
    assert out.returncode != 0
    assert "golden.jsonl:1: expect needs exactly one of" in out.stderr
    assert "Traceback" not in out.stderr
