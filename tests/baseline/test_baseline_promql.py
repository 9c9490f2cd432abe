"""The PromQL form of the baseline, checked (and run) by promtool."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

from inferwatch.baseline import BaselineSettings, promql_rules


@pytest.mark.parametrize("direction", ["above", "below", "both"])
def test_rules_pass_promtool_check(tmp_path: Path, require_tool: Callable[..., str],
                                   direction: str) -> None:
    promtool = require_tool("promtool")
    rules = promql_rules("api_p99", 'histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m])))',
                         direction=direction, fallback=1.0)  # type: ignore[arg-type]
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(rules, sort_keys=False))
    out = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    # 10 records of the band, 8 more of the long-memory range, 7 of the window means
    # (the residual, then a mean, its absolute value and its band for each of 6 and 24), the alert
    assert len(rules["groups"][0]["rules"]) == 26
    assert "SUCCESS: 26 rules found" in out.stdout


def test_alert_follows_the_debounce_and_merge_gap() -> None:
    # rule: for = debounce x interval, keep_firing_for = merge_gap x interval
    cfg = BaselineSettings(debounce=4, merge_gap=10)
    alert = promql_rules("x", "up", config=cfg, interval=30.0)["groups"][0]["rules"][-1]
    assert alert["for"] == "2m" and alert["keep_firing_for"] == "5m"


@pytest.mark.parametrize("name", ["has:colon", "1starts_with_digit", ""])
def test_bad_names_are_rejected(name: str) -> None:
    with pytest.raises(ValueError, match="baseline name"):
        promql_rules(name, "up")


_PROMTOOL_TEST = """
rule_files: [rules.yaml]
evaluation_interval: 5m
tests:
  - interval: 5m
    input_series:
      - series: 'latency{job="api"}'
        values: '1+0x320 9+0x5 1+0x40'   # a flat day, a 30-minute spike at 26h45m, flat again
    alert_rule_test:
      - {eval_time: 26h40m, alertname: lat_outside_baseline, exp_alerts: []}   # before the spike
      - {eval_time: 26h55m, alertname: lat_outside_baseline, exp_alerts: []}   # pending (for: 15m)
      - eval_time: 27h05m
        alertname: lat_outside_baseline
        exp_alerts:
          - exp_labels: {job: api, baseline: lat}
            exp_annotations:
              summary: lat left its seasonal baseline (both)
              description: value 9 outside the learned band
      - {eval_time: 28h30m, alertname: lat_outside_baseline, exp_alerts: []}   # after keep_firing_for
"""


def test_promtool_runs_the_rules_and_the_spike_fires(tmp_path: Path,
                                                     require_tool: Callable[..., str]) -> None:
    # rule: promtool as the oracle: the exported alert is pending, fires, resolves on schedule
    promtool = require_tool("promtool")
    # keep_firing_for 1h at 5m, so it resolves by 28h30m; the point band alone (window means
    # have their own test below)
    cfg = BaselineSettings(merge_gap=12, seasonal={"windows": ()})
    rules = promql_rules("lat", "latency", config=cfg, interval=300.0)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules))
    (tmp_path / "test.yaml").write_text(_PROMTOOL_TEST)
    out = subprocess.run([promtool, "test", "rules", "test.yaml"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def _shift_test(values: list[float], at: str, firing: bool) -> str:
    samples = " ".join(f"{x:.3f}" for x in values)
    exp = "[{labels: 'ALERTS{alertname=\"lat_outside_baseline\", alertstate=\"firing\", " \
          "baseline=\"lat\", job=\"api\"}', value: 1}]" if firing else "[]"
    return f"""
rule_files: [rules.yaml]
evaluation_interval: 5m
tests:
  - interval: 5m
    input_series:
      - series: 'latency{{job="api"}}'
        values: '{samples}'
    promql_expr_test:
      - {{expr: 'ALERTS{{alertname="lat_outside_baseline", alertstate="firing"}}', eval_time: 95h55m,
         exp_samples: []}}
      - {{expr: 'ALERTS{{alertname="lat_outside_baseline", alertstate="firing"}}', eval_time: {at},
         exp_samples: {exp}}}
"""


@pytest.mark.parametrize("windows", [(), (6, 24)])
def test_promtool_window_means_catch_a_sustained_small_shift(
        tmp_path: Path, require_tool: Callable[..., str], windows: tuple[int, ...]) -> None:
    # rule: with windows, the exported alert also fires when a window's mean residual leaves
    # its band: after 4 quiet days, a 2-sigma shift held for 3 h (inside the 6-sigma point
    # band; the 12 h level does not absorb it) fires only then
    promtool = require_tool("promtool")
    rng = np.random.default_rng(7)
    noise = rng.normal(0.0, 0.5, 1248)
    values = [10.0 + x + (1.0 if 1152 <= i < 1188 else 0.0) for i, x in enumerate(noise)]
    assert max(values[1152:1188]) < 10.0 + 6 * 0.5  # the point band alone cannot see it
    cfg = BaselineSettings(seasonal={"windows": windows})
    rules = promql_rules("lat", "latency", config=cfg, interval=300.0, level_window=12 * 3600.0)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules))
    (tmp_path / "test.yaml").write_text(_shift_test(values, "98h", firing=bool(windows)))
    out = subprocess.run([promtool, "test", "rules", "test.yaml"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("range_on", [False, True])
def test_promtool_long_memory_range_catches_a_drift_the_band_learns(
        tmp_path: Path, require_tool: Callable[..., str], range_on: bool) -> None:
    # rule: after 8 quiet days, a ramp of 1 per hour (a noise sigma every half hour) is followed
    # by the level, so the point band stays quiet; it passes the 8-day high by 10 % of the
    # range within hours, and only the range form fires
    promtool = require_tool("promtool")
    rng = np.random.default_rng(8)
    quiet = 8 * 288
    noise = rng.normal(0.0, 0.5, quiet + 96)
    values = [10.0 + x + max(0, i - quiet) / 12.0 for i, x in enumerate(noise)]
    seasonal = {} if range_on else {"range_horizon": 0}
    cfg = BaselineSettings(seasonal={**seasonal, "windows": ()})  # window means would see the ramp
    rules = promql_rules("lat", "latency", config=cfg, interval=300.0)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules))
    test = _shift_test(values, "199h", firing=range_on).replace("95h55m", "191h55m")
    (tmp_path / "test.yaml").write_text(test)
    out = subprocess.run([promtool, "test", "rules", "test.yaml"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
