"""The config's rules as Prometheus rule files, and the baseline's settings from the config.

Both join packages that cannot see each other (DESIGN.md's table): the export writes rule
documents without knowing the bands or the SLOs, and the baseline takes plain settings,
not the config's models. The server sees all of them, so the joins are made here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from inferwatch.baseline import BaselineSettings, promql_rules, rule_seasonal_config
from inferwatch.config import BaselineConfig, Config
from inferwatch.rules import Rule, to_prometheus_rule_groups
from inferwatch.slo import load_rule_set

__all__ = ["baseline_rule_groups", "baseline_settings", "prometheus_rule_files"]

RULES_DIR = "rules"  # the directory ``prometheus.yml``'s rule_files names (export's RULES_DIR)


def baseline_settings(config: BaselineConfig) -> BaselineSettings:
    """The baseline package's settings from the config's ``baseline:`` section."""
    return BaselineSettings.from_dict(config.model_dump())


def baseline_rule_groups(rule: Rule, baseline: BaselineSettings, interval: float) -> dict[str, Any]:
    """The PromQL form of a dynamic rule: recording rules for its band and an alert named like the rule."""
    dyn = rule.dynamic
    if dyn is None:
        raise ValueError(f"rule {rule.name} has a fixed threshold, not a baseline")
    cfg = dataclasses.replace(baseline, seasonal=rule_seasonal_config(baseline, dyn))
    doc = promql_rules(rule.name, str(rule.signal), config=cfg, interval=interval,
                       direction=dyn.direction, fallback=dyn.fallback)
    alert = doc["groups"][0]["rules"][-1]
    alert["alert"] = rule.name
    alert["labels"] = {**rule.alert_labels, **alert["labels"]}
    if rule.annotations:
        alert["annotations"] = dict(rule.annotations)
    return doc


def prometheus_rule_files(config: Config) -> dict[str, dict[str, Any]]:
    """The rule files by path (for ``inferwatch.export.export``): fixed-threshold rules, the
    SLOs' rules, one file per dynamic rule."""
    rule_set = load_rule_set(config)
    rules = rule_set.alerts
    docs = {f"{RULES_DIR}/inferwatch.rules.yml":
            to_prometheus_rule_groups([r for r in rules if r.threshold is not None or r.outlier])}
    if rule_set.slos:
        docs[f"{RULES_DIR}/slo.rules.yml"] = {"groups": rule_set.slo.prometheus_groups()}
    baseline = baseline_settings(config.baseline)
    for r in rules:
        if r.dynamic is not None:
            docs[f"{RULES_DIR}/baseline-{r.name}.rules.yml"] = baseline_rule_groups(
                r, baseline, config.server.evaluation_interval)
    return docs
