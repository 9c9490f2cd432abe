"""The SLO replay files pass in inferwatch's evaluator AND in ``promtool test rules``.

Both engines run the same rules: promtool reads ``rules/slo.rules.yml`` as
``inferwatch export prometheus`` writes it; inferwatch evaluates the rule set
``serve`` builds (recordings first, then the alerts, each round).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from inferwatch.config import load_config
from inferwatch.export._files import dump_yaml
from inferwatch.rules._replay import run_replay
from inferwatch.rules._testfile import load_test_file
from inferwatch.server import prometheus_rule_files
from inferwatch.slo import load_rule_set

REPLAY = Path(__file__).resolve().parents[1] / "replay" / "slo"
CONFIG = REPLAY / "inferwatch.yaml"
FILES = sorted(p for p in REPLAY.glob("*.yaml") if p != CONFIG)


def test_the_five_stories_are_there() -> None:
    assert {p.stem for p in FILES} >= {"fast_burn_pages", "slow_burn_ticket", "below_budget_nothing",
                                       "low_traffic_nothing", "recovery_resolves"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_native_replay_passes(path: Path) -> None:
    rs = load_rule_set(load_config(CONFIG))
    result = run_replay(load_test_file(path), rs.alerts, recordings=rs.recordings)
    assert result.failures == []
    fired = {e["alertname"] for e in result.timeline if e["state"] == "firing"}
    quiet = path.stem.endswith("_nothing") and "low_traffic" not in path.stem
    assert bool(fired) != quiet, fired


@pytest.mark.tools
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_promtool_passes_on_the_exported_rules(
    path: Path, tmp_path: Path, require_tool: Callable[..., str]
) -> None:
    promtool = require_tool("promtool")
    doc = prometheus_rule_files(load_config(CONFIG))["rules/slo.rules.yml"]
    (tmp_path / "slo_rules.yaml").write_text(dump_yaml(doc))
    shutil.copy(path, tmp_path / path.name)
    check = subprocess.run([promtool, "check", "rules", "slo_rules.yaml"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    proc = subprocess.run([promtool, "test", "rules", path.name], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_inferwatch_replay_runs_the_slo_rules() -> None:
    # the command line builds the same rule set (recordings first) and the notification pipeline
    proc = subprocess.run(
        [sys.executable, "-m", "inferwatch", "replay", "--config", str(CONFIG),
         str(REPLAY / "fast_burn_pages.yaml")],
        capture_output=True, text=True, timeout=120, check=False,
        env={k: v for k, v in os.environ.items() if k != "INFERWATCH_CONFIG"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS: 7/7 alert tests passed, 3 state changes, 1 notifications" in proc.stdout
