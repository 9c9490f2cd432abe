"""Replay scenarios (tests/alerting/replay/*.yml): rules and the whole pipeline on simulated time.

Each file's ``inferwatch.expect`` lists notifications as ``"t receiver alertname inst+ inst-"``
(``+`` firing, ``-`` resolved; ``-`` as alertname for a digest; ``receiver#N`` for escalation
step N) and actions as ``"t action alertname phase"``; ``inferwatch.alerting`` is merged into the base config.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from inferwatch.alerting import ReplayPipeline
from inferwatch.config import parse_config
from inferwatch.rules import load_rules
from inferwatch.rules._replay import run_replay
from inferwatch.rules._testfile import load_test_file

HERE = Path(__file__).parent / "replay"
RULES = {"default_pack": False, "rules": [
    {"name": "Down", "dimension": "service", "tier": "P0", "signal": {"type": "metric", "metric": "down"},
     "threshold": 0},
    {"name": "Slow", "dimension": "service", "tier": "P1", "signal": {"type": "metric", "metric": "slow"},
     "threshold": 0},
    {"name": "SevereLatency", "dimension": "service", "tier": "P1",
     "signal": {"type": "metric", "metric": "severe"}, "threshold": 0},
    {"name": "Drift", "dimension": "quality", "tier": "P2", "signal": {"type": "metric", "metric": "drift"},
     "threshold": 0.1},
]}
SCENARIOS = sorted(HERE.glob("*.yml"))


def _config(ext: dict[str, Any]) -> str:
    return yaml.safe_dump({"rules": RULES, "alerting": ext.get("alerting", {})})


def _short(n: dict[str, Any]) -> str:
    names = {a["alertname"] for a in n["alerts"]}
    name = names.pop() if len(names) == 1 and "alertname" in n["group_labels"] else "-"
    insts = " ".join(f"{a['labels'].get('instance', '?')}{'+' if a['status'] == 'firing' else '-'}"
                     for a in n["alerts"])
    step = f"#{n['step']}" if n.get("step") else ""  # an escalation step
    return f"{n['t']:g} {n['receiver']}{step} {name} {insts}"


def test_at_least_twelve_scenarios() -> None:
    assert len(SCENARIOS) >= 12


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    test = load_test_file(path)
    ext = dict(test.extensions.get("inferwatch", test.extensions))
    config = parse_config(_config(ext))
    pipeline = ReplayPipeline(config.alerting, ext)
    result = run_replay(test, load_rules(config), sink=pipeline, on_evaluated=pipeline.evaluated)
    assert result.ok, result.failures
    out = pipeline.extra()
    got = sorted(_short(n) for n in out["notifications"])
    assert got == sorted(ext["expect"]["notifications"]), result.timeline
    acts = sorted(f"{a['t']:g} {a['action']} {a['alertname']} {a['phase']}" for a in out["actions"])
    assert acts == sorted(ext["expect"].get("actions", []))
    calls = [f"{c['t']:g} {c['number']} {c['round']} {'yes' if c['answered'] else 'no'}"
             for c in out.get("calls", [])]  # confirmed phone calls, answered as the file scripts them
    assert calls == ext["expect"].get("calls", [])


def test_cli_prints_notifications_and_actions(tmp_path: Path) -> None:
    path = HERE / "06_inhibit_outage_mutes_latency.yml"
    ext = load_test_file(path).extensions
    cfg = tmp_path / "c.yml"
    cfg.write_text(_config(dict(ext.get("inferwatch", ext))))
    argv = [sys.executable, "-m", "inferwatch", "replay", "--config", str(cfg), str(path), "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    (n,) = out["notifications"]
    assert n["receiver"] == "phone" and n["group_labels"] == {"alertname": "Down", "service": "ranker"}
    assert n["alerts"][0]["status"] == "firing" and out["actions"][0]["action"] == "scale_out"


def test_a_bad_call_script_is_a_clear_error() -> None:
    from inferwatch._exceptions import InputError

    cfg = parse_config(_config({})).alerting
    with pytest.raises(InputError, match=r"inferwatch\.calls\['138'\]: expected a list of yes/no"):
        ReplayPipeline(cfg, {"calls": {"138": ["maybe"]}})
