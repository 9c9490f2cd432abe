"""Issue 55: Prometheus agrees with the exported outlier rule on the benchmark's data.

One simulated fleet of ``benchmarks/bench_outliers.py`` (16 replicas' P99: daily swing, member
bias, autocorrelated noise, transient spikes; one replica drifting 1.5x for 15 minutes) is
replayed through inferwatch's evaluator; its firing alerts at every minute become the expected
alerts of a promtool test file, which ``promtool test rules`` checks against the exported rule.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import yaml

from inferwatch.config import parse_config
from inferwatch.rules import AlertState, load_rules, run_replay, to_prometheus_rule_yaml
from inferwatch.rules._testfile import parse_test_file

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_outliers.py"
CONFIG = """
rules:
  default_pack: false
  rules:
    - name: ReplicaSlow
      dimension: service
      tier: P1
      outlier: {expr: fleet_value, peers_by: [model], member: instance, tolerance: 3, min_peers: 3,
                min_deviation: 0.02, direction: above}
      for: 1m
"""


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_outliers_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _series(steps: int = 120, n: int = 16) -> dict[str, list[float]]:
    bench = _bench()
    rng = np.random.default_rng(7)
    t = bench.T0 + np.arange(steps) * bench.STEP
    v = bench.METRICS["latency"].values(rng, n, steps, t)
    v[40:70, 5] = bench.METRICS["latency"].drifted(v[40:70, 5], 1.5)  # 20m to 35m
    return {f'fleet_value{{model="ranker",instance="m{j:02d}"}}': [float(x) for x in v[:, j]]
            for j in range(n)}


@pytest.mark.tools
def test_promtool_gives_the_same_alerts_on_a_simulated_fleet(
        tmp_path: Path, require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    series = _series()
    doc = {"rule_files": ["inferwatch_rules.yaml"], "evaluation_interval": "30s", "tests": [{
        "interval": "30s",
        "input_series": [{"series": s, "values": " ".join(repr(x) for x in vals)}
                         for s, vals in series.items()],
        # a first pass evaluates up to the last eval_time: 59m (its expectation is not read)
        "alert_rule_test": [{"eval_time": "59m", "alertname": "ReplicaSlow", "exp_alerts": []}]}]}
    rules = load_rules(parse_config(CONFIG))
    # inferwatch's firing alerts at every minute (its replay's timeline), written as the expectation
    result = run_replay(parse_test_file(yaml.safe_dump(doc), "fleet.yaml"), rules)
    tests = []
    for minute in range(60):
        last = {e["labels"]["instance"]: e for e in result.timeline if e["t"] <= minute * 60.0}
        firing = [{"exp_labels": {k: v for k, v in e["labels"].items() if k != "alertname"}}
                  for e in last.values() if e["state"] == AlertState.FIRING.value]
        tests.append({"eval_time": f"{minute}m", "alertname": "ReplicaSlow", "exp_alerts": firing})
    assert any(a["exp_labels"]["instance"] == "m05" for t in tests for a in t["exp_alerts"]), \
        "the drifting replica should fire at some minute (else the check says little)"
    doc["tests"][0]["alert_rule_test"] = tests  # type: ignore[index]
    text = yaml.safe_dump(doc, sort_keys=False, width=10_000)
    assert run_replay(parse_test_file(text, "fleet.yaml"), rules).ok  # the expectation is inferwatch's
    (tmp_path / "inferwatch_rules.yaml").write_text(to_prometheus_rule_yaml(rules))
    (tmp_path / "fleet.yaml").write_text(text)
    proc = subprocess.run([promtool, "test", "rules", "fleet.yaml"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]

