"""A real ``inferwatch serve`` evaluates an SLO end to end: scraped requests -> Sloth's recordings ->
the fast-burn page -> ``/api/v1/slos``, ``/api/v1/rules``, ``inferwatch slo status``.

The target serves a request counter that grows by 100 a second, half of it 5xx: a 500x burn
of a 99.9 % objective, so the fast page fires on the second evaluation that sees a rate.
Every wait polls the server for a condition; nothing sleeps.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from tests.server._proc import serve

from slo._target import target  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow


def _wait(client: httpx.Client, predicate: object, what: str, within_s: float = 90.0) -> dict[str, object]:
    # bounded by time, not by a count of polls: a poll on loopback takes ~2 ms on an idle machine, so a
    # count gave the server only a second or two of rounds on a fast one (the page needs the guard's
    # 100 events in its long window and a couple of evaluation rounds)
    deadline = time.monotonic() + within_s
    while True:
        data = client.get("/api/v1/slos").json()["data"][0]
        if predicate(data):  # type: ignore[operator]
            return data  # type: ignore[no-any-return]
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not seen within {within_s:.0f} s: {data}")


def test_serve_pages_on_a_fast_burn(tmp_path: Path, target: str) -> None:  # noqa: F811 - the fixture
    config = (f"server: {{data_dir: '{tmp_path / 'data'}', evaluation_interval: 500ms, api_token: t}}\n"
              f"scrape: {{targets: [{{job: ranker, url: '{target}', interval: 250ms}}]}}\n"
              "rules: {default_pack: false}\n"
              "slos: [{service: ranker, type: availability, objective: 99.9}]\n")
    with serve(config, tmp_path) as s, httpx.Client(base_url=s.url, timeout=10) as client:
        data = _wait(client, lambda d: any(a["state"] == "firing" for a in d["alerts"]), "a firing page")
        assert data["id"] == "ranker-availability" and data["objective"] == 99.9
        assert data["sli"] == pytest.approx(0.5, abs=0.05)
        five = next(w for w in data["windows"] if w["window"] == "5m")
        assert five["burn_rate"] == pytest.approx(500, rel=0.1)  # 50 % errors over a 0.1 % budget
        assert "fast_page" in data["burning"]
        firing = {a["alertname"] for a in data["alerts"] if a["state"] == "firing"}
        assert "SLORankerAvailabilityFastBurn" in firing
        # Sloth's series are in the store, queryable like any other
        query = 'slo:sli_error:ratio_rate1h{sloth_id="ranker-availability"}'
        q = client.get("/api/v1/query", params={"query": query})
        result = q.json()["data"]["result"]
        assert result and result[0]["metric"]["sloth_window"] == "1h"
        groups = client.get("/api/v1/rules").json()["data"]["groups"]
        names = [g["name"] for g in groups]
        assert "sloth-slo-sli-recordings-ranker-availability" in names
        recording = [r for g in groups for r in g["rules"] if r["type"] == "recording"]
        assert len(recording) == 15
        status = subprocess.run(
            [sys.executable, "-m", "inferwatch", "slo", "status", "--url", s.url], capture_output=True,
            text=True, timeout=60, check=False, env={**os.environ, "INFERWATCH_CONFIG": ""},
            cwd=tmp_path)  # no config: the client's default data directory is ./data, the test's own
        assert status.returncode == 0, status.stderr
        assert "ranker-availability: objective 99.9%" in status.stdout
        assert "firing: SLORankerAvailabilityFastBurn" in status.stdout
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
