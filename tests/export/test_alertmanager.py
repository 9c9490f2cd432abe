"""``export alertmanager``: amtool accepts the file and routes like inferwatch's own router."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from inferwatch.alerting import Route
from inferwatch.config import Config, load_config
from inferwatch.export import export
from inferwatch.model import matches_all, parse_matchers

from ._helpers import PD_KEY, RICH, config_from, export_to, run

ACTIONS = "inferwatch-actions"

# Label sets walking every branch of RICH's tree (and the default tree).
LABEL_SETS: list[dict[str, str]] = [
    {"alertname": "ServiceUnavailable", "tier": "P0", "service": "ranker", "dimension": "service"},
    {"alertname": "TargetDown", "tier": "P0", "service": "search", "dimension": "service"},
    {"alertname": "SevereLatency", "tier": "P1", "service": "ranker", "dimension": "service"},
    {"alertname": "FeatureDriftRollback", "tier": "P1", "service": "ranker", "dimension": "quality"},
    {"alertname": "FeatureDriftWarning", "tier": "P2", "dimension": "quality", "feature": "age"},
    {"alertname": "ABTestSignificant", "tier": "P2", "dimension": "business"},
    {"alertname": "HighP99Latency", "tier": "P2", "dimension": "service", "service": "ranker"},
    {"alertname": "Custom", "team": "platform"},
    {"alertname": "Custom", "tier": "P3"},
    {},
]


def _files(config: Config) -> dict[str, Any]:
    return {f.path: yaml.safe_load(f.text) for f in export("alertmanager", config)}


def _inferwatch_receivers(config: Config, labels: dict[str, str]) -> list[str]:
    return [r.options.receiver for r in Route.build(config.alerting.route).match(labels)]


def _action_matches(config: Config, labels: dict[str, str]) -> bool:
    return any(matches_all([m for t in a.matchers for m in parse_matchers(t)], labels)
               for a in config.alerting.effective_actions())


def test_receivers_alertmanager_can_deliver_are_native_the_rest_go_to_inferwatch(tmp_path: Path) -> None:
    receivers = {r["name"]: r for r in _files(config_from(tmp_path, RICH))["alertmanager.yml"]["receivers"]}
    pd = receivers["phone"]["pagerduty_configs"][0]
    assert (pd["routing_key"], pd["url"]) == (PD_KEY, "http://127.0.0.1:1/v2/enqueue")
    mail = receivers["mail"]["email_configs"][0]
    assert (mail["smarthost"], mail["to"], mail["auth_password"], mail["require_tls"]) == (
        "smtp.example.org:587", "ops@example.org", "p", True)
    assert receivers["chat"]["slack_configs"][0]["api_url"] == "https://hooks.example.org/T/B/x"
    hook = receivers["hook"]["webhook_configs"][0]
    assert hook["url"] == "http://127.0.0.1:2/hook"
    assert hook["http_config"]["authorization"]["credentials"] == "t"
    # WeCom robot, Twilio, terminal, digest and the actions: inferwatch's webhook with the API token.
    for name in ("wecom", "calls", "terminal", "digest", ACTIONS):
        (only,) = receivers[name]["webhook_configs"]
        assert only["url"] == "http://127.0.0.1:9464/api/v1/alertmanager", name
        assert only["http_config"]["authorization"]["credentials"] == "api-token-1"
        assert only["send_resolved"] is True


def test_without_an_api_token_the_webhook_reads_the_token_file() -> None:
    am = _files(Config())["alertmanager.yml"]
    hook = next(r for r in am["receivers"] if r["name"] == "wecom")["webhook_configs"][0]
    assert hook["http_config"]["authorization"] == {"credentials_file": "api_token"}


def test_timers_group_by_and_inhibit_rules_are_carried(tmp_path: Path) -> None:
    route = _files(config_from(tmp_path, RICH))["alertmanager.yml"]["route"]
    assert (route["group_wait"], route["group_interval"], route["repeat_interval"]) == ("30s", "5m", "4h")
    wecom = next(r for r in route["routes"] if r.get("receiver") == "wecom")
    assert wecom["group_wait"] == "10s" and wecom["routes"][0]["group_by"] == ["..."]
    assert next(r for r in route["routes"] if r.get("receiver") == "phone")["continue"] is True
    inhibit = _files(Config())["alertmanager.yml"]["inhibit_rules"]
    assert inhibit[1] == {"source_matchers": ['tier="P0"'],
                          "target_matchers": ['tier=~"P1|P2"', 'dimension="service"'], "equal": ["service"]}


def test_the_server_behind_alertmanager_neither_scrapes_nor_evaluates_nor_delivers_twice(
        tmp_path: Path) -> None:
    path = tmp_path / "behind.yaml"
    behind_doc = _files(config_from(tmp_path, RICH))["inferwatch-behind-alertmanager.yaml"]
    path.write_text(yaml.safe_dump(behind_doc))
    behind = load_config(path)
    assert behind.scrape.targets == () and behind.rules.default_pack is False and behind.rules.rules == ()
    kinds = {r.name: r.type for r in behind.alerting.effective_receivers()}
    assert kinds == {"terminal": "terminal", "phone": "terminal", "wecom": "wecom", "digest": "digest",
                     "mail": "terminal", "chat": "terminal", "hook": "terminal", "calls": "twilio"}
    assert {r.options.group_wait for r in Route.build(behind.alerting.route).walk()} == {0.0}
    assert [a.name for a in behind.alerting.effective_actions()] == ["scale_out", "degrade", "rollback"]
    assert behind.server.api_token is not None and behind.server.api_token.reveal() == "api-token-1"


@pytest.mark.tools
@pytest.mark.parametrize("doc", [{}, RICH], ids=["defaults", "rich"])
def test_amtool_check_config_passes(doc: dict[str, Any], tmp_path: Path,
                                    require_tool: Callable[..., str]) -> None:
    amtool = require_tool("amtool")
    out = export_to(tmp_path, "alertmanager", config_from(tmp_path, doc))
    (out / "api_token").write_text("token\n")
    proc = run([amtool, "check-config", str(out / "alertmanager.yml")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout


@pytest.mark.tools
@pytest.mark.parametrize("doc", [{}, RICH], ids=["defaults", "rich"])
def test_amtool_routes_pick_the_receivers_inferwatch_picks(doc: dict[str, Any], tmp_path: Path,
                                                           require_tool: Callable[..., str]) -> None:
    amtool = require_tool("amtool")
    config = config_from(tmp_path, doc)
    am = export_to(tmp_path, "alertmanager", config) / "alertmanager.yml"
    for labels in LABEL_SETS:
        proc = run([amtool, "config", "routes", "test", f"--config.file={am}",
                    *(f"{k}={v}" for k, v in labels.items())])
        assert proc.returncode == 0, proc.stdout + proc.stderr
        got = proc.stdout.strip().split(",")
        assert [r for r in got if r != ACTIONS] == _inferwatch_receivers(config, labels), labels
        assert (ACTIONS in got) == _action_matches(config, labels), labels


def test_a_receiver_named_like_the_actions_receiver_is_refused(tmp_path: Path) -> None:
    config = config_from(tmp_path, {"alerting": {"receivers": [{"name": ACTIONS, "type": "terminal"}]}})
    with pytest.raises(ValueError, match="inferwatch-actions"):
        export("alertmanager", config)


@pytest.mark.tools
def test_slack_templates_are_exported_with_the_definitions_they_call(
        tmp_path: Path, require_tool: Callable[..., str]) -> None:
    # rule: a Slack title read from an alertmanager.yml with templates: goes back out with its files
    amtool = require_tool("amtool")
    lib = ('Outside.\n{{ define "team.title" }}[{{ .Status | toUpper }}] '
           '{{ .CommonLabels.alertname }}{{ end }}\n')
    doc = {"alerting": {"receivers": [{"name": "chat", "type": "slack", "webhook_url": "https://hooks.example.org/x",
                                       "title": '{{ template "team.title" . }}', "go_templates": [lib]}],
                        "route": {"receiver": "chat"}}}
    out = export_to(tmp_path, "alertmanager", config_from(tmp_path, doc))
    (out / "api_token").write_text("token\n")
    am = yaml.safe_load((out / "alertmanager.yml").read_text())
    assert am["templates"] == ["templates/*.tmpl"]
    assert (out / "templates" / "inferwatch-00.tmpl").read_text() == lib
    proc = run([amtool, "check-config", str(out / "alertmanager.yml")])
    assert proc.returncode == 0 and "Found:" in proc.stdout and "1 templates" in proc.stdout, proc.stdout
    (tmp_path / "data.json").write_text('{"status": "firing", "commonLabels": {"alertname": "Slow"}}')
    proc = run([amtool, "template", "render", f"--template.glob={out / 'templates' / '*.tmpl'}",
                f"--template.data={tmp_path / 'data.json'}", '--template.text={{ template "team.title" . }}'])
    assert proc.stdout.strip() == "[FIRING] Slow", proc.stdout + proc.stderr
