"""Every replay file passes in inferwatch's native evaluator AND in ``promtool test rules``.

The promtool side evaluates the PromQL form of the same rules, written by
:func:`to_prometheus_rule_groups` (the exporter's function), so the two engines
are checked against the same expectations: alert names, label sets,
annotations and timing.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from inferwatch.config import load_config
from inferwatch.rules import load_rules, to_prometheus_rule_yaml
from inferwatch.rules._replay import run_replay
from inferwatch.rules._testfile import load_test_file

REPLAY = Path(__file__).resolve().parents[1] / "replay"
FILES = sorted(REPLAY.glob("*.yaml"))


def _config(test: Path) -> Path | None:
    cfg = REPLAY / "configs" / test.name
    return cfg if cfg.exists() else None


def test_there_are_at_least_twenty_replay_files() -> None:
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_native_replay_passes(path: Path) -> None:
    rules = load_rules(load_config(_config(path)))
    tested = _tested_alerts(path)
    if tested is not None:  # the pack's other rules cannot change these (61 s over a 28-hour story)
        rules = [r for r in rules if r.name in tested]
    result = run_replay(load_test_file(path), rules)
    assert result.failures == []
    assert result.timeline, "every replay file should exercise at least one alert"


def _tested_alerts(test: Path) -> set[str] | None:
    """The alert names ``test`` asks about; None where it reads ALERTS or has inferwatch's own
    expectations (notifications), which other rules may change."""
    text = test.read_text()
    spec = yaml.safe_load(text)
    if "ALERTS" in text or "inferwatch" in spec:
        return None
    return {case["alertname"] for t in spec["tests"] for case in t.get("alert_rule_test", [])}


def _only_tested(rule_yaml: str, test: Path) -> str:
    """The exported rules less the alerting rules ``test`` never asks about.

    promtool evaluates every rule of the file at every step up to each test's last eval_time:
    the whole default pack over a 28-hour story took 61 s (past the timeout on a loaded runner).
    An alerting rule reads only series, never another alert (unless a test queries ALERTS), so
    dropping the untested ones changes no outcome; recording rules all stay.
    """
    tested = _tested_alerts(test)
    if tested is None:
        return rule_yaml
    doc = yaml.safe_load(rule_yaml)
    for group in doc["groups"]:
        group["rules"] = [r for r in group["rules"] if "alert" not in r or r["alert"] in tested]
    doc["groups"] = [g for g in doc["groups"] if g["rules"]]
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


@pytest.mark.tools
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_promtool_passes_on_the_generated_rules(
    path: Path, tmp_path: Path, require_tool: Callable[..., str]
) -> None:
    promtool = require_tool("promtool")
    rules = load_rules(load_config(_config(path)))
    (tmp_path / "inferwatch_rules.yaml").write_text(_only_tested(to_prometheus_rule_yaml(rules), path))
    shutil.copy(path, tmp_path / path.name)
    proc = subprocess.run(
        [promtool, "test", "rules", path.name], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
