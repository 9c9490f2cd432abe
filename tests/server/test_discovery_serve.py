"""`inferwatch serve` with file discovery: a file edited while serve runs brings a target, then takes it.

One serve for the whole story: the target appears and is scraped, a half-written file keeps it
(and the self-metric says discovery is failing), the target removed from the file goes stale:
``up`` for it is gone from instant queries at once.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from ._proc import serve, wait_query
from .conftest import FakeTarget

pytestmark = pytest.mark.slow

CONFIG = """\
storage: {type: memory}
server: {data_dir: DATA}  # in tmp_path, not in the directory the tests run from
scrape:
  jobs:
    - job: replicas
      interval: 1s
      timeout: 1s
      file_sd_configs: [{files: [sd/*.json], refresh_interval: 10m}]
"""


def _until(client: httpx.Client, check: object, what: str, within_s: float = 60.0) -> None:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if check(client):  # type: ignore[operator]
            return
        client.get("/-/healthy")  # a round trip: discovery and scrape threads run meanwhile
    raise AssertionError(f"not {what} within {within_s:g} s")


def _sd_failing(client: httpx.Client) -> bool:
    return 'inferwatch_sd_failing{job="replicas",mechanism="file"} 1.0' in client.get("/metrics").text


def _up(client: httpx.Client) -> list[object]:
    return list(client.get("/api/v1/query", params={"query": 'up{job="replicas"}'}).json()["data"]["result"])


def test_a_target_written_to_the_file_is_scraped_then_goes_stale_when_removed(
        tmp_path: Path, target: FakeTarget) -> None:
    target.body = "req_total 3\n"
    (tmp_path / "sd").mkdir()
    sd = tmp_path / "sd" / "replicas.json"  # relative in the config: read beside the config file
    sd.write_text("[]")
    address = target.url.split("/")[2]
    config = CONFIG.replace("DATA", str(tmp_path / "data"))
    with serve(config, tmp_path) as s, httpx.Client(base_url=s.url, timeout=10) as c:
        sd.write_text(json.dumps([{"targets": [address], "labels": {"replica": "r1"}}]))
        (up,) = wait_query(c, 'up{job="replicas"}')
        assert up["metric"] == {"__name__": "up", "instance": address, "job": "replicas",
                                "replica": "r1"}
        (active,) = c.get("/api/v1/targets").json()["data"]["activeTargets"]
        assert active["discoveredLabels"]["__meta_filepath"] == str(sd)
        sd.write_text('[{"targets": [')  # half written: the last good targets stay
        _until(c, _sd_failing, "reported failing")
        assert len(c.get("/api/v1/targets").json()["data"]["activeTargets"]) == 1
        sd.write_text("[]")
        _until(c, lambda cl: not _up(cl), "stale")
        assert c.get("/api/v1/targets").json()["data"]["activeTargets"] == []
        assert wait_query(c, 'req_total{job="replicas"}[1h]')  # the samples stay, only stale now
    log = "".join(s.lines)
    assert "discovery for job replicas (file) failed, its last targets are kept" in log
    assert "(0 targets, 1 discovery job," in log
