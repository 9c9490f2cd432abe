"""Issue 21 #10 and the OpenAPI document: Host check, webhook label names, the public-bind warning."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from inferwatch.server._hosts import allowed_hosts, exposure_warning, host_allowed

from ._proc import serve

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "t0k3n-for-tests"


@pytest.mark.parametrize(("listen", "host", "ok"), [
    ("127.0.0.1", "127.0.0.1:9464", True), ("127.0.0.1", "localhost", True), ("127.0.0.1", "[::1]:1", True),
    ("127.0.0.1", "evil.example:9464", False), ("127.0.0.1", "", False),  # DNS rebinding, no Host
    ("0.0.0.0", "evil.example", True),  # a public bind serves any name
])
def test_host_check(listen: str, host: str, ok: bool) -> None:
    assert host_allowed(host, allowed_hosts(listen)) is ok


def test_a_public_bind_is_warned_about() -> None:
    assert exposure_warning("127.0.0.1") is None
    warning = exposure_warning("0.0.0.0")
    assert warning is not None and "need no token" in warning


@pytest.mark.slow
def test_a_real_server_checks_host_and_webhook_labels_and_publishes_openapi(tmp_path: Path) -> None:
    cfg = f"server: {{data_dir: '{tmp_path}/data', api_token: {TOKEN}}}\n"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with serve(cfg, tmp_path) as s, httpx.Client(base_url=s.url, timeout=10) as c:
        assert c.get("/-/healthy").status_code == 200
        r = c.get("/api/v1/targets", headers={"Host": "evil.example"})
        assert r.status_code == 421 and "DNS rebinding" in r.json()["error"]
        for bad in ("", "a-b"):
            body = {"version": "4", "alerts": [{"status": "firing", "labels": {"alertname": "X", bad: "1"}}]}
            r = c.post("/api/v1/alertmanager", json=body, headers=auth)
            assert r.status_code == 400 and f"invalid label name {bad!r}" in r.json()["error"], r.text
        doc = c.get("/api/openapi.json").json()
        assert doc["openapi"] == "3.0.3"
        for path, ops in doc["paths"].items():  # every documented GET route exists
            if "get" in ops and "{" not in path:
                assert c.get(path).status_code != 404, path
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)


@pytest.mark.slow
def test_serve_warns_of_a_target_scraped_no_faster_than_the_lookback(tmp_path: Path) -> None:
    # rule: serve prints config check's warnings; a 5 m target leaves rules without samples
    cfg = (f"server: {{data_dir: '{tmp_path}/data'}}\n"
           "scrape: {targets: [{job: nab, url: 'http://127.0.0.1:9/metrics', interval: 5m}]}\n")
    with serve(cfg, tmp_path) as s, httpx.Client(base_url=s.url, timeout=10) as c:
        assert c.get("/-/healthy").status_code == 200
    warned = [line for line in s.lines if "warning: scrape target nab/127.0.0.1:9: interval 5m" in line]
    assert len(warned) == 1 and "scrape at most every 2m30s" in warned[0], "".join(s.lines)


@pytest.mark.slow
def test_the_openapi_fuzzer_finds_no_500_and_no_traceback() -> None:
    # the bounded CI run; longer runs and their figures are in benchmarks/RESULTS.md
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_fuzz.py"), "--cases", "300",
                          "--seed", "21"], capture_output=True, text=True, timeout=600, check=False)
    summary = json.loads(out.stdout)
    assert out.returncode == 0, summary
    assert summary["failed"] == 0 and summary["server_tracebacks"] == 0, summary
    assert sum(summary["statuses"].values()) == 300
