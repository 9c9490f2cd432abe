"""An SLO read from a Sloth spec, replayed: Sloth's one alert name, tiers by labels, inhibition by labels.

The same story runs in inferwatch's evaluator, in ``promtool test rules`` on the exported rules,
and through ``inferwatch replay`` with the notification pipeline, where the fast page mutes the
slow page and the ticket of the same SLO although all three share one name.
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

STORIES = Path(__file__).resolve().parents[1] / "replay" / "slo_sloth"
STORY = STORIES / "fast_burn_pages.yaml"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "inferwatch.yaml"
    path.write_text(f"rules: {{default_pack: false}}\nslo_files: ['{STORIES / 'ranker.yaml'}']\n")
    return path


def test_native_replay_passes(config: Path) -> None:
    rs = load_rule_set(load_config(config))
    assert {a.name for a in rs.alerts} == {"RankerAvailability"}
    result = run_replay(load_test_file(STORY), rs.alerts, recordings=rs.recordings)
    assert result.failures == []
    firing = [(e["labels"]["slo_alert"], e["t"]) for e in result.timeline if e["state"] == "firing"]
    assert firing == [("ticket", 6 * 3600 + 120), ("fast_page", 6 * 3600 + 180),
                      ("slow_page", 6 * 3600 + 480)], firing


@pytest.mark.tools
def test_promtool_passes_on_the_exported_rules(config: Path, tmp_path: Path,
                                               require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    doc = prometheus_rule_files(load_config(config))["rules/slo.rules.yml"]
    (tmp_path / "slo_rules.yaml").write_text(dump_yaml(doc))
    shutil.copy(STORY, tmp_path / STORY.name)
    check = subprocess.run([promtool, "check", "rules", "slo_rules.yaml"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    proc = subprocess.run([promtool, "test", "rules", STORY.name], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_fast_page_mutes_the_others_of_its_name(config: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "inferwatch", "replay", "--config", str(config), str(STORY)],
        capture_output=True, text=True, timeout=120, check=False,
        env={k: v for k, v in os.environ.items() if k != "INFERWATCH_CONFIG"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS: 5/5 alert tests passed, 3 state changes, 1 notifications" in proc.stdout, proc.stdout
