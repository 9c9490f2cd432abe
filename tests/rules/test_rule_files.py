"""Prometheus rule files read as they are (``rule_files``, also a prometheus.yml's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.rules._helpers import load

from inferwatch import ConfigError
from inferwatch.config import load_config
from inferwatch.model import SimulatedClock, Tier
from inferwatch.rules import AlertState, Evaluator
from inferwatch.server import config_warnings
from inferwatch.slo import load_rule_set

RULES = """\
groups:
  - name: jobs
    interval: 30s
    rules:
      - record: job:up:sum
        expr: sum by (job) (up)
      - alert: JobDown
        expr: job:up:sum == 0
        for: 2m
        labels: {severity: critical, team: ml}
        annotations: {summary: "{{ $labels.job }} is down ({{ $value }} up)"}
"""


def _config(tmp_path: Path, rules: str = RULES, own: str = "rule_files: [rules/*.yml]\n") -> Path:
    (tmp_path / "rules").mkdir(exist_ok=True)
    (tmp_path / "rules" / "jobs.yml").write_text(rules)
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text("rules: {default_pack: false}\n" + own)
    return cfg


def test_recording_and_alerting_rules_run_as_prometheus_runs_them(tmp_path: Path) -> None:
    rule_set = load_rule_set(load_config(_config(tmp_path)))
    (down,) = rule_set.alerts
    assert (down.name, down.tier) == ("JobDown", Tier.P0)
    assert dict(down.labels) == {"severity": "critical", "team": "ml"}
    store = load({'up{job="ranker",instance="a"}': "1 0 0 0 0", 'up{job="ranker",instance="b"}': "0 0 0 0 0"},
                 60.0)
    ev = Evaluator(rule_set.alerts, store, clock=SimulatedClock(0), recordings=rule_set.recordings)
    states = []
    for minute in range(5):
        ev.evaluate(minute * 60.0)
        states.append([str(a.state) for a in ev.active()])
    # up sums to 1 at 0m, 0 from 1m: pending at 1m and 2m, firing once `for: 2m` has passed (3m)
    assert states == [[], ["pending"], ["pending"], ["firing"], ["firing"]]
    (alert,) = ev.active()
    assert alert.state is AlertState.FIRING and alert.labels["job"] == "ranker"
    assert alert.annotations["summary"] == "ranker is down (0 up)"


def test_a_prometheus_yml_brings_its_rule_files_relative_to_it(tmp_path: Path) -> None:
    (tmp_path / "prom").mkdir()
    _config(tmp_path / "prom", own="")
    (tmp_path / "prom" / "prometheus.yml").write_text("rule_files: [rules/*.yml]\nscrape_configs: []\n")
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text("rules: {default_pack: false}\nscrape: {prometheus_config: prom/prometheus.yml}\n")
    config = load_config(cfg)
    assert [r.name for r in load_rule_set(config).alerts] == ["JobDown"]
    # the group's own interval is not honoured, and serve and config check say so
    (note,) = [n for n in config_warnings(config) if "interval" in n]
    assert "group 'jobs': interval 30s is not honoured" in note


@pytest.mark.parametrize(("rules", "wanted"), [
    (RULES.replace("job:up:sum == 0", "job:up:sum ==== 0"), "group 'jobs': rules[1]: expr:"),
    (RULES.replace("for: 2m", "for: 2m\n        keep_firing_for: 1m"), "keep_firing_for not supported"),
    ("groups: {}\n", "a rule file is 'groups:"),
])
def test_a_bad_rule_file_is_refused_naming_file_group_and_rule(
        tmp_path: Path, rules: str, wanted: str) -> None:
    with pytest.raises(ConfigError, match=r"jobs\.yml") as err:
        load_rule_set(load_config(_config(tmp_path, rules)))
    assert wanted in str(err.value)
