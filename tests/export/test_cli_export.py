"""``inferwatch export``: writes the files it lists; bad input is one line, never a traceback."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
import yaml

from inferwatch.cli import main


def test_export_all_writes_every_target_into_its_directory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "all", "-o", str(tmp_path / "out")]) == 0
    listed = [line.split("  ")[0] for line in capsys.readouterr().out.splitlines()]
    written = sorted(str(p) for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert sorted(listed) == written
    assert {Path(p).relative_to(tmp_path / "out").parts[0] for p in written} == {
        "prometheus", "alertmanager", "grafana", "otel-collector", "kubernetes"}
    mode = (tmp_path / "out/alertmanager/alertmanager.yml").stat().st_mode
    assert stat.S_IMODE(mode) == 0o600  # it holds the config's secrets


def test_options_reach_the_files(tmp_path: Path) -> None:
    assert main(["export", "alertmanager", "-o", str(tmp_path), "--inferwatch-url", "http://iw:9464/"]) == 0
    assert "url: http://iw:9464/api/v1/alertmanager" in (tmp_path / "alertmanager.yml").read_text()
    assert main(["export", "prometheus", "-o", str(tmp_path), "--remote-write", "http://vm:8428/api/v1/write",
                 "--remote-write", "http://mimir/api/v1/push"]) == 0
    doc = yaml.safe_load((tmp_path / "prometheus.yml").read_text())
    assert doc["remote_write"] == [{"url": "http://vm:8428/api/v1/write"}, {"url": "http://mimir/api/v1/push"}]


def test_a_bad_config_is_one_line_naming_file_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("alerting: {route: {receiver: nobody}}\n")
    assert main(["export", "prometheus", "--config", str(bad), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err and "nobody" in err


def test_an_unwritable_output_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["export", "grafana", "-o", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("inferwatch export: error: cannot write ") and err.count("\n") == 1


def test_an_unknown_target_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["export", "nagios", "-o", "x"])
    assert exit_.value.code == 2
    assert "invalid choice: 'nagios'" in capsys.readouterr().err


def test_help_says_what_each_file_is_for(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    out = capsys.readouterr().out
    for word in ("prometheus.yml", "alertmanager.yml", "inferwatch-behind-alertmanager.yaml", "dashboards/",
                 "otel-collector.yaml", "prometheus-operator.yaml"):
        assert word in out
