"""`scrape.prometheus_config`: a prometheus.yml read as it is (its scrape_configs become jobs).

What it cannot honour in a scrape config is refused with file, line and key; the top-level
sections it does not read are listed with their lines by `config check` (and by `serve` at start).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inferwatch.cli import main
from inferwatch.config import load_config

PROMETHEUS_YML = """\
global:
  scrape_interval: 15s
  scrape_timeout: 20s
  evaluation_interval: 30s
rule_files: [rules/*.yml]
scrape_configs:
  - job_name: gpu
    static_configs: [{targets: ['10.0.0.1:9400'], labels: {pool: a}}]
  - job_name: replicas
    scrape_interval: 1m
    metrics_path: /m
    file_sd_configs: [{files: [sd/*.json], refresh_interval: 30s}]
    relabel_configs: [{source_labels: [__meta_filepath], target_label: from}]
alerting:
  alertmanagers: [{static_configs: [{targets: ['am:9093']}]}]
"""


def _write(tmp_path: Path, prometheus_yml: str) -> Path:
    (tmp_path / "prom").mkdir()
    (tmp_path / "prom" / "prometheus.yml").write_text(prometheus_yml)
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text("scrape: {prometheus_config: prom/prometheus.yml}\n")
    return cfg


def test_scrape_configs_become_jobs_with_prometheus_defaults(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, PROMETHEUS_YML))
    gpu, replicas = config.scrape.jobs
    # global: 15s interval; the 20s global timeout is cut to the interval, as Prometheus does
    assert (gpu.job, gpu.effective_interval, gpu.effective_timeout) == ("gpu", 15.0, 15.0)
    assert gpu.static_configs[0].targets == ("10.0.0.1:9400",)
    assert (replicas.effective_interval, replicas.effective_timeout) == (60.0, 20.0)
    assert replicas.metrics_path == "/m"
    # file_sd paths relative to the prometheus.yml, as Prometheus reads them
    assert replicas.file_sd_configs[0].files == (str(tmp_path / "prom" / "sd" / "*.json"),)
    assert replicas.file_sd_configs[0].refresh_interval == 30.0


def test_config_check_lists_what_it_does_not_read_with_lines(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _write(tmp_path, PROMETHEUS_YML)
    assert main(["config", "check", str(cfg)]) == 0
    err = capsys.readouterr().err
    path = tmp_path / "prom" / "prometheus.yml"
    for line, key in ((4, "global.evaluation_interval"), (14, "alerting")):
        assert f"{path}:{line}: {key} is not read by inferwatch (ignored)" in err
    assert "rule_files is not read" not in err  # read: its files are rule files of the config


@pytest.mark.parametrize(("job", "wanted"), [
    ("  - job_name: k\n    consul_sd_configs: [{server: 'localhost:8500'}]\n",
     ":4: scrape_configs[0]: consul_sd_configs is not supported by inferwatch"),
    ("  - job_name: h\n    http_sd_configs: [{url: 'http://sd/', oauth2: {client_id: x}}]\n",
     "scrape_configs[0]: http_sd_configs.0.oauth2: Extra inputs are not permitted"),
    ("  - job_name: a\n  - job_name: a\n", "job 'a' is named twice"),
])
def test_what_it_cannot_honour_is_refused_naming_the_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], job: str, wanted: str) -> None:
    cfg = _write(tmp_path, "global: {}\nscrape_configs:\n" + job)
    assert main(["config", "check", str(cfg)]) != 0
    err = capsys.readouterr().err
    assert wanted in err and "Traceback" not in err and str(tmp_path / "prom" / "prometheus.yml") in err
