"""Availability SLOs count downtime: the requests lost while the service's probes failed (or its
targets were down) are bad events, in inferwatch's evaluator and in ``promtool test rules`` alike."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from inferwatch.config import load_config, parse_config
from inferwatch.export._files import dump_yaml
from inferwatch.rules._replay import run_replay
from inferwatch.rules._testfile import load_test_file
from inferwatch.server import prometheus_rule_files
from inferwatch.slo import load_rule_set, load_slos

STORY = Path(__file__).resolve().parents[1] / "replay" / "slo_downtime"
CONFIG = STORY / "inferwatch.yaml"


@pytest.mark.parametrize(("yaml", "source"), [
    # a probe carries the service label: its probe_success counts (the default, auto)
    ("probes: [{name: p, url: 'http://h/x', labels: {service: ranker}}]\nslos: [{service: ranker, "
     "type: availability, objective: 99}]", 'probe_success{service="ranker",probe=~"p"}'),
    # a golden set judges answers, not reachability: a service with only one falls back to up
    ("probes: [{name: g, url: 'http://h/x', labels: {service: ranker}, golden: {file: g.jsonl}}]\n"
     "slos: [{service: ranker, type: availability, objective: 99}]", 'up{service="ranker"}'),
    # no probe of the service: the targets' up (a scrape target labelled service: ranker)
    ("slos: [{service: ranker, type: availability, objective: 99}]", 'up{service="ranker"}'),
    ("probes: [{name: p, url: 'http://h/x', labels: {service: ranker}}]\nslos: [{service: ranker, "
     "type: availability, objective: 99, downtime: up}]", 'up{service="ranker"}'),
    ("slos: [{service: ranker, type: availability, objective: 99, downtime: none}]", ""),
    ("slos: [{service: ranker, type: latency, objective: 99, threshold: 0.5}]", ""),  # availability only
])
def test_the_downtime_source(yaml: str, source: str) -> None:
    slo = load_slos(parse_config(yaml))[0]
    assert slo.downtime == source
    text = str(slo.sli)
    assert (source in text) if source else ("probe_success" not in text and "up{" not in text)


def test_native_replay_pages_on_an_outage_the_sdk_cannot_see() -> None:
    rs = load_rule_set(load_config(CONFIG))
    result = run_replay(load_test_file(STORY / "outage_pages.yaml"), rs.alerts, recordings=rs.recordings)
    assert result.failures == []
    assert {e["alertname"] for e in result.timeline if e["state"] == "firing"} >= {
        "SLORankerAvailabilityFastBurn"}


@pytest.mark.tools
def test_promtool_agrees_on_the_alerts_and_the_sli(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    doc = prometheus_rule_files(load_config(CONFIG))["rules/slo.rules.yml"]
    (tmp_path / "slo_rules.yaml").write_text(dump_yaml(doc))
    for name in ("outage_pages.yaml", "outage_ratio.promtool.yml"):
        shutil.copy(STORY / name, tmp_path / name)
    proc = subprocess.run([promtool, "test", "rules", "outage_pages.yaml", "outage_ratio.promtool.yml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
