"""``inferwatch slo check``, and the SLO rules in ``rules check|list|export`` (exit codes, errors, JSON)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from inferwatch.cli import main

SPECS = Path(__file__).parent / "specs"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    cfg = tmp_path / "inferwatch.yaml"
    cfg.write_text("slos: [{service: ranker, type: availability, objective: 99.9}]\n"
                   f"slo_files: [{SPECS / 'payments.yaml'}]\n")
    return cfg


def test_slo_check_summarises_a_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["slo", "check", str(SPECS / "payments.yaml"), "--period", "28d"]) == 0
    out = capsys.readouterr().out
    assert "payments-charges-availability: objective 99.9% over 28d, events SLI" in out
    assert "PaymentsRefundsSlow [ticket, ticket] (P2)" in out
    assert "2 SLOs ok: 30 recording rules, 4 alerts" in out


def test_a_bad_spec_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: prometheus/v1\nservice: a\nslos: [{name: x, objective: 120, "
                   "sli: {raw: {error_ratio_query: 'a[{{.window}}]'}}, alerting: {name: A}}]\n")
    assert main(["slo", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: slos[0].objective: Input should be less than 100 (got 120)" in err
    assert "Traceback" not in err


@pytest.mark.tools
def test_slo_check_rules_and_rules_export_pass_promtool(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], require_tool: Callable[..., str],
) -> None:
    promtool = require_tool("promtool")
    assert main(["slo", "check", str(SPECS / "payments.yaml"), "--rules"]) == 0
    (tmp_path / "slo.yml").write_text(capsys.readouterr().out)
    assert main(["rules", "export", "--config", str(config)]) == 0
    (tmp_path / "all.yml").write_text(capsys.readouterr().out)
    for name, count in (("slo.yml", 34), ("all.yml", None)):
        proc = subprocess.run([promtool, "check", "rules", str(tmp_path / name)], capture_output=True,
                              text=True, timeout=60, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert count is None or f"SUCCESS: {count} rules found" in proc.stdout


def test_rules_list_and_check_count_the_slo_rules(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "list", "--json", "--config", str(config)]) == 0
    rows = json.loads(capsys.readouterr().out)
    recordings = [r for r in rows if r.get("type") == "recording"]
    assert len(recordings) == 45  # 15 per SLO: 3 SLOs
    assert {"slo:period_error_budget_remaining:ratio", "sloth_slo_info"} <= {r["name"] for r in recordings}
    alerts = {r["name"]: r for r in rows if r.get("type") != "recording"}
    assert alerts["SLORankerAvailabilityFastBurn"]["tier"] == "P0"
    assert main(["rules", "check", "--config", str(config)]) == 0
    assert ", 45 SLO recording rules" in capsys.readouterr().out
