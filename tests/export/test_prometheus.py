"""``export prometheus``: prometheus.yml and rule files, checked by promtool."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from inferwatch.config import Config, load_config
from inferwatch.export import ExportOptions

from ._helpers import RICH, config_from, export_to, exported, run

REPLAY = Path(__file__).resolve().parents[1] / "replay"


def _prometheus_yml(config: Config) -> dict:  # type: ignore[type-arg]
    files = {f.path: f.text for f in exported("prometheus", config)}
    return yaml.safe_load(files["prometheus.yml"])


def test_targets_become_jobs_with_their_dimension_interval_and_the_config_job_label(tmp_path: Path) -> None:
    jobs = {j["job_name"]: j for j in _prometheus_yml(config_from(tmp_path, RICH))["scrape_configs"]}
    # The inferwatch server itself, then one job per distinct (job, interval, URL shape).
    assert list(jobs) == ["inferwatch", "ranker", "ranker-2", "node", "drift"]
    assert jobs["ranker"]["scrape_interval"] == "1m"  # service dimension default
    assert [t["targets"] for t in jobs["ranker"]["static_configs"]] == [["10.0.0.1:8000"], ["10.0.0.2:8000"]]
    # Same job label for the odd target, its own path, params and interval.
    odd = jobs["ranker-2"]
    assert odd["static_configs"][0]["labels"] == {"job": "ranker", "dimension": "service", "zone": "b"}
    assert (odd["metrics_path"], odd["params"]) == ("/custom", {"format": ["text"]})
    assert odd["scrape_interval"] == "30s"
    assert jobs["node"]["scrape_interval"] == "15s"
    assert (jobs["drift"]["scrape_interval"], jobs["drift"]["scheme"]) == ("1h", "https")
    assert jobs["drift"]["scrape_timeout"] == "10s"


def test_alertmanager_and_rule_files_are_wired(tmp_path: Path) -> None:
    doc = _prometheus_yml(config_from(tmp_path, RICH))
    assert _prometheus_yml(Config())["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] == [
        "127.0.0.1:9093"]
    assert doc["rule_files"] == ["rules/*.rules.yml"]
    assert doc["global"]["evaluation_interval"] == "30s"


def test_a_dynamic_rule_is_exported_as_its_baseline_with_the_rule_name(tmp_path: Path) -> None:
    files = {f.path: f.text for f in exported("prometheus", config_from(tmp_path, RICH))}
    static = yaml.safe_load(files["rules/inferwatch.rules.yml"])
    names = {r["alert"] for g in static["groups"] for r in g["rules"]}
    assert "LatencyOffBaseline" not in names and {"ServiceUnavailable", "FeatureDriftWarning",
                                                     "ABTestSignificant"} <= names
    group = yaml.safe_load(files["rules/baseline-LatencyOffBaseline.rules.yml"])["groups"][0]
    alert = group["rules"][-1]
    assert alert["alert"] == "LatencyOffBaseline"
    assert alert["labels"]["tier"] == "P2" and alert["labels"]["baseline"] == "LatencyOffBaseline"
    assert " > 2" in alert["expr"]  # the fallback while no band exists
    assert group["interval"] == "30s"
    assert any(r.get("record") == "baseline:LatencyOffBaseline:upper" for r in group["rules"])


@pytest.mark.tools
@pytest.mark.parametrize("doc", [{}, RICH], ids=["defaults", "rich"])
def test_promtool_checks_config_and_rules(doc: dict, tmp_path: Path,  # type: ignore[type-arg]
                                          require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    out = export_to(tmp_path, "prometheus", config_from(tmp_path, doc),
                    ExportOptions(remote_write=("http://127.0.0.1:8428/api/v1/write",)))
    proc = run([promtool, "check", "config", "prometheus.yml"], cwd=out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rule_files = sorted(str(p) for p in (out / "rules").glob("*.rules.yml"))
    assert len(rule_files) == (2 if doc else 1)
    proc = run([promtool, "check", "rules", *rule_files])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"SUCCESS: \d+ rules found", proc.stdout)


@pytest.mark.tools
@pytest.mark.parametrize("path", sorted(REPLAY.glob("*.yaml")), ids=lambda p: p.stem)
def test_promtool_test_rules_passes_on_the_replay_files_against_the_exported_rules(
    path: Path, tmp_path: Path, require_tool: Callable[..., str]
) -> None:
    promtool = require_tool("promtool")
    cfg = REPLAY / "configs" / path.name
    out = export_to(tmp_path, "prometheus", load_config(cfg if cfg.exists() else None),
                    ExportOptions(alertmanager="127.0.0.1:9093"))
    test = yaml.safe_load(path.read_text())
    test["rule_files"] = ["rules/*.rules.yml"]
    (out / path.name).write_text(yaml.safe_dump(test, sort_keys=False))
    proc = run([promtool, "test", "rules", path.name], cwd=out)
    assert proc.returncode == 0, proc.stdout + proc.stderr



def test_configured_alertmanagers_and_external_labels_are_prometheus_s_too(tmp_path: Path) -> None:
    doc = _prometheus_yml(config_from(tmp_path, RICH))
    assert doc["global"]["external_labels"] == {"cluster": "eu-1"}
    assert doc["alerting"]["alertmanagers"] == [
        {"scheme": "http", "path_prefix": "/", "static_configs": [{"targets": ["10.0.0.9:9093"]}]},
        {"scheme": "https", "path_prefix": "/team", "static_configs": [{"targets": ["am.example.org"]}]},
    ]


# server.remote_write with every setting that Prometheus's remote_write has a field for
REMOTES = {"server": {"remote_write": [
    {"url": "https://mimir.example.org/api/v1/push", "name": "mimir", "timeout": "10s",
     "bearer_token": "mimir-t0ken", "headers": {"X-Scope-OrgID": "team-a"},
     "queue": {"max_samples_per_send": 500, "batch_send_deadline": "2s", "min_backoff": "50ms",
               "max_backoff": "10s", "retry_on_http_429": False, "max_pending_age": "1h"}},
    {"url": "http://victoria:8428/api/v1/write"},
]}}


def test_the_server_s_remote_write_becomes_prometheus_s_remote_write(tmp_path: Path) -> None:
    cfg = config_from(tmp_path, REMOTES)
    files = {f.path: f for f in exported("prometheus", cfg, ExportOptions(
        remote_write=("http://victoria:8428/api/v1/write", "http://thanos:19291/api/v1/receive")))}
    mimir, victoria, thanos = yaml.safe_load(files["prometheus.yml"].text)["remote_write"]
    assert mimir == {
        "url": "https://mimir.example.org/api/v1/push", "name": "mimir", "remote_timeout": "10s",
        "authorization": {"credentials": "mimir-t0ken"}, "headers": {"X-Scope-OrgID": "team-a"},
        "queue_config": {"max_samples_per_send": 500, "batch_send_deadline": "2s", "min_backoff": "50ms",
                         "max_backoff": "10s", "retry_on_http_429": False},
    }
    # defaults are written out (inferwatch's, which differ from Prometheus's); the URL given on the
    # command line as well is not listed twice (Prometheus refuses two identical remotes)
    assert victoria["url"] == "http://victoria:8428/api/v1/write" and "name" not in victoria
    assert victoria["queue_config"]["min_backoff"] == "30ms" and victoria["remote_timeout"] == "30s"
    assert "authorization" not in victoria and "headers" not in victoria
    assert thanos == {"url": "http://thanos:19291/api/v1/receive"}
    assert files["prometheus.yml"].secret  # a token in clear: written with mode 0600
    plain = exported("prometheus", config_from(tmp_path, {"server": {"remote_write": [
        {"url": "http://victoria:8428/api/v1/write"}]}}))
    assert not plain[0].secret and "remote_write" in yaml.safe_load(plain[0].text)
    assert "remote_write" not in _prometheus_yml(Config())


@pytest.mark.tools
def test_promtool_checks_the_exported_remote_write(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    out = export_to(tmp_path, "prometheus", config_from(tmp_path, REMOTES),
                    ExportOptions(remote_write=("http://thanos:19291/api/v1/receive",)))
    assert (out / "prometheus.yml").stat().st_mode & 0o077 == 0
    proc = run([promtool, "check", "config", "prometheus.yml"], cwd=out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout + proc.stderr
