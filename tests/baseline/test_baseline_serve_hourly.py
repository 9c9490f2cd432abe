"""A short hourly series in a real `inferwatch serve`: judged after its warm-up, alerts on the anomaly.

The target serves (as ``nab_value``) a synthetic hourly series (a daily cycle with noise, 300 hours) at the
row of the server's compressed clock; the server evaluates every hour (its clock: 200 ms)
and scrapes every half hour. Two dynamic rules watch it: the shipped default
(``HourlyBand``: the band, 2 days = 48 hourly points of warm-up) and the same with the
novelty detector on (``HourlyNovel``: ``novelty: true``, its warm-up shown beside the
band's). The helpers (replay, receiver, server process) are the NAB serve test's; every
step waits on an event, never on a sleep.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest
from tests.baseline.test_baseline_serve import Replay, Serve, serving

pytestmark = pytest.mark.slow

HOUR = 3600.0
ROWS = 300
ANOMALY = 250  # twelve hours 25 above the cycle (2.5x its amplitude): 2.4 s of real time, several rounds
LENGTH = 12  # even where a loaded runner skips some (6 hours: the band missed it once in a two-worker run)
SPEED = 18000.0  # an hour of the server's clock in 200 ms
START = 1_800_000_000.0


def _series() -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(7)
    t = START + np.arange(ROWS) * HOUR
    v = 50 + 10 * np.sin(2 * np.pi * t / 86400) + rng.normal(0, 0.5, ROWS)
    v[ANOMALY : ANOMALY + LENGTH] += 25
    return t.tolist(), v.tolist()


def _config(path: Path, replay: Replay, hook_url: str) -> Path:
    rule = ("{{name: {name}, dimension: service, tier: P1, threshold: dynamic, for: 2h, "
            "dynamic: {{direction: above{extra}}}, "
            "signal: {{type: expr, expr: 'last_over_time(nab_value[1h])'}}}}")
    path.write_text(f"""
server: {{data_dir: '{path.parent / "data"}', evaluation_interval: 1h}}
scrape: {{targets: [{{job: hourly, url: '{replay.url}', interval: 30m}}]}}
baseline: {{novelty: {{min_points: 96}}}}
rules:
  default_pack: false
  rules:
    - {rule.format(name="HourlyBand", extra="")}
    - {rule.format(name="HourlyNovel", extra=", novelty: true")}
alerting:
  route: {{receiver: hook, group_by: [alertname], group_wait: 0s}}
  receivers: [{{name: hook, type: webhook, url: '{hook_url}'}}]
  default_actions: false
""")
    return path


def _warmup(url: str) -> dict[str, dict[str, float]]:
    rules = httpx.get(f"{url}/api/v1/rules", timeout=5).json()["data"]["groups"][0]["rules"]
    return {r["name"]: (r["bands"][0]["warmup"] if r["bands"] else {}) for r in rules}


def test_serve_judges_a_short_hourly_series_after_its_warm_up_and_alerts_on_the_anomaly(
        tmp_path: Path) -> None:
    # rule: on an hourly series the band is judgeable after 48 points (2 days), not days of
    # 5-minute history; `serve` shows the warm-up (the novelty detector's too, where on); no
    # alert before the anomaly, both rules alert on it
    times, values = _series()
    replay = Replay(times, values, row=0, stop_at=ROWS)
    with serving(replay) as hook:
        cfg = _config(tmp_path / "inferwatch.yml", replay, hook.url)
        early, late = replay.event(30), replay.event(ANOMALY - 5)
        server = Serve(cfg, times[0], replay, SPEED)
        try:
            assert early.wait(60), f"the replay stalled at row {replay.row}"
            warm = _warmup(server.url)
            band = warm["HourlyBand"]
            assert not band or band["points"] < band["min_points"] == 48, warm  # still warming up
            assert late.wait(120), f"the replay stalled at row {replay.row}"
            warm = _warmup(server.url)
            assert warm["HourlyBand"], server.state()
            assert warm["HourlyBand"]["points"] >= 48 and "novelty_points" not in warm["HourlyBand"]
            assert warm["HourlyNovel"]["novelty_points"] >= warm["HourlyNovel"]["novelty_min_points"]
            assert not hook.firing, hook.firing  # learned, quiet on the normal days
            done = replay.event(ANOMALY + 20)
            assert done.wait(60), f"the replay stalled at row {replay.row}\n{server.state()}"
        finally:
            err = server.stop()
    assert "Traceback" not in err, err
    listed = subprocess.run([sys.executable, "-m", "inferwatch", "rules", "list", "--config", str(cfg)],
                            capture_output=True, text=True, check=True,
                            env={k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")})
    # the saved state shows both warm-ups: the band's and, on HourlyNovel, the detector's
    assert re.search(r"learned \(\d+/48 samples, [\d.]+/2\.0 days; novelty \d+/96 samples\)",
                     listed.stdout), listed.stdout
    # the rules' alerts only: on a loaded runner at 18000x the pipeline's own NotificationsFailing
    # (three slow answers from the test's webhook in a row) reached the hook once
    fired = {name: row for row, names in hook.firing for name in names if name.startswith("Hourly")}
    assert set(fired) == {"HourlyBand", "HourlyNovel"}, hook.firing
    assert all(ANOMALY < row <= ANOMALY + 20 for row in fired.values()), hook.firing
