"""Prometheus rule files read as they are: groups of alerting and recording rules.

``rule_files`` (inferwatch's own, and a ``prometheus.yml``'s) name files or
globs; each file is Prometheus's format (``groups: [{name, interval, rules:
[{alert|record, expr, for, labels, annotations}]}]``). An alerting rule fires
when its expression has results, as in Prometheus (no threshold of
inferwatch's); its tier comes from its ``severity`` label (``critical`` or
``page``: P0, ``major`` or ``error``: P1, anything else: P2) and the label stays
as written. Every rule runs on ``server.evaluation_interval`` (a group's own
``interval`` is not honoured; :func:`rule_file_notes` says so).
"""

from __future__ import annotations

import dataclasses
import glob
from collections.abc import Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from inferwatch._exceptions import ConfigError
from inferwatch.model import Dimension, Tier, is_valid_label_name, is_valid_metric_name, parse_duration
from inferwatch.promql import PromQLError, parse_promql
from inferwatch.rules._recording import RecordingRule
from inferwatch.rules._rule import Rule

__all__ = ["read_rule_files", "rule_file_notes"]

_TIERS = {"critical": Tier.P0, "page": Tier.P0, "major": Tier.P1, "error": Tier.P1}
_RULE_KEYS = {"alert", "record", "expr", "for", "labels", "annotations"}


def _files(patterns: Sequence[str]) -> list[Path]:
    out: list[Path] = []
    for pattern in patterns:
        found = sorted(glob.glob(pattern))
        if not found and not glob.has_magic(pattern):
            raise ConfigError(f"{pattern}: rule file not found")
        out += [Path(f) for f in found]
    return out


def _groups(path: Path) -> list[dict[str, Any]]:
    try:
        doc = yaml.safe_load(path.read_text("utf-8")) or {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the rule file: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {str(exc).splitlines()[0]}") from None
    groups = doc.get("groups") if isinstance(doc, dict) else None
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        raise ConfigError(f"{path}: a rule file is 'groups: [{{name, rules: [...]}}]'")
    return groups


def _labels(raw: Any, where: str, what: str) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: {what} must be a mapping")
    for name in raw:
        if not isinstance(name, str) or not is_valid_label_name(name):
            raise ConfigError(f"{where}: {what}: invalid label name {name!r}")
    return {k: str(v) for k, v in raw.items()}


def _rule(raw: Any, where: str, group: str) -> Rule | RecordingRule:
    if not isinstance(raw, dict) or ("alert" in raw) == ("record" in raw):
        raise ConfigError(f"{where}: a rule has one of 'alert' and 'record', and 'expr'")
    unknown = set(raw) - _RULE_KEYS
    if unknown:
        raise ConfigError(f"{where}: field(s) {', '.join(sorted(map(str, unknown)))} not supported")
    text = str(raw.get("expr", ""))
    try:
        expr = parse_promql(text)
    except PromQLError as exc:
        raise ConfigError(f"{where}: expr: {exc}") from None
    labels = _labels(raw.get("labels") or {}, where, "labels")
    if "record" in raw:
        if not is_valid_metric_name(str(raw["record"])):
            raise ConfigError(f"{where}: record {raw['record']!r} is not a valid metric name")
        return RecordingRule(str(raw["record"]), expr, MappingProxyType(labels), group=group, text=text)
    try:
        hold = parse_duration(str(raw.get("for", "0s")))
    except ValueError as exc:
        raise ConfigError(f"{where}: for: {exc}") from None
    tier = _TIERS.get(labels.get("severity", "").lower(), Tier.P2)
    notes = _labels(raw.get("annotations") or {}, where, "annotations")
    return Rule(name=str(raw["alert"]), dimension=Dimension.SERVICE, tier=tier, signal=expr, comparison=">",
                threshold=None, for_=hold, labels=MappingProxyType(labels),
                annotations=MappingProxyType(notes), condition=expr, text=text)


def read_rule_files(patterns: Sequence[str]) -> tuple[list[Rule], list[RecordingRule]]:
    """The alerting and recording rules of ``patterns``; ``ConfigError`` naming file, group and rule."""
    alerts: list[Rule] = []
    recordings: list[RecordingRule] = []
    seen: dict[str, int] = {}
    for path in _files(patterns):
        for g in _groups(path):
            name = str(g.get("name", ""))
            for i, raw in enumerate(g.get("rules") or []):
                rule = _rule(raw, f"{path}: group {name!r}: rules[{i}]", name)
                if isinstance(rule, RecordingRule):
                    recordings.append(rule)
                    continue
                n = seen[rule.name] = seen.get(rule.name, 0) + 1
                if n > 1:  # Prometheus allows one name in many rules: tell them apart
                    rule = dataclasses.replace(rule, key=f"{rule.name}#{n}")
                alerts.append(rule)
    return alerts, recordings


def rule_file_notes(patterns: Sequence[str], evaluation_interval: float) -> list[str]:
    """A group whose own ``interval`` is not the evaluation interval: one line each."""
    notes = []
    for path in _files(patterns):
        for g in _groups(path):
            if "interval" in g and parse_duration(str(g["interval"])) != evaluation_interval:
                every = f"{evaluation_interval:g}s"
                notes.append(f"{path}: group {g.get('name', '')!r}: interval {g['interval']} is not "
                             f"honoured: its rules run every server.evaluation_interval ({every})")
    return notes
