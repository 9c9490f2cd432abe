"""``inferwatch replay`` and ``inferwatch rules``: exit codes, JSON, diffs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inferwatch.cli import main
from inferwatch.rules._pack import default_rule_specs

REPLAY = Path(__file__).resolve().parents[1] / "replay"


def test_replay_json_timeline(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "--json", str(REPLAY / "resolve_and_refire.yaml")]) == 0
    out = json.loads(capsys.readouterr().out)
    states = [(e["t"], e["state"]) for e in out["timeline"]]
    assert states == [(120.0, "pending"), (180.0, "firing"), (300.0, "resolved"),
                      (420.0, "pending"), (480.0, "firing")]
    assert out["failures"] == []


def test_replay_failure_exits_1_with_a_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text((REPLAY / "target_down.yaml").read_text().replace("eval_time: 11m", "eval_time: 10m30s"))
    assert main(["replay", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "alertname: TargetDown, time: 10m30s" in err and "(none)" in err


def test_replay_bad_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("tests: [{interval: 1m, input_series: [{series: 'up', values: '1 zz'}]}]")
    assert main(["replay", str(bad)]) == 2
    assert "bad series value 'zz'" in capsys.readouterr().err


def test_rules_check_and_export(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "check"]) == 0
    assert f"{len(default_rule_specs())} rules ok" in capsys.readouterr().out  # derived from the pack
    assert main(["rules", "export"]) == 0
    assert "alert: ServiceUnavailable" in capsys.readouterr().out
