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
    result = run_replay(load_test_file(path), rules)
    assert result.failures == []
    assert result.timeline, "every replay file should exercise at least one alert"


@pytest.mark.tools
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_promtool_passes_on_the_generated_rules(
    path: Path, tmp_path: Path, require_tool: Callable[..., str]
) -> None:
    promtool = require_tool("promtool")
    rules = load_rules(load_config(_config(path)))
    (tmp_path / "inferwatch_rules.yaml").write_text(to_prometheus_rule_yaml(rules))
    shutil.copy(path, tmp_path / path.name)
    proc = subprocess.run(
        [promtool, "test", "rules", path.name], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
